"""Multi round-trip requests (2026-07-28): a tool asks, the client answers on a retry.

Driven over the real HTTP app in process. Each question ends the request with an
``InputRequiredResult``; the retry carries ``inputResponses`` and the ``requestState`` the
server sealed, which must come back untouched, for the same request, before it expires.
"""

from __future__ import annotations

from typing import Any

import pytest
from _stateless_helpers import post, request

from mcpkit import Context, Server, StatelessSettings
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ALICE = {"action": "accept", "content": {"name": "Alice"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Hi!"}, "model": "m"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


class Clock:
    """A wall clock the test moves (requestState expiry)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _server(settings: StatelessSettings | None = None) -> tuple[Server, list[str]]:
    server = Server("mrtr", stateless=settings)
    ran: list[str] = []

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask a name."""
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    async def survey(ctx: Context) -> str:
        """Ask three things in one round."""
        name, said, roots = await ctx.gather(
            ctx.elicit("Name?", NAME_FORM, key="name"),
            ctx.sample("Say hi", max_tokens=10, key="hi"),
            ctx.list_roots(key="roots"),
        )
        return f"{name.content['name']} / {said.content.text} / {roots[0].uri}"

    @server.tool()
    async def two_steps(topic: str, ctx: Context) -> str:
        """Ask in two rounds; the first answer must survive into the last."""
        ran.append(topic)  # code before a question runs once per round
        first = await ctx.elicit("Step 1", NAME_FORM, key="step1")
        second = await ctx.elicit(
            "Step 2",
            {"type": "object", "properties": {"color": {"type": "string"}}},
            key="step2",
        )
        return f"{topic}: {first.content['name']} likes {second.content['color']}"

    @server.tool()
    async def unnamed(ctx: Context) -> str:
        """Ask without naming the questions."""
        a = await ctx.elicit("First?", NAME_FORM)
        b = await ctx.sample("Second?", max_tokens=5)
        return f"{a.content['name']} {b.content.text}"

    @server.tool()
    async def connect(ctx: Context) -> str:
        """URL mode: send the user to a page, then say it completed (a no-op at 2026)."""
        result = await ctx.elicit_url("Sign in", "https://example.com/in", key="signin")
        if result.accepted:
            await ctx.complete_elicitation("ignored-at-2026")
        return f"url: {result.action}"

    @server.prompt()
    async def framed(ctx: Context) -> str:
        """A prompt that asks first."""
        answer = await ctx.elicit("Context?", NAME_FORM, key="ctx")
        return f"Use {answer.content['name']}"

    @server.resource("test://asks/{id}", mime_type="text/plain")
    async def asks(id: str, ctx: Context) -> str:
        """A resource whose read asks first."""
        roots = await ctx.list_roots(key="roots")
        return f"{id} under {roots[0].uri}"

    return server, ran


def _call(
    tool: str, args: dict[str, Any] | None = None, *, caps: Any = None, **rest: Any
) -> dict[str, Any]:
    return request("tools/call", {"name": tool, "arguments": args or {}, **rest}, caps=caps)


async def test_one_question_one_retry() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        assert first["resultType"] == "input_required"
        assert first["inputRequests"] == {
            "user_name": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": NAME_FORM,
                },
            }
        }
        # An interim result is not cacheable and carries no caching hints.
        assert "ttlMs" not in first and "cacheScope" not in first
        retry = _call(
            "greet", inputResponses={"user_name": ALICE}, requestState=first["requestState"]
        )
        done = (await post(http, retry)).result
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": "Hello, Alice!"}]


async def test_an_answer_without_state_and_unknown_answers_are_fine() -> None:
    server, _ = _server()
    extra = {"user_name": ALICE, "unrelated": {"action": "accept", "content": {"x": 1}}}
    async with ASGIClient(server.http_app()) as http:
        done = (await post(http, _call("greet", inputResponses=extra))).result
    assert done["content"][0]["text"] == "Hello, Alice!"


async def test_several_questions_in_one_round() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("survey"))).result
        asked = first["inputRequests"]
        assert {k: v["method"] for k, v in asked.items()} == {
            "name": "elicitation/create",
            "hi": "sampling/createMessage",
            "roots": "roots/list",
        }
        assert asked["hi"]["params"]["maxTokens"] == 10
        answers = {"name": ALICE, "hi": SAMPLED, "roots": ROOTS}
        retry = _call("survey", inputResponses=answers, requestState=first["requestState"])
        done = (await post(http, retry)).result
    assert done["content"][0]["text"] == "Alice / Hi! / file:///work"


async def test_answers_carry_over_rounds_in_the_state() -> None:
    server, ran = _server()
    async with ASGIClient(server.http_app()) as http:
        r1 = (await post(http, _call("two_steps", {"topic": "t"}))).result
        assert list(r1["inputRequests"]) == ["step1"]
        r2 = (
            await post(
                http,
                _call(
                    "two_steps",
                    {"topic": "t"},
                    inputResponses={"step1": ALICE},
                    requestState=r1["requestState"],
                ),
            )
        ).result
        assert list(r2["inputRequests"]) == ["step2"]
        assert r2["requestState"] != r1["requestState"]
        # The last retry answers only step 2: step 1 comes from the state.
        blue = {"action": "accept", "content": {"color": "blue"}}
        r3 = (
            await post(
                http,
                _call(
                    "two_steps",
                    {"topic": "t"},
                    inputResponses={"step2": blue},
                    requestState=r2["requestState"],
                ),
            )
        ).result
    assert r3["content"][0]["text"] == "t: Alice likes blue"
    assert ran == ["t"]  # held between rounds: code before a question runs once


async def test_a_missing_answer_is_asked_again() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        again = (await post(http, _call("greet", inputResponses={"wrong_key": ALICE}))).result
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["user_name"]


async def test_questions_without_a_key_are_named_by_kind_and_order() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        r1 = (await post(http, _call("unnamed"))).result
        assert list(r1["inputRequests"]) == ["elicitation-1"]
        r2 = (
            await post(
                http,
                _call(
                    "unnamed",
                    inputResponses={"elicitation-1": ALICE},
                    requestState=r1["requestState"],
                ),
            )
        ).result
        assert list(r2["inputRequests"]) == ["sampling-2"]
        r3 = (
            await post(
                http,
                _call(
                    "unnamed",
                    inputResponses={"sampling-2": SAMPLED},
                    requestState=r2["requestState"],
                ),
            )
        ).result
    assert r3["content"][0]["text"] == "Alice Hi!"


async def test_prompts_and_resource_reads_ask_too() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        p1 = (await post(http, request("prompts/get", {"name": "framed"}))).result
        assert p1["inputRequests"]["ctx"]["method"] == "elicitation/create"
        p2 = await post(
            http,
            request(
                "prompts/get",
                {
                    "name": "framed",
                    "inputResponses": {"ctx": ALICE},
                    "requestState": p1["requestState"],
                },
            ),
        )
        assert p2.result["messages"][0]["content"]["text"] == "Use Alice"
        r1 = (await post(http, request("resources/read", {"uri": "test://asks/7"}))).result
        assert r1["inputRequests"]["roots"] == {"method": "roots/list", "params": {}}
        r2 = await post(
            http,
            request(
                "resources/read",
                {
                    "uri": "test://asks/7",
                    "inputResponses": {"roots": ROOTS},
                    "requestState": r1["requestState"],
                },
            ),
        )
        assert r2.result["contents"][0]["text"] == "7 under file:///work"
        # A complete read is cacheable again.
        assert r2.result["ttlMs"] == 0


@pytest.mark.parametrize(
    "answer",
    [
        12345,
        None,
        {"action": "maybe"},
        {"action": "accept", "content": "not an object"},
    ],
)
async def test_malformed_answers_are_invalid_params(answer: Any) -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        got = await post(http, _call("greet", inputResponses={"user_name": answer}))
    assert got.error["code"] == -32602
    assert "user_name" in got.error["message"]


async def test_answers_of_the_wrong_kind_are_refused() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        wrong = {"name": SAMPLED, "hi": ALICE, "roots": {"roots": "nope"}}
        got = await post(http, _call("survey", inputResponses=wrong))
        no_object = await post(http, _call("survey", inputResponses=[1]))
    assert got.error["code"] == -32602
    assert no_object.error["code"] == -32602


async def test_an_answer_that_breaks_the_form_is_a_tool_error() -> None:
    server, _ = _server()
    not_a_string = {"action": "accept", "content": {"name": 5}}
    async with ASGIClient(server.http_app()) as http:
        got = (await post(http, _call("greet", inputResponses={"user_name": not_a_string}))).result
    assert got["isError"] is True
    assert "does not match the form" in got["content"][0]["text"]


async def test_tampered_state_is_refused() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        state = first["requestState"]
        for bad in (state + "-TAMPERED", "x" + state[1:], state.split(".")[0] + ".AAAA", 7):
            got = await post(
                http, _call("greet", inputResponses={"user_name": ALICE}, requestState=bad)
            )
            assert got.error["code"] == -32602, bad
            assert "requestState" in got.error["message"]


async def test_state_is_bound_to_its_request() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("two_steps", {"topic": "a"}))).result
        state = first["requestState"]
        other_args = await post(
            http,
            _call("two_steps", {"topic": "b"}, inputResponses={"step1": ALICE}, requestState=state),
        )
        other_tool = await post(
            http, _call("greet", inputResponses={"user_name": ALICE}, requestState=state)
        )
    for got in (other_args, other_tool):
        assert got.error["code"] == -32602
        assert "another request" in got.error["message"]


async def test_state_expires() -> None:
    clock = Clock()
    server, _ = _server(StatelessSettings(state_ttl=60, clock=clock))
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        clock.now += 61
        got = await post(
            http,
            _call("greet", inputResponses={"user_name": ALICE}, requestState=first["requestState"]),
        )
    assert got.error["code"] == -32602
    assert "expired" in got.error["message"]


async def test_workers_sharing_the_key_accept_each_others_state() -> None:
    key = b"k" * 32
    one, _ = _server(StatelessSettings(state_key=key))
    two, _ = _server(StatelessSettings(state_key=key))
    stranger, _ = _server(StatelessSettings(state_key=b"z" * 32))
    async with (
        ASGIClient(one.http_app()) as a,
        ASGIClient(two.http_app()) as b,
        ASGIClient(stranger.http_app()) as c,
    ):
        state = (await post(a, _call("two_steps", {"topic": "t"}))).result["requestState"]
        retry = _call(
            "two_steps", {"topic": "t"}, inputResponses={"step1": ALICE}, requestState=state
        )
        assert (await post(b, retry)).result["resultType"] == "input_required"
        assert (await post(c, retry)).error["code"] == -32602


async def test_rounds_are_bounded() -> None:
    server, _ = _server(StatelessSettings(max_rounds=1))
    async with ASGIClient(server.http_app()) as http:
        r1 = (await post(http, _call("two_steps", {"topic": "t"}))).result
        got = await post(
            http,
            _call(
                "two_steps",
                {"topic": "t"},
                inputResponses={"step1": ALICE},
                requestState=r1["requestState"],
            ),
        )
    assert got.error["code"] == -32602
    assert "rounds" in got.error["message"]


async def test_asking_needs_the_declared_capability() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        got = await post(http, _call("survey", caps={"elicitation": {}}))
        only_elicitation = await post(http, _call("greet", caps={"elicitation": {}}))
    assert got.status == 400
    assert got.error["code"] == -32021
    assert got.error["data"]["requiredCapabilities"] == {"sampling": {}}
    assert only_elicitation.result["resultType"] == "input_required"


async def test_url_mode_asks_without_an_elicitation_id_or_completion() -> None:
    server, _ = _server()
    caps = {"elicitation": {"url": {}}}
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("connect", caps=caps))).result
        assert first["inputRequests"]["signin"] == {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/in"},
        }
        done = await post(
            http,
            _call(
                "connect",
                caps=caps,
                inputResponses={"signin": {"action": "accept"}},
                requestState=first["requestState"],
            ),
        )
    # Only the result: 2026-07-28 has no notifications/elicitation/complete.
    assert done.notifications == []
    assert done.result["content"][0]["text"] == "url: accept"
