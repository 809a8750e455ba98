"""Where a :class:`~mcpkit.Client` finds its server: target objects, and turning what the user
gave (a target, a command, a URL, a server object, a transport) into a transport."""

from __future__ import annotations

import inspect
import os
import shlex
import ssl
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from .._session._client import ClientSession
from .._transports._base import Transport
from .._transports._memory import memory_pair
from .._transports._stdio import spawn_stdio


def is_url(target: object) -> bool:
    """True for an ``http://`` or ``https://`` URL."""
    return isinstance(target, str) and target.lower().startswith(("http://", "https://"))


def is_transport(target: object) -> bool:
    """True for an object that already is a transport (``send``/``receive``/``aclose``)."""
    return all(callable(getattr(target, name, None)) for name in ("send", "receive", "aclose"))


def command_argv(target: str | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The argv of a command target: a string is split like a shell would, a list is kept.

    A first word ending in ``.py`` runs with this Python, so ``Client("server.py")`` works.
    """
    argv = shlex.split(target) if isinstance(target, str) else [os.fspath(a) for a in target]
    if not argv:
        raise ValueError("empty command: give the server's command line, a URL or a server object")
    if argv[0].endswith(".py") and not os.access(argv[0], os.X_OK):
        argv = [sys.executable, *argv]
    return argv


Command = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True)
class StdioTarget:
    """A server started as a subprocess and spoken to over stdio. Make one with :func:`stdio`."""

    command: Command
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    inherit_env: bool = False
    on_stderr: Callable[[str], None] | None = None

    def argv(self) -> list[str]:
        """The program and its arguments (a ``.py`` file runs with this Python)."""
        cmd = self.command
        # A Path is one program (spaces and all), never a command line to split.
        return command_argv([cmd] if isinstance(cmd, os.PathLike) else cmd)

    async def open(self, stack: AsyncExitStack) -> Transport:
        """Start the server; it is shut down when ``stack`` closes."""
        return await stack.enter_async_context(
            spawn_stdio(
                self.argv(),
                env=self.env,
                inherit_env=self.inherit_env,
                cwd=self.cwd,
                on_stderr=self.on_stderr,
            )
        )


@dataclass(frozen=True)
class HTTPTarget:
    """A server at an ``http(s)://`` URL (Streamable HTTP, falling back to legacy HTTP+SSE).
    Make one with :func:`http`."""

    url: str
    headers: Mapping[str, str] | None = None
    auth: Any = None
    timeout: float | None = None
    http_client: Any = None
    verify: bool | str | ssl.SSLContext = True
    cert: str | tuple[str, str] | None = None

    async def open(self, stack: AsyncExitStack) -> Transport:
        """Connect; the connection is closed (the session ended) when ``stack`` closes."""
        from .._http import open_http

        kw: dict[str, Any] = {"headers": dict(self.headers) if self.headers else None}
        kw["auth"] = self.auth
        if self.timeout is not None:
            kw["timeout"] = self.timeout
        if self.http_client is not None:
            kw["http_client"] = self.http_client
        tls = tls_context(self.verify, self.cert)
        if tls is not None:
            kw["ssl_context"] = tls
        transport: Transport = await stack.enter_async_context(open_http(self.url, **kw))
        return transport


def stdio(
    command: Command,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    inherit_env: bool = False,
    on_stderr: Callable[[str], None] | None = None,
) -> StdioTarget:
    """A server to start as a subprocess: ``Client(stdio("server.py", env={"TOKEN": t}))``.

    ``command`` is one string (split like a shell would), an argv list, or a path. Only a safe
    subset of our environment is passed on unless ``inherit_env``; ``env`` adds to it.
    ``on_stderr`` gets each line the server writes to stderr (default: copied to ours).

    Example::

        async with Client(stdio(["python", "server.py", "--verbose"], cwd="srv")) as client:
            print(await client.list_tools())
    """
    return StdioTarget(command, env, cwd, inherit_env, on_stderr)


def http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: Any = None,
    timeout: float | None = None,
    http_client: Any = None,
    verify: bool | str | ssl.SSLContext = True,
    cert: str | tuple[str, str] | None = None,
) -> HTTPTarget:
    """A server at ``url``: ``Client(http("https://mcp.example.com/mcp", headers=...))``.

    ``auth`` is an OAuth flow of :mod:`mcpkit.auth` (``OAuth``, ``ClientCredentials``, ...),
    an ``httpx2.Auth``, or a callable returning headers; ``timeout`` bounds
    connecting and each read. ``http_client`` replaces our HTTP client: an
    ``httpx2.AsyncClient`` of yours, or :class:`mcpkit.lowlevel.ASGIClient` to reach an ASGI
    app in this process with no socket (tests).

    TLS: ``verify`` is True (the system's trust store), a CA bundle file or directory to
    trust instead, an ``ssl.SSLContext`` of yours, or False (no verification: tests only);
    ``cert`` a client certificate for mutual TLS: a PEM file holding the key too, or a
    ``(certificate, key)`` pair of files.

    Example::

        async with Client(http("http://127.0.0.1:8000/mcp", auth=lambda: {"authorization": t})) as c:
            print(await c.list_tools())
    """
    if not is_url(url):
        raise ValueError(f"not an http(s) URL: {url!r}")
    if http_client is not None and (verify is not True or cert is not None):
        raise ValueError("verify= and cert= configure our HTTP client: set them on yours")
    return HTTPTarget(url, headers, auth, timeout, http_client, verify, cert)


def tls_context(
    verify: bool | str | ssl.SSLContext, cert: str | tuple[str, str] | None
) -> ssl.SSLContext | None:
    """The TLS context for ``verify`` and ``cert`` (None: the defaults)."""
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif verify is True and cert is None:
        return None
    elif verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif isinstance(verify, str):
        where = Path(verify)
        context = ssl.create_default_context(
            cafile=str(where) if where.is_file() else None,
            capath=str(where) if where.is_dir() else None,
        )
        if not where.exists():
            raise ValueError(f"verify={verify!r}: no such CA file or directory")
    else:
        context = ssl.create_default_context()
    if cert is not None:
        certfile, keyfile = (cert, None) if isinstance(cert, str) else cert
        context.load_cert_chain(certfile, keyfile)
    return context


def describe(target: object) -> str:
    """A short human description of a target, for error messages."""
    if isinstance(target, StdioTarget):
        return shlex.join(target.argv())
    if isinstance(target, HTTPTarget):
        return target.url
    if isinstance(target, str):
        return target
    if isinstance(target, (list, tuple)):
        return shlex.join(str(a) for a in target)
    return type(target).__name__


def as_target(
    target: object,
    *,
    env: Mapping[str, str] | None,
    inherit_env: bool,
    cwd: str | os.PathLike[str] | None,
    on_stderr: Callable[[str], None] | None,
    headers: Mapping[str, str] | None,
    auth: Any,
    timeout: float | None,
) -> object:
    """The target object for what the user gave ``Client`` (strings and lists are sugar)."""
    if is_url(target):
        assert isinstance(target, str)
        return HTTPTarget(target, headers, auth, timeout)
    if isinstance(target, (str, Path)) or (
        isinstance(target, (list, tuple)) and all(isinstance(a, (str, Path)) for a in target)
    ):
        return StdioTarget(target, env, cwd, inherit_env, on_stderr)
    return target


async def open_target(stack: AsyncExitStack, target: object) -> Transport:
    """Open the transport for ``target``; everything it starts is closed by ``stack``."""
    if isinstance(target, (StdioTarget, HTTPTarget)):
        return await target.open(stack)
    if callable(getattr(target, "create_session", None)):
        return await _in_memory(stack, target)
    if is_transport(target):
        t: Transport = target  # type: ignore[assignment]
        stack.push_async_callback(t.aclose)
        return t
    raise TypeError(
        f"Client target must be stdio(...), http(...), a command (string or argv list), an "
        f"http(s) URL, a server object with create_session(), or a transport; "
        f"got {type(target).__name__}"
    )


async def _in_memory(stack: AsyncExitStack, server: Any) -> Transport:
    client_end, server_end = memory_pair()
    session = server.create_session(server_end)
    if inspect.isawaitable(session):
        session = await session
    run = getattr(session, "run", None)
    if not callable(run):
        raise TypeError(
            f"{type(server).__name__}.create_session() must return a session with run()"
        )
    tg = await stack.enter_async_context(anyio.create_task_group())

    async def serve() -> None:
        try:
            await run()
        finally:
            with anyio.CancelScope(shield=True):
                await server_end.aclose()

    tg.start_soon(serve)

    async def stop() -> None:
        # The client end is closed first (the session's exit); give the server a moment to
        # notice, then stop whatever it still runs so closing never hangs.
        with anyio.move_on_after(2):
            await client_end.aclose()
        tg.cancel_scope.cancel()

    stack.push_async_callback(stop)
    return client_end


def target_of(
    target: Any,
    *,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    inherit_env: bool,
    on_stderr: Callable[[str], None] | None,
    headers: Mapping[str, str] | None,
    auth: Any,
    timeout: float | None,
) -> object:
    """What ``Client(target, ...)`` connects to, the connection options applied.

    A :class:`StdioTarget` or :class:`HTTPTarget` carries its own options: the same options
    given to ``Client`` as well would be ignored, so they are refused instead.
    """
    sugar = {
        "env": env,
        "cwd": cwd,
        "inherit_env": inherit_env or None,
        "on_stderr": on_stderr,
        "headers": headers,
        "auth": auth,
    }
    if isinstance(target, (StdioTarget, HTTPTarget)) and any(v is not None for v in sugar.values()):
        given = ", ".join(k for k, v in sugar.items() if v is not None)
        raise TypeError(f"give {given} to stdio(...) or http(...), not to Client")
    return as_target(
        target,
        env=env,
        inherit_env=inherit_env,
        cwd=cwd,
        on_stderr=on_stderr,
        headers=headers,
        auth=auth,
        timeout=timeout,
    )


def stdout_note(session: ClientSession) -> str:
    """What to add to a failed handshake's error when the server wrote text that is not
    JSON-RPC (over stdio: a ``print`` to stdout, which is the protocol channel)."""
    seen = session.engine.unparsable
    if seen is None:
        return ""
    text = seen.decode("utf-8", "replace").strip()
    return (
        f"; the server wrote what is not JSON-RPC: {text[:80]!r} (over stdio, stdout carries "
        "only protocol messages: log and print to stderr)"
    )
