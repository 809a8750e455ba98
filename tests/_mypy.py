"""``mypy --strict`` on a snippet as a user's file, the way a user's checker sees mcpkit.

The tests that do so share one cache (the first run analyses mcpkit, the others reuse it)
and one xdist worker (``xdist_group("mypy-snippets")``), so they never write the cache at
the same time: each run takes seconds instead of half a minute.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

#: The cache of this test process: its first snippet fills it.
_CACHE = Path(tempfile.mkdtemp(prefix="mcpkit-mypy-snippets-"))


def mypy_strict(snippet: str, where: Path, name: str) -> str:
    """What ``mypy --strict`` prints for ``snippet`` saved as ``where/name``."""
    source = where / name
    source.write_text(textwrap.dedent(snippet))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(_CACHE), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout
