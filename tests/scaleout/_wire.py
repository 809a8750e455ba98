"""Raw Streamable HTTP for the multi-worker tests: exact control of which worker gets what."""

from __future__ import annotations

import itertools
from typing import Any

import httpx2
import orjson

VERSION = "2025-11-25"
_ids = itertools.count(1)


def headers(sid: str | None = None, **extra: str) -> dict[str, str]:
    h = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": VERSION,
        **extra,
    }
    if sid is not None:
        h["mcp-session-id"] = sid
    return h


def sse_messages(body: bytes) -> list[tuple[str | None, Any]]:
    """``(event id, message)`` of each SSE event carrying data, in order."""
    out: list[tuple[str | None, Any]] = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        eid, data = None, b""
        for line in block.split(b"\n"):
            if line.startswith(b"id:"):
                eid = line[3:].strip().decode()
            elif line.startswith(b"data:"):
                data += line[5:].strip()
        if data:
            out.append((eid, orjson.loads(data)))
    return out


def answer(response: httpx2.Response) -> Any:
    """The JSON-RPC response in a POST's answer (JSON body or SSE stream)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for _, m in sse_messages(response.content):
        if "method" not in m:
            return m
    raise AssertionError(f"no response in {response.content[:300]!r}")


async def initialize(client: httpx2.AsyncClient, url: str) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "wire", "version": "0"},
        },
    }
    r = await client.post(url, headers=headers(), content=orjson.dumps(init))
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    r = await client.post(url, headers=headers(sid), content=orjson.dumps(note))
    assert r.status_code == 202, r.text
    return sid


async def call(
    client: httpx2.AsyncClient, url: str, sid: str, method: str, params: dict[str, Any] | None
) -> Any:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        msg["params"] = params
    r = await client.post(url, headers=headers(sid), content=orjson.dumps(msg))
    assert r.status_code == 200, (r.status_code, r.text)
    return answer(r)
