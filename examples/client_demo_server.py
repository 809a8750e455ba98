"""The server the client guide (docs/client.md) talks to: a bit of every feature.

python examples/client_demo_server.py            # stdio
mcpkit list examples/client_demo_server.py
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from mcpkit import Context, Server

server = Server("demo", version="1.0.0", instructions="Weather and notes.")

NOTES = {"groceries": "milk, eggs", "todo": "write docs"}


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


class Booking(BaseModel):
    name: str
    guests: int = 2


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def get_weather(city: str) -> Weather:
    """Current weather for a city (structured output)."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@server.tool()
async def slow_count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress and logging each step."""
    for i in range(n):
        await ctx.info(f"counting {i + 1}")
        await ctx.report_progress(i + 1, n, f"{i + 1} of {n}")
        await anyio.sleep(0.05)
    return f"counted to {n}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarize a text with the client's model (sampling)."""
    result = await ctx.sample(f"Summarize: {text}", max_tokens=50)
    return f"summary: {getattr(result.content, 'text', '')}"


@server.tool()
async def book_table(ctx: Context) -> str:
    """Ask the user for a booking (elicitation)."""
    answer = await ctx.elicit("Who is the table for?", Booking)
    if answer.accepted and answer.data is not None:
        return f"booked for {answer.data.name}, {answer.data.guests} guests"
    return f"no booking ({answer.action})"


@server.tool()
async def workspace(ctx: Context) -> list[str]:
    """The client's roots."""
    return [root.uri for root in await ctx.list_roots()]


@server.resource("config://app", mime_type="application/json")
def config() -> dict[str, bool]:
    """The app's configuration."""
    return {"debug": False}


@server.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """One note."""
    return NOTES[name]


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@server.completion()
def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    """Complete note names and prompt languages."""
    if argument.name == "name":
        return [n for n in NOTES if n.startswith(argument.value)]
    if argument.name == "language":
        return [x for x in ("python", "rust", "go") if x.startswith(argument.value)]
    return []


if __name__ == "__main__":
    server.run()
