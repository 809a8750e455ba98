"""Who is calling: the identity a verified access token stands for.

Plain data at the bottom of the layers, so that the HTTP transport can carry it with each
request and ``ctx.principal`` can hand it to a tool without either knowing how tokens are
checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Principal:
    """The caller a verified access token stands for.

    The raw token is not kept: code serving a request can see who called and with which
    scopes, but cannot pass the caller's token on to another service (no token passthrough).

    Attributes:
        subject: the resource owner (``sub``), or None for a token without one.
        client_id: the OAuth client the token was issued to (``client_id``, ``azp`` or ``cid``).
        scopes: the granted scopes.
        issuer: the authorization server that issued the token (``iss``).
        audience: the resources the token is for (``aud``).
        expires_at: expiry as a Unix time, or None.
        claims: every claim of the token (or of the introspection answer).

    Example::

        @server.tool()
        def whoami(ctx: Context) -> str:
            '''Who is calling.'''
            p = ctx.principal
            return p.subject or "anonymous" if p else "local"
    """

    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def key(self) -> str:
        """The identity sessions, streams and tasks are bound to: issuer and subject (or
        the client, for a token acting on its own behalf)."""
        who = f"sub:{self.subject}" if self.subject is not None else f"client:{self.client_id}"
        return f"{self.issuer or ''} {who}"

    def missing(self, needed: Iterable[str]) -> list[str]:
        """The scopes of ``needed`` this principal was not granted, in order."""
        return [s for s in needed if s not in self.scopes]


def principal_of(rc: Any) -> tuple[bool, Principal | None]:
    """``(over HTTP, principal)`` of the request a low-level request context serves, as
    its transport described it (``rc.transport``, a ``TransportInfo``)."""
    info = rc.transport
    return info.remote, info.principal


def scope_set(value: Any) -> frozenset[str]:
    """Scopes from a claim: a space-separated string (RFC 6749 ``scope``) or a list (``scp``)."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, (list, tuple)):
        return frozenset(s for s in value if isinstance(s, str))
    return frozenset()
