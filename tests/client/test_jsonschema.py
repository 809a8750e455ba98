"""Our small JSON Schema validator, cross-checked against the ``jsonschema`` package."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mcpkit._client._jsonschema import schema_errors, validate

ADDRESS = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
}

CASES: list[tuple[Any, list[Any]]] = [
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1", None]),
    ({"type": "number"}, [1, 2.5, True, "x"]),
    ({"type": ["string", "null"]}, ["a", None, 1]),
    ({"type": "boolean"}, [True, 0]),
    (
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        [[], [1], [1, 2, 3], [1, "a"]],
    ),
    (
        {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
        [["a", 1], [1], ["a", "b"]],
    ),
    ({"type": "array", "uniqueItems": True}, [[1, 2], [1, 1], [1, True], [{"a": 1}, {"a": 1}]]),
    (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [{"a": "x"}, {}, {"a": 1}, {"a": "x", "b": 2}, []],
    ),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, [{"x": 1}, {"x": "y"}]),
    (
        {"type": "object", "patternProperties": {"^n_": {"type": "number"}}},
        [{"n_a": 1}, {"n_a": "x"}, {"o": "x"}],
    ),
    ({"type": "object", "minProperties": 1, "maxProperties": 1}, [{}, {"a": 1}, {"a": 1, "b": 2}]),
    ({"enum": ["a", 1, None, [1]]}, ["a", 1, 1.0, None, [1], "b", True]),
    ({"const": {"a": [1, 2]}}, [{"a": [1, 2]}, {"a": [2, 1]}]),
    (
        {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"},
        ["ab", "a", "abcd", "AB", "abc"],
    ),
    (
        {"type": "number", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5},
        [0, 9.5, 10, -1, 0.25],
    ),
    ({"type": "integer", "exclusiveMinimum": 0, "maximum": 5}, [0, 1, 5, 6]),
    ({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]}, ["x", 10, 5]),
    ({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]}, [1, 7, 5.5, "x"]),
    ({"allOf": [{"type": "integer"}, {"minimum": 3}]}, [3, 2, "x"]),
    ({"not": {"type": "string"}}, [1, "x"]),
    (
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": ADDRESS},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
        [{"name": "a", "address": {"city": "x"}}, {"address": {"city": 1}}, {"other": 1}],
    ),
    (
        {
            "definitions": {"pos": {"type": "integer", "minimum": 1}},
            "type": "array",
            "items": {"$ref": "#/definitions/pos"},
        },
        [[1, 2], [0]],
    ),
    (
        {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}},
        [{"children": [{"children": []}]}, {"children": [{"children": 1}]}],
    ),
    (True, [1, "x"]),
    (False, [1]),
    ({"format": "email", "type": "string"}, ["not an email"]),  # formats are annotations
]


@pytest.mark.req("SCHEMA-DEFAULT-2020-12")
@pytest.mark.parametrize(
    "schema, value",
    [
        pytest.param(schema, value, id=f"{i}-{j}")
        for i, (schema, values) in enumerate(CASES)
        for j, value in enumerate(values)
    ],
)
def test_agrees_with_jsonschema(schema: Any, value: Any) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    errors = schema_errors(value, schema)
    assert (not errors) == expected, errors
    assert validate(value, schema) == expected


def test_error_messages_name_the_place() -> None:
    schema = CASES[20][0]
    assert schema_errors({"address": {"city": 1}}, schema) == [
        "address.city: expected string, got integer 1"
    ]
    assert schema_errors({"other": 1}, schema) == ["$: unexpected property 'other'"]
    assert schema_errors([1, "a"], {"type": "array", "items": {"type": "integer"}}) == [
        "[1]: expected integer, got string 'a'"
    ]
    # A long value is cut short; a container is named by its type only.
    (long,) = schema_errors("x" * 100, {"type": "integer"})
    assert long.startswith("$: expected integer, got string 'xxx") and long.endswith("...")
    assert len(long) < 80
    assert schema_errors([[1, 2]], {"type": "array", "items": {"type": "string"}}) == [
        "[0]: expected string, got array"
    ]


def test_unknown_keywords_and_remote_refs_never_reject() -> None:
    assert validate(5, {"if": {"type": "integer"}, "then": {"minimum": 10}})
    assert validate(5, {"$ref": "https://example.com/schema.json"})
    assert validate("x", {"type": "string", "pattern": "(unclosed"})


def test_deep_recursion_is_bounded() -> None:
    value: Any = 1
    for _ in range(200):
        value = [value]
    assert validate(value, {"type": "array", "items": {"$ref": "#"}}) in (True, False)


# ---------------------------------------------------------------- elicitation answers

SEP1330 = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First"},
                {"const": "value2", "title": "Second"},
            ],
        },
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["One", "Two"]},
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "value1", "title": "A"}, {"const": "value2", "title": "B"}]
            },
            "minItems": 1,
            "maxItems": 2,
        },
        "when": {"type": "string", "format": "date"},
        "site": {"type": "string", "format": "uri"},
        "at": {"type": "string", "format": "date-time"},
        "n": {"type": "number", "minimum": 0, "default": 1.5},
    },
    "required": ["untitledSingle"],
}
GOOD = {
    "untitledSingle": "option1",
    "titledSingle": "value1",
    "legacyEnum": "opt1",
    "untitledMulti": ["option1", "option2"],
    "titledMulti": ["value1", "value2"],
    "when": "2025-11-25",
    "site": "https://example.com/x",
    "at": "2025-11-25T10:00:00Z",
}


def test_elicitation_answers_every_enum_shape() -> None:
    from mcpkit._client._elicitation import apply_defaults, check_answer

    assert check_answer(GOOD, SEP1330) == []
    assert apply_defaults(GOOD, SEP1330)["n"] == 1.5
    assert apply_defaults({"n": 3}, SEP1330)["n"] == 3  # given values win
    bad = {
        "titledSingle": "value9",
        "legacyEnum": "One",
        "untitledMulti": ["option9"],
        "titledMulti": [],
        "when": "25/11/2025",
        "site": "not a uri",
        "at": "noon",
        "n": -1,
    }
    errors = check_answer({**GOOD, **bad}, SEP1330)
    joined = " | ".join(errors)
    for field in bad:
        assert field in joined, (field, errors)
    assert "missing required property 'untitledSingle'" in " ".join(check_answer({}, SEP1330))
