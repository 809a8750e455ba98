"""Tool descriptions: what ``tools/list`` returns about a tool (schemas, hints).

Kept apart from :mod:`._tools` (calling tools) because sampling offers tools to the model
too, while a tool call may carry sampling answers (``inputResponses``, 2026-07-28): this
way neither module imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from ._base import BaseMetadata, Icons, MCPModel, Meta

__all__ = [
    "ObjectSchema",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "ToolSchema",
]


class ToolSchema(dict[str, Any]):
    """A JSON Schema document as a tool carries it (its ``outputSchema``): a plain ``dict``.

    Being a ``dict``, it goes to ``json.dumps``, to an LLM API's tool list or to a validator
    as it is, exactly as it was read: nothing is filled in, every keyword is kept.
    2026-07-28 allows any JSON Schema 2020-12 document here (an array, a composition without
    ``type``, ...); 2025-11-25 required an object schema. The keywords earlier revisions
    named read as attributes too (``schema.properties``; ``dialect`` is ``$schema``), and
    keyword arguments build one: ``ToolSchema(type="array", items={"type": "string"})``.
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        /,
        *,
        dialect: str | None = None,
        **keywords: Any,
    ) -> None:
        super().__init__(schema or {}, **keywords)
        if dialect is not None:
            self["$schema"] = dialect

    @property
    def dialect(self) -> str | None:
        """``$schema``: the JSON Schema dialect the document declares, if any."""
        return self.get("$schema")

    @property
    def type(self) -> str | list[str] | None:
        """The ``type`` keyword, if present."""
        return self.get("type")

    @property
    def properties(self) -> dict[str, Any] | None:
        """The ``properties`` keyword, if present."""
        return self.get("properties")

    @property
    def required(self) -> list[str] | None:
        """The ``required`` keyword, if present."""
        return self.get("required")

    def to_wire(self) -> dict[str, Any]:
        """A plain ``dict`` copy (the name every model of :mod:`mcpkit.types` answers to)."""
        return dict(self)

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """A plain ``dict`` copy; kept for code written when this class was a pydantic model."""
        return dict(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @classmethod
    def _checked(cls, value: dict[str, Any]) -> ToolSchema:
        return cls(value)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # Validated as a dict of any JSON values, then wrapped: read and written unchanged.
        return core_schema.no_info_after_validator_function(
            cls._checked,
            core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()),
        )


class ObjectSchema(ToolSchema):
    """A JSON Schema describing an object (a tool's input; its output up to 2025-11-25).

    A plain ``dict`` like :class:`ToolSchema`; ``type`` is always ``"object"``, added when
    left out (another ``type`` is refused).
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        /,
        *,
        dialect: str | None = None,
        **keywords: Any,
    ) -> None:
        super().__init__(schema, dialect=dialect, **keywords)
        self.setdefault("type", "object")
        if self["type"] != "object":
            raise ValueError(f"an object schema has type 'object', not {self['type']!r}")


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
