"""The bookkeeping that tells a connection's pipelined requests apart (``_pipelining.py``);
what it bounds is tested over real sockets in tests/hostile/test_framing_w10_w14.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import trio

from mcpkit._app._pipelining import PIPELINED_IN_A_ROW, Connection, PipelinedRequests

DOCS = Path(__file__).resolve().parents[2] / "docs"


def scope(port: int = 40000, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "http_version": "1.1", "client": ("127.0.0.1", port), **extra}


async def nowhere(message: Any) -> None:
    """A ``send`` for answers nobody reads."""


def begun(p: PipelinedRequests, port: int = 40000) -> Connection:
    """A request begun on the connection of ``port``: its connection."""
    conn = p.begin(scope(port))
    assert conn == ("127.0.0.1", port)
    return conn


def test_connections_not_told_apart_are_none() -> None:
    p = PipelinedRequests()
    assert p.begin(scope(http_version="2")) is None  # flow control per stream
    assert p.begin({"type": "http", "client": None}) is None  # a Unix socket
    assert p.begin(scope(port=0)) is None  # X-Forwarded-For without a port


def test_a_request_begun_while_the_last_answer_is_written_is_pipelined() -> None:
    p = PipelinedRequests(limit=2)
    conn = begun(p)
    first, serial = p.sender(conn, nowhere)
    assert first is nowhere
    begun(p)  # while the answer is written
    assert p.in_a_row(conn) == 1
    assert p.sender(conn, nowhere)[0] is nowhere
    begun(p)
    assert p.in_a_row(conn) == 2
    third, _ = p.sender(conn, nowhere)
    assert third is not nowhere  # past the bound: it closes the connection
    assert p.in_a_row(conn) == 0  # and the count starts over
    p.end(conn, serial)  # no loop running: at once, but for the first answer only
    begun(p)
    assert p.in_a_row(conn) == 1  # the third answer still marks the connection


def test_a_request_after_the_answer_was_written_starts_the_run_over() -> None:
    p = PipelinedRequests()
    conn = begun(p)
    p.sender(conn, nowhere)
    begun(p)
    assert p.in_a_row(conn) == 1
    p.end(conn, p.sender(conn, nowhere)[1])
    begun(p)
    assert p.in_a_row(conn) == 0


def test_only_the_kept_connections_are_remembered() -> None:
    p = PipelinedRequests(kept=2)
    for port in (1, 2, 3):
        p.sender(begun(p, port), nowhere)
        begun(p, port)
    assert [p.in_a_row(("127.0.0.1", port)) for port in (1, 2, 3)] == [0, 1, 1]


def test_on_asyncio_a_task_started_inside_the_last_send_runs_before_the_end() -> None:
    """The ordering the bookkeeping rests on: uvicorn starts a pipelined request's task
    inside the previous answer's last send, so it runs before the callback ``end`` leaves;
    a request begun later is not pipelined."""
    p = PipelinedRequests()
    runs: list[int] = []

    async def request() -> None:
        runs.append(p.in_a_row(begun(p)))

    async def main() -> None:
        conn = begun(p)
        started: list[asyncio.Task[None]] = []

        async def last_send(message: Any) -> None:
            started.append(asyncio.get_running_loop().create_task(request()))

        await p.write(conn, nowhere, last_send)
        await started[0]
        await asyncio.sleep(0)  # the end's callback has run
        await request()

    asyncio.run(main())
    assert runs == [1, 0]


def test_on_trio_nothing_is_told_apart_after_the_end() -> None:
    p = PipelinedRequests()

    async def main() -> int:
        conn = begun(p)
        await p.write(conn, nowhere, nowhere)
        begun(p)
        return p.in_a_row(conn)

    assert trio.run(main) == 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_past_the_bound_the_answer_says_connection_close(backend: str) -> None:
    p = PipelinedRequests(limit=1)
    conn = begun(p)
    p.sender(conn, nowhere)
    begun(p)
    got: list[dict[str, Any]] = []

    async def record(message: dict[str, Any]) -> None:
        got.append(message)

    async def answer(send: Any) -> None:
        start = {"headers": [(b"Connection", b"keep-alive"), (b"x", b"1")]}
        await send({"type": "http.response.start", "status": 200, **start})
        await send({"type": "http.response.body", "body": b"ok"})

    async def main() -> None:
        await p.write(conn, record, answer)

    asyncio.run(main()) if backend == "asyncio" else trio.run(main)
    assert got[0]["headers"] == [(b"x", b"1"), (b"connection", b"close")]
    assert got[1] == {"type": "http.response.body", "body": b"ok"}


def test_answers_on_connections_not_told_apart_go_out_as_they_are() -> None:
    p = PipelinedRequests()
    got: list[Any] = []

    async def writer(send: Any) -> None:
        got.append(send)

    asyncio.run(p.write(None, nowhere, writer))
    assert got == [nowhere]


def test_the_bound_is_the_one_docs_deploy_md_names() -> None:
    said = " ".join((DOCS / "deploy.md").read_text().split())
    assert f"after {PIPELINED_IN_A_ROW} in a row" in said
