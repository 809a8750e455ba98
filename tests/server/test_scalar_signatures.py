"""Scalar signatures are described without pydantic, exactly as pydantic would describe them.

A server whose tools take only strings, numbers and booleans and return text never imports
pydantic (start-up time and idle memory, see docs/performance-notes.md). These tests hold the
hand-built schemas to pydantic's own output, and check over a real stdio subprocess that such a
server keeps pydantic unloaded until a call needs its coercion or its error messages.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Optional

import orjson
import pytest
from tests.server._harness import HANDSHAKE

from mcpkit._server import _schema
from mcpkit._server._schema import build_signature


def _pydantic_schema(fn: object) -> dict[str, object]:
    """The schema the pydantic path builds for ``fn`` (the fast path switched off)."""
    saved = _schema._scalar_schema
    _schema._scalar_schema = lambda params, fields: None  # type: ignore[assignment]
    try:
        return build_signature(fn).input_schema  # type: ignore[arg-type]
    finally:
        _schema._scalar_schema = saved


def f_required(a: str, b: int, c: float, d: bool) -> str:
    return ""


def f_defaults(a: str = "x", b: int = 3, c: float = 1.5, d: bool = True, e: float = 2) -> str:
    return ""


def f_optional(a: str | None, b: Optional[int] = None, c: float | None = 0.5) -> str:  # noqa: UP045
    return ""


def f_documented(city: str, days: int = 3) -> str:
    """Forecast.

    Args:
        city: the city name
        days: how many days ahead
    """
    return ""


def f_none() -> str:
    return ""


@pytest.mark.parametrize("fn", [f_required, f_defaults, f_optional, f_documented, f_none])
def test_scalar_schema_equals_pydantic(fn: object) -> None:
    fast = build_signature(fn)
    assert fast._validator is None  # built by hand, not by pydantic
    assert fast.input_schema == _pydantic_schema(fn)


def test_fast_path_is_taken_only_for_plain_scalars() -> None:
    def annotated(a: Annotated[str, "text"]) -> str:
        return a

    def listy(a: list[str]) -> str:
        return ""

    def inf_default(a: float = float("inf")) -> str:
        return ""

    taken = build_signature(f_defaults)
    assert taken._validator is None  # no pydantic validator built at registration
    for fn in (annotated, listy, inf_default):
        assert build_signature(fn)._validator is not None, fn.__name__


def test_scalar_signature_still_coerces_and_reports_through_pydantic() -> None:
    sig = build_signature(f_required)
    assert sig.validate({"a": "x", "b": "5", "c": 2, "d": "true"}) == {
        "a": "x",
        "b": 5,
        "c": 2.0,
        "d": True,
    }
    with pytest.raises(_schema.ArgumentError) as err:
        sig.validate({"a": 1, "c": 1.0, "d": True})
    assert "`a`: Input should be a valid string" in str(err.value)
    assert "`b`" in str(err.value)


SERVER = textwrap.dedent(
    """
    import sys
    from mcpkit import Server

    server = Server("plain")

    @server.tool()
    def loaded() -> str:
        '''Which heavy modules are loaded.'''
        return ",".join(m for m in ("pydantic", "mcpkit.types._base") if m in sys.modules)

    @server.tool()
    def add(a: int, b: int = 1) -> str:
        '''Add.'''
        return str(a + b)

    server.run()
    """
)


def test_plain_stdio_server_runs_without_pydantic(tmp_path: Path) -> None:
    script = tmp_path / "plain.py"
    script.write_text(SERVER)
    lines = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2}},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "loaded"}},
    ]
    # The stdin stays open until every answer is in: the server answers in its own order.
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(orjson.dumps(m) + b"\n" for m in lines))
        proc.stdin.flush()
        answers: dict[int, dict[str, object]] = {}
        while len(answers) < 4:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode() if proc.stderr else "server exited"
            msg = orjson.loads(line)
            answers[msg["id"]] = msg["result"]
        # Only now: a call with a string for an int needs pydantic's coercion.
        coerce = {"name": "add", "arguments": {"a": "40", "b": "2"}}
        proc.stdin.write(
            orjson.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": coerce})
            + b"\n"
        )
        proc.stdin.write(
            orjson.dumps(
                {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "loaded"}}
            )
            + b"\n"
        )
        proc.stdin.flush()
        later = [orjson.loads(proc.stdout.readline()) for _ in range(2)]
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    tools = {t["name"]: t for t in answers[2]["tools"]}  # type: ignore[union-attr]
    assert tools["add"]["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert answers[3] == {"content": [{"type": "text", "text": "3"}]}
    assert answers[4] == {"content": [{"type": "text", "text": ""}]}, "pydantic was imported"
    by_id = {m["id"]: m["result"] for m in later}
    assert by_id[5] == {"content": [{"type": "text", "text": "42"}]}
    assert by_id[6]["content"][0]["text"] == "pydantic"
