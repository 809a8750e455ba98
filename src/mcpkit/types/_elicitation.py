"""Elicitation: the server asks the user for input, by a form or by sending them to a URL."""

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from ._base import MCPModel, NotificationParams, Result, _InputRequestBase, _NotificationBase
from ._tasks import TaskAugmentedRequestParams

__all__ = [
    "BooleanSchema",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams",
    "EnumSchema",
    "LegacyTitledEnumSchema",
    "MultiSelectEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "RequestedSchema",
    "SingleSelectEnumSchema",
    "StringSchema",
    "TitledEnumItems",
    "TitledEnumOption",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
]


class StringSchema(MCPModel):
    """A free-text form field, optionally length-limited or of a known format."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = Field(default=None, alias="minLength")
    max_length: int | None = Field(default=None, alias="maxLength")
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(MCPModel):
    """A numeric form field (``number`` or ``integer``), optionally bounded."""

    type: Literal["number", "integer"] = "number"
    title: str | None = None
    description: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(MCPModel):
    """A yes/no form field."""

    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class UntitledSingleSelectEnumSchema(MCPModel):
    """Pick one of several strings, shown as they are."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledEnumOption(MCPModel):
    """One choice of a titled enum: the value sent back and the label shown."""

    const: str
    title: str


class TitledSingleSelectEnumSchema(MCPModel):
    """Pick one of several values, each shown with its own label."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    one_of: list[TitledEnumOption] = Field(alias="oneOf")
    default: str | None = None


class UntitledEnumItems(MCPModel):
    """Item schema of an untitled multi-select: the allowed strings."""

    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(MCPModel):
    """Pick any number of several strings, shown as they are."""

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = Field(default=None, alias="minItems")
    max_items: int | None = Field(default=None, alias="maxItems")
    items: UntitledEnumItems
    default: list[str] | None = None


class TitledEnumItems(MCPModel):
    """Item schema of a titled multi-select: the allowed values with labels."""

    any_of: list[TitledEnumOption] = Field(alias="anyOf")


class TitledMultiSelectEnumSchema(MCPModel):
    """Pick any number of several values, each shown with its own label."""

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = Field(default=None, alias="minItems")
    max_items: int | None = Field(default=None, alias="maxItems")
    items: TitledEnumItems
    default: list[str] | None = None


class LegacyTitledEnumSchema(MCPModel):
    """Single select with labels in the non-standard ``enumNames`` (deprecated shape)."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    enum_names: list[str] | None = Field(default=None, alias="enumNames")
    default: str | None = None


_TAG_BY_CLASS: dict[type, str] = {
    StringSchema: "string",
    NumberSchema: "number",
    BooleanSchema: "boolean",
    UntitledSingleSelectEnumSchema: "untitled-single",
    TitledSingleSelectEnumSchema: "titled-single",
    UntitledMultiSelectEnumSchema: "untitled-multi",
    TitledMultiSelectEnumSchema: "titled-multi",
    LegacyTitledEnumSchema: "legacy",
}


def _field_schema_tag(value: Any) -> str | None:
    """Tell the form-field schema shapes apart (they share ``type`` values)."""
    if not isinstance(value, dict):
        return _TAG_BY_CLASS.get(type(value))
    kind = value.get("type")
    if kind == "string":
        if "oneOf" in value or "one_of" in value:
            return "titled-single"
        if "enum" in value:
            if "enumNames" in value or "enum_names" in value:
                return "legacy"
            return "untitled-single"
        return "string"
    if kind == "array":
        items = value.get("items")
        if isinstance(items, dict) and ("anyOf" in items or "any_of" in items):
            return "titled-multi"
        if isinstance(items, TitledEnumItems):
            return "titled-multi"
        return "untitled-multi"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    return None


_FieldSchemaTag = Discriminator(_field_schema_tag)

#: A single-select enum field, with or without labels.
SingleSelectEnumSchema: TypeAlias = Annotated[
    Annotated[UntitledSingleSelectEnumSchema, Tag("untitled-single")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("titled-single")],
    _FieldSchemaTag,
]

#: A multi-select enum field, with or without labels.
MultiSelectEnumSchema: TypeAlias = Annotated[
    Annotated[UntitledMultiSelectEnumSchema, Tag("untitled-multi")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("titled-multi")],
    _FieldSchemaTag,
]

#: Any enum field shape (single, multi, legacy).
EnumSchema: TypeAlias = Annotated[
    Annotated[UntitledSingleSelectEnumSchema, Tag("untitled-single")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("titled-single")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("untitled-multi")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("titled-multi")]
    | Annotated[LegacyTitledEnumSchema, Tag("legacy")],
    _FieldSchemaTag,
]

#: A form field: the flat, primitive-only subset of JSON Schema elicitation allows.
PrimitiveSchemaDefinition: TypeAlias = Annotated[
    Annotated[StringSchema, Tag("string")]
    | Annotated[NumberSchema, Tag("number")]
    | Annotated[BooleanSchema, Tag("boolean")]
    | Annotated[UntitledSingleSelectEnumSchema, Tag("untitled-single")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("titled-single")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("untitled-multi")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("titled-multi")]
    | Annotated[LegacyTitledEnumSchema, Tag("legacy")],
    _FieldSchemaTag,
]


class RequestedSchema(MCPModel):
    """The form of a form-mode elicitation: an object of flat, primitive fields."""

    dialect: str | None = Field(default=None, alias="$schema")
    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None


class ElicitRequestFormParams(TaskAugmentedRequestParams):
    """Params of a form-mode ``elicitation/create``: a message and the form to fill in.

    For non-sensitive data only; ``mode`` may be omitted (form is the default).
    """

    mode: Literal["form"] | None = None
    message: str
    requested_schema: RequestedSchema = Field(alias="requestedSchema")


class ElicitRequestURLParams(TaskAugmentedRequestParams):
    """Params of a URL-mode ``elicitation/create``: send the user to a URL, out of band.

    ``elicitationId`` is required in 2025-11-25 and removed in 2026-07-28 (the client
    learns the outcome by retrying the request): ``elicitation_id`` is ``""`` when the
    message has none, and is then left out of the wire form.
    """

    mode: Literal["url"] = "url"
    message: str
    elicitation_id: str = Field(default="", alias="elicitationId")
    url: str


def _elicit_mode_tag(value: Any) -> str:
    mode = value.get("mode") if isinstance(value, dict) else getattr(value, "mode", None)
    return "url" if mode == "url" else "form"


#: Params of ``elicitation/create``: URL mode when ``mode == "url"``, form mode otherwise.
ElicitRequestParams: TypeAlias = Annotated[
    Annotated[ElicitRequestURLParams, Tag("url")] | Annotated[ElicitRequestFormParams, Tag("form")],
    Discriminator(_elicit_mode_tag),
]


class ElicitRequest(_InputRequestBase):
    """Asks the client to get information from the user (by form or by URL).

    A JSON-RPC request up to 2025-11-25; from 2026-07-28 an entry of
    ``InputRequiredResult.inputRequests`` without ``jsonrpc`` and ``id``.
    """

    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestParams


class ElicitResult(Result):
    """Answer to ``elicitation/create``: what the user did and, for an accepted form, the data."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


class ElicitationCompleteNotificationParams(NotificationParams):
    """Params of ``notifications/elicitation/complete``: which URL elicitation finished."""

    elicitation_id: str = Field(alias="elicitationId")


class ElicitationCompleteNotification(_NotificationBase):
    """Tells the client that a URL-mode elicitation was completed out of band."""

    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams
