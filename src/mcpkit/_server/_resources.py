"""Resources and resource templates: registration, reading, content conversion."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import (
    InvalidParams,
    MCPError,
    ProtocolError,
    ResourceNotFound,
)
from ..types._metakeys import check_meta
from ._depends import with_dependencies
from ._func import FuncInfo
from ._uritemplate import UriTemplate
from ._util import dumps_text, is_base_model, is_mcp_model, jsonable, make_caller, name_of, to_wire

if TYPE_CHECKING:
    from ._callface import CallContext
    from ._registry import Registry


def not_found(uri: str) -> ResourceNotFound:
    """The error for an unknown URI (the URI is echoed in ``data``, as the spec shows)."""
    return ResourceNotFound(uri)


def _describe(
    d: dict[str, Any],
    *,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    annotations: Any,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
) -> dict[str, Any]:
    if title is not None:
        d["title"] = title
    if description is not None:
        d["description"] = description
    if mime_type is not None:
        d["mimeType"] = mime_type
    if size is not None:
        d["size"] = size
    if annotations is not None:
        d["annotations"] = dict(to_wire(annotations))
    if icons:
        d["icons"] = [to_wire(i) for i in icons]
    if meta is not None:
        check_meta(meta, f"{d.get('name') or d.get('uri') or d.get('uriTemplate')}")
        d["_meta"] = dict(meta)
    return d


class ResourceDef:
    """A static resource: a fixed URI served by a function (or a fixed value)."""

    __slots__ = ("_call", "_value", "context_param", "definition", "mime_type", "uri")

    def __init__(
        self,
        uri: str,
        fn: Callable[..., Any] | None,
        info: FuncInfo | None,
        value: Any,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.uri = uri
        self.mime_type = mime_type
        self.context_param = info.context_param if info else None
        if fn is not None:
            if info is not None and info.required:
                raise TypeError(
                    f"resource {uri!r}: a static resource's function takes no arguments "
                    f"(it has {', '.join(info.required)}); use a URI template like 'scheme://x/{{id}}'"
                )
            # ``inline``: a sync function run on the event loop, its author's choice.
            self._call: Callable[[dict[str, Any]], Any] | None = with_dependencies(
                make_caller(fn, inline=inline), info.dependencies if info else None
            )
        else:
            self._call = None
        self._value = value
        self.definition = _describe(
            {"uri": uri, "name": name},
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )

    async def read(self, ctx: CallContext | None) -> list[dict[str, Any]]:
        if self._call is None:
            value = self._value
        else:
            kwargs: dict[str, Any] = {}
            if self.context_param is not None:
                kwargs[self.context_param] = ctx
            value = await self._call(kwargs)
        return contents_of(value, self.uri, self.mime_type)


class TemplateDef:
    """A resource template: a URI pattern whose variables become the function's arguments."""

    __slots__ = ("_call", "context_param", "definition", "info", "matcher", "mime_type", "template")

    def __init__(
        self,
        template: str,
        fn: Callable[..., Any],
        info: FuncInfo,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.template = template
        self.matcher = compile_template(template)
        self.info = info
        self.mime_type = mime_type
        self.context_param = info.context_param
        variables = set(self.matcher.variables)
        missing = [p for p in info.required if p not in variables]
        if missing:
            raise TypeError(
                f"resource template {template!r}: parameters {missing} of the function are not "
                f"variables of the template ({sorted(variables)})"
            )
        unknown = [v for v in variables if v not in info.params]
        if unknown and not _takes_kwargs(fn):
            raise TypeError(
                f"resource template {template!r}: variables {sorted(unknown)} have no parameter in the function"
            )
        self._call = with_dependencies(make_caller(fn, inline=inline), info.dependencies)
        self.definition = _describe(
            {"uriTemplate": template, "name": name},
            title=title,
            description=description,
            mime_type=mime_type,
            size=None,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )

    def match(self, uri: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.matcher.match(uri)
        return found

    async def read(
        self, uri: str, variables: dict[str, Any], ctx: CallContext | None
    ) -> list[dict[str, Any]]:
        args = {k: v for k, v in variables.items() if k in self.info.params}
        kwargs, problems = self.info.validate(args)
        if problems:
            raise InvalidParams(
                message=f"Invalid URI {uri!r} for template {self.template!r}: "
                + "; ".join(problems)
            )
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        value = await self._call(kwargs)
        return contents_of(value, uri, self.mime_type)


def _takes_kwargs(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False


def contents_of(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """Turn what a resource function returned into ``contents`` entries.

    ``str`` is text, ``bytes`` a base64 blob, models/dicts/lists JSON text; resource
    contents objects pass through (one or a list).
    """
    if isinstance(value, str):
        return [_with_mime({"uri": uri, "text": value}, mime_type or "text/plain")]
    if isinstance(value, (bytes, bytearray, memoryview)):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [_with_mime({"uri": uri, "blob": blob}, mime_type or "application/octet-stream")]
    if is_mcp_model(value):
        wire = value.to_wire()
        if "contents" in wire and isinstance(wire["contents"], list):
            return list(wire["contents"])
        if "text" in wire or "blob" in wire:
            return [wire]
    if isinstance(value, (list, tuple)) and value and all(_is_contents(v) for v in value):
        return [to_wire(v) for v in value]
    if isinstance(value, dict) and "uri" in value and ("text" in value or "blob" in value):
        return [value]
    if (
        isinstance(value, (dict, list, tuple, int, float, bool))
        or value is None
        or is_base_model(value)
    ):
        return [
            _with_mime(
                {"uri": uri, "text": dumps_text(jsonable(value))}, mime_type or "application/json"
            )
        ]
    return [_with_mime({"uri": uri, "text": str(value)}, mime_type or "text/plain")]


def _with_mime(d: dict[str, Any], mime: str) -> dict[str, Any]:
    d["mimeType"] = mime
    return d


def _is_contents(v: Any) -> bool:
    if is_mcp_model(v):
        return hasattr(v, "uri") and (hasattr(v, "text") or hasattr(v, "blob"))
    return isinstance(v, dict) and "uri" in v and ("text" in v or "blob" in v)


# ---------------------------------------------------------------------------- templates


def compile_template(template: str) -> UriTemplate:
    """A matcher for ``template`` (RFC 6570): ``.variables`` and ``.match(uri)``."""
    try:
        return UriTemplate(template)
    except ValueError as e:
        raise ValueError(f"invalid URI template {template!r}: {e}") from None


def read_error(uri: str, exc: BaseException) -> ProtocolError:
    """The JSON-RPC error for a resource function that raised."""
    if isinstance(exc, ProtocolError):
        return exc
    if isinstance(exc, MCPError):
        return ProtocolError(message=f"Error reading resource {uri}: {exc}")
    return ProtocolError(message=f"Error reading resource {uri}")


def register_resource(
    registry: Registry,
    describe: Callable[[Callable[..., Any]], FuncInfo],
    uri: str,
    source: Any,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    annotations: Any,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
    inline: bool = False,
) -> None:
    """Enter a resource (content or function) or a template (a URI with ``{...}``) in
    ``registry``; ``describe`` reads a function's signature and docstring; ``inline``: its
    sync function runs on the event loop (refused for content)."""
    if "{" in uri:
        if not callable(source):
            raise TypeError(f"resource template {uri!r} needs a function to produce each resource")
        if uri in registry.templates:
            raise ValueError(f"a resource template {uri!r} is already registered")
        tinfo = describe(source)
        registry.templates[uri] = TemplateDef(
            uri,
            source,
            tinfo,
            name=name or name_of(source),
            title=title,
            description=description if description is not None else tinfo.description,
            mime_type=mime_type,
            annotations=annotations,
            icons=icons,
            meta=meta,
            inline=inline,
        )
    else:
        if uri in registry.resources:
            raise ValueError(f"a resource {uri!r} is already registered")
        if callable(source):
            fn: Callable[..., Any] | None = source
            info: FuncInfo | None = describe(source)
            doc = info.description if info is not None else None
            default_name = name or name_of(source)
            value = None
        else:
            if not isinstance(source, (str, bytes)):
                raise TypeError(
                    "a static resource's content must be str or bytes (or pass a function)"
                )
            if inline:
                raise TypeError(f"resource {uri!r}: inline=True is for a function, not content")
            fn, info, doc, default_name, value = None, None, None, uri, source
            if size is None:
                size = len(source.encode() if isinstance(source, str) else source)
        registry.resources[uri] = ResourceDef(
            uri,
            fn,
            info,
            value,
            name=name or default_name,
            title=title,
            description=description if description is not None else doc,
            mime_type=mime_type,
            size=size,
            annotations=annotations,
            icons=icons,
            meta=meta,
            inline=inline,
        )
