"""A scripted MCP server over stdio, without any SDK: ``python eras_2026.py MODE [ARGS]``.

Every request it gets is reported on stderr (``got METHOD [ID] [PROTOCOL VERSION]``), so a
test knows what the client sent. Modes:

  versions V...     a modern server of other revisions: each 2026-07-28 request is refused
                    with UnsupportedProtocolVersion (-32022) listing V...; ``initialize``
                    is answered when it asks for one of V..., refused otherwise
  legacy CODE       a server answering anything before ``initialize`` with the JSON-RPC
                    error CODE: one of the handshake era (its code implementation-defined,
                    as the spec says), or with -32020/-32021 what only a modern one sends
  listen            a 2026-07-28 server whose listen streams interleave foreign
                    notifications: on the first ``subscriptions/listen`` an update tagged
                    with another subscription id (999) comes before the acknowledgement and
                    after it, then the stream's own; on the second, the acknowledgement
                    leaves out the first URI, and an update of the first (older) stream comes
                    before the new stream's own
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
ARGS = sys.argv[2:]
META_VERSION = "io.modelcontextprotocol/protocolVersion"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
FOREIGN = 999


def send(msg: object) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def report(*words: object) -> None:
    sys.stderr.write(" ".join(str(w) for w in words) + "\n")
    sys.stderr.flush()


def answer(req: dict, result: object) -> None:
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})


def refuse(req: dict, code: int, message: str, data: object = None) -> None:
    error: dict = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    send({"jsonrpc": "2.0", "id": req["id"], "error": error})


def notify(method: str, sub: object, **params: object) -> None:
    send({"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": {SUB_ID: sub}}})


def modern_version(req: dict) -> str | None:
    meta = (req.get("params") or {}).get("_meta") or {}
    return meta.get(META_VERSION)


def handshake_server(req: dict, initialized: list[bool]) -> None:
    """The ``versions`` and ``legacy`` modes."""
    method = req["method"]
    if method == "initialize":
        asked = req["params"]["protocolVersion"]
        report("got initialize", req["id"], asked)
        if MODE == "versions" and asked not in ARGS:
            refuse(req, -32602, "Unsupported protocol version", {"supported": ARGS})
            return
        initialized.append(True)
        info = {"name": MODE, "version": "0"}
        answer(req, {"protocolVersion": asked, "capabilities": {"tools": {}}, "serverInfo": info})
        return
    report("got", method, req["id"], modern_version(req) or "")
    if MODE == "versions" and modern_version(req) is not None:
        data = {"supported": ARGS, "requested": modern_version(req)}
        refuse(req, -32022, "Unsupported protocol version", data)
    elif not initialized:
        refuse(req, int(ARGS[0]) if MODE == "legacy" else -32600, "Server not initialized")
    elif method == "tools/list":
        answer(req, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
    else:
        refuse(req, -32601, "Method not found")


def listen_server(req: dict, listens: list[object]) -> None:
    """The ``listen`` mode."""
    method = req["method"]
    report("got", method, req["id"], modern_version(req) or "")
    if method == "server/discover":
        caps = {"resources": {"subscribe": True}, "tools": {"listChanged": True}}
        answer(
            req,
            {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": caps,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "listen", "version": "0"}},
            },
        )
    elif method == "subscriptions/listen":
        asked = req["params"]["notifications"]
        uris = asked.get("resourceSubscriptions", [])
        sid = req["id"]
        updated = "notifications/resources/updated"
        if not listens:
            notify(updated, FOREIGN, uri="test://foreign-before-ack")
            notify("notifications/subscriptions/acknowledged", sid, notifications=asked)
            notify(updated, FOREIGN, uri="test://foreign-after-ack")
            notify(updated, sid, uri=uris[0])
        else:
            kept = {**asked, "resourceSubscriptions": uris[1:]}
            notify("notifications/subscriptions/acknowledged", sid, notifications=kept)
            notify(updated, listens[-1], uri=uris[0])
            notify(updated, sid, uri=uris[-1])
        listens.append(sid)
    else:
        refuse(req, -32601, "Method not found")


def main() -> None:
    state: list = []
    for line in sys.stdin:
        req = json.loads(line)
        if "id" not in req:
            if req.get("method") == "notifications/cancelled":
                report("got notifications/cancelled", req["params"]["requestId"])
            continue
        if MODE == "listen":
            listen_server(req, state)
        else:
            handshake_server(req, state)


if __name__ == "__main__":
    main()
