"""Sampling with OpenAI's Chat Completions API (and the servers compatible with it)."""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from .._exceptions import InternalError
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

#: OpenAI's finish reasons as MCP stop reasons (others are passed on as they are).
STOP_REASONS = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse"}
#: The audio formats Chat Completions takes, by MIME type.
AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


class OpenAIHandler(ProviderHandler):
    """A ``sampling_handler`` on OpenAI's Chat Completions API (``POST /chat/completions``).

    ``base_url`` (default ``https://api.openai.com/v1``) points it at a compatible server
    (vLLM, Ollama, a gateway). The key comes from ``OPENAI_API_KEY`` by default. Images and
    WAV/MP3 audio go in user messages; tool results are sent as text (an error result's
    text prefixed with ``Error:``). ``token_limit`` names the body's token limit:
    ``max_completion_tokens`` (OpenAI's), or ``max_tokens`` for older compatible servers.
    Other options: :class:`ProviderHandler`.
    """

    provider: ClassVar[str] = "OpenAI"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"

    def __init__(
        self, model: str, *, token_limit: str = "max_completion_tokens", **options: Any
    ) -> None:
        super().__init__(model, **options)
        self.token_limit = token_limit

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Bearer`` (none without a key, for local compatible servers)."""
        return {"authorization": f"Bearer {self._key}"} if self._key else {}

    def request(self, params: CreateMessageRequestParams, model: str) -> tuple[str, dict[str, Any]]:
        """The Chat Completions body for ``params``."""
        messages: list[dict[str, Any]] = []
        system = self.system(params)
        if system:
            messages.append({"role": "system", "content": system})
        for m in params.messages:
            messages += self._messages(m)
        tokens, temperature = self.limits(params)
        body: dict[str, Any] = {"model": model, "messages": messages, self.token_limit: tokens}
        if temperature is not None:
            body["temperature"] = temperature
        if params.stop_sequences:
            body["stop"] = list(params.stop_sequences)
        if params.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": declaration(t, "parameters"),
                }
                for t in params.tools
            ]
            if params.tool_choice is not None and params.tool_choice.mode is not None:
                body["tool_choice"] = params.tool_choice.mode
        return f"{self.base_url}/chat/completions", body

    def _messages(self, m: SamplingMessage) -> list[dict[str, Any]]:
        """One MCP message as Chat Completions messages (each tool result is one)."""
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for b in blocks(m):
            if isinstance(b, TextContent):
                parts.append({"type": "text", "text": b.text})
            elif isinstance(b, ImageContent) and m.role == "user":
                url = f"data:{b.mime_type};base64,{b.data}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
            elif isinstance(b, AudioContent) and m.role == "user":
                fmt = AUDIO_FORMATS.get(b.mime_type.lower())
                if fmt is None:
                    raise self.unsupported(f"{b.mime_type} audio (WAV and MP3 only)")
                parts.append(
                    {"type": "input_audio", "input_audio": {"data": b.data, "format": fmt}}
                )
            elif isinstance(b, ToolUseContent):
                arguments = orjson.dumps(b.input).decode()
                calls.append(
                    {
                        "id": b.id,
                        "type": "function",
                        "function": {"name": b.name, "arguments": arguments},
                    }
                )
            elif isinstance(b, ToolResultContent):
                text = self.tool_result_text(b)
                content = f"Error: {text}" if b.is_error else text
                results.append({"role": "tool", "tool_call_id": b.tool_use_id, "content": content})
            else:
                raise self.unsupported(f"{b.type} content in {m.role} messages")
        if results:
            return results  # MCP keeps tool results alone in their message
        if m.role == "assistant":
            text = "".join(p["text"] for p in parts)
            # No text: null beside tool calls, else "" (a message needs one or the other).
            out: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
            if calls:
                out["tool_calls"] = calls
            return [out]
        if len(parts) == 1 and parts[0]["type"] == "text":
            return [{"role": "user", "content": parts[0]["text"]}]
        return [{"role": "user", "content": parts}]

    def result(self, data: Any, model: str) -> CreateMessageResult:
        """The first choice's message: text, tool calls, finish reason."""
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise InternalError(message="OpenAI's API answered without a choice") from None
        text = message.get("content") or ""
        stop = choice.get("finish_reason")
        if not text and message.get("refusal"):
            text, stop = str(message["refusal"]), "refusal"
        calls = [
            self.tool_use(c["id"], c["function"]["name"], c["function"].get("arguments"))
            for c in message.get("tool_calls") or []
            if c.get("type", "function") == "function"
        ]
        name = str(data.get("model") or model)
        return self.answer([str(text)], calls, name, stop_reason(STOP_REASONS, stop))
