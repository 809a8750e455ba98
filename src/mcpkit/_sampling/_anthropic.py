"""Sampling with Anthropic's Messages API."""

from __future__ import annotations

from typing import Any, ClassVar

from .._exceptions import InternalError
from ..types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    ToolResultContent,
    ToolUseContent,
)
from ._base import ProviderHandler, blocks, declaration, stop_reason

#: Anthropic's stop reasons as MCP's (others are passed on as they are).
STOP_REASONS = {
    "end_turn": "endTurn",
    "max_tokens": "maxTokens",
    "stop_sequence": "stopSequence",
    "tool_use": "toolUse",
}
#: What ``toolChoice.mode`` is called there.
TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}
#: The image types the Messages API takes.
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: The ``anthropic-version`` header the requests are written for.
API_VERSION = "2023-06-01"


class AnthropicHandler(ProviderHandler):
    """A ``sampling_handler`` on Anthropic's Messages API (``POST /v1/messages``).

    The key comes from ``ANTHROPIC_API_KEY`` by default. Images (JPEG, PNG, GIF, WebP) go
    in user messages and tool results; audio is refused with a clear error (the API takes
    none). Other options: :class:`ProviderHandler`.
    """

    provider: ClassVar[str] = "Anthropic"
    key_env: ClassVar[str] = "ANTHROPIC_API_KEY"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"

    def auth_headers(self) -> dict[str, str]:
        """``x-api-key`` and the API version."""
        headers = {"anthropic-version": API_VERSION}
        if self._key:
            headers["x-api-key"] = self._key
        return headers

    def request(self, params: CreateMessageRequestParams, model: str) -> tuple[str, dict[str, Any]]:
        """The Messages body for ``params``."""
        tokens, temperature = self.limits(params)
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": tokens,
            "messages": [self._message(m) for m in params.messages],
        }
        system = self.system(params)
        if system:
            body["system"] = system
        if temperature is not None:
            body["temperature"] = temperature
        if params.stop_sequences:
            body["stop_sequences"] = list(params.stop_sequences)
        if params.tools:
            body["tools"] = [declaration(t, "input_schema") for t in params.tools]
            if params.tool_choice is not None and params.tool_choice.mode is not None:
                body["tool_choice"] = {"type": TOOL_CHOICE[params.tool_choice.mode]}
        return f"{self.base_url}/v1/messages", body

    def _image(self, b: ImageContent) -> dict[str, Any]:
        if b.mime_type.lower() not in IMAGE_TYPES:
            raise self.unsupported(f"{b.mime_type} images (JPEG, PNG, GIF and WebP only)")
        source = {"type": "base64", "media_type": b.mime_type.lower(), "data": b.data}
        return {"type": "image", "source": source}

    def _message(self, m: SamplingMessage) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for b in blocks(m):
            if isinstance(b, TextContent):
                content.append({"type": "text", "text": b.text})
            elif isinstance(b, ImageContent) and m.role == "user":
                content.append(self._image(b))
            elif isinstance(b, ToolUseContent):
                content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
            elif isinstance(b, ToolResultContent):
                content.append(self._tool_result(b))
            else:
                raise self.unsupported(f"{b.type} content in {m.role} messages")
        # The API refuses empty text blocks (a tool call's message may carry one).
        kept = [c for c in content if c["type"] != "text" or c["text"]]
        return {"role": m.role, "content": kept or content}

    def _tool_result(self, b: ToolResultContent) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for c in b.content:
            if isinstance(c, TextContent):
                parts.append({"type": "text", "text": c.text})
            elif isinstance(c, ImageContent):
                parts.append(self._image(c))
            elif isinstance(c, EmbeddedResource) and isinstance(c.resource, TextResourceContents):
                parts.append({"type": "text", "text": c.resource.text})
            elif isinstance(c, ResourceLink):
                parts.append({"type": "text", "text": f"(resource {c.uri})"})
            else:
                raise self.unsupported(f"{c.type} content in tool results")
        if not parts and b.structured_content is not None:
            parts.append({"type": "text", "text": self.tool_result_text(b)})
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": b.tool_use_id,
            "content": parts,
        }
        if b.is_error:
            out["is_error"] = True
        return out

    def result(self, data: Any, model: str) -> CreateMessageResult:
        """The reply's text and tool calls (thinking blocks are left out), and its stop reason."""
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise InternalError(message="Anthropic's API answered without content")
        texts = [str(b.get("text", "")) for b in data["content"] if b.get("type") == "text"]
        calls = [
            self.tool_use(b["id"], b["name"], b.get("input", {}))
            for b in data["content"]
            if b.get("type") == "tool_use"
        ]
        stop = data.get("stop_reason")
        return self.answer(
            texts, calls, str(data.get("model") or model), stop_reason(STOP_REASONS, stop)
        )
