"""DPoP (RFC 9449): sender-constrained tokens, proved with a key only this client holds.

One EC P-256 key per client object (generated in memory, never written anywhere); each
HTTP request carries a fresh proof (a JWT signed with it: ``typ`` ``dpop+jwt``, the public
key as ``jwk``, a unique ``jti``, the method and URL, the time, and with an access token
its hash ``ath``). Servers may ask for a nonce (``DPoP-Nonce``); the last one each origin
gave goes into that origin's proofs. Signing is PyJWT's and the key is ``cryptography``'s
(the ``[auth]`` extra).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


class DPoPKey:
    """A DPoP key pair and the nonces servers gave it (see the module's docstring)."""

    #: The proof algorithm (the one every DPoP server supports).
    ALGORITHM = "ES256"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        try:
            import jwt
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError as e:  # pragma: no cover - the [auth] extra is missing
            raise ImportError(
                "DPoP needs PyJWT with cryptography: pip install 'mcpkit[auth]'"
            ) from e
        self._jwt = jwt
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._jwk: dict[str, Any] = jwt.algorithms.ECAlgorithm.to_jwk(
            self._key.public_key(), as_dict=True
        )
        self._clock = clock
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:  # never the key
        return "DPoPKey(ES256)"

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request (RFC 9449 section 4.2)."""
        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            # The URL without query and fragment (section 4.2).
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", "")),
            "iat": int(self._clock()),
        }
        nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        headers = {"typ": "dpop+jwt", "jwk": self._jwk}
        return str(self._jwt.encode(claims, self._key, algorithm=self.ALGORITHM, headers=headers))

    def take_nonce(self, url: str, nonce: str | None) -> bool:
        """Remember a server's ``DPoP-Nonce`` for its origin; True when it is new."""
        if not nonce or len(nonce) > 1024:
            return False
        origin = _origin(url)
        if self._nonces.get(origin) == nonce:
            return False
        self._nonces[origin] = nonce
        return True
