"""JSON Schemas of Python types, as MCP clients are given them.

:mod:`._schema` turns a function's parameters and return annotation into types; this module
turns types into the schemas that go on the wire. It runs at registration only.

Schema choices, and why:

* No ``$ref``/``$defs`` in emitted schemas by default: several MCP clients (and the models
  behind them) do not resolve references. Every definition is inlined (:func:`inline_refs`),
  except recursive ones, which cannot be: those stay in a top-level ``$defs`` and are
  referenced from there. ``strict_refs=True`` keeps pydantic's ``$defs`` layout untouched.
* No auto-generated ``title`` on properties (pydantic derives ``"Count"`` from ``count``; it
  carries no information and costs tokens). Titles of models, dataclasses and enums stay.
* A return annotation gives an ``outputSchema`` only when it describes structured data
  (:func:`output_schema`); text and content blocks stay unstructured.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

from typing_extensions import is_typeddict

__all__ = [
    "UNION_TYPES",
    "inline_refs",
    "json_schema",
    "output_schema",
    "strip_annotated",
]

_EMPTY = inspect.Parameter.empty

#: ``Union[a, b]`` and ``a | b`` have different origins.
UNION_TYPES: tuple[Any, ...] = (typing.Union, types.UnionType)


def strip_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(type, metadata)`` of ``Annotated[type, *metadata]``; ``(tp, ())`` for anything else."""
    if get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        return args[0], tuple(args[1:])
    return tp, ()


# --------------------------------------------------------------------------- pydantic


@functools.cache
def _no_field_titles() -> type[Any]:
    """pydantic's schema generator without the ``title`` it derives from every field name."""
    from pydantic.json_schema import GenerateJsonSchema

    class NoFieldTitles(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return NoFieldTitles


def json_schema(
    adapter_or_model: Any, *, mode: Literal["validation", "serialization"], strict_refs: bool
) -> dict[str, Any]:
    """The JSON Schema of a pydantic model class or ``TypeAdapter``, by alias, field titles left
    out, ``$ref`` inlined unless ``strict_refs``."""
    from pydantic import TypeAdapter
    from pydantic.json_schema import PydanticJsonSchemaWarning

    generator = _no_field_titles()
    with warnings.catch_warnings():
        # A default that is not JSON-serialisable is simply left out of the schema.
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        if isinstance(adapter_or_model, TypeAdapter):
            schema = adapter_or_model.json_schema(
                by_alias=True, mode=mode, schema_generator=generator
            )
        else:
            schema = adapter_or_model.model_json_schema(
                by_alias=True, mode=mode, schema_generator=generator
            )
    return schema if strict_refs else inline_refs(schema)


# --------------------------------------------------------------------------- $ref inlining


_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples", "required"})
_NAME_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_DEFS_PREFIX = "#/$defs/"


def _unescape_pointer(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _local_ref(node: dict[str, Any]) -> str | None:
    """The definition name a ``{"$ref": "#/$defs/..."}`` node points at, else None."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        return _unescape_pointer(ref[len(_DEFS_PREFIX) :])
    return None


def _refs_in(node: Any, out: set[str]) -> None:
    """Add to ``out`` the definitions that ``node`` references (data keywords are not looked in)."""
    if isinstance(node, dict):
        name = _local_ref(node)
        if name is not None:
            out.add(name)
        for key, value in node.items():
            if key in _DATA_KEYWORDS or key == "discriminator":
                continue
            if key in _NAME_MAP_KEYWORDS and isinstance(value, dict):
                for sub in value.values():
                    _refs_in(sub, out)
            else:
                _refs_in(value, out)
    elif isinstance(node, list):
        for item in node:
            _refs_in(item, out)


def _discriminator(value: dict[str, Any], kept: set[str]) -> dict[str, Any]:
    """An OpenAPI ``discriminator`` whose ``mapping`` would point at inlined definitions.

    The mapping is only a hint (``oneOf`` plus the ``const`` tags say the same), so it is
    dropped rather than left dangling.
    """
    mapping = value.get("mapping")
    out = {k: v for k, v in value.items() if k != "mapping"}
    if isinstance(mapping, dict) and all(
        isinstance(t, str)
        and t.startswith(_DEFS_PREFIX)
        and _unescape_pointer(t[len(_DEFS_PREFIX) :]) in kept
        for t in mapping.values()
    ):
        out["mapping"] = mapping
    return out


def _recursive_defs(defs: dict[str, Any]) -> set[str]:
    """The definitions that reach themselves through their references: they cannot be inlined."""
    direct: dict[str, set[str]] = {}
    for name, body in defs.items():
        found: set[str] = set()
        _refs_in(body, found)
        direct[name] = found
    recursive: set[str] = set()
    for name in defs:
        seen: set[str] = set()
        todo = list(direct.get(name, ()))
        while todo:
            cur = todo.pop()
            if cur == name:
                recursive.add(name)
                break
            if cur in seen:
                continue
            seen.add(cur)
            todo.extend(direct.get(cur, ()))
    return recursive


class _Inliner:
    """Replaces references to the non-recursive definitions of ``defs`` by their bodies."""

    def __init__(self, defs: dict[str, Any], recursive: set[str]) -> None:
        self.defs = defs
        self.recursive = recursive

    def resolve(self, node: Any, expanding: tuple[str, ...]) -> Any:
        """A copy of ``node`` with references inlined; ``expanding`` guards against cycles."""
        if isinstance(node, dict):
            name = _local_ref(node)
            if (
                name is not None
                and name in self.defs
                and name not in self.recursive
                and name not in expanding
            ):
                return self._expand(node, name, expanding)
            return self._resolve_keys(node, expanding)
        if isinstance(node, list):
            return [self.resolve(item, expanding) for item in node]
        return node

    def _expand(self, node: dict[str, Any], name: str, expanding: tuple[str, ...]) -> Any:
        # The keywords beside the $ref (a field's description, default) win over the body's.
        target = self.resolve(self.defs[name], (*expanding, name))
        merged = dict(target) if isinstance(target, dict) else {}
        for key, value in node.items():
            if key != "$ref":
                merged[key] = value if key in _DATA_KEYWORDS else self.resolve(value, expanding)
        return merged

    def _resolve_keys(self, node: dict[str, Any], expanding: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key in _DATA_KEYWORDS:
                out[key] = value
            elif key == "discriminator" and isinstance(value, dict):
                out[key] = _discriminator(value, self.recursive)
            elif key in _NAME_MAP_KEYWORDS and isinstance(value, dict):
                out[key] = {k: self.resolve(v, expanding) for k, v in value.items()}
            else:
                out[key] = self.resolve(value, expanding)
        return out

    def kept_defs(self, result: dict[str, Any]) -> dict[str, Any]:
        """The recursive definitions ``result`` still references, in their original order."""
        used: set[str] = set()
        _refs_in(result, used)
        # A kept definition may itself reference other kept ones.
        todo = [n for n in used if n in self.recursive]
        keep: dict[str, Any] = {}
        while todo:
            name = todo.pop()
            if name in keep:
                continue
            keep[name] = self.resolve(self.defs[name], ())
            more: set[str] = set()
            _refs_in(keep[name], more)
            todo.extend(n for n in more if n in self.recursive and n not in keep)
        return {name: keep[name] for name in self.defs if name in keep}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` with every ``#/$defs/...`` reference replaced by its definition.

    Definitions that are part of a cycle (recursive models) cannot be inlined; they are kept
    in a top-level ``$defs`` and still referenced. Keywords next to a ``$ref`` (a field's
    ``description`` or ``default``) are merged over the inlined definition. Data keywords
    (``default``, ``enum``, ``const``, ``examples``) are never mistaken for schemas.

    >>> inline_refs({"$defs": {"A": {"type": "integer"}},
    ...              "properties": {"a": {"$ref": "#/$defs/A", "default": 1}}})
    {'properties': {'a': {'type': 'integer', 'default': 1}}}
    """
    defs = schema.get("$defs")
    if not isinstance(defs, dict) or not defs:
        return schema
    inliner = _Inliner(defs, _recursive_defs(defs))
    result: dict[str, Any] = inliner.resolve(schema, ())
    if inliner.recursive:
        keep = inliner.kept_defs(result)
        if keep:
            result["$defs"] = keep
    return result


# --------------------------------------------------------------------------- output


#: Return annotations that mean "content only", decided without importing the content types.
_PLAIN_RETURNS: tuple[Any, ...] = (_EMPTY, None, type(None), Any, str, object)


@functools.cache
def _content_block_types() -> tuple[type, ...]:
    """Return types that are content, not structured output (a full result included)."""
    try:
        from mcpkit.types._content import (
            AudioContent,
            EmbeddedResource,
            ImageContent,
            ResourceLink,
            TextContent,
        )
        from mcpkit.types._tools import CallToolResult
    except ImportError:  # pragma: no cover - the types package is always there in releases
        return ()
    return (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, CallToolResult)


def _is_unstructured(tp: Any, blocks: tuple[type, ...]) -> bool:
    """True for return types that map to content, not structured output."""
    tp, _ = strip_annotated(tp)
    if tp is _EMPTY or tp is None or tp is type(None) or tp is Any or tp is str or tp is object:
        return True
    origin = get_origin(tp)
    if origin in UNION_TYPES:
        return all(_is_unstructured(a, blocks) for a in get_args(tp))
    if isinstance(tp, type) and blocks and issubclass(tp, blocks):
        return True
    if origin in (list, tuple, Sequence):
        args = [a for a in get_args(tp) if a is not Ellipsis]
        return bool(args) and all(
            _is_unstructured(a, blocks) and strip_annotated(a)[0] is not str for a in args
        )
    return False


def _is_object_type(tp: Any) -> bool:
    tp, _ = strip_annotated(tp)
    if isinstance(tp, type) and (
        _is_model_class(tp) or dataclasses.is_dataclass(tp) or is_typeddict(tp)
    ):
        return True
    if tp is dict:
        return True
    origin = get_origin(tp)
    if origin in (dict, Mapping, typing.Mapping) or (
        origin is not None and isinstance(origin, type) and issubclass(origin, Mapping)
    ):
        args = get_args(tp)
        return not args or strip_annotated(args[0])[0] is str
    return is_typeddict(get_origin(tp)) if origin is not None else False


def _is_model_class(tp: type) -> bool:
    main = sys.modules.get("pydantic.main")  # no pydantic imported: no model classes exist
    return main is not None and issubclass(tp, main.BaseModel)


def output_schema(ret: Any, *, strict_refs: bool) -> tuple[dict[str, Any] | None, bool]:
    """``(outputSchema, wrap)`` for the return annotation ``ret``; ``(None, False)`` when a
    result of that type is content, not structured output (rules: ``output_schema_for``)."""
    if ret in _PLAIN_RETURNS or _is_unstructured(ret, _content_block_types()):
        return None, False
    from pydantic import TypeAdapter

    try:
        inner = json_schema(TypeAdapter(ret), mode="serialization", strict_refs=strict_refs)
    except Exception as exc:
        if getattr(exc, "code", None) == "typed-dict-version":
            # Before Python 3.12 pydantic cannot read a typing.TypedDict: dropping the
            # structured output without a word cost users hours; say what to change.
            raise TypeError(
                f"return type {ret!r}: typing.TypedDict cannot describe structured output "
                "before Python 3.12; use typing_extensions.TypedDict"
            ) from exc
        # A return type pydantic cannot describe: no structured output, content only.
        return None, False
    if _is_object_type(ret) and inner.get("type") == "object":
        return inner, False
    wrapped: dict[str, Any] = {"type": "object", "properties": {}, "required": ["result"]}
    defs = inner.pop("$defs", None)
    wrapped["properties"]["result"] = inner
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True
