"""Ready ``sampling_handler``\\ s for a :class:`~mcpkit.Client`: a server's
``sampling/createMessage`` answered by an LLM provider's HTTP API, tool use included.

::

    from mcpkit import Client
    from mcpkit.sampling import AnthropicHandler

    sample = AnthropicHandler("claude-sonnet-4-5", models={"haiku": "claude-haiku-4-5"})
    # async with Client(target, sampling_handler=sample, sampling_tools=True) as client: ...

:class:`OpenAIHandler` (Chat Completions, and the servers compatible with it through
``base_url``), :class:`AnthropicHandler` (Messages) and :class:`GeminiHandler`
(``generateContent``) map the request's messages (text, images, audio where the provider
takes it, tool calls and tool results), system prompt, token limit, temperature, stop
sequences, tools and tool choice to the provider's request, and its reply (text, tool calls,
stop reason, model) back to a ``CreateMessageResult``. A provider's error status comes back
to the server as a JSON-RPC error naming the status and the provider's message; the key
(from ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` or ``GEMINI_API_KEY`` by default) is never
in it. Options common to all three: :class:`ProviderHandler`. They call the APIs with
httpx2, which the ``[llm]`` extra brings.
"""

from __future__ import annotations

from ._sampling import AnthropicHandler, GeminiHandler, OpenAIHandler, ProviderHandler

__all__ = ["AnthropicHandler", "GeminiHandler", "OpenAIHandler", "ProviderHandler"]
