"""``mcpkit inspect`` on examples/apps_server.py in headless Chromium: calling ``counter``
shows its view in a sandboxed iframe; pressing ``increment`` inside it makes the view call
the server's app-only tool through the inspector, and the view shows ``count: 1``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import ROOT, browser_page, inspected, mcpkit_command, tab

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

APPS = f"{' '.join(mcpkit_command())} run {ROOT / 'examples' / 'apps_server.py'}"


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def page(request: pytest.FixtureRequest) -> Iterator[tuple[Any, list[str]]]:
    args = ["inspect", "--protocol-version", request.param, APPS]
    with inspected(args) as running, browser_page(running.url()) as (page, requested):
        page.wait_for_selector('[data-testid="server-name"]')
        yield page, requested


def call_counter(page: Any) -> Any:
    """Call ``counter`` from the Tools panel; the view's frame once it runs."""
    tab(page, "tools")
    page.click('#tool-list .item[data-name="counter"]')
    page.locator('#tool-detail [data-testid="submit"]').click()
    page.wait_for_selector('[data-testid="app-status"]:text("running")')
    # The view runs in the sandbox proxy's inner frame.
    return page.frame_locator('[data-testid="app-frame"]').frame_locator("iframe")


def test_pressing_increment_in_the_view_shows_count_1(page: tuple[Any, list[str]]) -> None:
    p, _ = page
    view = call_counter(p)
    from playwright.sync_api import expect

    expect(view.locator("#count")).to_have_text("count: 0")
    view.get_by_role("button", name="increment").click()
    expect(view.locator("#count")).to_have_text("count: 1")
    # The call went through the inspector's client: it is in the history, as the page's own.
    tab(p, "history")
    expect(p.locator('[data-testid="history-entry"][data-method="tools/call"]')).to_have_count(2)


def test_the_view_is_sandboxed_and_torn_down_on_close(page: tuple[Any, list[str]]) -> None:
    p, requested = page
    # Its own view: under pytest-xdist this test may run without the module's others.
    call_counter(p)
    frame = p.locator('[data-testid="app-frame"]')
    # The sandbox proxy (another origin) holds the view's frame: allow-scripts only.
    assert frame.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    inner = p.frame_locator('[data-testid="app-frame"]').locator("iframe")
    assert inner.get_attribute("sandbox") == "allow-scripts"
    srcdoc = inner.evaluate("f => f.srcdoc")
    assert srcdoc.startswith('<!doctype html><meta http-equiv="Content-Security-Policy"')
    assert "connect-src &#39;none&#39;" in srcdoc or "connect-src 'none'" in srcdoc
    # The view resized itself from its size-changed notification (not the 150 px default).
    assert frame.evaluate("f => f.style.height") not in ("", "150px")
    p.locator('[data-testid="app-close"]').click()
    p.wait_for_selector('[data-testid="app-frame"]', state="detached")
    # The page and its view fetched nothing but the inspector itself (its page, and the
    # sandbox proxy from its second port).
    origin = p.url.split("/", 3)[:3]
    for u in requested:
        if u.startswith("http") and u.split("/", 3)[:3] != origin:
            assert u.split("/", 3)[2].split(":")[0] == origin[2].split(":")[0], requested
            assert u.split("/", 3)[3].startswith("sandbox?"), requested
