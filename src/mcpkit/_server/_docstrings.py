"""Parameter descriptions from a tool's docstring: Google, NumPy and reST styles.

``parse_docstring(doc)`` returns the summary and ``{parameter: description}``; the schema
builder puts them in the tool's ``description`` and each property's ``description``.
"""

from __future__ import annotations

import inspect
import re

_GOOGLE_PARAM_HEADERS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "kwargs",
        "other parameters",
    }
)
_GOOGLE_OTHER_HEADERS = frozenset(
    {
        "returns",
        "return",
        "yields",
        "yield",
        "raises",
        "raise",
        "except",
        "exceptions",
        "examples",
        "example",
        "note",
        "notes",
        "see also",
        "attributes",
        "warning",
        "warnings",
        "warns",
        "todo",
        "references",
        "methods",
    }
)
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):\s*$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:(.*)$")
_NUMPY_ENTRY = re.compile(
    r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*(?::.*)?$"
)
_REST_FIELD = re.compile(r"^:([A-Za-z]+)([^:]*):(.*)$")
_REST_PARAM_KINDS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _collapse(parts: list[str]) -> str:
    return " ".join(" ".join(parts).split())


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a docstring into (description, {parameter: description}).

    Understands Google (``Args:``), NumPy (``Parameters`` underlined with dashes) and reST
    (``:param name:`` / ``:param type name:``) styles. The description is the prose before the
    first section, whitespace-normalised per line; parameter descriptions are joined into one
    line.

    >>> parse_docstring('''Add numbers.
    ...
    ... Args:
    ...     a: the first one
    ...     b (int): the second
    ...         one
    ... ''')
    ('Add numbers.', {'a': 'the first one', 'b': 'the second one'})
    """
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    desc_end = len(lines)
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        # NumPy: a header line underlined with dashes.
        if stripped and i + 1 < n and _NUMPY_UNDERLINE.match(lines[i + 1]) and _indent(line) == 0:
            desc_end = min(desc_end, i)
            header = stripped.lower()
            i += 2
            body_start = i
            while i < n and not (
                lines[i].strip() and i + 1 < n and _NUMPY_UNDERLINE.match(lines[i + 1])
            ):
                i += 1
            if header in ("parameters", "other parameters", "params", "arguments"):
                _parse_numpy_params(lines[body_start:i], params)
            continue
        # Google: "Args:" followed by an indented block.
        m = _GOOGLE_HEADER.match(line)
        if m and _indent(line) == 0:
            header = m.group(1).strip().lower()
            if header in _GOOGLE_PARAM_HEADERS or header in _GOOGLE_OTHER_HEADERS:
                desc_end = min(desc_end, i)
                i += 1
                body_start = i
                while i < n and (not lines[i].strip() or _indent(lines[i]) > 0):
                    i += 1
                if header in _GOOGLE_PARAM_HEADERS:
                    _parse_google_params(lines[body_start:i], params)
                continue
        # reST: ":param name: text" fields.
        m = _REST_FIELD.match(stripped)
        if m and _indent(line) == 0:
            desc_end = min(desc_end, i)
            kind, spec, text = m.group(1).lower(), m.group(2).split(), m.group(3)
            parts = [text]
            i += 1
            while i < n and lines[i].strip() and _indent(lines[i]) > 0:
                parts.append(lines[i])
                i += 1
            if kind in _REST_PARAM_KINDS and spec:
                name = spec[-1].lstrip("*")
                params.setdefault(name, _collapse(parts))
            continue
        i += 1
    description = "\n".join(lines[:desc_end]).strip()
    return (description or None), params


def _parse_google_params(block: list[str], out: dict[str, str]) -> None:
    base = min((_indent(line) for line in block if line.strip()), default=0)
    name: str | None = None
    parts: list[str] = []
    for line in block:
        if line.strip() and _indent(line) == base:
            if name is not None:
                out.setdefault(name, _collapse(parts))
            m = _GOOGLE_ENTRY.match(line.strip())
            name, parts = (m.group(1), [m.group(2)]) if m else (None, [])
        elif name is not None:
            parts.append(line)
    if name is not None:
        out.setdefault(name, _collapse(parts))


def _parse_numpy_params(block: list[str], out: dict[str, str]) -> None:
    base = min((_indent(line) for line in block if line.strip()), default=0)
    names: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        text = _collapse(parts)
        for nm in names:
            if text:
                out.setdefault(nm, text)

    for line in block:
        if line.strip() and _indent(line) == base:
            flush()
            m = _NUMPY_ENTRY.match(line.strip())
            names = [s.strip().lstrip("*") for s in m.group(1).split(",")] if m else []
            parts = []
        elif names:
            parts.append(line)
    flush()


# --------------------------------------------------------------------------- type helpers
