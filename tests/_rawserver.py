"""The start of a hand-written stdio MCP server for tests that need one misbehaving in a way
no SDK server can be made to: ``PRELUDE + body``, where the body loops over
``for msg in messages():`` and answers with ``send(...)``; ``handshake(msg, name, tools)``
answers ``initialize`` and ``tools/list`` (2025-11-25) and says whether it did."""

PRELUDE = """
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

def messages():
    for line in sys.stdin:
        yield json.loads(line)

def handshake(msg, name, tools):
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "tools": [{"name": t, "inputSchema": {"type": "object"}} for t in tools]}})
    else:
        return False
    return True

def not_found(msg):
    if msg.get("id") is not None and msg.get("method") is not None:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
"""
