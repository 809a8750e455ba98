"""The MCP Apps extension (``io.modelcontextprotocol/ui``) for hosts.

``Client(..., apps=True)`` declares the extension (``mimeTypes``: the HTML profile). Such a
client is a host: servers list it every tool, the app-only ones included, and it is the
host's job to keep those from its model (:meth:`Client.list_model_tools`) and to let a view
call only the tools meant for views (:meth:`Client.call_tool_from_app`).
:meth:`Client.read_app` fetches a view's HTML with its ``_meta.ui`` (CSP, permissions).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._exceptions import InvalidParams, InvalidResponse
from ..types import CallToolResult, Tool
from ..types._apps import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    AppResourceMeta,
    AppToolMeta,
    app_csp_header,
)
from ._extensions import ClientExtension

if TYPE_CHECKING:
    from ._face import ClientLike


class AppsClientExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/ui``: this client renders HTML views."""

    id = APPS_EXTENSION

    def settings(self) -> dict[str, Any] | None:
        return {"mimeTypes": [APP_MIME_TYPE]}


@dataclasses.dataclass
class LoadedApp:
    """A tool's view, read with ``resources/read``: its HTML and its ``_meta.ui``.

    ``csp`` is the Content-Security-Policy a host enforces on it: exactly the origins the
    server declared, nothing more (see :func:`mcpkit.types.app_csp_header`).
    """

    uri: str
    html: str
    meta: AppResourceMeta | None

    @property
    def csp(self) -> str:
        return app_csp_header(self.meta.csp if self.meta is not None else None)


def app_of(tool: Tool) -> AppToolMeta | None:
    """The tool's ``_meta.ui`` (None: it has no app)."""
    return AppToolMeta.of(tool.meta)


def _decode(item: Mapping[str, Any], uri: str) -> str:
    text = item.get("text")
    if isinstance(text, str):
        return text
    blob = item.get("blob")
    if isinstance(blob, str):
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as e:
            raise InvalidResponse(f"{uri}: the app's blob is not base64 UTF-8 HTML") from e
    raise InvalidResponse(f"{uri}: the app's contents have neither text nor blob")


async def read_app(client: ClientLike, target: str | Tool) -> LoadedApp:
    """The view at ``target``: a ``ui://`` URI, or a tool (its ``_meta.ui.resourceUri``)."""
    if isinstance(target, Tool):
        ui = app_of(target)
        if ui is None or ui.resource_uri is None:
            raise ValueError(f"tool {target.name!r} has no app")
        uri = ui.resource_uri
    else:
        uri = target
    if not uri.startswith("ui://"):
        raise ValueError(f"an app's URI uses the ui:// scheme (got {uri!r})")
    result = await client.read_resource(uri)
    for content in result.contents:
        item = content.to_wire()
        if item.get("uri") != uri:
            continue
        mime = str(item.get("mimeType") or "").replace(" ", "").lower()
        if mime != APP_MIME_TYPE:
            raise InvalidResponse(f"{uri}: served as {mime or 'no type'}, not {APP_MIME_TYPE}")
        try:
            meta = AppResourceMeta.of(item.get("_meta"))
        except ValueError as e:
            raise InvalidResponse(f"{uri}: malformed _meta.ui: {e}") from e
        return LoadedApp(uri, _decode(item, uri), meta)
    raise InvalidResponse(f"{uri}: resources/read returned no contents for it")


async def list_model_tools(client: ClientLike) -> list[Tool]:
    tools = await client.list_tools()
    return [t for t in tools if (ui := app_of(t)) is None or ui.for_model]


async def call_tool_from_app(
    client: ClientLike, name: str, arguments: Mapping[str, Any] | None
) -> CallToolResult:
    tools = {t.name: t for t in await client.list_tools()}
    tool = tools.get(name)
    ui = app_of(tool) if tool is not None else None
    if tool is None or (ui is not None and not ui.for_app):
        # A view may call its server's tools meant for views, and nothing else.
        raise InvalidParams(message=f"Unknown tool: {name}", data={"name": name})
    return await client.call_tool(name, arguments)
