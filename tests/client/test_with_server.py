"""The Client against our own ``mcpkit.Server``, in process (``Client(server)``)."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from tests.client.servers.ours import make_server

from mcpkit import Client, Context, Server, SyncClient
from mcpkit.types import PromptReference

pytestmark = pytest.mark.anyio


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


#: Every revision-dependent test here runs under the newest handshake revision and the
#: stateless one (where sampling, elicitation and roots travel as input requests).
REVISIONS = ["2025-11-25", "2026-07-28"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_everything_in_process(revision: str) -> None:
    logs: list[Any] = []
    progress: list[Any] = []

    async def sample(params: Any, ctx: Any) -> str:
        return "forty-two"

    async def elicit(params: Any, ctx: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ann"}}

    server = make_server()
    with anyio.fail_after(10):
        async with Client(
            server,
            protocol_version=revision,
            sampling_handler=sample,
            elicitation_handler=elicit,
            roots=["file:///work"],
            logging_handler=logs.append,
        ) as client:
            assert client.protocol_version == revision
            assert client.server_info.name == "in-process" and client.server_info.version == "2.0"
            assert client.instructions == "Be brief."
            tools = await client.list_tools()  # three pages of two
            assert [t.name for t in tools] == ["add", "work", "ask", "who", "roots"]
            r = await client.call_tool("add", {"a": 20, "b": 22})
            assert r.structured_content == {"result": 42} and not r.is_error
            r = await client.call_tool("add", {"a": "x", "b": 1})
            assert r.is_error is True
            r = await client.call_tool(
                "work", {"steps": 3}, progress_handler=lambda *a: progress.append(a)
            )
            assert text(r) == "worked"
            assert [p[0] for p in progress] == [1, 2, 3]
            assert [x.data for x in logs] == ["step 1", "step 2", "step 3"]
            r = await client.call_tool("ask", {"prompt": "?"})
            assert text(r) == "model: forty-two"
            r = await client.call_tool("who", {})
            assert text(r) == "Ann/30"  # the default was applied by the client
            r = await client.call_tool("roots", {})
            assert r.structured_content == {"result": ["file:///work"]}
            assert [x.uri for x in await client.list_resources()] == ["memo://readme"]
            assert (await client.read_resource("memo://readme")).contents[0].text == "read me"  # type: ignore[union-attr]
            assert [t.uri_template for t in await client.list_resource_templates()] == [
                "memo://items/{item}"
            ]
            assert (await client.read_resource("memo://items/9")).contents[0].text == "item 9"  # type: ignore[union-attr]
            assert [p.name for p in await client.list_prompts()] == ["greet"]
            got = await client.get_prompt("greet", {"name": "Bo"})
            assert got.messages[0].content.text == "Hello, Bo!"  # type: ignore[union-attr]
            await client.ping()


@pytest.mark.parametrize("revision", REVISIONS)
async def test_list_changed_invalidates_the_cache(revision: str) -> None:
    server = make_server()
    changed = anyio.Event()
    with anyio.fail_after(10):

        async def on_change(kind: str) -> None:  # not a lambda: those run in a worker thread
            changed.set()

        async with Client(
            server, protocol_version=revision, list_changed_handler=on_change
        ) as client:
            before = [t.name for t in await client.list_tools()]

            def extra() -> str:
                """Added later."""
                return "new"

            server.add_tool(extra)
            if client.server_capabilities.tools and client.server_capabilities.tools.list_changed:
                await changed.wait()
            after = [t.name for t in await client.list_tools()]
            assert after == [*before, "extra"]
            assert text(await client.call_tool("extra")) == "new"


def test_sync_client_in_process() -> None:
    with SyncClient(make_server()) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
        done = (
            client.complete(PromptReference(name="greet"), "name", "B")
            if client.server_capabilities.completions
            else None
        )
        assert done is None or isinstance(done.completion.values, list)


async def served(server: Any) -> tuple[Any, Any, Any]:
    from tests._schema import WireRecorder

    from mcpkit._transports import memory_pair

    client_end, server_end = memory_pair()
    session = server.create_session(server_end)
    return WireRecorder(client_end, side="client"), session, server_end


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_every_revision_on_the_wire(version: str) -> None:
    wire, session, server_end = await served(make_server())

    async def sample(params: Any, ctx: Any) -> str:
        return "ok"

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            with anyio.fail_after(10):
                async with Client(
                    wire, protocol_version=version, sampling_handler=sample, roots=["file:///w"]
                ) as c:
                    assert c.protocol_version == version
                    assert (await c.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"  # type: ignore[union-attr]
                    assert text(await c.call_tool("ask", {"prompt": "?"})) == "model: ok"
                    assert [t.name for t in await c.list_tools()][:2] == ["add", "work"]
                    assert (await c.read_resource("memo://readme")).contents[0].text == "read me"  # type: ignore[union-attr]
                    await c.set_roots(["file:///x"])
            tg.cancel_scope.cancel()
    finally:
        await server_end.aclose()
    assert wire.check() == version


async def test_url_elicitation_with_our_server() -> None:
    server = Server("url-elicit")
    done = anyio.Event()

    @server.tool()
    async def connect_account(ctx: Context) -> str:
        """Send the user to a URL, then report completion."""
        answer = await ctx.elicit_url(
            "Sign in to continue", "https://auth.example.com/start", elicitation_id="e-42"
        )
        if answer.accepted:
            await ctx.complete_elicitation("e-42")
        return answer.action

    seen: list[Any] = []

    async def on_url(params: Any, ctx: Any) -> dict[str, Any]:
        seen.append((params.url, params.elicitation_id, params.message))
        return {"action": "accept"}

    async def on_complete(params: Any) -> None:
        seen.append(("complete", params.elicitation_id))
        done.set()

    with anyio.fail_after(10):
        async with Client(
            server,
            # elicitationId and its completion notification are 2025-11-25's (2026-07-28
            # dropped both: the client retries instead).
            protocol_version="2025-11-25",
            url_elicitation_handler=on_url,
            elicitation_complete_handler=on_complete,
        ) as c:
            assert text(await c.call_tool("connect_account")) == "accept"
            await done.wait()
    assert seen == [
        ("https://auth.example.com/start", "e-42", "Sign in to continue"),
        ("complete", "e-42"),
    ]


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio(anyio_backend: str) -> None:
    server = make_server()

    async def sample(params: Any, ctx: Any) -> str:
        return "trio"

    with anyio.fail_after(10):
        async with Client(server, sampling_handler=sample) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
            assert text(await client.call_tool("ask", {"prompt": "?"})) == "model: trio"
        # stdio on trio too: a subprocess, its pipes and its shutdown.
        async with Client([sys.executable, "-m", "tests.client.servers.ours"]) as c2:
            assert (await c2.call_tool("add", {"a": 2, "b": 2})).structured_content == {"result": 4}
