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
from ..types import CallToolResult, Tool
from ._client import Client
from ._util import DEFAULT as _DEFAULT
from ._util import ProgressFn

logger = logging.getLogger("mcpkit.client")


def load_config(config: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The server entries of an ``mcpServers`` config (a dict, JSON text or a JSON file path).

    Each entry is ``{"command", "args", "env", "cwd"}`` (stdio) or ``{"url", "headers"}``
    (HTTP; ``serverUrl`` is accepted for ``url``); entries with ``"disabled": true`` are left
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
        return Client(
            url,
            name=name,
            headers=dict(headers) if isinstance(headers, Mapping) else None,
            **kwargs,
        )
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
    """Several servers at once, with their tools under one namespace.

    Tools are listed as ``<server><separator><tool>`` and calls are routed to the server
    they came from. A server that fails to start, or dies later, is recorded in
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

    async def list_tools(self) -> list[Tool]:
        """The tools of every connected server, named ``<server><separator><tool>``.

        A server that fails to answer is skipped (and recorded in :attr:`errors`).
        """
        per_server: dict[str, list[Tool]] = {}

        async def one(name: str, client: Client) -> None:
            try:
                per_server[name] = await client.list_tools()
            except Exception as e:
                logger.warning("MCP server %r: tools/list failed: %s", name, e)
                self.errors[name] = e

        async with anyio.create_task_group() as tg:
            for name, client in list(self.clients.items()):
                if client.server_capabilities.tools is not None:
                    tg.start_soon(one, name, client)
        tools: list[Tool] = []
        routes: dict[str, tuple[str, str]] = {}
        for name in self.entries:
            for tool in per_server.get(name, []):
                full = f"{name}{self.separator}{tool.name}"
                routes[full] = (name, tool.name)
                tools.append(tool.model_copy(update={"name": full}))
        self._routes = routes
        return tools

    def route(self, name: str) -> tuple[str, str]:
        """``(server, tool)`` for a prefixed tool name."""
        hit = self._routes.get(name)
        if hit is not None:
            return hit
        best = ""
        for server in self.entries:
            if name.startswith(server + self.separator) and len(server) > len(best):
                best = server
        if not best:
            raise MCPError(f"no server of this group has a tool named {name!r}")
        return best, name[len(best) + len(self.separator) :]

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
    ) -> CallToolResult:
        """Call a prefixed tool on the server it belongs to."""
        server, tool = self.route(name)
        return await self.client(server).call_tool(
            tool, arguments, timeout=timeout, progress_handler=progress_handler
        )
