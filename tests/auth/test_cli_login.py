"""``mcpkit auth login URL`` as a user runs it, against ``examples/protected_server.py`` and
a real authorization server: the URL to visit is printed, the (scripted) browser logs in,
the loopback redirect takes the code; ``mcpkit call URL`` then uses the kept login,
``mcpkit auth status`` lists it without a token, ``mcpkit auth logout`` forgets it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

from tests.auth._as import AuthorizationServer
from tests.auth._browser import Browser


def mcpkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_login_then_call_status_and_logout(
    auth_server: AuthorizationServer, served: str, tmp_path: Path
) -> None:
    auth_file = tmp_path / "auth.json"
    env = {**os.environ, "MCPKIT_AUTH_FILE": str(auth_file)}
    login = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "auth", "login", served, "--no-browser"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    browser = Browser()
    try:
        assert login.stderr is not None
        visit = ""
        for line in login.stderr:  # the process prints the URL, then waits for the browser
            if line.startswith("  http"):
                visit = line.strip()
                break
        assert visit.startswith(auth_server.issuer), visit
        threading.Thread(target=browser.visit, args=(visit,), daemon=True).start()
        out, err = login.communicate(timeout=60)
    finally:
        login.kill()
        login.wait(timeout=10)
    assert login.returncode == 0, err
    assert f"logged in to {served} through {auth_server.issuer}" in out
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600

    called = mcpkit("call", served, "whoami", env=env)
    assert called.returncode == 0, called.stderr
    assert '"subject": "alice"' in called.stdout or '"subject":"alice"' in called.stdout

    status = mcpkit("auth", "status", env=env)
    assert status.returncode == 0 and served in status.stdout and "refreshable" in status.stdout
    assert "eyJ" not in status.stdout  # never a token

    assert mcpkit("auth", "logout", served, env=env).returncode == 0
    refused = mcpkit("call", served, "whoami", env=env)
    assert refused.returncode == 1 and "401" in refused.stderr
    assert f"run `mcpkit auth login {served}`" in refused.stderr
    assert mcpkit("auth", "logout", served, env=env).returncode == 1  # nothing left
