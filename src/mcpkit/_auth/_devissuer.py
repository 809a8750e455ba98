"""A development-only OAuth authorization server: ``mcpkit auth dev-issuer``.

It exists so that a protected server can be tried on one machine without setting up a real
authorization server. It serves, on loopback only:

* its metadata (RFC 8414) and its signing keys (a JWKS: one EC P-256 key, made at start and
  kept in memory only), which :class:`~mcpkit.auth.JWTVerifier` reads as from any issuer;
* ``/authorize``, which approves every request at once as one fixed subject (no password:
  the redirect must go back to a loopback address), with PKCE S256 and RFC 9207 ``iss``;
* ``/token`` (authorization code, refresh token, and client credentials for any client id),
  ``/register`` (dynamic client registration, unless turned off) and ``/dev/token``, the
  token minter: any subject, scopes, audience and lifetime, for ``mcpkit auth dev-token``.

Every access token is an RFC 9068 JWT (``typ: at+jwt``, ES256) with ``iss``, ``sub``,
``aud`` (the resource asked for), ``scope``, ``client_id``, ``iat``, ``exp`` and ``jti``.

Anyone who can reach it gets any token, which is why it listens on 127.0.0.1 alone, checks
``Host`` (DNS rebinding), grants no CORS, and takes the minter's request only as JSON (a
web page cannot send that to another origin without a preflight this app never answers).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import orjson

from .._http._asgi import header_map, serve_lifespan
from .._http._security import LOCAL_HOSTS, HostOriginPolicy

#: Longest lifetime of a minted token (a day): a development token should not outlive it.
MAX_LIFETIME = 86_400
#: How long an authorization code may wait for its exchange.
CODE_SECONDS = 60.0
#: Most pending codes and refresh tokens kept (the oldest go first).
MAX_KEPT = 1000
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

Scope = dict[str, Any]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def is_loopback_url(url: str) -> bool:
    """An ``http(s)`` URL whose host is a loopback address or ``localhost``."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOOPBACK_NAMES


class _Kept(dict[str, Any]):
    """A dict that forgets its oldest entries past :data:`MAX_KEPT`."""

    def keep(self, key: str, value: Any) -> None:
        self[key] = value
        while len(self) > MAX_KEPT:
            self.pop(next(iter(self)))


class DevIssuer:
    """The development issuer at ``issuer`` (``http://127.0.0.1:PORT``), as an ASGI app.

    Args:
        issuer: its own URL (the ``iss`` of its tokens).
        subject: who ``/authorize`` signs in (every visitor is this user).
        lifetime: seconds an access token lasts (at most :data:`MAX_LIFETIME`).
        registration: serve dynamic client registration (``False``: clients need an id).
        clock: the time, injectable for tests.
    """

    def __init__(
        self,
        issuer: str,
        *,
        subject: str = "dev-user",
        lifetime: int = 3600,
        registration: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from jwt.algorithms import ECAlgorithm

        self.issuer = issuer.rstrip("/")
        self.subject = subject
        self.lifetime = max(1, min(int(lifetime), MAX_LIFETIME))
        self.registration = registration
        self._clock = clock
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.kid = _b64(secrets.token_bytes(9))
        public = ECAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        self.jwks = {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "ES256"}]}
        self._codes = _Kept()
        self._refresh = _Kept()
        port = urlsplit(self.issuer).port or 80
        self._policy = HostOriginPolicy([f"{h}:{port}" for h in LOCAL_HOSTS], [])

    # ------------------------------------------------------------------ documents

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 metadata document."""
        doc: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
            ],
            "authorization_response_iss_parameter_supported": True,
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        }
        if self.registration:
            doc["registration_endpoint"] = f"{self.issuer}/register"
        return doc

    def mint(
        self,
        subject: str,
        *,
        scopes: list[str] | tuple[str, ...] = (),
        audience: str | None = None,
        client_id: str = "mcpkit-dev",
        lifetime: int | None = None,
    ) -> str:
        """A signed access token (RFC 9068 JWT) for ``subject``."""
        import jwt

        now = int(self._clock())
        life = self.lifetime if lifetime is None else max(1, min(int(lifetime), MAX_LIFETIME))
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + life,
            "jti": secrets.token_urlsafe(12),
        }
        if audience:
            claims["aud"] = audience
        headers = {"typ": "at+jwt", "kid": self.kid}
        return str(jwt.encode(claims, self._key, algorithm="ES256", headers=headers))

    def _token_answer(
        self, subject: str, scopes: list[str], audience: str | None, client_id: str
    ) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(32)
        self._refresh.keep(refresh, (subject, scopes, audience, client_id))
        return {
            "access_token": self.mint(
                subject, scopes=scopes, audience=audience, client_id=client_id
            ),
            "token_type": "Bearer",
            "expires_in": self.lifetime,
            "scope": " ".join(scopes),
            "refresh_token": refresh,
        }

    # ------------------------------------------------------------------ endpoints

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, Any] | str]:
        """``/authorize``: (302, the redirect URL) at once, or (400, an error)."""
        redirect = query.get("redirect_uri", "")
        if not is_loopback_url(redirect):
            return 400, _error("invalid_request", "the redirect_uri must be a loopback URL")
        if query.get("response_type") != "code" or not query.get("client_id"):
            return 400, _error("invalid_request", "response_type=code and client_id needed")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return 400, _error("invalid_request", "PKCE with S256 is required")
        code = secrets.token_urlsafe(32)
        self._codes.keep(
            code,
            {
                "client_id": query["client_id"],
                "redirect_uri": redirect,
                "challenge": query["code_challenge"],
                "scopes": query.get("scope", "").split(),
                "resource": query.get("resource"),
                "expires": self._clock() + CODE_SECONDS,
            },
        )
        answer = {"code": code, "iss": self.issuer}
        if "state" in query:
            answer["state"] = query["state"]
        joiner = "&" if urlsplit(redirect).query else "?"
        return 302, redirect + joiner + urlencode(answer)

    def token(self, form: dict[str, str], basic: tuple[str, str] | None) -> tuple[int, Any]:
        """``/token``: the grants of the development issuer."""
        client_id = basic[0] if basic else form.get("client_id", "")
        grant = form.get("grant_type")
        if grant == "authorization_code":
            pending = self._codes.pop(form.get("code", ""), None)
            if pending is None or pending["expires"] < self._clock():
                return 400, _error("invalid_grant", "unknown, used or expired code")
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if _b64(digest) != pending["challenge"]:
                return 400, _error("invalid_grant", "the code_verifier does not match")
            if form.get("redirect_uri") != pending["redirect_uri"]:
                return 400, _error("invalid_grant", "another redirect_uri than authorized")
            if client_id and client_id != pending["client_id"]:
                return 400, _error("invalid_grant", "the code was issued to another client")
            return 200, self._token_answer(
                self.subject, pending["scopes"], pending["resource"], pending["client_id"]
            )
        if grant == "refresh_token":
            kept = self._refresh.pop(form.get("refresh_token", ""), None)
            if kept is None:
                return 400, _error("invalid_grant", "unknown or used refresh token")
            subject, scopes, audience, owner = kept
            return 200, self._token_answer(subject, scopes, form.get("resource") or audience, owner)
        if grant == "client_credentials":
            if not client_id:
                return 401, _error("invalid_client", "name the client (its id is its subject)")
            scopes = form.get("scope", "").split()
            answer = self._token_answer(client_id, scopes, form.get("resource"), client_id)
            answer.pop("refresh_token")
            return 200, answer
        return 400, _error("unsupported_grant_type", f"{grant!r} is not served here")

    def register(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``/register`` (RFC 7591): any client, with an id and no secret."""
        if not self.registration:
            return 404, _error("invalid_request", "dynamic registration is turned off")
        uris = body.get("redirect_uris") or []
        if not isinstance(uris, list) or not all(
            isinstance(u, str) and is_loopback_url(u) for u in uris
        ):
            return 400, _error("invalid_redirect_uri", "redirect URIs must be loopback URLs")
        client_id = "dev-" + secrets.token_urlsafe(12)
        answer = {
            **{k: v for k, v in body.items() if k in ("client_name", "grant_types", "scope")},
            "client_id": client_id,
            "client_id_issued_at": int(self._clock()),
            "redirect_uris": uris,
            "token_endpoint_auth_method": "none",
            "response_types": ["code"],
        }
        return 201, answer

    def dev_token(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``/dev/token``: the minter (``sub``, ``scope``, ``aud``, ``expires_in``)."""
        subject, scope = body.get("sub"), body.get("scope", "")
        audience, lifetime = body.get("aud"), body.get("expires_in", self.lifetime)
        if not isinstance(subject, str) or not subject:
            return 400, _error("invalid_request", "'sub' must be a non-empty string")
        if not isinstance(scope, str) or not (audience is None or isinstance(audience, str)):
            return 400, _error("invalid_request", "'scope' and 'aud' must be strings")
        if not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime < 1:
            return 400, _error("invalid_request", "'expires_in' must be a positive integer")
        life = min(lifetime, MAX_LIFETIME)
        token = self.mint(subject, scopes=scope.split(), audience=audience, lifetime=life)
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": life}

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = header_map(scope)  # a repeated Host joined: refused by host_ok
        if not self._policy.host_ok(headers.get("host", "")):
            await _send(send, 403, _error("access_denied", "the dev issuer answers on loopback"))
            return
        status, answer = await self._route(scope, receive, headers)
        if status == 302 and isinstance(answer, str):
            await _send(send, 302, {}, location=answer)
        else:
            await _send(send, status, answer)

    async def _route(self, scope: Scope, receive: Any, headers: dict[str, str]) -> tuple[int, Any]:
        method, path = scope["method"], scope["path"]
        if method == "GET":
            query = {k: v[0] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
            if path in (
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            ):
                return 200, self.metadata()
            if path == "/jwks":
                return 200, self.jwks
            if path == "/authorize":
                return self.authorize(query)
            return 404, _error("invalid_request", f"no {path} here")
        if method != "POST" or path not in ("/token", "/register", "/dev/token"):
            return 404, _error("invalid_request", f"no {method} {path} here")
        body = await _body(receive)
        if body is None:
            return 413, _error("invalid_request", "the body is too large")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if path == "/token":
            if kind != "application/x-www-form-urlencoded":
                return 400, _error("invalid_request", "the token request is a form")
            form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
            return self.token(form, _basic(headers.get("authorization", "")))
        if kind != "application/json":  # a cross-site form post cannot send this (no preflight)
            return 415, _error("invalid_request", "send JSON (Content-Type: application/json)")
        try:
            data = orjson.loads(body or b"{}")
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            return 400, _error("invalid_request", "the body must be a JSON object")
        return self.register(data) if path == "/register" else self.dev_token(data)


def _error(code: str, description: str) -> dict[str, Any]:
    return {"error": code, "error_description": description}


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(value.strip()).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return unquote(user), unquote(password)


async def _body(receive: Any, limit: int = 64 * 1024) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send(send: Any, status: int, payload: Any, location: str | None = None) -> None:
    body = orjson.dumps(payload)
    headers = [
        (b"content-type", b"application/json"),
        (b"cache-control", b"no-store"),
        (b"content-length", str(len(body)).encode()),
    ]
    if location is not None:
        headers.append((b"location", location.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
