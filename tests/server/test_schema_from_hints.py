"""Tool and prompt signatures: type hints to JSON Schema, argument validation, output schemas."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
from collections.abc import Callable
from typing import Annotated, Any, Generic, Literal, Optional, TypeVar, Union

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import NotRequired, TypedDict

from mcpkit._server._schema import (
    ArgumentError,
    ArgumentInfo,
    build_signature,
    output_schema_for,
    parse_docstring,
    serialize_output,
)
from mcpkit._server._schemagen import inline_refs
from mcpkit.types._content import ImageContent, TextContent
from mcpkit.types._tools import CallToolResult

# --------------------------------------------------------------------------- fixtures


class Context:
    """Stands in for the server's Context class."""


class SubContext(Context):
    pass


T = TypeVar("T")


class GenericContext(Generic[T]):
    pass


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="street and number")
    zip_code: str = Field(alias="zipCode")


class Person(BaseModel):
    name: str
    address: Address
    favourite: Color = Color.RED


class Tree(BaseModel):
    value: int
    children: list[Tree] = []


class Holder(BaseModel):
    tree: Tree
    address: Address


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Loose(TypedDict, total=False):
    a: int
    b: str


def _walk(node: Any) -> list[Any]:
    out = [node]
    if isinstance(node, dict):
        for v in node.values():
            out.extend(_walk(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_walk(v))
    return out


def _has_ref(schema: Any) -> bool:
    return any(isinstance(n, dict) and ("$ref" in n or "$defs" in n) for n in _walk(schema))


# --------------------------------------------------------------------------- scalars


def test_scalars_exact_schema() -> None:
    def f(s: str, i: int, x: float, b: bool, n: None) -> None: ...

    sig = build_signature(f)
    assert sig.input_schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
            "n": {"type": "null"},
        },
        "required": ["s", "i", "x", "b", "n"],
    }
    assert sig.param_names == ("s", "i", "x", "b", "n")
    assert sig.context_param is None


def test_no_parameters() -> None:
    def f() -> None: ...

    assert build_signature(f).input_schema == {"type": "object", "properties": {}}
    assert build_signature(f).validate(None) == {}
    assert build_signature(f).validate({}) == {}


def test_defaults_are_not_required_and_emitted() -> None:
    def f(a: int, b: str = "x", c: float | None = None, d: bool = False) -> None: ...

    assert build_signature(f).input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"default": "x", "type": "string"},
            "c": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
            "d": {"default": False, "type": "boolean"},
        },
        "required": ["a"],
    }


def test_missing_annotation_is_any() -> None:
    def f(a, b=3):  # type: ignore[no-untyped-def]
        ...

    sig = build_signature(f)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"a": {}, "b": {"default": 3}},
        "required": ["a"],
    }
    assert sig.validate({"a": [1, {"x": None}]}) == {"a": [1, {"x": None}], "b": 3}


# --------------------------------------------------------------------------- containers


def test_collections() -> None:
    def f(
        a: list[int],
        b: tuple[int, str],
        c: tuple[int, ...],
        d: set[str],
        e: dict[str, float],
        g: list,  # type: ignore[type-arg]
        h: dict,  # type: ignore[type-arg]
    ) -> None: ...

    assert build_signature(f).input_schema["properties"] == {
        "a": {"items": {"type": "integer"}, "type": "array"},
        "b": {
            "maxItems": 2,
            "minItems": 2,
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "type": "array",
        },
        "c": {"items": {"type": "integer"}, "type": "array"},
        "d": {"items": {"type": "string"}, "type": "array", "uniqueItems": True},
        "e": {"additionalProperties": {"type": "number"}, "type": "object"},
        "g": {"items": {}, "type": "array"},
        "h": {"additionalProperties": True, "type": "object"},
    }


def test_optional_unions_literal_enums() -> None:
    def f(
        a: Optional[int],  # noqa: UP045 - typing.Optional on purpose
        b: Union[int, str],  # noqa: UP007 - typing.Union on purpose
        c: int | str | None,
        d: Literal["x", "y"],
        e: Literal[1, 2],
        color: Color,
        prio: Priority = Priority.HIGH,
    ) -> None: ...

    assert build_signature(f).input_schema == {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "c": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
            "d": {"enum": ["x", "y"], "type": "string"},
            "e": {"enum": [1, 2], "type": "integer"},
            "color": {"enum": ["red", "green"], "title": "Color", "type": "string"},
            "prio": {"default": 2, "enum": [1, 2], "title": "Priority", "type": "integer"},
        },
        "required": ["a", "b", "c", "d", "e", "color"],
    }


# --------------------------------------------------------------------------- structured types


def test_pydantic_model_is_inlined_without_refs() -> None:
    def f(person: Person) -> None: ...

    schema = build_signature(f).input_schema
    assert not _has_ref(schema)
    assert schema == {
        "type": "object",
        "properties": {
            "person": {
                "properties": {
                    "name": {"type": "string"},
                    "address": {
                        "description": "A postal address.",
                        "properties": {
                            "street": {"description": "street and number", "type": "string"},
                            "zipCode": {"type": "string"},
                        },
                        "required": ["street", "zipCode"],
                        "title": "Address",
                        "type": "object",
                    },
                    "favourite": {
                        "enum": ["red", "green"],
                        "title": "Color",
                        "type": "string",
                        "default": "red",
                    },
                },
                "required": ["name", "address"],
                "title": "Person",
                "type": "object",
            }
        },
        "required": ["person"],
    }


def test_list_of_models_and_optional_model_inlined() -> None:
    def f(people: list[Person], where: Address | None = None) -> None: ...

    schema = build_signature(f).input_schema
    assert not _has_ref(schema)
    assert schema["properties"]["people"]["items"]["title"] == "Person"
    assert schema["properties"]["where"]["anyOf"][0]["title"] == "Address"
    assert schema["properties"]["where"]["default"] is None


def test_strict_refs_keeps_defs() -> None:
    def f(person: Person) -> None: ...

    schema = build_signature(f, strict_refs=True).input_schema
    assert schema["properties"]["person"] == {"$ref": "#/$defs/Person"}
    assert set(schema["$defs"]) == {"Person", "Address", "Color"}


def test_recursive_model_keeps_only_recursive_defs() -> None:
    def f(holder: Holder) -> None: ...

    schema = build_signature(f).input_schema
    assert set(schema["$defs"]) == {"Tree"}
    holder = schema["properties"]["holder"]
    assert holder["properties"]["tree"] == {"$ref": "#/$defs/Tree"}
    assert holder["properties"]["address"]["title"] == "Address"  # inlined
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    # The schema is still valid and self-contained.
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"holder": {"tree": {"value": 1, "children": [{"value": 2}]},
                         "address": {"street": "s", "zipCode": "1"}}}, schema)  # fmt: skip


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    bark: str


def test_discriminated_union_inlined_without_dangling_mapping() -> None:
    def f(pet: Annotated[Cat | Dog, Field(discriminator="kind")]) -> None: ...

    sig = build_signature(f)
    pet = sig.input_schema["properties"]["pet"]
    assert not _has_ref(sig.input_schema)
    assert pet["discriminator"] == {"propertyName": "kind"}
    assert [choice["title"] for choice in pet["oneOf"]] == ["Cat", "Dog"]
    assert sig.validate({"pet": {"kind": "dog", "bark": "woof"}}) == {
        "pet": Dog(kind="dog", bark="woof")
    }
    with pytest.raises(ArgumentError) as info:
        sig.validate({"pet": {"kind": "dog"}})
    assert info.value.problems == ["`pet`: missing required field `bark`"]
    strict = build_signature(f, strict_refs=True).input_schema
    assert strict["properties"]["pet"]["discriminator"]["mapping"] == {
        "cat": "#/$defs/Cat",
        "dog": "#/$defs/Dog",
    }


def test_dataclass_and_typeddict() -> None:
    def f(p: Point, m: Movie, loose: Loose) -> None: ...

    props = build_signature(f).input_schema["properties"]
    assert props == {
        "p": {
            "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
            "required": ["x"],
            "title": "Point",
            "type": "object",
        },
        "m": {
            "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["title"],
            "title": "Movie",
            "type": "object",
        },
        "loose": {
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "title": "Loose",
            "type": "object",
        },
    }


def test_annotated_field_constraints_and_descriptions() -> None:
    def f(
        count: Annotated[int, Field(ge=1, le=10, description="how many")],
        name: Annotated[str, Field(min_length=2, max_length=5, pattern="^[a-z]+$")],
        note: Annotated[str, "a free note"] = "",
        tags: Annotated[list[str], Field(max_length=3)] = [],  # noqa: B006
    ) -> None: ...

    assert build_signature(f).input_schema == {
        "type": "object",
        "properties": {
            "count": {"description": "how many", "maximum": 10, "minimum": 1, "type": "integer"},
            "name": {"maxLength": 5, "minLength": 2, "pattern": "^[a-z]+$", "type": "string"},
            "note": {"default": "", "description": "a free note", "type": "string"},
            "tags": {"default": [], "items": {"type": "string"}, "maxItems": 3, "type": "array"},
        },
        "required": ["count", "name"],
    }


def test_field_default_inside_annotated() -> None:
    def f(n: Annotated[int, Field(default=5, ge=0)]) -> None: ...

    sig = build_signature(f)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"n": {"default": 5, "minimum": 0, "type": "integer"}},
    }
    assert sig.validate({}) == {"n": 5}


def test_description_precedence() -> None:
    def f(
        a: Annotated[int, Field(description="from Field")],
        b: Annotated[int, "from Annotated"],
        c: int,
    ) -> None:
        """Do.

        Args:
            a: from docstring a
            b: from docstring b
            c: from docstring c
        """

    props = build_signature(f).input_schema["properties"]
    assert props["a"]["description"] == "from Field"
    assert props["b"]["description"] == "from Annotated"
    assert props["c"]["description"] == "from docstring c"


def test_default_without_json_form_is_left_out_of_the_schema() -> None:
    sentinel = object()

    def f(a: Any = sentinel, when: datetime.date = datetime.date(2025, 11, 25)) -> None: ...

    sig = build_signature(f)
    assert sig.input_schema["properties"] == {
        "a": {},
        "when": {"default": "2025-11-25", "format": "date", "type": "string"},
    }
    assert sig.validate({})["a"] is sentinel


def test_parameter_names_that_clash_with_pydantic() -> None:
    def f(json: str, model_config: int, _private: bool, schema: str = "s") -> None: ...

    sig = build_signature(f)
    assert list(sig.input_schema["properties"]) == ["json", "model_config", "_private", "schema"]
    assert sig.validate({"json": "j", "model_config": "3", "_private": True}) == {
        "json": "j",
        "model_config": 3,
        "_private": True,
        "schema": "s",
    }


@pytest.mark.req("SCHEMA-VALID", "SCHEMA-RECOMMEND-2020-12")
def test_schema_is_valid_json_schema_and_accepts_valid_arguments() -> None:
    def f(
        person: Person, p: Point, m: Movie, c: Color, n: Annotated[int, Field(gt=0)] = 1
    ) -> None: ...

    schema = build_signature(f).input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    ok = {
        "person": {"name": "a", "address": {"street": "s", "zipCode": "z"}},
        "p": {"x": 1},
        "m": {"title": "t"},
        "c": "green",
    }
    jsonschema.validate(ok, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ok, "n": 0}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ok, "c": "blue"}, schema)


@pytest.mark.req("SCHEMA-VALID")
def test_every_emitted_schema_is_valid_2020_12() -> None:
    def inputs(
        a: list[Person],
        b: dict[str, Point],
        c: tuple[int, str],
        d: set[Color],
        e: Literal["x", 1],
        f: Annotated[Cat | Dog, Field(discriminator="kind")],
        g: Holder | None = None,
        h: datetime.datetime | None = None,
    ) -> list[Tree]: ...

    def outputs() -> dict[str, Holder]: ...

    for sig in (build_signature(inputs), build_signature(inputs, strict_refs=True)):
        jsonschema.Draft202012Validator.check_schema(sig.input_schema)
        assert sig.output_schema is not None
        jsonschema.Draft202012Validator.check_schema(sig.output_schema)
    schema, wrap = output_schema_for(outputs)
    assert schema is not None and wrap is False
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(
        {"k": {"tree": {"value": 1, "children": []}, "address": {"street": "s", "zipCode": "z"}}},
        schema,
    )


# --------------------------------------------------------------------------- docstrings


def test_docstring_google() -> None:
    def f(a: int, b: str, c: bool = True) -> None:
        """Search the catalogue.

        Use this when the user asks for a book.

        Args:
            a: the first
                number, continued
            b (str): the second
            c: whether to include
                out of print books.

        Returns:
            nothing
        """

    sig = build_signature(f)
    assert sig.description == "Search the catalogue.\n\nUse this when the user asks for a book."
    props = sig.input_schema["properties"]
    assert props["a"]["description"] == "the first number, continued"
    assert props["b"]["description"] == "the second"
    assert props["c"]["description"] == "whether to include out of print books."


def test_docstring_numpy() -> None:
    def f(a: int, b: str) -> None:
        """Compute things.

        Parameters
        ----------
        a : int
            The first one,
            on two lines.
        b : str
            The second.

        Returns
        -------
        None
        """

    sig = build_signature(f)
    assert sig.description == "Compute things."
    assert sig.input_schema["properties"]["a"]["description"] == "The first one, on two lines."
    assert sig.input_schema["properties"]["b"]["description"] == "The second."


def test_docstring_rest() -> None:
    def f(a: int, b: str) -> None:
        """Compute things.

        :param a: the first
            one
        :param str b: the second
        :returns: nothing
        :rtype: None
        """

    sig = build_signature(f)
    assert sig.description == "Compute things."
    assert sig.input_schema["properties"]["a"]["description"] == "the first one"
    assert sig.input_schema["properties"]["b"]["description"] == "the second"


def test_docstring_without_sections_and_none() -> None:
    assert parse_docstring(None) == (None, {})
    assert parse_docstring("") == (None, {})
    assert parse_docstring("  Just one line.  ") == ("Just one line.", {})
    # A heading-like line that is not a known section stays part of the description.
    assert parse_docstring("Intro.\n\nCaveat:\n    keep me") == (
        "Intro.\n\nCaveat:\n    keep me",
        {},
    )


def test_docstring_description_of_nested_params_is_not_confused() -> None:
    desc, params = parse_docstring(
        """Top.

        Args:
            query: text; may contain a colon: like this
            limit (int, optional): at most
        """
    )
    assert desc == "Top."
    assert params == {"query": "text; may contain a colon: like this", "limit": "at most"}


# --------------------------------------------------------------------------- context


def test_context_parameter_excluded() -> None:
    def f(a: int, ctx: Context) -> None: ...
    def g(ctx: SubContext, a: int) -> None: ...
    def h(a: int, ctx: Optional[Context] = None) -> None: ...  # noqa: UP045
    def h2(a: int, ctx: SubContext | None = None) -> None: ...
    def i(a: int, ctx: GenericContext[int]) -> None: ...
    def j(a: int, c: Annotated[Context, "the context"]) -> None: ...

    expected = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    for fn, name, ctx_type in [
        (f, "ctx", Context),
        (g, "ctx", Context),
        (h, "ctx", Context),
        (h2, "ctx", Context),
        (i, "ctx", GenericContext),
        (j, "c", Context),
    ]:
        sig = build_signature(fn, context_type=ctx_type)
        assert sig.input_schema == expected, fn
        assert sig.context_param == name
        assert sig.param_names == ("a",)
        assert sig.validate({"a": 1, name: "spoofed"}) == {"a": 1}


def test_two_context_parameters_rejected() -> None:
    def f(a: Context, b: Context) -> None: ...

    with pytest.raises(TypeError, match="two Context parameters"):
        build_signature(f, context_type=Context)


def test_without_context_type_a_context_annotation_is_a_schema_error() -> None:
    def f(ctx: Context) -> None: ...

    with pytest.raises(TypeError, match="cannot build an argument schema for `f`"):
        build_signature(f)


# --------------------------------------------------------------------------- rejected shapes


def test_var_args_rejected() -> None:
    def f(a: int, *rest: int) -> None: ...
    def g(a: int, **extra: Any) -> None: ...

    with pytest.raises(TypeError, match=r"\*rest"):
        build_signature(f)
    with pytest.raises(TypeError, match=r"\*\*extra"):
        build_signature(g)


def test_positional_only_rejected() -> None:
    def f(a: int, /, b: int) -> None: ...

    with pytest.raises(TypeError, match="positional-only"):
        build_signature(f)


def test_unresolvable_hint_is_a_clear_error() -> None:
    def f(a: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(TypeError, match="cannot resolve the type hints of `f`"):
        build_signature(f)


def test_methods_async_functions_and_partials() -> None:
    class Tools:
        def add(self, a: int, b: int = 2) -> int:
            return a + b

    async def fetch(url: str) -> str:
        return url

    def scaled(factor: int, value: float) -> float:
        return factor * value

    class Callable_:
        def __call__(self, q: str) -> str:
            """Answer q."""
            return q

    assert build_signature(Tools().add).param_names == ("a", "b")
    obj = build_signature(Callable_())
    assert obj.param_names == ("q",) and obj.description == "Answer q."
    assert build_signature(lambda x, y=2: x).input_schema == {
        "type": "object",
        "properties": {"x": {}, "y": {"default": 2}},
        "required": ["x"],
    }
    assert build_signature(fetch).input_schema["required"] == ["url"]
    part = build_signature(functools.partial(scaled, 3))
    assert part.param_names == ("value",)


# --------------------------------------------------------------------------- validation


def test_validate_coerces_like_pydantic_lax() -> None:
    def f(n: int, x: float, flag: bool, when: datetime.date, person: Person, p: Point) -> None: ...

    sig = build_signature(f)
    out = sig.validate(
        {
            "n": "5",
            "x": 2,
            "flag": "true",
            "when": "2025-11-25",
            "person": {"name": "n", "address": {"street": "s", "zipCode": "z"}},
            "p": {"x": "1.5"},
        }
    )
    assert out["n"] == 5 and type(out["n"]) is int
    assert out["x"] == 2.0 and type(out["x"]) is float
    assert out["flag"] is True
    assert out["when"] == datetime.date(2025, 11, 25)
    assert isinstance(out["person"], Person) and out["person"].address.zip_code == "z"
    assert out["p"] == Point(1.5, 0.0)


def test_validate_fills_defaults_and_copies_mutable_ones() -> None:
    def f(a: int, items: list[int] = [], name: str = "n") -> None:  # noqa: B006
        ...

    sig = build_signature(f)
    first = sig.validate({"a": 1})
    assert first == {"a": 1, "items": [], "name": "n"}
    first["items"].append(1)
    assert sig.validate({"a": 1})["items"] == []


def test_validation_errors_name_every_problem() -> None:
    def f(name: str, count: int, person: Person, color: Color, ratio: float = 0.5) -> None: ...

    sig = build_signature(f)
    with pytest.raises(ArgumentError) as info:
        sig.validate(
            {"count": "abc", "person": {"name": "x", "address": {"street": 3}}, "color": "blue"}
        )
    assert info.value.problems == [
        "missing required argument `name`",
        "`count`: Input should be a valid integer, unable to parse string as an integer, got 'abc'",
        "`person.address.street`: Input should be a valid string, got 3",
        "`person.address`: missing required field `zipCode`",
        "`color`: Input should be 'red' or 'green', got 'blue'",
    ]
    assert str(info.value) == "\n".join(info.value.problems)
    assert isinstance(info.value, ValueError)


def test_union_failures_are_one_line_and_paths_read_naturally() -> None:
    def f(
        u: int | str,
        lit: Literal["x"] | int,
        maybe: int | str | None = None,
        items: list[int] = [],  # noqa: B006
        where: Address | None = None,
    ) -> None: ...

    with pytest.raises(ArgumentError) as info:
        build_signature(f).validate(
            {"u": [1], "lit": "y", "maybe": {}, "items": [1, "b"], "where": {"street": "s"}}
        )
    assert info.value.problems == [
        "`u`: Input should be a valid integer or a valid string, got [1]",
        "`lit`: Input should be 'x' or a valid integer, unable to parse string as an integer,"
        " got 'y'",
        "`maybe`: Input should be a valid integer or a valid string, got {}",
        "`items[1]`: Input should be a valid integer, unable to parse string as an integer,"
        " got 'b'",
        "`where`: missing required field `zipCode`",
    ]


def test_long_inputs_are_truncated_in_messages() -> None:
    def f(count: int) -> None: ...

    with pytest.raises(ArgumentError) as info:
        build_signature(f).validate({"count": "x" * 1000})
    (problem,) = info.value.problems
    assert problem.startswith("`count`: Input should be a valid integer")
    assert len(problem) < 200 and problem.endswith("...")


def test_unknown_arguments_ignored_by_default_and_refused_on_request() -> None:
    def f(a: int, b: str = "") -> None: ...

    assert build_signature(f).validate({"a": 1, "zzz": 2}) == {"a": 1, "b": ""}
    strict = build_signature(f, forbid_unknown=True)
    assert strict.input_schema["additionalProperties"] is False
    with pytest.raises(ArgumentError) as info:
        strict.validate({"a": "x", "zzz": 2, "yyy": 3})
    assert info.value.problems == [
        "`a`: Input should be a valid integer, unable to parse string as an integer, got 'x'",
        "unknown arguments `zzz`, `yyy` (accepted: `a`, `b`)",
    ]
    with pytest.raises(ArgumentError, match=r"unknown argument `zzz` \(accepted: `a`, `b`\)"):
        strict.validate({"a": 1, "zzz": 2})


def test_forbid_unknown_does_not_leak_into_nested_dataclasses() -> None:
    def f(p: Point) -> None: ...

    sig = build_signature(f, forbid_unknown=True)
    assert "additionalProperties" not in sig.input_schema["properties"]["p"]
    assert sig.validate({"p": {"x": 1, "z": 9}}) == {"p": Point(1.0, 0.0)}


def test_arguments_must_be_an_object() -> None:
    def f(a: int = 0) -> None: ...

    sig = build_signature(f)
    assert sig.validate(None) == {"a": 0}
    with pytest.raises(ArgumentError, match="arguments must be an object, got"):
        sig.validate([1, 2])  # type: ignore[arg-type]
    assert sig.try_validate([1]) == ({}, ["arguments must be an object, got [1]"])  # type: ignore[arg-type]
    assert sig.try_validate({"a": "1"}) == ({"a": 1}, [])


def test_scalar_fast_path_agrees_with_pydantic() -> None:
    def fast(s: str, i: int, x: float, b: bool, o: str | None = None, d: int = 3) -> None: ...
    def slow(
        s: Annotated[str, Field()],
        i: Annotated[int, Field()],
        x: Annotated[float, Field()],
        b: Annotated[bool, Field()],
        o: Annotated[str | None, Field()] = None,
        d: Annotated[int, Field()] = 3,
    ) -> None: ...

    fs, ss = build_signature(fast), build_signature(slow)
    assert fs.input_schema == ss.input_schema
    samples: list[dict[str, Any]] = [
        {"s": "a", "i": 1, "x": 1.5, "b": True},
        {"s": "a", "i": 1, "x": 1, "b": False, "o": None},
        {"s": "a", "i": "7", "x": "1e3", "b": "yes", "o": "o", "d": 9},
        {"s": "a", "i": True, "x": 2.0, "b": 1},
        {"s": "a", "i": 1.0, "x": 1.0, "b": True, "extra": object()},
        {"s": 1, "i": 1, "x": 1.0, "b": True},
        {"i": 1.5, "x": "nan?", "b": "maybe"},
        {},
    ]
    for args in samples:
        assert fs.try_validate(args) == ss.try_validate(args), args
        for key, value in fs.try_validate(args)[0].items():
            assert type(value) is type(ss.try_validate(args)[0][key])


# --------------------------------------------------------------------------- prompts


def test_prompt_arguments() -> None:
    def review(code: str, language: Annotated[str, "programming language"] = "python") -> str:
        """Review some code.

        Args:
            code: the code to review
        """
        return code

    sig = build_signature(review, context_type=Context)
    assert sig.name == "review"
    assert sig.description == "Review some code."
    assert sig.arguments == [
        ArgumentInfo("code", "the code to review", True),
        ArgumentInfo("language", "programming language", False),
    ]
    assert sig.arguments[0] == ("code", "the code to review", True)
    # Prompt arguments arrive as strings; declared types still coerce them.

    def count(n: int) -> str:
        return str(n)

    assert build_signature(count).validate({"n": "12"}) == {"n": 12}


def test_prompt_arguments_as_strings_decode_json_for_structured_parameters() -> None:
    def p(
        steps: list[str],
        where: Address,
        text: str,
        maybe_text: str | None = None,
        count: int = 0,
        flag: bool = False,
        color: Color = Color.RED,
        anything: Any = None,
        either: list[int] | str = "",
    ) -> str: ...

    sig = build_signature(p)
    out = sig.validate_strings(
        {
            "steps": '["a", "b"]',
            "where": '{"street": "s", "zipCode": "z"}',
            "text": "[not json]",
            "maybe_text": '{"a": 1}',
            "count": "3",
            "flag": "true",
            "color": "green",
            "anything": "[1]",
            "either": "[1, 2]",
        }
    )
    assert out == {
        "steps": ["a", "b"],
        "where": Address(street="s", zipCode="z"),
        "text": "[not json]",
        "maybe_text": '{"a": 1}',
        "count": 3,
        "flag": True,
        "color": Color.GREEN,
        "anything": "[1]",
        "either": "[1, 2]",
    }
    with pytest.raises(ArgumentError) as info:
        sig.validate_strings({"steps": "[broken", "where": "{}", "text": "t"})
    assert info.value.problems == [
        "`steps`: Input should be a valid list, got '[broken'",
        "`where`: missing required field `street`",
        "`where`: missing required field `zipCode`",
    ]


# --------------------------------------------------------------------------- output


def _out(ann: Any) -> tuple[dict[str, Any] | None, bool]:
    def f() -> None: ...

    f.__annotations__["return"] = ann
    return output_schema_for(f)


def test_output_object_types_as_is() -> None:
    schema, wrap = _out(Address)
    assert wrap is False
    assert schema == {
        "description": "A postal address.",
        "properties": {
            "street": {"description": "street and number", "type": "string"},
            "zipCode": {"type": "string"},
        },
        "required": ["street", "zipCode"],
        "title": "Address",
        "type": "object",
    }
    assert _out(Point) == (
        {
            "properties": {"x": {"type": "number"}, "y": {"default": 0.0, "type": "number"}},
            "required": ["x"],
            "title": "Point",
            "type": "object",
        },
        False,
    )
    assert _out(Movie)[1] is False and _out(Movie)[0]["title"] == "Movie"  # type: ignore[index]
    assert _out(dict[str, int]) == (
        {"additionalProperties": {"type": "integer"}, "type": "object"},
        False,
    )
    schema, wrap = _out(Person)
    assert wrap is False and not _has_ref(schema)


def test_output_other_types_wrapped() -> None:
    assert _out(int) == (
        {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
        True,
    )
    assert _out(list[str]) == (
        {
            "type": "object",
            "properties": {"result": {"items": {"type": "string"}, "type": "array"}},
            "required": ["result"],
        },
        True,
    )
    schema, wrap = _out(Optional[Address])  # noqa: UP045
    assert wrap is True and schema is not None
    assert schema["properties"]["result"]["anyOf"][1] == {"type": "null"}
    schema, wrap = _out(list[Tree])
    assert wrap is True and schema is not None
    assert schema["properties"]["result"]["items"] == {"$ref": "#/$defs/Tree"}
    assert set(schema["$defs"]) == {"Tree"}
    jsonschema.validate({"result": [{"value": 1, "children": [{"value": 2}]}]}, schema)


def test_output_unstructured_types() -> None:
    def bare():  # type: ignore[no-untyped-def]
        ...

    assert output_schema_for(bare) == (None, False)
    for ann in (
        None,
        str,
        Any,
        TextContent,
        ImageContent,
        list[TextContent],
        list[TextContent | ImageContent],
        TextContent | ImageContent,
        CallToolResult,
        Optional[str],  # noqa: UP045
        str | None,
    ):
        assert _out(ann) == (None, False), ann


def test_output_schema_on_signature() -> None:
    def f(a: int) -> Address:
        return Address(street="s", zipCode="z")

    sig = build_signature(f)
    assert sig.wrap_output is False and sig.output_schema is not None
    assert sig.output_schema["title"] == "Address"
    assert sig.serialize_output(f(1)) == {"street": "s", "zipCode": "z"}


def test_serialize_output() -> None:
    class WithAlias(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        full_name: str = Field(alias="fullName")
        when: datetime.date

    value = WithAlias(full_name="x", when=datetime.date(2025, 1, 2))
    assert serialize_output(value) == {"fullName": "x", "when": "2025-01-02"}
    assert serialize_output(Point(1, 2)) == {"x": 1, "y": 2}
    assert serialize_output([Color.RED, {"k": (1, 2)}], wrap=True) == {
        "result": ["red", {"k": [1, 2]}]
    }
    assert serialize_output(None, wrap=True) == {"result": None}
    with pytest.raises(TypeError, match="cannot serialize"):
        serialize_output(object())

    def g() -> list[int]:
        return [1, 2]

    sig = build_signature(g)
    assert sig.serialize_output(g()) == {"result": [1, 2]}


class Report(BaseModel):
    title: str
    created: datetime.datetime
    author: Person
    tags: set[str] = set()
    score: float | None = None


def _returning(ann: Any, value: Any) -> Callable[[], Any]:
    def f() -> None:
        return value  # type: ignore[no-any-return]

    f.__annotations__["return"] = ann
    return f


@pytest.mark.parametrize(
    ("ann", "value"),
    [
        (
            Report,
            Report(
                title="t",
                created=datetime.datetime(2025, 11, 25, 12, 0),
                author=Person(name="n", address=Address(street="s", zipCode="z")),
                tags={"a"},
            ),
        ),
        (Point, Point(1.0, 2.5)),
        (Movie, {"title": "t", "year": 1999}),
        (dict[str, Point], {"a": Point(0, 0)}),
        (int, 3),
        (list[str], ["a", "b"]),
        (Optional[Address], None),  # noqa: UP045
        (list[Tree], [Tree(value=1, children=[Tree(value=2)])]),
        (tuple[int, str], (1, "x")),
        (Color, Color.GREEN),
        (datetime.date, datetime.date(2025, 1, 1)),
    ],
)
def test_structured_output_conforms_to_output_schema(ann: Any, value: Any) -> None:
    sig = build_signature(_returning(ann, value))
    assert sig.output_schema is not None
    structured = sig.serialize_output(value)
    jsonschema.validate(structured, sig.output_schema)
    assert structured == serialize_output(value, wrap=sig.wrap_output)


def test_inline_refs_leaves_data_keywords_alone() -> None:
    schema = {
        "$defs": {"A": {"type": "object", "properties": {"$ref": {"type": "string"}}}},
        "properties": {
            "a": {"$ref": "#/$defs/A", "default": {"$ref": "#/$defs/A"}},
            "b": {"const": {"$ref": "x"}},
        },
    }
    assert inline_refs(schema) == {
        "properties": {
            "a": {
                "type": "object",
                "properties": {"$ref": {"type": "string"}},
                "default": {"$ref": "#/$defs/A"},
            },
            "b": {"const": {"$ref": "x"}},
        }
    }
