"""One server exercising every feature of mcpkit's server SDK.

It also provides every tool, resource and prompt the public MCP conformance suite calls by
name, behaving as the suite checks. Run it with::

    mcpkit run examples/everything.py                              # stdio
    python examples/everything.py                                  # the same
    mcpkit run examples/everything.py --transport http --port 8000  # Streamable HTTP

It serves the handshake revisions (2024-11-05 to 2025-11-25) and the stateless one
(2026-07-28) at once, with the same code: see "one tool, both revisions" below.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field

from mcpkit import Context, ProtocolError, Server, ToolError
from mcpkit.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolResultContent,
    ToolUseContent,
)

log = logging.getLogger("everything")


# ---------------------------------------------------------------------------- media


def _png_1x1() -> bytes:
    """A valid 1x1 red PNG, built here so the example has no binary files."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence(samples: int = 800, rate: int = 8000) -> bytes:
    """A valid mono 8-bit WAV of silence."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    riff = (
        b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )
    return b"RIFF" + struct.pack("<I", len(riff)) + riff


PNG = _png_1x1()
PNG_B64 = base64.b64encode(PNG).decode("ascii")
WAV_B64 = base64.b64encode(_wav_silence()).decode("ascii")


# ---------------------------------------------------------------------------- lifespan


@dataclass
class AppState:
    """What the lifespan sets up once and every request can reach (``ctx.lifespan_state``)."""

    watched_text: str = "watched: version 0"
    calls: int = 0


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[AppState]:
    state = AppState()
    yield state


server = Server(
    "mcpkit-everything",
    version="1.0.0",
    title="mcpkit: everything",
    description="Exercises every feature of the mcpkit server SDK",
    instructions="A test server: each tool demonstrates one MCP feature.",
    icons=[{"src": "data:image/png;base64," + PNG_B64, "mimeType": "image/png", "sizes": ["1x1"]}],
    website_url="https://example.com/mcpkit",
    lifespan=lifespan,
)
server.bridge_logging("everything")


# ============================================================================ conformance tools


@server.tool()
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> ImageContent:
    """Return a small PNG image."""
    return ImageContent(data=PNG_B64, mime_type="image/png")


@server.tool()
def test_audio_content() -> AudioContent:
    """Return a short WAV clip."""
    return AudioContent(data=WAV_B64, mime_type="audio/wav")


@server.tool()
def test_embedded_resource() -> EmbeddedResource:
    """Return an embedded text resource."""
    return EmbeddedResource(
        resource=TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@server.tool()
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Return text, an image and an embedded resource together."""
    return [
        TextContent(text="Multiple content types test:"),
        ImageContent(data=PNG_B64, mime_type="image/png"),
        EmbeddedResource(
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            )
        ),
    ]


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Send three log messages while running."""
    await ctx.info("Tool execution started")
    await anyio.sleep(0.05)
    await ctx.info("Tool processing data")
    await anyio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Logging test completed"


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50 and 100 of 100."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"step {step}")
        if step < 100:
            await anyio.sleep(0.05)
    return "Progress test completed"


@server.tool()
def test_error_handling() -> str:
    """Always fail (the failure is a tool result with isError)."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Ask the client's LLM to answer a prompt."""
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.content if not isinstance(result.content, list) else result.content[0]
    text = getattr(content, "text", str(content))
    return f"LLM response: {text}"


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the user for a username and an email."""
    answer = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: {answer.action}, {answer.content}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicit a form whose fields all have defaults (SEP-1034)."""
    answer = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {
                    "type": "boolean",
                    "description": "Verification status",
                    "default": True,
                },
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicit a form with every enum shape (SEP-1330)."""
    answer = await ctx.elicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@server.tool(
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    }
)
def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None) -> str:
    """A tool whose input schema uses JSON Schema 2020-12 features, kept as written."""
    return f"Received: name={name}, address={address}"


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Takes a moment, so an HTTP transport can close and resume the stream meanwhile."""
    await ctx.info("Reconnection test started")
    await anyio.sleep(0.2)
    return "Reconnection test completed"


# ============================================================================ one tool, both revisions
#
# A tool asks the client things with ctx.elicit / ctx.sample / ctx.list_roots. Under the
# handshake revisions that is a request to the client in the middle of the call. Under
# 2026-07-28 there are no server-to-client requests: the same call ends the request with an
# InputRequiredResult naming the question (under `key`), the client retries the request with
# the answer, and the tool runs again from the top, this time getting the answer back. What
# earlier rounds answered travels in the sealed `requestState`, so a tool may ask in several
# rounds, and ctx.gather asks several things in one round. Code before a question runs once
# per round: keep side effects after the questions.

NAME_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def _answer(result: Any, field: str, default: str) -> str:
    """One field of an accepted elicitation, or ``default``."""
    if result.accepted and isinstance(result.content, dict):
        return str(result.content.get(field, default))
    return default


def _sampled_text(result: Any) -> str:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return " ".join(str(getattr(b, "text", "")) for b in blocks)


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {_answer(answer, 'name', 'stranger')}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Ask the client's model a question and return its answer."""
    result = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model says: {_sampled_text(result)}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """List the client's roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Client roots: " + (", ".join(str(r.uri) for r in roots) or "none")


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Ask for a confirmation; the answer comes back with the state the server sealed."""
    answer = await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return f"state-ok: confirmed={_answer(answer, 'ok', 'False')}"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Ask for a name, a greeting from the model and the roots, all in one round."""
    name, greeting, roots = await ctx.gather(
        ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"{_sampled_text(greeting)} {_answer(name, 'name', 'stranger')} ({len(roots)} root(s))"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Ask two questions, one round each (the second only once the first is answered)."""
    step1 = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    step2 = await ctx.elicit(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    return f"{_answer(step1, 'name', 'stranger')} likes {_answer(step2, 'color', 'no color')}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Ask for a confirmation; a requestState altered by the client is refused (-32602)."""
    answer = await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return f"confirmed={_answer(answer, 'ok', 'False')}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Ask only what the client declared it can answer (sampling, elicitation, roots)."""
    caps = ctx.client_capabilities
    questions: list[Any] = []
    if "sampling" in caps:
        questions.append(ctx.sample("Generate a greeting", max_tokens=50, key="greeting"))
    if "elicitation" in caps:
        questions.append(ctx.elicit("What is your name?", NAME_FORM, key="user_name"))
    if "roots" in caps:
        questions.append(ctx.list_roots(key="client_roots"))
    answers = await ctx.gather(*questions)
    return f"got {len(answers)} answer(s)"


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability; without it the call is refused (-32021 under
    2026-07-28, a tool error before)."""
    result = await ctx.sample("Say something", max_tokens=20, key="needs_sampling")
    return _sampled_text(result)


@server.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Report progress and log, then ask the user: under 2026-07-28 the question travels in
    the result, never as a request on the response stream."""
    await ctx.report_progress(0, 1, "about to ask")
    await ctx.info("asking the user")
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {_answer(answer, 'name', 'stranger')}!"


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Log at three levels; under 2026-07-28 only requests that set a log level get them."""
    await ctx.debug("debug message from test_logging_tool")
    await ctx.info("info message from test_logging_tool")
    await ctx.warning("warning message from test_logging_tool")
    return "Logging test completed"


async def toggled_tool() -> str:
    """A tool test_trigger_tool_change adds and removes."""
    return "toggled"


def toggled_prompt() -> str:
    """A prompt test_trigger_prompt_change adds and removes."""
    return "toggled"


@server.tool()
async def test_trigger_tool_change() -> str:
    """Add the tool test_toggled_tool, or remove it if present (the tool list changes)."""
    # Async, so it runs on the event loop: two calls at once cannot both add the tool.
    # toggled_tool is a module-level function, found again by every worker: like any
    # removal, the change reaches every worker sharing this server's Redis.
    try:
        server.remove_tool("test_toggled_tool")
    except KeyError:
        server.add_tool(toggled_tool, name="test_toggled_tool")
        return "added test_toggled_tool"
    return "removed test_toggled_tool"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Add the prompt test_toggled_prompt, or remove it if present (the prompt list changes)."""
    try:
        server.remove_prompt("test_toggled_prompt")
    except KeyError:
        server.add_prompt(toggled_prompt, name="test_toggled_prompt")
        return "added test_toggled_prompt"
    return "removed test_toggled_prompt"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def test_custom_header(
    region: Annotated[
        str,
        Field(
            description="Where the query runs; mirrored into the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ],
    query: str = "SELECT 1",
    limit: Annotated[
        int, Field(description="Most rows", json_schema_extra={"x-mcp-header": "Limit"})
    ] = 10,
) -> str:
    """Run a query in a region: the arguments marked x-mcp-header travel as HTTP headers too
    (2026-07-28), so gateways can route on them; the server checks they match the body."""
    return f"ran {query!r} in {region} (limit {limit})"


# ============================================================================ more tools


class Weather(BaseModel):
    """Conditions at a place."""

    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius")
    conditions: Literal["sunny", "cloudy", "rain", "snow"]


class Units(str, Enum):
    metric = "metric"
    imperial = "imperial"


@server.tool(
    title="Weather",
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    meta={"example.com/category": "demo"},
)
def get_weather(
    city: Annotated[str, Field(description="City name", min_length=1)],
    units: Units = Units.metric,
) -> Weather:
    """Current weather for a city (structured output with an output schema).

    Args:
        city: the city.
        units: unit system of the answer.
    """
    temp = 21.5 if units is Units.metric else 70.7
    return Weather(city=city, temperature_c=temp, conditions="sunny")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers (a wrapped structured result: {"result": n})."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def get_resource_link(name: str = "static-text") -> ResourceLink:
    """Return a link to one of this server's resources."""
    return ResourceLink(uri=f"test://{name}", name=name, mime_type="text/plain")


@server.tool()
async def slow_count(n: int, ctx: Context) -> str:
    """Count to n slowly, reporting progress; stops early when the client cancels."""
    for i in range(n):
        await ctx.report_progress(i, n)
        await anyio.sleep(0.1)
    return f"counted to {n}"


@server.tool(task_support="optional")
async def long_running_job(ctx: Context, steps: int = 5, step_seconds: float = 0.2) -> str:
    """A long job: call it as a task (tools/call with `task`) and poll tasks/get, or plainly.

    Progress goes under the original progressToken while the task runs; tasks/cancel
    stops it between steps.
    """
    for i in range(steps):
        await ctx.report_progress(i, steps, f"step {i + 1} of {steps}")
        await anyio.sleep(step_seconds)
    return f"finished {steps} steps"


@server.tool(task_support="optional")
async def confirm_then_run(ctx: Context, action: str = "deploy") -> str:
    """A task that needs the user: it asks for confirmation (the task is input_required
    meanwhile) and then runs."""
    answer = await ctx.elicit(f"Run {action}?", {"type": "object", "properties": {}})
    return f"{action} done" if answer.accepted else f"{action} skipped ({answer.action})"


@server.tool()
def log_with_python_logging(message: str) -> str:
    """Log through Python's logging (bridged to the client as notifications/message)."""
    log.warning("from logging: %s", message)
    return "logged"


@server.tool()
async def list_client_roots(ctx: Context) -> list[str]:
    """The client's roots (roots/list)."""
    return [root.uri for root in await ctx.list_roots()]


@server.tool()
async def read_own_resource(uri: str, ctx: Context) -> str:
    """Read one of this server's resources from inside a tool."""
    contents = await ctx.read_resource(uri)
    return getattr(contents[0], "text", "<binary>")


@server.tool()
async def whoami(ctx: Context) -> dict[str, Any]:
    """Facts about the request: id, client, capabilities, revision, lifespan state."""
    state: AppState = ctx.lifespan_state
    state.calls += 1
    return {
        "request_id": ctx.request_id,
        "client": ctx.client_info.get("name"),
        "capabilities": sorted(ctx.client_capabilities),
        "protocol_version": ctx.protocol_version,
        "calls": state.calls,
    }


class Contact(BaseModel):
    name: str
    email: str
    newsletter: bool = False


@server.tool()
async def ask_contact(ctx: Context) -> str:
    """Elicit a typed form (a pydantic model) and use the validated answer."""
    answer = await ctx.elicit("Who should we contact?", Contact)
    if not answer.accepted or answer.data is None:
        return f"no contact ({answer.action})"
    return f"contact: {answer.data.name} <{answer.data.email}>"


@server.tool()
async def connect_account(ctx: Context) -> str:
    """URL-mode elicitation: send the user to a page, then say it completed."""
    result = await ctx.elicit_url(
        "Please sign in to connect your account",
        "https://example.com/connect",
        elicitation_id="connect-1",
    )
    if result.accepted:
        await ctx.complete_elicitation("connect-1")
    return f"url elicitation: {result.action}"


@server.tool()
async def sample_with_tools(question: str, ctx: Context) -> str:
    """Sampling with tools: let the client's model call `add`, run it, and return its answer."""
    messages: list[Any] = [question]
    for _ in range(4):
        result = await ctx.sample(messages, max_tokens=200, tools=["add"], tool_choice="auto")
        blocks = result.content if isinstance(result.content, list) else [result.content]
        uses = [b for b in blocks if isinstance(b, ToolUseContent)]
        if not uses:
            return " ".join(getattr(b, "text", "") for b in blocks)
        messages.append({"role": "assistant", "content": [u.to_wire() for u in uses]})
        results = []
        for use in uses:
            total = add(**{k: int(v) for k, v in use.input.items()})
            results.append(
                ToolResultContent(
                    tool_use_id=use.id, content=[TextContent(text=str(total))]
                ).to_wire()
            )
        messages.append({"role": "user", "content": results})
    raise ToolError("the model kept asking for tools")


# A closure exists in the process that made it: registered from a runtime change, every
# worker sharing this server's Redis makes its own (and so does one starting later).
@server.runtime_change
def register_dynamic_tool(name: str) -> None:
    """Register tool ``name``, answering "I am <name>"."""

    def dynamic() -> str:
        return f"I am {name}"

    dynamic.__doc__ = f"A tool added at runtime: {name}."
    server.add_tool(dynamic, name=name)


@server.tool()
def add_dynamic_tool(name: str) -> str:
    """Register a new tool at runtime (clients get notifications/tools/list_changed)."""
    register_dynamic_tool(name)
    return f"added {name}"


@server.tool()
def remove_dynamic_tool(name: str) -> str:
    """Remove a tool registered at runtime."""
    try:
        server.remove_tool(name)
    except KeyError:
        raise ToolError(f"no tool named {name!r}") from None
    return f"removed {name}"


@server.tool()
async def update_watched_resource(text: str, ctx: Context) -> str:
    """Change test://watched-resource and notify subscribed clients."""
    state: AppState = ctx.lifespan_state
    state.watched_text = text
    await server.notify_resource_updated("test://watched-resource")
    return "updated"


# ============================================================================ resources


# Caching hints of the reads under 2026-07-28: this content never changes and is the same
# for everyone, so clients and shared caches may keep it an hour. Resources without hints
# get the server's defaults (StatelessSettings: stale at once, private).
@server.resource(
    "test://static-text", mime_type="text/plain", cache_ttl_ms=3_600_000, cache_scope="public"
)
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG image)."""
    return PNG


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> dict[str, Any]:
    """Data for an id (a resource template)."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@server.resource("test://watched-resource", mime_type="text/plain")
def watched(ctx: Context) -> str:
    """A resource clients can subscribe to."""
    state: AppState = ctx.lifespan_state
    return state.watched_text


server.add_resource(
    "test://example-resource",
    "Example resource content.",
    mime_type="text/plain",
    description="A static resource given as a value",
    annotations={"audience": ["user", "assistant"], "priority": 0.5},
)


@server.resource("users://{user_id}/profile{?fields}", mime_type="application/json")
def user_profile(user_id: int, fields: str | None = None) -> dict[str, Any]:
    """A user's profile (a typed template variable and an optional query parameter)."""
    profile = {"id": user_id, "name": f"user {user_id}", "email": f"user{user_id}@example.com"}
    if fields:
        return {k: v for k, v in profile.items() if k in fields.split(",")}
    return profile


# ============================================================================ prompts


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
    """A prompt embedding a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        PromptMessage(
            role="user",
            content=EmbeddedResource(
                resource=TextResourceContents(
                    uri=resourceUri,
                    mime_type="text/plain",
                    text="Embedded resource content for testing.",
                )
            ),
        ),
        PromptMessage(
            role="user", content=TextContent(text="Please process the embedded resource above.")
        ),
    ]


@server.prompt()
def test_prompt_with_image() -> list[PromptMessage]:
    """A prompt with an image."""
    return [
        PromptMessage(role="user", content=ImageContent(data=PNG_B64, mime_type="image/png")),
        PromptMessage(role="user", content=TextContent(text="Please analyze the image above.")),
    ]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that first asks the user what context to use."""
    answer = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    return f"Answer using this context: {_answer(answer, 'context', 'none given')}"


@server.prompt(title="Code review")
def code_review(code: str, language: str = "python") -> list[Any]:
    """Ask for a review of some code.

    Args:
        code: the code to review.
        language: its programming language.
    """
    return [
        f"Please review this {language} code:\n\n{code}",
        {"role": "assistant", "content": "Sure, let me look at it."},
    ]


# ============================================================================ tasks extension
# The fixtures of the conformance suite's tasks-* scenarios (io.modelcontextprotocol/tasks,
# 2026-07-28). Written once: a 2025-11-25 client runs the same tools with the core `task`.

_CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
def greet(name: str) -> str:
    """Greet someone (never a task)."""
    return f"Hello, {name}!"


@server.tool(task_support="optional")
async def slow_compute(ctx: Context, seconds: float = 1.0, label: str = "") -> str:
    """Sleep ``seconds``, then answer; a task for a client of the tasks extension."""
    await ctx.report_progress(0, 1, f"computing {label}".strip())
    await anyio.sleep(seconds)
    return f"computed {label or 'result'} after {seconds:g}s"


@server.tool(task_support="required")
async def failing_job() -> str:
    """Always fails as a tool (isError), after about a second; runs only as a task."""
    await anyio.sleep(1.0)
    raise ToolError("the job failed")


@server.tool(task_support="optional")
async def protocol_error_job() -> str:
    """Fails with a protocol error (the task is `failed`, with its error)."""
    await anyio.sleep(0.2)
    raise ProtocolError(-32603, "the job crashed")


@server.tool(task_support="optional")
async def confirm_delete(ctx: Context, filename: str) -> str:
    """Ask for confirmation, then delete (pretend): the task waits for its client's answer."""
    answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM)
    confirmed = answer.accepted and bool((answer.content or {}).get("confirm"))
    return f"deleted {filename}" if confirmed else f"kept {filename}"


@server.tool(task_support="optional")
async def multi_input(ctx: Context) -> str:
    """Ask two questions at once: both wait in the task until each is answered."""
    first, second = await ctx.gather(
        ctx.elicit("First name?", _NAME), ctx.elicit("Second name?", _NAME)
    )
    names = [(a.content or {}).get("name", "?") for a in (first, second)]
    return "got " + " and ".join(str(n) for n in names)


@server.tool(task_support="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Ask for a name in the request (multi round-trip), then go on as a task."""
    answer = await ctx.elicit("What is your name?", _NAME)
    name = (answer.content or {}).get("name", "stranger")
    await ctx.begin_task()
    await anyio.sleep(0.2)
    return f"Hello, {name}, from a task"


# ============================================================================ skills
# The skills extension (io.modelcontextprotocol/skills): every directory under skills/ with
# a SKILL.md, served as skill:// resources with skills/list and skills/get.

SKILLS_DIR = Path(__file__).parent / "skills"
if SKILLS_DIR.is_dir():  # beside this file in the repository (not in a copy of it alone)
    server.add_skills_dir(SKILLS_DIR)


# ============================================================================ completion

LANGUAGES = ["python", "pyret", "rust", "ruby", "go", "typescript"]


@server.completion()
def complete(ref: Any, argument: Any, context: Any) -> list[str]:
    """Complete prompt arguments and template variables."""
    if argument.name == "language":
        return [lang for lang in LANGUAGES if lang.startswith(argument.value)]
    if argument.name in ("arg1", "arg2"):
        return [v for v in ("testValue1", "testValue2", "test") if v.startswith(argument.value)]
    if argument.name in ("id", "user_id"):
        return [str(i) for i in range(1, 200) if str(i).startswith(argument.value)]
    return []


@server.on_roots_changed()
async def roots_changed(ctx: Context) -> None:
    roots = await ctx.list_roots()
    log.info("client roots changed: %s", [r.uri for r in roots])


if __name__ == "__main__":
    server.run()
