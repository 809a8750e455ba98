"""Small things of the inspector a person meets: a server file's command shown as a shell
command line (not comma-joined), a filter box over a long tool list (headless Chromium), and
a protected URL answered with exactly what to run (``mcpkit auth login URL``)."""

from __future__ import annotations

import json
import shlex
import sys
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.conftest import BACKEND
from tests.http._http_helpers import running
from tests.inspect._browser_harness import browser_page, inspected, tab

from mcpkit import Server
from mcpkit.auth import ResourceServer, StaticTokenVerifier

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

MANY_TOOLS = "\n".join(
    ["from mcpkit import Server", "", 'server = Server("many")', ""]
    + [
        f"@server.tool()\ndef {name}_{i}() -> str:\n    '''Tool number {i}.'''\n    return '{i}'\n"
        for i, name in enumerate(["alpha", "beta", "gamma", "delta", "omega"] * 3)
    ]
)


def _api(url: str, path: str) -> Any:
    """GET the inspector's API as its page does (token in the header)."""
    parts = urlsplit(url)
    token = parts.query.removeprefix("token=")
    request = urllib.request.Request(
        f"{parts.scheme}://{parts.netloc}/api/{path}", headers={"X-Inspector-Token": token}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["result"]


def test_a_file_target_is_a_shell_command_and_many_tools_get_a_filter(tmp_path: Path) -> None:
    folder = tmp_path / "my servers"  # a space: the command line quotes it
    folder.mkdir()
    (folder / "many.py").write_text(MANY_TOOLS)
    file = str(folder / "many.py")
    with inspected(["inspect", file]) as inspector:
        url = inspector.url()
        shown = _api(url, "info")["target"]
        python, *rest = shlex.split(shown)
        assert Path(python).name.startswith("python") and rest == ["-m", "mcpkit", "run", file]
        assert shown.endswith(f" -m mcpkit run '{file}'")  # quoted as a shell needs it
        with browser_page(url) as (page, _):
            page.wait_for_selector('[data-testid="server-name"]')
            assert shown in page.inner_text("body") and "python3,-m" not in page.inner_text("body")
            tab(page, "tools")
            page.wait_for_selector('#tool-list .item[data-name="omega_14"]')
            visible = "#tool-list .item:not([hidden])"
            assert page.locator(visible).count() == 15
            box = page.locator('[data-testid="tools-filter"]')
            assert box.get_attribute("placeholder") == "Filter 15 tools"
            box.fill("ALPHA")
            assert page.locator(visible).count() == 3
            names = page.locator(visible).evaluate_all("ns => ns.map(n => n.dataset.name)")
            assert names == ["alpha_0", "alpha_5", "alpha_10"]
            box.fill("number 14")  # descriptions match too
            assert page.locator(visible).evaluate_all("ns => ns.map(n => n.dataset.name)") == [
                "omega_14"
            ]
            box.fill("")
            assert page.locator(visible).count() == 15


def test_a_short_tool_list_has_no_filter(tmp_path: Path) -> None:
    (tmp_path / "few.py").write_text(
        MANY_TOOLS.split("@server.tool()")[0]
        + ("@server.tool()\ndef only() -> str:\n    '''The only tool.'''\n    return 'x'\n")
    )
    with (
        inspected(["inspect", "few.py"], cwd=tmp_path) as inspector,
        browser_page(inspector.url()) as (page, _),
    ):
        tab(page, "tools")
        page.wait_for_selector('#tool-list .item[data-name="only"]')
        assert page.locator('[data-testid="tools-filter"]').count() == 0


def test_a_protected_url_says_to_log_in(tmp_path: Path) -> None:
    protected = Server(
        "locked",
        auth=ResourceServer(StaticTokenVerifier({"t": []}), resource="http://127.0.0.1/mcp"),
    )
    env = {
        "MCPKIT_AUTH_FILE": str(tmp_path / "auth.json"),
        "PATH": str(Path(sys.executable).parent),
    }
    with (
        running(protected.http_app()) as srv,
        inspected(["inspect", srv.url], env=env) as inspector,
    ):
        url = inspector.url()
        seen = 0
        for _ in range(20):  # each poll waits (bounded) for the next events
            polled = _api(url, f"events?after={seen}")
            seen = polled["last"]
            errors = [e for e in polled["events"] if e.get("state") == "error"]
            if errors:
                break
        else:
            raise AssertionError("the inspector reported no connection error")
        assert "401" in errors[0]["error"]
        assert f"run `mcpkit auth login {srv.url}`" in errors[0]["error"]
        assert f"mcpkit auth login {srv.url}" in _api(url, "info")["error"]
