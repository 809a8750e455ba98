"""Servers from OpenAPI documents and FastAPI apps: each operation offered as a tool, a
resource or a resource template whose calls go to the API over httpx2 (``Server.from_openapi``;
``Server.from_fastapi`` calls the app in process through httpx2's ASGI transport, no socket).

What the document says is read by :mod:`mcpkit._server._openapi`; here are the requests:
arguments placed in the path, query, headers, cookies and body, the ``credentials`` its
security asks for (:mod:`mcpkit._server._openapi_auth`), the static ``headers`` and the
``request_hook`` applied (the server's own credentials, never the MCP client's token),
one bounded wait per call, and the answer turned into a result (an API error status, or a
network failure, becomes an ``isError`` result naming it).
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urljoin

import anyio
import orjson
from typing_extensions import TypedDict, Unpack

from .._exceptions import ResourceNotFound, ToolError
from ..types._jsonschema import schema_errors
from ._context import Context
from ._openapi import (
    CONTEXT_ARG,
    Argument,
    Operation,
    RouteMap,
    check_kind,
    choose,
    httpx2_module,
    load_document,
    operations,
)
from ._openapi_auth import Authenticator, Credential, resolve_server_url

if TYPE_CHECKING:
    from .._auth._resource import ResourceServer
    from .._middleware import MiddlewareFn
    from .._stores._tasks import TaskStore
    from ._extensions import Extension
    from ._mrtr import StatelessSettings
    from ._tasks import TaskSettings

S = TypeVar("S")
#: The placeholder host ``Server.from_fastapi`` calls its app at (the app never sees it).
FASTAPI_BASE_URL = "http://fastapi.invalid"

#: ``hook(request, ctx)``: sees (and may change) each outgoing ``httpx2.Request``; sync or async.
RequestHook = Callable[[Any, "Context | None"], Any]
#: Characters of an error answer's body quoted in the error result.
EXCERPT_CHARS = 300
#: The most bytes of an answer read (decoded): a larger one is an error result, not memory.
MAX_ANSWER_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Answer:
    """An API's answer, read whole (at most :data:`MAX_ANSWER_BYTES`)."""

    status: int
    reason: str
    content_type: str
    content: bytes
    encoding: str | None

    @property
    def text(self) -> str:
        """The body as text (its declared charset, else UTF-8; bad bytes replaced)."""
        try:
            return self.content.decode(self.encoding or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300


class APICaller:
    """Sends the requests of one server's operations: one httpx2 client while the server
    serves (opened by its lifespan), or the caller's own ``http_client``."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None,
        request_hook: RequestHook | None,
        timeout: float,
        transport: Any = None,
        http_client: Any = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        auth: Authenticator | None = None,
    ) -> None:
        if not (isinstance(timeout, (int, float)) and timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.httpx2 = httpx2_module()
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.request_hook = request_hook
        self.timeout = float(timeout)
        self._transport = transport
        self._given = http_client
        self._open: Any = None
        self.max_answer_bytes = max_answer_bytes
        self.auth = auth

    def _new_client(self) -> Any:
        return self.httpx2.AsyncClient(transport=self._transport, timeout=self.timeout)

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[None]:
        """One client for every call while the server serves (a given one is not closed)."""
        if self._given is not None or self._open is not None:
            yield
            return
        async with self._new_client() as client:
            self._open = client
            try:
                yield
            finally:
                self._open = None

    async def call(self, op: Operation, arguments: dict[str, Any], ctx: Context | None) -> Answer:
        """Send ``op`` with ``arguments``: the API's answer, or a :class:`ToolError` naming
        the failure of the request itself."""
        client = self._given or self._open
        if client is None:  # called outside the server's lifespan: a client for this call
            async with self._new_client() as own:
                return await self._send(own, op, arguments, ctx)
        return await self._send(client, op, arguments, ctx)

    async def _send(
        self, client: Any, op: Operation, arguments: dict[str, Any], ctx: Any
    ) -> Answer:
        what = f"{op.method} {op.path}"
        try:
            request = self._request(client, op, arguments, what)
        except (ValueError, TypeError) as e:  # e.g. a header value that is not ASCII
            raise ToolError(f"{what}: cannot make the request ({e})") from None
        if self.request_hook is not None:
            done = self.request_hook(request, ctx)
            if inspect.isawaitable(done):
                await done
        try:
            # httpx2's timeout bounds each phase; this bounds the whole exchange (an API
            # answering a byte at a time never holds a call longer).
            with anyio.fail_after(self.timeout):
                return await _read(client, request, what, self.max_answer_bytes)
        except (TimeoutError, self.httpx2.TimeoutException):
            raise ToolError(f"{what}: no answer within {self.timeout:g} s") from None
        except self.httpx2.HTTPError as e:
            raise ToolError(f"{what}: the request failed ({type(e).__name__}: {e})") from None

    def _request(self, client: Any, op: Operation, arguments: dict[str, Any], what: str) -> Any:
        # The credentials first: a missing one fails the call before anything is sent.
        sent = self.auth.apply(op.security, what) if self.auth is not None else None
        path = op.path
        for arg in op.by_location("path"):
            value = _scalar(arguments[arg.name])
            if value in ("", ".", ".."):
                # Dot segments are resolved away: "/pets/.." would reach another endpoint.
                raise ToolError(f"{what}: path parameter {arg.name!r} cannot be {value!r}")
            path = path.replace("{" + arg.wire + "}", quote(value, safe=""))
        params: list[tuple[str, str]] = []
        for arg in op.by_location("query"):
            if arguments.get(arg.name) is not None:
                params.extend(_query(arg, arguments[arg.name]))
        headers: dict[str, str] = {}
        for arg in op.by_location("header"):
            if arguments.get(arg.name) is not None:
                headers[arg.wire] = _scalar(arguments[arg.name])
        # The server's own headers win over a header argument of the same name: a model
        # never replaces the credentials its server sends.
        cookies = [
            (a.wire, _scalar(arguments[a.name]))
            for a in op.by_location("cookie")
            if arguments.get(a.name) is not None
        ]
        if sent is not None:  # the credentials win over arguments of the same names too
            params = _without(params, sent.query) + sent.query
            headers = _over(headers, sent.headers)
            cookies = _without(cookies, sent.cookies) + sent.cookies
        headers = _over(headers, self.headers)
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={quote(v, safe='')}" for k, v in cookies)
        body = _body(op, arguments, headers)
        return client.build_request(
            op.method, self.base_url + path, params=params, headers=headers, **body
        )


def _without(pairs: list[tuple[str, str]], given: list[tuple[str, str]]) -> list[tuple[str, str]]:
    names = {k for k, _ in given}
    return [(k, v) for k, v in pairs if k not in names]


def _over(headers: dict[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with ``given`` winning, whatever the case of their names."""
    names = {k.lower() for k in given}
    return {k: v for k, v in headers.items() if k.lower() not in names} | dict(given)


def _scalar(value: Any) -> str:
    """A parameter value as OpenAPI's simple style writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k},{_scalar(v)}" for k, v in value.items())
    return str(value)


#: The separators of OpenAPI's delimited query styles (arrays not exploded).
_DELIMITERS = {"pipeDelimited": "|", "spaceDelimited": " "}


def _query(arg: Argument, value: Any) -> list[tuple[str, str]]:
    """A query parameter as its style writes it: form (exploded unless the document says
    not), deepObject (``name[key]=value``), pipe- or space-delimited arrays."""
    if isinstance(value, dict) and arg.style == "deepObject":
        return [(f"{arg.wire}[{k}]", _scalar(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        if arg.explode:
            return [(arg.wire, _scalar(v)) for v in value]
        if arg.style in _DELIMITERS:
            return [(arg.wire, _DELIMITERS[arg.style].join(_scalar(v) for v in value))]
    if isinstance(value, dict) and arg.explode:
        return [(str(k), _scalar(v)) for k, v in value.items()]
    return [(arg.wire, _scalar(value))]


def _body(op: Operation, arguments: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    if op.body_type is None:
        return {}
    whole = op.by_location("body")
    if whole:
        if whole[0].name not in arguments:
            return {}
        value = arguments[whole[0].name]
    else:
        value = {a.wire: arguments[a.name] for a in op.by_location("field") if a.name in arguments}
    base = op.body_type.split(";")[0].strip().lower()
    if base == "application/json" or base.endswith("+json"):
        headers["Content-Type"] = op.body_type
        return {"content": orjson.dumps(value)}
    if base in ("application/x-www-form-urlencoded", "multipart/form-data"):
        fields = value if isinstance(value, dict) else {}
        form = {k: _scalar(v) for k, v in fields.items()}
        if base == "multipart/form-data":
            files = {a.wire for a in op.by_location("field") if a.binary}
            return {
                "files": {k: (k, v.encode()) if k in files else (None, v) for k, v in form.items()}
            }
        return {"data": form}
    headers["Content-Type"] = op.body_type
    text = value if isinstance(value, (str, bytes)) else orjson.dumps(value)
    return {"content": text}


async def _read(client: Any, request: Any, what: str, limit: int) -> Answer:
    response = await client.send(request, stream=True)
    try:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise ToolError(f"{what}: the answer is larger than {limit} bytes")
    finally:
        await response.aclose()
    return Answer(
        response.status_code,
        response.reason_phrase,
        response.headers.get("content-type", ""),
        bytes(body),
        response.charset_encoding,
    )


def failure(response: Answer) -> str:
    """``HTTP 404 Not Found: <the start of the body>``: what an error answer's result says."""
    line = f"HTTP {response.status} {response.reason}".rstrip()
    text = " ".join(response.text.split())
    if len(text) > EXCERPT_CHARS:
        text = text[:EXCERPT_CHARS] + "…"
    return f"{line}: {text}" if text else line


def tool_result(op: Operation, response: Answer) -> Any:
    """What a tool returns for a 2xx answer: the JSON object (structured, checked against
    the output schema) or the body as text; any other status raises a :class:`ToolError`."""
    if not response.ok:
        raise ToolError(failure(response))
    if op.output_schema is None:
        return response.text or f"HTTP {response.status} {response.reason}"
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise ToolError(
            f"{op.method} {op.path}: the API answered {response.status} with a body "
            "that is not the JSON object its document promises"
        ) from None
    problems = schema_errors(data, op.output_schema)
    if problems:
        # The output schema is the tool's promise to the client: an answer breaking it is
        # reported, not passed on.
        raise ToolError(
            f"{op.method} {op.path}: the API's answer does not match its documented schema "
            f"({'; '.join(problems[:3])})"
        )
    return data


def _tool_function(caller: APICaller, op: Operation) -> Callable[..., Any]:
    async def call(mcpkit_context__: Context, **arguments: Any) -> Any:
        response = await caller.call(op, arguments, mcpkit_context__)
        return tool_result(op, response)

    call.__name__ = call.__qualname__ = op.name
    return call


def _read_function(caller: APICaller, op: Operation, uri: str) -> Callable[..., Any]:
    """A resource's (or template's) read: the body as text (bytes unless textual); 404 is
    the protocol's resource-not-found, another error status an error naming it."""

    async def read(**variables: Any) -> str | bytes:
        ctx = variables.pop(CONTEXT_ARG, None)
        response = await caller.call(op, variables, ctx)
        if response.status == 404:
            raise ResourceNotFound(uri)
        if not response.ok:
            raise ToolError(failure(response))
        kind = response.content_type.lower() or "text/plain"
        if kind.startswith("text/") or "json" in kind or "xml" in kind or not response.content:
            return response.text
        return response.content

    # The template's variables as the function's parameters (what the server reads).
    names = [a.name for a in op.arguments]
    keyword = inspect.Parameter.KEYWORD_ONLY
    read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(CONTEXT_ARG, keyword, annotation=Context)]
        + [inspect.Parameter(n, keyword, annotation=str) for n in names]
    )
    read.__annotations__ = {CONTEXT_ARG: Context, **dict.fromkeys(names, str)}
    read.__name__ = read.__qualname__ = op.name
    return read


def _lifespan(caller: APICaller, user: Callable[..., Any] | None) -> Callable[..., Any]:
    @contextlib.asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[Any]:
        async with caller.opened():
            if user is None:
                yield None
            else:
                async with user(server) as state:
                    yield state

    return lifespan


def _base_url(
    doc: dict[str, Any], given: str | None, document: Any, variables: Mapping[str, str] | None
) -> str:
    """``given``, else the document's first server URL, its ``{variables}`` resolved (a
    relative one is relative to the document's own URL, when it was fetched)."""
    if given is not None:
        if variables:
            raise ValueError("server_variables fill the document's server URL, not base_url")
        if not given.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http:// or https:// URL, not {given!r}")
        return given
    servers = doc.get("servers")
    first = (
        resolve_server_url(servers[0], variables)
        if isinstance(servers, list) and servers and isinstance(servers[0], dict)
        else None
    )
    if variables and first is None:
        raise ValueError("server_variables: the document names no server URL")
    if isinstance(first, str) and first.startswith(("http://", "https://")):
        return first
    fetched = isinstance(document, str) and document.startswith(("http://", "https://"))
    if isinstance(first, str) and fetched:
        return urljoin(str(document), first)
    raise ValueError("base_url is needed: the document names no absolute server URL")


def server_from_openapi(
    cls: Callable[..., S],
    document: Any,
    *,
    base_url: str | None = None,
    name: str | None = None,
    version: str | None = None,
    route_maps: Sequence[RouteMap] = (),
    exclude: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    request_hook: RequestHook | None = None,
    timeout: float = 30.0,
    http_client: Any = None,
    uri_scheme: str = "api",
    max_answer_bytes: int = MAX_ANSWER_BYTES,
    credentials: Mapping[str, Credential] | None = None,
    server_variables: Mapping[str, str] | None = None,
    transport: Any = None,
    **options: Any,
) -> S:
    """``Server.from_openapi``'s work (see its docstring, and docs/server.md)."""
    doc = load_document(document, timeout=timeout)
    if isinstance(exclude, str):
        raise TypeError("exclude is a list of operation names, not one string")
    caller = APICaller(
        _base_url(doc, base_url, document, server_variables),
        headers=headers,
        request_hook=request_hook,
        timeout=timeout,
        transport=transport,
        http_client=http_client,
        max_answer_bytes=max_answer_bytes,
        auth=Authenticator(doc, credentials, headers or {}),
    )
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    assert isinstance(info, dict)
    options.setdefault("description", info.get("description"))
    server = cls(
        name or str(info.get("title") or "openapi"),
        version or str(info.get("version") or "0.1.0"),
        lifespan=_lifespan(caller, options.pop("lifespan", None)),
        **options,
    )
    for op in operations(doc):
        if op.name in exclude:
            continue
        kind = choose(op, route_maps)
        if kind != "exclude":
            check_kind(op, kind)
            _register(server, caller, op, kind, uri_scheme)
    return server


def _register(server: Any, caller: APICaller, op: Operation, kind: str, scheme: str) -> None:
    if kind == "tool":
        server.add_tool(
            _tool_function(caller, op),
            name=op.name,
            title=op.title,
            description=op.description,
            input_schema=op.input_schema,
            output_schema=op.output_schema if op.output_schema is not None else False,
            annotations=op.annotations,
        )
        return
    uri = f"{scheme}://{op.path.lstrip('/')}"
    mime = op.response_type.split(";")[0].strip() if op.response_type else None
    server.add_resource(
        uri,
        _read_function(caller, op, uri),
        name=op.name,
        title=op.title,
        description=op.description,
        mime_type=mime,
    )


def server_from_fastapi(cls: Callable[..., S], app: Any, **options: Any) -> S:
    """``Server.from_fastapi``'s work: the app's own ``openapi()``, called in process."""
    openapi = getattr(app, "openapi", None)
    if not callable(openapi):
        raise TypeError("from_fastapi needs a FastAPI app (an object with an openapi() method)")
    httpx2 = httpx2_module()
    # raise_app_exceptions=False: an app that fails answers 500, as it would over a socket.
    transport = httpx2.ASGITransport(app=app, raise_app_exceptions=False)
    return server_from_openapi(cls, openapi(), transport=transport, **options)


class ServerKeywords(TypedDict, total=False):
    """The keywords of :class:`~mcpkit.Server` itself that ``Server.from_openapi`` and
    ``Server.from_fastapi`` pass on (each as ``Server(...)`` documents it): a misspelt one
    is a type error, and a ``TypeError`` at call time."""

    title: str | None
    description: str | None
    instructions: str | None
    icons: Sequence[Any] | None
    website_url: str | None
    # Server's Lifespan, spelt out: naming it would import the facade back (a circle).
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None
    page_size: int | None
    mask_errors: bool
    capabilities: Mapping[str, Any] | None
    task_store: TaskStore | None
    task_ttl: int | None
    max_task_ttl: int | None
    task_poll_interval: int | None
    task_owner: Callable[[Context], str | None] | None
    max_tasks_per_owner: int | None
    tasks: TaskSettings | None
    stateless: StatelessSettings | None
    middleware: Sequence[MiddlewareFn]
    auth: ResourceServer | None
    extensions: Sequence[Extension]
    include_tags: Collection[str] | None
    exclude_tags: Collection[str] | None


class FromAPI:
    """The constructors of :class:`~mcpkit.Server` from an API (a mixin of it)."""

    @classmethod
    def from_openapi(
        cls: type[S],
        document: Any,
        *,
        base_url: str | None = None,
        name: str | None = None,
        version: str | None = None,
        route_maps: Sequence[RouteMap] = (),
        exclude: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        request_hook: RequestHook | None = None,
        timeout: float = 30.0,
        http_client: Any = None,
        uri_scheme: str = "api",
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        credentials: Mapping[str, Credential] | None = None,
        server_variables: Mapping[str, str] | None = None,
        **options: Unpack[ServerKeywords],
    ) -> S:
        """A server offering each operation of an OpenAPI 3.0/3.1 ``document`` (a dict, a
        path or an ``http(s)://`` URL of JSON or YAML) as a tool, a resource or a resource
        template that calls the API over httpx2 (the ``[all]`` extra).

        Options: ``base_url`` (else the document's first absolute server URL),
        ``route_maps`` (:class:`~mcpkit.RouteMap` list, first match wins), ``exclude``
        (operation names left out), ``headers`` (sent with every request: the server's own
        credentials), ``request_hook`` (``hook(request, ctx)``, sync or async: changes each
        outgoing ``httpx2.Request``, e.g. to add a per-user token the server holds),
        ``timeout`` (seconds one call may take, 30 by default), ``http_client`` (an
        ``httpx2.AsyncClient`` of your own), ``uri_scheme`` (of resources, ``api``),
        ``max_answer_bytes`` (a larger answer is an error result; 10 MiB),
        ``credentials`` (security scheme name to its API key or token, or ``(user,
        password)`` for http basic: sent per operation as its ``security`` asks; a call
        whose scheme has none is an error result naming it), ``server_variables`` (the
        ``{variables}`` of the document's server URL, over their defaults); the
        others (``name``, ``version``, ``instructions``, ...) go to :class:`Server`. See
        docs/server.md, "Servers from OpenAPI and FastAPI".

        Example::

            server = Server.from_openapi("openapi.json", base_url="https://api.example.com")
        """
        return server_from_openapi(
            cls,
            document,
            base_url=base_url,
            name=name,
            version=version,
            route_maps=route_maps,
            exclude=exclude,
            headers=headers,
            request_hook=request_hook,
            timeout=timeout,
            http_client=http_client,
            uri_scheme=uri_scheme,
            max_answer_bytes=max_answer_bytes,
            credentials=credentials,
            server_variables=server_variables,
            **options,
        )

    @classmethod
    def from_fastapi(
        cls: type[S],
        app: Any,
        *,
        base_url: str = FASTAPI_BASE_URL,
        name: str | None = None,
        version: str | None = None,
        route_maps: Sequence[RouteMap] = (),
        exclude: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        request_hook: RequestHook | None = None,
        timeout: float = 30.0,
        uri_scheme: str = "api",
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        credentials: Mapping[str, Credential] | None = None,
        **options: Unpack[ServerKeywords],
    ) -> S:
        """:meth:`from_openapi` for a FastAPI app: its own ``openapi()`` document, each
        operation called in process through httpx2's ASGI transport (no socket); the same
        options but ``http_client`` and ``server_variables`` (``base_url`` defaults to a placeholder host the app
        never sees).

        Example::

            server = Server.from_fastapi(app)
        """
        return server_from_fastapi(
            cls,
            app,
            base_url=base_url,
            name=name,
            version=version,
            route_maps=route_maps,
            exclude=exclude,
            headers=headers,
            request_hook=request_hook,
            timeout=timeout,
            uri_scheme=uri_scheme,
            max_answer_bytes=max_answer_bytes,
            credentials=credentials,
            **options,
        )
