"""The OAuth client for people: the authorization code grant with PKCE.

:class:`OAuth` is an ``auth=`` for :class:`mcpkit.Client`. On the server's 401 it finds the
authorization server (``_discovery``), gets a client identity there (a Client ID Metadata
Document URL when the server accepts those, else pre-registered credentials, else Dynamic
Client Registration with an ``application_type``; kept per issuer in the store), sends the
user to the authorization endpoint through the redirect handler (PKCE S256, ``state``,
RFC 8707 ``resource``, the chosen scopes), checks the answer (``state``; the RFC 9207
``iss`` compared as a plain string with the issuer the metadata was checked against, and
required when the server says it sends one) and exchanges the code for tokens.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from typing_extensions import Unpack

from .._exceptions import AuthError, AuthServerError
from ._discovery import Discovery, token_error
from ._fetch import request_json
from ._flow import ClientAuthentication, FlowOptions, OAuthFlow, pick_method

#: The ``AuthError.error`` of an authorization server that registers no clients by itself
#: when this client was given no identity for it (not an OAuth-registered code: ours).
NO_REGISTRATION = "registration_not_supported"

#: A redirect handler: given the authorization URL, it has the user visit it and returns
#: the URL the authorization server redirected back to (with ``code`` and ``state``).
RedirectHandler = Callable[[str], "Awaitable[str] | str"]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier (64 characters of 384 random bits) and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    return verifier, _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def _is_native(redirect_uri: str) -> bool:
    parts = urlsplit(redirect_uri)
    loopback = (parts.hostname or "") in ("127.0.0.1", "localhost", "::1")
    return parts.scheme not in ("http", "https") or (parts.scheme == "http" and loopback)


class OAuth(OAuthFlow):
    """OAuth 2.1 authorization code with PKCE for a person's client: give it as ``auth=``.

    Args:
        redirect_handler: has the user visit the authorization URL and returns the URL
            the authorization server redirected back to; :class:`LoopbackRedirect` opens
            the browser and listens on 127.0.0.1 (its ``redirect_uri`` is used).
        redirect_uri: where the authorization server sends the user back (default: the
            handler's ``redirect_uri``).
        client_metadata_url: an https URL of this client's metadata document (CIMD), used
            as its ``client_id`` where the authorization server accepts those.
        client_id, client_secret: pre-registered credentials, where there is no CIMD.
        client_name: the name shown to the user when registering dynamically.
        application_type: ``native`` or ``web`` for registration (default: from the
            redirect URI: loopback or a custom scheme is native).
        offline_access: ask for ``offline_access`` (a refresh token) when the
            authorization server lists it (default True).
        scopes, store, dpop, http_client, clock: as :class:`OAuthFlow`.

    Example::

        auth = OAuth(redirect_handler=LoopbackRedirect(), store=FileTokenStore())
        async with Client("https://mcp.example.com/mcp", auth=auth) as client:
            print(await client.list_tools())
    """

    def __init__(
        self,
        *,
        redirect_handler: RedirectHandler,
        redirect_uri: str | None = None,
        client_metadata_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_name: str = "mcpkit",
        application_type: str | None = None,
        offline_access: bool = True,
        **options: Unpack[FlowOptions],
    ) -> None:
        super().__init__(**options)
        uri = redirect_uri or getattr(redirect_handler, "redirect_uri", None)
        if not isinstance(uri, str) or not uri:
            raise ValueError("OAuth needs a redirect_uri (or a handler that has one)")
        if client_metadata_url is not None and urlsplit(client_metadata_url).scheme != "https":
            raise ValueError("client_metadata_url must be an https URL (a CIMD client id)")
        if application_type not in (None, "native", "web"):
            raise ValueError("application_type is 'native' or 'web'")
        self.redirect_handler = redirect_handler
        self.redirect_uri = uri
        self.client_metadata_url = client_metadata_url
        self.client_id = client_id
        self._secret = client_secret
        self.client_name = client_name
        self.application_type = application_type or ("native" if _is_native(uri) else "web")
        self.offline = offline_access

    def __repr__(self) -> str:  # never a secret
        return f"OAuth(redirect_uri={self.redirect_uri!r}, client_id={self.client_id!r})"

    # ------------------------------------------------------------------ client identity

    async def _client(self, found: Discovery) -> ClientAuthentication:
        stored = await self.store.get("client:" + found.issuer)
        if stored and isinstance(stored.get("client_id"), str):
            return ClientAuthentication(
                stored["client_id"], stored.get("client_secret"), stored.get("method", "none")
            )
        if self.client_metadata_url and found.metadata.get("client_id_metadata_document_supported"):
            return ClientAuthentication(self.client_metadata_url)
        if self.client_id is not None:
            method = pick_method(found, self._secret is not None)
            return ClientAuthentication(self.client_id, self._secret, method)
        registered = await self._register(found)
        await self.store.set("client:" + found.issuer, registered)
        return ClientAuthentication(
            registered["client_id"], registered.get("client_secret"), registered["method"]
        )

    async def _register(self, found: Discovery) -> dict[str, Any]:
        endpoint = found.endpoint("registration_endpoint")
        if endpoint is None:
            # Not a passing outage (AuthServerError's temporarily_unavailable): the
            # client must be given an identity; a command line names its own options.
            raise AuthError(
                f"{found.issuer} offers no dynamic registration and this client has no "
                "client_id for it (give OAuth(client_id=...) or client_metadata_url=...)",
                error=NO_REGISTRATION,
            )
        method = pick_method(found, has_secret=False)
        grants = ["authorization_code", "refresh_token"]
        metadata = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": grants,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self.application_type,
        }
        status, answer, _ = await request_json(self._http, endpoint, json=metadata)
        client_id = answer.get("client_id")
        if status not in (200, 201) or not isinstance(client_id, str):
            error, description = token_error(answer, status)
            raise AuthServerError(f"{endpoint}: registration refused: {error} {description}")
        secret = answer.get("client_secret")
        granted = answer.get("token_endpoint_auth_method")
        return {
            "client_id": client_id,
            "client_secret": secret if isinstance(secret, str) else None,
            "method": granted if isinstance(granted, str) else method,
            "issuer": found.issuer,
        }

    # ------------------------------------------------------------------ the grant

    async def _grant(self, found: Discovery, scopes: list[str]) -> dict[str, Any]:
        endpoint = found.endpoint("authorization_endpoint")
        if endpoint is None:
            raise AuthServerError(f"{found.issuer}: no authorization endpoint")
        if not found.supports("code_challenge_methods_supported", "S256"):
            # MCP: without S256 listed, PKCE cannot be relied on: no authorization.
            raise AuthServerError(f"{found.issuer} does not list PKCE S256 support")
        client = await self._client(found)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": found.resource,
        }
        if scopes:
            query["scope"] = " ".join(scopes)
        joiner = "&" if urlsplit(endpoint).query else "?"
        back = self.redirect_handler(endpoint + joiner + urlencode(query))
        callback = await back if inspect.isawaitable(back) else back
        code = self._code(found, str(callback), state)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
        }
        return await self.token_request(found, form, client)

    def _code(self, found: Discovery, callback: str, state: str) -> str:
        """The code of the authorization response, once it is known to be ours."""
        params = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items()}
        if params.get("state") != state:
            raise AuthError(
                "the authorization response does not carry our state", error="invalid_state"
            )
        iss = params.get("iss")
        if iss is not None and iss != found.issuer:  # RFC 9207: simple string comparison
            raise AuthError(
                f"the authorization response comes from {iss!r}, not {found.issuer!r}",
                error="invalid_issuer",
            )
        if (
            iss is None
            and found.metadata.get("authorization_response_iss_parameter_supported") is True
        ):
            raise AuthError(
                "the authorization response lacks the iss it promised", error="invalid_issuer"
            )
        if "error" in params:
            raise AuthError(
                f"authorization refused: {params['error']} {params.get('error_description', '')}".strip(),
                error=params["error"],
            )
        code = params.get("code")
        if not code:
            raise AuthError("the authorization response has no code", error="invalid_request")
        return code
