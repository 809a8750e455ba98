"""What the server needs to know about a user function, computed once at registration.

The schema work lives in :mod:`mcpkit._server._schema`; this module adapts its
:class:`~mcpkit._server._schema.ToolSignature` to what the registries need.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._ask import AskedParam
from ._depends import Dependencies
from ._schema import ToolSignature, build_signature
from ._util import name_of


@dataclass(frozen=True)
class FuncInfo:
    """The precomputed facts about one user function."""

    input_schema: dict[str, Any]
    #: The docstring's description (None without a docstring).
    description: str | None
    #: The name of the parameter that receives the Context (None: the function wants none).
    #: A function with dependencies always receives it (under ``_depends.CONTEXT_KEY`` when
    #: it names none): its dependencies may take it, and the overrides are found through it.
    context_param: str | None
    #: Parameter names, in order, excluding the Context.
    params: tuple[str, ...]
    #: Parameters without a default.
    required: tuple[str, ...]
    #: ``validate(arguments) -> (kwargs, problems)``: kwargs ready for the call, or problems.
    validate: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]]
    #: Per-parameter descriptions (from ``Annotated``/``Field`` or the docstring).
    param_descriptions: dict[str, str]
    #: The output schema derived from the return annotation (None when not structured).
    output_schema: dict[str, Any] | None
    #: True when structured results must be wrapped as ``{"result": value}``.
    wrap_output: bool
    #: ``serialize(value)``: the ``structuredContent`` for a return value.
    serialize: Callable[[Any], Any]
    #: ``check_output(value)``: None when a return value fits the return annotation, else why
    #: not (None as a whole when there is no structured output to check).
    check_output: Callable[[Any], str | None] | None
    #: Parameters the user fills in before the call (``Annotated[T, Ask(...)]``: tools only).
    asked: tuple[AskedParam, ...] = ()
    #: Whether the function takes ``**kwargs`` (tools only): it receives unknown arguments.
    var_keyword: bool = False
    #: The parameters the server fills in (``Depends``), planned; None: there are none.
    dependencies: Dependencies | None = None


def describe(
    fn: Callable[..., Any],
    context_type: type,
    *,
    allow_refs: bool = False,
    allow_asks: bool = False,
    extras: str | None = None,
) -> FuncInfo:
    """Inspect ``fn`` once; raise ``TypeError`` with a clear message for what cannot be
    served (``Ask`` parameters unless ``allow_asks``: only a tool's call asks them).

    ``extras``, a tool's ``extra_arguments``: ``"forbid"`` refuses arguments ``fn`` does not
    name (its schema says ``additionalProperties: false``), ``"ignore"`` drops them; either
    way a tool may take ``**kwargs``, which receives them instead. None (prompts, resource
    templates): unknown arguments are ignored, and ``**kwargs`` is refused. Prompts stay
    lenient because the spec asks nothing of them: only tools' schemas can say "closed".
    """
    if extras not in (None, "forbid", "ignore"):
        raise ValueError(
            f"{name_of(fn)!r}: extra_arguments must be 'forbid' or 'ignore', not {extras!r}"
        )
    try:
        sig: ToolSignature = build_signature(
            fn,
            context_type=context_type,
            strict_refs=allow_refs,
            forbid_unknown=extras == "forbid",
            var_keyword=extras is not None,
        )
    except (TypeError, ValueError):
        raise
    except Exception as e:  # whatever inspecting the function raised, named for the author
        raise TypeError(f"cannot serve {name_of(fn)!r}: {e}") from e
    if sig.asked and not allow_asks:
        raise TypeError(
            f"{name_of(fn)!r}: Ask() marks a tool's parameter (asked before the tool runs); "
            f"here, ask inside the function with ctx.elicit (parameter {sig.asked[0].name!r})"
        )
    return FuncInfo(
        input_schema=sig.input_schema,
        description=sig.description,
        context_param=sig.dependencies.context if sig.dependencies else sig.context_param,
        params=tuple(sig.param_names),
        required=tuple(a.name for a in sig.arguments if a.required),
        validate=sig.try_validate,
        param_descriptions={a.name: a.description for a in sig.arguments if a.description},
        output_schema=sig.output_schema,
        wrap_output=sig.wrap_output,
        serialize=sig.serialize_output,
        check_output=_output_checker(sig),
        asked=sig.asked,
        var_keyword=sig.var_keyword is not None,
        dependencies=sig.dependencies,
    )


def context_param_of(fn: Callable[..., Any], context_type: type) -> str | None:
    """The name of ``fn``'s parameter annotated ``context_type`` (None: it takes none)."""
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # an annotation that does not evaluate: read them as written
        hints = getattr(fn, "__annotations__", {})
    for pname, ann in hints.items():
        if pname != "return" and (ann is context_type or ann == context_type.__name__):
            return str(pname)
    return None


def _output_checker(sig: ToolSignature) -> Callable[[Any], str | None] | None:
    if sig.output_schema is None:
        return None
    from pydantic import TypeAdapter, ValidationError

    adapter = getattr(sig, "_output_adapter", None)
    if adapter is None:
        try:
            adapter = TypeAdapter(sig.return_annotation)
        except Exception:
            return None
    validate = adapter.validate_python

    def check(value: Any) -> str | None:
        try:
            validate(value)
        except ValidationError as e:
            return "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
                for err in e.errors(include_url=False)
            )
        return None

    return check
