"""The official MCP Inspector's CLI (``@modelcontextprotocol/inspector``, pinned), advertising
MCP Apps, reports the app metadata of ``counter`` from ``mcpkit run
examples/apps_server.py`` in both eras. Installed once outside the repository (as the
conformance harness is); skipped only when the npm registry cannot be reached, loudly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.client._conformance_harness import CACHE, ROOT, _npm_install
from tests.conftest import BACKEND
from tests.inspect._browser_harness import mcpkit_command

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio", reason="node and the server are processes: one pass is enough"
)

VERSION = "2.12.0"
PREFIX = CACHE / f"inspector-{VERSION}"
SERVER = [*mcpkit_command(), "run", str(ROOT / "examples" / "apps_server.py")]


def _cli() -> Path:
    cli = PREFIX / "node_modules" / ".bin" / "mcp-inspector"
    installed = PREFIX / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != VERSION:
        _npm_install(PREFIX, f"@modelcontextprotocol/inspector@{VERSION}")
    return cli


def _probe(era: str, *flags: str) -> list[dict[str, object]]:
    p = subprocess.run(
        [str(_cli()), "--cli", "--protocol-era", era, *flags, "--method", "tools/list", *SERVER],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_official_inspector_reports_counters_app(era: str) -> None:
    apps = {line["toolName"]: line for line in _probe(era, "--advertise-apps", "--app-info")}
    assert apps["counter"] == {
        "hasApp": True,
        "toolName": "counter",
        "resourceUri": "ui://counter/view",
        "prefersBorder": True,
        "resourceMimeType": "text/html;profile=mcp-app",
    }
    assert apps["increment"]["visibility"] == ["app"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_without_apps_the_official_inspector_never_sees_the_app_only_tool(era: str) -> None:
    listed = _probe(era, "--app-info")
    assert [line["toolName"] for line in listed] == ["counter"]
