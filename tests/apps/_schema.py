"""The vendored MCP Apps schema (tests/spec/vendor/ext-apps) as validators by definition."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema.validators import Draft202012Validator

SCHEMA = Path(__file__).resolve().parents[1] / "spec" / "vendor" / "ext-apps" / "schema.json"

#: The definition each message the host sends a view is checked against, by method (a
#: request or notification); results of the view's requests by the request's method.
SENT = {
    "ui/notifications/tool-input": "McpUiToolInputNotification",
    "ui/notifications/tool-result": "McpUiToolResultNotification",
    "ui/notifications/host-context-changed": "McpUiHostContextChangedNotification",
    "ui/resource-teardown": "McpUiResourceTeardownRequest",
}
RESULTS = {
    "ui/initialize": "McpUiInitializeResult",
    "ui/open-link": "McpUiOpenLinkResult",
    "ui/message": "McpUiMessageResult",
    "ui/request-display-mode": "McpUiRequestDisplayModeResult",
}


@functools.cache
def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return data


def errors(definition: str, instance: Any) -> list[str]:
    """Every problem of ``instance`` as the schema's ``definition``; [] when it is valid."""
    schema = {"$ref": f"#/$defs/{definition}", "$defs": _schema()["$defs"]}
    found = Draft202012Validator(schema).iter_errors(instance)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found]


def check(definition: str, instance: Any) -> None:
    problems = errors(definition, instance)
    assert not problems, f"not a valid {definition}: {problems} in {instance!r}"
