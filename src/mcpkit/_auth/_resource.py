"""The resource-server side of MCP authorization: who may call, and how to tell who may not.

:class:`ResourceServer` holds what the HTTP apps need: the verifier, the server's canonical
resource URL (the audience every token must name), its authorization servers and required
scopes, the Protected Resource Metadata document (RFC 9728) and the ``WWW-Authenticate``
challenges of RFC 6750 that point clients at it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from .._exceptions import AuthError, InsufficientScope, InvalidToken
from ._principal import Principal
from ._verifiers import TokenVerifier, canonical_resource, same_resource

#: Where RFC 9728 puts the metadata, before the resource's path.
WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _quoted(value: str) -> str:
    """An RFC 7235 quoted-string (backslash before ``"`` and ``\\``; no control bytes)."""
    clean = "".join(c for c in value if c >= " " and c != "\x7f")
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ResourceServer:
    """Protects an MCP server over HTTP: bearer tokens checked by ``verifier``.

    Args:
        verifier: checks each token (:class:`JWTVerifier`, :class:`IntrospectionVerifier`,
            :class:`StaticTokenVerifier`, or your own :class:`TokenVerifier`).
        resource: this server's canonical URL (``https://mcp.example.com/mcp``): the
            audience tokens must be issued for (RFC 8707), and the ``resource`` of its
            metadata.
        authorization_servers: the issuers clients may get tokens from (the metadata's
            ``authorization_servers``).
        scopes: scopes every request needs (tools, resources and prompts may need more).
        scopes_supported: the metadata's ``scopes_supported`` (default: ``scopes``).
        resource_name: a human-readable name for the metadata.
        metadata: more members for the metadata document.

    Example::

        auth = ResourceServer(
            JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp"),
            resource="https://mcp.example.com/mcp",
            authorization_servers=["https://auth.example.com"],
            scopes=["mcp:tools"],
        )
        server = Server("files", auth=auth)
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Sequence[str] = (),
        scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        resource_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(
                f"resource must be an absolute http(s) URL without a fragment, got {resource!r}"
            )
        self.verifier = verifier
        self.resource = canonical_resource(resource)
        self.authorization_servers = list(authorization_servers)
        self.scopes = tuple(scopes)
        self.scopes_supported = (
            list(scopes_supported) if scopes_supported is not None else list(self.scopes)
        )
        self.resource_name = resource_name
        self.extra_metadata = dict(metadata or {})
        path = urlsplit(self.resource).path
        #: The path of the metadata document on this server (RFC 9728 section 3.1).
        self.metadata_path = WELL_KNOWN + (path if path != "/" else "")
        #: The metadata document's URL, named in every challenge.
        self.metadata_url = urlunsplit((parts.scheme, parts.netloc, self.metadata_path, "", ""))

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = self.scopes_supported
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        doc.update(self.extra_metadata)
        return doc

    def challenge(self, error: AuthError | None = None, scopes: Sequence[str] = ()) -> str:
        """The ``WWW-Authenticate`` value for a refusal (``error`` None: no token was sent)."""
        parts = [f"resource_metadata={_quoted(self.metadata_url)}"]
        needed = list(scopes) or list(self.scopes)
        if needed:
            parts.append(f"scope={_quoted(' '.join(needed))}")
        if error is not None:
            parts.append(f"error={_quoted(error.error)}")
            parts.append(f"error_description={_quoted(error.description)}")
        return "Bearer " + ", ".join(parts)

    async def authenticate(self, authorization: str | None, query: str = "") -> Principal:
        """Who a request with this ``Authorization`` header (and query string) is from.

        Raises :class:`InvalidToken` (401) for a missing or unusable token,
        :class:`InsufficientScope` (403) when it lacks the server-wide scopes, and
        :class:`AuthError` (400) for a token in the query string. Other failures (the
        authorization server unreachable) propagate.
        """
        if query and any(k == "access_token" for k, _ in parse_qsl(query)):
            raise AuthError(
                "access tokens are not accepted in the query string; send an Authorization header"
            )
        if authorization is None:
            raise InvalidToken("this server needs an access token")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or " " in token:
            raise InvalidToken("the Authorization header must be 'Bearer <token>'")
        principal = await self.verifier.verify(token)
        if principal.audience and not any(
            same_resource(a, self.resource) for a in principal.audience
        ):
            # No token passthrough: a token for another resource is refused whoever verified it.
            raise InvalidToken("the access token was not issued for this server")
        missing = principal.missing(self.scopes)
        if missing:
            raise InsufficientScope(
                f"this server needs scope {' '.join(missing)}", scopes=self.scopes
            )
        return principal

    def check_scopes(self, principal: Principal | None, needed: Sequence[str]) -> None:
        """Raise :class:`InsufficientScope` if ``principal`` lacks one of ``needed``; the
        challenge then names the server's scopes and these, all at once."""
        if not needed:
            return
        missing = principal.missing(needed) if principal is not None else list(needed)
        if missing:
            every = list(dict.fromkeys([*self.scopes, *needed]))
            raise InsufficientScope(
                f"this operation needs scope {' '.join(missing)}", scopes=tuple(every)
            )
