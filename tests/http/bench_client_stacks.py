"""Client HTTP stacks compared: sequential tools/call POSTs against the floor ASGI server.

    python tests/http/bench_client_stacks.py [N] [h11|httptools]

Prints requests/s and the client process's CPU per request for httpx2, httpcore2, aiohttp
(if importable), raw h11 over anyio (one connection, no pool), and mcpkit's client
(``HTTP1Client``: h11 over anyio's streams, with its pool, redirects, auth hook and
timeouts). Needs ../shared/bench.
"""

import asyncio
import os
import socket
import subprocess
import sys
import time

import orjson

FLOOR = os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "bench", "floor", "asgi_server.py"
)

N = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
port = 18977
srv = subprocess.Popen(
    [
        sys.executable,
        FLOOR,
        "--port",
        str(port),
        "--http",
        sys.argv[2] if len(sys.argv) > 2 else "h11",
    ]
)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port)).close()
        break
    except OSError:
        time.sleep(0.1)
URL = f"http://127.0.0.1:{port}/mcp"
H = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-session-id": "x",
    "mcp-protocol-version": "2025-11-25",
}


def body(i):
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hello"}},
        }
    )


async def b_httpx2():
    import httpx2

    async with httpx2.AsyncClient() as c:
        for i in range(N):
            r = await c.post(URL, content=body(i), headers=H)
            orjson.loads(r.content)


async def b_httpcore2():
    import httpcore2

    hdrs = [(k.encode(), v.encode()) for k, v in H.items()]
    async with httpcore2.AsyncConnectionPool() as pool:
        for i in range(N):
            async with pool.stream("POST", URL, headers=hdrs, content=body(i)) as r:
                b = b"".join([c async for c in r.aiter_stream()])
            orjson.loads(b)


async def b_aiohttp():
    import aiohttp

    async with aiohttp.ClientSession() as s:
        for i in range(N):
            async with s.post(URL, data=body(i), headers=H) as r:
                orjson.loads(await r.read())


async def b_h11():
    import anyio
    import h11

    stream = await anyio.connect_tcp("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    hdrs = [(k, v) for k, v in H.items()] + [("host", f"127.0.0.1:{port}")]
    for i in range(N):
        b = body(i)
        await stream.send(
            conn.send(
                h11.Request(
                    method="POST", target="/mcp", headers=[*hdrs, ("content-length", str(len(b)))]
                )
            )
            + conn.send(h11.Data(data=b))
            + conn.send(h11.EndOfMessage())
        )
        out = b""
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA:
                conn.receive_data(await stream.receive())
                continue
            if isinstance(ev, h11.Data):
                out += ev.data
            if isinstance(ev, h11.EndOfMessage):
                break
        orjson.loads(out)
        conn.start_next_cycle()
    await stream.aclose()


async def b_client():
    from mcpkit._http._h1client import HTTP1Client

    async with HTTP1Client() as http:
        for i in range(N):
            r = await http.post(URL, content=body(i), headers=H)
            orjson.loads(await r.aread())


try:
    stacks = [
        ("httpx2", b_httpx2),
        ("httpcore2", b_httpcore2),
        ("aiohttp", b_aiohttp),
        ("h11-raw", b_h11),
        ("HTTP1Client", b_client),
    ]
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        stacks.pop(2)
    for name, fn in stacks * 2:
        t0 = time.perf_counter()
        c0 = time.process_time()
        asyncio.run(fn())
        dt = time.perf_counter() - t0
        cpu = time.process_time() - c0
        print(f"{name:11s} {N / dt:8.0f} req/s wall  {cpu / N * 1e6:6.0f} us client CPU/req")
finally:
    srv.terminate()
    srv.wait()
