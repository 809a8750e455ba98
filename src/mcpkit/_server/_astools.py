"""Prompts and resources served as tools, for clients that only call tools.

Each kind is served by a pair of tools, not by one tool per item: the pair stays two tools
however many prompts and resources there are (every listed tool costs the model's
context), reads what is served at call time (mounted servers' items, items added later, no
list change of the tools for each), and ``read_resource`` reads any URI a resource template
matches, which one tool per item could not offer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._exceptions import ProtocolError, ToolError
from ._auth import authorize
from ._context import Context
from ._util import to_wire

if TYPE_CHECKING:
    from ._registry import Registry


class Host(Protocol):
    """What these tools use of their :class:`~mcpkit.Server` (which is one; named through
    this Protocol, not imported back: see _face)."""

    registry: Registry
    mask_errors: bool
    #: Which components a request sees (``_visibility.Visibility``: ``definitions``,
    #: ``hides``, ``hides_uri``).
    visibility: Any

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        annotations: Any = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        inline: bool = False,
    ) -> None: ...


_READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def _check_scopes(server: Host, ctx: Context, method: str, params: dict[str, Any]) -> None:
    # The scopes the item needs are needed through its tool too.
    rc = ctx._request
    if rc is not None and server.registry.scopes:
        authorize(rc, server.registry.scopes_for(method, params))


def _shown(server: Host, ctx: Context, kind: str) -> list[Any]:
    """The definitions of list ``kind`` the request sees (what its own list would give it)."""
    found: list[Any] = server.visibility.definitions(ctx._request, kind)
    return found


def _block(content: Any) -> dict[str, Any]:
    """A resource's contents as the content block a tool-only client shows best: text as
    text, an image or audio blob as such, anything else as an embedded resource."""
    c = to_wire(content)
    mime = str(c.get("mimeType") or "")
    if "text" in c and "blob" not in c:
        return {"type": "text", "text": c["text"]}
    for kind in ("image", "audio"):
        if mime.startswith(f"{kind}/") and "blob" in c:
            return {"type": kind, "data": c["blob"], "mimeType": mime}
    return {"type": "resource", "resource": c}


def prompt_tools(server: Host) -> tuple[Any, Any]:
    """The ``list_prompts`` and ``get_prompt`` tools of ``server``."""

    def list_prompts(ctx: Context) -> dict[str, Any]:
        """List the prompts this server offers: their names, descriptions and arguments."""
        return {"prompts": _shown(server, ctx, "prompts")}

    async def get_prompt(
        ctx: Context, name: str, arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Get a prompt filled in with its arguments: its messages (list them with list_prompts).

        Args:
            name: The prompt's name, as list_prompts gives it.
            arguments: The prompt's arguments, by name.
        """
        prompt = server.registry.prompts.get(name)
        if prompt is not None and server.visibility.hides(
            ctx._request, "prompt", name, prompt.definition
        ):
            prompt = None  # hidden: as unknown as through prompts/get
        if prompt is None:
            shown = _shown(server, ctx, "prompts")
            known = ", ".join(d["name"] for d in shown) or "none"
            raise ToolError(f"Unknown prompt {name!r} (prompts: {known})")
        _check_scopes(server, ctx, "prompts/get", {"name": name})
        try:
            result: dict[str, Any] = await prompt.get(arguments or {}, ctx)
        except ProtocolError as e:
            if e.code != -32602:  # a bad argument is the model's to fix; others are not
                raise
            raise ToolError(e.message) from None
        return result

    return list_prompts, get_prompt


def resource_tools(server: Host) -> tuple[Any, Any]:
    """The ``list_resources`` and ``read_resource`` tools of ``server``."""

    def list_resources(ctx: Context) -> dict[str, Any]:
        """List the resources this server offers (URIs, names, descriptions) and its
        resource templates (URI patterns read_resource also reads)."""
        return {
            "resources": _shown(server, ctx, "resources"),
            "resourceTemplates": _shown(server, ctx, "templates"),
        }

    async def read_resource(ctx: Context, uri: str) -> list[dict[str, Any]]:
        """Read a resource by URI (list them with list_resources).

        Args:
            uri: The resource's URI, or one matching a resource template.
        """
        if not server.registry.resolves(uri) or server.visibility.hides_uri(ctx._request, uri):
            raise ToolError(f"Unknown resource {uri!r} (list them with list_resources)")
        _check_scopes(server, ctx, "resources/read", {"uri": uri})
        try:
            contents = await server.registry.read(uri, ctx, mask_errors=server.mask_errors)
        except ProtocolError as e:
            if e.code not in (-32602, -32002):
                raise
            raise ToolError(e.message) from None
        return [_block(c) for c in contents]

    return list_resources, read_resource


class AsTools:
    """``Server.add_prompts_as_tools`` and ``Server.add_resources_as_tools``."""

    def add_prompts_as_tools(
        self, *, list_name: str = "list_prompts", get_name: str = "get_prompt"
    ) -> None:
        """Serve this server's prompts through two tools, for clients that only call tools:
        ``list_prompts()`` (the ``Prompt`` objects as ``prompts/list`` gives them) and
        ``get_prompt(name, arguments)`` (the ``GetPromptResult``). Both read what is served
        when called: mounted servers' prompts, prompts added later. A prompt's scopes are
        needed through ``get_prompt`` too. Raises ``ValueError`` if a name is taken.

        Example::

            server.add_prompts_as_tools()   # tools "list_prompts" and "get_prompt"
        """
        server = cast("Host", self)
        listing, getting = prompt_tools(server)
        server.add_tool(listing, name=list_name, annotations=_READ_ONLY, inline=True)
        server.add_tool(getting, name=get_name, annotations=_READ_ONLY)

    def add_resources_as_tools(
        self, *, list_name: str = "list_resources", read_name: str = "read_resource"
    ) -> None:
        """Serve this server's resources through two tools, for clients that only call
        tools: ``list_resources()`` (``resources`` and ``resourceTemplates``) and
        ``read_resource(uri)`` (any URI a resource or template serves: text contents as
        text, image and audio blobs as such, other blobs as embedded resources). Both read
        what is served when called. Raises ``ValueError`` if a name is taken.

        Example::

            server.add_resources_as_tools()   # tools "list_resources" and "read_resource"
        """
        server = cast("Host", self)
        listing, reading = resource_tools(server)
        server.add_tool(listing, name=list_name, annotations=_READ_ONLY, inline=True)
        server.add_tool(reading, name=read_name, annotations=_READ_ONLY, output_schema=False)
