"""Token verifiers: the pluggable check of a bearer token, and the shipped simple ones.

A verifier turns a token into a :class:`Principal` or raises :class:`InvalidToken`. The JWT
verifier is in ``_jwt``; here are the interface, static development tokens and RFC 7662
introspection.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from .._exceptions import InvalidToken
from .._http._interface import HTTPClient
from ._fetch import FetchError, basic_auth, fetch_json
from ._principal import Principal, scope_set


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks a bearer token: returns who it stands for, or raises :class:`InvalidToken`.

    A verifier must check the token's audience (that it was issued for this server) unless
    the :class:`ResourceServer` can: it refuses any principal whose ``audience`` is set and
    does not name the server's resource.

    Example::

        class MyVerifier:
            async def verify(self, token: str) -> Principal:
                user = await my_sessions.lookup(token)
                if user is None:
                    raise InvalidToken("unknown token")
                return Principal(subject=user.id, scopes=frozenset(user.scopes))
    """

    async def verify(self, token: str) -> Principal:
        """Who ``token`` stands for; raises :class:`InvalidToken` when it is not usable."""
        ...


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class StaticTokenVerifier:
    """Fixed tokens, for development and tests: ``{token: scopes or Principal}``.

    Example::

        verifier = StaticTokenVerifier({"dev-token": ["mcp:tools"]}, subject="dev")
    """

    def __init__(
        self,
        tokens: Mapping[str, Iterable[str] | Principal],
        *,
        subject: str | None = "dev",
    ) -> None:
        # Kept by digest, compared in constant time: the verifier holds no token in clear.
        self._tokens: list[tuple[bytes, Principal]] = []
        for token, value in tokens.items():
            principal = (
                value
                if isinstance(value, Principal)
                else Principal(subject=subject, scopes=frozenset(value))
            )
            self._tokens.append((_digest(token), principal))

    async def verify(self, token: str) -> Principal:
        digest = _digest(token)
        found: Principal | None = None
        for known, principal in self._tokens:
            if hmac.compare_digest(known, digest):
                found = principal
        if found is None:
            raise InvalidToken("the access token is not valid")
        return found


class IntrospectionVerifier:
    """RFC 7662 token introspection: asks the authorization server about each token.

    Answers are cached (by the token's digest) for ``cache_ttl`` seconds, never past the
    token's expiry; inactive answers are not cached. The answer's ``aud`` must name
    ``audience`` (the server's canonical resource URL) and, when ``issuer`` is set, its
    ``iss`` must be it.

    Example::

        verifier = IntrospectionVerifier(
            "https://auth.example.com/oauth/introspect",
            audience="https://mcp.example.com/mcp",
            client_id="mcp-server", client_secret=os.environ["INTROSPECTION_SECRET"],
        )
    """

    def __init__(
        self,
        endpoint: str,
        *,
        audience: str,
        issuer: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        cache_ttl: float = 60.0,
        cache_size: int = 10_000,
        http_client: HTTPClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.audience = audience
        self.issuer = issuer
        self._client_id = client_id
        self._client_secret = client_secret
        self.cache_ttl = cache_ttl
        self._cache_size = cache_size
        self._cache: OrderedDict[bytes, tuple[float, Principal]] = OrderedDict()
        self._http = http_client
        self._clock = clock

    async def verify(self, token: str) -> Principal:
        key = _digest(token)
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None:
            if hit[0] > now:
                self._cache.move_to_end(key)
                return hit[1]
            del self._cache[key]
        try:
            status, answer = await fetch_json(
                self._http,
                self.endpoint,
                form={"token": token, "token_type_hint": "access_token"},
                headers=basic_auth(self._client_id, self._client_secret or "")
                if self._client_id
                else {},
            )
        except FetchError as e:
            raise FetchError(self.endpoint, f"introspection failed: {e}", e.status) from None
        if status == 400 and answer.get("error") in ("unsupported_token_type", "invalid_token"):
            raise InvalidToken("the access token is not valid")
        if status != 200:
            raise FetchError(self.endpoint, f"introspection answered HTTP {status}", status)
        principal = self._principal(answer, now)
        until = now + self.cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        self._cache[key] = (until, principal)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return principal

    def _principal(self, answer: dict[str, Any], now: float) -> Principal:
        if answer.get("active") is not True:
            raise InvalidToken("the access token is not active")
        exp = answer.get("exp")
        if isinstance(exp, (int, float)) and exp <= now:
            raise InvalidToken("the access token has expired")
        audience = audiences(answer.get("aud"))
        if not any(same_resource(a, self.audience) for a in audience):
            raise InvalidToken("the access token was not issued for this server")
        iss = answer.get("iss")
        if self.issuer is not None and iss != self.issuer:
            raise InvalidToken("the access token is from another issuer")
        sub = answer.get("sub")
        return Principal(
            subject=sub if isinstance(sub, str) else None,
            client_id=client_of(answer),
            scopes=scope_set(answer.get("scope")),
            issuer=iss if isinstance(iss, str) else None,
            audience=audience,
            expires_at=float(exp) if isinstance(exp, (int, float)) else None,
            claims=MappingProxyType(dict(answer)),
        )


def client_of(claims: Mapping[str, Any]) -> str | None:
    for name in ("client_id", "azp", "cid"):
        value = claims.get(name)
        if isinstance(value, str):
            return value
    return None


def audiences(value: Any) -> tuple[str, ...]:
    """The ``aud`` claim as a tuple (a string or a list of strings)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def canonical_resource(url: str) -> str:
    """``url`` as RFC 8707 compares resources: scheme and host lower-cased, no fragment,
    no trailing slash on an empty path."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    path = parts.path
    if path == "/":
        path = ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def same_resource(a: str, b: str) -> bool:
    """Whether two resource identifiers name the same server (see :func:`canonical_resource`)."""
    return canonical_resource(a) == canonical_resource(b)
