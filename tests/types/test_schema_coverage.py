"""Every definition of the 2025-11-25 schema has a model (or alias) in ``mcpkit.types``."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel
from tests.types._spec import SCHEMA_DIR, definitions, method_map, resolve

import mcpkit.types as t

#: The schema folder this test reads (``/work/shared/spec/schema`` in the workspace).
SCHEMA_PATH = SCHEMA_DIR
REV = "2025-11-25"
DEFS = definitions(REV)


def _object_properties(node: dict[str, Any]) -> tuple[dict[str, Any], set[str]] | None:
    """(properties, required) of an object definition, following ``allOf``; None otherwise."""
    if "allOf" in node:
        props: dict[str, Any] = {}
        required: set[str] = set()
        for part in node["allOf"]:
            sub = _object_properties(resolve(REV, part))
            if sub is None:
                return None
            props.update(sub[0])
            required |= sub[1]
        return props, required
    if node.get("type") == "object" and "properties" in node:
        return node["properties"], set(node.get("required", []))
    return None


OBJECT_DEFS = sorted(n for n, d in DEFS.items() if _object_properties(d) is not None)
OTHER_DEFS = sorted(set(DEFS) - set(OBJECT_DEFS))


def _wire_fields(model: type[BaseModel]) -> dict[str, str]:
    """wire name -> field name."""
    return {(f.alias or name): name for name, f in model.model_fields.items()}


def _leaves(tp: Any) -> list[Any]:
    """The members of a (possibly Annotated, nested) union type."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _leaves(get_args(tp)[0])
    if origin is Union or type(tp).__name__ == "UnionType":
        return [leaf for arg in get_args(tp) for leaf in _leaves(arg)]
    return [tp]


def test_schema_file_is_the_expected_one() -> None:
    assert (SCHEMA_PATH / f"{REV}.json").is_file()
    assert len(DEFS) > 100


@pytest.mark.parametrize("name", sorted(DEFS))
def test_definition_is_exported(name: str) -> None:
    assert hasattr(t, name), f"mcpkit.types has no {name}"
    assert name in t.__all__


@pytest.mark.parametrize("name", OBJECT_DEFS)
def test_object_definition_fields(name: str) -> None:
    model = getattr(t, name)
    assert isinstance(model, type) and issubclass(model, BaseModel), name
    props, required = _object_properties(DEFS[name]) or ({}, set())
    wire = _wire_fields(model)
    missing = sorted(set(props) - set(wire))
    assert not missing, f"{name} lacks fields for {missing}"
    for prop in sorted(required):
        field = model.model_fields[wire[prop]]
        # A constant with a default (type/method/jsonrpc) is always serialized.
        always_sent = wire[prop] in model._mcp_const
        assert field.is_required() or always_sent, f"{name}.{prop} must be required"
    for prop in sorted(set(props) - required):
        assert not model.model_fields[wire[prop]].is_required(), f"{name}.{prop} is optional"


@pytest.mark.parametrize("name", OBJECT_DEFS)
def test_constants_and_enums(name: str) -> None:
    """``const`` properties default to the constant; ``enum`` ones are Literals of it."""
    model = getattr(t, name)
    props, required = _object_properties(DEFS[name]) or ({}, set())
    wire = _wire_fields(model)
    for prop, node in props.items():
        node = resolve(REV, node)
        field = model.model_fields[wire[prop]]
        if "const" in node:
            # Required constants default to their value; optional ones (ElicitRequestFormParams.mode)
            # stay absent unless given, so a message round-trips unchanged.
            defaults = (node["const"],) if prop in required else (None,)
            assert field.default in defaults, f"{name}.{prop}"
            literals = [v for leaf in _leaves(field.annotation) for v in get_args(leaf)]
            assert node["const"] in literals, f"{name}.{prop}"
        elif "enum" in node:
            literals = [
                v
                for leaf in _leaves(field.annotation)
                if get_origin(leaf) is Literal
                for v in get_args(leaf)
            ]
            assert sorted(literals) == sorted(node["enum"]), f"{name}.{prop}"


def _union_refs(node: dict[str, Any]) -> set[str] | None:
    branches = node.get("anyOf") or node.get("oneOf")
    if not branches or not all("$ref" in b for b in branches):
        return None
    return {b["$ref"].rsplit("/", 1)[-1] for b in branches}


@pytest.mark.parametrize("name", OTHER_DEFS)
def test_alias_definitions(name: str) -> None:
    """Unions list the same members as the schema; the rest are typing aliases."""
    alias = getattr(t, name)
    refs = _union_refs(DEFS[name])
    if refs is not None:
        members = {leaf.__name__ for leaf in _leaves(alias)}
        # "Result" stands for any result; JSONRPCResponse is a union in the schema too.
        assert members == refs, name
    elif "$ref" in DEFS[name]:  # EmptyResult: Result
        assert alias is getattr(t, DEFS[name]["$ref"].rsplit("/", 1)[-1])
    else:
        assert not (isinstance(alias, type) and issubclass(alias, BaseModel)), name


def test_every_model_has_its_own_docstring() -> None:
    for name in t.__all__:
        obj = getattr(t, name)
        if isinstance(obj, type):
            assert (obj.__dict__.get("__doc__") or "").strip(), f"{name} has no docstring"


def test_method_registries_match_the_schema() -> None:
    mapping = method_map(REV)
    registry = {**t.REQUEST_TYPES, **t.NOTIFICATION_TYPES}
    assert {m: cls.__name__ for m, cls in registry.items()} == mapping
    for method, cls in t.REQUEST_TYPES.items():
        expected = cls.__name__.removesuffix("Request") + "Result"
        result = t.RESULT_TYPES[method]
        assert result.__name__ == (expected if expected in DEFS else "Result"), method
    assert set(t.RESULT_TYPES) == set(t.REQUEST_TYPES)
    assert not set(t.REQUEST_TYPES) & set(t.NOTIFICATION_TYPES)


def test_import_reads_no_files_and_stays_light() -> None:
    """Importing mcpkit.types opens no JSON/schema file and does not pull in jsonschema."""
    code = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda ev, args: opened.append(str(args[0])) "
        "if ev == 'open' and str(args[0]).endswith('.json') else None)\n"
        "import mcpkit.types\n"
        "assert not opened, opened\n"
        "assert 'jsonschema' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
