"""What every OAuth grant of the client shares: the ``auth=`` hook, discovery, the token
request, refresh, step-up and DPoP.

An :class:`OAuthFlow` is given to :class:`mcpkit.Client` as ``auth=``. The HTTP client asks
it for each request's headers (``headers_for``: the access token, and a DPoP proof when the
token is DPoP-bound) and shows it every 401/403 (``on_challenge``): a 401 means find the
authorization server again (it may have moved), then refresh the token if one can be, else
get a new one through the grant; a DPoP ``use_dpop_nonce`` means send again with the
server's nonce; a 403 ``insufficient_scope`` means ask for the union of the scopes held and
the scopes challenged, a bounded number of times. Subclasses implement :meth:`_grant`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypedDict

import anyio

from .._exceptions import AuthError, AuthServerError, InsufficientScope
from .._http._interface import HTTPClient
from ._discovery import Discovery, choose_scopes, discover, parse_challenge, token_error
from ._dpop import DPoPKey
from ._fetch import basic_auth, request_json
from ._store import MemoryTokenStore, TokenStore
from ._verifiers import canonical_resource

#: How many step-ups (403 ``insufficient_scope``) one flow makes before giving up.
MAX_STEP_UPS = 2
#: At most this many logins (new grants after a 401) per minute: a server refusing every
#: token would otherwise get a login (for a person: a browser window) per request.
MAX_LOGINS_PER_MINUTE = 3
#: Seconds before its stated expiry a token is treated as expired (clock skew, latency).
EXPIRY_MARGIN = 30.0
#: The client assertion type of RFC 7523 (``private_key_jwt``).
JWT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

DPoPSetting = bool | Literal["auto"]


def token_key(url: str) -> str:
    """The store key of the tokens for the MCP server at ``url`` (its endpoint, as the
    client is given it: the resource its metadata names may be wider, e.g. the origin)."""
    return "token:" + canonical_resource(url)


class FlowOptions(TypedDict, total=False):
    """The options every grant takes (see :class:`OAuthFlow`)."""

    scopes: Iterable[str] | None
    store: TokenStore | None
    dpop: DPoPSetting
    http_client: HTTPClient | None
    clock: Callable[[], float]


@dataclass
class Token:
    """An access token as granted (kept in the store as a dict)."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scopes: list[str] = field(default_factory=list)
    issuer: str = ""

    def __repr__(self) -> str:  # never the token itself
        return f"Token({self.token_type}, scopes={self.scopes!r}, issuer={self.issuer!r})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Token | None:
        if not isinstance(d.get("access_token"), str):
            return None
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass
class ClientAuthentication:
    """How the client authenticates at the token endpoint (OAuth 2.1 section 2.4):
    ``none`` (a public client: ``client_id`` in the form), ``client_secret_basic``,
    ``client_secret_post``, or ``private_key_jwt`` (an RFC 7523 assertion signed with
    ``private_key``, a PEM)."""

    client_id: str
    client_secret: str | None = None
    method: str = "none"
    private_key: str | None = None
    algorithm: str = "ES256"

    def __repr__(self) -> str:  # never the secret or the key
        return f"ClientAuthentication({self.client_id!r}, {self.method})"

    def apply(
        self, form: dict[str, str], headers: dict[str, str], issuer: str, clock: float
    ) -> None:
        """Add the client's authentication to a token request."""
        if self.method == "client_secret_basic" and self.client_secret is not None:
            headers.update(basic_auth(self.client_id, self.client_secret))
        elif self.method == "client_secret_post" and self.client_secret is not None:
            form.update(client_id=self.client_id, client_secret=self.client_secret)
        elif self.method == "private_key_jwt" and self.private_key is not None:
            form.update(
                client_id=self.client_id,
                client_assertion_type=JWT_ASSERTION,
                client_assertion=self._assertion(issuer, clock),
            )
        else:
            form["client_id"] = self.client_id

    def _assertion(self, issuer: str, now: float) -> str:
        assert self.private_key is not None
        try:
            import jwt
        except ImportError as e:  # pragma: no cover - the [auth] extra is missing
            raise ImportError("private_key_jwt needs PyJWT: pip install 'mcpkit[auth]'") from e
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": issuer,  # RFC 7523bis: the authorization server's issuer identifier
            "jti": secrets.token_urlsafe(24),
            "iat": int(now),
            "exp": int(now) + 120,
        }
        return str(jwt.encode(claims, self.private_key, algorithm=self.algorithm))


def pick_method(found: Discovery, has_secret: bool) -> str:
    """The token endpoint authentication method to use with the issuer: the first of ours
    it lists (``client_secret_basic`` when it lists none, as RFC 8414 defaults)."""
    listed = found.metadata.get("token_endpoint_auth_methods_supported")
    if not isinstance(listed, list):
        return "client_secret_basic" if has_secret else "none"
    order = ["client_secret_basic", "client_secret_post"] if has_secret else []
    for method in [*order, "none"]:
        if method in listed:
            return method
    return order[0] if order else "none"


class OAuthFlow:
    """The base of mcpkit's OAuth clients (see the module's docstring).

    Args:
        scopes: scopes to ask for (default: the challenge's, else the server's
            ``scopes_supported``, else none).
        store: where tokens (and registrations) are kept; default in memory.
        dpop: ``"auto"`` (default) binds tokens with DPoP when the authorization server
            and the MCP server both support it, True always, False never.
        http_client: what talks to the metadata and token endpoints (default: mcpkit's).
        clock: the time source (Unix seconds), for tests.
    """

    def __init__(
        self,
        *,
        scopes: Iterable[str] | None = None,
        store: TokenStore | None = None,
        dpop: DPoPSetting = "auto",
        http_client: HTTPClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.scopes = list(scopes) if scopes is not None else None
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.dpop = dpop
        self._http = http_client
        self._clock = clock
        self._token: Token | None = None
        self._loaded = False
        self._key: DPoPKey | None = None
        self._lock = anyio.Lock()
        self._step_ups = 0
        self._logins: list[float] = []
        #: Whether a refresh token is worth asking for (``offline_access``).
        self.offline = False
        #: The last discovery made (the server's resource and authorization server).
        self.found: Discovery | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scopes={self.scopes!r})"

    @property
    def token(self) -> Token | None:
        """The access token held (None before the first login)."""
        return self._token

    # ------------------------------------------------------------------ the HTTP hook

    async def headers_for(self, method: str, url: str) -> dict[str, str]:
        """The headers of one request: the token, and its DPoP proof when it is bound."""
        if not self._loaded:
            self._loaded = True
            await self._load(url)
        token = self._token
        if token is not None and self._expired(token):
            token = await self._refresh_expired(token)
        if token is None:
            return {"dpop": self._key.proof(method, url)} if self._key else {}
        if token.token_type.lower() == "dpop" and self._key is not None:
            return {
                "authorization": f"DPoP {token.access_token}",
                "dpop": self._key.proof(method, url, token.access_token),
            }
        return {"authorization": f"Bearer {token.access_token}"}

    async def _load(self, url: str) -> None:
        """The token kept for the server at ``url`` (by an earlier run), if any."""
        if self._token is not None:
            return
        stored = await self.store.get(token_key(url))
        token = Token.from_dict(stored) if stored else None
        # A DPoP-bound token is useless without its key, which lives in memory only.
        if token is not None and token.token_type.lower() != "dpop":
            self._token = token

    async def _refresh_expired(self, token: Token) -> Token | None:
        """An expired token refreshed before use (no 401 round trip); None when it cannot
        be (the request goes without, and its 401 starts a login)."""
        async with self._lock:
            if self._token is not token:
                return self._token  # refreshed meanwhile by another request
            found = self.found
            if token.refresh_token is None or found is None or found.issuer != token.issuer:
                return None
            if await self._refresh(found, token):
                return self._token
            self._token = None  # refused: the 401 that follows starts a new login
            return None

    async def on_challenge(
        self, method: str, url: str, status: int, headers: Mapping[str, str] | Any
    ) -> bool:
        """The server refused ``url``: True when the request is worth sending again."""
        params = parse_challenge(headers.get("www-authenticate") or "")
        if params.get("error") == "use_dpop_nonce" and self._key is not None:
            return self._key.take_nonce(url, headers.get("dpop-nonce"))
        wanted = params.get("scope", "").split()
        before = self._token
        async with self._lock:
            if status == 403:
                return await self._step_up(url, params, wanted)
            if status != 401:
                return False
            if self._token is not None and self._token is not before:
                return True  # another request logged in meanwhile: its token may do
            presented = self._token
            found = await self._discover(url, params)
            same_issuer = presented is not None and presented.issuer == found.issuer
            if same_issuer and presented is not None and await self._refresh(found, presented):
                return True
            now = self._clock()
            self._logins = [t for t in self._logins if now - t < 60]
            if len(self._logins) >= MAX_LOGINS_PER_MINUTE:
                return False  # it refuses every token: its 401 is the answer
            self._logins.append(now)
            await self._login(
                found, choose_scopes(wanted, found, self.scopes, offline=self.offline)
            )
            return True

    async def _step_up(self, url: str, params: Mapping[str, str], wanted: list[str]) -> bool:
        held = set(self._token.scopes) if self._token is not None else set()
        if params.get("error") != "insufficient_scope" or not wanted or set(wanted) <= held:
            return False  # asking again would get the same answer
        if self._step_ups >= MAX_STEP_UPS:
            return False
        self._step_ups += 1
        found = await self._discover(url, params)
        # The union of what was granted and what is challenged (scopes are not lost).
        scopes = list(dict.fromkeys([*sorted(held), *wanted]))
        await self._login(found, scopes)
        return True

    # ------------------------------------------------------------------ the steps

    async def _discover(self, url: str, params: Mapping[str, str]) -> Discovery:
        found = await discover(self._http, url, params.get("resource_metadata"))
        if self.found is not None and self.found.issuer != found.issuer:
            self._token = None  # another authorization server: its tokens are useless here
        self.found = found
        if self._key is None and self._wants_dpop(found, params):
            self._key = DPoPKey(self._clock)
        return found

    def _wants_dpop(self, found: Discovery, params: Mapping[str, str]) -> bool:
        if self.dpop is True:
            return True
        if self.dpop is False:
            return False
        # Both sides must take part: the authorization server binds (its metadata lists
        # the algorithm) and the resource server checks proofs (it challenges with the
        # DPoP scheme or its metadata says so). A bound token sent to a Bearer-only
        # server would be refused.
        algs = found.metadata.get("dpop_signing_alg_values_supported")
        binds = isinstance(algs, list) and DPoPKey.ALGORITHM in algs
        prm = found.protected
        checks = (
            params.get("scheme") == "dpop"
            or prm.get("dpop_bound_access_tokens_required") is True
            or isinstance(prm.get("dpop_signing_alg_values_supported"), list)
        )
        return binds and checks

    async def _login(self, found: Discovery, scopes: list[str]) -> None:
        answer = await self._grant(found, scopes)
        await self._accept(found, answer, scopes, previous=None)

    async def _grant(self, found: Discovery, scopes: list[str]) -> dict[str, Any]:
        """Get a token answer from the authorization server (the grant of the subclass)."""
        raise NotImplementedError

    async def _client(self, found: Discovery) -> ClientAuthentication | None:
        """How this client authenticates at ``found``'s token endpoint (for refreshes)."""
        return None

    async def _refresh(self, found: Discovery, token: Token) -> bool:
        if token.refresh_token is None:
            return False
        form = {"grant_type": "refresh_token", "refresh_token": token.refresh_token}
        try:
            answer = await self.token_request(found, form, await self._client(found))
        except AuthError:
            return False  # revoked or expired: a new login follows
        await self._accept(found, answer, token.scopes, previous=token)
        return True

    async def _accept(
        self,
        found: Discovery,
        answer: Mapping[str, Any],
        scopes: list[str],
        previous: Token | None,
    ) -> None:
        expires = answer.get("expires_in")
        granted = answer.get("scope")
        refresh = answer.get("refresh_token")
        self._token = Token(
            access_token=str(answer["access_token"]),
            token_type=str(answer.get("token_type") or "Bearer"),
            # A refresh answer without a new refresh token leaves the old one valid.
            refresh_token=refresh
            if isinstance(refresh, str)
            else (previous.refresh_token if previous else None),
            expires_at=self._clock() + float(expires)
            if isinstance(expires, (int, float)) and not isinstance(expires, bool)
            else None,
            scopes=granted.split() if isinstance(granted, str) else list(scopes),
            issuer=found.issuer,
        )
        await self.store.set(token_key(found.url), self._token.to_dict())

    def _expired(self, token: Token) -> bool:
        return token.expires_at is not None and self._clock() >= token.expires_at - EXPIRY_MARGIN

    # ------------------------------------------------------------------ token endpoint

    async def token_request(
        self,
        found: Discovery,
        form: dict[str, str],
        client: ClientAuthentication | None,
        *,
        endpoint: str | None = None,
        resource: bool = True,
    ) -> dict[str, Any]:
        """POST a grant to the token endpoint (RFC 8707 ``resource``, the client's
        authentication, a DPoP proof, one retry with a ``use_dpop_nonce`` nonce); the
        answer, or :class:`~mcpkit.AuthError` with the OAuth error."""
        url = endpoint or found.endpoint("token_endpoint")
        if url is None:
            raise AuthServerError(f"{found.issuer}: the authorization server has no token endpoint")
        if resource:
            form.setdefault("resource", found.resource)
        for _ in range(2):
            # Built afresh for each send: an assertion or a proof is used once.
            sent, headers = dict(form), dict[str, str]()
            if client is not None:
                client.apply(sent, headers, found.issuer, self._clock())
            if self._key is not None and endpoint is None:
                headers["dpop"] = self._key.proof("POST", url)
            status, answer, answered = await request_json(
                self._http, url, form=sent, headers=headers
            )
            if (
                status == 400
                and answer.get("error") == "use_dpop_nonce"
                and self._key is not None
                and self._key.take_nonce(url, answered.get("dpop-nonce"))
            ):
                continue
            break
        if status == 200 and isinstance(answer.get("access_token"), str):
            return answer
        error, description = token_error(answer, status)
        if error == "invalid_scope":
            raise InsufficientScope(f"the authorization server refused the scope: {description}")
        raise AuthError(f"{url}: {error} {description}".strip(), error=error)
