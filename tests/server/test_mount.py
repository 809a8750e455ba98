"""``Server.mount``: a local server served in place, and a remote one forwarded through a
Client (the everything example over stdio), each under a prefix with live list changes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._served import Served

import mcpkit._server._mount as mount_module
from mcpkit import Client, Context, InvalidParams, MethodNotFound, Server
from mcpkit.middleware import MCPRequest
from mcpkit.types import CreateMessageResult, PromptReference, ResourceTemplateReference

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = str(ROOT / "examples" / "everything.py")


def _child() -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        yield {"owner": "child"}

    child = Server("child", lifespan=lifespan)

    @child.tool()
    async def whose(ctx: Context) -> str:
        """Whose lifespan state the tool sees."""
        await ctx.report_progress(1, 2, "half")
        return f"{ctx.lifespan_state['owner']} via {ctx.server.name}"

    @child.tool()
    async def ask(ctx: Context) -> str:
        """Ask the client's model (through the parent's session)."""
        result = await ctx.sample("hello?", max_tokens=5)
        return getattr(result.content, "text", "?")

    @child.resource("notes://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    @child.resource("notes://index")
    def index() -> str:
        return "all notes"

    @child.prompt()
    def greet(language: str) -> str:
        return f"greet in {language}"

    @child.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return [v for v in ("fr", "de", "en") if v.startswith(argument.value)]

    return child


def _parent(child: Server) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        yield {"owner": "parent"}

    parent = Server("parent", lifespan=lifespan)

    @parent.tool()
    def own() -> str:
        return "parent's own"

    parent.mount(child, prefix="kid")
    return parent


async def _sample(params: Any, ctx: Any) -> CreateMessageResult:
    return CreateMessageResult.model_validate(
        {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}
    )


async def test_a_local_server_is_served_under_its_prefix() -> None:
    child = _child()
    progress: list[tuple[float, float | None]] = []
    with anyio.fail_after(10):
        async with Client(_parent(child), sampling_handler=_sample) as c:
            names = [t.name for t in await c.list_tools()]
            assert names == ["own", "kid_whose", "kid_ask"]
            result = await c.call_tool(
                "kid_whose", {}, progress_handler=lambda p, t, m: progress.append((p, t))
            )
            assert result.content[0].text == "child via child"  # type: ignore[union-attr]
            assert progress == [(1, 2)]
            asked = await c.call_tool("kid_ask")
            assert asked.content[0].text == "sampled"  # type: ignore[union-attr]
            assert [r.uri for r in await c.list_resources()] == ["notes://kid/index"]
            templates = await c.list_resource_templates()
            assert [t.uri_template for t in templates] == ["notes://kid/{id}"]
            read = await c.read_resource("notes://kid/7")
            assert read.contents[0].uri == "notes://kid/7"
            assert read.contents[0].text == "note 7"  # type: ignore[union-attr]
            assert (await c.read_resource("notes://kid/index")).contents[0].text == "all notes"  # type: ignore[union-attr]
            prompt = await c.get_prompt("kid_greet", {"language": "fr"})
            assert prompt.messages[0].content.text == "greet in fr"  # type: ignore[union-attr]
            done = await c.complete(PromptReference(name="kid_greet"), "language", "d")
            assert done.completion.values == ["de"]
            done = await c.complete(ResourceTemplateReference(uri="notes://kid/{id}"), "id", "e")
            assert done.completion.values == ["en"]
            with pytest.raises(InvalidParams, match="Unknown tool: whose"):
                await c.call_tool("whose")  # the child's own name is not the parent's


async def test_a_mounted_local_servers_own_middleware_runs_under_its_own_names() -> None:
    child = _child()
    seen: list[tuple[str, str | None, Any]] = []

    async def record(request: MCPRequest, call_next: Any) -> Any:
        seen.append((request.method, request.target, request.context is not None))
        if request.target == "greet":  # changes the request the child serves
            request.params = {**(request.params or {}), "arguments": {"language": "nl"}}
        if request.target == "notes://index":  # answers without the child's function
            return {"contents": [{"uri": "notes://index", "text": "from middleware"}]}
        return await call_next(request)

    child.add_middleware(record)
    with anyio.fail_after(10):
        async with Client(_parent(child), sampling_handler=_sample) as c:
            result = await c.call_tool("kid_whose")
            assert result.content[0].text == "child via child"  # type: ignore[union-attr]
            prompt = await c.get_prompt("kid_greet", {"language": "fr"})
            assert prompt.messages[0].content.text == "greet in nl"  # type: ignore[union-attr]
            short = await c.read_resource("notes://kid/index")
            assert short.contents[0].uri == "notes://kid/index"  # the parent's URI again
            assert short.contents[0].text == "from middleware"  # type: ignore[union-attr]
            assert (await c.read_resource("notes://kid/3")).contents[0].text == "note 3"  # type: ignore[union-attr]
            await c.call_tool("own")  # the parent's own tool: not the child's middleware
    assert seen == [
        ("tools/call", "whose", True),
        ("prompts/get", "greet", True),
        ("resources/read", "notes://index", True),
        ("resources/read", "notes://3", True),
    ]


async def test_the_mounted_servers_changes_reach_the_parents_clients() -> None:
    child = _child()
    changed = anyio.Event()
    kinds: list[str] = []

    async def on_change(kind: str) -> None:  # async: plain callbacks run in a worker thread
        kinds.append(kind)
        changed.set()

    with anyio.fail_after(10):
        async with Client(_parent(child), list_changed_handler=on_change) as c:
            assert "kid_late" not in [t.name for t in await c.list_tools()]
            child.add_tool(lambda: "late", name="late")
            await changed.wait()
            assert kinds == ["tools"]
            assert "kid_late" in [t.name for t in await c.list_tools()]
            assert (await c.call_tool("kid_late")).content[0].text == "late"  # type: ignore[union-attr]
            child.remove_tool("late")
            assert "kid_late" not in [t.name for t in await c.list_tools(use_cache=False)]


async def test_mount_refuses_bad_prefixes_and_itself() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="mount itself"):
        server.mount(server)
    with pytest.raises(TypeError, match=r"mount Client\('python x.py'\)"):
        server.mount("python x.py")
    for bad in ("", "a/b", "x:y"):
        with pytest.raises(ValueError, match="invalid mount prefix"):
            server.mount(Server("other"), prefix=bad)


async def test_a_name_the_parent_has_stays_the_parents() -> None:
    child = Server("child")
    child.add_tool(lambda: "child", name="same")
    parent = Server("parent")
    parent.add_tool(lambda: "parent", name="same")
    parent.mount(child)
    with anyio.fail_after(10):
        async with Client(parent) as c:
            assert (await c.call_tool("same")).content[0].text == "parent"  # type: ignore[union-attr]


async def test_a_remote_server_is_forwarded_through_a_client() -> None:
    parent = Server("hub")
    parent.mount(Client([sys.executable, EVERYTHING]), prefix="ev")
    progress: list[float] = []
    with anyio.fail_after(30):
        async with Client(parent, sampling_handler=_sample) as c:
            names = [t.name for t in await c.list_tools()]
            assert "ev_test_simple_text" in names and "ev_test_sampling" in names
            text = await c.call_tool("ev_test_simple_text")
            assert not text.is_error and text.content[0].text  # type: ignore[union-attr]
            sampled = await c.call_tool("ev_test_sampling", {"prompt": "hi"})
            assert sampled.content[0].text == "LLM response: sampled"  # type: ignore[union-attr]
            await c.call_tool(
                "ev_test_tool_with_progress", progress_handler=lambda p, t, m: progress.append(p)
            )
            assert progress == [0, 50, 100]
            read = await c.read_resource("test://ev/template/5/data")
            assert read.contents[0].uri == "test://ev/template/5/data"
            assert '"id":"5"' in read.contents[0].text.replace(" ", "")  # type: ignore[union-attr]
            prompt = await c.get_prompt("ev_test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert "arg1='a'" in prompt.messages[0].content.text  # type: ignore[union-attr]
            failed = await c.call_tool("ev_test_error_handling")
            assert failed.is_error


@pytest.mark.parametrize("upstream", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("downstream", ["2025-11-25", "2026-07-28"])
async def test_a_remote_servers_task_tools_run_as_tasks_through_the_mount(
    upstream: str, downstream: str
) -> None:
    parent = Server("hub")
    parent.mount(Client([sys.executable, EVERYTHING], protocol_version=upstream), prefix="ev")
    with anyio.fail_after(30):
        async with Client(parent, protocol_version=downstream) as c:
            tools = {t.name: t for t in await c.list_tools()}
            assert tools["ev_failing_job"].execution.task_support == "required"  # type: ignore[union-attr]
            for name, args, text in (
                ("ev_slow_compute", {"seconds": 0.05}, "computed result after 0.05s"),
                ("ev_failing_job", {}, "the job failed"),  # runs only as a task upstream
            ):
                handle = await c.call_tool_as_task(name, args)
                assert handle.task_id  # a task of the parent's
                result = await handle.result()
                assert result.content[0].text == text  # type: ignore[union-attr]
            if downstream == "2025-11-25":  # a plain call of a task-only tool: refused
                with pytest.raises(MethodNotFound, match="must be called as a task"):
                    await c.call_tool("ev_failing_job")


async def test_a_remote_servers_list_change_reaches_the_parents_clients() -> None:
    parent = Server("hub")
    parent.mount(Client([sys.executable, EVERYTHING]), prefix="ev")
    changed = anyio.Event()

    async def on_change(kind: str) -> None:
        changed.set()

    with anyio.fail_after(30):
        async with Client(parent, list_changed_handler=on_change) as c:
            before = {t.name for t in await c.list_tools()}
            await c.call_tool("ev_test_trigger_tool_change")
            await changed.wait()
            after = {t.name for t in await c.list_tools(use_cache=False)}
            assert after != before and after ^ before == {"ev_test_toggled_tool"}


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_subscription_to_a_remote_resource_is_made_upstream_and_updates_relayed(
    revision: str,
) -> None:
    parent = Server("hub")
    parent.mount(Client([sys.executable, EVERYTHING]), prefix="ev")
    updated: list[str] = []
    told = anyio.Event()

    async def on_updated(params: Any) -> None:
        updated.append(params.uri)
        told.set()

    with anyio.fail_after(30):
        async with Client(
            parent, protocol_version=revision, resource_updated_handler=on_updated
        ) as c:
            await c.subscribe("test://ev/watched-resource")
            await c.subscribe("test://ev/watched-resource")  # a second time: one upstream
            await c.call_tool("ev_update_watched_resource", {"text": "fresh"})
            await told.wait()
            assert updated == ["test://ev/watched-resource"]
            read = await c.read_resource("test://ev/watched-resource")
            assert read.contents[0].text == "fresh"  # type: ignore[union-attr]
            mount = parent._mounts[0]
            assert mount.subscribed == {"test://watched-resource"}  # type: ignore[attr-defined]


async def test_a_subscription_reaches_a_remote_server_mounted_by_a_mounted_server() -> None:
    middle = Server("middle")
    middle.mount(Client([sys.executable, EVERYTHING]), prefix="ev")
    hub = Server("hub")
    hub.mount(middle, prefix="mid")
    told = anyio.Event()
    updated: list[str] = []

    async def on_updated(params: Any) -> None:
        updated.append(params.uri)
        told.set()

    with anyio.fail_after(30):
        async with Client(hub, resource_updated_handler=on_updated) as c:
            await c.subscribe("test://mid/ev/watched-resource")
            await c.call_tool("mid_ev_update_watched_resource", {"text": "deep"})
            await told.wait()
            assert updated == ["test://mid/ev/watched-resource"]
            assert middle._mounts[0].subscribed == {"test://watched-resource"}  # type: ignore[attr-defined]


async def test_hostile_endless_subscriptions_through_a_mount_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mount_module, "MAX_UPSTREAM_SUBSCRIPTIONS", 2)
    parent = Server("hub")
    parent.mount(Client([sys.executable, EVERYTHING]), prefix="ev")
    with anyio.fail_after(30):
        async with Client(parent, protocol_version="2025-11-25") as c:
            await c.subscribe("test://ev/template/1/data")
            await c.subscribe("test://ev/template/2/data")
            with pytest.raises(InvalidParams, match="too many subscriptions"):
                await c.subscribe("test://ev/template/3/data")
            await c.subscribe("test://ev/template/1/data")  # one it holds: still fine
            assert (await c.call_tool("ev_test_simple_text")).is_error is not True


MORTAL = '''
import os

from mcpkit import Server

server = Server("mortal")


@server.tool()
def die() -> str:
    """End this process at once."""
    os._exit(3)


@server.tool()
def alive() -> str:
    """Answer."""
    return "yes"


if __name__ == "__main__":
    server.run()
'''


async def test_a_mounted_server_that_dies_is_dropped_then_reconnected(tmp_path: Path) -> None:
    (tmp_path / "mortal.py").write_text(MORTAL)
    parent = Server("hub")

    @parent.tool()
    def own() -> str:
        """The hub's own."""
        return "hub"

    parent.mount(Client([sys.executable, str(tmp_path / "mortal.py")]), prefix="m")
    changed = anyio.Event()

    async def on_change(kind: str) -> None:
        changed.set()

    with anyio.fail_after(60):
        async with Client(parent, list_changed_handler=on_change) as c:
            assert (await c.call_tool("m_alive")).content[0].text == "yes"  # type: ignore[union-attr]
            died = await c.call_tool("m_die")
            assert died.is_error and "exited with code 3" in died.content[0].text  # type: ignore[union-attr]
            assert (await c.call_tool("own")).content[0].text == "hub"  # type: ignore[union-attr]
            seen: list[set[str]] = []
            while not seen or "m_alive" not in seen[-1]:  # dropped, then back (new process)
                await changed.wait()
                changed = anyio.Event()
                seen.append({t.name for t in await c.list_tools(use_cache=False)})
            assert {"own"} in seen  # the dead server's tools left the list meanwhile
            assert (await c.call_tool("m_alive")).content[0].text == "yes"  # type: ignore[union-attr]


def test_a_hub_file_mounting_a_stdio_server_serves_over_http(tmp_path: Path) -> None:
    """As users run it: a server file mounting another, ``mcpkit run --transport http``."""
    hub = tmp_path / "hub.py"
    hub.write_text(
        textwrap.dedent(
            f"""
            import sys
            from mcpkit import Client, Server

            server = Server("hub")
            server.mount(Client([sys.executable, {EVERYTHING!r}]), prefix="ev")
            """
        )
    )
    with subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(hub), "--transport", "http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            url = Served(proc).url()
            out = subprocess.run(
                [sys.executable, "-m", "mcpkit", "call", url, "ev_test_simple_text"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert out.returncode == 0, out.stderr
            assert "simple" in out.stdout.lower(), out.stdout
        finally:
            proc.terminate()
            proc.wait(timeout=20)
