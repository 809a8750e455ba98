"""JSON Schema dialects: which ones mcpkit validates, and a clear error for the rest.

MCP schemas (tool input and output schemas, elicitation forms) default to JSON Schema
2020-12 when they carry no ``$schema``; a schema may declare another dialect. mcpkit
validates 2020-12 and draft-07 (the dialect of older MCP revisions' own schemas); any other
declared dialect is refused with :class:`UnsupportedDialect`, as the spec asks, rather than
validated by the wrong rules.
"""

from __future__ import annotations

from typing import Any

DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DIALECT_DRAFT_07 = "http://json-schema.org/draft-07/schema#"

# Normalised URI (no scheme, no trailing '#') -> short name.
_KNOWN = {
    "json-schema.org/draft/2020-12/schema": "2020-12",
    "json-schema.org/draft-07/schema": "draft-07",
}

#: The dialects mcpkit validates, by short name.
SUPPORTED_DIALECTS: tuple[str, ...] = ("2020-12", "draft-07")


class UnsupportedDialect(ValueError):
    """A schema declares a ``$schema`` dialect mcpkit does not validate."""


def schema_dialect(schema: Any) -> str:
    """The dialect of ``schema``: ``"2020-12"`` (also when undeclared) or ``"draft-07"``.

    Raises :class:`UnsupportedDialect` for any other declared ``$schema``.

    Example::

        >>> schema_dialect({"type": "object"})
        '2020-12'
        >>> schema_dialect({"$schema": "http://json-schema.org/draft-07/schema#"})
        'draft-07'
    """
    if not isinstance(schema, dict):
        return "2020-12"
    declared = schema.get("$schema")
    if declared is None:
        return "2020-12"
    if isinstance(declared, str):
        key = declared.split("://", 1)[-1].rstrip("#")
        name = _KNOWN.get(key)
        if name is not None:
            return name
    raise UnsupportedDialect(
        f"JSON Schema dialect {declared!r} is not supported; "
        f"supported: 2020-12 ({DIALECT_2020_12}, the default) and draft-07 ({DIALECT_DRAFT_07})"
    )
