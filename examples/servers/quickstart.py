"""The smallest useful server: one tool, one resource, one prompt.

mcpkit run examples/servers/quickstart.py
"""

from __future__ import annotations

from mcpkit import Server

server = Server("quickstart", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A personal greeting."""
    return f"Hello, {name}!"


@server.prompt()
def haiku(topic: str) -> str:
    """Ask for a haiku about a topic."""
    return f"Write a haiku about {topic}."


if __name__ == "__main__":
    server.run()
