"""What the server needs to know about a user function, computed once at registration.

``describe(fn)`` gives the input schema, the parameter that wants the :class:`Context`, an
argument validator returning one message per problem, and the output schema. The schema
work itself lives in :mod:`mcpkit._server._schema`; this module adapts it to what the
registries need.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FuncInfo:
    """The precomputed facts about one user function."""

    input_schema: dict[str, Any]
    #: The name of the parameter that receives the Context (None: the function wants none).
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
    #: The return annotation (``inspect.Signature.empty`` when absent).
    return_annotation: Any


def describe(fn: Callable[..., Any], context_type: type, *, allow_refs: bool = False) -> FuncInfo:
    """Inspect ``fn`` once; raise ``TypeError`` with a clear message for what cannot be served."""
    sig = _fallback_signature(fn, context_type)
    props = sig.input_schema.get("properties") or {}
    descriptions = {
        name: p["description"]
        for name, p in props.items()
        if isinstance(p, dict) and isinstance(p.get("description"), str)
    }
    return FuncInfo(
        input_schema=sig.input_schema,
        context_param=sig.context_param,
        params=tuple(sig.param_names),
        required=tuple(sig.input_schema.get("required") or ()),
        validate=sig.validate,
        param_descriptions=descriptions,
        output_schema=sig.output_schema,
        wrap_output=sig.wrap_output,
        return_annotation=inspect.signature(fn).return_annotation,
    )


# ---------------------------------------------------------------------------- fallback
# Used until the schema module lands: pydantic builds the schema and validates.


@dataclass
class _Sig:
    input_schema: dict[str, Any]
    context_param: str | None
    param_names: list[str]
    validate: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]]
    output_schema: dict[str, Any] | None
    wrap_output: bool


def _fallback_signature(fn: Callable[..., Any], context_type: type) -> _Sig:
    import typing

    import pydantic

    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    ctx: str | None = None
    for name, p in sig.parameters.items():
        ann = hints.get(name, Any)
        if ann is context_type or (isinstance(ann, type) and issubclass(ann, context_type)):
            ctx = name
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        fields[name] = (ann, ... if p.default is p.empty else p.default)
    model = pydantic.create_model(f"{getattr(fn, '__name__', 'fn')}_arguments", **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in (schema.get("properties") or {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    names = list(fields)
    validator = model.__pydantic_validator__

    def validate(arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        try:
            m = validator.validate_python(arguments)
        except pydantic.ValidationError as e:
            problems = []
            for err in e.errors():
                loc = ".".join(str(x) for x in err["loc"]) or "arguments"
                problems.append(f"{loc}: {err['msg']}")
            return {}, problems
        return {n: getattr(m, n) for n in names}, []

    out: dict[str, Any] | None = None
    wrap = False
    ret = hints.get("return", inspect.Signature.empty)
    if ret not in (inspect.Signature.empty, None, type(None), str, Any):
        try:
            if isinstance(ret, type) and issubclass(ret, pydantic.BaseModel):
                out = pydantic.TypeAdapter(ret).json_schema()
            elif ret in (int, float, bool):
                wrap = True
                out = {
                    "type": "object",
                    "properties": {"result": pydantic.TypeAdapter(ret).json_schema()},
                    "required": ["result"],
                }
        except Exception:
            out = None
    return _Sig(schema, ctx, names, validate, out, wrap)
