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

On the client side, :class:`ClientCredentials` is an ``auth=`` for machine clients: it finds
the authorization server from the server's 401 challenge, gets a token with the client
credentials grant for the server's resource, and steps up on 403 ``insufficient_scope``::

    auth = ClientCredentials("my-agent", "its-secret")
    # async with Client("https://mcp.example.com/mcp", auth=auth) as client: ...
"""

from __future__ import annotations

from ._auth._client import ClientCredentials
from ._auth._jwt import JWTVerifier  # builds only with PyJWT: the [auth] extra
from ._auth._principal import Principal
from ._auth._resource import ResourceServer
from ._auth._verifiers import IntrospectionVerifier, StaticTokenVerifier, TokenVerifier

__all__ = [
    "ClientCredentials",
    "IntrospectionVerifier",
    "JWTVerifier",
    "Principal",
    "ResourceServer",
    "StaticTokenVerifier",
    "TokenVerifier",
]
