"""The server tests/http/test_granian.py serves with granian, started as a user starts it:
``python granian_app.py`` (``Server.run("http", http_server="granian")``, granian's
embeddable server), or ``granian --interface rsgi granian_app:app`` (the app as an RSGI
application)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator

import anyio

from mcpkit import Context, Server

#: Small, so a body over it costs the tests little to send.
MAX_BODY = 64 * 1024
#: One listen stream at a time: a second is refused until the first one's client left.
MAX_LISTEN = 1
#: Seconds a body may take to arrive: short, so a slow one costs the tests little.
SLOW = 1.0
#: Seconds a request head may take, and (granian's header_read_timeout) a keep-alive
#: connection may idle: longer, so a client's pooled connection stays usable under load.
SLOW_HEAD = 2.0


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[None]:
    # What the RSGI tests look for: granian ran the server's lifespan, start and end.
    print("granian_app: lifespan up", file=sys.stderr, flush=True)
    yield
    print("granian_app: lifespan down", file=sys.stderr, flush=True)


server = Server("granian-app", version="1.0", lifespan=lifespan)


@server.tool()
async def echo(text: str) -> str:
    """Says the text back."""
    return text


@server.tool()
async def steps(n: int, ctx: Context) -> str:
    """Reports n steps of progress, each a while apart, then says it is done: an answer
    that outlasts the one-body window, so it is streamed as it happens."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
        await anyio.sleep(0.1)
    return f"{n} steps"


#: What ``granian --interface rsgi granian_app:app`` serves.
app = server.http_app(max_body_size=MAX_BODY, max_listen_streams=MAX_LISTEN, body_timeout=SLOW)

if __name__ == "__main__":
    server.run(
        "http",
        http_server="granian",  # the documented keyword, as a user writes it
        host="127.0.0.1",
        port=0,
        max_body_size=MAX_BODY,
        max_listen_streams=MAX_LISTEN,
        body_timeout=SLOW,
        header_timeout=SLOW_HEAD,
    )
