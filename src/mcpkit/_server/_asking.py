"""What a :class:`Context` sends its client and checks in the answers: elicitation
schemas (flat, primitive properties only) and form answers against them, the sampling
messages built from what a tool passes, and the tool results a sampling answer carries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._util import is_base_model, to_wire

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from .._session import Negotiated


def parse_elicit_result(
    raw: Any,
) -> tuple[Literal["accept", "decline", "cancel"], dict[str, Any] | None]:
    from .._exceptions import ProtocolError

    if not isinstance(raw, dict) or raw.get("action") not in ("accept", "decline", "cancel"):
        raise ProtocolError(message=f"malformed elicitation result from the client: {raw!r}")
    content = raw.get("content")
    return raw["action"], content if isinstance(content, dict) else None


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
}


def _allowed_values(prop: dict[str, Any]) -> list[Any] | None:
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
            return [o["const"] for o in options]
    return None


def check_form_answer(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """Problems of an accepted form answer against a flat ``requestedSchema`` (empty: it fits).

    Forms are flat (primitive fields, enums, arrays of enum values), so this small check
    covers what they can express without a JSON Schema library.
    """
    props = schema.get("properties") or {}
    problems = [
        f"`{name}` is required" for name in schema.get("required") or () if name not in content
    ]
    for name, value in content.items():
        prop = props.get(name)
        if not isinstance(prop, dict):
            continue  # fields the form did not ask for are ignored
        kind = prop.get("type")
        types_ = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
        if types_ is not None and (
            not isinstance(value, types_) or (kind != "boolean" and isinstance(value, bool))
        ):
            problems.append(f"`{name}` should be of type {kind}, got {value!r}")
            continue
        if kind == "array":
            items = prop.get("items")
            allowed = _allowed_values(items) if isinstance(items, dict) else None
            if allowed is not None:
                problems += [
                    f"`{name}`: {v!r} is not one of {allowed}" for v in value if v not in allowed
                ]
            continue
        allowed = _allowed_values(prop)
        if allowed is not None and value not in allowed:
            problems.append(f"`{name}`: {value!r} is not one of {allowed}")
    return problems


def check_tool_results(messages: list[dict[str, Any]]) -> None:
    """The spec's rule for answering tool use: every ``tool_use`` of an assistant message is
    answered by a ``tool_result`` with its id in the next user message, which holds nothing else.
    """
    for i, msg in enumerate(messages):
        blocks = msg.get("content")
        blocks = blocks if isinstance(blocks, list) else [blocks]
        kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
        if msg.get("role") == "user" and "tool_result" in kinds and kinds != {"tool_result"}:
            raise ValueError(
                f"sampling message {i}: a user message with tool results must hold only tool results"
            )
        if msg.get("role") != "assistant" or "tool_use" not in kinds or i + 1 >= len(messages):
            continue
        wanted = {
            b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
        }
        nxt = messages[i + 1].get("content")
        nxt = nxt if isinstance(nxt, list) else [nxt]
        answered = {
            b.get("toolUseId")
            for b in nxt
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        if messages[i + 1].get("role") != "user" or wanted != answered:
            missing = sorted(str(x) for x in wanted - answered)
            raise ValueError(
                f"sampling message {i + 1} must be a user message answering every tool use of message {i} "
                f"with a tool_result (missing: {', '.join(missing) or 'none'}; unexpected: "
                f"{', '.join(sorted(str(x) for x in answered - wanted)) or 'none'})"
            )


def sampling_messages(messages: str | Sequence[Any]) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        messages = [messages]
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, str):
            out.append({"role": "user", "content": {"type": "text", "text": m}})
        elif is_base_model(m):
            out.append(to_wire(m))
        elif isinstance(m, Mapping):
            out.append(dict(m))
        else:
            raise TypeError(
                f"a sampling message must be a str, SamplingMessage or dict, not {type(m).__name__}"
            )
    return out


def elicitation_schema(adapter: TypeAdapter[Any]) -> dict[str, Any]:
    """The flat ``requestedSchema`` for a model/dataclass/TypedDict (enum references inlined)."""
    schema = adapter.json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = dict(defs.get(ref[len("#/$defs/") :], {}))
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return inline({**target, **rest})
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    out: dict[str, Any] = inline(schema)
    out.pop("title", None)
    props = out.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            if isinstance(prop, dict) and "anyOf" in prop:
                # Optional[X] -> X (the field is then simply not required).
                variants = [v for v in prop["anyOf"] if v != {"type": "null"}]
                if len(variants) == 1:
                    rest = {k: v for k, v in prop.items() if k != "anyOf"}
                    props[name] = {**variants[0], **rest}
            if isinstance(prop, dict) and prop.get("default", 0) is None:
                props[name].pop("default", None)
    out["type"] = "object"
    for name, prop in (props or {}).items():
        if not _is_primitive_field(prop):
            raise TypeError(
                f"elicitation forms take flat fields (str, int, float, bool, enums, lists of enum "
                f"values); field {name!r} is not one: {prop!r}"
            )
    return out


def _is_primitive_field(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return False
    kind = prop.get("type")
    if kind in ("string", "number", "integer", "boolean"):
        return True
    if kind == "array":
        items = prop.get("items")
        return isinstance(items, dict) and ("enum" in items or "anyOf" in items)
    return False


def url_input_requests(
    elicitations: Sequence[Mapping[str, Any]], capabilities: dict[str, Any]
) -> dict[str, dict[str, Any]] | None:
    """The input requests asking, under 2026-07-28, what a ``URLElicitationRequired``
    (-32042, retired there) asks for: each URL-mode elicitation it lists, keyed by its
    ``elicitationId`` (which the 2026 request has no field for). None when it lists none
    that is well-formed; -32021 when the client did not declare URL-mode elicitation."""
    from .._exceptions import MissingRequiredClientCapability
    from .._session._capabilities import elicitation_modes

    requests: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(elicitations, 1):
        message, url = item.get("message"), item.get("url")
        if item.get("mode", "url") != "url" or not isinstance(message, str):
            continue
        if not isinstance(url, str) or not url:
            continue
        key = item.get("elicitationId")
        key = key if isinstance(key, str) and key else f"url-elicitation-{i}"
        params = {"mode": "url", "message": message, "url": url}
        requests[key] = {"method": "elicitation/create", "params": params}
    if not requests:
        return None
    if "url" not in elicitation_modes(capabilities):
        raise MissingRequiredClientCapability(
            message="Missing required client capability: the request needs the user to "
            "open a URL (URL-mode elicitation), which the client did not declare",
            data={"requiredCapabilities": {"elicitation": {"url": {}}}},
        )
    return requests


def missing_capability_reason(why: str, capability: str, negotiated: Negotiated | None) -> str:
    """The error text for a request to the client it cannot get: ``why``, unless the request
    came without a handshake at all (a 2025 client of a sessionless HTTP app).

    A client always sends ``clientInfo`` in ``initialize``, so a handshake revision with no
    peer info means the request was served by a throwaway session: whatever the client
    declared went to another one, and no stream leads back to it. Saying the client did not
    declare the capability would send people looking at the wrong side.
    """
    if negotiated is None or negotiated.stateless or negotiated.peer_info:
        return why
    return (
        f"cannot use the client's {capability!r} capability: this server runs sessionless "
        f"(--sessionless, sessionless=True), where a protocol {negotiated.protocol_version} "
        "request has no session, so the server never sees what the client declared and has no "
        "channel to ask it; serve with sessions (drop sessionless), or connect with protocol "
        "revision 2026-07-28, whose requests carry their capabilities"
    )
