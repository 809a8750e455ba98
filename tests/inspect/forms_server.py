"""A server whose tools take the input shapes a form must handle beyond the plain types:
unions of several kinds, nullable unions, discriminated unions of objects, lists of them.
Each tool answers with the arguments it received, as JSON, so the test sees what the page
sent."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpkit import Server

server = Server("forms")


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


Shape = Annotated[Circle | Square, Field(discriminator="kind")]


@server.tool()
def scalar_union(value: int | str, maybe: int | str | None = None) -> str:
    """Echo a value that is a number or a string."""
    return json.dumps({"value": value, "maybe": maybe})


@server.tool()
def shapes(first: Shape, more: list[Shape] | None = None) -> str:
    """Echo shapes, each a circle or a square."""
    payload: dict[str, Any] = {"first": first.model_dump()}
    payload["more"] = [s.model_dump() for s in more or []]
    return json.dumps(payload)


if __name__ == "__main__":
    server.run()
