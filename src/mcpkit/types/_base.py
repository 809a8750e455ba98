"""Foundations shared by every protocol type: the base model, ids, params and results.

The model modules of this package do not use ``from __future__ import annotations``:
with real annotations pydantic has no strings to evaluate, which keeps import time down
(every server imports these types at startup). Classes are defined before use.
"""

import inspect
from typing import Any, ClassVar, Literal, TypeAlias, get_origin

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, StrictInt, StrictStr
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
    "ResultType",
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
#: How a client reads a result (2026-07-28): ``"complete"`` for a final answer,
#: ``"input_required"`` for an :class:`~mcpkit.types.InputRequiredResult`. A result without
#: it (every earlier revision) counts as ``"complete"``.
ResultType: TypeAlias = str


class MCPModel(BaseModel):
    """Base of every protocol object.

    * Python names are snake_case; the wire names (camelCase, ``_meta``) are aliases and
      both are accepted when constructing.
    * Unknown members are kept (``extra="allow"``), so a message survives a round trip
      even when it carries fields this version does not know.
    * :meth:`to_wire` gives the JSON-ready dict: aliases, no unset members, and constant
      discriminators (``type``, ``method``, ``jsonrpc``) always present. Passing ``None``
      for an optional member when constructing means "absent"; a ``null`` read off the
      wire is kept, so what was read is written back unchanged.
    """

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        defer_build=True,
        protected_namespaces=(),
    )

    #: Fields with a constant default (filled per class); always serialized.
    _mcp_const: ClassVar[frozenset[str]] = frozenset()
    #: Names and aliases of optional fields whose ``None`` means "absent" (per class).
    _mcp_drop_none: ClassVar[frozenset[str]] = frozenset()
    #: Optional fields whose explicit ``None`` is meaningful and must be kept.
    _mcp_keep_none: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Runs before pydantic looks for a post-init hook, so only the classes declaring
        # a constant (content blocks, requests, ...) get one: validating the many models
        # without constants stays free of Python-level calls.
        for name, annotation in inspect.get_annotations(cls).items():
            origin: Any = get_origin(annotation)
            if origin is Literal and getattr(cls, name, None) is not None:
                cls.model_post_init = _mark_constants_set  # type: ignore[method-assign,assignment]
                break

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        const: set[str] = set()
        drop_none: set[str] = set()
        for name, field in cls.model_fields.items():
            default = field.default
            if default is None:
                if field.annotation is not Any and name not in cls._mcp_keep_none:
                    drop_none.update((name, field.alias or name))
            elif default is not PydanticUndefined and get_origin(field.annotation) is Literal:
                const.add(name)
        cls._mcp_const = frozenset(const)
        cls._mcp_drop_none = frozenset(drop_none)

    def __init__(self, /, **data: Any) -> None:
        drop = type(self)._mcp_drop_none
        if drop:
            for key in [k for k, v in data.items() if v is None and k in drop]:
                del data[key]
        super().__init__(**data)

    # Python construction only: pydantic's marker keeps validation (model_validate and
    # nested values) from routing every instance through this method.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def to_wire(self) -> dict[str, Any]:
        """The wire form: a dict with aliases, without unset or ``None`` optional members."""
        return self.model_dump(by_alias=True, exclude_unset=True)

    def to_json(self) -> str:
        """The wire form serialized as compact JSON text."""
        return self.model_dump_json(by_alias=True, exclude_unset=True)


def _mark_constants_set(self: MCPModel, context: Any, /) -> None:
    """Post-init hook of models with constants: count them as set, so ``to_wire`` (which
    leaves out unset members) always writes them, also when they were defaulted."""
    self.__pydantic_fields_set__.update(type(self)._mcp_const)


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
    """Params every request may carry (just ``_meta``).

    2026-07-28 requires ``_meta`` (protocol version and client capabilities ride in it, see
    :class:`~mcpkit.types.RequestMetaObject`, which may be given here); earlier revisions
    leave it optional, and so does this model.
    """

    meta: SerializeAsAny[RequestMeta] | None = Field(default=None, alias="_meta")


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
    """Base of every result: ``_meta`` plus whatever members the method defines.

    ``result_type`` (``resultType``) is required by 2026-07-28 and unknown before it; it
    stays optional here so that results of every revision validate and round-trip.
    """

    meta: Meta | None = Field(default=None, alias="_meta")
    result_type: ResultType | None = Field(default=None, alias="resultType")


#: A result that only says "done" (ping, logging/setLevel, subscribe, unsubscribe).
EmptyResult: TypeAlias = Result


class PaginatedResult(Result):
    """Base of list results: may carry the cursor of the next page."""

    next_cursor: Cursor | None = Field(default=None, alias="nextCursor")


class _CacheHints(MCPModel):
    """Caching hints of the results 2026-07-28 makes cacheable (``ttlMs``, ``cacheScope``).

    Required there (see :class:`~mcpkit.types.CacheableResult`), absent before: optional on
    the shared list and read results, so that results of every revision validate.
    """

    ttl_ms: int | None = Field(default=None, alias="ttlMs", ge=0)
    cache_scope: Literal["private", "public"] | None = Field(default=None, alias="cacheScope")


class _RequestBase(MCPModel):
    """The JSON-RPC envelope of a concrete request (``jsonrpc`` and ``id``)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId


class _NotificationBase(MCPModel):
    """The JSON-RPC envelope of a concrete notification (``jsonrpc``)."""

    jsonrpc: Literal["2.0"] = "2.0"


class _InputRequestBase(MCPModel):
    """The envelope of a request the server puts to the client (sampling, roots, elicitation).

    Up to 2025-11-25 it travels as a JSON-RPC request (``jsonrpc`` and ``id``); from
    2026-07-28 it is carried bare, method and params only, inside an
    ``InputRequiredResult``. Both members are optional so either shape validates and
    round-trips; constructing one with an ``id`` writes ``jsonrpc`` as well.
    """

    jsonrpc: Literal["2.0"] | None = None
    id: RequestId | None = None

    def __init__(self, /, **data: Any) -> None:
        if data.get("id") is not None and data.get("jsonrpc") is None:
            data["jsonrpc"] = "2.0"
        super().__init__(**data)

    # Python construction only, as for MCPModel.__init__.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
