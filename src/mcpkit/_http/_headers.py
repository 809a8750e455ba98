"""The request headers revision 2026-07-28 mirrors from the body (both ends of HTTP).

``Mcp-Method`` and ``Mcp-Name`` copy the method and the named thing (tool, prompt,
resource URI); ``Mcp-Param-{Name}`` copies a tool argument whose schema property carries
``x-mcp-header``. Gateways route on them without parsing bodies, so a server checks them
against the body, and values that are not plain header text travel Base64-encoded between
the ``=?base64?`` and ``?=`` sentinels.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

#: Requests whose ``Mcp-Name`` header mirrors a body member.
NAMED_MEMBER = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension routes its methods by task (SEP-2663, "Routing Headers").
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_OPEN, _CLOSE = "=?base64?", "?="
#: RFC 9110 field-name token characters (``1*tchar``).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: JavaScript's safe-integer range: integers beyond it cannot be mirrored faithfully.
_SAFE_INT = 2**53 - 1


def _plain(value: str) -> bool:
    """Whether ``value`` can travel as is: visible ASCII, inner spaces and tabs only."""
    if not value or value != value.strip(" \t"):
        return value == ""
    if value.startswith(_OPEN) and value.endswith(_CLOSE):
        return False  # would read as encoded
    return all(" " <= c <= "~" or c == "\t" for c in value)


def encode_header_value(value: str | int | bool) -> str:
    """A body value as its mirrored header value (strings Base64-wrapped when needed).

    Example::

        >>> encode_header_value("us-west1"), encode_header_value(True), encode_header_value(" x ")
        ('us-west1', 'true', '=?base64?IHggIA==?=')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if _plain(value):
        return value
    return _OPEN + base64.b64encode(value.encode("utf-8")).decode("ascii") + _CLOSE


#: A plain mirrored value: visible ASCII, spaces and tabs only.
_VISIBLE = re.compile(r"[\t\x20-\x7e]*")


def decode_header_value(value: str) -> str | None:
    """A mirrored header's value with its Base64 form decoded; None when malformed."""
    if value.startswith(_OPEN) and value.endswith(_CLOSE):
        try:
            raw = base64.b64decode(value[len(_OPEN) : -len(_CLOSE)], validate=True)
            return raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value if _VISIBLE.fullmatch(value) is not None else None


def header_params(input_schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The ``(header name, property path)`` pairs a tool's ``x-mcp-header`` marks ask for.

    Raises :class:`ValueError` when an annotation breaks the rules of streamable-http.mdx
    (a client then leaves the tool out of its list): an empty or non-token name, names
    equal but for case, a ``number``, object or array property, or an annotation not
    reachable from the root through ``properties`` alone.
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    _walk(input_schema, (), True, found)
    seen: set[str] = set()
    for name, _ in found:
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is used twice (names ignore case)")
        seen.add(name.lower())
    return found


def _walk(
    node: Any, path: tuple[str, ...], reachable: bool, found: list[tuple[str, tuple[str, ...]]]
) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, path, False, found)
        return
    if not isinstance(node, Mapping):
        return
    if "x-mcp-header" in node:
        name = node["x-mcp-header"]
        if not reachable or not path:
            raise ValueError("x-mcp-header is only allowed on properties reached by 'properties'")
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP header token")
        if node.get("type") not in ("string", "integer", "boolean"):
            raise ValueError(
                f"x-mcp-header {name!r} marks a {node.get('type')!r} property "
                "(only string, integer and boolean may be mirrored)"
            )
        found.append((name, path))
    for key, sub in node.items():
        if key == "properties" and isinstance(sub, Mapping):
            for prop, schema in sub.items():
                _walk(schema, (*path, prop), reachable, found)
        elif key != "x-mcp-header":
            _walk(sub, path, False, found)


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (None when absent)."""
    node = arguments
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def mirror_headers(
    message: Mapping[str, Any], params_of_tool: Mapping[str, list[tuple[str, tuple[str, ...]]]]
) -> dict[str, str]:
    """The standard headers of an outgoing request (``Mcp-Method``, ``Mcp-Name``,
    ``Mcp-Param-*``); ``params_of_tool`` maps tool names to their :func:`header_params`."""
    method = message.get("method")
    if not isinstance(method, str):
        return {}
    out = {"mcp-method": method}
    params = message.get("params")
    member = NAMED_MEMBER.get(method)
    if member is None or not isinstance(params, Mapping):
        return out
    named = params.get(member)
    if isinstance(named, str):
        out["mcp-name"] = encode_header_value(named)
    if method == "tools/call" and isinstance(named, str):
        args = params.get("arguments")
        for header, path in params_of_tool.get(named, ()):
            value = value_at(args, path)
            if isinstance(value, (str, bool)) or (
                isinstance(value, int) and abs(value) <= _SAFE_INT
            ):
                out[f"mcp-param-{header.lower()}"] = encode_header_value(value)
    return out
