"""A ``progressToken`` must be a string or an integer (the schema's ProgressToken): an
object, a float or a boolean is refused with -32602 at the boundary, on a real stdio server.

Before: an object token was accepted, and progress was reported under nothing the client
could match (or echoed back as the object it sent).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.hostile._proc import StdioServer

SOURCE = """
from mcpkit import Context, Server

server = Server("progress")

@server.tool()
async def step(ctx: Context) -> str:
    \"\"\"Reports progress once.\"\"\"
    await ctx.report_progress(1, 1)
    return "done"
"""


@pytest.mark.parametrize("token", [{"a": 1}, [1], 1.5, True])
def test_a_progress_token_that_is_not_a_string_or_integer_is_refused(
    tmp_path: Path, token: object
) -> None:
    with StdioServer(tmp_path, SOURCE) as server:
        server.handshake()
        params = {"name": "step", "arguments": {}, "_meta": {"progressToken": token}}
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        answer = server.answer(2)
        assert answer["error"]["code"] == -32602, answer
        assert "progressToken" in answer["error"]["message"]
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {**params, "_meta": {"progressToken": "ok-7"}},
            }
        )
        assert answer_ok(server.answer(3))


def answer_ok(answer: dict[str, object]) -> bool:
    result = answer.get("result")
    return isinstance(result, dict) and not result.get("isError")
