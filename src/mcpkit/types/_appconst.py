"""The MCP Apps extension's names, without its models: what a server that serves no view
needs to know of the extension, importable without pydantic (a plain stdio server never
imports it, see mcpkit.types._apps for the models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The extension's identifier (``capabilities.extensions``).
APPS_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an app's HTML.
APP_MIME_TYPE = "text/html;profile=mcp-app"

__all__ = ["APPS_EXTENSION", "APP_MIME_TYPE", "callable_by"]


def callable_by(meta: Any, audience: str) -> bool:
    """Whether ``audience`` (``"model"`` or ``"app"``) may call a tool with this ``_meta``,
    ``_meta.ui.visibility`` read as it is, not through the model: a mounted or proxied
    server's malformed ``visibility`` must not fail a listing, and one that is not a list
    naming ``audience`` keeps the tool from it. No ``visibility``: both may."""
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if not isinstance(ui, Mapping) or "visibility" not in ui:
        return True
    visibility = ui["visibility"]
    return isinstance(visibility, list) and audience in visibility
