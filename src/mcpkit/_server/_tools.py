"""Tools: registration (everything precomputed) and the ``tools/call`` path."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import UNAVAILABLE, BackendUnavailable, MCPError, ProtocolError, ToolError
from .._http._headers import header_params
from ..types._dialects import UnsupportedDialect, schema_dialect
from ..types._jsonschema import schema_errors
from ..types._metakeys import check_meta
from ._argproblems import unknown_arguments_line
from ._ask import ask_all
from ._depends import with_dependencies
from ._func import FuncInfo
from ._threads import RaisedBaseException, SyncRunner, contained, is_async_callable
from ._util import (
    check_finite,
    dumps_text,
    is_base_model,
    is_mcp_model,
    jsonable,
    make_caller,
    readable_str,
    to_wire,
)

if TYPE_CHECKING:
    from ._callface import CallContext

logger = logging.getLogger("mcpkit.server")

#: The characters and length the spec recommends for tool names.
TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]{1,128}")

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def check_tool_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` follows the spec's tool name rules."""
    if not TOOL_NAME_RE.fullmatch(name):
        raise ValueError(
            f"invalid tool name {name!r}: use 1 to 128 characters among A-Z, a-z, 0-9, '_', '-' and '.'"
        )


def error_result(text: str) -> dict[str, Any]:
    """A ``CallToolResult`` reporting a tool execution error."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


class ToolDef:
    """A registered tool, with everything the call path needs computed in advance."""

    __slots__ = (
        "_call",
        "_direct",
        "_inline_runner",
        "asked",
        "check_output",
        "context_param",
        "defer_task",
        "definition",
        "fn",
        "header_params",
        "info",
        "mask_errors",
        "name",
        "output_schema",
        "serialize",
        "task_support",
        "validate",
        "wrap_output",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        info: FuncInfo,
        *,
        name: str,
        title: str | None,
        description: str | None,
        input_schema: Mapping[str, Any] | None,
        output_schema: Mapping[str, Any] | bool | None,
        annotations: Any,
        icons: Sequence[Any] | None,
        meta: Mapping[str, Any] | None,
        task_support: str | None,
        mask_errors: bool,
        defer_task: bool = False,
        inline: bool = False,
    ) -> None:
        self.fn = fn
        self.info = info
        self.name = name
        self.context_param = info.context_param
        #: Parameters the user fills in before the body runs (``Ask``).
        self.asked = info.asked
        self.mask_errors = mask_errors
        if task_support not in (None, "forbidden", "optional", "required"):
            raise ValueError(
                f"tool {name!r}: task_support must be 'forbidden', 'optional' or 'required'"
            )
        #: Whether the tool runs as a task: None/"forbidden", "optional" or "required".
        self.task_support = task_support
        #: Under the tasks extension, run in the request until ``ctx.begin_task()``.
        self.defer_task = defer_task
        #: ``inline``: a sync function run on the event loop, its author's choice (else in
        #: a worker thread, so that a slow call never stalls the other requests).
        self._call = with_dependencies(make_caller(fn, inline=inline), info.dependencies)
        #: An ``async def`` with no dependencies, awaited with no wrapper of its own (what
        #: the caller would do with a BaseException, :meth:`call` does): one coroutine less
        #: per call, also held for as long as the call waits.
        self._direct = fn if info.dependencies is None and is_async_callable(fn) else None
        call = self._call
        #: The runner of a tool that may be served at once (see :attr:`at_once`), else None.
        self._inline_runner = (
            call
            if type(call) is SyncRunner
            and call.inline
            and self.context_param is None
            and not self.asked
            and task_support in (None, "forbidden")
            else None
        )
        if input_schema is not None:
            # An explicit schema is kept exactly as written; arguments are then checked
            # against it with jsonschema instead of the signature.
            schema = dict(input_schema)
            if schema.get("type") != "object":
                raise ValueError(f"tool {name!r}: an input schema must have type 'object'")
            try:
                schema_dialect(schema)
            except UnsupportedDialect as e:
                raise ValueError(f"tool {name!r}: input schema: {e}") from None
            self.validate = _jsonschema_validator(schema, info)
        else:
            schema = info.input_schema
            self.validate = info.validate
        out: dict[str, Any] | None
        self.serialize: Callable[[Any], Any] = info.serialize
        self.check_output: Callable[[Any], str | None] | None = info.check_output
        if output_schema is False:
            out, self.wrap_output = None, False
        elif output_schema is None or output_schema is True:
            out, self.wrap_output = info.output_schema, info.wrap_output
        else:
            # An explicit output schema: results are sent as the function returns them.
            out, self.wrap_output = dict(output_schema), False
            try:
                schema_dialect(out)
            except UnsupportedDialect as e:
                raise ValueError(f"tool {name!r}: output schema: {e}") from None
            self.serialize = jsonable
            self.check_output = None
        self.output_schema = out
        #: ``(header name, property path)`` of each argument marked ``x-mcp-header``: what
        #: a 2026-07-28 client mirrors into ``Mcp-Param-{Name}`` and the server checks.
        self.header_params = _header_params(name, schema)
        d: dict[str, Any] = {"name": name}
        if title is not None:
            d["title"] = title
        if description is not None:
            d["description"] = description
        d["inputSchema"] = schema
        if out is not None:
            d["outputSchema"] = out
        if annotations is not None:
            d["annotations"] = dict(to_wire(annotations))
        if icons:
            d["icons"] = [to_wire(i) for i in icons]
        if task_support is not None:
            d["execution"] = {"taskSupport": task_support}
        if meta is not None:
            check_meta(meta, f"{d.get('name') or d.get('uri') or d.get('uriTemplate')}")
            d["_meta"] = dict(meta)
        #: The ``Tool`` object as listed.
        self.definition = d

    @property
    def at_once(self) -> bool:
        """Whether a call ends without waiting: a sync function run on the loop (its
        author's ``inline=True``; see ``SyncRunner``), given no Context, never a task.
        Asked of every ``tools/call``: what cannot change is decided at registration."""
        runner = self._inline_runner
        return runner is not None and runner.inline

    async def call(self, arguments: dict[str, Any], ctx: CallContext | None) -> dict[str, Any]:
        """Run the tool; every failure of the tool itself becomes an ``isError`` result."""
        kwargs, problems = self.validate(arguments)
        if problems:
            return error_result(
                f"Invalid arguments for tool {self.name!r}:\n"
                + "\n".join(f"- {p}" for p in problems)
            )
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        try:
            if self.asked:
                assert ctx is not None  # the server gives one to a tool that asks
                answers, refused = await ask_all(ctx, self.asked)
                if refused is not None:
                    return error_result(refused)
                kwargs.update(answers)
            direct = self._direct
            value = await (direct(**kwargs) if direct is not None else self._call(kwargs))
        except ToolError as e:
            return error_result(str(e) or f"Error executing tool {self.name}")
        except ProtocolError:
            # Deliberate JSON-RPC errors (e.g. -32042 URL elicitation required) go out as such.
            raise
        except BackendUnavailable as e:
            # The shared state (Redis) down: its message names the instance, which is not
            # the client's to know; the client may retry.
            logger.warning("tool %r: %s", self.name, e)
            return error_result(f"Error executing tool {self.name}: {UNAVAILABLE}")
        except MCPError as e:
            # Our own errors (capability missing, timeouts) carry clear messages worth showing.
            return error_result(f"Error executing tool {self.name}: {e}")
        except Exception as e:
            # A tool raising KeyboardInterrupt, SystemExit, ... arrives here as a
            # RaisedBaseException (its caller, _threads.make_caller): named by what it raised.
            return self._failed(e)
        except BaseException as e:
            # From a function awaited directly: the caller's rule (_threads.contained).
            failure = contained(e)
            if failure is e:
                raise
            return self._failed(failure)
        try:
            return self.convert(value)
        except Exception as e:
            logger.exception("tool %r returned a value that cannot be sent", self.name)
            return error_result(
                f"Error executing tool {self.name}: its result could not be converted ({e})"
            )

    def _failed(self, e: BaseException) -> dict[str, Any]:
        logger.exception("tool %r failed", self.name)
        if self.mask_errors:
            return error_result(f"Error executing tool {self.name}")
        what = str(e) if type(e) is RaisedBaseException else f"{type(e).__name__}: {e}"
        return error_result(f"Error executing tool {self.name}: {what}")

    def convert(self, value: Any) -> dict[str, Any]:
        """Turn a tool's return value into a ``CallToolResult`` dict."""
        if type(value) is str and self.output_schema is None:
            return {"content": [{"type": "text", "text": value}]}
        if is_mcp_model(value):
            wire = value.to_wire()
            if "content" in wire and (
                "isError" in wire or "structuredContent" in wire or _is_result(value)
            ):
                return wire
            if wire.get("type") in _CONTENT_TYPES:
                return {"content": [wire]}
        if self.output_schema is not None:
            check = self.check_output
            if check is not None:
                problem = check(value)
                if problem is not None:
                    # The output schema is a promise (servers MUST conform to it): a result
                    # that breaks it is reported as a failure, not sent.
                    logger.error(
                        "tool %r returned a value not matching its return type: %s",
                        self.name,
                        problem,
                    )
                    return error_result(
                        f"Error executing tool {self.name}: its result does not match its output schema ({problem})"
                    )
            data = check_finite(self.serialize(value))
            shown = data["result"] if self.wrap_output else data
            return {
                "content": [{"type": "text", "text": _text_of(shown)}],
                "structuredContent": data,
            }
        if value is None:
            return {"content": []}
        if isinstance(value, (list, tuple)) and value and all(_is_content(v) for v in value):
            return {"content": [_content_of(v) for v in value]}
        if isinstance(value, dict) and value.get("type") in _CONTENT_TYPES:
            return {"content": [value]}
        if (
            isinstance(value, dict)
            or is_base_model(value)
            or (dataclasses.is_dataclass(value) and not isinstance(value, type))
        ):
            # Checked before and after: jsonable's orjson round trip turns NaN into null.
            data = check_finite(jsonable(check_finite(value)))
            return {
                "content": [{"type": "text", "text": dumps_text(data)}],
                "structuredContent": data,
            }
        if isinstance(value, (int, float, bool, list, tuple)):
            return {
                "content": [{"type": "text", "text": dumps_text(jsonable(check_finite(value)))}]
            }
        if isinstance(value, (bytes, bytearray)):
            raise TypeError(
                "return bytes inside ImageContent, AudioContent or EmbeddedResource, not raw"
            )
        return {"content": [{"type": "text", "text": readable_str(value)}]}


def _text_of(data: Any) -> str:
    return data if isinstance(data, str) else dumps_text(data)


def _is_result(value: Any) -> bool:
    from ..types import CallToolResult

    return isinstance(value, CallToolResult)


def _is_content(v: Any) -> bool:
    if isinstance(v, str):
        return True
    if is_mcp_model(v):
        return getattr(v, "type", None) in _CONTENT_TYPES
    return isinstance(v, dict) and v.get("type") in _CONTENT_TYPES


def _content_of(v: Any) -> dict[str, Any]:
    if isinstance(v, str):
        return {"type": "text", "text": v}
    if is_mcp_model(v):
        return v.to_wire()
    assert isinstance(v, dict)
    return v


def _jsonschema_validator(
    schema: dict[str, Any], info: FuncInfo
) -> Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]]:
    """Validate arguments against an explicit JSON schema, then pass them by name.

    The schema decides about unknown arguments: under a top-level ``additionalProperties:
    false`` they are refused in the same line as a derived schema's; else they pass, and
    reach the function only through its ``**kwargs``.
    """
    params = set(info.params)
    takes_all = info.var_keyword
    check = _schema_checker(schema)
    closed = schema.get("additionalProperties") is False and not schema.get("patternProperties")
    props = schema.get("properties")
    declared = tuple(props) if isinstance(props, dict) else ()

    def validate(arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        problems = check(arguments)
        if problems:
            if closed and isinstance(arguments, dict):
                unknown = [k for k in arguments if k not in declared]
                if unknown:
                    # One line naming the accepted ones, instead of one per unknown key.
                    problems = [p for p in problems if not p.startswith("$: unexpected property")]
                    problems.insert(0, unknown_arguments_line(unknown, declared))
            return {}, problems
        if takes_all:
            return dict(arguments), []
        return {k: v for k, v in arguments.items() if k in params}, []

    return validate


def _schema_checker(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    # One validator, the same in tests as for users (2020-12 and draft-07, by the schema's
    # declared dialect): never a better one that only happens to be installed.
    return lambda arguments: schema_errors(arguments, schema)


def _header_params(name: str, schema: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The tool's ``x-mcp-header`` marks, checked here as every client checks them: a tool
    whose marks break the rules would silently vanish from their lists (streamable-http.mdx)."""
    try:
        return tuple(header_params(schema))
    except ValueError as e:
        raise ValueError(f"tool {name!r}: input schema: {e}") from None
