"""Typed inputs and structured outputs: the schemas come from the type hints.

mcpkit run examples/servers/structured_output.py
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpkit import Server, ToolError
from mcpkit.types import ToolAnnotations

server = Server("structured", version="1.0.0")


class Flight(BaseModel):
    number: str
    origin: str
    destination: str
    departs: date
    cabin: Literal["economy", "business"] = "economy"


class Itinerary(BaseModel):
    """Flights found for a trip."""

    flights: list[Flight]
    total_eur: float = Field(description="Total price in euros")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def find_flights(
    origin: Annotated[str, Field(description="IATA code", min_length=3, max_length=3)],
    destination: Annotated[str, Field(description="IATA code", min_length=3, max_length=3)],
    departs: date,
    cabin: Literal["economy", "business"] = "economy",
) -> Itinerary:
    """Find flights between two airports on a date."""
    if origin == destination:
        raise ToolError("origin and destination must differ")
    flight = Flight(
        number="MK101", origin=origin, destination=destination, departs=departs, cabin=cabin
    )
    return Itinerary(flights=[flight], total_eur=199.0 if cabin == "economy" else 899.0)


@server.tool()
def count_words(text: str) -> int:
    """Count the words of a text (an int result is wrapped as {"result": n})."""
    return len(text.split())


if __name__ == "__main__":
    server.run()
