"""An MCP server behind OAuth 2.1: every request needs a JWT access token for this server.

Configured from the environment:

* ``MCPKIT_AUTH_ISSUER``: the authorization server's issuer URL (its RFC 8414 or OpenID
  metadata names the ``jwks_uri`` the token signatures are checked with);
* ``MCPKIT_AUTH_RESOURCE``: this server's canonical URL, the audience tokens must name
  (``http://127.0.0.1:8000/mcp`` when served as below).

Every request needs scope ``mcp:tools``; ``admin_echo`` needs ``mcp:admin`` too (a token
without it gets HTTP 403 ``insufficient_scope``, the step-up challenge). Run it with::

    MCPKIT_AUTH_ISSUER=https://auth.example.com \\
    MCPKIT_AUTH_RESOURCE=http://127.0.0.1:8000/mcp \\
    mcpkit run examples/protected_server.py --transport http --port 8000

Clients find the authorization server through the Protected Resource Metadata at
``/.well-known/oauth-protected-resource/mcp``, named in every 401 challenge.
"""

from __future__ import annotations

import os

from mcpkit import Context, Server
from mcpkit.auth import JWTVerifier, ResourceServer


def _auth() -> ResourceServer:
    try:
        issuer = os.environ["MCPKIT_AUTH_ISSUER"]
        resource = os.environ["MCPKIT_AUTH_RESOURCE"]
    except KeyError as e:
        raise SystemExit(f"protected_server: set {e.args[0]} (see the module docstring)") from None
    return ResourceServer(
        JWTVerifier(issuer=issuer, audience=resource),
        resource=resource,
        authorization_servers=[issuer],
        scopes=["mcp:tools"],
        scopes_supported=["mcp:tools", "mcp:admin"],
        resource_name="mcpkit protected example",
    )


server = Server("protected", auth=_auth())


@server.tool()
def whoami(ctx: Context) -> dict[str, object]:
    """Who is calling: the token's subject, client and scopes."""
    p = ctx.principal
    if p is None:
        return {"subject": None, "client_id": None, "scopes": []}
    return {"subject": p.subject, "client_id": p.client_id, "scopes": sorted(p.scopes)}


@server.tool(scopes=["mcp:admin"])
def admin_echo(text: str) -> str:
    """Echo ``text`` back; only for callers granted ``mcp:admin``."""
    return text


@server.resource("protected://motd", mime_type="text/plain")
def motd() -> str:
    """The message of the day (any caller with ``mcp:tools``)."""
    return "only for authorized callers"


if __name__ == "__main__":
    server.run("http", port=8000)
