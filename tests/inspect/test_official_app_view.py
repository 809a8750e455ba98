"""``mcpkit inspect`` rendering a view written with the official ext-apps ``App`` class
(2.0.4: its bundle inlined into the view, tests/inspect/official_app_server.py), in headless
Chromium: it connects through the inspector's sandbox proxy, reads ``toolInfo.id`` (the
``tools/call``'s JSON-RPC id), lists its server's resources through the host, has it offer
a file to download (``ui/download-file``) and offers the host a tool, which the page lists
and calls.
Its own module: the browser of test_apps_host.py's fixture is closed before this one opens.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.client._conformance_harness import CACHE
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, mcpkit_command
from tests.inspect.test_apps_host import select, submit, view

SERVER = f"{' '.join(mcpkit_command())} run {__file__.rsplit('/', 1)[0]}/official_app_server.py"


#: The official ext-apps App class, as the official inspector's install brings it (the
#: test of the official inspector, tests/apps/test_official_inspector.py, installs it).
EXT_APPS = CACHE / "inspector-2.12.0" / "node_modules" / "@modelcontextprotocol" / "ext-apps"


@pytest.mark.skipif(BACKEND != "asyncio", reason="processes: one pass (asyncio) is enough")
@pytest.mark.skipif(
    not (EXT_APPS / "dist" / "src" / "app-with-deps.js").exists(),
    reason="the official ext-apps bundle is not installed (tests/apps/test_official_inspector.py does)",
)
def test_a_view_written_with_the_official_app_class_works_through_the_proxy() -> None:
    from playwright.sync_api import expect

    env = {**os.environ, "EXT_APPS_BUNDLE": str(EXT_APPS / "dist" / "src" / "app-with-deps.js")}
    with (
        inspected(["inspect", SERVER], env=env) as running,
        browser_page(running.url()) as (p, _),
    ):
        p.wait_for_selector('[data-testid="server-name"]')
        select(p, "official")
        submit(p)
        v = view(p)
        expect(v.locator("#state")).to_have_text("result")
        assert (v.locator("#tool-id").text_content() or "").isdigit()
        # serverResources is advertised: the view's resources/list reaches the server.
        expect(v.locator("#resources")).to_have_text('["ui://official/view"]')
        # ui/download-file (downloadFile advertised): offered to the person, who downloads.
        expect(v.locator("#download")).to_have_text("{}")
        link = p.locator('[data-testid="app-download"]')
        expect(link).to_have_text("notes.txt")
        with p.expect_download() as downloading:
            link.click()
        saved = downloading.value
        assert saved.suggested_filename == "notes.txt"
        assert Path(saved.path()).read_text() == "hello, download"
        tool = p.locator('[data-testid="app-tool"][data-name="greet"]')
        tool.locator('[data-testid="app-tool-args"]').fill('{"name": "mcpkit"}')
        tool.locator('[data-testid="app-tool-call"]').click()
        expect(tool.locator('[data-testid="app-tool-result"]')).to_contain_text("Hello, mcpkit!")
