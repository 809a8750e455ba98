"""Running ``python -m bench`` as the docs do, from the repository's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, timeout: float = 120) -> str:
    """What ``python -m bench ARGS`` printed; it must exit 0 (else its output is the error)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout
