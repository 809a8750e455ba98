"""The checks of the schema-coverage tests, for any revision of ``MODEL_REVISIONS``: every
definition has a model (objects) or an alias (unions, maps, scalars) in ``mcpkit.types``.

One model serves every revision that defines its definition, so a property is required
only when each of those revisions requires it, and a union lists the members of all of
them.
"""

from __future__ import annotations

import typing
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from tests.types._spec import (
    MODEL_REVISIONS,
    definitions,
    object_properties,
    required_in_every_revision,
    resolve,
    union_refs,
)

import mcpkit.types as t


def object_definitions(rev: str) -> list[str]:
    """Definitions with properties of their own (sender unions emitted as a copy of their
    only member are unions, not objects)."""
    return sorted(
        n
        for n, d in definitions(rev).items()
        if object_properties(rev, d) is not None and union_refs(rev, n) is None
    )


def other_definitions(rev: str) -> list[str]:
    return sorted(set(definitions(rev)) - set(object_definitions(rev)))


def wire_fields(model: type[BaseModel]) -> dict[str, str]:
    """wire name -> field name."""
    return {(f.alias or name): name for name, f in model.model_fields.items()}


def leaves(tp: Any) -> list[Any]:
    """The members of a (possibly Annotated, nested) union type."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return leaves(get_args(tp)[0])
    if origin is Union or type(tp).__name__ == "UnionType":
        return [leaf for arg in get_args(tp) for leaf in leaves(arg)]
    return [tp]


def check_exported(name: str) -> None:
    assert hasattr(t, name), f"mcpkit.types has no {name}"
    assert name in t.__all__


def check_object_fields(rev: str, name: str) -> None:
    """Every property is a field under its wire name; required exactly when every modelled
    revision requires it (or a constant that is always written)."""
    model = getattr(t, name)
    assert isinstance(model, type) and issubclass(model, BaseModel), name
    props, _ = object_properties(rev, definitions(rev)[name]) or ({}, set())
    wire = wire_fields(model)
    missing = sorted(set(props) - set(wire))
    assert not missing, f"{name} lacks fields for {missing}"
    for prop in sorted(props):
        field = model.model_fields[wire[prop]]
        if required_in_every_revision(name, prop):
            # A constant with a default (type/method/jsonrpc) is always serialized.
            always_sent = wire[prop] in model._mcp_const
            assert field.is_required() or always_sent, f"{name}.{prop} must be required"
        else:
            assert not field.is_required(), f"{name}.{prop} must be optional"


def check_constants_and_enums(rev: str, name: str) -> None:
    """``const`` properties default to the constant; ``enum`` ones are Literals of it."""
    model = getattr(t, name)
    props, _ = object_properties(rev, definitions(rev)[name]) or ({}, set())
    wire = wire_fields(model)
    for prop, node in props.items():
        node = resolve(rev, node)
        field = model.model_fields[wire[prop]]
        if "const" in node:
            # Constants every revision requires default to their value; optional ones
            # (ElicitRequestFormParams.mode, the jsonrpc of an input request) stay absent
            # unless given, so a message round-trips unchanged.
            required = required_in_every_revision(name, prop)
            defaults = (node["const"],) if required else (None, node["const"])
            assert field.default in defaults, f"{name}.{prop}"
            literals = [v for leaf in leaves(field.annotation) for v in get_args(leaf)]
            assert node["const"] in literals, f"{name}.{prop}"
        elif "enum" in node:
            literals = [
                v
                for leaf in leaves(field.annotation)
                if get_origin(leaf) is Literal
                for v in get_args(leaf)
            ]
            assert sorted(literals) == sorted(node["enum"]), f"{name}.{prop}"


def check_alias(rev: str, name: str) -> None:
    """Unions hold the members this revision lists, and only members some modelled
    revision lists; ``X = Y`` definitions are the same object; the rest are type aliases."""
    alias = getattr(t, name)
    refs = union_refs(rev, name)
    if refs is None:
        assert not (isinstance(alias, type) and issubclass(alias, BaseModel)), name
        return
    if len(refs) == 1 and alias is getattr(t, next(iter(refs))):
        return  # EmptyResult: Result
    members = {leaf.__name__ for leaf in leaves(alias)}
    everywhere: set[str] = set()
    for other in MODEL_REVISIONS:
        if name in definitions(other):
            everywhere |= union_refs(other, name) or set()
    assert refs <= members, f"{name} lacks {sorted(refs - members)}"
    assert members <= everywhere, f"{name} has {sorted(members - everywhere)}"


def check_own_docstrings() -> None:
    for name in t.__all__:
        obj = getattr(t, name)
        if isinstance(obj, type):
            assert (obj.__dict__.get("__doc__") or "").strip(), f"{name} has no docstring"
