"""Sampling handlers on LLM providers' HTTP APIs (public as :mod:`mcpkit.sampling`)."""

from ._anthropic import AnthropicHandler
from ._base import ProviderHandler
from ._gemini import GeminiHandler
from ._openai import OpenAIHandler

__all__ = ["AnthropicHandler", "GeminiHandler", "OpenAIHandler", "ProviderHandler"]
