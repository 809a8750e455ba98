"""A hub whose mounted server is pinned to a handshake revision (2025-11-25), called by a
client of 2026-07-28: the mounted server's elicitation, sampling and roots requests reach
the client as input requests of the hub's own result, the client answers by retrying, and
the mounted server's pending call gets the answers and completes. Whatever happens (a
capability the client lacks, a client that never comes back), the hub keeps serving.

Over stdio (the hub a subprocess), over HTTP (the app in process, and a real uvicorn) and,
for the bookkeeping, in memory.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._served import Served

import mcpkit._server._relay as relay_module
from mcpkit import Client, Context, InvalidParams, MCPError, Server, StatelessSettings, http
from mcpkit.lowlevel import ASGIClient
from mcpkit.types import Root

pytestmark = pytest.mark.anyio

LATEST = "2026-07-28"
ROOT_URI = "file:///work/project"
FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

#: The mounted server: each tool asks its client something, the 2025 way.
CHILD = f'''
from mcpkit import Context, MCPError, Server

server = Server("child")
FORM = {FORM!r}


@server.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name."""
    answer = await ctx.elicit("Your name?", FORM)
    return f"hello {{answer.content['name']}}" if answer.accepted else answer.action


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model."""
    result = await ctx.sample(f"Summarize: {{text}}", max_tokens=20)
    return f"summary: {{result.content.text}}"


@server.tool()
async def roots(ctx: Context) -> str:
    """The client's roots."""
    return ",".join(str(r.uri) for r in await ctx.list_roots())


@server.tool()
async def everything(ctx: Context) -> str:
    """Three questions, one after another: three rounds."""
    name = (await ctx.elicit("Your name?", FORM)).content["name"]
    model = (await ctx.sample(f"Hi {{name}}", max_tokens=5)).content.text
    where = [str(r.uri) for r in await ctx.list_roots()]
    return f"{{name}}|{{model}}|{{where}}"


@server.tool()
async def together(ctx: Context) -> str:
    """Two questions at once."""
    answer, roots = await ctx.gather(ctx.elicit("Your name?", FORM), ctx.list_roots())
    return f"{{answer.content['name']}} in {{roots[0].uri}}"


@server.tool()
async def careful(kind: str, ctx: Context) -> str:
    """Ask, and say what the client answered, refusals included."""
    try:
        if kind == "elicit":
            await ctx.elicit("Your name?", FORM)
        elif kind == "sample":
            await ctx.sample("hi", max_tokens=5)
        else:
            await ctx.list_roots()
    except MCPError as e:
        return f"refused: {{e}}"
    return "answered"


@server.tool()
def plain() -> str:
    """Asks nothing."""
    return "plain"


if __name__ == "__main__":
    server.run()
'''

#: The hub: its own tool, and the child mounted through a Client pinned to 2025-11-25.
HUB = """
import sys

from mcpkit import Client, Server

server = Server("hub")


@server.tool()
def own() -> str:
    \"\"\"The hub's own.\"\"\"
    return "hub"


server.mount(Client([sys.executable, {child!r}], protocol_version="2025-11-25"), prefix="r")

if __name__ == "__main__":
    server.run()
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The child's and the hub's files."""
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    hub = tmp_path / "hub.py"
    hub.write_text(HUB.format(child=str(child)))
    return child, hub


class Answers:
    """A 2026 client's callbacks, counting what they were asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, params: Any, ctx: Any) -> dict[str, Any]:
        self.asked.append("elicitation")
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, params: Any, ctx: Any) -> str:
        self.asked.append("sampling")
        return "short"

    def roots(self) -> list[Root]:
        self.asked.append("roots")
        return [Root(uri=ROOT_URI)]

    def client(self, target: Any, **kw: Any) -> Client:
        return Client(
            target,
            elicitation_handler=self.elicit,
            sampling_handler=self.sample,
            roots=self.roots,
            **kw,
        )


def _text(result: Any) -> str:
    assert not result.is_error, result
    return str(result.content[0].text)


async def _relayed_and_serving(c: Client, answers: Answers) -> None:
    """Every kind of question relayed, then calls that ask nothing: the hub still serves."""
    assert c.protocol_version == LATEST
    assert _text(await c.call_tool("r_greet")) == "hello Ada"
    assert _text(await c.call_tool("r_summarize", {"text": "long"})) == "summary: short"
    assert _text(await c.call_tool("r_roots")) == ROOT_URI
    assert answers.asked == ["elicitation", "sampling", "roots"]
    assert _text(await c.call_tool("r_everything")) == f"Ada|short|['{ROOT_URI}']"
    assert _text(await c.call_tool("r_together")) == f"Ada in {ROOT_URI}"
    assert _text(await c.call_tool("own")) == "hub"
    assert _text(await c.call_tool("r_plain")) == "plain"
    assert _text(await c.call_tool("r_greet")) == "hello Ada"  # and asks again


async def _refused_and_serving(c: Client) -> None:
    """A client that declared nothing: the child is told why, the hub serves on."""
    for kind, capability in (
        ("elicit", "'elicitation' (form mode)"),
        ("sample", "'sampling'"),
        ("roots", "'roots'"),
    ):
        said = _text(await c.call_tool("r_careful", {"kind": kind}))
        assert said.startswith("refused: ") and f"did not declare the {capability}" in said
        assert "'hub'" in said  # names the hub whose client it is
    assert _text(await c.call_tool("r_plain")) == "plain"
    assert _text(await c.call_tool("own")) == "hub"


# ---------------------------------------------------------------------------- stdio


async def test_a_stdio_hub_relays_a_2025_servers_requests_to_a_2026_client(
    files: tuple[Path, Path],
) -> None:
    answers = Answers()
    with anyio.fail_after(60):
        async with answers.client([sys.executable, str(files[1])]) as c:
            await _relayed_and_serving(c, answers)


async def test_a_stdio_hub_refuses_what_its_2026_client_did_not_declare_and_serves_on(
    files: tuple[Path, Path],
) -> None:
    with anyio.fail_after(60):
        async with Client([sys.executable, str(files[1])]) as c:
            await _refused_and_serving(c)


async def test_a_2025_client_of_the_same_hub_is_asked_with_requests(
    files: tuple[Path, Path],
) -> None:
    answers = Answers()
    with anyio.fail_after(60):
        async with answers.client(
            [sys.executable, str(files[1])], protocol_version="2025-11-25"
        ) as c:
            assert _text(await c.call_tool("r_everything")) == f"Ada|short|['{ROOT_URI}']"
            assert answers.asked == ["elicitation", "sampling", "roots"]


# ---------------------------------------------------------------------------- HTTP


def _hub(child: Path) -> Server:
    hub = Server("hub")
    hub.add_tool(lambda: "hub", name="own")
    hub.mount(Client([sys.executable, str(child)], protocol_version="2025-11-25"), prefix="r")
    return hub


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_an_http_hub_relays_a_2025_servers_requests_to_a_2026_client(
    files: tuple[Path, Path], json_response: bool
) -> None:
    app = _hub(files[0]).http_app(json_response=json_response)
    answers = Answers()
    with anyio.fail_after(60):
        async with (
            ASGIClient(app) as asgi,
            answers.client(http("http://127.0.0.1/mcp", http_client=asgi)) as c,
        ):
            await _relayed_and_serving(c, answers)
            async with Client(http("http://127.0.0.1/mcp", http_client=asgi)) as bare:
                await _refused_and_serving(bare)
            assert _text(await c.call_tool("r_greet")) == "hello Ada"


async def test_a_hub_served_by_uvicorn_relays_to_a_2026_client(files: tuple[Path, Path]) -> None:
    """As users run it: ``mcpkit run hub.py --transport http`` (uvicorn on 127.0.0.1)."""
    command = [sys.executable, "-m", "mcpkit", "run", str(files[1]), "--transport", "http"]
    proc = subprocess.Popen(  # noqa: ASYNC220 - the hub's process, started from the test
        [*command, "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    served = Served(proc)
    try:
        url = await anyio.to_thread.run_sync(served.url)
        answers = Answers()
        with anyio.fail_after(60):
            async with answers.client(url) as c:
                await _relayed_and_serving(c, answers)
            async with Client(url) as bare:
                await _refused_and_serving(bare)
    finally:
        proc.terminate()
        await anyio.to_thread.run_sync(proc.wait, 20)
        served.close()


# ---------------------------------------------------------------------------- in memory


def _child_in_memory(cancelled: anyio.Event) -> Server:
    child = Server("child")

    @child.tool()
    async def greet(label: str, ctx: Context) -> str:
        """Ask, noting a cancellation."""
        try:
            answer = await ctx.elicit(label, FORM)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        except MCPError as e:
            return f"refused: {e}"
        return f"hello {answer.content['name']}"  # type: ignore[index]

    @child.tool()
    def plain() -> str:
        return "plain"

    return child


def _memory_hub(child: Server, **kw: Any) -> Server:
    hub = Server("hub", **kw)
    hub.mount(Client(child, protocol_version="2025-11-25"), prefix="r")
    return hub


@pytest.mark.parametrize("upstream", ["2025-11-25", LATEST])
async def test_either_revision_of_the_mounted_server_asks_a_2026_client(upstream: str) -> None:
    hub = Server("hub")
    hub.mount(Client(_child_in_memory(anyio.Event()), protocol_version=upstream), prefix="r")
    answers = Answers()
    with anyio.fail_after(20):
        async with answers.client(hub) as c:
            assert _text(await c.call_tool("r_greet", {"label": "q"})) == "hello Ada"
            assert answers.asked == ["elicitation"]
        async with Client(hub) as bare:
            # Handshake era: its request is answered with the error, which the tool says.
            # 2026-07-28: the hub's input answer fails (InputFailed: no error answer exists),
            # which ends the hub's upstream call: an error result saying why, all the same.
            result = await bare.call_tool("r_greet", {"label": "q"})
            said = str(result.content[0].text)
            assert "did not declare the 'elicitation' (form mode) capability" in said
            assert result.is_error is (upstream == LATEST)
            if upstream == LATEST:
                assert "elicitation/create" in said
            assert _text(await bare.call_tool("r_plain")) == "plain"


async def test_a_call_whose_client_never_comes_back_is_cancelled_and_forgotten() -> None:
    cancelled = anyio.Event()
    hub = _memory_hub(_child_in_memory(cancelled), stateless=StatelessSettings(state_ttl=0.2))
    mount = hub._mounts[0]
    entered = anyio.Event()

    async def late(params: Any, ctx: Any) -> dict[str, Any]:
        entered.set()
        await cancelled.wait()  # answers only once the hub gave up waiting
        return {"action": "accept", "content": {"name": "late"}}

    with anyio.fail_after(20):
        async with Client(hub, elicitation_handler=late) as c:
            # The call waits as long as its requestState is valid: both ended by the retry.
            with pytest.raises(InvalidParams, match=r"has expired|no longer waiting"):
                await c.call_tool("r_greet", {"label": "slow"})
            assert entered.is_set()
            assert mount.relay.calls == {} and mount.in_flight == set()  # type: ignore[attr-defined]
            assert _text(await c.call_tool("r_plain")) == "plain"


async def test_calls_waiting_for_their_clients_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relay_module, "MAX_WAITING", 0)
    hub = _memory_hub(_child_in_memory(anyio.Event()))
    answers = Answers()
    with anyio.fail_after(20):
        async with answers.client(hub) as c:
            said = _text(await c.call_tool("r_greet", {"label": "q"}))
            assert said.startswith("refused: ") and "too many calls wait" in said
            assert answers.asked == []  # refused before it reached the client
            assert _text(await c.call_tool("r_plain")) == "plain"
        monkeypatch.setattr(relay_module, "MAX_WAITING", 1)
        async with answers.client(_memory_hub(_child_in_memory(anyio.Event()))) as c:
            assert _text(await c.call_tool("r_greet", {"label": "q"})) == "hello Ada"


async def test_a_retry_must_be_the_same_request_and_name_a_live_call() -> None:
    hub = _memory_hub(_child_in_memory(anyio.Event()))
    with anyio.fail_after(20):
        async with Client(hub, elicitation_handler=Answers().elicit) as c:
            session = c.session
            meta = session._request_meta(LATEST)

            async def raw(label: str, **extra: Any) -> Any:
                params = {"name": "r_greet", "arguments": {"label": label}, "_meta": meta}
                return await session.peer.send_request("tools/call", {**params, **extra})

            first = await raw("mine")
            assert first["resultType"] == "input_required"
            [key] = first["inputRequests"]
            assert key.startswith("mount:")
            answer = {key: {"action": "accept", "content": {"name": "Bo"}}}
            with pytest.raises(InvalidParams, match="another request"):
                await raw("theirs", inputResponses=answer)
            bogus = {"mount:nothing:1": answer[key]}
            with pytest.raises(InvalidParams, match="no longer waiting"):
                await raw("mine", inputResponses=bogus)
            done = await raw("mine", inputResponses=answer, requestState=first["requestState"])
            assert done["content"][0]["text"] == "hello Bo"
            with pytest.raises(InvalidParams, match="no longer waiting"):  # answered once
                await raw("mine", inputResponses=answer, requestState=first["requestState"])
            assert _text(await c.call_tool("r_plain")) == "plain"


# ---------------------------------------------------------------------------- the client


class Escaping(BaseException):
    """Neither an Exception nor a cancellation (as a hub's InputRequired is)."""


async def test_a_client_callback_raising_a_base_exception_answers_an_error_and_lives_on() -> None:
    server = Server("asker")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.elicit("?", FORM)
        except MCPError as e:
            return f"refused: {e}"
        return "answered"

    async def broken(params: Any, ctx: Any) -> Any:
        raise Escaping

    with anyio.fail_after(20):
        async with Client(server, protocol_version="2025-11-25", elicitation_handler=broken) as c:
            said = _text(await c.call_tool("ask"))
            assert said.startswith("refused: ") and "callback failed (Escaping)" in said
            assert _text(await c.call_tool("ask")).startswith("refused: ")  # still connected
