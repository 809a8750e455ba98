"""Hostile MCP Apps views in ``mcpkit inspect``, in headless Chromium: a view cannot reach
the inspector's page, API or token, cannot navigate the top window or open one, cannot call
tools not meant for views, and a flood of its messages is dropped while the page stays
responsive. The messages the inspector sends a view validate against the ext-apps schema."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from tests.apps._schema import RESULTS, SENT, check
from tests.conftest import BACKEND
from tests.inspect._browser_harness import (
    BROWSER_WAIT_MS,
    browser_page,
    inspected,
    mcpkit_command,
    tab,
)

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

HOSTILE = f"{' '.join(mcpkit_command())} run {__file__.rsplit('/', 1)[0]}/hostile_server.py"


class Page:
    def __init__(self, page: Any, url: str) -> None:
        self.page = page
        self.token = parse_qs(urlsplit(url).query)["token"][0]
        self.origin = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with inspected(["inspect", HOSTILE]) as running:
        url = running.url()
        with browser_page(url) as (p, _):
            p.wait_for_selector('[data-testid="server-name"]')
            yield Page(p, url)


def call(page: Page, tool: str, **fields: str) -> Any:
    """Call ``tool`` from its form; the frame of its view once the view runs."""
    p = page.page
    tab(p, "tools")
    p.click(f'#tool-list .item[data-name="{tool}"]')
    for name, value in fields.items():
        p.fill(f'#tool-detail [data-field="{name}"] input', value)
    p.locator('#tool-detail [data-testid="submit"]').click()
    p.wait_for_selector('[data-testid="app-status"]:text("running")')
    # The view runs in the sandbox proxy's inner frame.
    return p.frame_locator('[data-testid="app-frame"]').frame_locator("iframe")


def tally(page: Page) -> dict[str, int]:
    p = page.page
    tab(p, "tools")
    p.click('#tool-list .item[data-name="tally"]')
    p.locator('#tool-detail [data-testid="submit"]').click()
    text = p.locator('#tool-detail [data-testid="structured"] pre').text_content(timeout=10_000)
    result: dict[str, int] = json.loads(text or "{}")
    return result


def probe_report(page: Page, tool: str) -> dict[str, str]:
    view = call(page, tool, origin=page.origin)
    view.locator('body[data-done="1"]').wait_for(timeout=BROWSER_WAIT_MS)
    report: dict[str, str] = json.loads(view.locator("#report").text_content() or "{}")
    return report


@pytest.mark.parametrize("tool", ["probe", "probe_open"])
def test_a_view_cannot_reach_the_inspector_or_its_token(page: Page, tool: str) -> None:
    report = probe_report(page, tool)
    assert report["parent.document"].startswith("blocked: SecurityError"), report
    assert report["parent.location.href"].startswith("blocked: SecurityError"), report
    assert report["localStorage"].startswith("blocked"), report  # an opaque origin: no storage
    assert report["cookie"].startswith("blocked"), report
    for name in ("fetch api", "fetch api with a token", "fetch page"):
        # No answer reaches the view: its CSP (or, with the loopback declared, the
        # inspector refusing an opaque Origin and CORS) stops it.
        assert report[name].startswith("failed: TypeError"), report
    assert page.token not in json.dumps(report)
    proxy = page.page.frame_locator('[data-testid="app-frame"]')
    assert page.token not in proxy.locator("html").inner_html()
    assert page.token not in proxy.frame_locator("iframe").locator("html").inner_html()


def test_a_view_cannot_navigate_the_top_window_nor_open_one(page: Page) -> None:
    report = probe_report(page, "probe")
    p = page.page
    assert report["window.open"] == "allowed: no window", report
    assert "pwned" not in p.url
    assert len(p.context.pages) == 1
    assert p.evaluate("() => document.querySelector('[data-testid=server-name]') !== null")


def test_a_view_calls_only_tools_meant_for_views(page: Page) -> None:
    report = probe_report(page, "probe")
    assert report["call model_only"] == "refused -32602", report
    assert report["call no_such_tool"] == "refused -32602", report
    assert report["javascript link"] == "refused -32602", report
    assert tally(page)["model_only"] == 0


def test_a_message_flood_is_dropped_and_the_page_stays_responsive(page: Page) -> None:
    p = page.page
    view = call(page, "flood")
    view.locator('body[data-done="1"]').wait_for(timeout=30_000)
    status = p.locator('[data-testid="app-status"]')
    # Wait (bounded) until the page has taken the flood: every message seen, most dropped.
    deadline = time.monotonic() + 30
    while int(status.get_attribute("data-dropped") or 0) < 25_000:
        assert time.monotonic() < deadline, status.get_attribute("data-dropped")
        p.wait_for_timeout(100)  # the browser's own event loop: poll the DOM
    started = time.monotonic()
    tab(p, "server")
    p.wait_for_selector('[data-testid="server-name"]', state="visible", timeout=5_000)
    assert time.monotonic() - started < 5
    bumps = tally(page)["bump"]
    assert 0 < bumps <= 200, bumps  # 20,000 asked for


def test_what_the_host_sends_validates_against_the_ext_apps_schema(page: Page) -> None:
    p = page.page
    view = call(page, "recorder")
    view.locator('body[data-ready="1"]').wait_for(timeout=BROWSER_WAIT_MS)
    link = p.locator('[data-testid="app-link"]')
    assert link.get_attribute("href") == "https://example.com/docs"
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert p.locator('[data-testid="app-message"]').text_content() == "hello from the view"
    p.locator('[data-testid="app-close"]').click()
    view.locator('body[data-teardown="1"]').wait_for(timeout=10_000)
    record = json.loads(view.locator("#received").text_content() or "{}")
    # The host answers nobody's teardown for ever: the frame goes once its wait is over.
    p.wait_for_selector('[data-testid="app-frame"]', state="detached", timeout=10_000)
    methods = [m.get("method") for m in record["received"] if "method" in m]
    assert methods == [
        "ui/notifications/tool-input",
        "ui/notifications/tool-result",
        "ui/resource-teardown",
    ]
    for message in record["received"]:
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            body = {k: v for k, v in message.items() if k in ("method", "params")}
            check(SENT[message["method"]], body)
    initialize = next(m for m in record["received"] if m.get("id") == 1)
    check(RESULTS["ui/initialize"], initialize["result"])
    assert initialize["result"]["hostContext"]["toolInfo"]["tool"]["name"] == "recorder"
    for method, result in record["results"].items():
        if method in RESULTS:
            check(RESULTS[method], result)
    assert record["results"]["ui/request-display-mode"] == {"mode": "inline"}
    assert record["results"]["resources/read"]["contents"][0]["uri"] == "ui://hostile/recorder"
