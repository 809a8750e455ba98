"""mcpkit.sampling: a real mcpkit server's tool samples with tools through a real Client
whose ``sampling_handler`` is a provider handler, calling a local fake of the provider's
HTTP API (tests/client/_fake_llm.py, served by uvicorn on 127.0.0.1) that checks each
request's shape as the real API would and answers like it, tool calls included. Both eras:
the handshake (2025-11-25, sampling a request over the session) and the default 2026-07-28
(sampling an input round of the tool call)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from tests._schema import schema_errors
from tests.client._fake_llm import KEYS, SIGNATURE, FakeProviders, Seen
from tests.http._http_helpers import ThreadServer, free_port, running

from mcpkit import Client, Context, InputFailed, InvalidParams, ProtocolError, Server
from mcpkit.sampling import AnthropicHandler, GeminiHandler, OpenAIHandler, ProviderHandler
from mcpkit.types import CreateMessageRequestParams, CreateMessageResult

# One fake serves the module's tests: they stay on one xdist worker.
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("sampling-providers")]

PROVIDERS = ["openai", "anthropic", "gemini"]
CLASSES: dict[str, type[ProviderHandler]] = {
    "openai": OpenAIHandler,
    "anthropic": AnthropicHandler,
    "gemini": GeminiHandler,
}
ROOTS = {"openai": "/openai/v1", "anthropic": "/anthropic", "gemini": "/gemini/v1beta"}
NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}
#: A 1x1 PNG and a (tiny) WAV, base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeProviders, ThreadServer]]:
    providers = FakeProviders()
    with running(providers.app) as srv:
        yield providers, srv


def handler(provider: str, srv: ThreadServer, **options: Any) -> ProviderHandler:
    options.setdefault("api_key", KEYS[provider])
    options.setdefault("timeout", 10)
    return CLASSES[provider]("default-model", base_url=srv.base + ROOTS[provider], **options)


def make_server() -> Server:
    server = Server("solver")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def solve(question: str, ctx: Context) -> str:
        """Let the client's model answer, with `add` to use."""
        try:
            answer = await ctx.sample_with_tools(
                question,
                tools=["add"],
                max_tokens=64,
                system_prompt="Use the tools.",
                temperature=0.2,
                stop_sequences=["END"],
                tool_choice="required",
                model_preferences={"hints": [{"name": "claude-3-5-sonnet"}]},
            )
        except ProtocolError as e:
            return f"sampling failed: {e.message}"
        return str(getattr(answer.content, "text", answer.content))

    @server.tool()
    async def after_a_failed_call(ctx: Context) -> str:
        """Hand the model a conversation whose tool call failed."""
        signature = {"mcpkit/geminiThoughtSignature": SIGNATURE}
        call = {"type": "tool_use", "id": "call_9", "name": "add", "input": {"a": 2, "b": 3}}
        failed = {"type": "text", "text": "add is down"}
        conversation = [
            {"role": "user", "content": {"type": "text", "text": "What is 2 + 3?"}},
            {"role": "assistant", "content": [{**call, "_meta": signature}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolUseId": "call_9",
                        "content": [failed],
                        "isError": True,
                    }
                ],
            },
        ]
        r = await ctx.sample(conversation, max_tokens=20, tools=["add"])
        return str(getattr(r.content, "text", r.content))

    @server.tool()
    async def look(text: str, media: str, ctx: Context) -> str:
        """Show the model an image or a sound (and let it stop at 3 tokens)."""
        block = (
            {"type": "image", "data": PNG, "mimeType": "image/png"}
            if media == "image"
            else {"type": "audio", "data": WAV, "mimeType": "audio/wav"}
        )
        message = {"role": "user", "content": [{"type": "text", "text": text}, block]}
        try:
            r = await ctx.sample([message], max_tokens=3)
        except ProtocolError as e:
            return f"sampling failed: {e.message}"
        return f"{r.stop_reason}|{getattr(r.content, 'text', None)}|{r.model}"

    return server


class Recorded:
    """The handler, and every result it returned (to check against the schema)."""

    def __init__(self, inner: ProviderHandler) -> None:
        self.inner = inner
        self.results: list[CreateMessageResult] = []

    async def __call__(self, params: CreateMessageRequestParams, ctx: Any) -> CreateMessageResult:
        result = await self.inner(params, ctx)
        self.results.append(result)
        return result


def text(result: Any) -> str:
    return str(result.content[0].text)


def _check_first_request(provider: str, seen: Seen) -> None:
    """The request's options reached the provider in its own terms, the hint chose the model."""
    body = seen.body
    if provider == "openai":
        assert body["model"] == "chosen-model"
        assert body["messages"][:2] == [
            {"role": "system", "content": "Use the tools."},
            {"role": "user", "content": "What is 2 + 3?"},
        ]
        assert (body["max_completion_tokens"], body["temperature"], body["stop"]) == (
            64,
            0.2,
            ["END"],
        )
        assert body["tools"][0]["function"]["name"] == "add"
        assert body["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
        assert body["tool_choice"] == "required"
    elif provider == "anthropic":
        assert body["model"] == "chosen-model"
        assert (body["system"], body["max_tokens"], body["temperature"]) == (
            "Use the tools.",
            64,
            0.2,
        )
        assert body["stop_sequences"] == ["END"]
        assert body["tools"][0]["input_schema"]["required"] == ["a", "b"]
        assert body["tool_choice"] == {"type": "any"}
        assert seen.headers["anthropic-version"] == "2023-06-01"
    else:
        assert seen.path == "/gemini/v1beta/models/chosen-model:generateContent"
        assert body["systemInstruction"] == {"parts": [{"text": "Use the tools."}]}
        assert body["generationConfig"] == {
            "maxOutputTokens": 64,
            "temperature": 0.2,
            "stopSequences": ["END"],
        }
        declaration = body["tools"][0]["functionDeclarations"][0]
        assert declaration["parametersJsonSchema"]["required"] == ["a", "b"]
        assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def _check_tool_result_sent(provider: str, body: Any) -> None:
    """The second request carries the model's call and the tool's result, in its terms."""
    if provider == "openai":
        call, result = body["messages"][-2:]
        assert call["tool_calls"][0]["id"] == "call_abc123"
        assert result == {"role": "tool", "tool_call_id": "call_abc123", "content": "5"}
    elif provider == "anthropic":
        call, result = body["messages"][-2:]
        assert call["content"][1]["id"] == "toolu_01"
        assert result["content"][0]["tool_use_id"] == "toolu_01"
        assert result["content"][0]["content"] == [{"type": "text", "text": "5"}]
    else:
        call, result = body["contents"][-2:]
        assert call["parts"][0]["thoughtSignature"] == SIGNATURE  # given back, as Gemini needs
        answer = result["parts"][0]["functionResponse"]
        assert answer == {"name": "add", "response": {"output": {"result": 5}}}


@pytest.mark.parametrize("revision", [None, "2025-11-25"], ids=["default", "2025-11-25"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_tool_loop_through_the_provider(
    fake: tuple[FakeProviders, ThreadServer], provider: str, revision: str | None
) -> None:
    providers, srv = fake
    start = len(providers.seen)
    sample = Recorded(handler(provider, srv, models={"sonnet": "chosen-model"}))
    with anyio.fail_after(20):
        async with Client(
            make_server(), protocol_version=revision, sampling_handler=sample, sampling_tools=True
        ) as client:
            out = await client.call_tool("solve", {"question": "What is 2 + 3?"})
            era = client.protocol_version
    assert era == (revision or "2026-07-28")
    assert out.is_error is not True and text(out) == "the sum is 5"
    seen = providers.seen[start:]
    assert [s.problems for s in seen] == [[], []]  # the fake found the requests well formed
    _check_first_request(provider, seen[0])
    _check_tool_result_sent(provider, seen[1].body)
    first, second = sample.results
    assert first.stop_reason == "toolUse"
    assert isinstance(first.content, list)
    calls = [b for b in first.content if b.type == "tool_use"]
    assert [(c.name, c.input) for c in calls] == [("add", {"a": 2, "b": 3})]
    assert second.stop_reason == "endTurn"
    assert second.model.startswith("chosen-model")  # the model the provider says answered
    for result in sample.results:
        assert schema_errors(era, "CreateMessageResult", result.to_wire()) == []


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_provider_error_comes_back_clear(
    fake: tuple[FakeProviders, ThreadServer], provider: str, status: int
) -> None:
    _providers, srv = fake
    question = "RATE?" if status == 429 else "BOOM?"
    sample = handler(provider, srv)
    with anyio.fail_after(20):
        # Handshake era: the server's request is answered with a JSON-RPC error, which the
        # tool sees.
        async with Client(
            make_server(),
            protocol_version="2025-11-25",
            sampling_handler=sample,
            sampling_tools=True,
        ) as client:
            out = text(await client.call_tool("solve", {"question": question}))
        # 2026-07-28: an input round has no error answer; the host's call ends with
        # InputFailed, the provider's error its cause.
        async with Client(make_server(), sampling_handler=sample, sampling_tools=True) as client:
            with pytest.raises(InputFailed) as failed:
                await client.call_tool("solve", {"question": question})
    assert out.startswith(f"sampling failed: {NAMES[provider]} API error {status}")
    assert ("Rate limit reached" if status == 429 else "had an error") in out
    assert failed.value.method == "sampling/createMessage"
    caught = failed.value.__cause__
    assert isinstance(caught, ProtocolError) and caught.code == -32603
    assert f"{NAMES[provider]} API error {status}" in caught.message
    for said in (out, caught.message, str(failed.value), repr(sample)):
        assert KEYS[provider] not in said
    if provider == "openai" and status == 429:
        assert out.endswith("(retry after 20 s)")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_failed_tool_call_reaches_the_model_as_one(
    fake: tuple[FakeProviders, ThreadServer], provider: str
) -> None:
    providers, srv = fake
    start = len(providers.seen)
    with anyio.fail_after(20):
        async with Client(
            make_server(), sampling_handler=handler(provider, srv), sampling_tools=True
        ) as client:
            out = text(await client.call_tool("after_a_failed_call"))
    (seen,) = providers.seen[start:]
    assert seen.problems == []
    if provider == "openai":
        assert seen.body["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_9",
            "content": "Error: add is down",  # Chat Completions has no error flag
        }
        assert out == "the sum is Error: add is down"
    elif provider == "anthropic":
        result = seen.body["messages"][-1]["content"][0]
        assert (result["tool_use_id"], result["is_error"]) == ("call_9", True)
        assert out == "the sum is add is down"
    else:
        call, answer = (c["parts"][0] for c in seen.body["contents"][-2:])
        assert call["thoughtSignature"] == SIGNATURE
        assert answer["functionResponse"] == {
            "name": "add",
            "id": "call_9",
            "response": {"error": "add is down"},
        }
        assert out == "the sum is add is down"


async def test_a_provider_that_cannot_be_reached() -> None:
    sample = OpenAIHandler("m", api_key="k", base_url=f"http://127.0.0.1:{free_port()}/v1")
    with anyio.fail_after(20):
        async with Client(
            make_server(), protocol_version="2025-11-25", sampling_handler=sample
        ) as client:
            out = text(await client.call_tool("look", {"text": "hi", "media": "image"}))
    assert out.startswith("sampling failed: could not reach OpenAI's API at http://127.0.0.1:")
    assert out.endswith(": ConnectError")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_images_and_audio(fake: tuple[FakeProviders, ThreadServer], provider: str) -> None:
    providers, srv = fake
    start = len(providers.seen)
    sample = handler(provider, srv)
    with anyio.fail_after(20):
        async with Client(make_server(), sampling_handler=sample) as client:
            image = text(await client.call_tool("look", {"text": "what?", "media": "image"}))
            if provider == "anthropic":
                # The Messages API takes no audio: refused before any call, clearly (under
                # 2026-07-28 the host's call ends: an input round has no error answer).
                with pytest.raises(InputFailed) as failed:
                    await client.call_tool("look", {"text": "hear?", "media": "audio"})
                refused = failed.value.__cause__
                assert isinstance(refused, InvalidParams)
                audio = refused.message
            else:
                audio = text(await client.call_tool("look", {"text": "hear?", "media": "audio"}))
    # The fake echoes the text, stopping at the 3-token limit; the model is the one it names.
    assert image.startswith("maxTokens|what?|default-model-")
    seen = providers.seen[start:]
    assert all(s.problems == [] for s in seen)
    body = seen[0].body
    if provider == "openai":
        parts = body["messages"][0]["content"]
        assert parts[1] == {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{PNG}"},
        }
        assert seen[1].body["messages"][0]["content"][1] == {
            "type": "input_audio",
            "input_audio": {"data": WAV, "format": "wav"},
        }
        assert audio.startswith("maxTokens|hear?|")
    elif provider == "anthropic":
        source = body["messages"][0]["content"][1]["source"]
        assert source == {"type": "base64", "media_type": "image/png", "data": PNG}
        assert audio == "Anthropic's API does not accept audio content in user messages"
        assert len(seen) == 1
    else:
        assert body["contents"][0]["parts"][1] == {
            "inlineData": {"mimeType": "image/png", "data": PNG}
        }
        assert seen[1].body["contents"][0]["parts"][1]["inlineData"]["mimeType"] == "audio/wav"
        assert audio.startswith("maxTokens|hear?|")


#: Where each provider's body carries the handler's system prompt, token bound and temperature.
HANDLER_OPTIONS_SENT = {
    "openai": lambda b: (b["messages"][0]["content"], b["max_completion_tokens"], b["temperature"]),
    "anthropic": lambda b: (b["system"], b["max_tokens"], b["temperature"]),
    "gemini": lambda b: (
        b["systemInstruction"]["parts"][0]["text"],
        b["generationConfig"]["maxOutputTokens"],
        b["generationConfig"]["temperature"],
    ),
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_handlers_own_options_reach_the_provider(
    fake: tuple[FakeProviders, ThreadServer], provider: str
) -> None:
    # The documented handler options: system_prompt, max_tokens (a bound on the request's
    # 3), temperature (the request gives none), headers= and extra=.
    providers, srv = fake
    start = len(providers.seen)
    sample = handler(
        provider,
        srv,
        system_prompt="Be brief.",
        max_tokens=2,
        temperature=0.7,
        headers={"X-Gateway": "team-a"},
        extra={"reasoning_effort": "low"},
    )
    with anyio.fail_after(20):
        async with Client(make_server(), sampling_handler=sample) as client:
            await client.call_tool("look", {"text": "hi", "media": "image"})
    (seen,) = providers.seen[start:]
    assert seen.headers["x-gateway"] == "team-a"
    assert seen.body["reasoning_effort"] == "low"
    assert HANDLER_OPTIONS_SENT[provider](seen.body) == ("Be brief.", 2, 0.7)


async def test_a_provider_that_does_not_answer_in_time(
    fake: tuple[FakeProviders, ThreadServer],
) -> None:
    providers, srv = fake
    sample = OpenAIHandler("m", api_key="k", base_url=srv.base + "/slow/v1", timeout=0.5)
    try:
        with anyio.fail_after(20):
            async with Client(
                make_server(), protocol_version="2025-11-25", sampling_handler=sample
            ) as client:
                out = text(await client.call_tool("look", {"text": "hi", "media": "image"}))
    finally:
        srv.call(providers.let_go)
    assert out == "sampling failed: OpenAI's API did not answer within 0.5 s"


async def test_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for provider, cls in CLASSES.items():
        monkeypatch.delenv(cls.key_env, raising=False)
        with pytest.raises(ValueError, match=cls.key_env):
            cls("m")
        monkeypatch.setenv(cls.key_env, KEYS[provider])
        made = cls("m")
        assert KEYS[provider] not in repr(made)
        assert KEYS[provider] in str(made.auth_headers())
    # A compatible local server needs no key: none is sent.
    monkeypatch.delenv("OPENAI_API_KEY")
    assert OpenAIHandler("m", base_url="http://127.0.0.1:1/v1").auth_headers() == {}
