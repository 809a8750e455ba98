"""Prompts: arguments from the signature, messages from whatever the function returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import InvalidParams, MCPError, ProtocolError
from ..types._metakeys import check_meta
from ._depends import with_dependencies
from ._func import FuncInfo
from ._util import is_mcp_model, make_caller, to_wire

if TYPE_CHECKING:
    from ._callface import CallContext

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


class PromptDef:
    """A registered prompt."""

    __slots__ = ("_call", "context_param", "definition", "info", "name")

    def __init__(
        self,
        fn: Callable[..., Any],
        info: FuncInfo,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.name = name
        self.info = info
        self.context_param = info.context_param
        # ``inline``: a sync function run on the event loop, its author's choice.
        self._call = with_dependencies(make_caller(fn, inline=inline), info.dependencies)
        d: dict[str, Any] = {"name": name}
        if title is not None:
            d["title"] = title
        if description is not None:
            d["description"] = description
        if info.params:
            args = []
            for p in info.params:
                a: dict[str, Any] = {"name": p}
                desc = info.param_descriptions.get(p)
                if desc:
                    a["description"] = desc
                a["required"] = p in info.required
                args.append(a)
            d["arguments"] = args
        if icons:
            d["icons"] = [to_wire(i) for i in icons]
        if meta is not None:
            check_meta(meta, f"{d.get('name') or d.get('uri') or d.get('uriTemplate')}")
            d["_meta"] = dict(meta)
        self.definition = d

    async def get(self, arguments: dict[str, Any], ctx: CallContext | None) -> dict[str, Any]:
        missing = [r for r in self.info.required if r not in arguments]
        if missing:
            raise InvalidParams(
                message=f"Invalid params: prompt {self.name!r} needs argument(s) {', '.join(missing)}",
                data={"missing": missing},
            )
        unknown = [k for k in arguments if k not in self.info.params]
        if unknown:
            raise InvalidParams(
                message=f"Invalid params: prompt {self.name!r} has no argument(s) {', '.join(unknown)}",
                data={"unknown": unknown},
            )
        kwargs, problems = self.info.validate(arguments)
        if problems:
            raise InvalidParams(
                message=f"Invalid params for prompt {self.name!r}: " + "; ".join(problems)
            )
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        try:
            value = await self._call(kwargs)
        except ProtocolError:
            raise
        except MCPError as e:
            raise ProtocolError(message=f"Error rendering prompt {self.name}: {e}") from e
        result = prompt_result(value)
        if "description" not in result and "description" in self.definition:
            result["description"] = self.definition["description"]
        return result


def prompt_result(value: Any) -> dict[str, Any]:
    """Turn what a prompt function returned into a ``GetPromptResult`` dict.

    Accepted: a string (one user message), a content block (one user message), a message
    (``PromptMessage`` or ``{"role", "content"}``), a list of any of these, or a whole
    ``GetPromptResult``.
    """
    if is_mcp_model(value):
        wire = value.to_wire()
        if "messages" in wire:
            return wire
        return {"messages": [_message(wire)]}
    if isinstance(value, dict) and "messages" in value:
        return value
    if isinstance(value, (list, tuple)):
        return {"messages": [_message(to_wire(v)) for v in value]}
    return {"messages": [_message(to_wire(value))]}


def _message(v: Any) -> dict[str, Any]:
    if isinstance(v, str):
        return {"role": "user", "content": {"type": "text", "text": v}}
    if isinstance(v, dict):
        if "role" in v and "content" in v:
            content = to_wire(v["content"])
            if isinstance(content, str):
                content = {"type": "text", "text": content}
            return {**v, "content": content}
        if v.get("type") in _CONTENT_TYPES:
            return {"role": "user", "content": v}
    raise TypeError(
        f"a prompt must return messages, strings or content blocks, not {type(v).__name__}"
    )
