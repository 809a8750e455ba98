"""The problems of a call's arguments, one readable line each, and the check of the
arguments a ``**kwargs`` parameter receives: what :mod:`._schema`'s validation reports.

Validation problems are one line each, named by argument path (``person.address.zip``,
``items[2]``); the failed branches of a union are merged into one line, because pydantic's
per-branch locations (``u.int``, ``u.str``) read like field names. Unknown arguments are one
line for them all, naming the accepted ones (what a model needs to fix a misspelling).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..types._jsonschema import unknown_arguments_line as unknown_arguments_line
from ._schemagen import json_schema

_EMPTY = inspect.Parameter.empty


class ArgumentError(ValueError):
    """The arguments of a call do not fit the function's signature.

    ``problems`` holds one readable line per problem, e.g.
    ``"`count`: Input should be a valid integer, got 'abc'"`` or
    ``"missing required argument `name`"``; ``str(error)`` joins them with newlines, ready to be
    shown to a model so that it can correct itself.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _format_one(loc: tuple[Any, ...], err: Mapping[str, Any]) -> str:
    path = _path(loc)
    kind = err.get("type")
    if kind == "missing":
        if len(loc) == 1:
            return f"missing required argument `{path}`"
        return f"`{_path(loc[:-1])}`: missing required field `{loc[-1]}`"
    if kind == "extra_forbidden":
        return f"`{path}`: unexpected field" if len(loc) > 1 else f"unexpected argument `{path}`"
    msg = err.get("msg", "invalid value")
    if not path:
        return f"{msg}, got {short_repr(err.get('input'))}"
    return f"`{path}`: {msg}, got {short_repr(err.get('input'))}"


_SHOULD = "Input should be "


def format_errors(errors: list[Any], union_params: frozenset[str]) -> list[str]:
    """One line per problem; the branches of a failed union become one line, not one each.

    pydantic reports a value that fits no member of ``int | str`` as two errors located at
    ``u.int`` and ``u.str``; a model reading those would look for fields named ``int``.
    """
    groups: list[tuple[tuple[Any, ...], list[Mapping[str, Any]]]] = []
    union_groups: dict[tuple[Any, ...], int] = {}
    for err in errors:
        loc: tuple[Any, ...] = tuple(err.get("loc") or ())
        if len(loc) >= 2 and loc[0] in union_params and isinstance(loc[1], str):
            loc = (loc[0], *loc[2:])
            at = union_groups.get(loc)
            if at is not None:
                groups[at][1].append(err)
                continue
            union_groups[loc] = len(groups)
        groups.append((loc, [err]))
    lines: list[str] = []
    for loc, errs in groups:
        if len(errs) == 1:
            lines.append(_format_one(loc, errs[0]))
            continue
        messages = list(dict.fromkeys(str(e.get("msg", "invalid value")) for e in errs))
        if all(m.startswith(_SHOULD) for m in messages):
            text = _SHOULD + " or ".join(m[len(_SHOULD) :] for m in messages)
        else:
            text = "; or ".join(messages)
        lines.append(f"`{_path(loc)}`: {text}, got {short_repr(errs[0].get('input'))}")
    return lines


def extras_of(
    annotation: Any, strict_refs: bool, what: str
) -> tuple[dict[str, Any] | None, Callable[[dict[str, Any]], dict[str, Any]] | None]:
    """The schema of the values a ``**kwargs: T`` receives, and the check of them (both
    None for no annotation, ``Any`` or ``object``: extras then arrive unchecked)."""
    if annotation is _EMPTY or annotation is Any or annotation is object:
        return None, None
    from pydantic import TypeAdapter, ValidationError

    try:
        adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, annotation])
        schema = json_schema(adapter, mode="validation", strict_refs=strict_refs)
    except Exception as exc:  # pydantic raises several kinds for annotations it cannot handle
        raise TypeError(f"cannot build a schema for the **kwargs of {what}: {exc}") from exc
    if "$defs" in schema:
        raise TypeError(f"{what}: annotate **kwargs with a type needing no $defs, or Any")
    validate = adapter.validate_python

    def check(extras: dict[str, Any]) -> dict[str, Any]:
        try:
            return validate(extras)
        except ValidationError as exc:
            raise ArgumentError(format_errors(exc.errors(include_url=False), frozenset())) from None

    return schema.get("additionalProperties", True), check
