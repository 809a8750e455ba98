"""The OAuth client for machines: grants without a person at a browser.

- :class:`ClientCredentials`: the client credentials grant, the client authenticated by a
  secret (``client_secret_basic`` / ``client_secret_post``) or by a signed JWT
  (``private_key_jwt``, RFC 7523), as the ``oauth-client-credentials`` extension describes.
- :class:`JWTBearer`: the RFC 7523 JWT bearer grant with a workload identity token (the
  ``wif`` extension: a token a platform gives the workload, e.g. a Kubernetes service
  account token), read afresh for every login.
- :class:`EnterpriseAuth`: enterprise-managed authorization (the ``enterprise-managed-
  authorization`` extension): the user's identity token from the enterprise IdP is
  exchanged there (RFC 8693) for an identity assertion grant (ID-JAG) for the MCP
  server's authorization server, which gives the access token for it (RFC 7523).

All three find the authorization server from the server's challenge and ask for a token
for the server's resource (RFC 8707), as :class:`OAuthFlow` does.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from typing_extensions import Unpack

from .._exceptions import AuthError
from ._discovery import Discovery
from ._flow import ClientAuthentication, FlowOptions, OAuthFlow, pick_method
from ._jwt import check_fetch_url

#: The RFC 7523 authorization grant type (a JWT as the grant).
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The RFC 8693 token exchange grant type.
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

#: A token given as it is, or a function (sync or async) returning a fresh one.
TokenSource = str | Callable[[], "str | Awaitable[str]"]


async def _read(source: TokenSource) -> str:
    value = source() if callable(source) else source
    if inspect.isawaitable(value):
        value = await value
    return str(value).strip()


class ClientCredentials(OAuthFlow):
    """OAuth 2.1 client credentials for a machine client: give it as ``auth=``.

    Args:
        client_id: the client's identifier at the authorization server.
        client_secret: its secret (``client_secret_basic`` or ``client_secret_post``) ...
        private_key: ... or a PEM private key for ``private_key_jwt`` (``algorithm``,
            default ES256): no secret ever leaves the client.
        method: the token endpoint authentication method (default: ``private_key_jwt``
            with a key, else ``client_secret_basic``).
        scopes, store, dpop, http_client, clock: as :class:`OAuthFlow`.

    Example::

        auth = ClientCredentials("my-agent", os.environ["AGENT_SECRET"])
        async with Client("https://mcp.example.com/mcp", auth=auth) as client:
            ...
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: str | None = None,
        algorithm: str = "ES256",
        method: str | None = None,
        **options: Unpack[FlowOptions],
    ) -> None:
        super().__init__(**options)
        if (client_secret is None) == (private_key is None):
            raise ValueError("give a client_secret or a private_key (one of them)")
        method = method or ("private_key_jwt" if private_key else "client_secret_basic")
        allowed = (
            ("private_key_jwt",) if private_key else ("client_secret_basic", "client_secret_post")
        )
        if method not in allowed:
            raise ValueError(f"unsupported token endpoint auth method {method!r}")
        self.client_id = client_id
        self.method = method
        self._auth = ClientAuthentication(client_id, client_secret, method, private_key, algorithm)

    def __repr__(self) -> str:  # never the secret, the key or the token
        return f"ClientCredentials(client_id={self.client_id!r}, method={self.method!r})"

    @property
    def issuer(self) -> str | None:
        """The issuer the current token came from."""
        return self.found.issuer if self.found is not None and self.token else None

    async def _client(self, found: Discovery) -> ClientAuthentication:
        return self._auth

    async def _grant(self, found: Discovery, scopes: list[str]) -> dict[str, Any]:
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self.token_request(found, form, self._auth)


class JWTBearer(OAuthFlow):
    """The JWT bearer grant (RFC 7523) with a workload identity token: give it as ``auth=``.

    Args:
        assertion: the JWT, or a function returning a fresh one (read for every login:
            platform tokens rotate), e.g. ``lambda: Path(TOKEN_FILE).read_text()``.
        client_id: sent with the grant when the authorization server wants it.
        scopes, store, dpop, http_client, clock: as :class:`OAuthFlow`.

    A refused grant (``invalid_grant``, ``invalid_scope``, ``unauthorized_client``) is one
    clear error: that assertion is not sent again (a rotated one is) and no other grant is
    tried instead.

    Example::

        auth = JWTBearer(lambda: Path("/var/run/secrets/tokens/mcp").read_text())
    """

    def __init__(
        self,
        assertion: TokenSource,
        *,
        client_id: str | None = None,
        **options: Unpack[FlowOptions],
    ) -> None:
        super().__init__(**options)
        self._assertion = assertion
        self.client_id = client_id
        #: The assertion the authorization server refused, and its answer.
        self._refused: tuple[str, AuthError] | None = None

    def __repr__(self) -> str:
        return f"JWTBearer(client_id={self.client_id!r})"

    async def _grant(self, found: Discovery, scopes: list[str]) -> dict[str, Any]:
        assertion = await _read(self._assertion)
        if self._refused is not None and self._refused[0] == assertion:
            raise self._refused[1]  # a refused assertion is not sent again (a rotated one is)
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        if scopes:
            form["scope"] = " ".join(scopes)
        client = ClientAuthentication(self.client_id) if self.client_id else None
        try:
            return await self.token_request(found, form, client)
        except AuthError as e:
            self._refused = (assertion, e)
            raise


class EnterpriseAuth(OAuthFlow):
    """Enterprise-managed authorization (identity assertion grants): give it as ``auth=``.

    Args:
        id_token: the user's OpenID Connect ID token from the enterprise IdP, or a function
            returning a fresh one.
        idp_token_endpoint: the IdP's token endpoint (the token exchange happens there).
        idp_client_id, idp_client_secret: this client at the IdP.
        client_id, client_secret: this client at the MCP server's authorization server.
        scopes, store, dpop, http_client, clock: as :class:`OAuthFlow`.

    Example::

        auth = EnterpriseAuth(
            id_token=sso.id_token, idp_token_endpoint="https://idp.example.com/token",
            idp_client_id="chat-app", client_id="chat-app-at-mcp", client_secret=SECRET,
        )
    """

    def __init__(
        self,
        *,
        id_token: TokenSource,
        idp_token_endpoint: str,
        idp_client_id: str,
        client_id: str,
        client_secret: str | None = None,
        idp_client_secret: str | None = None,
        **options: Unpack[FlowOptions],
    ) -> None:
        super().__init__(**options)
        check_fetch_url(idp_token_endpoint, "IdP token endpoint")
        self._id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self._idp = ClientAuthentication(
            idp_client_id,
            idp_client_secret,
            "client_secret_basic" if idp_client_secret else "none",
        )
        self.client_id = client_id
        self._secret = client_secret

    def __repr__(self) -> str:
        return f"EnterpriseAuth(client_id={self.client_id!r})"

    async def _client(self, found: Discovery) -> ClientAuthentication:
        method = pick_method(found, self._secret is not None)
        return ClientAuthentication(self.client_id, self._secret, method)

    async def _grant(self, found: Discovery, scopes: list[str]) -> dict[str, Any]:
        exchange = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": await _read(self._id_token),
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": found.issuer,
            "resource": found.resource,
        }
        if scopes:
            exchange["scope"] = " ".join(scopes)
        answer = await self.token_request(
            found, exchange, self._idp, endpoint=self.idp_token_endpoint, resource=False
        )
        if answer.get("issued_token_type") not in (None, ID_JAG):
            raise AuthError(
                "the IdP did not issue an identity assertion grant", error="invalid_grant"
            )
        form = {"grant_type": JWT_BEARER, "assertion": str(answer["access_token"])}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self.token_request(found, form, await self._client(found))
