"""Test helpers for ``mcpkit.types``: the shared spec files, JSON Schema validation, and
a strict JSON comparison."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from jsonschema.validators import validator_for
from tests._schema import SPEC_DIR

SCHEMA_DIR = SPEC_DIR / "schema"
PROSE_DIR = SPEC_DIR / "2025-11-25"
SEEDS_DIR = SPEC_DIR / "seeds"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = "2025-11-25"


@functools.cache
def schema_root(rev: str) -> dict[str, Any]:
    root: dict[str, Any] = json.loads((SCHEMA_DIR / f"{rev}.json").read_text(encoding="utf-8"))
    return root


def definitions(rev: str) -> dict[str, Any]:
    root = schema_root(rev)
    defs: dict[str, Any] = root.get("$defs") or root["definitions"]
    return defs


@functools.cache
def validator(rev: str, name: str) -> Any:
    root = schema_root(rev)
    key = "$defs" if "$defs" in root else "definitions"
    cls = validator_for(root)
    return cls({**root, "$ref": f"#/{key}/{name}"}, format_checker=cls.FORMAT_CHECKER)


def schema_errors(rev: str, name: str, instance: Any) -> list[str]:
    return [
        f"{rev} {name} at /{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(rev, name).iter_errors(instance)
    ]


@functools.cache
def method_map(rev: str) -> dict[str, str]:
    """method -> definition name, for every concrete request and notification."""
    return {
        d["properties"]["method"]["const"]: name
        for name, d in definitions(rev).items()
        if "const" in d.get("properties", {}).get("method", {})
    }


def resolve(rev: str, node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = definitions(rev)[node["$ref"].rsplit("/", 1)[-1]]
    return node


@functools.cache
def _subschema_validator(rev: str, node_json: str) -> Any:
    root = schema_root(rev)
    cls = validator_for(root)
    return cls({**root, **json.loads(node_json)})


def _matches(rev: str, node: Any, instance: Any) -> bool:
    return bool(_subschema_validator(rev, json.dumps(node, sort_keys=True)).is_valid(instance))


#: Keys whose values are free-form (JSON Schema documents, metadata): not walked.
OPAQUE_KEYS = frozenset({"_meta", "inputSchema", "outputSchema", "experimental", "arguments"})


def undeclared(rev: str, node: Any, instance: Any, path: str = "") -> Iterator[str]:
    """Paths of object members that the schema ``node`` of revision ``rev`` does not declare.

    The schemas are open (extra members validate), so validation alone cannot show that a
    member a revision lacks was removed; this walks the instance along the schema and
    reports every member that is neither a declared property nor allowed by an explicit
    ``additionalProperties`` schema.
    """
    node = resolve(rev, node)
    if not isinstance(node, dict):
        return
    for key in ("anyOf", "oneOf"):
        if key in node:
            # Open schemas let one instance match several branches (a string field with
            # an `enum` also matches the plain string schema): judge by the branch that
            # declares the most of it.
            found = [
                list(undeclared(rev, branch, instance, path))
                for branch in node[key]
                if _matches(rev, resolve(rev, branch), instance)
            ]
            if found:
                yield from min(found, key=len)
            return
    if "allOf" in node:
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            part = resolve(rev, part)
            merged.update(part.get("properties", {}))
        node = {**node, "properties": {**merged, **node.get("properties", {})}}
    if isinstance(instance, dict):
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if props is None and extra is None:
            return
        for key, value in instance.items():
            where = f"{path}/{key}"
            if key in OPAQUE_KEYS:
                continue
            if props and key in props:
                yield from undeclared(rev, props[key], value, where)
            elif isinstance(extra, dict) and extra:
                yield from undeclared(rev, extra, value, where)
            elif extra is None or extra is False:
                yield where
    elif isinstance(instance, list) and isinstance(node.get("items"), dict):
        for i, item in enumerate(instance):
            yield from undeclared(rev, node["items"], item, f"{path}/{i}")


def same_json(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 and True from 1 (what ``==`` does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
