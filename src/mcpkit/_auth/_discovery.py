"""How an OAuth client finds a protected server's authorization server (the MCP
specification's "Authorization Server Discovery").

From the server's 401 challenge (``WWW-Authenticate``) to the Protected Resource Metadata
(RFC 9728: the challenge's ``resource_metadata``, else the path-aware well-known URL, else
the root one), which names the authorization server, whose metadata (RFC 8414, else
OpenID Connect discovery, with the path inserted or appended) is checked to name that same
issuer (simple string comparison). A server that publishes no resource metadata is a
2025-03-26 server: its origin is the authorization server, and without metadata the
default endpoints ``/authorize``, ``/token`` and ``/register`` apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .._exceptions import AuthServerError
from .._http._interface import HTTPClient
from ._fetch import FetchError, fetch_json, first_json, issuer_metadata
from ._jwt import check_fetch_url, metadata_urls
from ._resource import WELL_KNOWN
from ._verifiers import canonical_resource

_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')
_SCHEME = re.compile(r"(?:^|,)\s*(bearer|dpop)(?=\s|,|$)", re.IGNORECASE)


def parse_challenge(value: str) -> dict[str, str]:
    """The parameters of the first ``Bearer`` or ``DPoP`` challenge of a
    ``WWW-Authenticate`` value (names lower-cased); ``scheme`` holds the scheme."""
    m = _SCHEME.search(value)
    if m is None:
        return {}
    params = {
        p.group(1).lower(): (
            re.sub(r"\\(.)", r"\1", p.group(2)) if p.group(2) is not None else p.group(3)
        )
        for p in _PARAM.finditer(value[m.end() :])
    }
    params["scheme"] = m.group(1).lower()
    return params


def _at(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def prm_urls(server_url: str, named: str | None) -> list[str]:
    """Where the Protected Resource Metadata may be: the challenge's, else RFC 9728's
    path-aware well-known URL, then the root one."""
    urls = [named] if named else []
    path = urlsplit(server_url).path.rstrip("/")
    if path:
        urls.append(_at(server_url, WELL_KNOWN + path))
    urls.append(_at(server_url, WELL_KNOWN))
    return urls


@dataclass
class Discovery:
    """What discovery found for one server: its resource, the issuer and its metadata."""

    #: The MCP endpoint discovery started from (tokens are kept under it).
    url: str
    #: The canonical resource URL tokens are asked for (RFC 8707).
    resource: str
    #: The authorization server's issuer identifier.
    issuer: str
    #: Its metadata (RFC 8414 / OpenID), or the 2025-03-26 default endpoints.
    metadata: dict[str, Any]
    #: The Protected Resource Metadata (empty for a 2025-03-26 server).
    protected: dict[str, Any] = field(default_factory=dict)

    def endpoint(self, name: str) -> str | None:
        """A metadata endpoint (``token_endpoint``, ...), checked to be https (or loopback)."""
        value = self.metadata.get(name)
        if not isinstance(value, str):
            return None
        check_fetch_url(value, name.replace("_", " "))
        return value

    def supports(self, key: str, value: str) -> bool:
        """Whether the metadata list ``key`` holds ``value``."""
        listed = self.metadata.get(key)
        return isinstance(listed, list) and value in listed


async def protected_resource(
    http: HTTPClient | None, url: str, named: str | None
) -> dict[str, Any] | None:
    """The server's Protected Resource Metadata; None when it publishes none (404s).

    Refused when it describes another resource (RFC 9728 section 3.3): a server cannot send
    a client's login to an authorization server for someone else's resource."""
    if named is not None:
        check_fetch_url(named, "resource metadata URL")
    try:
        where, doc = await first_json(http, prm_urls(url, named), "protected resource metadata")
    except FetchError as e:
        if e.status == 404 and named is None:
            return None
        raise
    resource = doc.get("resource")
    if not isinstance(resource, str) or not canonical_resource(url).startswith(
        canonical_resource(resource)
    ):
        raise AuthServerError(f"{where}: the metadata is for {resource!r}, not {url!r}")
    return doc


async def discover(http: HTTPClient | None, url: str, named: str | None) -> Discovery:
    """Protected resource metadata, then its authorization server's metadata (checked)."""
    prm = await protected_resource(http, url, named)
    if prm is None:
        return await _legacy(http, url)
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthServerError(f"{url}: the server's metadata names no authorization server")
    issuer = servers[0]
    check_fetch_url(issuer, "authorization server")
    # RFC 8414 3.3: the metadata must name the issuer asked for (simple string comparison).
    meta = await issuer_metadata(http, issuer, metadata_urls(issuer))
    return Discovery(url, str(prm["resource"]), issuer, meta, prm)


async def _legacy(http: HTTPClient | None, url: str) -> Discovery:
    # 2025-03-26: no resource metadata; the server's origin is the authorization server.
    origin = _at(url, "")
    status, meta = await _optional_json(http, _at(url, "/.well-known/oauth-authorization-server"))
    if status != 200:
        meta = {
            "issuer": origin,
            "authorization_endpoint": origin + "/authorize",
            "token_endpoint": origin + "/token",
            "registration_endpoint": origin + "/register",
            # 2025-03-26 made PKCE S256 mandatory for every authorization server; with no
            # metadata to ask, that rule is all there is.
            "code_challenge_methods_supported": ["S256"],
        }
    elif meta.get("issuer") not in (origin, origin + "/"):
        raise AuthServerError(f"{origin}: the metadata names issuer {meta.get('issuer')!r}")
    return Discovery(url, canonical_resource(url), str(meta["issuer"]), meta)


async def _optional_json(http: HTTPClient | None, url: str) -> tuple[int, dict[str, Any]]:
    try:
        return await fetch_json(http, url)
    except FetchError as e:
        if e.status is not None:
            return e.status, {}
        raise


def choose_scopes(
    challenged: Iterable[str],
    found: Discovery,
    configured: Iterable[str] | None,
    *,
    offline: bool,
) -> list[str]:
    """The scopes to ask for (MCP "Scope Selection Strategy"): the configured ones, else
    the challenge's, else the resource metadata's ``scopes_supported``, else none; plus
    ``offline_access`` when a refresh token is wanted and the issuer lists it."""
    if configured is not None:
        scopes = list(configured)
    else:
        scopes = list(challenged)
        if not scopes:
            supported = found.protected.get("scopes_supported")
            if isinstance(supported, list):
                scopes = [s for s in supported if isinstance(s, str)]
    if (
        offline
        and "offline_access" not in scopes
        and found.supports("scopes_supported", "offline_access")
    ):
        scopes.append("offline_access")
    return scopes


def token_error(answer: Mapping[str, Any], status: int) -> tuple[str, str]:
    """The OAuth ``error`` and ``error_description`` of a refused token request."""
    error = answer.get("error")
    description = answer.get("error_description")
    return (
        error if isinstance(error, str) else f"HTTP {status}",
        description if isinstance(description, str) else "",
    )
