"""Validate JSON-RPC / MCP messages against the official JSON Schemas, in tests.

* :func:`validator` / :func:`method_map` / :func:`result_type`: the schemas of each revision.
* :func:`validate_message`: one message (or a 2025-03-26 batch) from a given sender; raises
  :class:`AssertionError` listing every problem. :func:`message_errors` returns the list.
* :class:`WireRecorder`: wraps a transport, records everything sent and received, and
  :meth:`WireRecorder.check` validates the whole exchange (request/response pairing, the
  negotiated revision, the result type of each response).

The schemas cannot express everything the prose requires; these checks are added:
request ids are strings or integers (never null, bool or float), notifications carry no
``id``, a response has ``result`` XOR ``error``, ``jsonrpc`` is ``"2.0"``, a request or
notification uses a method its sender may send in that revision, ``EmptyResult`` responses
(ping, logging/setLevel, resources/(un)subscribe) carry nothing but ``_meta``, and responses
answer a request the other side sent, once. Error responses may have a null or missing ``id``
(the request's id could not be read), in every revision.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import anyio
import orjson
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.validators import validator_for

#: The pinned spec (``schema/<rev>.json``, prose under ``<rev>/``), vendored in tests/spec so
#: the suite runs in any clone. Override with ``MCPKIT_SPEC_DIR``.
SPEC_DIR = Path(os.environ.get("MCPKIT_SPEC_DIR") or Path(__file__).resolve().parent / "spec")
SCHEMA_DIR = SPEC_DIR / "schema"
#: The revisions mcpkit speaks, oldest first.
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Revisions without a handshake: each request names its revision in ``_meta``.
STATELESS_REVISIONS = frozenset({"2026-07-28"})
#: The newest revision opened with ``initialize`` (what a recording assumes by default).
LATEST = "2025-11-25"
#: JSON-RPC batches exist only in this revision (added 2025-03-26, removed 2025-06-18).
BATCH_REVISIONS = frozenset({"2025-03-26"})
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
#: Messages the prose allows where the schema's sender unions forget them: at 2026-07-28
#: a stdio client cancels with notifications/cancelled (basic/patterns/cancellation.mdx),
#: while the schema's ClientNotification union is empty.
_SCHEMA_GAPS = frozenset({("2026-07-28", "client", "notifications/cancelled")})

Sender = Literal["client", "server"]
Kind = Literal["request", "notification", "result", "error", "batch"]

#: Request method -> the definition its successful ``result`` must match.
RESULT_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "initialize": "InitializeResult",
        "ping": "EmptyResult",
        "logging/setLevel": "EmptyResult",
        "resources/subscribe": "EmptyResult",
        "resources/unsubscribe": "EmptyResult",
        "resources/list": "ListResourcesResult",
        "resources/templates/list": "ListResourceTemplatesResult",
        "resources/read": "ReadResourceResult",
        "prompts/list": "ListPromptsResult",
        "prompts/get": "GetPromptResult",
        "tools/list": "ListToolsResult",
        "tools/call": "CallToolResult",
        "completion/complete": "CompleteResult",
        "sampling/createMessage": "CreateMessageResult",
        "roots/list": "ListRootsResult",
        "elicitation/create": "ElicitResult",
        "tasks/get": "GetTaskResult",
        "tasks/result": "GetTaskPayloadResult",
        "tasks/cancel": "CancelTaskResult",
        "tasks/list": "ListTasksResult",
    }
)
#: Results that must be empty (apart from ``_meta``).
EMPTY_RESULT = "EmptyResult"
#: A request with ``params.task`` (2025-11-25) is answered with this instead.
TASK_RESULT = "CreateTaskResult"

_UNIONS: Mapping[tuple[Sender, str], str] = {
    ("client", "request"): "ClientRequest",
    ("server", "request"): "ServerRequest",
    ("client", "notification"): "ClientNotification",
    ("server", "notification"): "ServerNotification",
}
_MAX_SHOWN = 200


def other(side: Sender) -> Sender:
    return "server" if side == "client" else "client"


# --------------------------------------------------------------------------- schemas


@functools.cache
def schema_root(rev: str) -> Mapping[str, Any]:
    path = SCHEMA_DIR / f"{rev}.json"
    if not path.is_file():
        known = sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))
        raise ValueError(f"no schema for revision {rev!r} in {SCHEMA_DIR} (have {known})")
    return json.loads(path.read_text(encoding="utf-8"))


def definitions(rev: str) -> Mapping[str, Any]:
    root = schema_root(rev)
    return root["$defs"] if "$defs" in root else root["definitions"]


def has_definition(rev: str, name: str) -> bool:
    return name in definitions(rev)


@functools.cache
def validator(rev: str, name: str) -> Any:
    """A jsonschema validator (with format checking) for definition ``name`` of ``rev``."""
    root = schema_root(rev)
    if name not in definitions(rev):
        raise ValueError(f"revision {rev} has no definition {name!r}")
    defs_key = "$defs" if "$defs" in root else "definitions"
    cls = validator_for(root)
    return cls({**root, "$ref": f"#/{defs_key}/{name}"}, format_checker=cls.FORMAT_CHECKER)


@functools.cache
def method_map(rev: str) -> Mapping[str, str]:
    """Method name -> concrete request/notification definition (``tools/call`` -> ``CallToolRequest``)."""
    found: dict[str, str] = {}
    for name, d in definitions(rev).items():
        const = d.get("properties", {}).get("method", {}).get("const")
        if not isinstance(const, str):
            continue
        # Prefer concrete types over unions that happen to pin a method (2026-07-28).
        if const not in found or (
            found[const] in _UNIONS.values() and name not in _UNIONS.values()
        ):
            found[const] = name
    return MappingProxyType(found)


@functools.cache
def union_members(rev: str, union: str) -> frozenset[str]:
    """Definition names listed by a union (``ClientRequest`` -> {``InitializeRequest``, ...})."""
    d = definitions(rev).get(union)
    if d is None:
        return frozenset()
    refs = d.get("anyOf") or d.get("oneOf") or []
    return frozenset(r["$ref"].rsplit("/", 1)[-1] for r in refs if "$ref" in r)


@functools.cache
def sender_methods(
    rev: str, sender: Sender, kind: Literal["request", "notification"]
) -> frozenset[str]:
    """Methods ``sender`` may send as requests / notifications in ``rev``."""
    members = union_members(rev, _UNIONS[sender, kind])
    return frozenset(m for m, name in method_map(rev).items() if name in members)


#: What a server answers when it needs the client's input first (2026-07-28 on).
INPUT_REQUIRED_RESULT = "InputRequiredResult"


def result_type(rev: str, method: str, *, task: bool = False) -> str:
    """The ``*Result`` definition that answers ``method`` in ``rev``; ``Result`` if unknown.

    ``task=True``: the request was task-augmented (``params.task``), answered by CreateTaskResult.
    """
    name = TASK_RESULT if task else RESULT_TYPES.get(method, "Result")
    return name if has_definition(rev, name) else "Result"


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _may_require_input(rev: str, result_name: str) -> bool:
    """Whether the schema lets ``result_name``'s response carry an ``InputRequiredResult``
    instead (``CallToolResultResponse`` and its kind, 2026-07-28 on)."""
    response = definitions(rev).get(f"{result_name}Response")
    if not isinstance(response, Mapping):
        return False
    refs = response.get("properties", {}).get("result", {}).get("anyOf", [])
    return any(r.get("$ref", "").endswith(f"/{INPUT_REQUIRED_RESULT}") for r in refs)


# --------------------------------------------------------------------------- one message


def _short(value: Any) -> str:
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _path(error: ValidationError) -> str:
    return "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


def schema_errors(rev: str, name: str, instance: Any, where: str = "") -> list[str]:
    """Schema errors of ``instance`` against definition ``name``, one readable line each."""
    out = []
    for error in sorted(
        validator(rev, name).iter_errors(instance), key=lambda e: list(e.absolute_path)
    ):
        if error.context:  # anyOf/oneOf: show the most relevant branch error too
            deepest = best_match(error.context)
            detail = f" (closest: {_path(deepest)}: {deepest.message[:_MAX_SHOWN]})"
        else:
            detail = ""
        message = (
            error.message
            if len(error.message) <= _MAX_SHOWN
            else error.message[:_MAX_SHOWN] + "..."
        )
        out.append(f"{where}{name} ({rev}): {_path(error)}: {message}{detail}")
    return out


def classify(msg: Any) -> Kind | None:
    """What kind of JSON-RPC message ``msg`` looks like (None: not one)."""
    if isinstance(msg, list):
        return "batch"
    if not isinstance(msg, dict):
        return None
    if "method" in msg:
        return "request" if "id" in msg else "notification"
    if "error" in msg:
        return "error"
    if "result" in msg:
        return "result"
    return None


def _is_request_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def message_errors(
    msg: Any,
    rev: str,
    *,
    sender: Sender,
    request_method: str | None = None,
    request: Mapping[str, Any] | None = None,
    allow_unknown_methods: bool = False,
) -> list[str]:
    """Every problem with ``msg`` sent by ``sender`` under revision ``rev`` (empty: valid).

    For responses, ``request_method`` (or the ``request`` itself, which also tells whether it
    was task-augmented) selects the result definition to check ``result`` against.
    """
    if sender not in ("client", "server"):
        raise ValueError(f"sender must be 'client' or 'server', not {sender!r}")
    schema_root(rev)  # unknown revision: ValueError, not a list of confusing errors
    kind = classify(msg)
    if kind == "batch":
        return _batch_errors(msg, rev, sender=sender, allow_unknown_methods=allow_unknown_methods)
    if kind is None:
        return [f"not a JSON-RPC message (needs `method`, `result` or `error`): {_short(msg)}"]
    errors: list[str] = []
    if msg.get("jsonrpc") != "2.0":
        errors.append(f'`jsonrpc` must be "2.0", got {_short(msg.get("jsonrpc"))}')

    if kind in ("request", "notification"):
        method = msg["method"]
        if "result" in msg or "error" in msg:
            errors.append("a request/notification must not carry `result` or `error`")
        if kind == "request" and not _is_request_id(msg["id"]):
            hint = " (a notification must have no `id` member at all)" if msg["id"] is None else ""
            errors.append(f"request id must be a string or integer, got {_short(msg['id'])}{hint}")
        errors += schema_errors(
            rev, "JSONRPCRequest" if kind == "request" else "JSONRPCNotification", msg
        )
        if not isinstance(method, str):
            return errors
        concrete = method_map(rev).get(method)
        if concrete is None:
            if not allow_unknown_methods:
                errors.append(f"unknown method {method!r} in revision {rev}")
            return errors
        expected_kind = "notification" if concrete.endswith("Notification") else "request"
        if expected_kind != kind:
            errors.append(f"{method!r} is a {expected_kind} in {rev}, but was sent as a {kind}")
        elif method not in sender_methods(rev, sender, kind) and (rev, sender, method) not in (
            _SCHEMA_GAPS
        ):
            errors.append(f"a {sender} may not send the {kind} {method!r} in revision {rev}")
        errors += schema_errors(rev, concrete, msg)
        return errors

    # responses
    if "result" in msg and "error" in msg:
        errors.append("a response must have `result` or `error`, not both")
    if "id" not in msg or msg["id"] is None:
        if kind == "result":
            errors.append("a result response must carry the id of its request (got none / null)")
    elif not _is_request_id(msg["id"]):
        errors.append(f"response id must be a string or integer, got {_short(msg['id'])}")
    if kind == "error":
        envelope = (
            "JSONRPCErrorResponse"
            if has_definition(rev, "JSONRPCErrorResponse")
            else "JSONRPCError"
        )
        # The id may be unreadable (parse errors): check the rest of the envelope.
        checked = msg if _is_request_id(msg.get("id")) else {**msg, "id": 0}
        errors += schema_errors(rev, envelope, checked)
        return errors
    envelope = (
        "JSONRPCResultResponse"
        if has_definition(rev, "JSONRPCResultResponse")
        else "JSONRPCResponse"
    )
    errors += schema_errors(rev, envelope, msg)
    if request is not None and request_method is None:
        request_method = request.get("method")
    if request_method is None:
        return errors
    if request_method in method_map(rev) and request_method not in sender_methods(
        rev, other(sender), "request"
    ):
        errors.append(
            f"a {sender} answered {request_method!r}, which is not a request a {other(sender)} "
            f"may send in {rev}"
        )
    params = request.get("params") if request is not None else None
    task = isinstance(params, dict) and "task" in params and has_definition(rev, TASK_RESULT)
    name = result_type(rev, request_method, task=task)
    result = msg.get("result")
    if _may_require_input(rev, name) and _get(result, "resultType") == "input_required":
        name = INPUT_REQUIRED_RESULT
    errors += schema_errors(rev, name, result, where=f"result of {request_method!r}: ")
    if name == EMPTY_RESULT and isinstance(result, dict) and set(result) - {"_meta"}:
        errors.append(
            f"result of {request_method!r} must be empty (only `_meta` allowed), got {_short(result)}"
        )
    return errors


def _batch_errors(
    batch: list[Any], rev: str, *, sender: Sender, allow_unknown_methods: bool
) -> list[str]:
    if rev not in BATCH_REVISIONS:
        return [
            f"JSON-RPC batches are not allowed in revision {rev} (only in {sorted(BATCH_REVISIONS)})"
        ]
    if not batch:
        return ["a batch must not be empty"]
    kinds = {classify(m) for m in batch}
    errors = []
    if kinds & {"request", "notification"} and kinds & {"result", "error"}:
        errors.append("a batch must hold either requests/notifications or responses, not both")
    if "batch" in kinds:
        errors.append("a batch must not contain a batch")
    for i, item in enumerate(batch):
        if classify(item) != "batch":
            errors += [
                f"[{i}] {e}"
                for e in message_errors(
                    item, rev, sender=sender, allow_unknown_methods=allow_unknown_methods
                )
            ]
    return errors


def validate_message(
    msg: Any,
    rev: str,
    *,
    sender: Sender,
    request_method: str | None = None,
    request: Mapping[str, Any] | None = None,
    allow_unknown_methods: bool = False,
) -> Kind:
    """Assert that ``msg`` is a valid message for ``sender`` in ``rev``; return its kind.

    Raises :class:`AssertionError` listing every problem (see :func:`message_errors`).
    """
    errors = message_errors(
        msg,
        rev,
        sender=sender,
        request_method=request_method,
        request=request,
        allow_unknown_methods=allow_unknown_methods,
    )
    if errors:
        raise AssertionError(
            f"invalid {sender} message for {rev}: {_short(msg)}\n  " + "\n  ".join(errors)
        )
    kind = classify(msg)
    assert kind is not None
    return kind


# --------------------------------------------------------------------------- the recorder


@dataclass
class WireRecord:
    """One message that crossed the wrapped transport."""

    index: int
    direction: Literal["sent", "received"]
    #: The decoded JSON value (a copy), or None when it could not be decoded.
    message: Any
    #: The bytes as they crossed, when the transport carried bytes.
    raw: bytes | None = None
    #: Why the item is not a JSON value (undecodable bytes, unserializable object, ...).
    decode_error: str | None = None
    related_request_id: Any = None
    #: Sent with ``send_raw`` (deliberately malformed input): no violations reported for it.
    expected_invalid: bool = False

    def sender(self, side: Sender) -> Sender:
        """Who sent this, given which end the recorder wraps."""
        return side if self.direction == "sent" else other(side)


class WireRecorder:
    """A transport wrapper that records and (on :meth:`check`) validates the traffic.

    ``side`` is the end it wraps: ``"client"`` if the client sends through it (so what it
    receives comes from the server), ``"server"`` for the server's end. ``rev`` is the
    revision assumed until an ``initialize`` exchange is seen (default: the requested one,
    else :data:`LATEST`).

    Example::

        client_end, server_end = memory_pair()
        recorder = WireRecorder(client_end, side="client")
        ... run a client over `recorder` against a server over `server_end` ...
        recorder.check()          # AssertionError listing every violation
    """

    def __init__(
        self, transport: Any, *, side: Sender | None = None, rev: str | None = None
    ) -> None:
        if side not in (None, "client", "server"):
            raise ValueError(f"side must be 'client' or 'server', not {side!r}")
        if rev is not None:
            schema_root(rev)
        self.transport = transport
        self.side: Sender | None = side
        self.rev = rev
        self.messages: list[WireRecord] = []
        #: The revision the last :meth:`check` ended on (learned from ``initialize``).
        self.revision: str | None = None

    # -- the transport interface -------------------------------------------------------

    async def send(self, message: Any, /, *, related_request_id: Any = None) -> None:
        self._record("sent", message, related_request_id=related_request_id)
        await self.transport.send(message, related_request_id=related_request_id)

    async def send_raw(self, data: bytes) -> None:
        """Pass raw bytes to the wrapped transport's ``send_raw`` (malformed input in tests)."""
        self._record("sent", data, expected_invalid=True)
        await self.transport.send_raw(data)

    async def receive(self) -> Any:
        item = await self.transport.receive()  # EndOfStream passes through
        self._record("received", item)
        return item

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> WireRecorder:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        # Anything else (process handles, ...) comes from the wrapped transport.
        if name == "transport":
            raise AttributeError(name)
        return getattr(self.transport, name)

    # -- recording ------------------------------------------------------------------------

    def _record(self, direction: Literal["sent", "received"], item: Any, **extra: Any) -> None:
        raw: bytes | None = None
        error: str | None = None
        message: Any = None
        if isinstance(item, (bytes, bytearray, memoryview)):
            raw = bytes(item)
            try:
                message = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                error = f"undecodable bytes ({exc}): {raw[:_MAX_SHOWN]!r}"
        elif isinstance(item, (dict, list)):
            try:  # a copy, which also proves it serializes
                message = orjson.loads(orjson.dumps(item))
            except (TypeError, orjson.JSONEncodeError) as exc:
                error = f"not JSON-serializable ({exc}): {item!r:.{_MAX_SHOWN}}"
        else:
            error = f"not a JSON message: {item!r:.{_MAX_SHOWN}}"
        self.messages.append(
            WireRecord(len(self.messages), direction, message, raw, error, **extra)
        )

    @property
    def sent(self) -> list[Any]:
        """Decoded messages sent through the recorder, in order."""
        return [
            r.message for r in self.messages if r.direction == "sent" and r.decode_error is None
        ]

    @property
    def received(self) -> list[Any]:
        """Decoded messages received through the recorder, in order."""
        return [
            r.message for r in self.messages if r.direction == "received" and r.decode_error is None
        ]

    # -- validation ----------------------------------------------------------------------

    def violations(
        self,
        sender_of_sent: Sender | None = None,
        *,
        ignore: Callable[[WireRecord], bool] | None = None,
        allow_unknown_methods: bool = False,
    ) -> list[str]:
        """The violations in the recorded traffic: one entry per offending record, its
        first line naming the record, then one line per problem (see :meth:`check`)."""
        side = sender_of_sent or self.side
        if side not in ("client", "server"):
            raise ValueError(
                "say which end the recorder wraps: WireRecorder(side=...) or check(sender_of_sent=...)"
            )
        if self.side is not None and sender_of_sent is not None and sender_of_sent != self.side:
            raise ValueError(f"recorder wraps the {self.side} end, not the {sender_of_sent} end")
        return _Replay(self, side, ignore, allow_unknown_methods).run()

    def check(
        self,
        sender_of_sent: Sender | None = None,
        *,
        ignore: Callable[[WireRecord], bool] | None = None,
        allow_unknown_methods: bool = False,
    ) -> str:
        """Validate everything recorded; return the negotiated revision.

        Raises :class:`AssertionError` listing every violation. ``ignore(record)`` -> True
        skips the violations of a record the test produced on purpose (it is still used to
        pair requests and responses). Records sent with :meth:`send_raw` are skipped likewise.
        """
        problems = self.violations(
            sender_of_sent, ignore=ignore, allow_unknown_methods=allow_unknown_methods
        )
        if problems:
            raise AssertionError(
                f"{len(problems)} wire violation(s) in {len(self.messages)} recorded message(s):\n  "
                + "\n  ".join(problems)
            )
        assert self.revision is not None
        return self.revision


def _id_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)  # 1 and "1" are different ids


class _Replay:
    """Walks the log in order, tracking requests, responses and the revision."""

    def __init__(
        self,
        recorder: WireRecorder,
        side: Sender,
        ignore: Callable[[WireRecord], bool] | None,
        allow_unknown_methods: bool,
    ) -> None:
        self.recorder = recorder
        self.side = side
        self.ignore = ignore
        self.allow_unknown = allow_unknown_methods
        self.rev = recorder.rev or LATEST
        #: True once an ``initialize`` was seen (then ``_meta`` does not change the revision).
        self.handshake = False
        self.pending: dict[tuple[Sender, tuple[str, Any]], Mapping[str, Any]] = {}
        self.used: set[tuple[Sender, tuple[str, Any]]] = set()
        self.answered: set[tuple[Sender, tuple[str, Any]]] = set()

    def run(self) -> list[str]:
        problems: list[str] = []
        for record in self.recorder.messages:
            sender = record.sender(self.side)
            found = self._record(record, sender)
            if found and not record.expected_invalid and not (self.ignore and self.ignore(record)):
                label = f"#{record.index} {record.direction} ({sender} -> {other(sender)})"
                summary = _short(record.message) if record.decode_error is None else ""
                problems.append("\n      ".join([f"{label} {summary}".rstrip(), *found]))
        self.recorder.revision = self.rev
        return problems

    def _record(self, record: WireRecord, sender: Sender) -> list[str]:
        if record.decode_error is not None:
            return [record.decode_error]
        msg = record.message
        if isinstance(msg, list):
            if self.rev not in BATCH_REVISIONS or not msg:
                return message_errors(msg, self.rev, sender=sender)
            errors: list[str] = []
            kinds = {classify(m) for m in msg}
            if kinds & {"request", "notification"} and kinds & {"result", "error"}:
                errors.append(
                    "a batch must hold either requests/notifications or responses, not both"
                )
            for i, item in enumerate(msg):
                if isinstance(item, list):
                    errors.append(f"[{i}] a batch must not contain a batch")
                else:
                    errors += [f"[{i}] {e}" for e in self._one(item, sender)]
            return errors
        return self._one(msg, sender)

    def _one(self, msg: Any, sender: Sender) -> list[str]:
        kind = classify(msg)
        if kind == "request":
            method = msg.get("method")
            params = msg.get("params")
            if method == "initialize" and sender == "client" and isinstance(params, dict):
                requested = params.get("protocolVersion")
                if requested in REVISIONS:
                    self.rev = requested
                self.handshake = True
            meta = params.get("_meta") if isinstance(params, dict) else None
            named = meta.get(_META_VERSION) if isinstance(meta, dict) else None
            if named in STATELESS_REVISIONS and not self.handshake:
                # A stateless connection: its requests name the revision they speak.
                self.rev = named
            errors = message_errors(
                msg, self.rev, sender=sender, allow_unknown_methods=self.allow_unknown
            )
            if _is_request_id(msg.get("id")):
                key = (sender, _id_key(msg["id"]))
                if key in self.used:
                    errors.append(
                        f"request id {msg['id']!r} was already used by the {sender} in this session"
                    )
                self.used.add(key)
                self.pending[key] = msg
            return errors
        if kind in ("result", "error"):
            request = None
            errors: list[str] = []
            if _is_request_id(msg.get("id")):
                key = (other(sender), _id_key(msg["id"]))
                request = self.pending.pop(key, None)
                if request is None:
                    if key in self.answered:
                        errors.append(f"second response to request id {msg['id']!r}")
                    elif (sender, key[1]) in self.pending:
                        errors.append(
                            f"response id {msg['id']!r} matches a request the {sender} itself sent, "
                            f"not one from the {other(sender)}"
                        )
                    else:
                        errors.append(f"response to unknown request id {msg['id']!r}")
                self.answered.add(key)
            rev = self.rev
            if request is not None and request.get("method") == "initialize" and kind == "result":
                result = msg.get("result")
                version = result.get("protocolVersion") if isinstance(result, dict) else None
                if version in REVISIONS:
                    rev = self.rev = version
                else:
                    errors.append(
                        f"initialize result announces protocolVersion {version!r}, not a known revision"
                    )
            return errors + message_errors(msg, rev, sender=sender, request=request)
        return message_errors(
            msg, self.rev, sender=sender, allow_unknown_methods=self.allow_unknown
        )


__all__: Sequence[str] = [
    "BATCH_REVISIONS",
    "LATEST",
    "RESULT_TYPES",
    "REVISIONS",
    "SPEC_DIR",
    "WireRecord",
    "WireRecorder",
    "classify",
    "definitions",
    "message_errors",
    "method_map",
    "result_type",
    "schema_errors",
    "sender_methods",
    "validate_message",
    "validator",
]


class _TapReplay:
    """A transport stand-in for :func:`replay_tap_log`: one logged line at a time."""

    def __init__(self) -> None:
        self.next: bytes = b""

    async def receive(self) -> bytes:
        return self.next

    async def send(self, message: Any, /, *, related_request_id: Any = None) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def replay_tap_log(log: Path) -> WireRecorder:
    """What a server got and sent, from a ``tests/interop/wire_tap.py`` log, in a recorder
    wrapping the server's end (validated as it is fed, like live traffic)."""
    replay = _TapReplay()
    recorder = WireRecorder(replay, side="server")
    for line in (await anyio.Path(log).read_text(encoding="utf-8")).splitlines():
        entry = orjson.loads(line)
        raw = entry["line"].rstrip("\n").encode()
        if entry["to"] == "server":
            replay.next = raw
            await recorder.receive()
        else:
            await recorder.send(orjson.loads(raw))
    return recorder
