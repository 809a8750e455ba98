"""The inspector's web side: the page (shipped in the package, no network fetch) and a small
JSON API over :class:`~mcpkit._inspect._state.Inspector`, as a bare ASGI app.

Only the person who started it can drive it: every request must name a loopback ``Host``
and the inspector's port, parsed strictly (DNS rebinding: no userinfo, no trailing bytes),
the page needs the random token in its URL, and the API the same token in an
``X-Inspector-Token`` header, which no other site's page can send without a CORS preflight
this app never grants. A request whose ``Origin`` is not the page's own (``http://`` and
the request's ``Host``) is refused too.

On a second port (another origin) it serves the MCP Apps sandbox proxy, ``GET
/sandbox?csp=...`` and nothing else: a page holding no secret, which only the inspector's
page may frame (``frame-ancestors``), under the policy of the view it is to load
(``_apps.py``).
"""

from __future__ import annotations

import hmac
import json
import logging
import uuid
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from .._exceptions import MCPError
from .._http._asgi import (
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    header_map,
    read_body,
    serve_lifespan,
)
from .._http._security import LOCAL_HOSTS, HostOriginPolicy
from ..types import app_csp_header
from ._apps import approved_from_wire, load_app
from ._state import Inspector

logger = logging.getLogger("mcpkit.inspect")

MAX_BODY = 4 * 1024 * 1024
Scope = dict[str, Any]


def loopback_policy(port: int) -> HostOriginPolicy:
    """Loopback hosts on ``port`` only (``Host`` parsed strictly); no origin of its own: the
    app admits only the page's (``http://`` and the request's ``Host``)."""
    hosts = [f"{h}:{port}" for h in LOCAL_HOSTS]
    if port == 80:
        hosts += LOCAL_HOSTS  # a browser leaves the default port out of Host
    return HostOriginPolicy(hosts, [])


def page_html(sandbox_port: int = 0) -> str:
    """The page: HTML with its script and style inlined (one response, no asset routes)."""
    assets = resources.files("mcpkit._inspect") / "assets"
    html = (assets / "index.html").read_text(encoding="utf-8")
    css = (assets / "app.css").read_text(encoding="utf-8")
    # The palette (theme.js) and the MCP Apps host (apps.js) first: app.js installs them.
    scripts = ("theme.js", "apps.js", "app.js")
    js = "".join((assets / f).read_text(encoding="utf-8") for f in scripts)
    js = js.replace("/*SANDBOX_PORT*/0", str(int(sandbox_port)))
    return html.replace("/*STYLE*/", css).replace("/*SCRIPT*/", js)


def origins(port: int, *, csp: bool = False) -> list[str]:
    """The origins a browser gives a loopback page on ``port`` (for a CSP source list: no
    IPv6 literal, which CSP cannot express; the inspector listens on 127.0.0.1 anyway)."""
    hosts = [h for h in LOCAL_HOSTS if not (csp and h.startswith("["))]
    return [f"http://{h}" + ("" if port == 80 else f":{port}") for h in hosts]


def sandbox_html(page_port: int) -> str:
    """The sandbox proxy's page; it takes messages from the inspector's page only."""
    assets = resources.files("mcpkit._inspect") / "assets"
    html = (assets / "sandbox.html").read_text(encoding="utf-8")
    return html.replace("/*HOSTS*/[]", _script_json(origins(page_port)))


def _script_json(value: Any) -> str:
    return json.dumps(value).replace("<", "\\u003c")


class InspectorApp:
    """ASGI app serving the inspector page and its API."""

    def __init__(
        self,
        inspector: Inspector,
        token: str,
        *,
        port: int,
        sandbox_port: int = 0,
        on_page: Callable[[], None] | None = None,
    ) -> None:
        self.inspector = inspector
        self.token = token
        self.port = port
        self._policy = loopback_policy(port)
        #: The MCP Apps sandbox proxy's port (0: none); another origin than the page's.
        self.sandbox_port = sandbox_port
        self._sandbox_policy = loopback_policy(sandbox_port) if sandbox_port else None
        #: Called each time the page is served to someone holding the token.
        self._on_page = on_page
        self._page = page_html(sandbox_port)
        self._sandbox = sandbox_html(port)
        frames = " ".join(origins(sandbox_port, csp=True)) if sandbox_port else "'none'"
        self._page_csp = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            f"img-src data:; media-src data:; connect-src 'self'; frame-src {frames}; "
            "frame-ancestors 'none'; "
            # CSP governs no WebRTC but this directive (CSP Level 3), inherited by the
            # views' srcdoc frames (through the sandbox proxy's policy, which has it too);
            # Chromium (156) ignores it as unknown: docs/apps.md.
            "webrtc 'block'"
        ).encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = header_map(scope)  # a repeated Host joined: refused by host_ok
        host, origin = headers.get("host", ""), headers.get("origin")
        server = scope.get("server") or ("", 0)
        if self._sandbox_policy is not None and server[1] == self.sandbox_port:
            await self._serve_sandbox(scope, send, host)
            return
        if not self._policy.host_ok(host):
            await _send(send, 403, {"error": "the inspector answers on localhost only"})
            return
        # Host is a valid loopback authority by now: an Origin equal to it is the page's.
        if origin is not None and origin.strip().lower() != f"http://{host.strip().lower()}":
            await _send(send, 403, {"error": "requests from other origins are refused"})
            return
        path = scope["path"]
        if path == "/" and scope["method"] == "GET":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if not self._token_ok((query.get("token") or [""])[0]):
                await _send(
                    send, 403, {"error": "open the URL the inspector printed (with its token)"}
                )
                return
            if self._on_page is not None:
                self._on_page()
            await _send_page(send, self._page, self._page_csp)
            return
        if not path.startswith("/api/"):
            await _send(send, 404, {"error": "not found"})
            return
        if not self._token_ok(headers.get("x-inspector-token", "")):
            await _send(send, 403, {"error": "missing or wrong inspector token"})
            return
        try:
            body = await _body(receive) if scope["method"] == "POST" else {}
            result = await self.route(scope["method"], path[5:], scope, body)
        except ClientGone:
            return  # left before its body was read: nobody to answer
        except MCPError as e:
            error = {
                "code": getattr(e, "code", None),
                "message": str(e),
                "data": getattr(e, "data", None),
            }
            await _send(send, 200, {"error": error})
            return
        except (ValueError, KeyError, TypeError) as e:
            await _send(send, 400, {"error": {"message": f"bad request: {e}"}})
            return
        payload = {"result": result}
        if scope.get("mcpkit.request_id") is not None:  # a call's: a view's toolInfo.id
            payload["requestId"] = scope["mcpkit.request_id"]
        await _send(send, 200, payload)

    async def _serve_sandbox(self, scope: Scope, send: Any, host: str) -> None:
        """The sandbox proxy's port: its page, under the CSP of the view it is to load."""
        assert self._sandbox_policy is not None
        if not self._sandbox_policy.host_ok(host):
            await _send(send, 403, {"error": "the inspector answers on localhost only"})
            return
        if scope["path"] != "/sandbox" or scope["method"] != "GET":
            await _send(send, 404, {"error": "not found"})
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        try:
            csp = approved_from_wire(json.loads((query.get("csp") or ["{}"])[0]))
        except ValueError as e:  # a JSONDecodeError too
            await _send(send, 400, {"error": f"bad request: {e}"})
            return
        policy = app_csp_header(csp)
        html = self._sandbox.replace('/*POLICY*/""', _script_json(policy))
        # Framed by the inspector's page only; the view's srcdoc frame inherits the whole
        # policy, so its own origin (opaque) and the proxy's are ancestors it may have.
        ancestors = " ".join([*origins(self.port, csp=True), *origins(self.sandbox_port, csp=True)])
        header = f"{policy}; frame-ancestors {ancestors}; webrtc 'block'"
        await _send_page(send, html, header.encode(), frame=True)

    def _token_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def route(self, method: str, name: str, scope: Scope, body: dict[str, Any]) -> Any:
        """The API: ``GET info|questions|events|list/<kind>``, ``POST`` the rest."""
        ins = self.inspector
        if method == "GET":
            if name == "info":
                return ins.info()
            if name == "events":
                query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                return await ins.events_after(int((query.get("after") or ["0"])[0]))
            if name == "questions":
                return ins.questions()
            if name.startswith("list/"):
                return await ins.listing(name[5:])
            raise KeyError(name)
        if name == "call":
            call_id = str(body.get("id") or uuid.uuid4().hex)
            result = await ins.call(
                call_id, _str(body, "name"), _dict(body, "arguments"), bool(body.get("task"))
            )
            scope["mcpkit.request_id"] = ins.request_id(call_id)
            return result
        if name == "cancel":
            return ins.cancel(_str(body, "id"))
        if name == "cancel-task":
            return await ins.cancel_task(_str(body, "taskId"))
        if name == "read":
            return await ins.read(_str(body, "uri"))
        if name == "app":  # an MCP Apps view, with the CSP it is rendered under
            return await load_app(ins.need(), _str(body, "uri"))
        if name == "subscribe":
            return await ins.subscribe(_str(body, "uri"), bool(body.get("on", True)))
        if name == "prompt":
            return await ins.prompt(_str(body, "name"), _dict(body, "arguments"))
        if name == "complete":
            return await ins.complete(
                _dict(body, "ref"),
                _str(body, "argument"),
                str(body.get("value", "")),
                body.get("context"),
            )
        if name == "answer":
            ins.answer(int(body["id"]), _dict(body, "answer"))
            return True
        if name == "roots":
            await ins.set_roots(list(body.get("roots") or []))
            return ins.roots
        if name == "level":
            await ins.set_level(_str(body, "level"))
            return True
        if name == "reconnect":
            ins.reconnect()
            return True
        raise KeyError(name)


def _str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def _dict(body: dict[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object")
    return value


async def _body(receive: Any) -> dict[str, Any]:
    # The endpoint's reader: a body over the bound is read on and dropped before it is
    # refused (a client that closes after its request then reads the 400, not a reset).
    try:
        raw = await read_body(receive, MAX_BODY)
    except BodyTooLarge:
        raise ValueError("body too large") from None
    except BodyTimeout:
        raise ValueError("body too slow") from None
    data = json.loads(raw or b"{}")
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    return data


async def _send(send: Any, status: int, payload: Any) -> None:
    body = json.dumps(payload, default=str).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"cache-control", b"no-store"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _send_page(send: Any, html: str, csp: bytes, *, frame: bool = False) -> None:
    body = html.encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"cache-control", b"no-store"),
        (b"referrer-policy", b"no-referrer"),  # the token stays out of Referer
        (b"content-security-policy", csp),
        (b"content-length", str(len(body)).encode()),
    ]
    if not frame:
        headers.append((b"x-frame-options", b"DENY"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
