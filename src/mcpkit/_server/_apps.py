"""The MCP Apps extension (``io.modelcontextprotocol/ui``) on the server side.

``server.app_resource(uri, source)`` serves a view: HTML given as a string, a file, or a
directory bundle whose ``index.html`` gets its local scripts, stylesheets and images
inlined (a host renders the view from one document, without a network). Files are read
on each ``resources/read``, so an edited view shows on the next call without a restart.
``@server.tool(app=...)`` links a tool to its view through ``_meta.ui``.

Visibility: a host (a client declaring the extension) gets every tool and keeps the
``["app"]``-only ones away from its model itself, as the extension asks of hosts. A client
that is not a host would hand such a tool to its model, so it does not see it at all:
``tools/list`` leaves it out and ``tools/call`` answers it as an unknown tool.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._exceptions import InvalidApp, InvalidParams
from .._session._base import RequestContext, RequestHandlerFn
from ..types._appconst import APP_MIME_TYPE, APPS_EXTENSION, callable_by
from ._extensions import Extension, client_supports

if TYPE_CHECKING:
    # The models need pydantic: imported where a server has an app (a plain server that
    # serves none never loads pydantic, tests/server/test_scalar_signatures.py).
    from ..types._apps import AppCsp, AppPermissions
    from ._face import ServerLike

#: The page a directory bundle is served from.
BUNDLE_INDEX = "index.html"
#: The most bytes a view may have once inlined (a host holds it in memory, whole).
MAX_APP_BYTES = 8 * 1024 * 1024

_SCRIPT = re.compile(
    r"<script\b([^>]*?)\bsrc\s*=\s*[\"']([^\"']+)[\"']([^>]*)>\s*</script\s*>", re.IGNORECASE
)
_STYLESHEET = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_HREF = re.compile(r"\bhref\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_IMG = re.compile(r"(<img\b[^>]*?\bsrc\s*=\s*)([\"'])([^\"']+)\2", re.IGNORECASE)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.IGNORECASE)
#: A CSP origin as the ext-apps server validator takes one (rule APP-009): an http(s) or
#: ws(s) scheme, an optional ``*.`` wildcard, a host (and port) with no path. Quotes, ``;``
#: and ``,`` are refused too: in a policy they would end the directive or the source. One
#: more than the validator takes: a port wildcard (``http://127.0.0.1:*``), valid CSP and
#: the only way to name a loopback server whose port is not known in advance.
_ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[^\s/*;,'\"]+(:\*)?")
#: The deprecated flat form of a tool's ``_meta.ui.resourceUri`` (still read by hosts).
_FLAT_RESOURCE_URI = "ui/resourceUri"


class AppsExtension(Extension):
    """Serves ``io.modelcontextprotocol/ui``: declared, in both eras, once a server has an
    app; hides app-only tools from clients that are not hosts."""

    id = APPS_EXTENSION

    def attach(self, server: ServerLike) -> None:
        self.server = server
        handlers = server._protocol
        self._core_list: RequestHandlerFn = handlers.tools_list
        self._core_call: RequestHandlerFn = handlers.tools_call
        self._core_read: RequestHandlerFn = cast(Any, handlers).resources_read

    def settings(self) -> dict[str, Any] | None:
        return {"mimeTypes": [APP_MIME_TYPE]}

    def methods(self) -> Mapping[str, RequestHandlerFn]:
        return {
            "tools/list": self.tools_list,
            "tools/call": self.tools_call,
            "resources/read": self.resources_read,
        }

    def app_only(self) -> frozenset[str]:
        """The tools only views may call (``visibility: ["app"]``)."""
        return frozenset(
            name
            for name, tool in self.server.registry.tools.items()
            if not for_model(tool.definition.get("_meta"))
        )

    async def tools_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        result = await self._core_list(rc, params)
        if client_supports(rc, APPS_EXTENSION):
            return result
        hidden = self.app_only()
        if not hidden or not isinstance(result, dict):
            return result
        shown = [t for t in result.get("tools", ()) if t.get("name") not in hidden]
        return {**result, "tools": shown}

    async def tools_call(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        name = params.get("name") if isinstance(params, dict) else None
        if (
            isinstance(name, str)
            and not client_supports(rc, APPS_EXTENSION)
            and name in self.app_only()
        ):
            # Answered as the core answers a tool it does not have: no hint that it exists.
            raise InvalidParams(message=f"Unknown tool: {name}", data={"name": name})
        if (
            isinstance(name, str)
            and name not in self.server.registry.tools
            and client_supports(rc, APPS_EXTENSION)
        ):
            served = view_tool(self.server, name)
            if served is not None:
                params = {**cast("dict[str, Any]", params), "name": served}
        return await self._core_call(rc, params)

    async def resources_read(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = params.get("uri") if isinstance(params, dict) else None
        if (
            isinstance(uri, str)
            and not self.server.registry.resolves(uri)
            and client_supports(rc, APPS_EXTENSION)
        ):
            served = view_resource(self.server, uri)
            if served is not None:
                params = {**cast("dict[str, Any]", params), "uri": served}
        return await self._core_read(rc, params)


def _origin_names(
    server: ServerLike, table: str = "tools", seen: frozenset[int] = frozenset()
) -> dict[str, str]:
    """Each tool (``table="resources"``: each resource) this server serves -> the name (the
    URI) its own server gave it: without the prefixes of every mount in between; a remote
    mount's as it lists it."""
    names = {name: name for name in getattr(server.registry, table)}
    for mount in server._mounts:
        prefix: str | None = getattr(mount, "prefix", None)
        child = getattr(mount, "child", None)
        inner_names = (
            _origin_names(child, table, seen | {id(server)})
            if child is not None and id(child) not in seen
            else {}
        )
        for kind, key in getattr(mount, "keys", ()):
            if kind != table or key not in names:
                continue
            if table == "tools":
                inner: str | None = key if prefix is None else key[len(prefix) + 1 :]
            else:
                inner = cast(Any, mount).inner_uri(key)
            if inner is not None:
                names[key] = inner_names.get(inner, inner)
    return names


def _ambiguous(what: str, name: str, found: list[str]) -> InvalidParams:
    return InvalidParams(
        message=(
            f"Unknown {what}: {name} (a view's name for {' and '.join(found)}, which this "
            "server serves from more than one mount: ask for one of those)"
        ),
        data={"uri" if what == "resource" else "name": name, "candidates": found},
    )


def view_tool(server: ServerLike, name: str) -> str | None:
    """The tool a view means by ``name`` when its server is mounted here under a prefix.

    A view calls its server's tools by the names that server gave them (``increment``);
    the extension has the host send its ``tools/call`` to the server as written, so behind
    a mount it names a tool this server serves prefixed (``p_increment``). The one tool
    served here whose own server named it ``name`` and that views may call is meant; None
    when there is none (the core answers it as unknown). Two such tools (one server
    mounted twice): :class:`~mcpkit.InvalidParams` naming both, since the call does not say
    which view sent it."""
    tools = server.registry.tools
    found = sorted(
        key
        for key, origin in _origin_names(server).items()
        if origin == name and key != name and _for_app(tools[key].definition.get("_meta"))
    )
    if len(found) > 1:
        raise _ambiguous("tool", name, found)
    return found[0] if found else None


def view_resource(server: ServerLike, uri: str) -> str | None:
    """The resource a view means by ``uri`` when its server is mounted here under a prefix
    (``ui://counter/data``, served here as ``ui://p/counter/data``): the one resource whose
    own server gave it that URI (resources, not templates); None when there is none. Two
    (one server mounted twice): :class:`~mcpkit.InvalidParams` naming both."""
    found = sorted(
        key
        for key, origin in _origin_names(server, "resources").items()
        if origin == uri and key != uri
    )
    if len(found) > 1:
        raise _ambiguous("resource", uri, found)
    return found[0] if found else None


def apps_extension(server: ServerLike) -> AppsExtension:
    """The server's apps extension, added on first use."""
    found = server.extensions.get(APPS_EXTENSION)
    if isinstance(found, AppsExtension):
        return found
    if found is not None:
        raise ValueError(f"another extension is already served as {APPS_EXTENSION!r}")
    ext = AppsExtension()
    server.add_extension(ext)
    return ext


def tool_meta(
    server: ServerLike, meta: Mapping[str, Any] | None, app: Any
) -> Mapping[str, Any] | None:
    """``meta`` with the tool's ``ui`` member for ``app`` (a ``ui://`` URI, an
    :class:`AppToolMeta` or its dict); the extension is declared from then on."""
    if app is None:
        return meta
    from ..types._apps import AppToolMeta

    if isinstance(app, str):
        ui = AppToolMeta(resource_uri=app)
    elif isinstance(app, AppToolMeta):
        ui = app
    elif isinstance(app, Mapping):
        ui = AppToolMeta.model_validate(dict(app))
    else:
        raise TypeError("app= takes a ui:// URI, an AppToolMeta or its dict")
    if ui.resource_uri is not None and not ui.resource_uri.startswith("ui://"):
        raise ValueError(f"an app's resource URI uses the ui:// scheme (got {ui.resource_uri!r})")
    if ui.visibility is not None and not ui.visibility:
        raise ValueError("visibility names who may call the tool: 'model', 'app' or both")
    apps_extension(server)
    return {**(meta or {}), "ui": ui.to_wire()}


def for_model(meta: Any) -> bool:
    """Whether the model may see a tool with this ``_meta`` (else only views may call it)."""
    return callable_by(meta, "model")


def _for_app(meta: Any) -> bool:
    """Whether a view may call a tool with this ``_meta`` (no ``visibility``: both may)."""
    return callable_by(meta, "app")


def check_tool_ui(name: str, ui: Any) -> None:
    """Raise :class:`~mcpkit.InvalidApp` for a tool's ``_meta.ui`` the ext-apps validator
    refuses: a ``resourceUri`` not ``ui://``, a ``visibility`` that is not a non-empty list
    of ``"model"`` and ``"app"``."""
    if not isinstance(ui, Mapping):
        raise InvalidApp(f"the tool {name!r}: _meta.ui is an object, not {ui!r}")
    uri = ui.get("resourceUri")
    if uri is not None and (not isinstance(uri, str) or not uri.startswith("ui://")):
        raise InvalidApp(f"the tool {name!r}: its view's URI uses the ui:// scheme, not {uri!r}")
    visibility = ui.get("visibility")
    if visibility is not None and (
        not isinstance(visibility, list)
        or not visibility
        or any(v not in ("model", "app") for v in visibility)
    ):
        raise InvalidApp(
            f"the tool {name!r}: visibility is a non-empty list of 'model' and 'app', "
            f"not {visibility!r}"
        )


def check_csp(uri: str, csp: Any) -> None:
    """Raise :class:`~mcpkit.InvalidApp` naming the view and the entry when its
    ``_meta.ui.csp`` lists something that is not an origin (what the ext-apps validator
    refuses: a path, a bare host, another scheme, a ``*`` elsewhere than ``*.`` first)."""
    if not isinstance(csp, Mapping):
        return
    for key, domains in csp.items():
        if not isinstance(domains, list):
            continue
        for domain in domains:
            if not isinstance(domain, str) or _ORIGIN.fullmatch(domain) is None:
                raise InvalidApp(
                    f"the app {uri}: csp.{key} entry {domain!r} is not an origin (expected "
                    "a scheme http, https, ws or wss and a host, no path: "
                    "'https://api.example.com', 'https://*.example.com')"
                )


def app_uri(definition: Mapping[str, Any]) -> str | None:
    """The view a tool's definition names (``_meta.ui.resourceUri``, else the deprecated
    flat ``_meta["ui/resourceUri"]``); None: the tool has none."""
    meta = definition.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    if uri is None:
        uri = meta.get(_FLAT_RESOURCE_URI)
    return uri if isinstance(uri, str) else None


def moved_app_meta(meta: Any, move: Callable[[str], str]) -> Any:
    """A mounted tool's ``_meta`` with the view it names moved as the mount moves the
    mounted server's resources (``move``): the host then reads it where it is served."""
    if not isinstance(meta, Mapping):
        return meta
    out = dict(meta)
    ui = meta.get("ui")
    if isinstance(ui, Mapping) and isinstance(ui.get("resourceUri"), str):
        out["ui"] = {**ui, "resourceUri": move(ui["resourceUri"])}
    if isinstance(meta.get(_FLAT_RESOURCE_URI), str):
        out[_FLAT_RESOURCE_URI] = move(meta[_FLAT_RESOURCE_URI])
    return out


def serves_apps(entries: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether a mount's entries (table -> key -> entry) hold an app: a tool with
    ``_meta.ui`` (or the flat key) or a view served as the app MIME type."""
    for entry in entries.get("tools", {}).values():
        meta = entry.definition.get("_meta")
        if isinstance(meta, Mapping) and ("ui" in meta or _FLAT_RESOURCE_URI in meta):
            return True
    return any(
        entry.definition.get("mimeType") == APP_MIME_TYPE
        for entry in entries.get("resources", {}).values()
    )


def declare_mounted_apps(parent: ServerLike) -> None:
    """A server mounting apps serves the extension as the mounted server would: declared,
    and its app-only tools kept from clients that are not hosts (an extension of the
    author's own under the same id is left as it is)."""
    if APPS_EXTENSION not in parent.extensions:
        apps_extension(parent)


def check_apps(server: ServerLike, _seen: set[int] | None = None) -> None:
    """Refuse to serve an app no host could render: raise :class:`~mcpkit.InvalidApp`
    naming the first tool whose ``_meta.ui.resourceUri`` is not served (a resource or a
    template of this server) and the first view whose CSP lists something that is not an
    origin. Called when the server starts serving: a view may be registered after its
    tool. Tools a mount brought are checked on their own server: those of this process
    here, before anything starts (a remote server's are its own business)."""
    seen = _seen if _seen is not None else set()
    seen.add(id(server))
    for mount in server._mounts:
        child = getattr(mount, "child", None)
        if child is not None and id(child) not in seen:  # servers may mount each other
            check_apps(child, seen)
    if APPS_EXTENSION not in server.extensions:
        return  # no app: nothing to read (and pydantic not loaded)
    registry = server.registry
    mounted = {
        key for m in server._mounts for table, key in getattr(m, "keys", ()) if table == "tools"
    }
    for name, tool in registry.tools.items():
        if name in mounted:
            continue
        meta = tool.definition.get("_meta")
        if isinstance(meta, Mapping) and "ui" in meta:
            check_tool_ui(name, meta["ui"])  # set by hand through meta= (app= checks its own)
        uri = app_uri(tool.definition)
        if uri is None or registry.resolves(uri):
            continue
        raise InvalidApp(
            f"the tool {name!r} names the view {uri}, which this server does not serve "
            f"(register it: server.app_resource({uri!r}, html))"
        )
    for uri, resource in registry.resources.items():
        meta = resource.definition.get("_meta")
        ui = meta.get("ui") if isinstance(meta, Mapping) else None
        if isinstance(ui, Mapping):
            check_csp(uri, ui.get("csp"))


def _typed(value: Any, model: type[Any], what: str) -> Any:
    if value is None or isinstance(value, model):
        return value
    if isinstance(value, Mapping):
        return model.model_validate(dict(value))
    raise TypeError(f"{what} takes a {model.__name__} or its dict")


class AppMixin:
    """``Server.app_resource``: kept here with the rest of the extension."""

    def app_resource(
        self,
        uri: str,
        source: str | os.PathLike[str] | Callable[[], str],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: AppCsp | Mapping[str, Any] | None = None,
        permissions: AppPermissions | Mapping[str, Any] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
    ) -> None:
        """Serve an app's view at ``uri`` (``ui://...``) as ``text/html;profile=mcp-app``.

        ``source``: the HTML as a string; a path to an HTML file; a path to a directory
        whose ``index.html`` gets its local ``<script src>``, ``<link rel=stylesheet>`` and
        ``<img src>`` inlined; or a function returning the HTML. ``csp`` (the origins the
        view may reach; none when omitted), ``permissions``, ``domain`` and
        ``prefers_border`` are its ``_meta.ui``, listed and sent with every read.

        Example::

            server.app_resource("ui://counter", Path(__file__).parent / "counter.html")

            @server.tool(app="ui://counter")
            def counter() -> dict: ...
        """
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise ValueError(f"an app's resource URI uses the ui:// scheme (got {uri!r})")
        from ..types._apps import AppCsp, AppPermissions, AppResourceMeta

        typed_csp = _typed(csp, AppCsp, "csp")
        if typed_csp is not None:
            check_csp(uri, typed_csp.to_wire())
        ui = AppResourceMeta(
            csp=typed_csp,
            permissions=_typed(permissions, AppPermissions, "permissions"),
            domain=domain,
            prefers_border=prefers_border,
        ).to_wire()
        read = _reader(source)
        contents_meta = {"ui": ui} if ui else None

        def view() -> dict[str, Any]:
            html = read()
            if len(html.encode()) > MAX_APP_BYTES:
                raise ValueError(f"the app {uri} is over {MAX_APP_BYTES} bytes")
            item: dict[str, Any] = {"uri": uri, "mimeType": APP_MIME_TYPE, "text": html}
            if contents_meta is not None:
                item["_meta"] = contents_meta
            return item

        server = cast("ServerLike", self)
        apps_extension(server)
        server.add_resource(
            uri,
            view,
            name=name or uri[len("ui://") :].strip("/") or "app",
            title=title,
            description=description,
            mime_type=APP_MIME_TYPE,
            meta={**(meta or {}), **({"ui": ui} if ui else {})} or None,
            scopes=scopes,
        )


def _reader(source: Any) -> Callable[[], str]:
    if isinstance(source, str):
        return lambda: source
    if isinstance(source, os.PathLike):
        path = Path(source)
        if path.is_dir():
            if not (path / BUNDLE_INDEX).is_file():
                raise ValueError(f"{path}: an app bundle needs an {BUNDLE_INDEX}")
            return lambda: inline_bundle(path)
        if not path.is_file():
            raise ValueError(f"{path}: no such file or directory")
        return lambda: path.read_text(encoding="utf-8")
    if callable(source):
        return lambda: _text(source())
    raise TypeError("an app's source is HTML (str), a path, or a function returning HTML")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("an app's source function must return the HTML as a str")
    return value


def _local(root: Path, ref: str) -> Path | None:
    """The bundle file ``ref`` names, or None for a URL, an absolute path or a file
    outside the bundle (those are left as written: the view's CSP decides)."""
    if _EXTERNAL.match(ref) or ref.startswith("/"):
        return None
    target = (root / ref.split("?", 1)[0].split("#", 1)[0]).resolve()
    if not target.is_relative_to(root.resolve()) or not target.is_file():
        return None
    return target


def inline_bundle(root: Path) -> str:
    """``root/index.html`` with its local scripts, stylesheets and images inlined."""
    html = (root / BUNDLE_INDEX).read_text(encoding="utf-8")

    def script(m: re.Match[str]) -> str:
        path = _local(root, m.group(2))
        if path is None:
            return m.group(0)
        code = path.read_text(encoding="utf-8").replace("</script", "<\\/script")
        attrs = (m.group(1) + m.group(3)).strip()
        return f"<script{' ' + attrs if attrs else ''}>{code}</script>"

    def stylesheet(m: re.Match[str]) -> str:
        tag = m.group(0)
        href = _HREF.search(tag)
        if not re.search(r"\brel\s*=\s*[\"']?stylesheet", tag, re.IGNORECASE) or href is None:
            return tag
        path = _local(root, href.group(1))
        if path is None:
            return tag
        return (
            "<style>"
            + path.read_text(encoding="utf-8").replace("</style", "<\\/style")
            + "</style>"
        )

    def image(m: re.Match[str]) -> str:
        path = _local(root, m.group(3))
        if path is None:
            return m.group(0)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"{m.group(1)}{m.group(2)}data:{mime};base64,{data}{m.group(2)}"

    html = _SCRIPT.sub(script, html)
    html = _STYLESHEET.sub(stylesheet, html)
    return _IMG.sub(image, html)
