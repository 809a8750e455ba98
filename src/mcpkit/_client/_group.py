"""``ClientGroup``: many servers at once, from the ``mcpServers`` config desktop hosts use."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from .._exceptions import MCPError
from ..types import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from ._client import Client
from ._targets import http
from ._util import DEFAULT as _DEFAULT
from ._util import ProgressFn

logger = logging.getLogger("mcpkit.client")


def load_config(config: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The server entries of an ``mcpServers`` config (a dict, JSON text or a JSON file path).

    Each entry is ``{"command", "args", "env", "cwd"}`` (stdio) or ``{"url", "headers",
    "verify", "cert"}`` (HTTP; ``serverUrl`` is accepted for ``url``; TLS as :func:`http`); entries with ``"disabled": true`` are left
    out; other keys (``type``, ``description``, ...) are ignored.
    """
    if isinstance(config, os.PathLike) or (
        isinstance(config, str) and not config.lstrip().startswith("{")
    ):
        data: Any = orjson.loads(Path(os.fspath(config)).read_bytes())
    elif isinstance(config, str):
        data = orjson.loads(config)
    else:
        data = config
    if not isinstance(data, Mapping):
        raise ValueError("an mcpServers config must be a JSON object")
    servers = data.get("mcpServers", data.get("servers", data))
    if not isinstance(servers, Mapping):
        raise ValueError("'mcpServers' must be an object of server entries")
    out: dict[str, dict[str, Any]] = {}
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"server {name!r}: the entry must be an object")
        if entry.get("disabled") is True:
            continue
        item = dict(entry)
        if "url" not in item and isinstance(item.get("serverUrl"), str):
            item["url"] = item["serverUrl"]  # the spelling some hosts use
        if not ("command" in item or "url" in item):
            raise ValueError(f"server {name!r}: needs 'command' (stdio) or 'url' (HTTP)")
        out[str(name)] = item
    return out


def client_for(name: str, entry: Mapping[str, Any], **kwargs: Any) -> Client:
    """A :class:`Client` for one ``mcpServers`` entry."""
    if "url" in entry:
        url = entry["url"]
        if not isinstance(url, str):
            raise ValueError(f"server {name!r}: 'url' must be a string")
        headers = entry.get("headers")
        verify, cert = entry.get("verify", True), entry.get("cert")
        if not isinstance(verify, (bool, str)) or not (cert is None or isinstance(cert, str)):
            raise ValueError(f"server {name!r}: 'verify' is true/false or a CA path, 'cert' a path")
        kwargs = dict(kwargs)
        for stdio_only in ("env", "cwd", "inherit_env", "on_stderr"):
            kwargs.pop(stdio_only, None)  # group-wide options that a URL entry has no use for
        merged = {
            **(kwargs.pop("headers", None) or {}),
            **(dict(headers) if isinstance(headers, Mapping) else {}),
        }
        target = http(
            url, headers=merged or None, auth=kwargs.pop("auth", None), verify=verify, cert=cert
        )
        return Client(target, name=name, **kwargs)
    command = entry["command"]
    args = entry.get("args") or []
    if (
        not isinstance(command, str)
        or not isinstance(args, list)
        or not all(isinstance(a, str) for a in args)
    ):
        raise ValueError(
            f"server {name!r}: 'command' must be a string and 'args' a list of strings"
        )
    env = entry.get("env")
    if env is not None and not (
        isinstance(env, Mapping) and all(isinstance(v, str) for v in env.values())
    ):
        raise ValueError(f"server {name!r}: 'env' must map names to strings")
    return Client([command, *args], name=name, env=env, cwd=entry.get("cwd"), **kwargs)


class ClientGroup:
    """Several servers at once, with their tools, prompts and resources under one namespace.

    Tools and prompts are listed as ``<server><separator><name>`` and calls are routed to
    the server they came from; resources keep their URIs (their names are prefixed) and
    reads go to the server that listed them. A server that fails to start, or dies later, is recorded in
    :attr:`errors` and leaves the others working.

    Example::

        config = {"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
            "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
        }}
        async with ClientGroup(config) as group:
            tools = await group.list_tools()          # names like "files_read_file"
            result = await group.call_tool("files_read_file", {"path": "README.md"})

    Other keyword arguments (``timeout``, ``sampling_handler``, ...) go to every :class:`Client`.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | str | os.PathLike[str],
        *,
        separator: str = "_",
        **client_kwargs: Any,
    ) -> None:
        self.separator = separator
        self.entries = load_config(config)
        self._client_kwargs = client_kwargs
        #: Connected clients by server name.
        self.clients: dict[str, Client] = {}
        #: Why a server is not (or no longer) usable, by server name.
        self.errors: dict[str, BaseException] = {}
        self._routes: dict[str, tuple[str, str]] = {}
        self._prompt_routes: dict[str, tuple[str, str]] = {}
        self._uri_routes: dict[str, set[str]] = {}
        self._tg: TaskGroup | None = None
        self._stop = anyio.Event()

    async def __aenter__(self) -> ClientGroup:
        self._stop = anyio.Event()
        self._tg = tg = anyio.create_task_group()
        await tg.__aenter__()
        readies = []
        for name, entry in self.entries.items():
            ready = anyio.Event()
            readies.append(ready)
            try:
                client = client_for(name, entry, **self._client_kwargs)
            except (ValueError, TypeError) as e:
                self.errors[name] = e
                ready.set()
                continue
            tg.start_soon(self._hold, name, client, ready)
        try:
            # Each connect is bounded by its client's own timeouts.
            for ready in readies:
                await ready.wait()
        except BaseException:
            self._stop.set()
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._tg is not None
        await self._tg.__aexit__(None, None, None)

    async def _hold(self, name: str, client: Client, ready: anyio.Event) -> None:
        # Each client lives in its own task, so it is opened and closed by the same task and
        # one failing does not cancel the others.
        try:
            async with client:
                self.clients[name] = client
                ready.set()
                await self._stop.wait()
        except Exception as e:
            logger.warning("MCP server %r failed: %s", name, e)
            self.errors[name] = e
        finally:
            self.clients.pop(name, None)
            ready.set()

    def client(self, name: str) -> Client:
        """The client of server ``name`` (raises :class:`~mcpkit.MCPError` if it is not connected)."""
        c = self.clients.get(name)
        if c is None:
            why = self.errors.get(name)
            raise MCPError(f"server {name!r} is not connected" + (f": {why}" if why else ""))
        return c

    async def _gather(self, kind: str, list_one: Any) -> dict[str, list[Any]]:
        """``list_one(client)`` on every connected server declaring capability ``kind``, at
        once; a server that fails to answer is skipped (and recorded in :attr:`errors`)."""
        per_server: dict[str, list[Any]] = {}

        async def one(name: str, client: Client) -> None:
            try:
                per_server[name] = await list_one(client)
            except Exception as e:
                logger.warning("MCP server %r: listing %s failed: %s", name, kind, e)
                self.errors[name] = e

        async with anyio.create_task_group() as tg:
            for name, client in list(self.clients.items()):
                if getattr(client.server_capabilities, kind, None) is not None:
                    tg.start_soon(one, name, client)
        return {name: per_server[name] for name in self.entries if name in per_server}

    def _prefixed(self, per_server: dict[str, list[Any]], routes: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for name, items in per_server.items():
            for item in items:
                full = f"{name}{self.separator}{item.name}"
                routes[full] = (name, item.name)
                out.append(item.model_copy(update={"name": full}))
        return out

    async def list_tools(self) -> list[Tool]:
        """The tools of every connected server, named ``<server><separator><tool>``.

        A server that fails to answer is skipped (and recorded in :attr:`errors`).
        """
        routes: dict[str, tuple[str, str]] = {}
        tools = self._prefixed(await self._gather("tools", lambda c: c.list_tools()), routes)
        self._routes = routes
        return tools

    async def list_prompts(self) -> list[Prompt]:
        """The prompts of every connected server, named ``<server><separator><prompt>``."""
        routes: dict[str, tuple[str, str]] = {}
        prompts = self._prefixed(await self._gather("prompts", lambda c: c.list_prompts()), routes)
        self._prompt_routes = routes
        return prompts

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prefixed prompt from the server it belongs to."""
        server, prompt = self._prompt_routes.get(name) or self._split(name, "prompt")
        return await self.client(server).get_prompt(prompt, arguments)

    async def list_resources(self) -> list[Resource]:
        """The resources of every connected server, their ``name`` prefixed with the server's
        (URIs are kept: :meth:`read_resource` finds the server that listed one)."""
        per_server = await self._gather("resources", lambda c: c.list_resources())
        self._uri_routes = {}
        for server, items in per_server.items():
            for item in items:
                self._uri_routes.setdefault(str(item.uri), set()).add(server)
        return self._prefixed(per_server, {})

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """The resource templates of every connected server, ``name`` prefixed."""
        per_server = await self._gather("resources", lambda c: c.list_resource_templates())
        return self._prefixed(per_server, {})

    async def read_resource(self, uri: str, *, server: str | None = None) -> ReadResourceResult:
        """Read ``uri`` from ``server``, or from the server that listed it (the one server
        offering resources when only one does). Raises :class:`~mcpkit.MCPError` when the
        URI is ambiguous or unknown: say which server with ``server=``."""
        if server is None:
            listed = self._uri_routes.get(uri, set())
            offering = [
                n for n, c in self.clients.items() if c.server_capabilities.resources is not None
            ]
            candidates = sorted(listed) or offering
            if len(candidates) != 1:
                raise MCPError(
                    f"which server has {uri!r}? "
                    + (f"{', '.join(candidates)} all could: " if candidates else "none listed it: ")
                    + "pass server=NAME"
                )
            server = candidates[0]
        return await self.client(server).read_resource(uri)

    def _split(self, name: str, what: str) -> tuple[str, str]:
        best = ""
        for server in self.entries:
            if name.startswith(server + self.separator) and len(server) > len(best):
                best = server
        if not best:
            raise MCPError(f"no server of this group has a {what} named {name!r}")
        return best, name[len(best) + len(self.separator) :]

    def route(self, name: str) -> tuple[str, str]:
        """``(server, tool)`` for a prefixed tool name."""
        return self._routes.get(name) or self._split(name, "tool")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
        idempotent: bool = False,
    ) -> CallToolResult:
        """Call a prefixed tool on the server it belongs to (``idempotent``: see
        :meth:`Client.call_tool`)."""
        server, tool = self.route(name)
        return await self.client(server).call_tool(
            tool,
            arguments,
            timeout=timeout,
            progress_handler=progress_handler,
            idempotent=idempotent,
        )
