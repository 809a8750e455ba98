"""Elicitation checks: form-mode answers (schema defaults, the check before they are sent)
and the URL a URL-mode request asks the user to open."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any
from urllib.parse import urlsplit

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


#: Longest URL a URL-mode elicitation may name.
MAX_URL = 8192


def url_problem(url: str) -> str | None:
    """Why ``url`` may not be shown to the user to open (None: an absolute http(s) URL).

    A URL-mode elicitation must name "a valid URL ... opened in a secure manner": only web
    pages are. ``javascript:`` would run in whatever page shows the link, ``data:`` and
    ``file:`` show content the server chose as if it came from elsewhere.
    """
    if len(url) > MAX_URL:
        return f"the URL is longer than {MAX_URL} characters"
    if any(c.isspace() or not c.isprintable() for c in url):
        return "the URL holds spaces or control characters"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        shown = f"{parts.scheme}:" if parts.scheme else "none"
        return f"only http and https URLs are opened (the scheme is {shown})"
    try:
        host = parts.hostname
    except ValueError:
        host = None
    if not host:
        return "the URL names no host"
    return None
