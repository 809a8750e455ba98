"""Authorization (OAuth 2.1) for MCP over HTTP: protecting a server with bearer tokens.

A protected server is an OAuth resource server: every HTTP request carries an access token
issued for it by an authorization server it trusts. Give the server a
:class:`ResourceServer` with a verifier, and mark what needs more than the server-wide
scopes::

    from mcpkit import Context, Server
    from mcpkit.auth import JWTVerifier, ResourceServer

    RESOURCE = "https://mcp.example.com/mcp"
    ISSUER = "https://auth.example.com"

    server = Server(
        "files",
        auth=ResourceServer(
            JWTVerifier(issuer=ISSUER, audience=RESOURCE),
            resource=RESOURCE,
            authorization_servers=[ISSUER],
            scopes=["mcp:tools"],
        ),
    )

    @server.tool(scopes=["files:write"])
    def delete(path: str, ctx: Context) -> str:
        '''Delete a file.'''
        return f"{ctx.principal.subject} deleted {path}"

Requests without a valid token get HTTP 401 with a ``WWW-Authenticate`` challenge naming
the Protected Resource Metadata (RFC 9728, served by the app at its well-known path); a
token without a needed scope gets 403 ``insufficient_scope`` naming every scope needed.
Sessions (and their streams and tasks) belong to the principal that opened them.

Verifiers: :class:`JWTVerifier` (JWT access tokens, keys from the issuer's JWKS),
:class:`IntrospectionVerifier` (RFC 7662), :class:`StaticTokenVerifier` (development), or
any object with ``async verify(token) -> Principal`` (:class:`TokenVerifier`). The errors
are :class:`~mcpkit.InvalidToken` and :class:`~mcpkit.InsufficientScope`.

On the client side, each OAuth grant is an ``auth=`` for :class:`mcpkit.Client`; every one
finds the authorization server from the server's 401 challenge (Protected Resource Metadata,
then RFC 8414 / OpenID metadata, checked), asks for a token for the server's resource (RFC
8707), refreshes it, steps up on 403 ``insufficient_scope``, and binds it with DPoP where the
authorization server supports it:

- :class:`OAuth`: a person's client, the authorization code grant with PKCE (the redirect
  handler shows the user the authorization page; :class:`LoopbackRedirect` opens the
  browser); client registration by metadata document, pre-registered id, or dynamically.
- :class:`ClientCredentials`: a machine client with a secret or a private key.
- :class:`JWTBearer`: a workload with a platform-issued identity token.
- :class:`EnterpriseAuth`: a user signed in at an enterprise IdP (identity assertion grant).

Tokens and registrations live in a :class:`TokenStore`: :class:`MemoryTokenStore` by
default, :class:`FileTokenStore` (a 0600 file) for tools that log in once::

    auth = ClientCredentials("my-agent", "its-secret")
    # async with Client("https://mcp.example.com/mcp", auth=auth) as client: ...
"""

from __future__ import annotations

from ._auth._client import ClientCredentials, EnterpriseAuth, JWTBearer
from ._auth._flow import OAuthFlow, Token
from ._auth._jwt import JWTVerifier  # builds only with PyJWT: the [auth] extra
from ._auth._loopback import LoopbackRedirect
from ._auth._oauth import OAuth
from ._auth._principal import Principal
from ._auth._resource import ResourceServer
from ._auth._store import FileTokenStore, MemoryTokenStore, TokenStore
from ._auth._verifiers import IntrospectionVerifier, StaticTokenVerifier, TokenVerifier

__all__ = [
    "ClientCredentials",
    "EnterpriseAuth",
    "FileTokenStore",
    "IntrospectionVerifier",
    "JWTBearer",
    "JWTVerifier",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "OAuthFlow",
    "Principal",
    "ResourceServer",
    "StaticTokenVerifier",
    "Token",
    "TokenStore",
    "TokenVerifier",
]
