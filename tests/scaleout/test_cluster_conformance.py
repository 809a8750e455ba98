"""The public conformance suite against three workers sharing one Redis, behind the strict
round-robin proxy: every server scenario (both eras, the extensions; authorization has
its own tests) must pass as it does for one process. Workers name Redis both documented
ways: ``--redis URL`` and ``MCPKIT_REDIS_URL``. Then each worker, asked directly, lists the
same tools, prompts and resources: what the suite changed at run time (its tool calls add
and remove tools and prompts) was made on every worker."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from functools import partial
from pathlib import Path

import httpx2
import orjson
import pytest
from tests import _early
from tests.conftest import BACKEND
from tests.scaleout._cluster import cluster, redis_server
from tests.scaleout._wire import answer

ROOT = Path(__file__).resolve().parents[2]
RUN_SH = Path(
    os.environ.get("MCPKIT_CONFORMANCE_RUN_SH", ROOT.parent / "shared" / "conformance" / "run.sh")
)

ENABLED = os.environ.get("MCPKIT_CONFORMANCE") != "0" and bool(
    os.environ.get("CI") or os.environ.get("MCPKIT_CONFORMANCE") == "1"
)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(not ENABLED, reason="slow: runs in CI, or set MCPKIT_CONFORMANCE=1"),
]


def start_early(item: pytest.Item) -> None:
    """The run starts with the session, in the background (tests/_early.py), with a Redis
    of its own; the scaleout tests run in the asyncio pass only (tests/scaleout/conftest.py)."""
    if ENABLED and RUN_SH.exists() and BACKEND == "asyncio":
        tmp = item.config._tmp_path_factory.mktemp("cluster-conformance")  # type: ignore[attr-defined]
        _early.start(item.nodeid, partial(_three_workers, tmp))


Listed = dict[str, list[str]]


def _three_workers(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, list[Listed]]:
    """run.sh against three workers on a Redis of their own: the process, the worker logs,
    and what each worker lists afterwards (asked directly, not through the proxy)."""
    (tmp_path / "redis").mkdir(exist_ok=True)
    with redis_server(tmp_path / "redis") as redis, _early.owning(redis.proc.pid):
        with contextlib.ExitStack() as owned, cluster(redis.url, tmp_path) as workers:
            for child in (*workers.workers, workers.proxy):
                owned.enter_context(_early.owning(child.pid))  # the job's, not a test's
            front = workers.url.replace("127.0.0.1", "localhost")  # as run.sh --server has it
            proc = _early.run_process(
                [
                    "bash",
                    str(RUN_SH),
                    "--url",
                    front,
                    "--skip",
                    "^auth/",
                    "--out",
                    str(tmp_path / "results"),
                ],
                cwd=ROOT,
                env={**os.environ, "CONFORMANCE_VERSION": "0.2.0-alpha.12"},
                timeout=1100,
            )
            lists = [_listed(f"{url}/mcp") for url in workers.worker_urls]
        redis.stop()  # while it still counts as the job's
    return proc, tmp_path, lists


def _listed(url: str) -> Listed:
    """Tool and prompt names, resource URIs and template strings the worker at ``url``
    lists (2026-07-28 requests: no session, each answered by that worker alone)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "lists", "version": "0"},
    }
    found: Listed = {}
    with httpx2.Client(timeout=20) as http:
        for method, field, key in (
            ("tools/list", "tools", "name"),
            ("prompts/list", "prompts", "name"),
            ("resources/list", "resources", "uri"),
            ("resources/templates/list", "resourceTemplates", "uriTemplate"),
        ):
            headers = {
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": method,
            }
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}}
            reply = answer(http.post(url, headers=headers, content=orjson.dumps(body)))
            found[method] = sorted(item[key] for item in reply["result"][field])
    return found


def test_three_workers_behind_round_robin_pass_every_server_scenario(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if not RUN_SH.exists():
        pytest.fail(f"conformance runner not found at {RUN_SH}")
    proc, where, lists = _early.result(request.node.nodeid, partial(_three_workers, tmp_path))
    results = where / "results" / "results.json"
    assert results.exists(), f"no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    rows = json.loads(results.read_text())["rows"]
    assert len(rows) >= 65, [r["scenario"] for r in rows]
    failing = [(r["scenario"], r["failed_checks"][:3]) for r in rows if r["result"] != "PASS"]
    logs = "\n".join(p.read_text()[-2000:] for p in sorted(where.glob("worker*.log")))
    assert failing == [], f"{failing}\nworker logs:\n{logs}"
    # One view, whichever worker answers: the suite's run-time changes reached all three.
    assert len(lists) == 3 and lists[0]["tools/list"], lists
    assert lists[1] == lists[0] and lists[2] == lists[0], lists
