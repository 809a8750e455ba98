"""A small JSON Schema validator for what MCP peers check: tool arguments and output, elicitation answers.

It covers the keywords real tool schemas use (types, properties, required,
additionalProperties, items/prefixItems, enum/const, numeric and length bounds, pattern,
anyOf/oneOf/allOf/not, local ``$ref`` into ``$defs``/``definitions``) with 2020-12 semantics.
Unknown keywords (``format``, ``if``/``then``, ...) are ignored, so a schema we cannot fully
check never rejects a valid value: the validator errs on the side of accepting.

It exists so the client needs no third-party validator (see docs/dependencies.md).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ._dialects import UnsupportedDialect, schema_dialect

__all__ = ["schema_errors", "unknown_arguments_line", "validate"]

_MAX_ERRORS = 10
_MAX_DEPTH = 64


def _type_ok(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if t == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if t == "number":
        return isinstance(value, (int, float))
    return True  # unknown type name: do not reject


def _equal(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0, but True != 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


class _Validator:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.errors: list[str] = []

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            return True  # remote refs are not fetched (security): accept
        node: Any = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return True
        return node

    def fail(self, path: str, message: str) -> None:
        if len(self.errors) < _MAX_ERRORS:
            self.errors.append(f"{path or '$'}: {message}")

    def check(self, value: Any, schema: Any, path: str, depth: int) -> None:
        if schema is False:
            self.fail(path, "no value is allowed here")
            return
        if not isinstance(schema, dict):
            return
        if depth > _MAX_DEPTH:
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            self.check(value, self.resolve(ref), path, depth + 1)
        t = schema.get("type")
        if isinstance(t, str):
            if not _type_ok(value, t):
                self.fail(path, f"expected {t}, got {_shown(value)}")
                return
        elif (
            isinstance(t, list)
            and t
            and not any(_type_ok(value, x) for x in t if isinstance(x, str))
        ):
            self.fail(path, f"expected one of {t}, got {_shown(value)}")
            return
        if "const" in schema and not _equal(value, schema["const"]):
            self.fail(path, f"must be {schema['const']!r}")
        enum = schema.get("enum")
        if isinstance(enum, list) and not any(_equal(value, e) for e in enum):
            self.fail(path, f"must be one of {enum!r}")
        if isinstance(value, dict):
            self.check_object(value, schema, path, depth)
        elif isinstance(value, list):
            self.check_array(value, schema, path, depth)
        elif isinstance(value, str):
            self.check_string(value, schema, path)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self.check_number(value, schema, path)
        for key in ("allOf", "anyOf", "oneOf"):
            subs = schema.get(key)
            if not isinstance(subs, list):
                continue
            if key == "allOf":
                for s in subs:
                    self.check(value, s, path, depth + 1)
                continue
            n = sum(1 for s in subs if self.ok_at(value, s, depth))
            if key == "anyOf" and n == 0:
                self.fail(path, "matches none of the anyOf alternatives")
            elif key == "oneOf" and n != 1:
                self.fail(path, f"must match exactly one oneOf alternative (matched {n})")
        if "not" in schema and self.ok_at(value, schema["not"], depth):
            self.fail(path, "must not match the 'not' schema")

    def ok_at(self, value: Any, schema: Any, depth: int) -> bool:
        saved = self.errors
        self.errors = []
        try:
            self.check(value, schema, "", depth + 1)
            return not self.errors
        finally:
            self.errors = saved

    def check_object(
        self, value: dict[str, Any], schema: dict[str, Any], path: str, depth: int
    ) -> None:
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if isinstance(name, str) and name not in value:
                    self.fail(path, f"missing required property {name!r}")
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            sub = f"{path}.{name}" if path else name
            matched = False
            if name in props:
                matched = True
                self.check(item, props[name], sub, depth + 1)
            for pat, psch in patterns.items():
                rx = _regex(pat)
                if rx is not None and rx.search(name):
                    matched = True
                    self.check(item, psch, sub, depth + 1)
            if not matched:
                if extra is False:
                    self.fail(path, f"unexpected property {name!r}")
                elif isinstance(extra, dict):
                    self.check(item, extra, sub, depth + 1)
        n = len(value)
        if isinstance(schema.get("minProperties"), int) and n < schema["minProperties"]:
            self.fail(path, f"needs at least {schema['minProperties']} properties")
        if isinstance(schema.get("maxProperties"), int) and n > schema["maxProperties"]:
            self.fail(path, f"allows at most {schema['maxProperties']} properties")

    def check_array(self, value: list[Any], schema: dict[str, Any], path: str, depth: int) -> None:
        prefix = schema.get("prefixItems")
        start = 0
        if isinstance(prefix, list):
            for i, (item, s) in enumerate(zip(value, prefix, strict=False)):
                self.check(item, s, f"{path}[{i}]", depth + 1)
            start = len(prefix)
        items = schema.get("items")
        if isinstance(items, list):  # draft-07 tuple form
            for i, (item, s) in enumerate(zip(value, items, strict=False)):
                self.check(item, s, f"{path}[{i}]", depth + 1)
        elif items is not None:
            for i in range(start, len(value)):
                self.check(value[i], items, f"{path}[{i}]", depth + 1)
        n = len(value)
        if isinstance(schema.get("minItems"), int) and n < schema["minItems"]:
            self.fail(path, f"needs at least {schema['minItems']} items")
        if isinstance(schema.get("maxItems"), int) and n > schema["maxItems"]:
            self.fail(path, f"allows at most {schema['maxItems']} items")
        if schema.get("uniqueItems") is True:
            for i in range(n):
                if any(_equal(value[i], value[j]) for j in range(i)):
                    self.fail(path, "items must be unique")
                    break

    def check_string(self, value: str, schema: dict[str, Any], path: str) -> None:
        n = len(value)
        if isinstance(schema.get("minLength"), int) and n < schema["minLength"]:
            self.fail(path, f"must be at least {schema['minLength']} characters long")
        if isinstance(schema.get("maxLength"), int) and n > schema["maxLength"]:
            self.fail(path, f"must be at most {schema['maxLength']} characters long")
        pat = schema.get("pattern")
        if isinstance(pat, str):
            rx = _regex(pat)
            if rx is not None and not rx.search(value):
                self.fail(path, f"does not match the pattern {pat!r}")

    def check_number(self, value: float, schema: dict[str, Any], path: str) -> None:
        def num(key: str) -> float | None:
            v = schema.get(key)
            return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        if (m := num("minimum")) is not None and value < m:
            self.fail(path, f"must be >= {m}")
        if (m := num("maximum")) is not None and value > m:
            self.fail(path, f"must be <= {m}")
        if (m := num("exclusiveMinimum")) is not None and value <= m:
            self.fail(path, f"must be > {m}")
        if (m := num("exclusiveMaximum")) is not None and value >= m:
            self.fail(path, f"must be < {m}")
        if (m := num("multipleOf")) is not None and m > 0:
            q = value / m
            if abs(q - round(q)) > 1e-9:
                self.fail(path, f"must be a multiple of {m}")


def _shown(value: Any) -> str:
    """The type of a wrong value, and the value itself when it is a short scalar."""
    kind = _describe(value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = repr(value)
        return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"
    return kind


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def schema_errors(value: Any, schema: Any) -> list[str]:
    """The reasons ``value`` does not match ``schema`` (empty when it does), at most 10.

    A schema declaring a dialect we do not validate yields one error saying so, instead of
    being checked by the wrong rules.
    """
    try:
        schema_dialect(schema)
    except UnsupportedDialect as e:
        return [str(e)]
    v = _Validator(schema)
    v.check(value, schema, "", 0)
    return v.errors


def validate(value: Any, schema: Any) -> bool:
    """True when ``value`` matches ``schema``."""
    return not schema_errors(value, schema)


def unknown_arguments_line(unknown: list[str], accepted: tuple[str, ...] | list[str]) -> str:
    """The one problem line refusing arguments a tool does not take, naming those it does
    (what a model needs to correct a misspelling)."""
    names = ", ".join(f"`{k}`" for k in unknown)
    what = f"unknown argument {names}" if len(unknown) == 1 else f"unknown arguments {names}"
    if not accepted:
        return f"{what} (this tool takes no arguments)"
    return f"{what} (accepted: {', '.join(f'`{a}`' for a in accepted)})"
