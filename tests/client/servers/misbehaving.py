"""A deliberately bad MCP server over stdio, without any SDK: ``python misbehaving.py MODE``.

Modes:
  silent           reads everything, never answers (not even initialize)
  exit-mid-call    answers initialize and tools/list, dies (exit 3) on tools/call
  malformed        answers tools/call with noise, a non-JSON line, then a malformed result
  bad-output       a tool whose structuredContent violates its outputSchema
  hang-call        never answers tools/call; ignores stdin EOF and SIGTERM
  no-answer        never answers tools/call (but exits when stdin closes)
  old-revision     speaks 2024-11-05 only (results in that revision's shape)
"""

from __future__ import annotations

import json
import signal
import sys
import time

MODE = sys.argv[1]
TOOL = {
    "name": "get",
    "description": "Get a thing.",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}


def send(msg: object) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def answer(req: dict, result: object) -> None:
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})


def main() -> None:
    if MODE == "hang-call":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        req = json.loads(line)
        method = req.get("method")
        if "id" not in req or MODE == "silent":
            continue
        if method == "initialize":
            version = "2024-11-05" if MODE == "old-revision" else req["params"]["protocolVersion"]
            caps = {"tools": {}, "resources": {}, "prompts": {}}
            answer(
                req,
                {
                    "protocolVersion": version,
                    "capabilities": caps,
                    "serverInfo": {"name": MODE, "version": "0"},
                },
            )
        elif method == "tools/list":
            tool = dict(TOOL)
            if MODE == "old-revision":
                del tool["outputSchema"]
            answer(req, {"tools": [tool]})
        elif method == "tools/call":
            if MODE == "exit-mid-call":
                sys.stderr.write("fatal: the server crashed on purpose\n")
                sys.stderr.flush()
                sys.exit(3)
            if MODE == "malformed":
                sys.stdout.write("this is not JSON\n")
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "nope"},
                    }
                )
                answer(req, {"content": "should be a list"})
            elif MODE == "bad-output":
                answer(
                    req,
                    {
                        "content": [{"type": "text", "text": "x"}],
                        "structuredContent": {"n": "many"},
                    },
                )
            elif MODE in ("hang-call", "no-answer"):
                pass
            else:
                answer(
                    req,
                    {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1}},
                )
        elif method == "resources/list":
            answer(req, {"resources": [{"uri": "file:///a", "name": "a"}]})
        elif method == "prompts/get":
            answer(req, {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
        elif method == "ping":
            answer(req, {})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": req["id"],
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
    if MODE == "hang-call":
        while True:  # stdin closed, still not leaving: only SIGKILL ends it
            time.sleep(1)


if __name__ == "__main__":
    main()
