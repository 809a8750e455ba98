"""OpenAPI 3.0/3.1 documents read into the operations a server offers (``Server.from_openapi``).

This module only reads: it loads the document, turns each operation into an
:class:`Operation` (its arguments, input and output schemas, description) and picks what it
becomes by the route maps. Calling the API is :mod:`mcpkit._server._openapi_http`'s work.

Every problem of the document is a ``ValueError`` naming the operation and what is wrong
(a ``$ref`` cycle, an unknown type, a parameter without a name): the author of the server
reads it at startup, not a model at call time.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from ._openapi_auth import requirement
from ._tools import TOOL_NAME_RE

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: Where parameters are, in the order their names are taken (see :func:`_arguments`).
LOCATIONS = ("path", "query", "header", "cookie")
_JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
#: Keywords whose value is one schema, a map of schemas, a list of schemas.
_ONE: tuple[str, ...] = ("items", "additionalProperties", "not", "contains", "propertyNames")
_ONE += ("if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "additionalItems")
_MAP = ("properties", "patternProperties", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
#: Deeper than this, a schema is taken for hostile (a real one is a few levels deep).
_MAX_DEPTH = 64
#: The name of the tool function's Context parameter: no argument may take it.
CONTEXT_ARG = "mcpkit_context__"

Kind = Literal["tool", "resource", "template", "exclude"]


@dataclass(frozen=True)
class RouteMap:
    """Which operations of an OpenAPI document become tools, resources, resource templates,
    or nothing (``Server.from_openapi(route_maps=...)``).

    An operation matches when its method is among ``methods`` (None: any), ``pattern`` (a
    regular expression) is found in its path template (None: any path), and it carries
    every tag of ``tags``. The first matching map decides; when none matches, a GET without
    parameters becomes a resource, a GET whose parameters are all path parameters a
    resource template, and every other operation a tool.

    Example::

        RouteMap("tool", methods=["GET"], pattern=r"^/search")   # a GET kept as a tool
        RouteMap("exclude", tags=["admin"])                       # not offered at all
    """

    kind: Kind
    methods: Sequence[str] | None = None
    pattern: str | None = None
    tags: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("tool", "resource", "template", "exclude"):
            raise ValueError(
                f"RouteMap kind must be tool, resource, template or exclude, not {self.kind!r}"
            )
        if isinstance(self.methods, str) or isinstance(self.tags, str):
            raise TypeError("RouteMap methods and tags are lists, not one string")
        if self.pattern is not None:
            re.compile(self.pattern)  # a bad expression fails here, not at the first match

    def matches(self, op: Operation) -> bool:
        """Whether this map applies to ``op``."""
        if self.methods is not None and op.method not in {m.upper() for m in self.methods}:
            return False
        if self.pattern is not None and not re.search(self.pattern, op.path):
            return False
        return all(t in op.tags for t in self.tags)


@dataclass(frozen=True)
class Argument:
    """One argument of a tool and where its value goes in the request."""

    name: str
    #: ``path``, ``query``, ``header``, ``cookie``, ``field`` (a property of a JSON or form
    #: body) or ``body`` (the whole body).
    location: str
    #: Its name in the request (a parameter's or a body property's; "" for the whole body).
    wire: str
    #: OpenAPI's ``style``/``explode`` for a query parameter (form, exploded, by default).
    explode: bool = True
    style: str = "form"
    #: A multipart body's file (``format: binary``): sent as a file part, not a field.
    binary: bool = False


@dataclass
class Operation:
    """One operation of the document, ready to be offered."""

    name: str
    method: str
    path: str
    tags: tuple[str, ...]
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    arguments: tuple[Argument, ...]
    #: The request body's media type (None: no body).
    body_type: str | None = None
    #: The 2xx JSON response's schema when it is an object (else answers are text).
    output_schema: dict[str, Any] | None = None
    #: The media type of the 2xx response, if the document says.
    response_type: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    #: Its security alternatives, each a tuple of scheme names (None: no requirement);
    #: see :mod:`mcpkit._server._openapi_auth`.
    security: tuple[tuple[str, ...], ...] | None = None

    def by_location(self, location: str) -> list[Argument]:
        """The arguments going to ``location``."""
        return [a for a in self.arguments if a.location == location]


# ---------------------------------------------------------------------- loading


def httpx2_module() -> Any:
    """The httpx2 module, or an ImportError naming the extra that brings it."""
    try:
        import httpx2
    except ImportError:
        raise ImportError(
            "Server.from_openapi and Server.from_fastapi call the API with httpx2: "
            "pip install 'mcpkit[all]' (or httpx2 alone)"
        ) from None
    return httpx2


def load_document(document: Any, *, timeout: float = 30.0) -> dict[str, Any]:
    """The document as a dict: ``document`` itself (a mapping, copied), or read from a path
    or an ``http(s)://`` URL (JSON; YAML through PyYAML); checked to be OpenAPI 3.0/3.1."""
    try:
        if isinstance(document, Mapping):
            doc: Any = copy.deepcopy(dict(document))
        elif isinstance(document, (str, Path)):
            doc = _parse(_read_text(str(document), timeout), str(document))
        else:
            raise TypeError(
                f"an OpenAPI document is a dict, a path or a URL, not {type(document).__name__}"
            )
    except RecursionError:  # a hostile document: nested deeper than Python recurses
        raise ValueError("the OpenAPI document is nested too deeply") from None
    if not isinstance(doc, dict):
        raise ValueError("an OpenAPI document must be a JSON object at its top")
    version = doc.get("openapi")
    if not isinstance(version, str) or not re.match(r"3\.[01]\.", version + "."):
        raise ValueError(
            f"not an OpenAPI 3.0 or 3.1 document (its 'openapi' field is {version!r}; "
            "Swagger 2.0 documents must be converted first)"
        )
    if not isinstance(doc.get("paths", {}), dict):
        raise ValueError("the document's 'paths' must be an object")
    return doc


def _read_text(where: str, timeout: float) -> str:
    if re.match(r"https?://", where):
        return _fetch(where, timeout)
    return Path(where).read_text(encoding="utf-8")


def _fetch(url: str, timeout: float) -> str:
    """The document at ``url``, fetched (synchronously: the server is being built) within
    ``timeout`` seconds in all: httpx2's timeout bounds each read, the deadline the whole
    exchange, so an API dripping its document a byte at a time cannot hold the build."""
    httpx2 = httpx2_module()
    deadline = time.monotonic() + timeout
    late = ValueError(f"cannot fetch the OpenAPI document {url}: not read within {timeout:g} s")
    try:
        with httpx2.stream("GET", url, timeout=timeout, follow_redirects=True) as answer:
            if answer.status_code != 200:
                raise ValueError(
                    f"cannot fetch the OpenAPI document {url}: HTTP {answer.status_code}"
                )
            body = bytearray()
            for chunk in answer.iter_bytes():
                body += chunk
                if time.monotonic() > deadline:
                    raise late
            return body.decode(answer.encoding or "utf-8", errors="replace")
    except httpx2.TimeoutException:
        raise late from None
    except httpx2.HTTPError as e:
        raise ValueError(f"cannot fetch the OpenAPI document {url}: {e}") from None


def _parse(text: str, where: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        json_error = e
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a core dependency today
        raise ValueError(
            f"{where} is not JSON ({json_error}), and PyYAML is not installed"
        ) from None
    try:
        # The safe loader builds plain data only; dates stay strings, as JSON has them.
        return yaml.load(text, Loader=_loader(yaml))
    except yaml.YAMLError as e:
        raise ValueError(f"{where} is neither JSON nor YAML: {e}") from None


def _loader(yaml: Any) -> Any:
    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    Loader.add_constructor(
        "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
    )
    return Loader


# ---------------------------------------------------------------------- schemas


class SchemaConverter:
    """Turns the document's schemas into self-contained JSON Schema (2020-12): every local
    ``$ref`` points into the schema's own ``$defs`` (recursive schemas stay recursive),
    OpenAPI 3.0's ``nullable`` and boolean exclusive bounds are rewritten.

    One converter per schema built, so each carries only the definitions it uses."""

    def __init__(self, doc: dict[str, Any], where: str) -> None:
        self.doc = doc
        self.where = where
        self.defs: dict[str, Any] = {}
        self._keys: dict[str, str] = {}

    def lookup(self, ref: Any) -> Any:
        """What ``ref`` points at, following refs that are only a ref (a cycle of those
        is an error: nothing is ever reached)."""
        seen: list[str] = []
        target: Any = {"$ref": ref}
        while isinstance(target, dict) and set(target) == {"$ref"}:
            ref = target["$ref"]
            if ref in seen:
                raise ValueError(f"{self.where}: a $ref cycle: {' -> '.join([*seen, ref])}")
            seen.append(ref)
            target = self._pointer(ref)
        return target

    def _pointer(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise ValueError(
                f"{self.where}: only local references ('#/...') are supported, not {ref!r}"
            )
        node: Any = self.doc
        for raw in ref[2:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ValueError(f"{self.where}: $ref {ref!r} points at nothing")
        return node

    def convert(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        """``schema`` as JSON Schema, its refs into :attr:`defs`."""
        if depth > _MAX_DEPTH:
            raise ValueError(f"{self.where}: a schema nested more than {_MAX_DEPTH} levels deep")
        if schema is True or schema is False:
            return schema  # type: ignore[return-value]  # boolean schemas pass through
        if not isinstance(schema, dict):
            raise ValueError(f"{self.where}: a schema must be an object, not {schema!r:.80}")
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "$ref":
                out[key] = self._ref(value, depth)
            elif key in _ONE and isinstance(value, (dict, bool)):
                out[key] = self.convert(value, depth + 1)
            elif key in _MAP and isinstance(value, dict):
                out[key] = {k: self.convert(v, depth + 1) for k, v in value.items()}
            elif key in _LIST or (key == "items" and isinstance(value, list)):
                if not isinstance(value, list):
                    raise ValueError(f"{self.where}: {key!r} must be a list of schemas")
                out[key] = [self.convert(v, depth + 1) for v in value]
            elif key == "type":
                out[key] = self._type(value)
            elif key in ("nullable", "discriminator", "xml", "externalDocs", "example"):
                continue  # OpenAPI's own keywords: nullable is applied below, the rest are docs
            else:
                out[key] = copy.deepcopy(value)
        _bounds_30(out, schema)
        if schema.get("nullable") is True:
            return _nullable(out)
        return out

    def _type(self, value: Any) -> Any:
        types = value if isinstance(value, list) else [value]
        bad = [t for t in types if not isinstance(t, str) or t not in _JSON_TYPES]
        if bad or not types:
            raise ValueError(
                f"{self.where}: unknown schema type {value!r} "
                f"(one of {', '.join(sorted(_JSON_TYPES))}, or a list of them)"
            )
        return copy.deepcopy(value)

    def _ref(self, ref: Any, depth: int) -> str:
        target = self.lookup(ref)  # checks the chain: a cycle of bare refs fails here
        key = self._keys.get(ref)
        if key is None:
            base = re.sub(r"[^A-Za-z0-9_.-]", "_", str(ref).rsplit("/", 1)[-1]) or "def"
            key = base
            n = 2
            while key in self.defs:
                key, n = f"{base}_{n}", n + 1
            self._keys[ref] = key
            self.defs[key] = {}  # taken before converting: a recursive schema refers to itself
            self.defs[key] = self.convert(target, depth + 1)
        return f"#/$defs/{key}"

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` with the definitions it uses attached."""
        if self.defs:
            schema = {**schema, "$defs": dict(self.defs)}
        return schema


def _bounds_30(out: dict[str, Any], schema: dict[str, Any]) -> None:
    """OpenAPI 3.0's ``exclusiveMinimum: true`` beside ``minimum`` is 2020-12's number form."""
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = schema.get(flag)
        if isinstance(value, bool):
            del out[flag]
            if value and bound in out:
                out[flag] = out.pop(bound)


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, str):
        return {**out, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**out, "type": [*kind, "null"] if "null" not in kind else kind}
    return {"anyOf": [out, {"type": "null"}]}


# ---------------------------------------------------------------------- operations


def operations(doc: dict[str, Any]) -> list[Operation]:
    """Every operation of ``doc``, in document order, with unique valid tool names."""
    found: list[Operation] = []
    names: dict[str, str] = {}
    for path, item in doc.get("paths", {}).items():
        if not isinstance(item, dict):
            raise ValueError(f"path {path!r}: a path item must be an object")
        if "$ref" in item:
            item = SchemaConverter(doc, f"path {path!r}").lookup(item["$ref"])
        shared = item.get("parameters", [])
        for method in HTTP_METHODS:
            spec = item.get(method)
            if spec is None:
                continue
            where = f"{method.upper()} {path}"
            if not isinstance(spec, dict):
                raise ValueError(f"{where}: an operation must be an object")
            op = _operation(doc, path, method, spec, shared, where)
            if op.name in names:
                raise ValueError(
                    f"{where}: tool name {op.name!r} is already {names[op.name]}'s "
                    "(operationIds must be unique)"
                )
            names[op.name] = where
            found.append(op)
    return found


def tool_name(spec: dict[str, Any], method: str, path: str) -> str:
    """The operation's ``operationId``, made a valid tool name (characters outside
    ``A-Za-z0-9_.-`` become ``_``, at most 128); without one, ``<method>_<path>``
    (``GET /users/{id}``: ``get_users_id``)."""
    given = spec.get("operationId")
    if given is not None and not isinstance(given, str):
        raise ValueError(f"{method.upper()} {path}: operationId must be a string, not {given!r}")
    raw = given or f"{method}_{path}"
    if given:
        name = re.sub(r"[^A-Za-z0-9_.\-]+", "_", given)[:128]
    else:
        name = re.sub(r"[^A-Za-z0-9]+", "_", raw).strip("_")[:128]
    if not TOOL_NAME_RE.fullmatch(name):
        raise ValueError(f"{method.upper()} {path}: cannot make a tool name of {raw!r}")
    return name


def _operation(
    doc: dict[str, Any], path: str, method: str, spec: dict[str, Any], shared: Any, where: str
) -> Operation:
    name = tool_name(spec, method, path)
    where = f"{where} ({name})"
    conv = SchemaConverter(doc, where)
    params = _parameters(conv, path, shared, spec.get("parameters", []))
    arguments, properties, required = _arguments(conv, params)
    body_type = _body(conv, spec.get("requestBody"), arguments, properties, required)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    output, response_type = _output(doc, spec.get("responses"), where)
    summary, description = spec.get("summary"), spec.get("description")
    tags = spec.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"{where}: tags must be a list of strings")
    return Operation(
        name=name,
        method=method.upper(),
        path=path,
        tags=tuple(tags),
        title=summary if isinstance(summary, str) and description else None,
        description=_text(description) or _text(summary),
        input_schema=conv.finish(schema),
        arguments=tuple(arguments),
        body_type=body_type,
        output_schema=output,
        response_type=response_type,
        annotations=_annotations(method),
        security=requirement(doc, spec, where),
    )


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _annotations(method: str) -> dict[str, Any]:
    if method in ("get", "head", "options"):
        return {"readOnlyHint": True}
    if method in ("put", "delete"):
        return {"readOnlyHint": False, "idempotentHint": True}
    return {"readOnlyHint": False}


def _parameters(conv: SchemaConverter, path: str, shared: Any, own: Any) -> list[dict[str, Any]]:
    """The operation's parameters (those of its path item, replaced by its own of the same
    name and place), path parameters the template names but the document forgot added."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for group in (shared, own):
        if not isinstance(group, list):
            raise ValueError(f"{conv.where}: 'parameters' must be a list")
        for param in group:
            if isinstance(param, dict) and "$ref" in param:
                param = conv.lookup(param["$ref"])
            if not isinstance(param, dict):
                raise ValueError(f"{conv.where}: a parameter must be an object, not {param!r:.80}")
            pname, place = param.get("name"), param.get("in")
            if not isinstance(pname, str) or not pname:
                raise ValueError(f"{conv.where}: a parameter has no name")
            if place not in LOCATIONS:
                raise ValueError(
                    f"{conv.where}: parameter {pname!r} is 'in' {place!r}, not one of {', '.join(LOCATIONS)}"
                )
            merged[(place, pname if place != "header" else pname.lower())] = param
    for variable in re.findall(r"\{([^}]+)\}", path):
        if ("path", variable) not in merged:
            merged[("path", variable)] = {"name": variable, "in": "path", "required": True}
    return sorted(merged.values(), key=lambda p: LOCATIONS.index(p["in"]))


def _arguments(
    conv: SchemaConverter, params: list[dict[str, Any]]
) -> tuple[list[Argument], dict[str, Any], list[str]]:
    arguments: list[Argument] = []
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params:
        place, wire = param["in"], param["name"]
        arg_name = _free_name(wire, place, properties, conv.where)
        schema = param.get("schema")
        if schema is None:  # a parameter described by 'content' (rare): its one media type's
            content = param.get("content")
            media: Any = next(iter(content.values()), {}) if isinstance(content, dict) else {}
            schema = media.get("schema", {"type": "string"}) if isinstance(media, dict) else {}
        prop = conv.convert(schema)
        if isinstance(param.get("description"), str) and "description" not in prop:
            prop = {**prop, "description": param["description"]}
        properties[arg_name] = prop
        if place == "path" or param.get("required") is True:
            required.append(arg_name)
        style = param.get("style", "form")
        explode = param.get("explode", style == "form")
        arguments.append(Argument(arg_name, place, wire, explode=bool(explode), style=str(style)))
    return arguments, properties, required


def _free_name(wire: str, place: str, taken: Mapping[str, Any], where: str) -> str:
    """``wire``, or ``<wire>__<place>`` when an earlier argument has that name (see
    docs/server.md, "Servers from OpenAPI": path, query, header, cookie, then body)."""
    name = wire
    if name in taken or name == CONTEXT_ARG:
        name = f"{wire}__{place}"
    if name in taken or name == CONTEXT_ARG:
        raise ValueError(f"{where}: two arguments would be named {name!r}")
    return name


def _body(
    conv: SchemaConverter,
    body: Any,
    arguments: list[Argument],
    properties: dict[str, Any],
    required: list[str],
) -> str | None:
    """Add the request body's arguments: an object's properties one by one (JSON or form
    bodies), anything else as one ``body`` argument. Returns the body's media type."""
    if body is None:
        return None
    if isinstance(body, dict) and "$ref" in body:
        body = conv.lookup(body["$ref"])
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, dict) or not content:
        raise ValueError(f"{conv.where}: requestBody needs a 'content' object")
    media_type = _pick_media(list(content))
    media = content[media_type]
    schema = media.get("schema", {}) if isinstance(media, dict) else {}
    if schema == {} and not _is_json(media_type) and not _is_form(media_type):
        schema = {"type": "string"}
    body_required = body.get("required") is True
    target = (
        conv.lookup(schema["$ref"]) if isinstance(schema, dict) and "$ref" in schema else schema
    )
    fields = target.get("properties") if isinstance(target, dict) else None
    flat = (
        (_is_json(media_type) or _is_form(media_type))
        and isinstance(fields, dict)
        and target.get("type", "object") == "object"
        and not any(k in target for k in ("allOf", "anyOf", "oneOf", "$ref"))
    )
    if not flat:
        arg_name = _free_name("body", "body", properties, conv.where)
        properties[arg_name] = conv.convert(schema)
        arguments.append(Argument(arg_name, "body", ""))
        if body_required:
            required.append(arg_name)
        return media_type
    assert isinstance(target, dict) and isinstance(fields, dict)
    needed = target.get("required", []) if body_required else []
    for wire, sub in fields.items():
        arg_name = _free_name(wire, "body", properties, conv.where)
        properties[arg_name] = conv.convert(sub)
        shown = properties[arg_name]
        binary = shown.get("format") == "binary" or "contentMediaType" in shown
        arguments.append(Argument(arg_name, "field", wire, binary=binary))
        if isinstance(needed, list) and wire in needed:
            required.append(arg_name)
    return media_type


def _is_json(media_type: str) -> bool:
    base = media_type.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


def _is_form(media_type: str) -> bool:
    base = media_type.split(";")[0].strip().lower()
    return base in ("application/x-www-form-urlencoded", "multipart/form-data")


def _pick_media(types: list[str]) -> str:
    for test in (_is_json, _is_form):
        for media_type in types:
            if test(media_type):
                return media_type
    return types[0]


def _output(
    doc: dict[str, Any], responses: Any, where: str
) -> tuple[dict[str, Any] | None, str | None]:
    """The output schema of the first 2xx response (when it is a JSON object) and its
    media type."""
    if responses is None:
        return None, None
    if not isinstance(responses, dict):
        raise ValueError(f"{where}: 'responses' must be an object")
    conv = SchemaConverter(doc, where)
    for code in sorted(str(c) for c in responses):
        if not code.startswith("2"):
            continue
        response = responses.get(code, responses.get(int(code) if code.isdigit() else code))
        if isinstance(response, dict) and "$ref" in response:
            response = conv.lookup(response["$ref"])
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict) or not content:
            return None, None
        media_type = _pick_media(list(content))
        media = content[media_type]
        schema = media.get("schema") if isinstance(media, dict) else None
        if not _is_json(media_type) or not isinstance(schema, dict):
            return None, media_type
        target = conv.lookup(schema["$ref"]) if "$ref" in schema else schema
        if not isinstance(target, dict) or target.get("type") != "object" or target.get("nullable"):
            conv.convert(schema)  # still checked: a bad type is an error wherever it is
            return None, media_type
        return conv.finish(conv.convert(target)), media_type
    return None, None


def choose(op: Operation, route_maps: Sequence[RouteMap]) -> Kind:
    """What ``op`` becomes: the first matching map's kind, else the default rule."""
    for route in route_maps:
        if route.matches(op):
            return route.kind
    if op.method == "GET" and not op.arguments:
        return "resource"
    if op.method == "GET" and all(
        a.location == "path" and a.name == a.wire and a.name.isidentifier() for a in op.arguments
    ):
        return "template"
    return "tool"


def check_kind(op: Operation, kind: Kind) -> None:
    """Raise ``ValueError`` when ``op`` cannot be a ``kind`` (a route map asked for it)."""
    if kind == "resource" and op.arguments:
        raise ValueError(
            f"{op.method} {op.path} ({op.name}) cannot be a resource: it takes arguments "
            f"({', '.join(a.name for a in op.arguments)}); make it a template or a tool"
        )
    if kind == "template":
        bad = [
            a.name
            for a in op.arguments
            if a.location != "path" or a.name != a.wire or not a.name.isidentifier()
        ]
        if bad or not op.arguments:
            raise ValueError(
                f"{op.method} {op.path} ({op.name}) cannot be a resource template: "
                + (
                    f"arguments {bad} are not path parameters"
                    if bad
                    else "it has no path parameters"
                )
            )
