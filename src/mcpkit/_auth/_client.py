"""The OAuth client side for machines: client credentials, found from the server's challenge.

:class:`ClientCredentials` is an ``auth=`` for :class:`mcpkit.Client` (and the HTTP
transports): it adds the bearer token to every request, and when the server answers 401
(or 403 ``insufficient_scope``) it follows the specification's discovery (the challenge's
``resource_metadata``, else the well-known paths; the Protected Resource Metadata names the
authorization server; its RFC 8414 / OpenID metadata names the token endpoint), asks for a
token with ``grant_type=client_credentials`` and the RFC 8707 ``resource`` of the server,
and the request is sent again once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio

from .._exceptions import AuthServerError, InsufficientScope, InvalidToken
from .._http._interface import HTTPClient
from ._fetch import basic_auth, fetch_json, first_json, issuer_metadata
from ._jwt import check_fetch_url, metadata_urls
from ._resource import WELL_KNOWN
from ._verifiers import canonical_resource

_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def parse_challenge(value: str) -> dict[str, str]:
    """The parameters of a ``Bearer`` challenge of a ``WWW-Authenticate`` value."""
    start = value.lower().find("bearer")
    if start < 0:
        return {}
    return {
        m.group(1).lower(): (
            re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else m.group(3)
        )
        for m in _PARAM.finditer(value[start + len("bearer") :])
    }


def prm_urls(server_url: str, named: str | None) -> list[str]:
    """Where the Protected Resource Metadata may be: the challenge's, else RFC 9728's
    path-aware well-known URL, then the root one."""
    parts = urlsplit(server_url)

    def at(path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    urls = [named] if named else []
    path = parts.path.rstrip("/")
    if path:
        urls.append(at(WELL_KNOWN + path))
    urls.append(at(WELL_KNOWN))
    return urls


class ClientCredentials:
    """OAuth 2.1 client credentials for a machine client: give it as ``auth=``.

    Args:
        client_id, client_secret: the credentials registered with the authorization server.
        scopes: scopes to ask for (default: those the server's challenge names, else its
            metadata's ``scopes_supported``, else none).
        method: how the client authenticates at the token endpoint:
            ``client_secret_basic`` (default) or ``client_secret_post``.
        http_client: what talks to the metadata and token endpoints (default: mcpkit's).
        clock: the time source (Unix seconds), for tests.

    Example::

        auth = ClientCredentials("my-agent", os.environ["AGENT_SECRET"])
        async with Client("https://mcp.example.com/mcp", auth=auth) as client:
            ...
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        scopes: Iterable[str] | None = None,
        method: str = "client_secret_basic",
        http_client: HTTPClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"unsupported token endpoint auth method {method!r}")
        self.client_id = client_id
        self._secret = client_secret
        self.scopes = list(scopes) if scopes is not None else None
        self.method = method
        self._http = http_client
        self._clock = clock
        self._token: str | None = None
        self._expires: float | None = None
        self._granted: list[str] = []
        self._lock = anyio.Lock()
        #: The issuer the current token came from.
        self.issuer: str | None = None

    def __repr__(self) -> str:  # never the secret or the token
        return f"ClientCredentials(client_id={self.client_id!r})"

    # ------------------------------------------------------------------ the header hook

    def __call__(self) -> dict[str, str]:
        token = self._token
        if token is None or (self._expires is not None and self._clock() >= self._expires):
            return {}
        return {"authorization": f"Bearer {token}"}

    async def on_challenge(self, url: str, status: int, challenge: str | None) -> bool:
        """The server refused ``url`` with ``status``: get a (better) token; True to retry."""
        params = parse_challenge(challenge or "")
        wanted = params.get("scope", "").split()
        if status == 403:
            # A step-up helps only if the challenge asks for a scope we do not hold yet
            # (the HTTP client retries a request once; this keeps it from asking in vain).
            if params.get("error") != "insufficient_scope" or set(wanted) <= set(self._granted):
                return False
        elif status != 401:
            return False
        async with self._lock:
            await self._fetch_token(url, params.get("resource_metadata"), wanted)
        return True

    # ------------------------------------------------------------------ discovery, token

    async def _fetch_token(self, url: str, named: str | None, challenged: list[str]) -> None:
        prm = await self._protected_resource(url, named)
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthServerError(f"{url}: the server's metadata names no authorization server")
        issuer = servers[0]
        meta = await issuer_metadata(self._http, issuer, metadata_urls(issuer))
        endpoint = meta.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthServerError(f"{issuer}: the authorization server has no token endpoint")
        check_fetch_url(endpoint, "token endpoint")
        if self.scopes is not None:
            scopes = self.scopes
        elif challenged:
            scopes = challenged
        else:
            supported = prm.get("scopes_supported")
            scopes = (
                [s for s in supported if isinstance(s, str)] if isinstance(supported, list) else []
            )
        # Step-up keeps what was granted before (the union), as the specification asks.
        scopes = list(dict.fromkeys([*self._granted, *scopes])) if challenged else scopes
        resource = prm.get("resource") if isinstance(prm.get("resource"), str) else None
        await self._token_request(endpoint, scopes, resource or canonical_resource(url))
        self.issuer = issuer

    async def _protected_resource(self, url: str, named: str | None) -> dict[str, Any]:
        where, doc = await first_json(
            self._http, prm_urls(url, named), "protected resource metadata"
        )
        resource = doc.get("resource")
        if isinstance(resource, str) and not canonical_resource(url).startswith(
            canonical_resource(resource)
        ):
            # RFC 9728 3.3: metadata for another resource must not be used.
            raise AuthServerError(f"{where}: the metadata is for {resource!r}, not {url!r}")
        return doc

    async def _token_request(self, endpoint: str, scopes: list[str], resource: str) -> None:
        form = {"grant_type": "client_credentials", "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        headers: dict[str, str] = {}
        if self.method == "client_secret_basic":
            headers = basic_auth(self.client_id, self._secret)
        else:
            form["client_id"] = self.client_id
            form["client_secret"] = self._secret
        status, answer = await fetch_json(self._http, endpoint, form=form, headers=headers)
        token = answer.get("access_token")
        if status != 200 or not isinstance(token, str):
            error = answer.get("error", f"HTTP {status}")
            description = answer.get("error_description", "")
            if error == "invalid_scope":
                raise InsufficientScope(f"the authorization server refused scope: {description}")
            raise InvalidToken(f"no token from {endpoint}: {error} {description}".strip())
        expires = answer.get("expires_in")
        self._token = token
        self._expires = (
            self._clock() + float(expires) - 5 if isinstance(expires, (int, float)) else None
        )
        granted = answer.get("scope")
        self._granted = granted.split() if isinstance(granted, str) else list(scopes)
