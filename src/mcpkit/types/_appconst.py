"""The MCP Apps extension's names, without its models: what a server that serves no view
needs to know of the extension, importable without pydantic (a plain stdio server never
imports it, see mcpkit.types._apps for the models)."""

from __future__ import annotations

#: The extension's identifier (``capabilities.extensions``).
APPS_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an app's HTML.
APP_MIME_TYPE = "text/html;profile=mcp-app"

__all__ = ["APPS_EXTENSION", "APP_MIME_TYPE"]
