"""Test helpers for ``mcpkit.types``: the shared spec files, JSON Schema validation, the
JSON blocks of the prose pages, and a strict JSON comparison."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema.validators import validator_for
from tests._schema import SPEC_DIR

SCHEMA_DIR = SPEC_DIR / "schema"
PROSE_DIR = SPEC_DIR / "2025-11-25"
SEEDS_DIR = SPEC_DIR / "seeds"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = "2025-11-25"
#: The stateless revision (no handshake), modelled beside LATEST by the same classes.
STATELESS = "2026-07-28"
#: The revisions whose every definition has a model; a model shared by both accepts the
#: shapes of both (what one revision requires and the other lacks is optional).
MODEL_REVISIONS = (LATEST, STATELESS)
#: The sender unions of the schemas. One that lists a single type is emitted as a copy of
#: that type (2026-07-28: ClientNotification is CancelledNotification, ClientResult is Result).
SENDER_UNIONS = frozenset(
    {"ClientRequest", "ClientNotification", "ClientResult"}
    | {"ServerRequest", "ServerNotification", "ServerResult"}
)


def prose_dir(rev: str) -> Path:
    return SPEC_DIR / rev


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
    """method -> definition name, for every concrete request and notification (not the
    sender unions that happen to pin a method)."""
    return {
        d["properties"]["method"]["const"]: name
        for name, d in definitions(rev).items()
        if "const" in d.get("properties", {}).get("method", {}) and name not in SENDER_UNIONS
    }


def object_properties(rev: str, node: Any) -> tuple[dict[str, Any], set[str]] | None:
    """(properties, required) of an object definition, following ``allOf``; None otherwise."""
    if "allOf" in node:
        props: dict[str, Any] = {}
        required: set[str] = set()
        for part in node["allOf"]:
            sub = object_properties(rev, resolve(rev, part))
            if sub is None:
                return None
            props.update(sub[0])
            required |= sub[1]
        return props, required
    if node.get("type") == "object" and "properties" in node:
        return node["properties"], set(node.get("required", []))
    return None


def required_in_every_revision(name: str, prop: str) -> bool:
    """Whether ``prop`` is required by every revision of MODEL_REVISIONS that defines
    ``name`` (only then may the shared model require it)."""
    for rev in MODEL_REVISIONS:
        node = definitions(rev).get(name)
        found = object_properties(rev, node) if node is not None else None
        if found is not None and prop not in found[1]:
            return False
    return True


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def union_refs(rev: str, name: str) -> set[str] | None:
    """The definitions a union definition stands for; None for a definition of its own.

    ``anyOf``/``oneOf`` of references, a bare ``$ref`` (EmptyResult), and a sender union
    the schema emitted as a copy of its only member.
    """
    node = definitions(rev)[name]
    branches = node.get("anyOf") or node.get("oneOf")
    if branches and all("$ref" in b for b in branches):
        return {b["$ref"].rsplit("/", 1)[-1] for b in branches}
    if set(node) - {"description"} == {"$ref"}:
        return {node["$ref"].rsplit("/", 1)[-1]}
    if name in SENDER_UNIONS:
        body = _without_descriptions(node)
        twins = {
            other
            for other, d in definitions(rev).items()
            if other != name and other not in SENDER_UNIONS and _without_descriptions(d) == body
        }
        if twins:
            return twins
    return None


# --- JSON blocks of the prose pages ---------------------------------------------------

FENCE = re.compile(r"^[ \t]*```json[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)


def strip_comments(text: str) -> str:
    """Remove ``// ...`` comments that are outside JSON strings."""
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_block(text: str) -> Any:
    """The JSON value of a fenced block; ``// comments`` (in ``jsonc`` blocks) are removed.
    None when the block is not JSON (ellipses, trailing commas)."""
    value = _loads(text)
    return value if value is not None else _loads(strip_comments(text))


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
