"""The bookkeeping that tells a connection's pipelined requests apart (``_pipelining.py``);
what it bounds is tested over real sockets in tests/hostile/test_framing_w10_w14.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import trio

from mcpkit._app._pipelining import PIPELINED_IN_A_ROW, PipelinedRequests


def scope(port: int = 40000, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "http_version": "1.1", "client": ("127.0.0.1", port), **extra}


def test_connections_not_told_apart_are_none() -> None:
    p = PipelinedRequests()
    assert p.begin(scope(http_version="2")) is None  # flow control per stream
    assert p.begin({"type": "http", "client": None}) is None  # a Unix socket
    assert p.begin(scope(port=0)) is None  # X-Forwarded-For without a port
    assert p.begin(scope()) == ("127.0.0.1", 40000)


def test_a_request_begun_while_the_last_answer_is_written_is_pipelined() -> None:
    p = PipelinedRequests(limit=2)
    conn = p.begin(scope())
    assert conn is not None
    send: Any = object()
    first, serial = p.sender(conn, send)
    assert first is send
    assert p.begin(scope()) == conn and p.run(conn) == 1  # while the answer is written
    second, _ = p.sender(conn, send)
    assert second is send
    assert p.begin(scope()) == conn and p.run(conn) == 2
    third, _ = p.sender(conn, send)
    assert third is not send  # past the bound: it closes the connection
    assert p.run(conn) == 0  # and the count starts over
    p.end(conn, serial)  # no loop running: removed at once
    # The first answer's end does not remove the entry of a later answer...
    assert p.begin(scope()) == conn and p.run(conn) == 1


def test_a_request_after_the_answer_was_written_starts_the_run_over() -> None:
    p = PipelinedRequests()
    conn = p.begin(scope())
    assert conn is not None
    _, serial = p.sender(conn, None)  # type: ignore[arg-type]
    assert p.begin(scope()) == conn and p.run(conn) == 1
    _, serial = p.sender(conn, None)  # type: ignore[arg-type]
    p.end(conn, serial)
    assert p.begin(scope()) == conn and p.run(conn) == 0


def test_an_old_answers_end_leaves_a_newer_answer_marked() -> None:
    p = PipelinedRequests()
    conn = p.begin(scope())
    assert conn is not None
    _, old = p.sender(conn, None)  # type: ignore[arg-type]
    assert p.begin(scope()) == conn
    _, new = p.sender(conn, None)  # type: ignore[arg-type]
    p.end(conn, old)
    assert p.begin(scope()) == conn and p.run(conn) == 2  # still marked by the new one
    p.end(conn, new)
    assert p.begin(scope()) == conn and p.run(conn) == 0


def test_only_the_kept_connections_are_remembered() -> None:
    p = PipelinedRequests(kept=2)
    for port in (1, 2, 3):
        conn = p.begin(scope(port))
        assert conn is not None
        p.sender(conn, None)  # type: ignore[arg-type]
        p.begin(scope(port))
    assert [p.run(("127.0.0.1", port)) for port in (1, 2, 3)] == [0, 1, 1]


def test_on_asyncio_a_task_started_inside_the_last_send_runs_before_the_end() -> None:
    """The ordering the bookkeeping rests on: uvicorn starts a pipelined request's task
    inside the previous answer's last send, so it runs before the callback ``end`` leaves."""
    p = PipelinedRequests()

    async def main() -> tuple[int, int]:
        conn = p.begin(scope())
        assert conn is not None
        runs: list[int] = []

        async def pipelined() -> None:
            p.begin(scope())
            runs.append(p.run(conn))

        _, serial = p.sender(conn, None)  # type: ignore[arg-type]
        task = asyncio.get_running_loop().create_task(pipelined())  # "inside the send"
        p.end(conn, serial)
        await task
        await asyncio.sleep(0)  # the end's callback has run

        async def later() -> None:
            p.begin(scope())
            runs.append(p.run(conn))

        await asyncio.get_running_loop().create_task(later())
        return runs[0], runs[1]

    assert asyncio.run(main()) == (1, 0)


def test_on_trio_nothing_is_told_apart_after_the_end() -> None:
    p = PipelinedRequests()

    async def main() -> int:
        conn = p.begin(scope())
        assert conn is not None
        _, serial = p.sender(conn, None)  # type: ignore[arg-type]
        p.end(conn, serial)
        p.begin(scope())
        return p.run(conn)

    assert trio.run(main) == 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_closing_send_replaces_the_connection_header(backend: str) -> None:
    p = PipelinedRequests(limit=1)
    conn = p.begin(scope())
    assert conn is not None
    p.sender(conn, None)  # type: ignore[arg-type]
    p.begin(scope())
    got: list[dict[str, Any]] = []

    async def record(message: dict[str, Any]) -> None:
        got.append(message)

    async def main() -> None:
        send, _ = p.sender(conn, record)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"Connection", b"keep-alive"), (b"x", b"1")],
            }
        )
        await send({"type": "http.response.body", "body": b"ok"})

    asyncio.run(main()) if backend == "asyncio" else trio.run(main)
    assert got[0]["headers"] == [(b"x", b"1"), (b"connection", b"close")]
    assert got[1] == {"type": "http.response.body", "body": b"ok"}


def test_the_bound_is_what_the_docs_say() -> None:
    assert PIPELINED_IN_A_ROW == 4  # docs/deploy.md, "Clients that pipeline and never read"
