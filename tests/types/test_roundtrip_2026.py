"""2026-07-28: the JSON examples of the spec prose round-trip exactly through the models,
messages built with the models are valid 2026-07-28 messages (JSON Schema, and no member
the schema does not declare), and the shared models still take the 2025-11-25 shapes."""

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
from tests.types._spec import (
    FENCE,
    LATEST,
    STATELESS,
    definitions,
    method_map,
    parse_block,
    prose_dir,
    same_json,
    schema_errors,
    undeclared,
)

import mcpkit.types as t

REV = STATELESS
DEFS = definitions(REV)
METHODS = method_map(REV)
PROSE = prose_dir(REV)


def _result_message(result_type: str) -> Roundtrip:
    """A result response: the generic envelope with the typed payload, and the typed
    ``*ResultResponse`` of the method where the schema defines one."""
    envelope = model_roundtrip(t.JSONRPCResultResponse)
    payload = by_name(result_type)

    def generic(value: Any) -> Any:
        return {**envelope(value), "result": payload(value["result"])}

    typed = [by_name(n) for n in _typed_responses(result_type)]
    return both(generic, *typed)


def _typed_responses(result_type: str) -> list[str]:
    if result_type == "InputRequiredResult":
        return ["CallToolResultResponse", "GetPromptResultResponse", "ReadResourceResultResponse"]
    name = result_type + "Response"
    return [name] if name in DEFS else []


#: Result answering a request of the method (2026-07-28 methods).
_RESULTS = {method: name.removesuffix("Request") + "Result" for method, name in METHODS.items()}
#: A result answering a request not shown with it: told by a member only it has.
_RESULT_KEYS = (
    ("supportedVersions", "DiscoverResult"),
    ("content", "CallToolResult"),
    ("tools", "ListToolsResult"),
    ("prompts", "ListPromptsResult"),
    ("resources", "ListResourcesResult"),
    ("resourceTemplates", "ListResourceTemplatesResult"),
    ("contents", "ReadResourceResult"),
    ("messages", "GetPromptResult"),
    ("completion", "CompleteResult"),
)
_ERRORS = {
    t.HEADER_MISMATCH: "HeaderMismatchError",
    t.MISSING_REQUIRED_CLIENT_CAPABILITY: "MissingRequiredClientCapabilityError",
    t.UNSUPPORTED_PROTOCOL_VERSION: "UnsupportedProtocolVersionError",
}
_CLIENT_CAPS = {"roots", "sampling", "elicitation"}


def _input_response(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if "action" in value:
        return "ElicitResult"
    if "roots" in value:
        return "ListRootsResult"
    if {"role", "content", "model"} <= set(value):
        return "CreateMessageResult"
    return None


class Classifier:
    """Maps one parsed JSON value of a prose page to the definition it is an example of."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.requests: dict[str, dict[str, Any]] = {}

    def __call__(self, value: Any) -> str | None:
        if isinstance(value, list) and value:
            kinds = {self(item) for item in value}
            kind = kinds.pop() if len(kinds) == 1 else None
            return f"list:{kind}" if kind and kind in DEFS else None
        if not isinstance(value, dict) or not value:
            return None
        if value.get("jsonrpc") == "2.0":
            return self.message(value)
        return self.fragment(value)

    def message(self, value: dict[str, Any]) -> str | None:
        method = value.get("method")
        if isinstance(method, str):
            if "id" in value:
                self.requests[json.dumps(value["id"])] = value
            name = METHODS.get(method)
            if name is None:  # a method MCP does not define: the generic envelope
                return "JSONRPCRequest" if "id" in value else "JSONRPCNotification"
            return name
        if isinstance(value.get("error"), dict):
            return _ERRORS.get(value["error"].get("code"), "JSONRPCErrorResponse")
        result = value.get("result")
        if not isinstance(result, dict):
            return None
        if result.get("resultType") == "input_required":
            return "result:InputRequiredResult"
        request = self.requests.get(json.dumps(value.get("id")))
        if request is not None and request["method"] in _RESULTS:
            return "result:" + _RESULTS[request["method"]]
        keys = set(result) - {"resultType", "_meta"}
        if not keys and t.SUBSCRIPTION_ID_META_KEY in result.get("_meta", {}):
            return "result:SubscriptionsListenResult"
        for key, name in _RESULT_KEYS:
            if key in result:
                return "result:" + name
        return None

    def fragment(self, value: dict[str, Any]) -> str | None:
        keys = set(value)
        kind = value.get("type")
        if keys == {"capabilities"} and isinstance(value["capabilities"], dict):
            client = "/client/" in self.page or set(value["capabilities"]) & _CLIENT_CAPS
            return "capabilities:" + ("ClientCapabilities" if client else "ServerCapabilities")
        if isinstance(value.get("method"), str):
            return "InputRequest"  # bare: an entry of inputRequests
        if all(isinstance(v, dict) and isinstance(v.get("method"), str) for v in value.values()):
            return "InputRequests"
        if all(_input_response(v) for v in value.values()):
            return "InputResponses"
        if (answer := _input_response(value)) is not None:
            return answer
        if keys == {"_meta"}:
            return "RequestParams"
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
        if kind == "object" and "properties" in keys:
            return "ObjectSchema"  # a tool's input schema (JSON Schema dialects)
        return None


def _roundtrip_for(definition: str) -> Roundtrip:
    if definition.startswith("result:"):
        return _result_message(definition.removeprefix("result:"))
    if definition.startswith("list:"):
        return alias_roundtrip(list[getattr(t, definition.removeprefix("list:"))])  # type: ignore[misc]
    if definition.startswith("capabilities:"):
        caps = by_name(definition.removeprefix("capabilities:"))
        return lambda v: {"capabilities": caps(v["capabilities"])}
    run = by_name(definition)
    if definition in METHODS.values():
        # A concrete message also goes through the generic envelope union.
        return both(run, alias_roundtrip(t.JSONRPCMessage))
    return run


def _prose_blocks() -> Iterator[tuple[str, Any, Classifier]]:
    for path in sorted(PROSE.rglob("*.mdx")):
        text = path.read_text(encoding="utf-8")
        classify = Classifier(str(path.relative_to(PROSE)))
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield f"{path.relative_to(PROSE)}:{line}", parse_block(match.group(1)), classify


def _collect() -> tuple[list[Example], list[str]]:
    examples: list[Example] = []
    skipped: list[str] = []
    for source, value, classify in _prose_blocks():
        definition = classify(value) if value is not None else None
        if definition is None:
            skipped.append(source)
            continue
        examples.append(Example(source, value, definition, _roundtrip_for(definition)))
    return examples, skipped


EXAMPLES, SKIPPED = _collect()
BY_SOURCE = {e.source: e for e in EXAMPLES}

#: Examples that show what 2026-07-28 changed, with what they must be classified as.
KEY_EXAMPLES = {
    "server/discover.mdx:15": "DiscoverRequest",
    "server/discover.mdx:38": "result:DiscoverResult",
    "basic/patterns/mrtr.mdx:64": "InputRequests",
    "basic/patterns/mrtr.mdx:104": "InputResponses",
    "basic/patterns/mrtr.mdx:132": "result:InputRequiredResult",
    "server/tools.mdx:182": "result:InputRequiredResult",
    "server/tools.mdx:211": "CallToolRequest",
    "basic/patterns/subscriptions.mdx:18": "SubscriptionsListenRequest",
    "basic/patterns/subscriptions.mdx:64": "SubscriptionsAcknowledgedNotification",
    "basic/patterns/subscriptions.mdx:94": "ResourceUpdatedNotification",
    "basic/patterns/subscriptions.mdx:138": "result:SubscriptionsListenResult",
    "basic/versioning.mdx:54": "UnsupportedProtocolVersionError",
    "basic/versioning.mdx:92": "capabilities:ClientCapabilities",
    "basic/transports/streamable-http.mdx:611": "HeaderMismatchError",
    "client/elicitation.mdx:357": "InputRequest",
    "client/roots.mdx:62": "InputRequest",
    "server/tools.mdx:580": "Tool",
    "server/tools.mdx:606": "result:CallToolResult",
}


def _methods(value: Any) -> Iterator[str]:
    """Methods of the messages and input requests in an example."""
    if isinstance(value, dict):
        if isinstance(value.get("method"), str):
            yield value["method"]
        for item in value.values():
            yield from _methods(item)
    elif isinstance(value, list):
        for item in value:
            yield from _methods(item)


def test_enough_examples_are_classified() -> None:
    # The prose pages have ~120 ```json blocks; some are not MCP (OAuth metadata) or not
    # JSON (ellipses, trailing commas). 111 were classified when this was written.
    assert len(EXAMPLES) >= 105, (len(EXAMPLES), SKIPPED)
    assert len(EXAMPLES) >= 5 * len(SKIPPED), (len(EXAMPLES), SKIPPED)
    for source, definition in KEY_EXAMPLES.items():
        assert source in BY_SOURCE, (source, SKIPPED)
        assert BY_SOURCE[source].definition == definition, source
    # Every 2026-07-28 method appears in some example (input requests included).
    seen = {m for e in EXAMPLES for m in _methods(e.value)}
    assert set(METHODS) <= seen, sorted(set(METHODS) - seen)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.source}={e.definition}")
def test_example_roundtrips_exactly(example: Example) -> None:
    out = example.roundtrip(example.value)
    assert same_json(out, example.value), (out, example.value)


def _schema_targets(definition: str, value: Any) -> list[tuple[str, Any]]:
    """(definition, instance) pairs of the 2026-07-28 schema an example must satisfy."""
    if definition.startswith("result:"):
        name = definition.removeprefix("result:")
        typed = _typed_responses(name)
        pairs = [(typed[0], value)] if typed else [("JSONRPCResultResponse", value)]
        return [*pairs, (name, value["result"])]
    return [(definition, value)]


#: What the prose leaves out of its request examples: the request ``_meta`` (protocol
#: version, client capabilities) that 2026-07-28 requires on every request.
_SHORTHAND = re.compile(
    r"'(_meta|io\.modelcontextprotocol/(protocolVersion|clientCapabilities))'"
    r" is a required property$"
)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.source}={e.definition}")
def test_examples_are_valid_2026_messages(example: Example) -> None:
    """What the models round-trip are real 2026-07-28 messages: each example satisfies the
    schema of what it was classified as, but for the request ``_meta`` the prose omits."""
    definition = example.definition
    if definition.startswith("list:"):
        name = definition.removeprefix("list:")
        targets = [(name, item) for item in example.value]
    elif definition.startswith("capabilities:"):
        targets = [(definition.removeprefix("capabilities:"), example.value["capabilities"])]
    else:
        targets = _schema_targets(definition, example.value)
    for name, instance in targets:
        if name not in DEFS:
            continue  # ObjectSchema: inline in Tool
        errors = [e for e in schema_errors(REV, name, instance) if not _SHORTHAND.search(e)]
        assert not errors, errors


# --- messages built with the models ---------------------------------------------------

CLIENT = t.Implementation(name="example-client", version="1.0.0")
SERVER = t.Implementation(name="example-server", version="2.0.0")
RMETA = t.RequestMetaObject(
    protocol_version=REV,
    client_capabilities=t.ClientCapabilities(
        elicitation=t.ElicitationCapability(form={}, url={}),
        extensions={"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}},
    ),
    client_info=CLIENT,
    log_level="warning",
    progress_token="p1",
)
SERVER_META = t.ResultMetaObject(server_info=SERVER).to_wire()
TEXT = t.TextContent(text="hi")
INPUT_REQUESTS: dict[str, Any] = {
    "login": t.ElicitRequest(
        params=t.ElicitRequestFormParams(
            mode="form",
            message="Your login?",
            requested_schema=t.RequestedSchema(
                properties={"name": t.StringSchema(title="Name")}, required=["name"]
            ),
        )
    ),
    "key": t.ElicitRequest(
        params=t.ElicitRequestURLParams(message="Set a key", url="https://example.com/key")
    ),
    "roots": t.ListRootsRequest(),
    "capital": t.CreateMessageRequest(
        params=t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=TEXT)],
            max_tokens=50,
            tools=[t.Tool(name="lookup", input_schema=t.ObjectSchema())],
        )
    ),
}
INPUT_RESPONSES: dict[str, Any] = {
    "login": t.ElicitResult(action="accept", content={"name": "octocat"}),
    "key": t.ElicitResult(action="accept"),
    "roots": t.ListRootsResult(roots=[t.Root(uri="file:///work", name="work")]),
    "capital": t.CreateMessageResult(role="assistant", content=TEXT, model="m"),
}
CACHE: dict[str, Any] = {"ttl_ms": 60_000, "cache_scope": "private", "result_type": "complete"}
LISTEN = t.SubscriptionFilter(
    tools_list_changed=True, resource_subscriptions=["file:///work/notes.txt"]
)

#: (definition of the 2026-07-28 schema, message built with the models).
BUILT: list[tuple[str, t.MCPModel]] = [
    ("DiscoverRequest", t.DiscoverRequest(id="d1", params=t.RequestParams(meta=RMETA))),
    ("DiscoverResultResponse", t.DiscoverResultResponse(id="d1", result=t.DiscoverResult(
        supported_versions=[REV, LATEST],
        capabilities=t.ServerCapabilities(
            tools=t.ToolsCapability(list_changed=True), extensions={"io.example/x": {}}
        ),
        instructions="Weather tools.",
        ttl_ms=3_600_000,
        cache_scope="public",
        meta=SERVER_META,
    ))),
    ("CallToolRequest", t.CallToolRequest(id=2, params=t.CallToolRequestParams(
        name="weather", arguments={"city": "Paris"}, meta=RMETA,
        input_responses=INPUT_RESPONSES, request_state="opaque",
    ))),
    ("CallToolResultResponse", t.CallToolResultResponse(id=2, result=t.InputRequiredResult(
        input_requests=INPUT_REQUESTS, request_state="opaque", meta=SERVER_META
    ))),
    ("CallToolResultResponse", t.CallToolResultResponse(id=2, result=t.CallToolResult(
        content=[TEXT], structured_content=[{"temp": 18.5}, None], result_type="complete"
    ))),
    ("GetPromptRequest", t.GetPromptRequest(id=3, params=t.GetPromptRequestParams(
        name="review", meta=RMETA, request_state="s"
    ))),
    ("GetPromptResultResponse", t.GetPromptResultResponse(id=3, result=t.GetPromptResult(
        messages=[t.PromptMessage(role="user", content=TEXT)], result_type="complete"
    ))),
    ("ReadResourceRequest", t.ReadResourceRequest(id=4, params=t.ReadResourceRequestParams(
        uri="file:///a", meta=RMETA, input_responses={"roots": INPUT_RESPONSES["roots"]}
    ))),
    ("ReadResourceResultResponse", t.ReadResourceResultResponse(
        id=4, result=t.InputRequiredResult(request_state="only state")
    )),
    ("ReadResourceResultResponse", t.ReadResourceResultResponse(id=4, result=t.ReadResourceResult(
        contents=[t.TextResourceContents(uri="file:///a", text="a")], **CACHE
    ))),
    ("ListToolsRequest", t.ListToolsRequest(
        id=5, params=t.PaginatedRequestParams(meta=RMETA, cursor="c")
    )),
    ("ListToolsResultResponse", t.ListToolsResultResponse(id=5, result=t.ListToolsResult(
        tools=[t.Tool(
            name="list_users",
            input_schema=t.ObjectSchema(properties={}, additionalProperties=False),
            output_schema=t.ToolSchema(type="array", items={"type": "string"}),
        )],
        next_cursor="n", **CACHE,
    ))),
    ("ListPromptsResultResponse", t.ListPromptsResultResponse(id=6, result=t.ListPromptsResult(
        prompts=[t.Prompt(name="review")], **CACHE
    ))),
    ("ListResourcesResultResponse", t.ListResourcesResultResponse(
        id=7, result=t.ListResourcesResult(resources=[t.Resource(uri="file:///a", name="a")], **CACHE)
    )),
    ("ListResourceTemplatesResultResponse", t.ListResourceTemplatesResultResponse(
        id=8, result=t.ListResourceTemplatesResult(
            resource_templates=[t.ResourceTemplate(uri_template="file:///{p}", name="files")],
            **CACHE,
        )
    )),
    ("CompleteResultResponse", t.CompleteResultResponse(id=9, result=t.CompleteResult(
        completion=t.Completion(values=["py"]), result_type="complete"
    ))),
    ("SubscriptionsListenRequest", t.SubscriptionsListenRequest(
        id=10, params=t.SubscriptionsListenRequestParams(meta=RMETA, notifications=LISTEN)
    )),
    ("SubscriptionsAcknowledgedNotification", t.SubscriptionsAcknowledgedNotification(
        params=t.SubscriptionsAcknowledgedNotificationParams(
            notifications=LISTEN,
            meta=t.NotificationMetaObject(subscription_id=10).to_wire(),
        )
    )),
    ("ResourceUpdatedNotification", t.ResourceUpdatedNotification(
        params=t.ResourceUpdatedNotificationParams(
            uri="file:///work/notes.txt",
            meta=t.NotificationMetaObject(subscription_id=10).to_wire(),
        )
    )),
    ("SubscriptionsListenResultResponse", t.SubscriptionsListenResultResponse(
        id=10, result=t.SubscriptionsListenResult(
            meta=t.SubscriptionsListenResultMetaObject(subscription_id=10, server_info=SERVER).to_wire()
        )
    )),
    ("CancelledNotification", t.CancelledNotification(
        params=t.CancelledNotificationParams(request_id=2, reason="user")
    )),
    ("HeaderMismatchError", t.HeaderMismatchError(
        id=1, error=t.HeaderMismatchErrorDetail(message="Mcp-Name does not match the body")
    )),
    ("MissingRequiredClientCapabilityError", t.MissingRequiredClientCapabilityError(
        id=1, error=t.MissingRequiredClientCapabilityErrorDetail(
            message="needs sampling",
            data=t.MissingRequiredClientCapabilityErrorData(
                required_capabilities=t.ClientCapabilities(sampling=t.SamplingCapability())
            ),
        ),
    )),
    ("UnsupportedProtocolVersionError", t.UnsupportedProtocolVersionError(
        error=t.UnsupportedProtocolVersionErrorDetail(
            message="Unsupported protocol version",
            data=t.UnsupportedProtocolVersionErrorData(requested="1999-01-01", supported=[REV]),
        ),
    )),
    ("ParseError", t.ParseError(message="Parse error")),
    ("InvalidRequestError", t.InvalidRequestError(message="Invalid request")),
    ("MethodNotFoundError", t.MethodNotFoundError(message="Method not found", data="ping")),
    ("InvalidParamsError", t.InvalidParamsError(message="Resource not found", data={"uri": "x"})),
    ("InternalError", t.InternalError(message="Internal error")),
    ("RequestMetaObject", RMETA),
    ("InputResponseRequestParams", t.InputResponseRequestParams(
        meta=RMETA, input_responses=INPUT_RESPONSES, request_state="s"
    )),
    ("CacheableResult", t.CacheableResult(ttl_ms=0, cache_scope="public")),
]  # fmt: skip


@pytest.mark.parametrize(("definition", "model"), BUILT, ids=[d for d, _ in BUILT])
def test_built_messages_are_valid_2026_messages(definition: str, model: t.MCPModel) -> None:
    wire = model.to_wire()
    assert not schema_errors(REV, definition, wire)
    extra = list(undeclared(REV, DEFS[definition], wire))
    assert not extra, f"members {REV} does not define: {extra}"
    # ... and it reads back as the same value.
    assert same_json(type(model).model_validate(wire).to_wire(), wire)
    assert same_json(json.loads(model.to_json()), wire)


def test_input_requests_are_bare_and_requests_sent_with_an_id_are_json_rpc() -> None:
    bare = t.CreateMessageRequest(params=t.CreateMessageRequestParams(messages=[], max_tokens=1))
    assert bare.to_wire() == {
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 1},
    }
    assert t.ListRootsRequest().to_wire() == {"method": "roots/list"}
    sent = t.ListRootsRequest(id=7)
    assert sent.to_wire() == {"jsonrpc": "2.0", "id": 7, "method": "roots/list"}
    assert not schema_errors(LATEST, "ListRootsRequest", sent.to_wire())
    # Validation never adds what the message lacks.
    odd = {"id": 1, "method": "roots/list"}
    assert t.ListRootsRequest.model_validate(odd).to_wire() == odd


def test_result_type_and_cache_hints_are_written() -> None:
    assert t.InputRequiredResult(request_state="s").to_wire() == {
        "resultType": "input_required",
        "requestState": "s",
    }
    discover = t.DiscoverResult(
        supported_versions=[REV],
        capabilities=t.ServerCapabilities(),
        ttl_ms=0,
        cache_scope="public",
    )
    assert discover.to_wire() == {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "public",
        "supportedVersions": [REV],
        "capabilities": {},
    }
    listen = t.SubscriptionsListenResult(meta={t.SUBSCRIPTION_ID_META_KEY: 3})
    assert listen.to_wire() == {"_meta": {t.SUBSCRIPTION_ID_META_KEY: 3}, "resultType": "complete"}


def test_meta_objects_read_the_reserved_keys() -> None:
    params = t.CallToolRequestParams.model_validate(
        {"name": "x", "_meta": RMETA.to_wire() | {"com.example/trace": "t1"}}
    )
    assert params.meta is not None
    meta = t.RequestMetaObject.model_validate(params.meta.to_wire())
    assert meta.protocol_version == REV and meta.log_level == "warning"
    assert meta.client_info == CLIENT and meta.progress_token == "p1"
    assert meta.client_capabilities.extensions == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}
    }
    assert (meta.model_extra or {}) == {"com.example/trace": "t1"}
    # A RequestMetaObject given as the meta of any params is written in full.
    wire = t.PaginatedRequestParams(meta=meta).to_wire()["_meta"]
    assert wire[t.PROTOCOL_VERSION_META_KEY] == REV and wire["com.example/trace"] == "t1"
    result = t.ListToolsResult.model_validate(
        {
            "tools": [],
            "_meta": SERVER_META,
            "resultType": "complete",
            "ttlMs": 5,
            "cacheScope": "public",
        }
    )
    assert t.ResultMetaObject.model_validate(result.meta).server_info == SERVER
    assert (result.ttl_ms, result.cache_scope, result.result_type) == (5, "public", "complete")


def test_unions_tell_their_members_apart() -> None:
    responses: TypeAdapter[Any] = TypeAdapter(t.InputResponses)
    parsed = responses.validate_python({k: v.to_wire() for k, v in INPUT_RESPONSES.items()})
    assert {k: type(v) for k, v in parsed.items()} == {
        k: type(v) for k, v in INPUT_RESPONSES.items()
    }
    requests: TypeAdapter[Any] = TypeAdapter(t.InputRequests)
    parsed = requests.validate_python({k: v.to_wire() for k, v in INPUT_REQUESTS.items()})
    assert {k: type(v) for k, v in parsed.items()} == {
        k: type(v) for k, v in INPUT_REQUESTS.items()
    }
    assert isinstance(parsed["key"].params, t.ElicitRequestURLParams)
    assert parsed["key"].params.elicitation_id == ""
    # resultType decides between the method's result and an InputRequiredResult.
    call = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete"}}
    assert isinstance(t.CallToolResultResponse.model_validate(call).result, t.CallToolResult)
    old = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}  # 2025-11-25: no resultType
    assert isinstance(t.CallToolResultResponse.model_validate(old).result, t.CallToolResult)
    ask = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "requestState": "s"},
    }
    assert isinstance(t.CallToolResultResponse.model_validate(ask).result, t.InputRequiredResult)
    results: TypeAdapter[Any] = TypeAdapter(t.ServerResult)
    assert isinstance(results.validate_python(ask["result"]), t.InputRequiredResult)
    requests_: TypeAdapter[Any] = TypeAdapter(t.ClientRequest)
    discover = t.DiscoverRequest(id=1, params=t.RequestParams(meta=RMETA)).to_wire()
    assert isinstance(requests_.validate_python(discover), t.DiscoverRequest)


def test_json_values() -> None:
    value = {"a": [1, 2.5, True, None, "s", {"b": []}]}
    adapter: TypeAdapter[Any] = TypeAdapter(t.JSONValue)
    assert same_json(adapter.dump_python(adapter.validate_python(value)), value)
    assert same_json(TypeAdapter(t.JSONObject).validate_python(value), value)
    assert TypeAdapter(t.JSONArray).validate_python([1, "x"]) == [1, "x"]
    with pytest.raises(ValidationError):
        TypeAdapter(t.JSONObject).validate_python([1])


@pytest.mark.parametrize(
    ("model", "value"),
    [
        (t.InputRequiredResult, {"resultType": "input_required"}),  # asks for nothing
        (t.InputRequiredResult, {"resultType": "complete", "requestState": "s"}),
        (t.DiscoverResult, {"supportedVersions": [], "capabilities": {}, "ttlMs": 1}),
        (t.CacheableResult, {"ttlMs": -1, "cacheScope": "public"}),
        (t.ListToolsResult, {"tools": [], "cacheScope": "shared"}),
        (t.RequestMetaObject, {"io.modelcontextprotocol/clientCapabilities": {}}),
        (t.RequestMetaObject, {"io.modelcontextprotocol/protocolVersion": REV}),
        (t.RequestMetaObject, {
            "io.modelcontextprotocol/protocolVersion": REV,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "verbose",
        }),
        (t.SubscriptionsListenRequestParams, {"notifications": {}}),  # no _meta
        (t.SubscriptionsListenResult, {"resultType": "complete"}),  # no _meta
        (t.SubscriptionsListenResultMetaObject, {}),
        (t.UnsupportedProtocolVersionErrorDetail, {"code": -32022, "message": "m"}),
        (t.HeaderMismatchErrorDetail, {"code": -32021, "message": "m"}),
        (t.ParseError, {"code": -32600, "message": "m"}),
        (t.CallToolRequestParams, {"name": "x", "inputResponses": {"k": {"action": "maybe"}}}),
    ],
)  # fmt: skip
def test_invalid_values_are_rejected(model: type[t.MCPModel], value: Any) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(value)


# --- the 2025-11-25 shapes of the changed definitions ---------------------------------

#: (definition, 2025-11-25 message) for shared definitions whose shape 2026-07-28 changed.
OLD_SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("ElicitRequest", {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
        "mode": "url", "message": "m", "elicitationId": "e1", "url": "https://x",
        "task": {"ttl": 5}, "_meta": {"progressToken": 1},
    }}),
    ("CreateMessageRequest", {"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage",
     "params": {"messages": [], "maxTokens": 3, "task": {}}}),
    ("ListRootsRequest", {"jsonrpc": "2.0", "id": "r", "method": "roots/list"}),
    ("CallToolRequest", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "x", "task": {"ttl": 1}}}),
    ("CallToolResult", {"content": [], "structuredContent": {"a": 1}, "isError": False}),
    ("ListToolsRequest", {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    ("ListToolsResult", {"tools": [{
        "name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {}, "required": []},
        "execution": {"taskSupport": "optional"},
    }], "nextCursor": "n", "_meta": {"k": 1}}),
    ("ReadResourceResult", {"contents": [{"uri": "file:///a", "text": "a"}]}),
    ("ClientCapabilities", {"roots": {"listChanged": True}, "tasks": {"list": {}, "cancel": {}}}),
    ("ServerCapabilities", {"logging": {}, "tasks": {"requests": {"tools": {"call": {}}}}}),
    ("CancelledNotification", {"jsonrpc": "2.0", "method": "notifications/cancelled",
     "params": {"reason": "no id: 2025-11-25 allows it"}}),
    ("ElicitResult", {"action": "decline", "_meta": {"k": 1}}),
]  # fmt: skip


@pytest.mark.parametrize(("definition", "value"), OLD_SHAPES, ids=[d for d, _ in OLD_SHAPES])
def test_2025_shapes_still_validate_and_roundtrip(definition: str, value: dict[str, Any]) -> None:
    assert not schema_errors(LATEST, definition, value)
    wire = getattr(t, definition).model_validate(value).to_wire()
    assert same_json(wire, value)


def test_2025_construction_is_unchanged() -> None:
    """Python code written for 2025-11-25 builds the same messages as before."""
    url = t.ElicitRequestURLParams(message="m", elicitation_id="e1", url="https://x")
    assert url.to_wire() == {
        "mode": "url",
        "message": "m",
        "elicitationId": "e1",
        "url": "https://x",
    }
    elicit = t.ElicitRequest(id=1, params=url).to_wire()
    assert elicit["jsonrpc"] == "2.0" and not schema_errors(LATEST, "ElicitRequest", elicit)
    tool = t.Tool(
        name="x", input_schema=t.ObjectSchema(), output_schema=t.ObjectSchema(properties={})
    )
    assert tool.to_wire() == {
        "name": "x",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {}},
    }
    result = t.CallToolResult(content=[], structured_content=None)
    assert result.to_wire() == {"content": []}
    listing = t.ListToolsResult(tools=[tool]).to_wire()
    assert set(listing) == {"tools"} and not schema_errors(LATEST, "ListToolsResult", listing)
