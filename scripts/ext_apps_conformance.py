"""Run the ext-apps host conformance suite with ``mcpkit inspect`` as the host, once, by hand.

Not run by CI, and not runnable from this repository alone: the suite (the conformance
app of ``examples/conformance-server`` in the ext-apps repository, and the protocol its
in-iframe engine speaks) is on no package registry, so it has to be built beforehand from
a copy of that source in a scratch directory outside the repository (see docs/apps.md,
"In `mcpkit inspect`"): ``SCRATCH/app/dist-SUITE/mcp-app.html`` is the built single-file
app, one build per version of the suite's tests (``a``, ``b``).

What this script is, is ours: the conformance server's fixtures (the ``run_conformance``
launcher, the app-only ``conformance_probe``, the model-only ``model_only_probe``, the
runner resource declaring ``https://modelcontextprotocol.io`` as its one connect domain)
written with mcpkit, and a Host adapter for the inspector's page that does what the
ext-apps ``Runner`` does: start the in-iframe suite (``window.__mcpConformance``), poll
it, answer each capability request it parks, until it is done. Headless Chromium, driven
by Playwright; the two outside origins the suite touches (``modelcontextprotocol.io``,
``example.com``) are answered by a stub in the browser, so the run is offline.

    .venv/bin/python scripts/ext_apps_conformance.py SCRATCH [--suite b] [--protocol-version V]

prints one line per check (status, id, message) and the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
CHANNEL = "__mcpConformance"
#: The outside origins the suite reaches for, answered in the browser (offline).
STUBBED = ("https://modelcontextprotocol.io/", "https://example.com/")

SERVER = '''"""The ext-apps conformance server's fixtures, written with mcpkit (scratch copy)."""
import os
from pathlib import Path

from mcpkit import Server
from mcpkit.types import AppCsp, AppToolMeta

RUNNER_URI = "ui://conformance/runner"
server = Server("MCP Apps Conformance Server")
server.app_resource(
    RUNNER_URI,
    Path(os.environ["CONFORMANCE_HTML"]),
    description="Runs the MCP Apps conformance suite inside the host.",
    csp=AppCsp(connect_domains=["https://modelcontextprotocol.io"]),
)


@server.tool(app=AppToolMeta(resource_uri=RUNNER_URI, visibility=["model", "app"]))
def run_conformance() -> str:
    """Run the MCP Apps conformance test suite against this host."""
    return "Launching the MCP Apps conformance runner..."


@server.tool(app=AppToolMeta(visibility=["app"]))
def conformance_probe(ping: str) -> str:
    """Echo probe used by the conformance harness to verify tool proxying."""
    return f"echo:{ping}"


@server.tool(app=AppToolMeta(visibility=["model"]))
def model_only_probe(ping: str) -> str:
    """Model-only fixture; an app calling this MUST be rejected by the host."""
    return f"model-only:{ping}"


if __name__ == "__main__":
    server.run()
'''


class InspectorHost:
    """The Host the suite's requests are dispatched to: the inspector's page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        page.on("console", lambda m: self.console.append(m.text))

    def frame(self) -> Any:
        """The frame running the suite (the one with ``window.__mcpConformance``)."""
        for frame in self.page.frames:
            if frame is self.page.main_frame:
                continue
            try:
                if frame.evaluate(f"() => Boolean(globalThis.{CHANNEL})"):
                    return frame
            except Exception:  # a frame going away while asked
                continue
        return None

    def dispatch(self, req: dict[str, Any]) -> dict[str, Any]:
        kind = req["kind"]
        handler = getattr(self, "do_" + kind, None)
        if handler is None:
            return {"ok": False, "unsupported": True}
        try:
            result: dict[str, Any] = handler(req)
        except Exception as e:  # reported to the suite as this capability failing
            return {"ok": False, "error": f"{type(e).__name__}: {e}"}
        return result

    def do_clickTrigger(self, req: dict[str, Any]) -> dict[str, Any]:
        # A real click (user activation) in the view; the inspector drafts nothing.
        self.frame().get_by_test_id("conformance-trigger").click()
        return {"ok": True}

    def do_checkLinkOpen(self, req: dict[str, Any]) -> dict[str, Any]:
        # The inspector offers the link (never opens it itself): the person clicks it. A
        # click may miss while the view's frame is still resizing (the note moves under
        # the pointer): clicked again, up to three times, as the ext-apps BrowserHost does.
        target = req["url"].rstrip("/")
        link = self.page.locator(f'[data-testid="app-link"][href="{req["url"]}"]').last
        for _ in range(3):
            link.click()
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                for tab in self.page.context.pages:
                    if tab is not self.page and tab.url.rstrip("/").startswith(target):
                        return {"ok": True, "value": tab.url}
                self.page.wait_for_timeout(250)
        return {"ok": False, "value": [tab.url for tab in self.page.context.pages]}

    def do_confirmDialog(self, req: dict[str, Any]) -> dict[str, Any]:
        # A download is offered as a link the person clicks (nothing to confirm else: the
        # inspector has no model to sample with); clicked again if the click missed, as
        # for a link.
        if req["dialog"] != "download":
            return {"ok": False, "unsupported": True}
        link = self.page.locator('[data-testid="app-download"]').last
        for _ in range(3):
            name = self._download(link)
            if name is not None:
                return {"ok": True, "value": name}
        return {"ok": False}

    def _download(self, link: Any) -> str | None:
        """The name of the file a click of ``link`` downloads within 3 s, or None."""
        try:
            with self.page.expect_download(timeout=3_000) as downloading:
                link.click()
        except PlaywrightTimeout:
            return None
        name: str = downloading.value.suggested_filename
        return name

    def do_conversationContains(self, req: dict[str, Any]) -> dict[str, Any]:
        # The inspector's conversation: the ui/message texts it shows (it has no model).
        deadline = time.monotonic() + req["timeoutMs"] / 1000
        while True:
            texts = self.page.locator('[data-testid="app-message"]').all_text_contents()
            if any(req["marker"] in t for t in texts):
                return {"ok": True}
            if time.monotonic() > deadline:
                return {"ok": False, "value": texts}
            self.page.wait_for_timeout(500)

    def do_toggleTheme(self, req: dict[str, Any]) -> dict[str, Any]:
        self.page.emulate_media(color_scheme=req["to"])
        return {"ok": True}

    def do_inspectFrame(self, req: dict[str, Any]) -> dict[str, Any]:
        # The page's <iframe> elements, and those between the view and the page (their
        # attributes are readable from the page even though their content is not).
        value = self.page.evaluate(
            """() => { const f = Array.from(document.querySelectorAll("iframe"));
              const s = f.filter((x) => x.hasAttribute("sandbox"));
              return {total: f.length, sandboxed: s.length,
                      firstSandbox: s[0] ? s[0].getAttribute("sandbox") : null}; }"""
        )
        chain: list[str | None] = []
        frame = self.frame()
        while frame is not None and frame is not self.page.main_frame:
            chain.append(frame.frame_element().get_attribute("sandbox"))
            frame = frame.parent_frame
        depth = next((i for i, v in enumerate(chain) if v is not None), None)
        value |= {
            "viewChainDepth": len(chain),
            "viewSandboxed": depth is not None,
            "viewSandbox": None if depth is None else chain[depth],
            "viewSandboxDepth": depth,
        }
        return {"ok": True, "value": value}

    def do_readConsole(self, req: dict[str, Any]) -> dict[str, Any]:
        pattern = re.compile(req["pattern"], re.I)
        deadline = time.monotonic() + req["timeoutMs"] / 1000
        while True:
            hit = next((line for line in self.console if pattern.search(line)), None)
            if hit is not None or time.monotonic() > deadline:
                return {"ok": hit is not None, "value": hit}
            self.page.wait_for_timeout(500)

    def do_resetIsolation(self, req: dict[str, Any]) -> dict[str, Any]:
        for other in self.page.context.pages:
            if other is not self.page:
                other.close()
        self.page.bring_to_front()
        self.frame().get_by_test_id("reset-inline").click()
        self.page.emulate_media(color_scheme="light")
        return {"ok": True}


def run(scratch: Path, version: str, suite: str, only: str | None = None) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    html = scratch / "app" / f"dist-{suite}" / "mcp-app.html"
    if not html.exists():
        sys.exit(f"{html} is missing: build the conformance app first (docs/apps.md)")
    (scratch / "server.py").write_text(SERVER)
    mcpkit = Path(sys.executable).parent / "mcpkit"
    command = f"{sys.executable} {scratch / 'server.py'}"
    proc = subprocess.Popen(
        [str(mcpkit), "inspect", "--no-open", "--protocol-version", version, command],
        env={**os.environ, "CONFORMANCE_HTML": str(html)},
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
            )
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            for origin in STUBBED:
                context.route(
                    origin + "**",
                    lambda route: route.fulfill(status=200, body="stub", content_type="text/plain"),
                )
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(url)
            page.click('nav button[data-tab="tools"]')
            page.click('#tool-list .item[data-name="run_conformance"]')
            page.locator('#tool-detail [data-testid="submit"]').click()
            return drive(InspectorHost(page), only)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


def drive(host: InspectorHost, only: str | None = None) -> list[dict[str, Any]]:
    """The Runner's loop: start the suite, answer what it asks, until it is done."""
    deadline = time.monotonic() + 60
    while (frame := host.frame()) is None:
        if time.monotonic() > deadline:
            sys.exit("the conformance app never installed its channel")
        host.page.wait_for_timeout(250)
    frame.evaluate(f"(f) => globalThis.{CHANNEL}.start(f)", {"id": only} if only else None)
    while True:
        frame = host.frame()
        state = frame.evaluate(f"() => globalThis.{CHANNEL}.poll()")
        if state["state"] == "done":
            results: list[dict[str, Any]] = state["results"]
            return results
        if state["state"] == "running" and state["request"]:
            result = host.dispatch(state["request"])
            print(f"{state['runningId']}: {state['request']} -> {result}", file=sys.stderr)
            host.frame().evaluate(f"(r) => globalThis.{CHANNEL}.resolve(r)", result)
            continue
        host.page.wait_for_timeout(300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--protocol-version", default="2025-11-25")
    parser.add_argument("--suite", default="a", help="the build to run: SCRATCH/app/dist-SUITE")
    parser.add_argument("--only", help="run only the check of this id")
    args = parser.parse_args()
    results = run(args.scratch, args.protocol_version, args.suite, args.only)
    for r in results:
        print(f"{r['status']:8} {r['id']}  {r.get('message') or ''}")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
