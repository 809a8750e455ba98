"""Sampling with Google's Gemini API (``generateContent``)."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from .._exceptions import InternalError, InvalidParams
from ..types import (
    AudioContent,
    CreateMessageRequestParams,
    CreateMessageResult,
    ImageContent,
    SamplingMessage,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)
from ._base import ProviderHandler, blocks, declaration, stop_reason

#: Gemini's finish reasons as MCP stop reasons (others are passed on as they are).
STOP_REASONS = {"STOP": "endTurn", "MAX_TOKENS": "maxTokens"}
#: What ``toolChoice.mode`` is called there.
TOOL_CHOICE = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
#: Where a function call's thought signature is kept between rounds (Gemini needs it back).
SIGNATURE = "mcpkit/geminiThoughtSignature"
#: The prefix of the ids we give function calls Gemini gave none (not sent back).
OUR_ID = "mcpkit-call-"


class GeminiHandler(ProviderHandler):
    """A ``sampling_handler`` on Google's Gemini API
    (``POST /v1beta/models/{model}:generateContent``).

    The key comes from ``GEMINI_API_KEY`` by default. Images and audio go in as inline data;
    tool schemas as ``parametersJsonSchema`` (full JSON Schema). Gemini answers a call by
    the function's name: a tool result finds it from the call of the same id earlier in the
    conversation. A call's thought signature rides in the tool call's ``_meta`` and goes
    back with it. Other options: :class:`ProviderHandler`.
    """

    provider: ClassVar[str] = "Gemini"
    key_env: ClassVar[str] = "GEMINI_API_KEY"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"

    def auth_headers(self) -> dict[str, str]:
        """``x-goog-api-key``."""
        return {"x-goog-api-key": self._key} if self._key else {}

    def request(self, params: CreateMessageRequestParams, model: str) -> tuple[str, dict[str, Any]]:
        """The ``generateContent`` body for ``params``."""
        names: dict[str, str] = {}  # tool call id -> function name, for the results
        contents = [self._content(m, names) for m in params.messages]
        tokens, temperature = self.limits(params)
        config: dict[str, Any] = {"maxOutputTokens": tokens}
        if temperature is not None:
            config["temperature"] = temperature
        if params.stop_sequences:
            config["stopSequences"] = list(params.stop_sequences)
        body: dict[str, Any] = {"contents": contents, "generationConfig": config}
        system = self.system(params)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if params.tools:
            declarations = [declaration(t, "parametersJsonSchema") for t in params.tools]
            body["tools"] = [{"functionDeclarations": declarations}]
            if params.tool_choice is not None and params.tool_choice.mode is not None:
                mode = TOOL_CHOICE[params.tool_choice.mode]
                body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
        return f"{self.base_url}/models/{model}:generateContent", body

    def _content(self, m: SamplingMessage, names: dict[str, str]) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for b in blocks(m):
            if isinstance(b, TextContent):
                parts.append({"text": b.text})
            elif isinstance(b, ImageContent | AudioContent):
                parts.append({"inlineData": {"mimeType": b.mime_type, "data": b.data}})
            elif isinstance(b, ToolUseContent):
                names[b.id] = b.name
                call: dict[str, Any] = {"name": b.name, "args": b.input}
                if not b.id.startswith(OUR_ID):
                    call["id"] = b.id
                part: dict[str, Any] = {"functionCall": call}
                signature = (b.meta or {}).get(SIGNATURE)
                if isinstance(signature, str):
                    part["thoughtSignature"] = signature
                parts.append(part)
            elif isinstance(b, ToolResultContent):
                parts.append(self._function_response(b, names))
            else:
                raise self.unsupported(f"{b.type} content in {m.role} messages")
        return {"role": "model" if m.role == "assistant" else "user", "parts": parts}

    def _function_response(self, b: ToolResultContent, names: dict[str, str]) -> dict[str, Any]:
        name = names.get(b.tool_use_id)
        if name is None:
            raise InvalidParams(
                message=f"the tool result {b.tool_use_id!r} answers no tool call of the conversation "
                "(Gemini needs the function's name)"
            )
        structured = b.structured_content
        output: Any = structured if structured is not None else self.tool_result_text(b)
        response = {"error": output} if b.is_error else {"output": output}
        reply: dict[str, Any] = {"name": name, "response": response}
        if not b.tool_use_id.startswith(OUR_ID):
            reply["id"] = b.tool_use_id
        return {"functionResponse": reply}

    def result(self, data: Any, model: str) -> CreateMessageResult:
        """The first candidate's text and function calls, and its finish reason."""
        candidates = data.get("candidates") if isinstance(data, dict) else None
        if not candidates:
            feedback = data.get("promptFeedback", {}) if isinstance(data, dict) else {}
            why = feedback.get("blockReason") if isinstance(feedback, dict) else None
            raise InternalError(
                message=f"Gemini's API answered without a candidate (prompt blocked: {why})"
                if why
                else "Gemini's API answered without a candidate"
            )
        candidate = candidates[0]
        parts = (candidate.get("content") or {}).get("parts") or []
        texts = [str(p["text"]) for p in parts if "text" in p and not p.get("thought")]
        calls = []
        for p in parts:
            call = p.get("functionCall")
            if not isinstance(call, dict):
                continue
            meta = {SIGNATURE: p["thoughtSignature"]} if "thoughtSignature" in p else None
            call_id = call.get("id") or f"{OUR_ID}{uuid.uuid4().hex[:12]}"
            calls.append(
                self.tool_use(str(call_id), str(call.get("name")), call.get("args", {}), meta)
            )
        stop = candidate.get("finishReason")
        name = str(data.get("modelVersion") or model)
        return self.answer(texts, calls, name, stop_reason(STOP_REASONS, stop))
