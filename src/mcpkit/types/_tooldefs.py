"""Tool descriptions: what ``tools/list`` returns about a tool (schemas, hints).

Kept apart from :mod:`._tools` (calling tools) because sampling offers tools to the model
too, while a tool call may carry sampling answers (``inputResponses``, 2026-07-28): this
way neither module imports the other.
"""

from typing import Any, Literal

from pydantic import Field

from ._base import BaseMetadata, Icons, MCPModel, Meta

__all__ = [
    "ObjectSchema",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "ToolSchema",
]


class ToolSchema(MCPModel):
    """A JSON Schema document as a tool carries it (its ``outputSchema``).

    2026-07-28 allows any JSON Schema 2020-12 document here (an array, a composition
    without ``type``, ...); 2025-11-25 required an object schema. Only ``$schema`` and the
    keywords earlier revisions named are fields; every other keyword is kept as an extra
    member, and nothing is filled in, so a schema round-trips unchanged.
    """

    dialect: str | None = Field(default=None, alias="$schema")
    type: str | list[str] | None = None
    properties: dict[str, Any] | None = None
    required: list[str] | None = None


class ObjectSchema(ToolSchema):
    """A JSON Schema describing an object (a tool's input; its output up to 2025-11-25).

    ``type`` is always ``"object"`` and written even when left out. Only the top-level
    keywords MCP names are fields; every other JSON Schema keyword is kept as an extra member.
    """

    type: Literal["object"] = "object"


class ToolAnnotations(MCPModel):
    """Hints about a tool's behaviour (read-only, destructive, idempotent, open-world).

    They are hints only: a client must not trust them from an untrusted server.
    """

    title: str | None = None
    read_only_hint: bool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: bool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: bool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: bool | None = Field(default=None, alias="openWorldHint")


class ToolExecution(MCPModel):
    """How a tool may be executed: whether it supports being run as a task (2025-11-25)."""

    task_support: Literal["forbidden", "optional", "required"] | None = Field(
        default=None, alias="taskSupport"
    )


class Tool(BaseMetadata, Icons):
    """A tool the server offers: name, description, input (and output) schema, hints.

    ``output_schema`` accepts any JSON Schema document (2026-07-28); an
    :class:`ObjectSchema` (the 2025-11-25 shape) is one.
    """

    description: str | None = None
    input_schema: ObjectSchema = Field(alias="inputSchema")
    output_schema: ToolSchema | None = Field(default=None, alias="outputSchema")
    execution: ToolExecution | None = None
    annotations: ToolAnnotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")
