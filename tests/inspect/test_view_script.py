"""A view written only with ``mcpkit.types.app_view_script()`` (the bridge mcpkit ships:
no postMessage code of the view's own), in ``mcpkit inspect`` in headless Chromium, in both
eras, against tests/inspect/view_script_server.py: it initializes, gets its tool's input and
result and the host context, calls a tool of its server, reports its height (the frame
grows past its 150 px default to the content) and calls a tool while it is torn down.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, mcpkit_command, tab

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

HERE = os.path.dirname(__file__)
SERVER = f"{' '.join(mcpkit_command())} run {HERE}/view_script_server.py"


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def page(request: pytest.FixtureRequest) -> Iterator[Any]:
    args = ["inspect", "--protocol-version", request.param, SERVER]
    with inspected(args) as running, browser_page(running.url()) as (p, _):
        p.wait_for_selector('[data-testid="server-name"]')
        yield p


def call(p: Any, tool: str, **fields: str) -> None:
    tab(p, "tools")
    p.click(f'#tool-list .item[data-name="{tool}"]')
    p.wait_for_selector(f'#tool-detail [data-testid="tool-name"]:text-is("{tool}")')
    for name, value in fields.items():
        p.fill(f'#tool-detail [data-field="{name}"] input', value)
    p.locator('#tool-detail [data-testid="submit"]').click()


def test_a_view_written_with_the_bridge_works_in_the_inspector(page: Any) -> None:
    from playwright.sync_api import expect

    p = page
    call(p, "tall", rows="12")
    p.wait_for_selector('[data-testid="app-status"]:text("running")')
    v = p.frame_locator('[data-testid="app-frame"]').frame_locator("iframe")
    v.locator('body[data-ready="1"]').wait_for()
    # Its tool's arguments, result and the host context reached the view's callbacks.
    assert json.loads(v.locator("#input").text_content() or "{}") == {"rows": 12}
    expect(v.locator("#rows")).to_have_text("12")
    expect(v.locator("#tool")).to_have_text("tall")
    # The size it reported: 12 lines of 40 px, past the frame's 150 px default.
    frame = p.locator('[data-testid="app-frame"]')
    expect(frame).to_have_js_property("offsetHeight", 12 * 40 + _chrome(v))
    assert frame.evaluate("f => f.offsetHeight") > 150
    # A tool of its server, called through the host.
    v.locator("#echo").click()
    expect(v.locator("#echoed")).to_have_text("echo: from the view")
    # Closed: its teardown callback calls a tool before the host is answered.
    p.locator('[data-testid="app-close"]').click()
    p.wait_for_selector('[data-testid="app-frame"]', state="detached")
    call(p, "echoed")
    text = p.locator('#tool-detail [data-testid="structured"] pre').text_content(timeout=10_000)
    assert json.loads(text or "{}")["echoed"] == ["from the view", "bye"]


def _chrome(v: Any) -> int:
    """The height of the view's content above the lines (its <pre>s and button)."""
    height: int = v.locator("#lines").evaluate("e => Math.ceil(e.offsetTop)")
    return height


def test_the_app_info_cannot_close_the_script_early() -> None:
    from mcpkit.types import app_view_script

    script = app_view_script("a</script><img src=x onerror=alert(1)>", "1</SCRIPT>")
    assert script.startswith("<script>") and script.endswith("</script>")
    assert script.lower().count("</script") == 1, script[:200]
