"""The server of ``python -m bench.eras``: one mcpkit server for both eras.

    python bench/eras_server.py [--http h11|httptools] [--tools sync|async] [--port 0]

``echo(text) -> str`` and ``add(a, b) -> int`` as tools of one ``Server``: plain ``def``
functions (``--tools sync``, the default: what the neutral benchmark's servers register,
../shared/bench/BASELINE.md) or ``async def`` ones (``--tools async``),
served over Streamable HTTP by ``serve_http`` (uvicorn on 127.0.0.1, the loop ``mcpkit run``
uses: uvloop when installed, unless ``MCPKIT_UVLOOP=0``) with ``json_response=True``: 2025-11-25
sessions get one JSON body per POST, and 2026-07-28 stateless requests are served by the same
app on the same endpoint. Once listening it prints ``mcpkit: serving ... at URL`` on stderr.
"""

from __future__ import annotations

import argparse

from mcpkit import Server, serve_http


def build(tools: str = "sync") -> Server:
    """The benchmark's server (also served in process by the profile of ``bench.eras``),
    its tools ``def`` functions (``tools="sync"``) or ``async def`` ones (``"async"``)."""
    server = Server("bench-eras", version="1.0.0")
    if tools == "async":

        @server.tool()
        async def echo(text: str) -> str:
            """Echo the text back."""
            return text

        @server.tool()
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    else:

        @server.tool(name="echo")
        def echo_sync(text: str) -> str:
            """Echo the text back."""
            return text

        @server.tool(name="add")
        def add_sync(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    return server


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/eras_server.py")
    # None: serve_http's default (uvicorn's own choice: httptools when installed, else h11).
    p.add_argument("--http", default=None, choices=("h11", "httptools"))
    p.add_argument("--tools", default="sync", choices=("sync", "async"))
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()
    options = {"http": a.http} if a.http else {}
    serve_http(build(a.tools), port=a.port, json_response=True, uvicorn_options=options)


if __name__ == "__main__":
    main()
