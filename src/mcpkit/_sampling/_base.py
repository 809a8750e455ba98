"""What every provider's sampling handler shares: its options, the model a request's hints
choose, the one HTTP call (bounded, its failures as JSON-RPC errors without the key), and the
pieces of MCP content every mapping needs."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
import orjson

from .._exceptions import InternalError, InvalidParams
from ..types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    EmbeddedResource,
    ModelPreferences,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    Tool,
    ToolResultContent,
    ToolUseContent,
)

if TYPE_CHECKING:
    import httpx2

    from .._client._callbacks import ServerRequestContext

#: How long one provider call may take by default (a long completion takes a while).
DEFAULT_TIMEOUT = 120.0
#: At most this much of a provider's error text goes into the error sent to the server.
MAX_ERROR_TEXT = 500


def _httpx2() -> Any:
    try:
        import httpx2
    except ModuleNotFoundError:
        raise ImportError(
            "mcpkit.sampling calls the providers' HTTP APIs with httpx2, which the [llm] "
            "extra brings: pip install 'mcpkit[llm]'"
        ) from None
    return httpx2


def blocks(message: SamplingMessage | CreateMessageResult) -> list[Any]:
    """A message's content as a list (one block may come bare)."""
    content = message.content
    return list(content) if isinstance(content, list) else [content]


def declaration(tool: Tool, schema_key: str) -> dict[str, Any]:
    """A tool as every provider declares one: its name, its description if any, and its
    input schema under the provider's ``schema_key``."""
    described = {"description": tool.description} if tool.description else {}
    return {"name": tool.name, **described, schema_key: dict(tool.input_schema)}


def stop_reason(table: Mapping[str, str], value: Any) -> str | None:
    """A provider's stop reason as MCP's (``table``), or as it is when MCP has no name for it."""
    return table.get(value, value) if isinstance(value, str) else None


class ProviderHandler:
    """A ``sampling_handler`` answering ``sampling/createMessage`` with an LLM provider's
    HTTP API; :class:`OpenAIHandler`, :class:`AnthropicHandler` and :class:`GeminiHandler`
    are the providers.

    Args:
        model: the model asked when the request's hints choose none.
        api_key: the provider's key; by default read from the provider's environment
            variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``). It is
            sent only in the provider's auth header, never logged nor put in an error.
        base_url: the API's root, for a compatible server or a gateway (no key needed when
            given and none is set).
        models: model preferences: a request's hints, in order, choose the first model
            whose key the hint's name contains (case-insensitive), e.g.
            ``{"sonnet": "claude-sonnet-4-5", "haiku": "claude-haiku-4-5"}``. Hints never
            name a model directly: the server chooses only among the models you list.
        system_prompt: put before the request's own ``systemPrompt``.
        temperature: used when the request gives none.
        max_tokens: an upper bound on the request's ``maxTokens``.
        timeout: seconds one call may take (connecting: at most 10).
        headers: more HTTP headers for each call (an organization, a gateway's).
        extra: more members of each request body (``{"reasoning_effort": "low"}``).
        http_client: an ``httpx2.AsyncClient`` of yours (its own timeouts and proxies);
            by default each call opens one of its own.
    """

    #: The provider's name, in errors.
    provider: ClassVar[str] = ""
    #: The environment variable the key is read from.
    key_env: ClassVar[str] = ""
    #: The API's root.
    default_base_url: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        models: Mapping[str, str] | None = None,
        system_prompt: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._httpx2 = _httpx2()
        key = api_key if api_key is not None else os.environ.get(self.key_env)
        if not key and base_url is None:
            raise ValueError(f"no {self.provider} API key: pass api_key= or set {self.key_env}")
        self.model = model
        self._key = key or ""
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.models = dict(models or {})
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        self._client = http_client

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    async def __call__(
        self, params: CreateMessageRequestParams, ctx: ServerRequestContext | None = None, /
    ) -> CreateMessageResult:
        """Answer one ``sampling/createMessage`` (the :class:`~mcpkit.SamplingHandler` shape)."""
        model = self.choose_model(params.model_preferences)
        url, body = self.request(params, model)
        body.update(self.extra)
        data = await self._post(url, body)
        return self.result(data, model)

    # ------------------------------------------------------------ what providers define

    def request(self, params: CreateMessageRequestParams, model: str) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body of the provider's call for ``params``."""
        raise NotImplementedError

    def result(self, data: Any, model: str) -> CreateMessageResult:
        """The provider's JSON answer as a :class:`~mcpkit.types.CreateMessageResult`."""
        raise NotImplementedError

    def auth_headers(self) -> dict[str, str]:
        """The headers carrying the key."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared

    def choose_model(self, preferences: ModelPreferences | None) -> str:
        """The model the request's hints choose among :attr:`models`, else :attr:`model`."""
        for hint in (preferences.hints or []) if preferences is not None else []:
            name = (hint.name or "").lower()
            for key, model in self.models.items():
                if name and key.lower() in name:
                    return model
        return self.model

    def system(self, params: CreateMessageRequestParams) -> str | None:
        """The handler's system prompt, then the request's."""
        parts = [p for p in (self.system_prompt, params.system_prompt) if p]
        return "\n\n".join(parts) if parts else None

    def limits(self, params: CreateMessageRequestParams) -> tuple[int, float | None]:
        """(max tokens, temperature) of a call: the request's, bounded and defaulted."""
        tokens = params.max_tokens
        if self.max_tokens is not None:
            tokens = min(tokens, self.max_tokens)
        temperature = params.temperature if params.temperature is not None else self.temperature
        return tokens, temperature

    def unsupported(self, what: str) -> InvalidParams:
        """The error for content the provider's API cannot take."""
        return InvalidParams(message=f"{self.provider}'s API does not accept {what}")

    def tool_result_text(self, block: ToolResultContent) -> str:
        """A tool result as text, for the APIs whose tool results are text."""
        parts: list[str] = []
        for b in block.content:
            if isinstance(b, TextContent):
                parts.append(b.text)
            elif isinstance(b, EmbeddedResource) and isinstance(b.resource, TextResourceContents):
                parts.append(b.resource.text)
            elif isinstance(b, ResourceLink):
                parts.append(f"(resource {b.uri})")
            else:
                raise self.unsupported(f"{b.type} content in tool results")
        if not parts and block.structured_content is not None:
            parts.append(orjson.dumps(block.structured_content).decode())
        return "\n".join(parts)

    def tool_use(
        self, call_id: str, name: str, arguments: Any, meta: dict[str, Any] | None = None
    ) -> ToolUseContent:
        """A tool call of the model's; its arguments must be a JSON object."""
        if isinstance(arguments, str):
            try:
                arguments = orjson.loads(arguments or "{}")
            except orjson.JSONDecodeError:
                arguments = None
        if not isinstance(arguments, dict):
            raise InternalError(
                message=f"{self.provider}'s model called {name!r} with arguments that are not a JSON object"
            )
        return ToolUseContent(id=call_id, name=name, input=arguments, _meta=meta)

    def answer(
        self, texts: Sequence[str], calls: Sequence[ToolUseContent], model: str, stop: str | None
    ) -> CreateMessageResult:
        """The result: one text block alone, or the text and tool calls as a list."""
        text = "".join(texts)
        if not calls:
            return CreateMessageResult(
                role="assistant", content=TextContent(text=text), model=model, stopReason=stop
            )
        content: list[Any] = [TextContent(text=text)] if text else []
        return CreateMessageResult(
            role="assistant", content=[*content, *calls], model=model, stopReason="toolUse"
        )

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        httpx2 = self._httpx2
        headers = {"content-type": "application/json", **self.auth_headers(), **self.headers}
        content = orjson.dumps(body)
        try:
            # httpx2's timeouts bound each phase (a read between bytes); the whole call is
            # bounded too, whatever a client of the user's says.
            with anyio.fail_after(self.timeout):
                if self._client is not None:
                    response = await self._client.post(url, content=content, headers=headers)
                else:
                    timeout = httpx2.Timeout(self.timeout, connect=min(10.0, self.timeout))
                    async with httpx2.AsyncClient(timeout=timeout) as client:
                        response = await client.post(url, content=content, headers=headers)
        except (httpx2.TimeoutException, TimeoutError):
            raise InternalError(
                message=f"{self.provider}'s API did not answer within {self.timeout:g} s"
            ) from None
        except httpx2.HTTPError as e:
            raise InternalError(
                message=f"could not reach {self.provider}'s API at {self.base_url}: {type(e).__name__}"
            ) from None
        if response.status_code >= 400:
            raise InternalError(message=self._error_text(response))
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise InternalError(
                message=f"{self.provider}'s API answered {response.status_code} with a body that is not JSON"
            ) from None

    def _error_text(self, response: Any) -> str:
        """``<provider> API error <status> (<kind>): <its message>``, without the key."""
        detail, kind = "", ""
        try:
            error = orjson.loads(response.content).get("error")
        except (orjson.JSONDecodeError, AttributeError):
            error = None
        if isinstance(error, Mapping):
            detail = str(error.get("message") or "")
            kind = str(error.get("type") or error.get("status") or error.get("code") or "")
        elif isinstance(error, str):
            detail = error
        else:
            detail = response.text[:MAX_ERROR_TEXT]
        text = f"{self.provider} API error {response.status_code}"
        text += f" ({kind})" if kind else ""
        text += f": {detail[:MAX_ERROR_TEXT]}" if detail else ""
        retry = response.headers.get("retry-after")
        if retry:
            text += f" (retry after {retry[:20]} s)"
        if self._key:
            text = text.replace(self._key, "***")
        return text
