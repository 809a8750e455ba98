"""``mcpkit inspect`` as an MCP Apps spec host (2026-01-26), in headless Chromium, in both
eras, against tests/inspect/apps_host_server.py:

* a view is torn down (``ui/resource-teardown`` sent and its answer awaited) before its
  frame goes, whether the tool is called again or another tool is selected: the view's
  teardown handler gets to call a tool of its server first;
* ``hostContext.toolInfo.id`` is the JSON-RPC id of the ``tools/call`` that gave the result;
* ``hostCapabilities`` advertises ``message`` and ``updateModelContext`` (handled), and
  validates against the ext-apps schema;
* the frame takes the width the view asks for (``ui/notifications/size-changed``);
* the view runs inside a sandbox proxy of another origin than the page's;
* the origins reported approved (``hostCapabilities.sandbox.csp``) are reachable;
* the tools a view offers (``appCapabilities.tools``) are listed and callable in the page.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from tests.apps._schema import check
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, mcpkit_command, tab

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

SERVER = f"{' '.join(mcpkit_command())} run {__file__.rsplit('/', 1)[0]}/apps_host_server.py"
#: A 1x1 GIF.
PIXEL = bytes.fromhex(
    "47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b"
)


class _Origin(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, kind = (PIXEL, "image/gif") if self.path == "/pixel.gif" else (b"pong", "text/plain")
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    """An origin of ours, which the ``reach`` view declares."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Origin)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def page(request: pytest.FixtureRequest, origin: str) -> Iterator[Any]:
    args = ["inspect", "--protocol-version", request.param, SERVER]
    env = {**os.environ, "HOST_TEST_ORIGIN": origin}
    with inspected(args, env=env) as running, browser_page(running.url()) as (p, _):
        p.wait_for_selector('[data-testid="server-name"]')
        yield p


def select(p: Any, tool: str) -> None:
    tab(p, "tools")
    p.click(f'#tool-list .item[data-name="{tool}"]')
    p.wait_for_selector(f'#tool-detail [data-testid="tool-name"]:text-is("{tool}")')


def submit(p: Any, **fields: str) -> None:
    for name, value in fields.items():
        p.fill(f'#tool-detail [data-field="{name}"] input', value)
    p.locator('#tool-detail [data-testid="submit"]').click()


def view(p: Any) -> Any:
    """The view's frame: inside the sandbox proxy's (a host without a proxy: the frame)."""
    frame = p.locator('[data-testid="app-frame"]').last
    frame.wait_for()
    outer = p.frame_locator('[data-testid="app-frame"] >> nth=-1')
    return outer.frame_locator("iframe") if frame.get_attribute("src") else outer


def contrast(fg: str, bg: str) -> float:
    """The WCAG contrast ratio of two computed ``rgb(...)``/``rgba(...)`` colours."""

    def luminance(css: str) -> float:
        parts = [float(x) for x in css[css.index("(") + 1 : -1].split(",")[:3]]
        lin = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def torn(p: Any, expected: list[str], suffix: str) -> list[str]:
    """What the server's ``torn`` was called with (ending in ``suffix``), once it is
    ``expected`` or after 10 s: selecting ``teardowns`` tears the shown view down, whose
    call of ``torn`` may reach the server after the first call of ``teardowns``."""
    select(p, "teardowns")
    deadline = time.monotonic() + 10
    while True:
        p.evaluate(
            "() => document.querySelector('#tool-detail [data-testid=structured]')?.remove()"
        )
        submit(p)
        text = p.locator('#tool-detail [data-testid="structured"] pre').text_content(timeout=10_000)
        labels = [x for x in json.loads(text or "{}")["torn"] if x.endswith(suffix)]
        if labels == expected or time.monotonic() > deadline:
            return labels
        p.wait_for_timeout(200)


def test_a_view_is_torn_down_before_it_is_replaced_or_its_tool_left(page: Any) -> None:
    from playwright.sync_api import expect

    p = page
    era = p.evaluate("() => Math.random().toString(36).slice(2)")  # labels of this run only
    select(p, "viewer")
    submit(p, label=f"first-{era}")
    expect(view(p).locator("#label")).to_have_text(f"first-{era}")
    view(p).locator('body[data-ready="1"]').wait_for()
    # The same tool again: the first view's teardown runs (it calls `torn`) before it goes.
    submit(p, label=f"second-{era}")
    expect(view(p).locator("#label")).to_have_text(f"second-{era}")
    expect(p.locator('[data-testid="app-frame"]')).to_have_count(1)
    # Another tool selected: the second view is torn down too, before the panel changes.
    expected = [f"first-{era}", f"second-{era}"]
    assert torn(p, expected, era) == expected


def test_host_context_capabilities_width_and_the_sandbox_proxy(page: Any) -> None:
    from playwright.sync_api import expect

    p = page
    select(p, "viewer")
    submit(p, label="context")
    v = view(p)
    v.locator('body[data-ready="1"]').wait_for()
    # toolInfo.id: the JSON-RPC id the server received its tools/call with.
    result_id = v.locator("#result-id").text_content()
    assert result_id and result_id.isdigit(), result_id
    expect(v.locator("#tool-id")).to_have_text(result_id)
    caps = json.loads(v.locator("#caps").text_content() or "{}")
    check("McpUiHostCapabilities", caps)
    assert caps["message"] == {"text": {}}, caps
    assert (
        "text" in caps["updateModelContext"] and "structuredContent" in caps["updateModelContext"]
    )
    # The view's panel header is readable: its text against its own background (the page
    # header's white text once leaked into it, on light grey).
    colours = p.locator(".app-view header").evaluate(
        "h => [getComputedStyle(h).color, getComputedStyle(h).backgroundColor]"
    )
    assert contrast(*colours) >= 4.5, colours
    # Flexible width: the frame takes the 321 px the view asked for.
    frame = p.locator('[data-testid="app-frame"]')
    expect(frame).to_have_js_property("offsetWidth", 321)
    # The proxy: a frame of another origin (the page's host, another port) holds the view,
    # which runs in an opaque origin of its own.
    page_origin = p.evaluate("() => location.origin")
    proxy = frame.evaluate("f => new URL(f.src).origin")
    assert proxy != page_origin and proxy.startswith("http://127.0.0.1:"), (proxy, page_origin)
    assert frame.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    assert v.locator("#origin").text_content() == f"null in {proxy} {page_origin}"


def test_the_origins_reported_approved_are_reachable(page: Any, origin: str) -> None:
    p = page
    select(p, "reach")
    submit(p)
    v = view(p)
    v.locator('body[data-done="1"]').wait_for()
    report = json.loads(v.locator("#report").text_content() or "{}")
    assert report["approved"] == {"connectDomains": [origin], "resourceDomains": [origin]}, report
    assert report["fetch"] == "status 200", report
    assert report["image"] == "loaded", report


def test_the_tools_a_view_offers_are_listed_and_called_from_the_page(page: Any) -> None:
    from playwright.sync_api import expect

    p = page
    select(p, "offers")
    submit(p)
    tool = p.locator('[data-testid="app-tool"][data-name="shout"]')
    expect(tool).to_contain_text("Answers its text in capitals.")
    tool.locator('[data-testid="app-tool-args"]').fill('{"text": "hello"}')
    tool.locator('[data-testid="app-tool-call"]').click()
    expect(tool.locator('[data-testid="app-tool-result"]')).to_contain_text('"text": "HELLO"')


def colours(p: Any, selector: str) -> list[str]:
    """The computed text and background colours of the first element ``selector`` finds."""
    return list(
        p.locator(selector).first.evaluate(
            "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"
        )
    )


def test_the_theme_its_variables_and_fonts_reach_the_view_and_a_toggle_is_announced(
    page: Any,
) -> None:
    from playwright.sync_api import expect

    p = page
    p.emulate_media(color_scheme="light")
    select(p, "viewer")
    submit(p, label="theme")
    v = view(p)
    v.locator('body[data-ready="1"]').wait_for()
    # At ui/initialize: the theme in force (the system's, light) and the page's palette
    # under the spec's standard names, each colour a light-dark() pair, and the fonts.
    expect(v.locator("#theme")).to_have_text("light")
    styles = json.loads(v.locator("#styles").text_content() or "{}")
    check("McpUiHostStyles", styles)
    variables = styles["variables"]
    assert "light-dark(" in variables["--color-background-primary"], variables
    assert "light-dark(" in variables["--color-text-primary"], variables
    assert '"mcpkit sans"' in variables["--font-sans"], variables
    assert '@font-face{font-family:"mcpkit sans"' in styles["css"]["fonts"], styles
    light_body = colours(p, "body")
    # Pinned dark by the page's toggle: the view is told, the page turns dark, and both
    # headers (the page's, the view's panel's) stay readable.
    p.select_option('[data-testid="theme"]', "dark")
    expect(v.locator("#changed")).to_have_text(changes(["dark"]))
    dark_body = colours(p, "body")
    assert dark_body != light_body and contrast(*dark_body) >= 7, (light_body, dark_body)
    for selector in ("body > header", ".app-view header"):
        assert contrast(*colours(p, selector)) >= 4.5, (selector, colours(p, selector))
    # Back to the system's (light), then dark and light again as the system's preference goes.
    p.select_option('[data-testid="theme"]', "system")
    themes = ["dark", "light"]
    for scheme in (None, "dark", "light"):
        if scheme is not None:
            p.emulate_media(color_scheme=scheme)
            themes.append(scheme)
        expect(v.locator("#changed")).to_have_text(changes(themes))
    for params in json.loads(v.locator("#changed").text_content() or "[]"):
        method = "ui/notifications/host-context-changed"
        check("McpUiHostContextChangedNotification", {"method": method, "params": params})
    assert contrast(*colours(p, ".app-view header")) >= 4.5


def changes(themes: list[str]) -> str:
    """``#changed`` after a host-context-changed of each theme in turn."""
    return json.dumps([{"theme": t} for t in themes], separators=(",", ":"))
