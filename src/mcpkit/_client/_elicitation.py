"""Form-mode elicitation answers: schema defaults and the check before they are sent."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from ._jsonschema import schema_errors

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$")


def apply_defaults(content: dict[str, Any], schema: Any) -> dict[str, Any]:
    """``content`` with each missing field that has a ``default`` in ``schema`` filled in."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return content
    out = dict(content)
    for name, prop in props.items():
        if name not in out and isinstance(prop, dict) and "default" in prop:
            out[name] = prop["default"]
    return out


def _format_error(value: str, fmt: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(value):
        return "is not an email address"
    if fmt == "uri" and not _URI.match(value):
        return "is not a URI"
    if fmt == "date":
        try:
            _dt.date.fromisoformat(value)
        except ValueError:
            return "is not a date (YYYY-MM-DD)"
    if fmt == "date-time":
        try:
            _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return "is not a date-time (RFC 3339)"
    return None


def check_answer(content: dict[str, Any], schema: Any) -> list[str]:
    """Why an accepted form answer does not fit the ``requestedSchema`` (empty if it does).

    Beyond JSON Schema: fields the form did not ask for are refused, and the string formats
    elicitation defines (email, uri, date, date-time) are checked.
    """
    if not isinstance(schema, dict):
        return []
    errors = schema_errors(content, schema)
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, value in content.items():
            prop = props.get(name)
            if prop is None:
                errors.append(f"{name}: the form has no such field")
            elif (
                isinstance(prop, dict)
                and isinstance(value, str)
                and isinstance(prop.get("format"), str)
            ):
                err = _format_error(value, prop["format"])
                if err:
                    errors.append(f"{name}: {value!r} {err}")
    return errors
