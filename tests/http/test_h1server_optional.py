"""mcpkit's HTTP/1.1 protocol needs httptools, which only the ``[http]`` extra installs: a
bare install (no httptools) must still import every module, as CI's wheel check does."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_without_httptools_the_module_imports_and_the_default_is_uvicorns() -> None:
    """httptools comes with the ``[http]`` extra only: a bare install must still import
    every module (CI's wheel check does), serve_app's default then falls back to uvicorn's
    protocol, and naming ours says which extra to install. A fresh interpreter in which
    ``import httptools`` fails as it does when the package is absent."""
    code = textwrap.dedent(
        """
        import sys
        sys.modules["httptools"] = None  # what an absent package does to `import httptools`
        from mcpkit._app._serve import _our_protocol
        from mcpkit._http import _h1server
        assert _h1server.httptools is None
        assert _our_protocol({}) is False
        try:
            assert _our_protocol({"http": "mcpkit"}) is True
            _h1server.protocol_class(None, 5.0)
        except ImportError as e:
            print("refused:", e)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "mcpkit[http]" in done.stdout, done.stdout
