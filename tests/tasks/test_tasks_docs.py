"""The first example of docs/tasks.md declares task support as it says (every block of the
page also runs as written: tests/test_doc_blocks.py)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import anyio
import pytest

from mcpkit import Client, Server

DOC = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def run_block(index: int) -> dict[str, object]:
    module = types.ModuleType(f"tasks_doc_{index}")
    sys.modules[module.__name__] = module
    try:
        exec(compile(BLOCKS[index], f"docs/tasks.md#example{index}", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


@pytest.mark.anyio
async def test_first_example_serves_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the example's tasks.db lands here
    server = run_block(0)["server"]
    assert isinstance(server, Server)
    support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in server.tools}
    assert support == {"build": "optional", "migrate": "required"}
    with anyio.fail_after(10):
        async with Client(server, protocol_version="2025-11-25") as client:
            tasks_cap = client.initialize_result.capabilities.model_dump(by_alias=True)["tasks"]
            assert tasks_cap["requests"] == {"tools": {"call": {}}}
