"""A local stand-in for three LLM providers' HTTP APIs: OpenAI's Chat Completions,
Anthropic's Messages and Gemini's ``generateContent`` (the providers themselves are outside
our control).

Each route checks what the real API needs of a request (its auth header, the members and
shapes of the body, that a tool result answers an earlier call) and answers 400 in the
provider's error format naming every problem, as the real API would refuse it. It answers
like the real API: a question with tools offered gets a call of ``add(a=2, b=3)``; a
conversation ending in a tool result gets ``the sum is <result>``; otherwise the last text
echoed (finish reason ``length`` when ``max tokens`` < 5). A question containing ``RATE``
gets a 429, ``BOOM`` a 500, in the provider's error format. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

KEYS = {"openai": "sk-test-openai", "anthropic": "sk-ant-test", "gemini": "gm-test"}
SIGNATURE = "c2lnLTE="  # the thought signature Gemini's function call carries


@dataclass
class Seen:
    """One request a route received."""

    provider: str
    path: str
    headers: dict[str, str]
    body: Any
    problems: list[str] = field(default_factory=list)


class FakeProviders:
    """The app (``.app``) and what it received (``.seen``)."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.app = Starlette(
            routes=[
                Route("/openai/v1/chat/completions", self.openai, methods=["POST"]),
                Route("/anthropic/v1/messages", self.anthropic, methods=["POST"]),
                Route(
                    "/gemini/v1beta/models/{model}:generateContent", self.gemini, methods=["POST"]
                ),
                Route("/slow/v1/chat/completions", self.slow, methods=["POST"]),
            ]
        )
        #: Set (on the server's loop) to let the ``slow`` route answer.
        self.release: asyncio.Event | None = None

    async def slow(self, request: Request) -> JSONResponse:
        """Answers only once :meth:`let_go` ran: a provider that does not answer in time."""
        await self._receive("slow", request)
        self.release = self.release or asyncio.Event()
        await self.release.wait()
        return _openai_error(503, "server_error", "too late")

    async def let_go(self) -> None:
        """Let the ``slow`` route answer (run on the server's loop)."""
        self.release = self.release or asyncio.Event()
        self.release.set()

    async def _receive(self, provider: str, request: Request) -> Seen:
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        seen = Seen(provider, request.url.path, headers, body)
        self.seen.append(seen)
        if headers.get("content-type") != "application/json":
            seen.problems.append("content-type is not application/json")
        if not isinstance(body, dict):
            seen.problems.append("the body is not a JSON object")
        return seen

    # ------------------------------------------------------------------ OpenAI

    async def openai(self, request: Request) -> JSONResponse:
        seen = await self._receive("openai", request)
        if seen.headers.get("authorization") != f"Bearer {KEYS['openai']}":
            return _openai_error(401, "invalid_api_key", "Incorrect API key provided")
        body = seen.body if isinstance(seen.body, dict) else {}
        p = seen.problems
        if not isinstance(body.get("model"), str):
            p.append("model: required string")
        if not isinstance(body.get("max_completion_tokens"), int):
            p.append("max_completion_tokens: required integer here")
        calls: set[str] = set()
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            p.append("messages: required non-empty array")
            messages = []
        for i, m in enumerate(messages):
            p += [f"messages[{i}]: {x}" for x in _openai_message(m, calls)]
        for t in body.get("tools") or []:
            f = t.get("function") or {}
            if t.get("type") != "function" or not isinstance(f.get("name"), str):
                p.append(f"tools: bad tool {t!r}")
            elif (f.get("parameters") or {}).get("type") != "object":
                p.append(f"tools: {f['name']}'s parameters are not an object schema")
        if "tool_choice" in body and body["tool_choice"] not in ("auto", "required", "none"):
            p.append(f"tool_choice: {body['tool_choice']!r}")
        if "tool_choice" in body and not body.get("tools"):
            p.append("tool_choice is only allowed when tools are specified")
        if p:
            return _openai_error(400, "invalid_request_error", "; ".join(p))
        last = messages[-1]
        question = _openai_text(messages)
        if (err := _scripted_error(question)) is not None:
            code, why = err
            kind = "rate_limit_exceeded" if code == 429 else "server_error"
            return _openai_error(code, kind, why)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if last["role"] == "tool":
            message["content"], finish = f"the sum is {last['content']}", "stop"
        elif body.get("tools") and body.get("tool_choice") != "none":
            call = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
            message["tool_calls"] = [{"id": "call_abc123", "type": "function", "function": call}]
            finish = "tool_calls"
        else:
            message["content"] = question
            finish = "length" if body["max_completion_tokens"] < 5 else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1764400000,
                "model": f"{body['model']}-2025-01-01",
                "choices": [choice],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    # ------------------------------------------------------------------ Anthropic

    async def anthropic(self, request: Request) -> JSONResponse:
        seen = await self._receive("anthropic", request)
        if seen.headers.get("x-api-key") != KEYS["anthropic"]:
            return _anthropic_error(401, "authentication_error", "invalid x-api-key")
        body = seen.body if isinstance(seen.body, dict) else {}
        p = seen.problems
        if not seen.headers.get("anthropic-version"):
            p.append("anthropic-version: header is required")
        if not isinstance(body.get("model"), str):
            p.append("model: Field required")
        if not isinstance(body.get("max_tokens"), int):
            p.append("max_tokens: Field required")
        if "system" in body and not isinstance(body["system"], str | list):
            p.append("system: Input should be a string or a list of blocks")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            p.append("messages: Field required")
            messages = []
        calls: set[str] = set()
        for i, m in enumerate(messages):
            p += [f"messages.{i}: {x}" for x in _anthropic_message(m, calls)]
        for t in body.get("tools") or []:
            if (
                not isinstance(t.get("name"), str)
                or (t.get("input_schema") or {}).get("type") != "object"
            ):
                p.append(f"tools: bad tool {t!r}")
        if "tool_choice" in body and (body["tool_choice"] or {}).get("type") not in (
            "auto",
            "any",
            "none",
            "tool",
        ):
            p.append(f"tool_choice: {body['tool_choice']!r}")
        if p:
            return _anthropic_error(400, "invalid_request_error", "; ".join(p))
        last = messages[-1]["content"]
        last = last if isinstance(last, list) else [{"type": "text", "text": last}]
        question = " ".join(
            b.get("text", "")
            for m in messages
            for b in _listed(m["content"])
            if b["type"] == "text"
        )
        if (err := _scripted_error(question)) is not None:
            code, message = err
            kind = "rate_limit_error" if code == 429 else "api_error"
            return _anthropic_error(code, kind, message)
        results = [b for b in last if b["type"] == "tool_result"]
        if results:
            text = " ".join(c["text"] for c in results[0]["content"] if c["type"] == "text")
            content: list[Any] = [{"type": "text", "text": f"the sum is {text}"}]
            stop = "end_turn"
        elif body.get("tools") and (body.get("tool_choice") or {}).get("type") != "none":
            content = [
                {"type": "text", "text": "Let me add those."},
                {"type": "tool_use", "id": "toolu_01", "name": "add", "input": {"a": 2, "b": 3}},
            ]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": question}]
            stop = "max_tokens" if body["max_tokens"] < 5 else "end_turn"
        return JSONResponse(
            {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": f"{body['model']}-20250101",
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        )

    # ------------------------------------------------------------------ Gemini

    async def gemini(self, request: Request) -> JSONResponse:
        seen = await self._receive("gemini", request)
        if seen.headers.get("x-goog-api-key") != KEYS["gemini"]:
            return _gemini_error(400, "INVALID_ARGUMENT", "API key not valid.")
        body = seen.body if isinstance(seen.body, dict) else {}
        p = seen.problems
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            p.append("contents: required")
            contents = []
        calls: set[str] = set()
        for i, c in enumerate(contents):
            p += [f"contents[{i}]: {x}" for x in _gemini_content(c, calls)]
        config = body.get("generationConfig") or {}
        if "maxOutputTokens" in config and not isinstance(config["maxOutputTokens"], int):
            p.append("generationConfig.maxOutputTokens: not an integer")
        for tool in body.get("tools") or []:
            for d in tool.get("functionDeclarations") or []:
                if not isinstance(d.get("name"), str):
                    p.append("functionDeclarations: name required")
                if "parameters" in d and "parametersJsonSchema" in d:
                    p.append("parameters and parametersJsonSchema are mutually exclusive")
        mode = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode")
        if mode not in (None, "AUTO", "ANY", "NONE", "VALIDATED"):
            p.append(f"functionCallingConfig.mode: {mode!r}")
        if p:
            return _gemini_error(400, "INVALID_ARGUMENT", "; ".join(p))
        question = " ".join(p_["text"] for c in contents for p_ in c["parts"] if "text" in p_)
        if (err := _scripted_error(question)) is not None:
            code, message = err
            status = "RESOURCE_EXHAUSTED" if code == 429 else "INTERNAL"
            return _gemini_error(code, status, message)
        last = contents[-1]["parts"]
        answers = [x["functionResponse"] for x in last if "functionResponse" in x]
        if answers:
            response = answers[0]["response"]
            output = response["output"] if "output" in response else response.get("error")
            if isinstance(output, dict) and "result" in output:  # a tool's structured result
                output = output["result"]
            parts: list[Any] = [{"text": f"the sum is {output}"}]
            finish = "STOP"
        elif body.get("tools") and mode != "NONE":
            call = {"name": "add", "args": {"a": 2, "b": 3}}
            parts = [{"functionCall": call, "thoughtSignature": SIGNATURE}]
            finish = "STOP"  # Gemini ends a turn of function calls with STOP
        else:
            parts = [{"text": question}]
            finish = "MAX_TOKENS" if config.get("maxOutputTokens", 99) < 5 else "STOP"
        model = request.path_params["model"]
        return JSONResponse(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": parts},
                        "finishReason": finish,
                        "index": 0,
                    }
                ],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
                "modelVersion": f"{model}-001",
                "responseId": "resp-1",
            }
        )


def _scripted_error(question: str) -> tuple[int, str] | None:
    if "RATE" in question:
        return 429, "Rate limit reached for requests"
    if "BOOM" in question:
        return 500, "The server had an error while processing your request"
    return None


def _listed(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _openai_error(status: int, code: str, message: str) -> JSONResponse:
    error = {"message": message, "type": code, "param": None, "code": code}
    headers = {"retry-after": "20"} if status == 429 else None
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def _anthropic_error(status: int, kind: str, message: str) -> JSONResponse:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(body, status_code=status)


def _gemini_error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": status, "message": message, "status": kind}}, status_code=status
    )


def _openai_text(messages: list[Any]) -> str:
    return " ".join(
        part["text"]
        for m in messages
        if m["role"] == "user"
        for part in _listed(m["content"])
        if part["type"] == "text"
    )


def _openai_message(m: Any, calls: set[str]) -> list[str]:
    role = m.get("role")
    if role == "system":
        return [] if isinstance(m.get("content"), str) else ["system content must be a string"]
    if role == "tool":
        problems = [] if isinstance(m.get("content"), str) else ["tool content must be a string"]
        if m.get("tool_call_id") not in calls:
            problems.append("tool message answers no preceding tool_calls id")
        return problems
    if role == "assistant":
        problems = []
        if m.get("content") is None and not m.get("tool_calls"):
            problems.append("assistant message needs content or tool_calls")
        for c in m.get("tool_calls") or []:
            f = c.get("function") or {}
            try:
                ok = isinstance(json.loads(f.get("arguments", "")), dict)
            except ValueError:
                ok = False
            if c.get("type") != "function" or not isinstance(c.get("id"), str) or not ok:
                problems.append(f"bad tool call {c!r}")
            else:
                calls.add(c["id"])
        return problems
    if role != "user":
        return [f"role {role!r} is not one of system, user, assistant, tool"]
    content = m.get("content")
    if isinstance(content, str):
        return []
    problems = []
    parts: list[Any] = content if isinstance(content, list) else [{}]
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind == "image_url" and str(part["image_url"].get("url", "")).startswith("data:"):
            continue
        if kind == "input_audio" and part["input_audio"].get("format") in ("wav", "mp3"):
            continue
        problems.append(f"bad content part {part!r}")
    return problems


def _anthropic_block(b: Any, role: str, calls: set[str]) -> str | None:
    kind = b.get("type")
    if kind == "text":
        return None if isinstance(b.get("text"), str) else "text: string required"
    if kind == "image" and role == "user":
        source = b.get("source") or {}
        if source.get("type") == "base64" and source.get("media_type") in (
            "image/jpeg",
            "image/png",
            "image/gif",
            "image/webp",
        ):
            return None
        return f"bad image source {source!r}"
    if kind == "tool_use" and role == "assistant":
        if isinstance(b.get("id"), str) and isinstance(b.get("input"), dict):
            calls.add(b["id"])
            return None
        return "tool_use needs id and input"
    if kind == "tool_result" and role == "user":
        if b.get("tool_use_id") not in calls:
            return "tool_result answers no tool_use block of the previous message"
        for c in _listed(b.get("content", [])):
            if c.get("type") not in ("text", "image"):
                return f"tool_result content of type {c.get('type')!r}"
        return None
    return f"content block {kind!r} not allowed in a {role} message"


def _anthropic_message(m: Any, calls: set[str]) -> list[str]:
    role = m.get("role")
    if role not in ("user", "assistant"):
        return [f"role: Input should be 'user' or 'assistant', not {role!r}"]
    found = [_anthropic_block(b, role, calls) for b in _listed(m.get("content"))]
    return [x for x in found if x is not None]


def _gemini_content(c: Any, calls: set[str]) -> list[str]:
    role = c.get("role")
    if role not in ("user", "model"):
        return [f"role {role!r}: Please use a valid role: user, model"]
    problems = []
    for part in c.get("parts") or [None]:
        keys = set(part or {}) - {"thoughtSignature", "thought"}
        if len(keys) != 1 or not keys <= {"text", "inlineData", "functionCall", "functionResponse"}:
            problems.append(f"bad part {part!r}")
            continue
        if "functionCall" in keys:
            if role != "model":
                problems.append("functionCall outside a model turn")
            elif part.get("thoughtSignature") != SIGNATURE:
                problems.append("Function call is missing a thought_signature")
            calls.add(part["functionCall"].get("name"))
        if "functionResponse" in keys:
            answer = part["functionResponse"]
            if answer.get("name") not in calls:
                problems.append("functionResponse names no function called before")
            if not isinstance(answer.get("response"), dict):
                problems.append("functionResponse.response must be an object")
        if "inlineData" in keys and not {"mimeType", "data"} <= set(part["inlineData"]):
            problems.append("inlineData needs mimeType and data")
    return problems
