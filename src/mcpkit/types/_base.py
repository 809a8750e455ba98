"""Foundations shared by every protocol type: the base model, ids, params and results."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias, get_origin

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic_core import PydanticUndefined

__all__ = [
    "Annotations",
    "BaseMetadata",
    "Cursor",
    "EmptyResult",
    "Icon",
    "Icons",
    "MCPModel",
    "Meta",
    "Notification",
    "NotificationParams",
    "PaginatedRequest",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressToken",
    "Request",
    "RequestId",
    "RequestMeta",
    "RequestParams",
    "Result",
    "Role",
]

#: A JSON-RPC request id: a string or an integer (never null, never a float).
RequestId: TypeAlias = StrictStr | StrictInt
#: A token tying ``notifications/progress`` to the request that asked for them.
ProgressToken: TypeAlias = StrictStr | StrictInt
#: An opaque pagination position.
Cursor: TypeAlias = str
#: Who speaks in a conversation.
Role: TypeAlias = Literal["user", "assistant"]
#: The free-form ``_meta`` object.
Meta: TypeAlias = dict[str, Any]


class MCPModel(BaseModel):
    """Base of every protocol object.

    * Python names are snake_case; the wire names (camelCase, ``_meta``) are aliases and
      both are accepted when constructing.
    * Unknown members are kept (``extra="allow"``), so a message survives a round trip
      even when it carries fields this version does not know.
    * :meth:`to_wire` gives the JSON-ready dict: aliases, no unset members, no ``None``
      for optional members, and constant discriminators (``type``, ``method``,
      ``jsonrpc``) always present.
    """

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        defer_build=True,
        protected_namespaces=(),
    )

    # Filled per class by __pydantic_init_subclass__; read by model_post_init.
    _mcp_const: ClassVar[frozenset[str]] = frozenset()
    _mcp_optional: ClassVar[frozenset[str]] = frozenset()
    #: Optional members whose explicit ``None`` is meaningful and must be kept.
    _mcp_keep_none: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        const: set[str] = set()
        optional: set[str] = set()
        for name, field in cls.model_fields.items():
            default = field.default
            if default is PydanticUndefined:
                continue
            if default is None:
                if field.annotation is not Any and name not in cls._mcp_keep_none:
                    optional.add(name)
            elif get_origin(field.annotation) is Literal:
                const.add(name)
        cls._mcp_const = frozenset(const)
        cls._mcp_optional = frozenset(optional)

    def model_post_init(self, context: Any, /) -> None:
        cls = type(self)
        fields_set = self.__pydantic_fields_set__
        if cls._mcp_const:
            # Discriminators count as set, so exclude_unset keeps them.
            fields_set.update(cls._mcp_const)
        if cls._mcp_optional:
            values = self.__dict__
            for name in cls._mcp_optional.intersection(fields_set):
                if values[name] is None:
                    # An explicit None for an optional member means "absent".
                    fields_set.discard(name)

    def to_wire(self) -> dict[str, Any]:
        """The wire form: a dict with aliases, without unset or ``None`` optional members."""
        return self.model_dump(by_alias=True, exclude_unset=True)

    def to_json(self) -> str:
        """The wire form serialized as compact JSON text."""
        return self.model_dump_json(by_alias=True, exclude_unset=True)


class Annotations(MCPModel):
    """Hints for the client about who an object is for, how important it is and when it changed."""

    audience: list[Role] | None = None
    priority: int | float | None = Field(default=None, ge=0, le=1)
    last_modified: str | None = Field(default=None, alias="lastModified")


class Icon(MCPModel):
    """An icon (URL or ``data:`` URI) a user interface may show, optionally sized and themed."""

    src: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class Icons(MCPModel):
    """Mixin for objects that may carry a list of icons."""

    icons: list[Icon] | None = None


class BaseMetadata(MCPModel):
    """Mixin giving an object a programmatic ``name`` and an optional display ``title``."""

    name: str
    title: str | None = None


class RequestMeta(MCPModel):
    """The ``_meta`` of request params: a progress token plus any extension keys."""

    progress_token: ProgressToken | None = Field(default=None, alias="progressToken")


class RequestParams(MCPModel):
    """Params every request may carry (just ``_meta``)."""

    meta: RequestMeta | None = Field(default=None, alias="_meta")


class PaginatedRequestParams(RequestParams):
    """Params of a list request: an optional cursor to continue from."""

    cursor: Cursor | None = None


class NotificationParams(MCPModel):
    """Params every notification may carry (just ``_meta``)."""

    meta: Meta | None = Field(default=None, alias="_meta")


class Request(MCPModel):
    """A request without the JSON-RPC envelope: a method and optional params."""

    method: str
    params: dict[str, Any] | None = None


class Notification(MCPModel):
    """A notification without the JSON-RPC envelope: a method and optional params."""

    method: str
    params: dict[str, Any] | None = None


class PaginatedRequest(MCPModel):
    """Any list request, with the JSON-RPC envelope and pagination params."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: PaginatedRequestParams | None = None


class Result(MCPModel):
    """Base of every result: ``_meta`` plus whatever members the method defines."""

    meta: Meta | None = Field(default=None, alias="_meta")


#: A result that only says "done" (ping, logging/setLevel, subscribe, unsubscribe).
EmptyResult: TypeAlias = Result


class PaginatedResult(Result):
    """Base of list results: may carry the cursor of the next page."""

    next_cursor: Cursor | None = Field(default=None, alias="nextCursor")


class _RequestBase(MCPModel):
    """The JSON-RPC envelope of a concrete request (``jsonrpc`` and ``id``)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId


class _NotificationBase(MCPModel):
    """The JSON-RPC envelope of a concrete notification (``jsonrpc``)."""

    jsonrpc: Literal["2.0"] = "2.0"
