"""A session id of any shape but ours never reaches the registry: it is an unknown session.

Session ids are 32 characters of URL-safe base64 (192 bits from the CSPRNG). Whatever else a
client sends in ``Mcp-Session-Id`` is answered 404 with a JSON-RPC error before any lookup,
so no registry (in memory here; Redis in tests/scaleout/test_hostile_session_ids.py) ever
builds anything from it. A ``Last-Event-ID`` naming a stream of another shape is refused the
same way before its events are looked up.
"""

from __future__ import annotations

from typing import Any

import pytest
from _http_helpers import HEADERS, INIT_PARAMS, DemoServer, InProcessHTTP, in_process

from mcpkit._app import create_http_app
from mcpkit._app._registry import is_session_id, new_session_id

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def malformed(sid: str) -> list[str]:
    """Ids a client may send that are not of our shape, several built from a real one."""
    return [
        f"{sid}:get",
        f"{sid}:bl",
        sid + "A",
        sid[:-1],
        sid[:16] + "*" + sid[17:],
        sid[:16] + ":" + sid[17:],
        "../" + sid[3:],
        "*",
        "A" * 4096,
        "no-such-session",
    ]


async def _session(c: InProcessHTTP) -> tuple[str, dict[str, str]]:
    """A new initialized session: its id, and the headers of a request on it."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    r = await c.post(c.url, json=init, headers=HEADERS)
    sid = r.headers["mcp-session-id"]
    h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await c.post(c.url, json=note, headers=h)).status_code == 202
    return sid, h


def test_the_ids_we_make_have_the_shape_we_accept() -> None:
    made = {new_session_id() for _ in range(200)}
    assert len(made) == 200 and all(is_session_id(s) and len(s) == 32 for s in made)
    assert all(not is_session_id(s) for s in malformed(made.pop()))


async def test_a_malformed_session_id_is_an_unknown_session_and_is_never_looked_up(
    demo: DemoServer,
) -> None:
    app = create_http_app(demo)
    looked_up: list[str] = []
    lookup = app.registry.lookup

    async def spy(sid: str, headers: dict[str, str]) -> Any:
        looked_up.append(sid)
        return await lookup(sid, headers)

    app.registry.lookup = spy  # type: ignore[method-assign]
    async with in_process(app) as c:
        sid, good = await _session(c)
        looked_up.clear()
        for bad in malformed(sid):
            h = {**good, "mcp-session-id": bad}
            for answer in (
                await c.post(c.url, json=LIST, headers=h),
                await c.get(c.url, headers={**h, "accept": "text/event-stream"}),
                await c.delete(c.url, headers=h),
            ):
                assert answer.status_code == 404, (bad[:40], answer.status_code, answer.text)
                assert answer.headers["content-type"].startswith("application/json")
                error = answer.json()["error"]
                assert error["code"] == -32600 and "unknown" in error["message"]
        assert looked_up == []  # not one reached the registry
        # The session itself is untouched, and an id of our shape is looked up as before.
        assert (await c.post(c.url, json=LIST, headers=good)).status_code == 200
        unknown = {**good, "mcp-session-id": new_session_id()}
        assert (await c.post(c.url, json=LIST, headers=unknown)).status_code == 404
        assert looked_up == [sid, unknown["mcp-session-id"]]


async def test_a_last_event_id_naming_a_stream_of_another_shape_is_refused(
    demo: DemoServer,
) -> None:
    async with in_process(create_http_app(demo)) as c:
        sid, h = await _session(c)
        key = c.app.sessions[sid].transport.key
        for tail in ("1:x", ":1", "1 1", "-1", "1" * 65, ""):
            got = await c.get(
                c.url,
                headers={**h, "accept": "text/event-stream", "last-event-id": f"{key}.{tail}_0"},
            )
            assert got.status_code == 400, (tail, got.status_code)
            assert "Last-Event-ID" in got.json()["error"]["message"]
