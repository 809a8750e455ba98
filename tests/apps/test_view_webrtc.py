"""W16: what an MCP Apps view in ``mcpkit inspect`` can do with WebRTC, in headless Chromium.

CSP governs fetches, not WebRTC: a view may open an ``RTCPeerConnection`` and its ICE
gathering sends STUN requests over UDP to any host it names. The inspector asks the browser
to block it (the CSP Level 3 directive ``webrtc 'block'`` in the page's policy, which the
view's ``srcdoc`` frame inherits), but Chromium does not implement that directive (checked
on Chromium 156: "Unrecognized Content-Security-Policy directive"), and neither the
frame's sandbox nor a permissions policy covers WebRTC. docs/apps.md says so; this test
holds it to that: the view's STUN request reaches a UDP socket of ours. The day Chromium
enforces the directive, the packet stops coming, this test fails, and the doc (and the
test) are to say WebRTC is contained.
"""

from __future__ import annotations

import contextlib
import socket
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import (
    BROWSER_WAIT_MS,
    CHROMIUM,
    CHROMIUM_ARGS,
    inspected,
    mcpkit_command,
    tab,
)

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)

SERVER = f"{' '.join(mcpkit_command())} run {__file__.rsplit('/', 1)[0]}/webrtc_server.py"
#: A STUN message's magic cookie (RFC 8489), bytes 4-8 of every request.
STUN_COOKIE = bytes.fromhex("2112a442")
#: Chromium's own setting (also the WebRtcIPHandling enterprise policy): UDP only via a proxy.
BLOCK_UDP = "--webrtc-ip-handling-policy=disable_non_proxied_udp"


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    """A UDP socket on the loopback, standing for any host a view may name."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock
    finally:
        sock.close()


def first_datagram(sock: socket.socket, within: float) -> bytes | None:
    """The first datagram to reach ``sock`` within ``within`` seconds (bounded wait)."""
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            return sock.recv(2048)
        except TimeoutError:
            return None
    return None


@contextlib.contextmanager
def chromium_page(url: str, extra_args: list[str]) -> Iterator[Any]:
    """A headless Chromium page at ``url``, launched as the harness does plus ``extra_args``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *extra_args]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(BROWSER_WAIT_MS)
            page.goto(url)
            yield page
        finally:
            browser.close()


def run_view(url: str, port: int, extra_args: list[str]) -> str | None:
    """Call ``rtc`` from the inspector's page; what the view reported once it set its offer."""
    with chromium_page(url, extra_args) as page:
        page.wait_for_selector('[data-testid="server-name"]')
        tab(page, "tools")
        page.click('#tool-list .item[data-name="rtc"]')
        page.fill('#tool-detail [data-field="port"] input', str(port))
        page.locator('#tool-detail [data-testid="submit"]').click()
        view = page.frame_locator('[data-testid="app-frame"]').frame_locator("iframe")
        view.locator('body[data-done="1"]').wait_for(timeout=BROWSER_WAIT_MS)
        outcome: str | None = view.locator("#report").text_content()
        return outcome


def test_a_view_asks_for_webrtc_blocked_yet_chromium_sends_its_stun_requests(
    udp: socket.socket,
) -> None:
    port = udp.getsockname()[1]
    with inspected(["inspect", SERVER]) as running:
        url = running.url()
        with urllib.request.urlopen(url, timeout=30) as page_response:
            policy = page_response.headers["content-security-policy"]
        # Asked of the browser for every view (the sandbox proxy's policy has it too, and
        # the view's srcdoc frame inherits that).
        assert "webrtc 'block'" in policy, policy
        outcome = run_view(url, port, [])
        packet = first_datagram(udp, within=30)
    assert outcome == "created", outcome
    assert packet is not None, (
        "no STUN request reached us: the browser now blocks WebRTC in the view; "
        "docs/apps.md (In mcpkit inspect) is to say so, and this test to assert it"
    )
    assert packet[:2] == b"\x00\x01" and packet[4:8] == STUN_COOKIE, packet[:20].hex()


def test_the_browser_setting_docs_apps_md_names_stops_the_views_udp(udp: socket.socket) -> None:
    # What does stop it in Chromium is the browser's own WebRTC IP handling policy (the
    # flag, or the WebRtcIPHandling enterprise policy): no UDP but through a proxy.
    port = udp.getsockname()[1]
    with inspected(["inspect", SERVER]) as running:
        outcome = run_view(running.url(), port, [BLOCK_UDP])
        # The test above sees the request well within this bound without the setting.
        packet = first_datagram(udp, within=5)
    assert outcome == "created", outcome  # the API stays: only its UDP is refused
    assert packet is None, packet[:20].hex()
