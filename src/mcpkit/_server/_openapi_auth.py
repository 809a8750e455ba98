"""The credentials ``Server.from_openapi(credentials=...)`` sends, per the document's security.

An operation's ``security`` (else the document's) lists alternatives, each a set of scheme
names from ``components.securitySchemes``; one alternative whose every scheme has a
credential is applied: an ``apiKey`` in its header, query parameter or cookie, an ``http``
scheme as ``Authorization: Bearer <token>`` / ``Basic <user:password>``, and ``oauth2`` /
``openIdConnect`` as a bearer token the server's author got (this server never runs an
OAuth flow at the API, nor forwards the MCP client's own token).

A missing credential does not refuse the server: documents often mix public and protected
operations, and a server given the credentials of some still offers the rest. The call
itself answers an error naming the scheme, before anything is sent.

The server URL's ``{variables}`` (``servers[0].variables``) are resolved here too.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import ToolError

#: A scheme's credential: a string (an API key, a bearer token), or ``(user, password)``
#: for ``http`` basic.
Credential = str | tuple[str, str]
#: The scheme kinds whose credential is not a value this server sends (a client certificate
#: is the ``http_client``'s business).
_TRANSPORT_KINDS = frozenset({"mutualTLS"})


@dataclass(frozen=True)
class Scheme:
    """One entry of ``components.securitySchemes``, as far as sending it goes."""

    name: str
    kind: str
    #: ``header``, ``query`` or ``cookie`` (an ``apiKey``'s place; ``header`` otherwise).
    place: str = "header"
    #: The header, query parameter or cookie name.
    param: str = "Authorization"
    #: An ``http`` scheme's own name, lower case (``bearer``, ``basic``, ...).
    http: str = ""


@dataclass
class Applied:
    """What one call sends for its security requirement."""

    headers: dict[str, str] = field(default_factory=dict)
    query: list[tuple[str, str]] = field(default_factory=list)
    cookies: list[tuple[str, str]] = field(default_factory=list)


def requirement(doc: dict[str, Any], spec: dict[str, Any], where: str) -> tuple[Any, ...] | None:
    """The operation's security alternatives (its own ``security`` over the document's),
    each a tuple of scheme names; None when neither says (no requirement)."""
    raw = spec["security"] if "security" in spec else doc.get("security")
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise ValueError(f"{where}: 'security' must be a list of objects")
    return tuple(tuple(str(name) for name in alternative) for alternative in raw)


def _schemes(doc: dict[str, Any]) -> dict[str, Scheme]:
    components = doc.get("components")
    found = components.get("securitySchemes") if isinstance(components, dict) else None
    if not isinstance(found, dict):
        return {}
    # Imported here: _openapi imports this module. Its lookup is the one $ref resolver of
    # the document (escaped names, chains of refs, only local refs).
    from ._openapi import SchemaConverter

    schemes: dict[str, Scheme] = {}
    for name, spec in found.items():
        if isinstance(spec, dict) and "$ref" in spec:
            spec = SchemaConverter(doc, f"security scheme {name!r}").lookup(spec["$ref"])
        if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
            raise ValueError(f"security scheme {name!r}: needs a 'type'")
        kind = spec["type"]
        if kind == "apiKey":
            place, param = spec.get("in"), spec.get("name")
            if (
                place not in ("header", "query", "cookie")
                or not isinstance(param, str)
                or not param
            ):
                raise ValueError(
                    f"security scheme {name!r}: an apiKey needs a 'name' and 'in' "
                    "(header, query or cookie)"
                )
            schemes[name] = Scheme(name, kind, place, param)
        else:
            schemes[name] = Scheme(name, kind, http=str(spec.get("scheme", "")).lower())
    return schemes


class Authenticator:
    """Applies ``credentials`` (scheme name to credential) per operation."""

    def __init__(
        self,
        doc: dict[str, Any],
        credentials: Mapping[str, Credential] | None,
        headers: Mapping[str, str],
    ) -> None:
        #: Without ``credentials`` the document's security is not applied (nor read: a
        #: sloppy scheme does not refuse the server): ``headers`` and ``request_hook`` carry
        #: the credentials, as they did before this option.
        self.enforced = credentials is not None
        self.schemes = _schemes(doc) if self.enforced else {}
        self.credentials = dict(credentials or {})
        self._static = {k.lower() for k in headers}
        for name, value in self.credentials.items():
            self._check(name, value)

    def _check(self, name: str, value: Any) -> None:
        scheme = self.schemes.get(name)
        if scheme is None:
            known = ", ".join(repr(n) for n in self.schemes) or "none"
            raise ValueError(
                f"credentials for {name!r}: the document has no such security scheme "
                f"(its schemes: {known})"
            )
        if scheme.kind in _TRANSPORT_KINDS:
            raise ValueError(
                f"credentials for {name!r}: a {scheme.kind} scheme is a client certificate; "
                "give an http_client configured with it"
            )
        basic = scheme.kind == "http" and scheme.http == "basic"
        if basic and not (
            isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)
        ):
            raise TypeError(f"credentials for {name!r} (http basic): a (user, password) tuple")
        if not basic and not isinstance(value, str):
            raise TypeError(f"credentials for {name!r} ({scheme.kind}): a string")

    def _has(self, name: str) -> bool:
        scheme = self.schemes.get(name)
        if scheme is None:
            return False
        if name in self.credentials or scheme.kind in _TRANSPORT_KINDS:
            return True
        # The author's static headers already carry it (e.g. headers={"X-API-Key": ...}).
        return scheme.place == "header" and scheme.param.lower() in self._static

    def apply(self, alternatives: tuple[Any, ...] | None, what: str) -> Applied:
        """What to send for ``alternatives``: the first one fully covered (an empty one,
        optional security, only when none with schemes is); else a :class:`ToolError`
        naming the schemes wanting a credential."""
        applied = Applied()
        if not self.enforced or not alternatives:
            return applied
        covered = [alt for alt in alternatives if all(self._has(n) for n in alt)]
        if not covered:
            raise ToolError(f"{what}: {_missing(alternatives, self)}")
        chosen = next((alt for alt in covered if alt), ())
        for name in chosen:
            if name in self.credentials:
                _send(self.schemes[name], self.credentials[name], applied)
        return applied


def _missing(alternatives: tuple[Any, ...], auth: Authenticator) -> str:
    wanted = []
    for alt in alternatives:
        names = [n for n in alt if not auth._has(n)]
        undefined = [n for n in names if n not in auth.schemes]
        if undefined:
            wanted.append(
                " + ".join(f"{n!r} (not defined in the document's securitySchemes)" for n in names)
            )
        else:
            wanted.append(" + ".join(repr(n) for n in names))
    if len(wanted) == 1:
        return (
            f"needs a credential for security scheme {wanted[0]}; give it as "
            "credentials={...} when the server is built"
        )
    return (
        f"needs credentials for one of the security schemes {' or '.join(wanted)}; give them "
        "as credentials={...} when the server is built"
    )


def _send(scheme: Scheme, value: Credential, applied: Applied) -> None:
    if isinstance(value, tuple):  # http basic (checked when built)
        token = base64.b64encode(f"{value[0]}:{value[1]}".encode()).decode("ascii")
        applied.headers["Authorization"] = f"Basic {token}"
    elif scheme.kind == "apiKey":
        if scheme.place == "header":
            applied.headers[scheme.param] = value
        elif scheme.place == "query":
            applied.query.append((scheme.param, value))
        else:
            applied.cookies.append((scheme.param, value))
    elif scheme.kind == "http" and scheme.http not in ("", "bearer"):
        # Another registered HTTP scheme (e.g. "Token"): its name, then the credential.
        applied.headers["Authorization"] = f"{scheme.http.capitalize()} {value}"
    else:  # http bearer, oauth2, openIdConnect: a token the server's author obtained
        applied.headers["Authorization"] = f"Bearer {value}"


def resolve_server_url(server: dict[str, Any], overrides: Mapping[str, str] | None) -> str:
    """``server["url"]`` with its ``{variables}`` replaced: each from ``overrides``, else
    its ``default``; a value outside a variable's ``enum``, or a variable without one, is a
    ``ValueError``."""
    url = server.get("url")
    if not isinstance(url, str):
        raise ValueError("the document's first server has no 'url'")
    declared = server.get("variables")
    declared = declared if isinstance(declared, dict) else {}
    given = dict(overrides or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ValueError(
            f"server_variables {unknown}: the server URL {url!r} declares "
            f"{sorted(declared) or 'no variables'}"
        )
    values: dict[str, str] = {}
    for var, spec in declared.items():
        spec = spec if isinstance(spec, dict) else {}
        value = given.get(var, spec.get("default"))
        enum = spec.get("enum")
        if value is not None and isinstance(enum, list) and enum and value not in enum:
            raise ValueError(f"server variable {var!r} is {value!r}, not one of {enum}")
        if value is not None:
            values[var] = str(value)

    def replace(match: re.Match[str]) -> str:
        var = match.group(1)
        if var not in values:
            raise ValueError(
                f"the server URL {url!r} names {{{var}}} without a default: "
                f"give server_variables={{{var!r}: ...}} or base_url"
            )
        return values[var]

    return re.sub(r"\{([^{}]*)\}", replace, url)
