"""``SyncClient``: the :class:`Client` API without ``await``, for scripts and notebooks."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from .._exceptions import ConnectionClosed
from .._session import ClientSession
from ..types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    ServerCapabilities,
    Task,
    Tool,
)
from ..types._extensions import DetailedTask, SkillEntry
from ._apps import LoadedApp
from ._client import Client
from ._extensions import ExtensionTaskHandle
from ._listen import Subscription
from ._skills import LoadedSkill
from ._tasks import TaskHandle
from ._util import DEFAULT as _DEFAULT
from ._util import ProgressFn, RootsSource

T = TypeVar("T")
P = ParamSpec("P")


def _takes_the_arguments_of(
    cls: Callable[P, object],
) -> Callable[[Callable[..., None]], Callable[Concatenate[Any, P], None]]:
    """An ``__init__`` that passes its arguments on to ``cls``, typed (for type checkers and
    IDEs) and signed (for ``help()`` and :mod:`inspect`) with ``cls``'s own parameters: one
    list of them, in ``cls``."""

    def sign(init: Callable[..., None]) -> Callable[Concatenate[Any, P], None]:
        # The signature of `cls.__init__`, `self` first, as `init` has.
        init.__signature__ = inspect.signature(cls.__init__)  # type: ignore[attr-defined]
        return init

    return sign


class SyncClient:
    """A blocking :class:`Client`: same arguments, same methods, no ``await``.

    The connection runs on an event loop in a background thread; every call waits for its
    answer (bounded by the client's ``timeout``). Callbacks run on that loop (plain
    functions in a worker thread).

    Example::

        with SyncClient("python server.py") as client:
            print([t.name for t in client.list_tools()])
            print(client.call_tool("add", {"a": 1, "b": 2}).structured_content)

    Without ``with``: ``client = SyncClient(...).open()`` ... ``client.close()``.
    """

    @_takes_the_arguments_of(Client)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Take the arguments of :class:`Client` (the same names, types and defaults; each is
        described there) and build the :class:`Client` this one drives as ``client``."""
        self.client = Client(*args, **kwargs)
        self._portal_cm: contextlib.AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._client_cm: contextlib.AbstractContextManager[Client] | None = None

    def open(self) -> SyncClient:
        """Connect (start the background loop, the server, and ``initialize``)."""
        if self._portal is not None:
            raise RuntimeError("this SyncClient is already open")
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._client_cm = self._portal.wrap_async_context_manager(self.client)
            self._client_cm.__enter__()
        except BaseException:
            self._client_cm = None
            self._stop_portal()
            raise
        return self

    def close(self) -> None:
        """Disconnect and stop the background loop. Safe to call twice."""
        cm, self._client_cm = self._client_cm, None
        try:
            if cm is not None:
                cm.__exit__(None, None, None)
        finally:
            self._stop_portal()

    def _stop_portal(self) -> None:
        pcm, self._portal_cm, self._portal = self._portal_cm, None, None
        if pcm is not None:
            pcm.__exit__(None, None, None)

    def __enter__(self) -> SyncClient:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # getattr: __init__ may have failed (a wrong argument) before setting it.
        if getattr(self, "_portal", None) is not None:
            with contextlib.suppress(Exception):
                self.close()

    def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        portal = self._portal
        if portal is None:
            raise ConnectionClosed(
                "the SyncClient is not open (use `with SyncClient(...)` or .open())"
            )
        return portal.call(lambda: fn(*args, **kwargs))

    # ------------------------------------------------------------------ properties

    @property
    def server_info(self) -> Implementation:
        """The server's name, version and so on."""
        return self.client.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared it supports."""
        return self.client.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions, if any."""
        return self.client.instructions

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.client.protocol_version

    @property
    def initialize_result(self) -> InitializeResult:
        """The server's whole answer to ``initialize``."""
        return self.client.initialize_result

    @property
    def connected(self) -> bool:
        """True while open and the server is reachable."""
        return self._portal is not None and self.client.connected

    def capabilities(self) -> dict[str, Any]:
        """See :meth:`Client.capabilities`."""
        return self.client.capabilities()

    @property
    def session(self) -> ClientSession:
        """See :attr:`Client.session` (its methods are async: call them through the client)."""
        return self.client.session

    def connect(self) -> None:
        """Like :meth:`open`: connect and run the ``initialize`` handshake."""
        self.open()

    # ------------------------------------------------------------------ methods

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
        idempotent: bool = False,
    ) -> Any:
        """See :meth:`Client.send_request`."""
        return self._run(
            self.client.send_request,
            method,
            params,
            timeout=timeout,
            progress_handler=progress_handler,
            idempotent=idempotent,
        )

    def ping(self, *, timeout: float | None = _DEFAULT) -> None:
        """See :meth:`Client.ping`."""
        self._run(self.client.ping, timeout=timeout)

    def list_tools(self, *, use_cache: bool = True, timeout: float | None = _DEFAULT) -> list[Tool]:
        """See :meth:`Client.list_tools`."""
        result: list[Tool] = self._run(self.client.list_tools, use_cache=use_cache, timeout=timeout)
        return result

    def list_tools_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListToolsResult:
        """See :meth:`Client.list_tools_page`."""
        result: ListToolsResult = self._run(self.client.list_tools_page, cursor, timeout=timeout)
        return result

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
        meta: Mapping[str, Any] | None = None,
        idempotent: bool = False,
    ) -> CallToolResult:
        """See :meth:`Client.call_tool`."""
        result: CallToolResult = self._run(
            self.client.call_tool,
            name,
            arguments,
            timeout=timeout,
            progress_handler=progress_handler,
            meta=meta,
            idempotent=idempotent,
        )
        return result

    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> SyncTaskHandle:
        """See :meth:`Client.call_tool_as_task`; the handle's methods block."""
        handle: TaskHandle | ExtensionTaskHandle = self._run(
            self.client.call_tool_as_task, name, arguments, ttl=ttl, timeout=timeout, meta=meta
        )
        return SyncTaskHandle(self, handle)

    def task(self, task_id: str, tool: str | None = None) -> SyncTaskHandle:
        """See :meth:`Client.task`."""
        return SyncTaskHandle(self, self.client.task(task_id, tool))

    def list_skills(self) -> list[SkillEntry]:
        """See :meth:`Client.list_skills`."""
        skills: list[SkillEntry] = self._run(self.client.list_skills)
        return skills

    def get_skill(self, uri: str) -> SkillEntry:
        """See :meth:`Client.get_skill`."""
        skill: SkillEntry = self._run(self.client.get_skill, uri)
        return skill

    def load_skill(self, skill: SkillEntry | str) -> SyncLoadedSkill:
        """See :meth:`Client.load_skill`; the loaded skill's ``read`` blocks."""
        loaded: LoadedSkill = self._run(self.client.load_skill, skill)
        return SyncLoadedSkill(self, loaded)

    def list_tasks(self, *, timeout: float | None = _DEFAULT) -> list[Task]:
        """See :meth:`Client.list_tasks`."""
        tasks: list[Task] = self._run(self.client.list_tasks, timeout=timeout)
        return tasks

    def list_tasks_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> tuple[list[Task], str | None]:
        """See :meth:`Client.list_tasks_page`."""
        page: tuple[list[Task], str | None] = self._run(
            self.client.list_tasks_page, cursor, timeout=timeout
        )
        return page

    def check_tool_result(self, name: str, raw: Any) -> CallToolResult:
        """See :meth:`Client.check_tool_result`."""
        result: CallToolResult = self._run(self.client.check_tool_result, name, raw)
        return result

    def list_resources(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[Resource]:
        """See :meth:`Client.list_resources`."""
        result: list[Resource] = self._run(
            self.client.list_resources, use_cache=use_cache, timeout=timeout
        )
        return result

    def list_resources_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListResourcesResult:
        """See :meth:`Client.list_resources_page`."""
        result: ListResourcesResult = self._run(
            self.client.list_resources_page, cursor, timeout=timeout
        )
        return result

    def list_resource_templates(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[ResourceTemplate]:
        """See :meth:`Client.list_resource_templates`."""
        result: list[ResourceTemplate] = self._run(
            self.client.list_resource_templates, use_cache=use_cache, timeout=timeout
        )
        return result

    def list_resource_templates_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListResourceTemplatesResult:
        """See :meth:`Client.list_resource_templates_page`."""
        result: ListResourceTemplatesResult = self._run(
            self.client.list_resource_templates_page, cursor, timeout=timeout
        )
        return result

    def read_resource(self, uri: str, *, timeout: float | None = _DEFAULT) -> ReadResourceResult:
        """See :meth:`Client.read_resource`."""
        result: ReadResourceResult = self._run(self.client.read_resource, uri, timeout=timeout)
        return result

    def read_app(self, target: str | Tool) -> LoadedApp:
        """See :meth:`Client.read_app`."""
        result: LoadedApp = self._run(self.client.read_app, target)
        return result

    def list_model_tools(self) -> list[Tool]:
        """See :meth:`Client.list_model_tools`."""
        result: list[Tool] = self._run(self.client.list_model_tools)
        return result

    def call_tool_from_app(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """See :meth:`Client.call_tool_from_app`."""
        result: CallToolResult = self._run(self.client.call_tool_from_app, name, arguments)
        return result

    def subscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """See :meth:`Client.subscribe`."""
        self._run(self.client.subscribe, uri, timeout=timeout)

    def unsubscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """See :meth:`Client.unsubscribe`."""
        self._run(self.client.unsubscribe, uri, timeout=timeout)

    def listen(self, *, timeout: float | None = _DEFAULT) -> Subscription | None:
        """See :meth:`Client.listen`."""
        sub: Subscription | None = self._run(self.client.listen, timeout=timeout)
        return sub

    @property
    def subscription(self) -> Subscription | None:
        """See :attr:`Client.subscription`."""
        return self.client.subscription

    @staticmethod
    def clear_era_cache(url: str | None = None) -> None:
        """See :meth:`Client.clear_era_cache`."""
        Client.clear_era_cache(url)

    def list_prompts(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[Prompt]:
        """See :meth:`Client.list_prompts`."""
        result: list[Prompt] = self._run(
            self.client.list_prompts, use_cache=use_cache, timeout=timeout
        )
        return result

    def list_prompts_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListPromptsResult:
        """See :meth:`Client.list_prompts_page`."""
        result: ListPromptsResult = self._run(
            self.client.list_prompts_page, cursor, timeout=timeout
        )
        return result

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
    ) -> GetPromptResult:
        """See :meth:`Client.get_prompt`."""
        result: GetPromptResult = self._run(
            self.client.get_prompt, name, arguments, timeout=timeout
        )
        return result

    def complete(
        self,
        ref: PromptReference | ResourceTemplateReference | Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = _DEFAULT,
    ) -> CompleteResult:
        """See :meth:`Client.complete`."""
        result: CompleteResult = self._run(
            self.client.complete, ref, argument, value, context=context, timeout=timeout
        )
        return result

    def set_logging_level(self, level: str, *, timeout: float | None = _DEFAULT) -> None:
        """See :meth:`Client.set_logging_level`."""
        self._run(self.client.set_logging_level, level, timeout=timeout)

    def set_roots(self, roots: RootsSource) -> None:
        """See :meth:`Client.set_roots`."""
        self._run(self.client.set_roots, roots)

    def notify_roots_changed(self) -> None:
        """See :meth:`Client.notify_roots_changed`."""
        self._run(self.client.notify_roots_changed)


class SyncTaskHandle:
    """The blocking face of a :class:`~mcpkit.TaskHandle` (from :meth:`SyncClient.call_tool_as_task`)."""

    def __init__(self, client: SyncClient, handle: TaskHandle | ExtensionTaskHandle) -> None:
        self.client = client
        self.handle = handle

    @property
    def task_id(self) -> str:
        """The id the server gave the task."""
        return self.handle.task_id

    @property
    def task(self) -> Task | DetailedTask:
        """The last state seen."""
        return self.handle.task

    @property
    def tool(self) -> str | None:
        """The tool the task runs, when known."""
        return self.handle.tool

    @property
    def done(self) -> bool:
        """True once the last seen status is terminal."""
        return self.handle.done

    def status(self, *, timeout: float | None = None) -> Task | DetailedTask:
        """See :meth:`TaskHandle.status`."""
        task: Task | DetailedTask = self.client._run(self.handle.status, timeout=timeout)
        return task

    def wait(self, *, timeout: float | None = None) -> Task | DetailedTask:
        """See :meth:`TaskHandle.wait`."""
        task: Task | DetailedTask = self.client._run(self.handle.wait, timeout=timeout)
        return task

    def result(self, *, timeout: float | None = None) -> CallToolResult:
        """See :meth:`TaskHandle.result`."""
        result: CallToolResult = self.client._run(self.handle.result, timeout=timeout)
        return result

    def cancel(self, *, timeout: float | None = None) -> Task | DetailedTask:
        """See :meth:`TaskHandle.cancel`."""
        task: Task | DetailedTask = self.client._run(self.handle.cancel, timeout=timeout)
        return task


class SyncLoadedSkill:
    """The blocking face of a :class:`~mcpkit.LoadedSkill` (from :meth:`SyncClient.load_skill`)."""

    def __init__(self, client: SyncClient, loaded: LoadedSkill) -> None:
        self.client = client
        self.loaded = loaded

    @property
    def name(self) -> str:
        """The skill's name."""
        return self.loaded.name

    @property
    def entry(self) -> SkillEntry:
        """The skill's entry (as listed)."""
        return self.loaded.entry

    @property
    def text(self) -> str:
        """The whole ``SKILL.md``."""
        return self.loaded.text

    @property
    def body(self) -> str:
        """``SKILL.md`` after its frontmatter."""
        return self.loaded.body

    @property
    def files(self) -> list[str]:
        """The URIs of the skill's files."""
        return self.loaded.files

    def read(self, path_or_uri: str) -> bytes:
        """See :meth:`LoadedSkill.read`."""
        data: bytes = self.client._run(self.loaded.read, path_or_uri)
        return data
