"""The JWT access-token verifier (RFC 9068 profile): keys from the issuer's JWKS.

Signatures and key parsing are PyJWT's (with ``cryptography``); this module decides which
keys and algorithms are acceptable and checks the claims: ``iss`` exactly the configured
issuer, ``aud`` naming this server, ``exp`` / ``nbf`` / ``iat`` against an injectable clock
with bounded leeway. Keys are found through the issuer's metadata (RFC 8414, then OpenID
Connect discovery), cached, and refreshed when a token names a key id not seen yet (at most
once per ``min_refresh`` seconds, so forged key ids cannot make us hammer the issuer).

One fetch at a time: requests that need a key while a fetch is in flight (the first
requests after start, or a rotated key id) wait for it, at most :data:`KEYS_WAIT` seconds,
instead of finding no key; the fetch itself is bounded by the same time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio

try:
    import jwt
except ImportError:  # pragma: no cover - exercised by the bare-wheel check
    jwt = None  # type: ignore[assignment]

from .._exceptions import InvalidToken
from .._http._interface import HTTPClient
from ._fetch import FETCH_TIMEOUT, FetchError, fetch_json, issuer_metadata
from ._principal import Principal, scope_set
from ._verifiers import audiences, client_of, same_resource

#: Asymmetric algorithms accepted by default. ``none`` and the HMAC family are never
#: accepted from a JWKS: a public key used as an HMAC secret is the classic forgery.
DEFAULT_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
_NEVER = frozenset({"none", "HS256", "HS384", "HS512"})
#: Largest token accepted (a JWT access token is well under 8 KiB).
MAX_TOKEN_SIZE = 16 * 1024
#: Largest clock skew that may be configured.
MAX_LEEWAY = 300.0
_TOKEN_TYPES = frozenset({None, "at+jwt", "application/at+jwt", "jwt"})
#: Longest a key fetch may take in full, and a request may wait for another's fetch.
KEYS_WAIT = FETCH_TIMEOUT


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order tried: RFC 8414 (path inserted after
    the host), OpenID Connect with the path inserted, and OpenID Connect appended."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    urls = [at("/.well-known/oauth-authorization-server" + path)]
    urls.append(at("/.well-known/openid-configuration" + path))
    if path:
        urls.append(at(path + "/.well-known/openid-configuration"))
    return urls


def check_fetch_url(url: str, what: str) -> None:
    """Refuse a metadata-supplied URL that is not https (plain http only on loopback)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and host in ("127.0.0.1", "localhost", "::1"):
        return
    raise FetchError(url, f"the {what} must be an https URL")


class JWTVerifier:
    """Verifies JWT access tokens issued by ``issuer`` for ``audience``.

    Args:
        issuer: the authorization server's issuer identifier; tokens must carry it as
            ``iss``, and its metadata (RFC 8414 or OpenID) must name it too.
        audience: this server's canonical resource URL; ``aud`` must name it.
        jwks_uri: the key set's URL (default: from the issuer's metadata).
        algorithms: accepted signature algorithms (asymmetric only).
        leeway: seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat`` (at most 300).
        jwks_ttl: seconds a fetched key set is used before it is fetched again.
        min_refresh: least seconds between two fetches caused by an unknown key id.
        http_client: what fetches metadata and keys (default: mcpkit's HTTP client).
        clock: the time source (Unix seconds), for tests.

    Example::

        verifier = JWTVerifier(
            issuer="https://auth.example.com",
            audience="https://mcp.example.com/mcp",
        )
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_uri: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        jwks_ttl: float = 3600.0,
        min_refresh: float = 30.0,
        http_client: HTTPClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if jwt is None:
            raise ImportError(
                "JWTVerifier needs PyJWT with cryptography: pip install 'mcpkit[auth]'"
            )
        bad = sorted(set(algorithms) & _NEVER)
        if bad:
            raise ValueError(f"algorithms {bad} are not accepted for access tokens")
        if not 0 <= leeway <= MAX_LEEWAY:
            raise ValueError(f"leeway must be between 0 and {MAX_LEEWAY:g} seconds")
        self.issuer = issuer
        self.audience = audience
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.jwks_ttl = jwks_ttl
        self.min_refresh = min_refresh
        self._http = http_client
        self._clock = clock
        #: key id -> (the public key, the ``alg`` its JWK declares, if any)
        self._keys: dict[str | None, tuple[Any, str | None]] = {}
        self._fetched_at: float | None = None
        #: When keys were last asked for, whatever came of it (attempts are rate-limited).
        self._tried_at: float | None = None
        self._last_failure = ""
        #: Set while keys are being fetched; requests lacking their key wait for it.
        self._inflight: anyio.Event | None = None

    # ------------------------------------------------------------------ keys

    async def _discover(self) -> str:
        meta = await issuer_metadata(self._http, self.issuer, metadata_urls(self.issuer))
        jwks_uri = meta.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise FetchError(self.issuer, "the metadata has no jwks_uri")
        check_fetch_url(jwks_uri, "jwks_uri")
        return jwks_uri

    async def _refresh(self) -> None:
        if self.jwks_uri is None:
            self.jwks_uri = await self._discover()
        status, doc = await fetch_json(self._http, self.jwks_uri)
        if status != 200:
            raise FetchError(self.jwks_uri, f"HTTP {status}", status)
        keys: dict[str | None, tuple[Any, str | None]] = {}
        for entry in doc.get("keys", []) if isinstance(doc.get("keys"), list) else []:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except jwt.PyJWTError:
                continue  # a key type or curve we do not know: others may do
            declared = entry.get("alg")
            keys[key.key_id] = (key.key, declared if isinstance(declared, str) else None)
        if not keys:
            raise FetchError(self.jwks_uri, "the key set has no usable signing key")
        self._keys = keys
        self._fetched_at = self._clock()

    def _needs_fetch(self, kid: str | None, now: float) -> bool:
        if self._inflight is not None:
            return False  # one fetch at a time: the others wait for it
        if self._tried_at is not None and now - self._tried_at < self.min_refresh:
            return False  # at most one attempt per min_refresh, succeeded or not
        stale = self._fetched_at is None or now - self._fetched_at >= self.jwks_ttl
        return stale or kid not in self._keys

    def _lookup(self, kid: str | None) -> tuple[Any, str | None] | None:
        key = self._keys.get(kid)
        if key is None and kid is None and len(self._keys) == 1:
            key = next(iter(self._keys.values()))
        return key

    async def _fetch(self, now: float) -> None:
        """Fetch the keys: this request's own attempt, counted against ``min_refresh``.

        Checked and started with no await in between, so only one runs at a time. Cancelled
        (the request went away), the attempt does not count: the next request tries again.
        """
        previous, self._tried_at = self._tried_at, now
        self._inflight = done = anyio.Event()
        error: FetchError | None = None
        try:
            with anyio.fail_after(KEYS_WAIT):
                await self._refresh()
        except TimeoutError:
            error = FetchError(self.issuer, f"no usable key set within {KEYS_WAIT:g} s")
        except FetchError as e:
            error = e
        except anyio.get_cancelled_exc_class():
            self._tried_at = previous
            raise
        finally:
            self._inflight = None
            done.set()
        if error is not None:
            self._last_failure = str(error)
            if not self._keys:
                raise error
            # The issuer is unreachable: the keys we have stay in use.

    async def _key(self, kid: str | None) -> tuple[Any, str | None]:
        deadline: float | None = None  # set when first waiting (most requests never do)
        while True:
            now = self._clock()
            if self._needs_fetch(kid, now):
                await self._fetch(now)
                break
            inflight = self._inflight
            if inflight is None or self._lookup(kid) is not None:
                break
            # Another request is fetching the keys: the one named may be among them (or,
            # if that request went away, this one fetches on the next turn).
            if deadline is None:
                deadline = anyio.current_time() + KEYS_WAIT
            with anyio.CancelScope(deadline=deadline) as waiting:
                await inflight.wait()
            if waiting.cancelled_caught:
                break
        if not self._keys:
            raise FetchError(self.issuer, f"no signing keys yet (last try: {self._last_failure})")
        key = self._lookup(kid)
        if key is None:
            raise InvalidToken("the access token is signed with an unknown key")
        return key

    # ------------------------------------------------------------------ tokens

    async def verify(self, token: str) -> Principal:
        if len(token) > MAX_TOKEN_SIZE:
            raise InvalidToken("the access token is too large")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the access token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken(f"the access token's algorithm {alg!r} is not accepted")
        typ = header.get("typ")
        if (typ.lower() if isinstance(typ, str) else typ) not in _TOKEN_TYPES:
            raise InvalidToken(f"the token's type {typ!r} is not an access token")
        kid = header.get("kid")
        key, declared = await self._key(kid if isinstance(kid, str) else None)
        if declared is not None and declared != alg:
            raise InvalidToken("the token's algorithm does not match its key")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                # Claims are checked below, against our clock and with our messages.
                options={
                    "verify_signature": True,
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "verify_aud": False,
                    "verify_iss": False,
                },
            )
        except jwt.PyJWTError:
            raise InvalidToken("the access token's signature is not valid") from None
        return self._principal(claims)

    def _principal(self, claims: dict[str, Any]) -> Principal:
        now = self._clock()
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the access token is from another issuer")
        aud = audiences(claims.get("aud"))
        if not any(same_resource(a, self.audience) for a in aud):
            raise InvalidToken("the access token was not issued for this server")
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            raise InvalidToken("the access token has no expiry")
        if exp + self.leeway <= now:
            raise InvalidToken("the access token has expired")
        nbf = claims.get("nbf")
        if isinstance(nbf, (int, float)) and nbf - self.leeway > now:
            raise InvalidToken("the access token is not valid yet")
        iat = claims.get("iat")
        if isinstance(iat, (int, float)) and iat - self.leeway > now:
            raise InvalidToken("the access token was issued in the future")
        sub = claims.get("sub")
        scopes = scope_set(claims.get("scope")) | scope_set(claims.get("scp"))
        return Principal(
            subject=sub if isinstance(sub, str) else None,
            client_id=client_of(claims),
            scopes=scopes,
            issuer=self.issuer,
            audience=aud,
            expires_at=float(exp),
            claims=MappingProxyType(claims),
        )
