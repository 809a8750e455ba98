"""JSON examples of the spec prose and of the seed documents round-trip exactly through
the models; plus construction and serialization behaviour of the models themselves."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError
from tests.types._roundtrips import (
    Example,
    Roundtrip,
    alias_roundtrip,
    both,
    by_name,
    model_roundtrip,
)
from tests.types._spec import FENCE, PROSE_DIR, SEEDS_DIR, definitions, parse_block, same_json

import mcpkit.types as t

DEFS = definitions("2025-11-25")
_INTERFACE = re.compile(r"^interface (\w+)", re.M)


def _result_message(result_type: str) -> Roundtrip:
    envelope = model_roundtrip(t.JSONRPCResultResponse)
    payload = by_name(result_type)

    def run(value: Any) -> Any:
        wire = envelope(value)
        return {**wire, "result": payload(value["result"])}

    return run


#: A result answering a request not shown with it: told by a member only it has.
_RESULT_KEYS = (
    ("protocolVersion", "InitializeResult"),
    ("model", "CreateMessageResult"),
    ("content", "CallToolResult"),
    ("tools", "ListToolsResult"),
    ("prompts", "ListPromptsResult"),
    ("resources", "ListResourcesResult"),
    ("resourceTemplates", "ListResourceTemplatesResult"),
    ("contents", "ReadResourceResult"),
    ("messages", "GetPromptResult"),
    ("completion", "CompleteResult"),
    ("roots", "ListRootsResult"),
    ("action", "ElicitResult"),
    ("tasks", "ListTasksResult"),
    ("task", "CreateTaskResult"),
)
_CLIENT_CAPS = {"roots", "sampling", "elicitation"}
_SERVER_CAPS = {"prompts", "resources", "tools", "logging", "completions"}


class Classifier:
    """Maps one parsed JSON value to the definition it is an example of (or None)."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.requests: dict[Any, dict[str, Any]] = {}

    def __call__(self, value: Any, hint: str | None) -> str | None:
        if isinstance(value, list) and value:
            # A list of examples of one kind (e.g. several roots).
            kinds = {self(item, hint) for item in value}
            kind = kinds.pop() if len(kinds) == 1 else None
            return f"list:{kind}" if kind and kind in DEFS else None
        if not isinstance(value, dict):
            return None
        if value.get("jsonrpc") == "2.0":
            return self.message(value, hint)
        if hint in DEFS:
            return hint
        return self.fragment(value)

    def message(self, value: dict[str, Any], hint: str | None) -> str | None:
        method = value.get("method")
        if isinstance(method, str):
            if "id" in value:
                self.requests[json.dumps(value["id"])] = value
                cls = t.REQUEST_TYPES.get(method)
            else:
                cls = t.NOTIFICATION_TYPES.get(method)
            if cls is None:  # a method MCP does not define: the generic envelope
                return "JSONRPCRequest" if "id" in value else "JSONRPCNotification"
            return cls.__name__
        if "error" in value:
            if value["error"].get("code") == t.URL_ELICITATION_REQUIRED:
                return "URLElicitationRequiredError"
            return "JSONRPCErrorResponse"
        if "result" in value:
            request = self.requests.get(json.dumps(value.get("id")))
            if request is not None:
                params = request.get("params") or {}
                if "task" in params and "task" in value["result"]:
                    return "result:CreateTaskResult"
                return "result:" + t.RESULT_TYPES[request["method"]].__name__
            if hint and hint.endswith("Response") and hint[: -len("Response")] in DEFS:
                return "result:" + hint[: -len("Response")]
            result = value["result"]
            if isinstance(result, dict):
                for key, name in _RESULT_KEYS:
                    if key in result:
                        return "result:" + name
        return None

    def fragment(self, value: dict[str, Any]) -> str | None:
        keys = set(value)
        if {"code", "message"} <= keys <= {"code", "message", "data"}:
            return "Error"
        if keys == {"task"}:
            return "TaskAugmentedRequestParams"
        kind = value.get("type")
        if keys == {"capabilities"} and isinstance(value["capabilities"], dict):
            caps = value["capabilities"]
            tasks = caps.get("tasks", {}).get("requests", {})
            if set(caps) & _CLIENT_CAPS or set(tasks) & {"sampling", "elicitation"}:
                return "capabilities:ClientCapabilities"
            if set(caps) & _SERVER_CAPS or "tools" in tasks:
                return "capabilities:ServerCapabilities"
            return None
        if kind in ("text", "image", "audio", "resource", "resource_link"):
            return "ContentBlock"
        if kind in ("tool_use", "tool_result"):
            return "SamplingMessageContentBlock"
        if kind in ("string", "number", "integer", "boolean", "array") and "title" in keys:
            return "PrimitiveSchemaDefinition"
        if keys == {"role", "content"}:
            return "SamplingMessage" if "sampling" in self.page else "PromptMessage"
        if "uri" in keys and keys & {"text", "blob"}:
            return "TextResourceContents" if "text" in keys else "BlobResourceContents"
        if "name" in keys and "inputSchema" in keys:
            return "Tool"
        if {"uri", "name"} <= keys and "type" not in keys:
            return "Root" if "roots" in self.page else "Resource"
        if "hints" in keys or keys & {"costPriority", "speedPriority", "intelligencePriority"}:
            return "ModelPreferences"
        return None


def _roundtrip_for(definition: str) -> Roundtrip:
    if definition.startswith("result:"):
        return _result_message(definition.removeprefix("result:"))
    if definition.startswith("list:"):
        return alias_roundtrip(list[getattr(t, definition.removeprefix("list:"))])
    if definition.startswith("capabilities:"):
        caps = by_name(definition.removeprefix("capabilities:"))
        return lambda v: {"capabilities": caps(v["capabilities"])}
    run = by_name(definition)
    if definition in DEFS and definition.endswith(("Request", "Notification")):
        # A concrete message also goes through the generic envelope union.
        return both(run, alias_roundtrip(t.JSONRPCMessage))
    return run


def _prose_examples() -> Iterator[tuple[str, Any, str | None, Classifier]]:
    for path in sorted(PROSE_DIR.rglob("*.mdx")):
        text = path.read_text(encoding="utf-8")
        classify = Classifier(str(path))
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            source = f"{path.relative_to(PROSE_DIR)}:{line}"
            yield source, parse_block(match.group(1)), None, classify


def _seed_examples() -> Iterator[tuple[str, Any, str | None, Classifier]]:
    """JSON values in the seed pages: each line that opens with ``{`` starts one.

    The rendered pages use typographic quotes; they are turned back into ASCII ones
    (values that contain such quotes on purpose then fail to parse and are skipped).
    """
    decoder = json.JSONDecoder()
    for path in sorted(SEEDS_DIR.glob("*.txt")):
        text = path.read_text(encoding="utf-8").replace("\u201c", '"').replace("\u201d", '"')
        classify = Classifier(path.name)
        interfaces = [(m.start(), m.group(1)) for m in _INTERFACE.finditer(text)]
        pos = 0
        for match in re.finditer(r"^\{", text, re.M):
            if match.start() < pos:
                continue  # inside the previous value
            line = text.count("\n", 0, match.start()) + 1
            source = f"seeds/{path.name}:{line}"
            try:
                value, end = decoder.raw_decode(text, match.start())
            except ValueError:
                # Broken by the page rendering: skip the whole block (blocks have no
                # blank lines inside), not just its first line.
                yield source, None, None, classify
                pos = text.find("\n\n", match.start())
                pos = len(text) if pos < 0 else pos
                continue
            pos = end
            hint = None
            for start, name in interfaces:
                if start > match.start():
                    break
                hint = name
            if isinstance(value, dict) and value and set(value) <= set(DEFS):
                # A table of examples keyed by definition name (older message style: no
                # envelope, which is added here).
                for name, sub in value.items():
                    if isinstance(sub, dict) and isinstance(sub.get("method"), str):
                        extra = {"id": 1} if name.endswith("Request") else {}
                        sub = {"jsonrpc": "2.0", **extra, **sub}
                    yield f"{source}:{name}", sub, name, classify
                continue
            yield source, value, hint, classify


def _collect() -> tuple[list[Example], list[str]]:
    examples: list[Example] = []
    skipped: list[str] = []
    for source, value, hint, classify in (*_prose_examples(), *_seed_examples()):
        definition = classify(value, hint) if value is not None else None
        if definition is None:
            skipped.append(source)
            continue
        examples.append(Example(source, value, definition, _roundtrip_for(definition)))
    return examples, skipped


EXAMPLES, SKIPPED = _collect()


def test_enough_examples_are_classified() -> None:
    prose = [e for e in EXAMPLES if not e.source.startswith("seeds/")]
    seeds = [e for e in EXAMPLES if e.source.startswith("seeds/")]
    # The prose pages have ~130 ```json blocks and the seeds ~140 JSON values, most of
    # them MCP messages or parts of them (124 and 117 classified when this was written).
    assert len(prose) >= 110, (len(prose), SKIPPED)
    assert len(seeds) >= 100, (len(seeds), SKIPPED)
    assert len(EXAMPLES) >= 3 * len(SKIPPED), (len(EXAMPLES), SKIPPED)
    kinds = {e.definition for e in EXAMPLES}
    # Every request and notification method appears at least in one example.
    for method, cls in {**t.REQUEST_TYPES, **t.NOTIFICATION_TYPES}.items():
        assert cls.__name__ in kinds, method


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.source}={e.definition}")
def test_example_roundtrips_exactly(example: Example) -> None:
    out = example.roundtrip(example.value)
    assert same_json(out, example.value), (out, example.value)


# --- construction and serialization --------------------------------------------------


def test_construct_by_python_name_or_wire_alias() -> None:
    a = t.Tool(name="add", input_schema=t.ObjectSchema(properties={"a": {"type": "number"}}))
    b = t.Tool.model_validate(
        {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}}
    )
    assert a.to_wire() == b.to_wire()
    assert a.to_wire() == {
        "name": "add",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
    }


def test_constants_are_always_on_the_wire() -> None:
    request = t.CallToolRequest(id=7, params=t.CallToolRequestParams(name="x"))
    assert request.to_wire() == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "x"},
    }
    assert t.TextContent(text="hi").to_wire() == {"type": "text", "text": "hi"}
    assert t.InitializedNotification().to_wire() == {
        "jsonrpc": "2.0",
        "method": "notifications/initialized",
    }


def test_none_means_absent_except_where_null_is_meaningful() -> None:
    text = t.TextContent(text="hi", annotations=None, meta=None)
    assert text.to_wire() == {"type": "text", "text": "hi"}
    task = t.Task(
        task_id="t1", status="working", created_at="2025-01-01T00:00:00Z",
        last_updated_at="2025-01-01T00:00:00Z", ttl=None,
    )  # fmt: skip
    assert task.to_wire()["ttl"] is None
    error = t.JSONRPCErrorResponse(id=None, error=t.Error(code=-32700, message="Parse error"))
    assert error.to_wire() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    log = t.LoggingMessageNotificationParams(level="info", data=None)
    assert log.to_wire() == {"level": "info", "data": None}


def test_unknown_members_survive() -> None:
    wire = {"type": "text", "text": "a", "x-vendor": {"k": [1, 2.5, None]}}
    assert t.TextContent.model_validate(wire).to_wire() == wire
    msg = {"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {"extra": True}}
    assert t.PingRequest.model_validate(msg).to_wire() == msg


def test_envelope_keeps_the_concrete_result() -> None:
    result = t.CallToolResult(content=[t.TextContent(text="4")], is_error=False)
    response = t.JSONRPCResultResponse(id=3, result=result)
    assert response.to_wire() == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": "4"}], "isError": False},
    }


def test_numbers_keep_their_json_type() -> None:
    params = t.ProgressNotificationParams.model_validate(
        {"progressToken": 1, "progress": 50, "total": 100.5}
    )
    wire = params.to_wire()
    assert same_json(wire, {"progressToken": 1, "progress": 50, "total": 100.5})


@pytest.mark.parametrize(
    ("model", "value"),
    [
        (t.Annotations, {"priority": 1.5}),
        (t.Annotations, {"priority": -0.1}),
        (t.Annotations, {"audience": ["robot"]}),
        (t.ModelPreferences, {"costPriority": 2}),
        (t.JSONRPCRequest, {"jsonrpc": "2.0", "id": True, "method": "ping"}),
        (t.JSONRPCRequest, {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        (t.JSONRPCRequest, {"jsonrpc": "1.0", "id": 1, "method": "ping"}),
        (t.TextContent, {"type": "image", "text": "x"}),
        (t.CallToolRequest, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        (t.CallToolResult, {}),
        (t.Task, {"taskId": "t", "status": "done", "createdAt": "", "lastUpdatedAt": "", "ttl": 1}),
        (t.Task, {"taskId": "t", "status": "working", "createdAt": "", "lastUpdatedAt": ""}),
        (t.ElicitResult, {"action": "maybe"}),
        (t.SetLevelRequestParams, {"level": "verbose"}),
    ],
)
def test_invalid_values_are_rejected(model: type[t.MCPModel], value: Any) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(value)


def test_unions_dispatch_on_their_discriminator() -> None:
    blocks: TypeAdapter[list[Any]] = TypeAdapter(list[t.ContentBlock])
    parsed = blocks.validate_python(
        [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "", "mimeType": "image/png"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///a", "blob": ""}},
        ]
    )
    assert [type(b).__name__ for b in parsed] == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
    ]
    assert isinstance(parsed[4].resource, t.BlobResourceContents)

    fields: TypeAdapter[Any] = TypeAdapter(t.PrimitiveSchemaDefinition)
    shapes = {
        "StringSchema": {"type": "string", "format": "email"},
        "NumberSchema": {"type": "integer", "minimum": 1},
        "BooleanSchema": {"type": "boolean"},
        "UntitledSingleSelectEnumSchema": {"type": "string", "enum": ["a"]},
        "LegacyTitledEnumSchema": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
        "TitledSingleSelectEnumSchema": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "UntitledMultiSelectEnumSchema": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
        "TitledMultiSelectEnumSchema": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
    }  # fmt: skip
    for name, shape in shapes.items():
        assert type(fields.validate_python(shape)).__name__ == name

    params: TypeAdapter[Any] = TypeAdapter(t.ElicitRequestParams)
    url = {"mode": "url", "message": "m", "elicitationId": "e", "url": "https://x"}
    form = {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}
    assert isinstance(params.validate_python(url), t.ElicitRequestURLParams)
    assert isinstance(params.validate_python(form), t.ElicitRequestFormParams)
    assert (
        params.dump_python(params.validate_python(form), by_alias=True, exclude_unset=True) == form
    )

    messages: TypeAdapter[Any] = TypeAdapter(t.JSONRPCMessage)
    kinds = [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, t.JSONRPCRequest),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, t.JSONRPCNotification),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, t.JSONRPCResultResponse),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}}, t.JSONRPCErrorResponse),
    ]
    for wire, cls in kinds:
        assert type(messages.validate_python(wire)) is cls

    requests: TypeAdapter[Any] = TypeAdapter(t.ClientRequest)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    assert isinstance(requests.validate_python(call), t.CallToolRequest)
    with pytest.raises(ValidationError):
        requests.validate_python({**call, "method": "sampling/createMessage"})


def test_sampling_content_single_or_list() -> None:
    single = {"role": "user", "content": {"type": "text", "text": "hi"}}
    many = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
    }
    assert t.SamplingMessage.model_validate(single).to_wire() == single
    parsed = t.SamplingMessage.model_validate(many)
    assert isinstance(parsed.content, list)
    assert isinstance(parsed.content[0], t.ToolUseContent)
    assert parsed.to_wire() == many


def test_constants_are_written_even_when_defaulted_in_nested_data() -> None:
    tool = t.Tool.model_validate({"name": "x", "inputSchema": {"properties": {}}})
    assert tool.to_wire() == {"name": "x", "inputSchema": {"type": "object", "properties": {}}}
    field = t.UntitledMultiSelectEnumSchema.model_validate({"items": {"enum": ["a"]}})
    assert field.to_wire() == {"type": "array", "items": {"type": "string", "enum": ["a"]}}


def test_only_models_with_constants_pay_for_a_post_init_hook() -> None:
    from pydantic import BaseModel

    for name in t.__all__:
        cls = getattr(t, name)
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            hooked = cls.model_post_init is not BaseModel.model_post_init
            assert hooked == bool(cls._mcp_const), name


def test_null_read_off_the_wire_is_written_back() -> None:
    wire = {"type": "text", "text": "a", "annotations": None}
    assert t.TextContent.model_validate(wire).to_wire() == wire
    # ... while None passed by Python code means "leave it out".
    assert t.TextContent(text="a", annotations=None).to_wire() == {"type": "text", "text": "a"}
    assert t.Tool(name="x", inputSchema={}, outputSchema=None).to_wire() == {  # type: ignore[call-arg]
        "name": "x",
        "inputSchema": {"type": "object"},
    }
