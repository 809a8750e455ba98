"""Revision table and ``adapt_outgoing``: what goes out under an older revision is valid
for that revision and carries nothing it does not define."""

from __future__ import annotations

import copy
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from tests.types._spec import (
    LATEST,
    REVISIONS,
    definitions,
    method_map,
    schema_errors,
    undeclared,
)

import mcpkit.types as t
from mcpkit._exceptions import CapabilityError


def _load_generator() -> Any:
    path = Path(__file__).resolve().parents[2] / "scripts" / "gen_revisions.py"
    spec = importlib.util.spec_from_file_location("gen_revisions", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the revision table ------------------------------------------------------------


def test_constants() -> None:
    from mcpkit.types import _revisions as rv

    assert t.LATEST_PROTOCOL_VERSION == "2026-07-28"
    assert rv.LATEST_HANDSHAKE_VERSION == rv.NATIVE_PROTOCOL_VERSION == LATEST
    assert tuple(reversed(REVISIONS)) == rv.HANDSHAKE_PROTOCOL_VERSIONS
    assert ("2026-07-28", *rv.HANDSHAKE_PROTOCOL_VERSIONS) == t.SUPPORTED_PROTOCOL_VERSIONS
    assert t.DEFAULT_NEGOTIATED_VERSION == "2025-03-26"


def _schema_methods(rev: str, unions: tuple[str, ...]) -> set[str]:
    """Methods of the concrete types the schema's sender unions list."""
    defs = definitions(rev)
    out = set()
    for union in unions:
        for ref in defs[union]["anyOf"]:
            name = ref["$ref"].rsplit("/", 1)[-1]
            out.add(defs[name]["properties"]["method"]["const"])
    return out


@pytest.mark.parametrize("rev", REVISIONS)
def test_methods_for_matches_the_schema(rev: str) -> None:
    requests = _schema_methods(rev, ("ClientRequest", "ServerRequest"))
    notifications = _schema_methods(rev, ("ClientNotification", "ServerNotification"))
    assert t.request_methods_for(rev) == requests
    assert t.notification_methods_for(rev) == notifications
    assert t.methods_for(rev) == requests | notifications
    # Every concrete request/notification definition is reachable from the unions.
    assert set(method_map(rev)) == requests | notifications
    assert t.supports_batching(rev) is ("JSONRPCBatchRequest" in definitions(rev))


def test_batching_only_in_2025_03_26() -> None:
    assert [v for v in REVISIONS if t.supports_batching(v)] == ["2025-03-26"]


def test_generated_table_is_current() -> None:
    # Against the pinned schemas vendored with the tests, so any clone can check it.
    from tests._schema import SCHEMA_DIR

    assert _load_generator().main(["--check", "--spec", str(SCHEMA_DIR)]) == 0


def test_unknown_version_is_rejected() -> None:
    for fn in (t.methods_for, t.supports_batching):
        with pytest.raises(ValueError):
            fn("2099-01-01")
    with pytest.raises(ValueError):
        t.adapt_outgoing("ping", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2024-01-01")


# --- representative messages, built with the models ----------------------------------

Kind = Literal["request", "notification", "result"]


@dataclass
class Case:
    name: str
    kind: Kind
    method: str
    message: dict[str, Any]
    #: Revisions in which adapt_outgoing must refuse it (beyond those lacking the method).
    refused_in: tuple[str, ...] = ()
    #: For results of task-augmented requests.
    result_type: str | None = None


ANN = t.Annotations(audience=["user"], priority=0.5, last_modified="2025-01-12T15:00:58Z")
ICONS = [t.Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])]
META = {"example.com/k": "v"}
IMPL = t.Implementation(
    name="impl",
    title="Impl",
    version="1.0",
    description="does things",
    website_url="https://example.com",
    icons=ICONS,
)
TEXT = t.TextContent(text="hi", annotations=ANN, meta=META)
IMAGE = t.ImageContent(data="aGk=", mime_type="image/png", annotations=ANN, meta=META)
AUDIO = t.AudioContent(data="aGk=", mime_type="audio/wav", annotations=ANN, meta=META)
LINK = t.ResourceLink(
    uri="file:///a.txt",
    name="a",
    title="A",
    description="d",
    mime_type="text/plain",
    size=3,
    annotations=ANN,
    icons=ICONS,
    meta=META,
)
TEXT_CONTENTS = t.TextResourceContents(
    uri="file:///a.txt", text="abc", mime_type="text/plain", meta=META
)
BLOB_CONTENTS = t.BlobResourceContents(uri="file:///b.bin", blob="AAE=", meta=META)
EMBEDDED = t.EmbeddedResource(resource=TEXT_CONTENTS, annotations=ANN, meta=META)
OBJ = t.ObjectSchema(
    dialect="https://json-schema.org/draft/2020-12/schema",
    properties={"a": {"type": "number"}},
    required=["a"],
)
TOOL = t.Tool(
    name="add",
    title="Add",
    description="adds",
    input_schema=OBJ,
    output_schema=t.ObjectSchema(properties={"sum": {"type": "number"}}),
    annotations=t.ToolAnnotations(title="Add", read_only_hint=True, idempotent_hint=True),
    execution=t.ToolExecution(task_support="optional"),
    icons=ICONS,
    meta=META,
)
TASK = t.Task(
    task_id="t1",
    status="working",
    status_message="busy",
    created_at="2025-11-25T00:00:00Z",
    last_updated_at="2025-11-25T00:00:01Z",
    ttl=60000,
    poll_interval=500,
)
RMETA = t.RequestMeta(progress_token="p1")


def _req(model: Any, rid: int = 1, **params: Any) -> dict[str, Any]:
    wire: dict[str, Any] = model(id=rid, **params).to_wire()
    return wire


def _res(result: t.Result, rid: int = 1) -> dict[str, Any]:
    return t.JSONRPCResultResponse(id=rid, result=result).to_wire()


FORM_FIELDS: dict[str, Any] = {
    "name": t.StringSchema(title="Name", min_length=1, max_length=50, default="x"),
    "email": t.StringSchema(format="email", description="mail"),
    "age": t.NumberSchema(type="integer", minimum=0, maximum=150, default=30),
    "ok": t.BooleanSchema(title="OK", default=True),
    "color": t.UntitledSingleSelectEnumSchema(enum=["red", "green"], default="red"),
    "size": t.TitledSingleSelectEnumSchema(
        one_of=[
            t.TitledEnumOption(const="s", title="Small"),
            t.TitledEnumOption(const="l", title="Large"),
        ],
        default="s",
    ),
    "legacy": t.LegacyTitledEnumSchema(enum=["a", "b"], enum_names=["A", "B"], default="a"),
}
MULTI_FIELDS: dict[str, Any] = {
    "tags": t.UntitledMultiSelectEnumSchema(
        items=t.UntitledEnumItems(enum=["x", "y"]), min_items=1, default=["x"]
    ),
    "colors": t.TitledMultiSelectEnumSchema(
        items=t.TitledEnumItems(any_of=[t.TitledEnumOption(const="r", title="Red")])
    ),
}

ALL_CLIENT_CAPS = t.ClientCapabilities(
    experimental={"x": {}},
    roots=t.RootsCapability(list_changed=True),
    sampling=t.SamplingCapability(context={}, tools={}),
    elicitation=t.ElicitationCapability(form={}, url={}),
    tasks=t.ClientTasksCapability(
        list_={},
        cancel={},
        requests=t.ClientTaskRequestsCapability(
            sampling=t.TaskSamplingCapability(create_message={}),
            elicitation=t.TaskElicitationCapability(create={}),
        ),
    ),
)
ALL_SERVER_CAPS = t.ServerCapabilities(
    experimental={"x": {}},
    logging={},
    completions={},
    prompts=t.PromptsCapability(list_changed=True),
    resources=t.ResourcesCapability(subscribe=True, list_changed=True),
    tools=t.ToolsCapability(list_changed=True),
    tasks=t.ServerTasksCapability(
        list_={},
        cancel={},
        requests=t.ServerTaskRequestsCapability(tools=t.TaskToolsCapability(call={})),
    ),
)

SAMPLING_MESSAGES = [
    t.SamplingMessage(role="user", content=TEXT, meta=META),
    t.SamplingMessage(role="user", content=[IMAGE, AUDIO, TEXT]),
    t.SamplingMessage(
        role="assistant",
        content=[TEXT, t.ToolUseContent(id="c1", name="add", input={"a": 1}, meta=META)],
    ),
    t.SamplingMessage(
        role="user",
        content=[
            t.ToolResultContent(tool_use_id="c1", content=[TEXT], structured_content={"sum": 1})
        ],
    ),
    t.SamplingMessage(role="assistant", content=AUDIO),
]


def _cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # -- client requests
    add(Case("initialize", "request", "initialize", _req(
        t.InitializeRequest,
        params=t.InitializeRequestParams(
            protocol_version=LATEST, capabilities=ALL_CLIENT_CAPS, client_info=IMPL, meta=RMETA
        ),
    )))  # fmt: skip
    add(Case("initialize-url-only", "request", "initialize", _req(
        t.InitializeRequest,
        params=t.InitializeRequestParams(
            protocol_version=LATEST,
            capabilities=t.ClientCapabilities(elicitation=t.ElicitationCapability(url={})),
            client_info=t.Implementation(name="c", version="1"),
        ),
    )))  # fmt: skip
    add(Case("ping", "request", "ping", _req(t.PingRequest)))
    add(
        Case(
            "ping-meta", "request", "ping", _req(t.PingRequest, params=t.RequestParams(meta=RMETA))
        )
    )
    for model, method in (
        (t.ListResourcesRequest, "resources/list"),
        (t.ListResourceTemplatesRequest, "resources/templates/list"),
        (t.ListPromptsRequest, "prompts/list"),
        (t.ListToolsRequest, "tools/list"),
        (t.ListTasksRequest, "tasks/list"),
    ):
        add(
            Case(
                method, "request", method, _req(model, params=t.PaginatedRequestParams(cursor="c"))
            )
        )
    add(Case("resources/read", "request", "resources/read",
             _req(t.ReadResourceRequest, params=t.ReadResourceRequestParams(uri="file:///a.txt"))))  # fmt: skip
    add(Case("resources/subscribe", "request", "resources/subscribe",
             _req(t.SubscribeRequest, params=t.SubscribeRequestParams(uri="file:///a.txt"))))  # fmt: skip
    add(Case("resources/unsubscribe", "request", "resources/unsubscribe",
             _req(t.UnsubscribeRequest, params=t.UnsubscribeRequestParams(uri="file:///a.txt"))))  # fmt: skip
    add(Case("prompts/get", "request", "prompts/get", _req(
        t.GetPromptRequest, params=t.GetPromptRequestParams(name="p", arguments={"a": "1"})
    )))  # fmt: skip
    add(Case("tools/call", "request", "tools/call", _req(
        t.CallToolRequest,
        params=t.CallToolRequestParams(
            name="add", arguments={"a": 1}, task=t.TaskMetadata(ttl=1000), meta=RMETA
        ),
    )))  # fmt: skip
    add(Case("tasks/get", "request", "tasks/get",
             _req(t.GetTaskRequest, params=t.GetTaskRequestParams(task_id="t1"))))  # fmt: skip
    add(Case("tasks/result", "request", "tasks/result",
             _req(t.GetTaskPayloadRequest, params=t.GetTaskPayloadRequestParams(task_id="t1"))))  # fmt: skip
    add(Case("tasks/cancel", "request", "tasks/cancel",
             _req(t.CancelTaskRequest, params=t.CancelTaskRequestParams(task_id="t1"))))  # fmt: skip
    add(Case("logging/setLevel", "request", "logging/setLevel",
             _req(t.SetLevelRequest, params=t.SetLevelRequestParams(level="warning"))))  # fmt: skip
    add(Case("complete-prompt", "request", "completion/complete", _req(
        t.CompleteRequest,
        params=t.CompleteRequestParams(
            ref=t.PromptReference(name="p", title="P"),
            argument=t.CompletionArgument(name="a", value="x"),
            context=t.CompletionContext(arguments={"b": "y"}),
        ),
    )))  # fmt: skip
    add(Case("complete-resource", "request", "completion/complete", _req(
        t.CompleteRequest,
        params=t.CompleteRequestParams(
            ref=t.ResourceTemplateReference(uri="file:///{x}"),
            argument=t.CompletionArgument(name="x", value="a"),
        ),
    )))  # fmt: skip
    # -- server requests
    add(Case("sampling", "request", "sampling/createMessage", _req(
        t.CreateMessageRequest,
        params=t.CreateMessageRequestParams(
            messages=SAMPLING_MESSAGES,
            model_preferences=t.ModelPreferences(
                hints=[t.ModelHint(name="claude")], cost_priority=0.2, speed_priority=1,
                intelligence_priority=0.9,
            ),
            system_prompt="be brief",
            include_context="thisServer",
            temperature=0.5,
            max_tokens=100,
            stop_sequences=["END"],
            metadata={"k": 1},
            tools=[TOOL],
            tool_choice=t.ToolChoice(mode="auto"),
            task=t.TaskMetadata(ttl=5),
            meta=RMETA,
        ),
    )))  # fmt: skip
    add(Case("roots/list", "request", "roots/list", _req(t.ListRootsRequest)))
    add(Case("elicit-form", "request", "elicitation/create", _req(
        t.ElicitRequest,
        params=t.ElicitRequestFormParams(
            mode="form",
            message="Who are you?",
            requested_schema=t.RequestedSchema(
                dialect="https://json-schema.org/draft/2020-12/schema",
                properties=FORM_FIELDS,
                required=["name"],
            ),
            task=t.TaskMetadata(),
        ),
    )))  # fmt: skip
    add(Case("elicit-multi", "request", "elicitation/create", _req(
        t.ElicitRequest,
        params=t.ElicitRequestFormParams(
            message="Pick", requested_schema=t.RequestedSchema(properties=MULTI_FIELDS)
        ),
    ), refused_in=("2025-06-18",)))  # fmt: skip
    add(Case("elicit-url", "request", "elicitation/create", _req(
        t.ElicitRequest,
        params=t.ElicitRequestURLParams(
            message="Log in", elicitation_id="e1", url="https://example.com/login"
        ),
    ), refused_in=("2025-06-18",)))  # fmt: skip
    # -- notifications
    notifications: list[tuple[str, t.MCPModel]] = [
        ("cancelled", t.CancelledNotification(
            params=t.CancelledNotificationParams(request_id=3, reason="user")
        )),
        ("initialized", t.InitializedNotification()),
        ("progress", t.ProgressNotification(params=t.ProgressNotificationParams(
            progress_token="p1", progress=1, total=2.5, message="half"
        ))),
        ("message", t.LoggingMessageNotification(params=t.LoggingMessageNotificationParams(
            level="error", logger="db", data={"x": [1]}
        ))),
        ("resources/list_changed", t.ResourceListChangedNotification()),
        ("resources/updated", t.ResourceUpdatedNotification(
            params=t.ResourceUpdatedNotificationParams(uri="file:///a.txt")
        )),
        ("prompts/list_changed", t.PromptListChangedNotification()),
        ("tools/list_changed", t.ToolListChangedNotification()),
        ("roots/list_changed", t.RootsListChangedNotification()),
        ("tasks/status", t.TaskStatusNotification(
            params=t.TaskStatusNotificationParams(**TASK.model_dump())
        )),
        ("elicitation/complete", t.ElicitationCompleteNotification(
            params=t.ElicitationCompleteNotificationParams(elicitation_id="e1")
        )),
    ]  # fmt: skip
    for name, model in notifications:
        wire = model.to_wire()
        add(Case(name, "notification", wire["method"], wire))
    # -- results
    add(Case("initialize-result", "result", "initialize", _res(t.InitializeResult(
        protocol_version=LATEST, capabilities=ALL_SERVER_CAPS, server_info=IMPL,
        instructions="use it", meta=META,
    ))))  # fmt: skip
    for method in ("ping", "resources/subscribe", "resources/unsubscribe"):
        add(Case(f"{method}-result", "result", method, _res(t.Result())))
    add(Case("empty-result-meta", "result", "logging/setLevel", _res(t.Result(meta=META))))
    add(Case("tools/list-result", "result", "tools/list",
             _res(t.ListToolsResult(tools=[TOOL, TOOL], next_cursor="n"))))  # fmt: skip
    add(Case("tools/call-result", "result", "tools/call", _res(t.CallToolResult(
        content=[TEXT, IMAGE, AUDIO, LINK, EMBEDDED,
                 t.EmbeddedResource(resource=BLOB_CONTENTS)],
        structured_content={"sum": 3}, is_error=False,
    ))))  # fmt: skip
    add(Case("tools/call-task-result", "result", "tools/call",
             _res(t.CreateTaskResult(task=TASK)), result_type="CreateTaskResult",
             refused_in=("2024-11-05", "2025-03-26", "2025-06-18")))  # fmt: skip
    add(Case("prompts/list-result", "result", "prompts/list", _res(t.ListPromptsResult(prompts=[
        t.Prompt(name="p", title="P", description="d", icons=ICONS, meta=META, arguments=[
            t.PromptArgument(name="a", title="A", description="arg", required=True)
        ]),
    ]))))  # fmt: skip
    add(Case("prompts/get-result", "result", "prompts/get", _res(t.GetPromptResult(
        description="d",
        messages=[t.PromptMessage(role=r, content=b)  # type: ignore[arg-type]
                  for r, b in (("user", TEXT), ("assistant", AUDIO), ("user", LINK),
                               ("user", EMBEDDED), ("assistant", IMAGE))],
    ))))  # fmt: skip
    add(Case("resources/list-result", "result", "resources/list", _res(t.ListResourcesResult(
        resources=[t.Resource(
            uri="file:///a.txt", name="a", title="A", description="d", mime_type="text/plain",
            size=3, annotations=ANN, icons=ICONS, meta=META,
        )],
    ))))  # fmt: skip
    add(Case("resources/templates/list-result", "result", "resources/templates/list",
             _res(t.ListResourceTemplatesResult(resource_templates=[t.ResourceTemplate(
                 uri_template="file:///{p}", name="files", title="Files", description="d",
                 mime_type="text/plain", annotations=ANN, icons=ICONS, meta=META,
             )]))))  # fmt: skip
    add(Case("resources/read-result", "result", "resources/read",
             _res(t.ReadResourceResult(contents=[TEXT_CONTENTS, BLOB_CONTENTS]))))  # fmt: skip
    add(Case("complete-result", "result", "completion/complete", _res(t.CompleteResult(
        completion=t.Completion(values=["a", "b"], total=10, has_more=True)
    ))))  # fmt: skip
    add(Case("sampling-result", "result", "sampling/createMessage", _res(t.CreateMessageResult(
        role="assistant", content=TEXT, model="m", stop_reason="endTurn"
    ))))  # fmt: skip
    add(Case("sampling-result-one-in-list", "result", "sampling/createMessage",
             _res(t.CreateMessageResult(role="assistant", content=[IMAGE], model="m"))))  # fmt: skip
    add(Case("sampling-result-tools", "result", "sampling/createMessage", _res(
        t.CreateMessageResult(
            role="assistant", model="m", stop_reason="toolUse",
            content=[TEXT, t.ToolUseContent(id="c1", name="add", input={"a": 1})],
        )
    ), refused_in=("2024-11-05", "2025-03-26", "2025-06-18")))  # fmt: skip
    add(Case("sampling-result-audio", "result", "sampling/createMessage", _res(
        t.CreateMessageResult(role="assistant", content=AUDIO, model="m")
    ), refused_in=("2024-11-05",)))  # fmt: skip
    add(Case("roots/list-result", "result", "roots/list", _res(t.ListRootsResult(
        roots=[t.Root(uri="file:///home", name="home", meta=META), t.Root(uri="file:///tmp")]
    ))))  # fmt: skip
    add(Case("elicit-result", "result", "elicitation/create", _res(t.ElicitResult(
        action="accept", content={"name": "x", "age": 3, "ok": True, "tags": ["x"]}
    ))))  # fmt: skip
    add(Case("elicit-result-decline", "result", "elicitation/create",
             _res(t.ElicitResult(action="decline"))))  # fmt: skip
    add(Case("tasks/get-result", "result", "tasks/get",
             _res(t.GetTaskResult(**TASK.model_dump()))))  # fmt: skip
    add(Case("tasks/list-result", "result", "tasks/list", _res(t.ListTasksResult(tasks=[TASK]))))
    add(Case("tasks/cancel-result", "result", "tasks/cancel",
             _res(t.CancelTaskResult(**{**TASK.model_dump(), "status": "cancelled"}))))  # fmt: skip
    add(Case("tasks/result-result", "result", "tasks/result",
             _res(t.GetTaskPayloadResult.model_validate({"content": [], "isError": False}))))  # fmt: skip
    return c


CASES = _cases()
ENVELOPE_KEYS = {"request": {"jsonrpc", "id", "method", "params"},
                 "notification": {"jsonrpc", "method", "params"},
                 "result": {"jsonrpc", "id", "result"}}  # fmt: skip


def test_cases_cover_every_method() -> None:
    sent = {(c.kind, c.method) for c in CASES}
    for method in t.REQUEST_TYPES:
        assert ("request", method) in sent, method
        assert ("result", method) in sent, method
    for method in t.NOTIFICATION_TYPES:
        assert ("notification", method) in sent, method


def _result_definition(case: Case) -> str:
    name = case.result_type or t.RESULT_TYPES[case.method].__name__
    return "EmptyResult" if name == "Result" else name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cases_are_valid_latest_messages(case: Case) -> None:
    """Sanity: every case is a valid 2025-11-25 message before adapting."""
    _assert_fits(LATEST, case, case.message)


def _assert_fits(rev: str, case: Case, msg: dict[str, Any]) -> None:
    defs = definitions(rev)
    assert set(msg) <= ENVELOPE_KEYS[case.kind]
    if case.kind == "result":
        envelope = "JSONRPCResultResponse" if "JSONRPCResultResponse" in defs else "JSONRPCResponse"
        target, payload_schema, payload = _result_definition(case), None, msg["result"]
        errors = schema_errors(rev, envelope, msg) + schema_errors(rev, target, payload)
        payload_schema = {"$ref": f"#/x/{target}"}
    else:
        envelope = "JSONRPCRequest" if case.kind == "request" else "JSONRPCNotification"
        target = method_map(rev)[case.method]
        errors = schema_errors(rev, envelope, msg) + schema_errors(rev, target, msg)
        payload = msg.get("params", {})
        payload_schema = defs[target]["properties"].get("params", {})
    assert not errors, errors
    extra = list(undeclared(rev, payload_schema, payload))
    assert not extra, f"members {rev} does not define: {extra}"


# Results to methods a revision lacks cannot occur (nothing asked): not paired.
PAIRS = [
    pytest.param(case, rev, id=f"{case.name}-{rev}")
    for case in CASES
    for rev in REVISIONS
    if case.kind != "result" or case.method in t.methods_for(rev)
]


@pytest.mark.parametrize(("case", "rev"), PAIRS)
def test_adapted_message_fits_the_revision(case: Case, rev: str) -> None:
    before = copy.deepcopy(case.message)
    method = case.method if case.kind == "result" else None
    known = case.method in t.methods_for(rev)
    if (case.kind != "result" and not known) or rev in case.refused_in:
        with pytest.raises(t.NotInRevisionError):
            t.adapt_outgoing(method, case.message, rev)
        return
    out = t.adapt_outgoing(method, case.message, rev)
    assert case.message == before, "the input was modified"
    if rev == LATEST:
        assert out is case.message
    _assert_fits(rev, case, out)


# --- specific rules ---------------------------------------------------------------


def _case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def test_nothing_to_do_returns_the_same_object() -> None:
    plain_call = _req(t.CallToolRequest, params=t.CallToolRequestParams(name="x"))
    text_result = _res(t.CallToolResult(content=[t.TextContent(text="a")]))
    log = _case("message").message
    for rev in REVISIONS:
        assert t.adapt_outgoing(None, plain_call, rev) is plain_call
        assert t.adapt_outgoing("tools/call", text_result, rev) is text_result
        assert t.adapt_outgoing(None, log, rev) is log
        assert t.adapt_outgoing(None, _case("ping").message, rev) is _case("ping").message


def test_passes_through_what_it_does_not_know() -> None:
    custom = {"jsonrpc": "2.0", "id": 1, "method": "x-vendor/thing", "params": {"title": 1}}
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}
    anonymous = _case("tools/call-result").message
    for rev in REVISIONS:
        assert t.adapt_outgoing(None, custom, rev) is custom
        assert t.adapt_outgoing("tools/call", error, rev) is error
        assert t.adapt_outgoing(None, anonymous, rev) is anonymous


def test_unchanged_parts_are_shared_not_copied() -> None:
    msg = _case("tools/list-result").message
    out = t.adapt_outgoing("tools/list", msg, "2025-06-18")
    assert out is not msg
    assert out["result"]["tools"][0]["inputSchema"] is msg["result"]["tools"][0]["inputSchema"]
    assert "icons" not in out["result"]["tools"][0]
    assert "icons" in msg["result"]["tools"][0]


def test_content_blocks_per_revision() -> None:
    msg = _case("tools/call-result").message
    kinds = {
        rev: [b["type"] for b in t.adapt_outgoing("tools/call", msg, rev)["result"]["content"]]
        for rev in REVISIONS
    }
    assert kinds["2024-11-05"] == ["text", "image", "resource", "resource"]
    assert kinds["2025-03-26"] == ["text", "image", "audio", "resource", "resource"]
    assert kinds["2025-06-18"] == kinds[LATEST] == [
        "text", "image", "audio", "resource_link", "resource", "resource",
    ]  # fmt: skip
    old = t.adapt_outgoing("tools/call", msg, "2024-11-05")["result"]
    assert "structuredContent" not in old
    assert old["content"][0] == {
        "type": "text",
        "text": "hi",
        "annotations": {"audience": ["user"], "priority": 0.5},
    }


def test_prompt_messages_with_unknown_blocks_are_dropped() -> None:
    msg = _case("prompts/get-result").message
    roles = {
        rev: [
            m["content"]["type"]
            for m in t.adapt_outgoing("prompts/get", msg, rev)["result"]["messages"]
        ]
        for rev in REVISIONS
    }
    assert roles["2024-11-05"] == ["text", "resource", "image"]
    assert roles["2025-03-26"] == ["text", "audio", "resource", "image"]
    assert roles["2025-06-18"] == ["text", "audio", "resource_link", "resource", "image"]


def test_sampling_messages_are_flattened_before_2025_11_25() -> None:
    msg = _case("sampling").message
    out = t.adapt_outgoing(None, msg, "2025-06-18")["params"]
    assert [(m["role"], m["content"]["type"]) for m in out["messages"]] == [
        ("user", "text"),
        ("user", "image"),
        ("user", "audio"),
        ("user", "text"),
        ("assistant", "text"),
        ("assistant", "audio"),
    ]
    assert not {"tools", "toolChoice", "task"} & set(out)
    old = t.adapt_outgoing(None, msg, "2024-11-05")["params"]
    assert [m["content"]["type"] for m in old["messages"]] == ["text", "image", "text", "text"]
    assert (
        t.adapt_outgoing(None, msg, LATEST)["params"]["messages"][1]["content"][1]["type"]
        == "audio"
    )


def test_sampling_result_in_a_one_block_list_is_unwrapped() -> None:
    msg = _case("sampling-result-one-in-list").message
    out = t.adapt_outgoing("sampling/createMessage", msg, "2025-06-18")
    assert out["result"]["content"] == msg["result"]["content"][0]


def test_form_fields_for_2025_06_18() -> None:
    msg = _case("elicit-form").message
    out = t.adapt_outgoing(None, msg, "2025-06-18")["params"]
    assert "mode" not in out and "task" not in out
    schema = out["requestedSchema"]
    assert "$schema" not in schema
    props = schema["properties"]
    assert props["size"] == {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]}
    assert props["legacy"] == {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}
    assert props["ok"]["default"] is True  # booleans had a default already
    assert all("default" not in p for k, p in props.items() if k != "ok")


def test_elicit_result_drops_multi_select_answers() -> None:
    msg = _case("elicit-result").message
    out = t.adapt_outgoing("elicitation/create", msg, "2025-06-18")
    assert out["result"]["content"] == {"name": "x", "age": 3, "ok": True}


def test_capabilities_per_revision() -> None:
    def caps(case: str, rev: str, side: str) -> dict[str, Any]:
        msg = _case(case).message
        if side == "client":
            out: dict[str, Any] = t.adapt_outgoing(None, msg, rev)["params"]["capabilities"]
        else:
            out = t.adapt_outgoing("initialize", msg, rev)["result"]["capabilities"]
        return out

    assert set(caps("initialize", "2024-11-05", "client")) == {"experimental", "roots", "sampling"}
    assert caps("initialize", "2025-06-18", "client")["elicitation"] == {}
    assert caps("initialize", "2025-06-18", "client")["sampling"] == {}
    assert "elicitation" not in caps("initialize-url-only", "2025-06-18", "client")
    assert caps("initialize-url-only", LATEST, "client") == {"elicitation": {"url": {}}}
    assert "completions" not in caps("initialize-result", "2024-11-05", "server")
    assert "completions" in caps("initialize-result", "2025-03-26", "server")
    assert "tasks" not in caps("initialize-result", "2025-06-18", "server")
    info = t.adapt_outgoing("initialize", _case("initialize-result").message, "2025-03-26")
    assert info["result"]["serverInfo"] == {"name": "impl", "version": "1.0"}


def test_methods_missing_from_a_revision_are_refused() -> None:
    with pytest.raises(t.NotInRevisionError, match="tasks/get"):
        t.adapt_outgoing(None, _case("tasks/get").message, "2025-06-18")
    with pytest.raises(t.NotInRevisionError):
        t.adapt_outgoing(None, _case("elicit-form").message, "2025-03-26")
    with pytest.raises(t.NotInRevisionError):
        t.adapt_outgoing(None, _case("elicitation/complete").message, "2025-06-18")
    # It is also a CapabilityError, the family the session layer already handles.
    assert issubclass(t.NotInRevisionError, CapabilityError)


def test_params_and_results_sent_as_is_exactly_when_adapt_outgoing_would() -> None:
    # adapt_params / adapt_result answer the newer revisions from a cache: the same
    # outcome (the same object, or the same refusal) as the full adapt_outgoing path.
    from mcpkit.types._revisions import (
        _ALL_METHODS,
        NotInRevisionError,
        adapt_outgoing,
        adapt_params,
        adapt_result,
    )

    params = {"name": "x", "arguments": {}, "_meta": {"k": 1}}
    result = {"content": [], "_meta": {"k": 1}}
    for version in t.SUPPORTED_PROTOCOL_VERSIONS:
        for method in [*sorted(_ALL_METHODS), "tasks/get", "vendor/custom"]:
            try:
                full = adapt_outgoing(method, {"method": method, "params": params}, version)
            except NotInRevisionError:
                with pytest.raises(NotInRevisionError):
                    adapt_params(method, params, version)
            else:
                assert adapt_params(method, params, version) == full.get("params")
            try:
                expected = adapt_outgoing(method, {"result": result}, version)["result"]
            except NotInRevisionError:
                with pytest.raises(NotInRevisionError):
                    adapt_result(method, result, version)
            else:
                assert adapt_result(method, result, version) == expected
