"""Reading OAuth documents over HTTP: metadata, JWKS, introspection answers.

Every fetch is bounded in time and size (the documents come from servers we trust only as
far as their URL), and its failure is one clear :class:`FetchError` naming the URL.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import orjson

from .._exceptions import AuthServerError, HTTPError
from .._http._client_common import read_limited
from .._http._h1client import HTTP1Client
from .._http._interface import HTTPClient
from .._http._sse import MessageTooLarge

#: Largest OAuth document accepted (metadata and key sets are a few KiB).
MAX_DOCUMENT = 256 * 1024
#: Seconds a fetch may take in full.
FETCH_TIMEOUT = 10.0


def basic_auth(client_id: str, secret: str) -> dict[str, str]:
    """The ``Authorization`` header of HTTP Basic client authentication (RFC 6749 2.3.1:
    each part form-urlencoded first)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


class FetchError(AuthServerError):
    """An OAuth document at ``url`` could not be fetched or used."""

    def __init__(self, url: str, why: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {why}")
        self.url = url
        self.status = status


async def _read(resp: Any, url: str) -> bytes:
    try:
        return await read_limited(resp, MAX_DOCUMENT)
    except MessageTooLarge:
        raise FetchError(url, f"the document is larger than {MAX_DOCUMENT} bytes") from None


async def fetch_json(
    client: HTTPClient | None,
    url: str,
    *,
    form: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = FETCH_TIMEOUT,
) -> tuple[int, dict[str, Any]]:
    """GET ``url`` (or POST ``form`` to it) and return the status and the JSON object.

    Non-2xx answers with a JSON object body are returned too (an OAuth error body); any
    other failure raises :class:`FetchError`.
    """
    status, doc, _ = await request_json(client, url, form=form, headers=headers, timeout=timeout)
    return status, doc


async def request_json(
    client: HTTPClient | None,
    url: str,
    *,
    form: Mapping[str, str] | None = None,
    json: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = FETCH_TIMEOUT,
) -> tuple[int, dict[str, Any], Any]:
    """As :func:`fetch_json` (a JSON body instead of a form too), with the answer's
    headers (case-insensitive ``get``: a ``DPoP-Nonce``, say)."""
    own = client is None
    http: Any = HTTP1Client(timeout=timeout) if client is None else client
    sent = {"accept": "application/json", **(headers or {})}
    content = b""
    method = "GET"
    if form is not None:
        method = "POST"
        content = urlencode(form).encode()
        sent["content-type"] = "application/x-www-form-urlencoded"
    elif json is not None:
        method = "POST"
        content = orjson.dumps(dict(json))
        sent["content-type"] = "application/json"
    try:
        with anyio.fail_after(timeout):
            async with http.stream(
                method, url, content=content, headers=sent, timeout=timeout
            ) as resp:
                status = resp.status_code
                answer_headers = resp.headers  # case-insensitive .get()
                body = await _read(resp, url)
    except TimeoutError:
        raise FetchError(url, f"no answer within {timeout:g} s") from None
    except HTTPError as e:
        raise FetchError(url, str(e)) from None
    finally:
        if own:
            await http.aclose()
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise FetchError(url, f"HTTP {status}, not JSON", status) from None
    if not isinstance(doc, dict):
        raise FetchError(url, f"HTTP {status}, not a JSON object", status)
    return status, doc, answer_headers


async def first_json(
    client: HTTPClient | None, urls: list[str], what: str
) -> tuple[str, dict[str, Any]]:
    """The first of ``urls`` answering 200 with a JSON object: ``(url, document)``.

    Where OAuth documents may live at several places (RFC 8414 / OpenID / RFC 9728 fallbacks);
    raises :class:`FetchError` naming every place tried when none has ``what``.
    """
    errors: list[str] = []
    statuses: list[int | None] = []
    for url in urls:
        try:
            status, doc = await fetch_json(client, url)
        except FetchError as e:
            errors.append(str(e))
            statuses.append(e.status)
            continue
        if status == 200:
            return url, doc
        errors.append(f"{url}: HTTP {status}")
        statuses.append(status)
    # 404 everywhere: the document does not exist (which callers may treat as an answer).
    missing = 404 if statuses and all(s == 404 for s in statuses) else None
    raise FetchError(urls[0] if urls else "", f"no {what}: " + "; ".join(errors), missing)


async def issuer_metadata(
    client: HTTPClient | None, issuer: str, urls: list[str]
) -> dict[str, Any]:
    """An authorization server's metadata, from the first of ``urls`` that has it; refused
    when it names another issuer (RFC 8414 section 3.3)."""
    url, doc = await first_json(client, urls, f"metadata for authorization server {issuer}")
    if doc.get("issuer") != issuer:
        raise FetchError(url, f"the metadata names issuer {doc.get('issuer')!r}")
    return doc
