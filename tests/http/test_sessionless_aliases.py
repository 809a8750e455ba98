"""Sessionless HTTP's old spellings, kept one release (issue 42: "stateless" names the
2026-07-28 era only): ``stateless=`` on the HTTP entry points, ``options.stateless``,
``mcpkit run --stateless`` and ``MCPKIT_STATELESS``. Each still has its effect, and says
which spelling replaces it; the new spellings win over the old."""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from tests._served import Served
from tests.http._http_helpers import HEADERS, INIT_PARAMS, in_process

from mcpkit import HTTPAppOptions, Server, create_http_app
from mcpkit._server._cli import run_settings

ROOT = Path(__file__).resolve().parents[2]
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
#: What each old spelling's warning says.
RENAMED = r"stateless= is deprecated, use sessionless="


async def _session_id(app: Any) -> str | None:
    """The ``Mcp-Session-Id`` ``app`` answers a 2025 ``initialize`` with (None: no session)."""
    async with in_process(app) as c:
        r = await c.post(c.url, json=INIT, headers=HEADERS)
        assert r.status_code == 200, r.text
        return r.headers.get("mcp-session-id")


@pytest.mark.anyio
async def test_create_http_app_stateless_keyword_warns_and_serves_sessionless() -> None:
    with pytest.warns(DeprecationWarning, match=RENAMED) as caught:
        app = create_http_app(Server("old"), stateless=True)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert app.options.sessionless
    assert await _session_id(app) is None
    # The new spelling, without a warning (warnings are errors here), to compare with.
    assert await _session_id(create_http_app(Server("new"), sessionless=False)) is not None


@pytest.mark.anyio
async def test_server_http_app_stateless_keyword_warns_at_the_caller() -> None:
    with pytest.warns(DeprecationWarning, match=RENAMED) as caught:
        app = Server("old").http_app(stateless=True)
    assert caught[0].filename == __file__
    assert app.options.sessionless
    assert await _session_id(app) is None


def test_both_spellings_given_the_new_one_wins() -> None:
    with pytest.warns(DeprecationWarning, match=RENAMED):
        app = Server("both").http_app(sessionless=False, stateless=True)
    assert not app.options.sessionless


def test_options_stateless_reads_and_writes_sessionless_with_a_warning() -> None:
    options = HTTPAppOptions(sessionless=True)
    with pytest.warns(DeprecationWarning, match=r"\.stateless is deprecated, use \.sessionless"):
        assert options.stateless is True
    with pytest.warns(DeprecationWarning, match=r"\.stateless is deprecated"):
        options.stateless = False
    assert options.sessionless is False
    # Not a field: copying the options reads only the new name (warnings are errors here).
    assert "stateless" not in {f.name for f in dataclasses.fields(options)}
    assert dataclasses.replace(options, json_response=True).sessionless is False


def _args(**given: object) -> argparse.Namespace:
    base: dict[str, object] = dict.fromkeys(
        ("transport", "host", "port", "path", "json_response", "log_level")
    )
    base.update(sessionless=None, stateless=None, allowed_host=None, allowed_origin=None)
    base.update(redis=None, auth_issuer=None, auth_resource=None, auth_scope=None)
    base.update(given)
    return argparse.Namespace(**base)


@pytest.mark.parametrize(
    ("given", "env", "expected", "said"),
    [
        ({"stateless": True}, {}, True, "--stateless is deprecated, use --sessionless"),
        ({}, {"MCPKIT_STATELESS": "1"}, True, "MCPKIT_STATELESS is deprecated"),
        # The new spellings win: the flag over the old variable, the new variable over it.
        ({"sessionless": True}, {"MCPKIT_STATELESS": "0"}, True, ""),
        ({}, {"MCPKIT_SESSIONLESS": "0", "MCPKIT_STATELESS": "1"}, False, ""),
        ({"stateless": True}, {"MCPKIT_SESSIONLESS": "0"}, True, "--stateless is deprecated"),
    ],
)
def test_run_settings_reads_the_old_flag_and_variable(
    capsys: pytest.CaptureFixture[str],
    given: dict[str, object],
    env: dict[str, str],
    expected: bool,
    said: str,
) -> None:
    settings = run_settings(_args(transport="http", **given), env)
    assert settings["sessionless"] is expected
    err = capsys.readouterr().err
    assert (said in err) if said else ("deprecated" not in err), err


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("argv", "env", "deprecated"),
    [
        (["--sessionless"], {}, False),
        (["--stateless"], {}, True),
        ([], {"MCPKIT_STATELESS": "true"}, True),
    ],
    ids=["--sessionless", "--stateless", "MCPKIT_STATELESS"],
)
async def test_mcpkit_run_old_spellings_serve_sessionless(
    argv: list[str], env: dict[str, str], deprecated: bool
) -> None:
    command = [MCPKIT, "run", str(ROOT / "examples" / "everything.py"), "-t", "http"]
    served = Served.start([*command, "--port", "0", *argv], env={**os.environ, **env})
    try:
        url = await anyio.to_thread.run_sync(served.url)
        with anyio.fail_after(20):
            async with httpx.AsyncClient(timeout=10) as c:
                r = await c.post(url, json=INIT, headers=HEADERS)
        assert r.status_code == 200, r.text
        assert "mcp-session-id" not in r.headers  # sessionless, whichever the spelling
        assert ("is deprecated, use" in served.stderr()) is deprecated, served.stderr()
    finally:
        served.proc.terminate()
        await anyio.to_thread.run_sync(served.proc.wait, 10)
        served.close()


def test_help_names_the_new_flag_only() -> None:
    for command in ("run", "proxy"):
        done = subprocess.run(
            [MCPKIT, command, "--help"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0 and "--sessionless" in done.stdout, done.stderr
        assert "--stateless" not in done.stdout  # the old flag works, and is not advertised
