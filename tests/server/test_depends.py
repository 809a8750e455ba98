"""``Depends``: parameters the server fills in per call, through the real client in both
eras: nested and cached, torn down newest first after the call (even when it raised or was
cancelled), replaced in tests, never in the schema nor the client's to send."""

# No `from __future__ import annotations`: the dependencies are local to the functions that
# build the servers, and string annotations naming them could not be resolved.

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any

import anyio
import anyio.lowlevel
import pytest
from jsonschema import Draft202012Validator
from tests._schema import schema_errors
from tests.server._harness import connect

from mcpkit import Client, Context, Depends, Server, StatelessSettings

pytestmark = pytest.mark.anyio
REVISIONS = ["2026-07-28", "2025-11-25"]


class DB:
    def __init__(self, events: list[str], name: str = "db") -> None:
        self.events = events
        self.name = name


def _server(events: list[str], *, mask_errors: bool = True, **kw: Any) -> Server:
    server = Server("deps", mask_errors=mask_errors, **kw)
    counter = iter(range(100))

    def settings() -> dict[str, str]:
        events.append(f"settings in {'loop' if _on_loop() else 'thread'}")
        return {"dsn": "memory://"}

    async def get_db(
        ctx: Context, conf: Annotated[dict[str, str], Depends(settings)]
    ) -> AsyncIterator[DB]:
        assert ctx.request_id is not None  # the call's own Context
        events.append(f"open {conf['dsn']}")
        try:
            yield DB(events)
        except ValueError as e:
            events.append(f"rollback ({e})")
            raise
        finally:
            events.append("close")

    def get_user(db: DB = Depends(get_db)) -> Iterator[str]:  # noqa: B008  (the default form)
        events.append(f"user from {db.name} in {'loop' if _on_loop() else 'thread'}")
        yield "ada"
        events.append("user done")

    def ticket() -> int:
        return next(counter)

    @server.tool()
    async def whoami(
        greeting: str,
        db: Annotated[DB, Depends(get_db)],
        user: Annotated[str, Depends(get_user)],
        a: int = Depends(ticket, use_cache=False),
        b: int = Depends(ticket, use_cache=False),
        on_loop: bool = Depends(_on_loop, inline=True),
    ) -> str:
        """Greet the user the database knows."""
        events.append("body")
        if greeting == "fail":
            raise ValueError("tool failed")
        assert on_loop and a != b
        return f"{greeting} {user} ({db.name})"

    def broken() -> str:
        raise LookupError("no such secret")

    @server.tool()
    def needs_secret(
        db: Annotated[DB, Depends(get_db)], secret: Annotated[str, Depends(broken)]
    ) -> str:
        """A tool whose dependency fails."""
        events.append("body")  # never
        return secret

    @server.prompt()
    def brief(topic: str, user: str = Depends(get_user)) -> str:
        """A prompt with a dependency."""
        return f"{user} asks about {topic}"

    @server.resource("notes://{owner}")
    async def notes(owner: str, db: Annotated[DB, Depends(get_db)]) -> str:
        """A resource template with a dependency."""
        return f"notes of {owner} from {db.name}"

    server.settings = settings  # type: ignore[attr-defined]  # the tests override these
    server.get_db = get_db  # type: ignore[attr-defined]
    return server


def _on_loop() -> bool:
    try:
        anyio.get_current_task()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("version", REVISIONS)
async def test_nested_cached_dependencies_run_before_the_body_and_close_after_it(
    version: str,
) -> None:
    events: list[str] = []
    server = _server(events)
    with anyio.fail_after(20):
        async with Client(server, protocol_version=version) as client:
            tools = {t.name: t.to_wire() for t in await client.list_tools()}
            result = await client.call_tool("whoami", {"greeting": "hi"})
            prompt = await client.get_prompt("brief", {"topic": "MCP"})
            read = await client.read_resource("notes://ada")
    assert not result.is_error, result
    assert result.content[0].text == "hi ada (db)"  # type: ignore[union-attr]
    # Each dependency once per call (get_db shared by the tool and get_user), sync ones in a
    # worker thread unless inline; teardowns newest first, once the body is done.
    assert events[:6] == [
        "settings in thread",
        "open memory://",
        "user from db in thread",
        "body",
        "user done",
        "close",
    ]
    assert prompt.messages[0].content.text == "ada asks about MCP"  # type: ignore[union-attr]
    assert read.contents[0].text == "notes of ada from db"  # type: ignore[union-attr]
    assert events[6:] == [
        "settings in thread",
        "open memory://",
        "user from db in thread",
        "user done",
        "close",
        "settings in thread",
        "open memory://",
        "close",
    ]
    # The client's arguments only: valid Tool definitions, valid schemas.
    for name, params in (("whoami", ["greeting"]), ("needs_secret", [])):
        tool = tools[name]
        assert list(tool["inputSchema"]["properties"]) == params
        assert schema_errors("2025-11-25", "Tool", tool) == []
        Draft202012Validator.check_schema(tool["inputSchema"])
    prompts = await _prompt_arguments(server, version)
    assert prompts == ["topic"]


async def _prompt_arguments(server: Server, version: str) -> list[str]:
    async with Client(server, protocol_version=version) as client:
        (prompt,) = await client.list_prompts()
    return [a.name for a in prompt.arguments or []]


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_client_cannot_supply_a_dependency(version: str) -> None:
    events: list[str] = []
    server = _server(events)
    with anyio.fail_after(20):
        async with Client(server, protocol_version=version) as client:
            result = await client.call_tool("whoami", {"greeting": "hi", "db": "mine"})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "unknown argument" in text and "`db`" in text and "greeting" in text, text
    assert events == []  # refused before any dependency ran


@pytest.mark.parametrize("mask", [True, False])
async def test_a_failing_dependency_fails_the_call_not_the_server(mask: bool) -> None:
    events: list[str] = []
    server = _server(events, mask_errors=mask)
    with anyio.fail_after(20):
        async with Client(server) as client:
            failed = await client.call_tool("needs_secret", {})
            raised = await client.call_tool("whoami", {"greeting": "fail"})
            after = await client.call_tool("whoami", {"greeting": "again"})
    assert failed.is_error and raised.is_error
    text = failed.content[0].text  # type: ignore[union-attr]
    if mask:
        assert text == "Error executing tool needs_secret"
    else:
        assert text == "Error executing tool needs_secret: LookupError: no such secret"
    # What was entered is torn down, newest first; the tool's own exception reaches the
    # generators at their yield (get_user's lets it through, get_db's rolls back).
    assert events[:-6] == [
        "settings in thread",
        "open memory://",
        "close",  # needs_secret: its other dependency failed
        "settings in thread",
        "open memory://",
        "user from db in thread",
        "body",
        "rollback (tool failed)",
        "close",
    ]
    assert after.content[0].text == "again ada (db)"  # type: ignore[union-attr]


async def test_the_teardown_runs_when_the_call_is_cancelled() -> None:
    server = Server("cancel")
    started, closed = anyio.Event(), anyio.Event()
    seen: list[str] = []

    async def session() -> AsyncIterator[str]:
        try:
            yield "s"
        except BaseException as e:  # a cancellation closes the generator
            seen.append(type(e).__name__)
            raise
        finally:
            await anyio.lowlevel.checkpoint()  # awaiting in a teardown still works (shielded)
            closed.set()

    @server.tool()
    async def forever(s: Annotated[str, Depends(session)]) -> str:
        """Never ends."""
        started.set()
        await anyio.sleep(30)
        return s

    async with connect(server) as c:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await c.tool("forever", {})

                tg.start_soon(call)
                await started.wait()
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            await closed.wait()
    assert seen == ["GeneratorExit"]


@pytest.mark.parametrize("version", REVISIONS)
async def test_overrides_replace_a_dependency_for_tests(version: str) -> None:
    events: list[str] = []
    server = _server(events)

    async def fake_db() -> DB:
        return DB(events, "fake")

    with anyio.fail_after(20):
        async with Client(server, protocol_version=version) as client:
            server.dependency_overrides[server.get_db] = fake_db  # type: ignore[attr-defined]
            faked = await client.call_tool("whoami", {"greeting": "hi"})
            del server.dependency_overrides[server.get_db]  # type: ignore[attr-defined]
            with server.dependency_overrides.use(server.settings, lambda: {"dsn": "test://"}):  # type: ignore[attr-defined]
                configured = await client.call_tool("whoami", {"greeting": "yo"})
            real = await client.call_tool("whoami", {"greeting": "hey"})
    assert faked.content[0].text == "hi ada (fake)"  # type: ignore[union-attr]
    assert configured.content[0].text == "yo ada (db)"  # type: ignore[union-attr]
    assert real.content[0].text == "hey ada (db)"  # type: ignore[union-attr]
    opened = [e for e in events if e.startswith("open")]
    assert opened == ["open test://", "open memory://"]  # the fake opened nothing
    assert not server.dependency_overrides


def test_cycles_and_unfillable_parameters_are_refused_at_registration() -> None:
    server = Server("bad")

    def first(x: int = 0) -> int:
        return x

    def second(v: Annotated[int, Depends(first)]) -> int:
        return v

    first.__defaults__ = (Depends(second),)  # first -> second -> first
    with pytest.raises(
        TypeError, match=r"`looped`: dependency cycle: .*first -> .*second -> .*first"
    ):

        @server.tool()
        def looped(v: Annotated[int, Depends(first)]) -> int:
            return v

    def needs_arg(name: str) -> str:
        return name

    with pytest.raises(TypeError, match="parameter 'name' is neither a Context nor a Depends"):
        server.add_prompt(lambda v=Depends(needs_arg): "x", name="p")  # noqa: B008
    assert server.tools == []


async def _tip_twice(
    settings: StatelessSettings, version: str = "2026-07-28"
) -> tuple[str, list[str]]:
    events: list[str] = []
    server = Server("held", stateless=settings)

    async def conn() -> AsyncIterator[int]:
        events.append("open")
        try:
            yield len(events)
        finally:  # also when a round ends to ask (not held): the generator is closed
            events.append("close")

    @server.tool()
    async def tip(ctx: Context, c: Annotated[int, Depends(conn)]) -> str:
        """Ask after the dependencies resolved."""
        schema = {"type": "object", "properties": {"p": {"type": "integer"}}}
        answer = await ctx.elicit("Tip?", schema)
        return f"{(answer.content or {})['p']}% on {c}"

    with anyio.fail_after(20):
        async with Client(
            server,
            protocol_version=version,
            elicitation_handler=lambda params, ctx: {"action": "accept", "content": {"p": 5}},
        ) as client:
            result = await client.call_tool("tip", {})
    return result.content[0].text, events  # type: ignore[union-attr]


async def test_a_2026_call_held_across_rounds_keeps_its_dependencies() -> None:
    """Held (the default), the call resumes where it asked: its dependencies ran once and
    close after the last round. Not held, each round runs the call again, dependencies too."""
    assert await _tip_twice(StatelessSettings()) == ("5% on 1", ["open", "close"])
    # The handshake era asks within the call: nothing runs again either.
    assert await _tip_twice(StatelessSettings(), "2025-11-25") == ("5% on 1", ["open", "close"])
    again = await _tip_twice(StatelessSettings(hold_calls=False))
    assert again == ("5% on 3", ["open", "close", "open", "close"])


STDIO_SERVER = """
from collections.abc import Iterator

from mcpkit import Depends, Server

server = Server("deps-stdio")
closed: list[int] = []


def connection() -> Iterator[int]:
    yield len(closed)
    closed.append(1)


@server.tool()
def calls(n: int = Depends(connection)) -> int:
    \"\"\"How many connections were closed before this call.\"\"\"
    return n


if __name__ == "__main__":
    server.run()
"""


async def test_over_a_real_stdio_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "deps.py"
    script.write_text(STDIO_SERVER)
    with anyio.fail_after(30):
        async with Client([sys.executable, str(script)]) as client:
            tool = (await client.list_tools())[0]
            counts = [(await client.call_tool("calls", {})).structured_content for _ in range(3)]
    assert tool.input_schema["properties"] == {}
    assert counts == [{"result": 0}, {"result": 1}, {"result": 2}]  # each closed after its call


async def test_a_mounted_servers_dependencies_and_overrides_are_its_own() -> None:
    child, hub = Server("child"), Server("hub")

    def region() -> str:
        return "eu"

    @child.tool()
    def where(r: Annotated[str, Depends(region)]) -> str:
        """The region this server serves."""
        return r

    @child.resource("config://region")
    def config(r: Annotated[str, Depends(region)]) -> str:
        """A static resource with a dependency."""
        return f"region={r}"

    hub.mount(child, prefix="c")
    with anyio.fail_after(20):
        async with Client(hub) as client:
            before = await client.call_tool("c_where", {})
            child.dependency_overrides[region] = lambda: "us"
            after = await client.call_tool("c_where", {})
            hub.dependency_overrides[region] = lambda: "ignored"  # not the tool's server
            read = await client.read_resource("config://c/region")
    assert [before.content[0].text, after.content[0].text] == ["eu", "us"]  # type: ignore[union-attr]
    assert read.contents[0].text == "region=us"  # type: ignore[union-attr]


async def test_a_teardown_that_fails_fails_the_call_and_one_that_swallows_does_not_hide_it() -> (
    None
):
    server = Server("teardowns", mask_errors=False)

    def commit() -> Iterator[str]:
        yield "tx"
        raise RuntimeError("commit failed")

    async def forgiving() -> AsyncIterator[str]:
        try:
            yield "f"
        except ValueError:
            pass  # swallowed: the call still fails with the tool's error

    @server.tool()
    def save(tx: Annotated[str, Depends(commit)]) -> str:
        """Its work is lost if the commit fails."""
        return "saved"

    @server.tool()
    async def oops(f: Annotated[str, Depends(forgiving)]) -> str:
        """Fails."""
        raise ValueError("bad input")

    with anyio.fail_after(20):
        async with Client(server) as client:
            saved = await client.call_tool("save", {})
            failed = await client.call_tool("oops", {})
    assert saved.is_error and failed.is_error
    assert saved.content[0].text == "Error executing tool save: RuntimeError: commit failed"  # type: ignore[union-attr]
    assert failed.content[0].text == "Error executing tool oops: ValueError: bad input"  # type: ignore[union-attr]
