"""The user's browser for ``mcpkit auth login``, as ``$BROWSER``: it returns at once (as a
real browser does: the CLI waits for the redirect only after opening it) and, in a process
of its own, follows the authorization URL's redirects to the CLI's loopback callback."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

if __name__ == "__main__":
    if sys.argv[2:] == ["follow"]:
        with urllib.request.urlopen(sys.argv[1], timeout=30) as page:
            page.read()
    else:
        subprocess.Popen(
            [sys.executable, __file__, sys.argv[1], "follow"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
