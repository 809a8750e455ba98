"""A server whose tools ask the user (form elicitation), for ``mcpkit call``'s answers.

    mcpkit call tests/client/servers/asks.py book --answer '{"name": "Ada"}'

``book`` asks one form (a required name, a number of guests from 1 to 12 defaulting to 2, a
seating among two); ``two`` asks two questions in a row; ``confirm`` a form without fields;
``pay`` sends the user to a URL; ``crash`` fails with a traceback in the server's log. The resource ``mem://secret`` and the
prompt ``greet`` ask too.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mcpkit import Context, Server

server = Server("asks")


class Booking(BaseModel):
    name: str
    guests: int = Field(2, ge=1, le=12)
    seating: Literal["indoor", "outdoor"] = "indoor"


class Word(BaseModel):
    word: str


@server.tool()
async def book(ctx: Context) -> str:
    """Ask for a booking."""
    answer = await ctx.elicit("Who is the table for?", Booking)
    if not answer.accepted or answer.data is None:
        return f"no booking ({answer.action})"
    b = answer.data
    return f"booked for {b.name}: {b.guests} guests, {b.seating}"


@server.tool()
async def two(ctx: Context) -> str:
    """Ask two questions, one after the other."""
    first = await ctx.elicit("First word?", Word)
    second = await ctx.elicit("Second word?", Word)
    words = [a.data.word if a.accepted and a.data else a.action for a in (first, second)]
    return " ".join(words)


@server.tool()
async def confirm(ctx: Context) -> str:
    """Ask a question with nothing to fill in."""
    answer = await ctx.elicit("Go ahead?", {"type": "object", "properties": {}})
    return answer.action


@server.tool()
async def pay(ctx: Context) -> str:
    """Send the user to a page (URL-mode elicitation)."""
    answer = await ctx.elicit_url("Pay on the bank's page", "https://bank.example/pay/42")
    return answer.action


@server.tool()
def crash() -> str:
    """Fail with an unexpected exception."""
    raise RuntimeError("the disk is on fire")


@server.resource("mem://secret")
async def secret(ctx: Context) -> str:
    """A resource that asks before it is read."""
    answer = await ctx.elicit("Which word unlocks it?", Word)
    return f"unlocked by {answer.data.word}" if answer.accepted and answer.data else answer.action


@server.prompt()
async def greet(ctx: Context) -> str:
    """A prompt that asks whom to greet."""
    answer = await ctx.elicit("Whom to greet?", Word)
    return f"Say hello to {answer.data.word}" if answer.accepted and answer.data else "Say hello"


if __name__ == "__main__":
    server.run()
