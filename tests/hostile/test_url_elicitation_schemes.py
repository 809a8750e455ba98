"""URL-mode elicitation naming a URL that is not a web page, from a real server process.

Before: the client handed ``javascript:`` and ``data:`` URLs to its URL callback, and the
inspector rendered them as links in its own origin (one click ran the server's script with
the inspector's token in reach). The specification asks for "a valid URL ... opened in a
secure manner": the client refuses all but absolute http(s) URLs before any callback sees
them, and the inspector never renders anything else as a link.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, tab

from mcpkit import Client, InputFailed, InvalidParams, URLElicitationRequired

SERVER = """
from mcpkit import Context, Server, URLElicitationRequired

server = Server("links")


@server.tool()
async def open_page(url: str, ctx: Context) -> str:
    '''Ask the user to open ``url``.'''
    answer = await ctx.elicit_url("Please open this page", url)
    return f"the user answered {answer.action}"


@server.tool()
def needs_page(url: str) -> str:
    '''Refuse until the user has opened ``url`` (-32042).'''
    item = {"mode": "url", "message": "open it", "url": url, "elicitationId": "e1"}
    raise URLElicitationRequired(message="open the page first", data={"elicitations": [item]})
"""

HOSTILE = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "https:no-host",
    "https://example.com/\njavascript:alert(1)",
]


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "links.py"
    path.write_text(SERVER)
    return path


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", None])  # None: the newest (2026-07-28)
async def test_the_client_refuses_urls_that_are_not_web_pages(
    server_file: Path, version: str | None
) -> None:
    shown: list[str] = []

    async def show(params: Any, ctx: Any) -> dict[str, str]:
        shown.append(params.url)
        return {"action": "accept"}

    # A -32042 error: its elicitations go to the callback before it is raised (handshake
    # era); 2026-07-28 asks them as input instead, and the refusal ends the call
    # (InputFailed, the refusal its cause: an input round has no error answer).
    argv = [sys.executable, "-m", "mcpkit", "run", str(server_file)]
    with anyio.fail_after(60):
        async with Client(argv, url_elicitation_handler=show, protocol_version=version) as c:
            for url in HOSTILE:
                if version:
                    with pytest.raises(InvalidParams, match="URL-mode elicitation refused"):
                        await c.call_tool("open_page", {"url": url})
                    with pytest.raises(URLElicitationRequired):
                        await c.call_tool("needs_page", {"url": url})
                    continue
                for tool in ("open_page", "needs_page"):
                    with pytest.raises(InputFailed) as failed:
                        await c.call_tool(tool, {"url": url})
                    assert failed.value.method == "elicitation/create"
                    assert isinstance(failed.value.__cause__, InvalidParams)
                    assert "URL-mode elicitation refused" in str(failed.value.__cause__)
            assert shown == []
            # A web page is still shown, and answered.
            answer = await c.call_tool("open_page", {"url": "https://example.com/pay"})
            assert answer.content[0].text == "the user answered accept"  # type: ignore[union-attr]
            assert shown == ["https://example.com/pay"]


@pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)
def test_the_inspector_never_renders_a_script_url_as_a_link(server_file: Path) -> None:
    with inspected(["inspect", str(server_file)]) as running:
        _drive(running.url())


def _drive(url: str) -> None:
    with browser_page(url) as (page, _):
        page.wait_for_selector('[data-testid="server-name"]')
        tab(page, "tools")
        for bad in ("javascript:alert(document.title)", "data:text/html,<b>hi</b>"):
            page.click('#tool-list .item[data-name="open_page"]')  # a fresh form each time
            page.fill('#tool-detail [data-field="url"] input', bad)
            page.click('#tool-detail [data-testid="submit"]')
            page.wait_for_selector(
                '[data-testid="question"], #tool-detail [data-testid="error"], '
                '#tool-detail [data-testid="result"]'
            )
            assert page.query_selector('[data-testid="question"]') is None
            assert "URL-mode elicitation refused" in page.inner_text("#tool-detail")
            links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
            assert not [h for h in links if not h.startswith(("http:", "https:"))], links
        # A web page is a link in a question card, opened in a new tab without an opener.
        page.click('#tool-list .item[data-name="open_page"]')
        page.fill('#tool-detail [data-field="url"] input', "https://example.com/pay")
        page.click('#tool-detail [data-testid="submit"]')
        card = page.wait_for_selector('[data-testid="question"][data-kind="elicitation-url"]')
        link = card.query_selector('[data-testid="elicitation-url"]')
        assert link is not None and link.get_attribute("href") == "https://example.com/pay"
        assert link.get_attribute("rel") == "noopener noreferrer"
        card.query_selector('[data-testid="decline"]').click()
        page.wait_for_selector('#tool-detail [data-testid="result"]:has-text("decline")')
