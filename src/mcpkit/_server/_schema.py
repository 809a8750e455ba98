"""From a Python function to what MCP needs: argument schemas and validation, structured output.

Everything here runs once per function, at registration (:func:`build_signature`), except
:meth:`ToolSignature.validate` and :func:`serialize_output`, which run on every call and are
kept cheap: one pydantic validator built at registration, and a pure-Python fast path for
signatures made only of ``str``/``int``/``float``/``bool`` parameters. Such signatures get
their schema without pydantic too (:func:`_scalar_schema`, held to pydantic's output by the
tests), and their validator is built only when a call first needs coercion or an error
message, so a server of plain tools never imports pydantic (start-up time, idle memory).

This module reads functions (parameters, hints, docstrings) and checks arguments; turning
types into JSON Schemas (``$ref`` inlining, titles, output schemas) is :mod:`._schemagen`'s.

Argument choices, and why:

* Unknown arguments are ignored unless ``forbid_unknown=True``, which refuses them in one
  line naming the accepted ones and emits ``additionalProperties: false``: tools pass it by
  default (a model that misspells an argument hears so), prompts do not. With
  ``var_keyword=True`` a function may take ``**kwargs``, which receives the unknown arguments
  (its schema then allows extra properties: any, or those of its annotation, e.g.
  ``**labels: str``, which are then checked like the named ones).
* Descriptions of parameters: ``Field(description=...)`` wins over ``Annotated[x, "text"]``,
  which wins over the docstring (Google ``Args:``, NumPy ``Parameters``, reST ``:param x:``).
  The function's description is the docstring's prose before its first section (all of its
  paragraphs, not only the first: the later ones usually tell the model *when* to call).
* Validation problems are one line each, named by argument path (``person.address.zip``,
  ``items[2]``); the failed branches of a union are merged into one line, because
  pydantic's per-branch locations (``u.int``, ``u.str``) read like field names.

Cost (Python 3.11, 2 shared cores): ``validate`` of a one-string-argument tool takes about
0.5 µs on the fast path, 1.3 µs through pydantic (a constrained string), 2 µs for a small
model argument; ``build_signature`` about 1 ms per function.
"""

from __future__ import annotations

import enum
import inspect
import math
import sys
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, get_args, get_origin

import orjson

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter
    from pydantic.fields import FieldInfo
    from typing_extensions import TypeIs
from ._argproblems import (
    ArgumentError,
    extras_of,
    format_errors,
    short_repr,
    unknown_arguments_line,
)
from ._ask import AskedParam, asked_param
from ._depends import CONTEXT_KEY, Dependencies, Depends, depends_of
from ._docstrings import parse_docstring
from ._schemagen import UNION_TYPES, json_schema, output_schema, strip_annotated

__all__ = [
    "ArgumentError",
    "ArgumentInfo",
    "ToolSignature",
    "build_signature",
    "output_schema_for",
    "parse_docstring",
    "serialize_output",
]

_EMPTY = inspect.Parameter.empty
_MISSING: Any = object()

#: The ``pydantic.Field`` arguments of each parameter, by field name (``p0``, ``p1``, ...):
#: ``(annotation, Field kwargs)``.
_Fields = dict[str, tuple[Any, dict[str, Any]]]


class ArgumentInfo(NamedTuple):
    """One argument as MCP lists it for a prompt: name, description (or None), required."""

    name: str
    description: str | None
    required: bool


# --------------------------------------------------------------------------- parameters


def _is_context(tp: Any, context_type: type | None) -> bool:
    if context_type is None:
        return False
    tp, _ = strip_annotated(tp)
    origin = get_origin(tp)
    if origin in UNION_TYPES:
        members = [a for a in get_args(tp) if a is not type(None)]
        return len(members) == 1 and _is_context(members[0], context_type)
    cls = origin if origin is not None else tp
    return isinstance(cls, type) and issubclass(cls, context_type)


_CONSTRAINING_KEYWORDS = frozenset({"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"})


def _accepts_string(schema: Any) -> bool:
    """Whether a property schema may hold a string (then JSON text is left alone)."""
    if not isinstance(schema, dict) or not (_CONSTRAINING_KEYWORDS & schema.keys()):
        return True  # Any (only a default or a description), or unexpected: keep the text
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    if any(isinstance(v, str) for v in schema.get("enum", ())) or isinstance(
        schema.get("const"), str
    ):
        return True
    branches = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
    return any(_accepts_string(sub) for sub in branches)


def _is_multi_union(tp: Any) -> bool:
    """True for a union of two or more non-None types (pydantic tags its errors by member)."""
    tp, _ = strip_annotated(tp)
    if get_origin(tp) not in UNION_TYPES:
        return False
    members = [a for a in get_args(tp) if a is not type(None)]
    return len(members) >= 2


_FAST_TYPES: frozenset[Any] = frozenset({str, int, float, bool})
_IMMUTABLE_DEFAULTS = (str, int, float, bool, bytes, type(None), enum.Enum, tuple, frozenset)


def _fast_kind(tp: Any) -> tuple[type, bool] | None:
    """``(type, nullable)`` when ``tp`` is a bare scalar (or ``scalar | None``), else None."""
    if tp in _FAST_TYPES:
        return tp, False
    if get_origin(tp) in UNION_TYPES:
        args = get_args(tp)
        if len(args) == 2 and type(None) in args:
            other = args[0] if args[1] is type(None) else args[1]
            if other in _FAST_TYPES:
                return other, True
    return None


def _resolve_hints(fn: Callable[..., Any], what: str) -> dict[str, Any]:
    target: Any = fn
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)) and callable(fn):
        inner = getattr(fn, "func", None)  # functools.partial
        if inner is not None and callable(inner):
            target = inner
        elif not inspect.isclass(fn) and hasattr(fn, "__call__"):  # noqa: B004
            target = type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the type hints of {what}: {exc}") from exc


def _callable_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", None)
    if name is None:
        name = getattr(getattr(fn, "func", None), "__name__", None) or type(fn).__name__
    return str(name)


def _docstring(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    if doc is None and not inspect.isroutine(fn) and callable(fn):
        doc = inspect.getdoc(type(fn).__call__)  # a callable object documents its __call__
    return doc


# --------------------------------------------------------------------------- signatures


class _Param(NamedTuple):
    name: str
    field: str
    annotation: Any
    default: Any  # _MISSING when required
    fast: tuple[type, bool] | None


class ToolSignature:
    """What MCP needs to know about one tool or prompt function, computed once.

    Built by :func:`build_signature`. Attributes:

    * ``name``: the function's ``__name__``.
    * ``description``: from the docstring (None without one).
    * ``input_schema``: JSON Schema of the arguments (``type: object``).
    * ``context_param``: name of the parameter that receives the Context, or None.
    * ``param_names``: the parameters the client supplies, in order.
    * ``arguments``: ``[ArgumentInfo(name, description, required), ...]`` (for prompts).
    * ``output_schema`` / ``wrap_output``: see :func:`output_schema_for`.

    >>> def add(a: int, b: int = 1) -> int:
    ...     '''Add two numbers.'''
    ...     return a + b
    >>> sig = build_signature(add)
    >>> sig.input_schema
    {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'default': 1, 'type': 'integer'}}, 'required': ['a']}
    >>> sig.validate({"a": "2"})
    {'a': 2, 'b': 1}
    >>> sig.output_schema, sig.wrap_output
    ({'type': 'object', 'properties': {'result': {'type': 'integer'}}, 'required': ['result']}, True)
    """

    __slots__ = (
        "_build_model",
        "_fast",
        "_forbid_unknown",
        "_json_params",
        "_known",
        "_output_adapter",
        "_params",
        "_union_params",
        "_validator",
        "_var_keyword",
        "_var_keyword_check",
        "arguments",
        "asked",
        "context_param",
        "dependencies",
        "description",
        "fn",
        "input_schema",
        "name",
        "output_schema",
        "param_names",
        "return_annotation",
        "wrap_output",
    )

    fn: Callable[..., Any]
    name: str
    description: str | None
    input_schema: dict[str, Any]
    context_param: str | None
    #: Parameters the user fills in before the call (``Annotated[T, Ask(...)]``).
    asked: tuple[AskedParam, ...]
    #: The parameters the server fills in (``Depends``), planned (None: there are none).
    dependencies: Dependencies | None
    param_names: tuple[str, ...]
    arguments: list[ArgumentInfo]
    output_schema: dict[str, Any] | None
    wrap_output: bool
    return_annotation: Any
    _params: tuple[_Param, ...]
    _known: frozenset[str]
    _forbid_unknown: bool
    #: pydantic_core's SchemaValidator, built at the first call the fast path cannot take.
    _validator: Any
    _build_model: Callable[[], type[BaseModel]]
    _fast: tuple[tuple[str, type, bool, Any], ...] | None
    _output_adapter: TypeAdapter[Any] | None
    _union_params: frozenset[str]
    _json_params: tuple[str, ...]
    #: The name of the ``**kwargs`` parameter receiving unknown arguments (None: none).
    _var_keyword: str | None
    #: Checks and coerces the extras by the ``**kwargs`` annotation (None: taken as they are).
    _var_keyword_check: Callable[[dict[str, Any]], dict[str, Any]] | None

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check and coerce ``arguments``; return the keyword arguments to call the function with.

        Coercion is pydantic's lax mode: ``"5"`` becomes ``5`` for an ``int``, a dict becomes
        the declared model or dataclass instance. Missing optional arguments get their
        default. The Context parameter is not included (the caller injects it).

        Raises :class:`ArgumentError` listing every problem.
        """
        kwargs = self._validate_known(arguments)
        if self._var_keyword is not None and arguments:
            # **kwargs gets what the function does not name, as it arrived.
            known = self._known
            extras = {k: v for k, v in arguments.items() if k not in known}
            check = self._var_keyword_check
            kwargs.update(check(extras) if check is not None and extras else extras)
        return kwargs

    @property
    def var_keyword(self) -> str | None:
        """The ``**kwargs`` parameter receiving unknown arguments (None: the function has none)."""
        return self._var_keyword

    def _validate_known(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, Mapping):
            raise ArgumentError([f"arguments must be an object, got {short_repr(arguments)}"])
        fast = self._fast
        if fast is not None:
            out: dict[str, Any] = {}
            found = 0
            for name, typ, nullable, default in fast:
                value = arguments.get(name, _MISSING)
                if value is _MISSING:
                    if default is _MISSING:
                        break
                    out[name] = default
                elif type(value) is typ or (nullable and value is None):
                    out[name] = value
                    found += 1
                else:
                    break
            else:
                if found == len(arguments) or not self._forbid_unknown:
                    return out
                # Every named argument fits: only the unknown ones are wrong (no pydantic).
                unknown = [key for key in arguments if key not in self._known]
                raise ArgumentError([unknown_arguments_line(unknown, self.param_names)])
        return self._validate_slow(arguments)

    def _validate_slow(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        problems: list[str] = []
        if self._forbid_unknown:
            unknown = [key for key in arguments if key not in self._known]
            if unknown:
                problems.append(unknown_arguments_line(unknown, self.param_names))
        from pydantic import ValidationError

        validator = self._validator
        if validator is None:
            validator = self._validator = self._build_model().__pydantic_validator__
        try:
            model = validator.validate_python(arguments)
        except ValidationError as exc:
            problems[:0] = format_errors(exc.errors(include_url=False), self._union_params)
            raise ArgumentError(problems) from None
        if problems:
            raise ArgumentError(problems)
        values = model.__dict__
        return {p.name: values[p.field] for p in self._params}

    def validate_strings(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Like :meth:`validate`, for arguments that arrive as strings (prompt arguments).

        MCP passes every prompt argument as a string. Scalars coerce by themselves
        (``"3"`` → ``3``, ``"true"`` → ``True``); for parameters that cannot be a string
        (lists, dicts, models, ...), a value that starts with ``[`` or ``{`` is decoded as
        JSON first.

        >>> def plan(steps: list[str], title: str = "") -> str: ...
        >>> build_signature(plan).validate_strings({"steps": '["a", "b"]', "title": "[x]"})
        {'steps': ['a', 'b'], 'title': '[x]'}
        """
        if arguments and self._json_params:
            decoded: dict[str, Any] | None = None
            for name in self._json_params:
                value = arguments.get(name)
                if isinstance(value, str) and value[:1] in ("[", "{"):
                    try:
                        parsed = orjson.loads(value)
                    except orjson.JSONDecodeError:
                        continue  # left as is: validation reports it
                    if decoded is None:
                        decoded = dict(arguments)
                    decoded[name] = parsed
            if decoded is not None:
                arguments = decoded
        return self.validate(arguments)

    def try_validate(self, arguments: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
        """Like :meth:`validate`, but return ``(kwargs, problems)`` instead of raising."""
        try:
            return self.validate(arguments), []
        except ArgumentError as exc:
            return {}, exc.problems

    def serialize_output(self, value: Any) -> Any:
        """The ``structuredContent`` for a return value (wrapped in ``{"result": ...}`` if needed).

        Uses the return annotation's serializer when there is one, so aliases and custom
        serializers apply; falls back to inference for values that do not match it.
        """
        adapter = self._output_adapter
        if adapter is not None:
            from pydantic_core import PydanticSerializationError

            try:
                data = adapter.dump_python(value, mode="json", by_alias=True, warnings=False)
            except PydanticSerializationError as exc:
                raise TypeError(f"cannot serialize the result of `{self.name}`: {exc}") from exc
            return {"result": data} if self.wrap_output else data
        return serialize_output(value, wrap=self.wrap_output)

    def __repr__(self) -> str:
        return f"<ToolSignature {self.name}({', '.join(self.param_names)})>"


def _is_field_info(m: Any) -> TypeIs[FieldInfo]:
    fields = sys.modules.get("pydantic.fields")  # pydantic not imported: no FieldInfo exists
    return fields is not None and isinstance(m, fields.FieldInfo)


_SCALAR_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SCALAR_DEFAULTS = (str, int, float, bool, type(None))


def _scalar_schema(
    params: list[_Param], fields: dict[str, tuple[Any, dict[str, Any]]]
) -> dict[str, Any] | None:
    """The argument schema of a signature of plain scalars, as pydantic would write it.

    Most tools take only strings, numbers and booleans: their schema is built here, without
    pydantic (whose import and model building cost most of a small server's start-up).
    None when any parameter is more than that.
    """
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        if p.fast is None:
            return None
        typ, nullable = p.fast
        _, kwargs = fields[p.field]
        prop: dict[str, Any] = (
            {"anyOf": [{"type": _SCALAR_TYPES[typ]}, {"type": "null"}]}
            if nullable
            else {"type": _SCALAR_TYPES[typ]}
        )
        if p.default is _MISSING:
            required.append(p.name)
        elif type(p.default) in _SCALAR_DEFAULTS and (
            type(p.default) is not float or math.isfinite(p.default)
        ):
            prop["default"] = p.default
        else:
            return None
        if "description" in kwargs:
            prop["description"] = kwargs["description"]
        props[p.name] = prop
    schema: dict[str, Any] = {"properties": props, "type": "object"}
    if required:
        schema["required"] = required
    return schema


def build_signature(
    fn: Callable[..., Any],
    *,
    context_type: type | None = None,
    strict_refs: bool = False,
    forbid_unknown: bool = False,
    var_keyword: bool = False,
) -> ToolSignature:
    """Inspect ``fn`` once and build its :class:`ToolSignature`.

    ``context_type``: parameters annotated with it (a subclass, ``Optional`` of it, or a
    parametrised generic of it) are left out of the schema; their name is ``context_param``.
    ``strict_refs``: keep pydantic's ``$defs``/``$ref`` instead of inlining.
    ``forbid_unknown``: refuse arguments the function does not declare (default: ignore them).
    ``var_keyword``: accept a ``**kwargs`` parameter, which then receives unknown arguments
    (``forbid_unknown`` does not apply to such a function).

    Raises ``TypeError`` for what cannot be served: ``*args`` (``**kwargs`` unless
    ``var_keyword``), positional-only
    parameters, more than one Context parameter, unresolvable or unsupported type hints.
    """
    what = f"`{_callable_name(fn)}`"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot inspect the signature of {what}: {exc}") from exc
    hints = _resolve_hints(fn, what)
    doc_description, doc_params = parse_docstring(_docstring(fn))
    depends: list[tuple[str, Depends]] = []
    fields, params, context_param, asked, var_kw = _collect_params(
        signature, hints, doc_params, context_type, what, var_keyword, depends
    )
    extra_schema: dict[str, Any] | None = None
    extra_check = None
    if var_kw is not None:
        forbid_unknown = False
        extra_schema, extra_check = extras_of(hints.get(var_kw, _EMPTY), strict_refs, what)
    build_model = _model_factory(fn, fields)
    schema, validator = _argument_schema(params, fields, build_model, strict_refs, what)
    input_schema = _input_schema(schema, forbid_unknown)
    if extra_schema is not None:
        input_schema["additionalProperties"] = extra_schema
    props = input_schema["properties"]

    sig = ToolSignature.__new__(ToolSignature)
    sig.fn = fn
    sig.name = _callable_name(fn)
    sig.description = doc_description
    sig.input_schema = input_schema
    sig.context_param = context_param
    sig.asked = tuple(asked)
    sig.dependencies = None
    if depends:
        try:
            sig.dependencies = Dependencies(
                tuple(depends),
                context_param or CONTEXT_KEY,
                lambda annotation: _is_context(annotation, context_type),
            )
        except TypeError as e:
            raise TypeError(f"{what}: {e}") from None
    sig.param_names = tuple(p.name for p in params)
    sig.arguments = _argument_infos(params, props, schema.get("required"))
    sig._params = tuple(params)
    sig._known = frozenset(sig.param_names)
    sig._forbid_unknown = forbid_unknown
    sig._var_keyword = var_kw
    sig._var_keyword_check = extra_check
    sig._validator = validator
    sig._build_model = build_model
    sig._union_params = frozenset(p.name for p in params if _is_multi_union(p.annotation))
    sig._json_params = tuple(p.name for p in params if not _accepts_string(props.get(p.name)))
    sig._fast = _fast_plan(params)

    ret = hints.get("return", _EMPTY)
    sig.return_annotation = ret
    sig.output_schema, sig.wrap_output = output_schema(ret, strict_refs=strict_refs)
    sig._output_adapter = _output_adapter(ret) if sig.output_schema is not None else None
    return sig


def _collect_params(
    signature: inspect.Signature,
    hints: dict[str, Any],
    doc_params: dict[str, str],
    context_type: type | None,
    what: str,
    var_keyword: bool = False,
    depends: list[tuple[str, Depends]] | None = None,
) -> tuple[_Fields, list[_Param], str | None, list[AskedParam], str | None]:
    """The fields of the argument model, the parameters a client supplies, the Context's
    name, the parameters the user fills in (``Ask``, left out of the schema), and the
    ``**kwargs`` parameter's name (when ``var_keyword`` allows one). The parameters the
    server fills in (``Depends``, left out too) are appended to ``depends``.

    Raises ``TypeError`` for parameters that cannot arrive by name from a client.
    """
    fields: _Fields = {}
    params: list[_Param] = []
    context_param: str | None = None
    asked: list[AskedParam] = []
    var_kw: str | None = None
    for index, (name, p) in enumerate(signature.parameters.items()):
        if p.kind is p.VAR_KEYWORD and var_keyword:
            var_kw = name
            continue
        if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
            star = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise TypeError(
                f"{what} takes {star}{name}: tools and prompts need named parameters, "
                "each with a type hint, so that clients can be told the schema"
            )
        annotation = hints.get(name, _EMPTY)
        if annotation is _EMPTY:
            annotation = Any
        if _is_context(annotation, context_type):
            if context_param is not None:
                raise TypeError(
                    f"{what} has two Context parameters (`{context_param}` and `{name}`)"
                )
            context_param = name
            continue
        question = asked_param(name, annotation)
        if question is not None:
            asked.append(question)
            continue
        dependency = depends_of(annotation, p.default)
        if dependency is not None:
            if depends is None:
                raise TypeError(f"{what}: Depends() is not accepted here (parameter `{name}`)")
            depends.append((name, dependency))
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise TypeError(
                f"{what}: parameter `{name}` is positional-only; arguments arrive by name"
            )
        _, metadata = strip_annotated(annotation)
        field = f"p{index}"
        fields[field] = (annotation, _field_kwargs(p, metadata, doc_params))
        # Annotated metadata may constrain the value: only pydantic can check it.
        fast = _fast_kind(annotation) if not metadata else None
        default = p.default if p.default is not _EMPTY else _MISSING
        params.append(_Param(name, field, annotation, default, fast))
    return fields, params, context_param, asked, var_kw


def _field_kwargs(
    p: inspect.Parameter, metadata: tuple[Any, ...], doc_params: dict[str, str]
) -> dict[str, Any]:
    """The ``pydantic.Field`` arguments of one parameter: alias, description, default."""
    has_field_description = any(_is_field_info(m) and m.description is not None for m in metadata)
    kwargs: dict[str, Any] = {"alias": p.name}
    if not has_field_description:
        text = next((m for m in metadata if isinstance(m, str)), None) or doc_params.get(p.name)
        if text:
            kwargs["description"] = text
    if p.default is not _EMPTY:
        kwargs["default"] = p.default
    return kwargs


def _model_factory(fn: Callable[..., Any], fields: _Fields) -> Callable[[], type[BaseModel]]:
    """A function building the pydantic model of the arguments; pydantic is imported only
    when it is called (at registration for rich signatures, at need for scalar ones)."""

    def build_model() -> type[BaseModel]:
        import pydantic

        definitions: dict[str, Any] = {
            field: typing.Annotated[annotation, pydantic.Field(**kwargs)]
            for field, (annotation, kwargs) in fields.items()
        }
        model: type[BaseModel] = pydantic.create_model(
            f"{_callable_name(fn)}_arguments",
            __config__=pydantic.ConfigDict(extra="ignore", arbitrary_types_allowed=False),
            **definitions,
        )
        return model

    return build_model


def _argument_schema(
    params: list[_Param],
    fields: _Fields,
    build_model: Callable[[], type[BaseModel]],
    strict_refs: bool,
    what: str,
) -> tuple[dict[str, Any], Any]:
    """The JSON Schema of the arguments, and the validator if building it took the model.

    Scalar signatures are described by hand and get no validator yet (see the module doc).
    """
    schema = _scalar_schema(params, fields)
    if schema is not None:
        return schema, None
    try:
        model = build_model()
        schema = json_schema(model, mode="validation", strict_refs=strict_refs)
    except Exception as exc:  # pydantic raises several kinds for annotations it cannot handle
        raise TypeError(f"cannot build an argument schema for {what}: {exc}") from exc
    return schema, model.__pydantic_validator__


def _input_schema(schema: dict[str, Any], forbid_unknown: bool) -> dict[str, Any]:
    """The ``inputSchema`` MCP lists: an object schema, keys in a stable order."""
    input_schema: dict[str, Any] = {"type": "object", "properties": schema.get("properties", {})}
    required = schema.get("required")
    if required:
        input_schema["required"] = list(required)
    if forbid_unknown:
        input_schema["additionalProperties"] = False
    if "$defs" in schema:
        input_schema["$defs"] = schema["$defs"]
    return input_schema


def _argument_infos(
    params: list[_Param], props: dict[str, Any], required: Any
) -> list[ArgumentInfo]:
    required_set = set(required or ())
    return [
        ArgumentInfo(
            p.name,
            props.get(p.name, {}).get("description")
            if isinstance(props.get(p.name), dict)
            else None,
            p.name in required_set,
        )
        for p in params
    ]


def _fast_plan(params: list[_Param]) -> tuple[tuple[str, type, bool, Any], ...] | None:
    """``(name, type, nullable, default)`` per parameter for the fast path, or None.

    Only for scalars whose defaults are immutable: the fast path hands out the default object
    itself on every call (pydantic would copy it), so a mutable one would be shared.
    """
    plan: list[tuple[str, type, bool, Any]] = []
    for p in params:
        if p.fast is None or not (
            p.default is _MISSING or isinstance(p.default, _IMMUTABLE_DEFAULTS)
        ):
            return None
        plan.append((p.name, p.fast[0], p.fast[1], p.default))
    return tuple(plan)


def _output_adapter(ret: Any) -> TypeAdapter[Any] | None:
    """The serializer of the return annotation, or None (results are then inferred)."""
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(ret)
    except Exception:
        return None


# --------------------------------------------------------------------------- output


def output_schema_for(
    fn: Callable[..., Any], *, strict_refs: bool = False
) -> tuple[dict[str, Any] | None, bool]:
    """The ``outputSchema`` of a tool from its return annotation, and whether to wrap results.

    * pydantic models, dataclasses, TypedDicts, ``dict[str, X]``: their object schema, as is
      (``wrap`` False: the structured value is the object itself);
    * other types (``int``, ``list[str]``, ``Model | None``, ...): ``{"type": "object",
      "properties": {"result": ...}, "required": ["result"]}`` with ``wrap`` True (the
      structured value is ``{"result": value}``);
    * no annotation, ``None``, ``Any``, ``str``, content blocks (and lists/unions of them), or a
      type pydantic cannot describe: ``(None, False)``, no structured output.

    >>> def f() -> list[int]: ...
    >>> output_schema_for(f)
    ({'type': 'object', 'properties': {'result': {'items': {'type': 'integer'}, 'type': 'array'}}, 'required': ['result']}, True)
    """
    hints = _resolve_hints(fn, f"`{_callable_name(fn)}`")
    return output_schema(hints.get("return", _EMPTY), strict_refs=strict_refs)


def serialize_output(value: Any, *, wrap: bool = False) -> Any:
    """Turn a tool's return value into the JSON value of ``structuredContent``.

    pydantic models are dumped by alias in JSON mode; dataclasses, enums, datetimes, sets,
    tuples and nested combinations become their JSON equivalents. With ``wrap``, the value is
    placed under ``"result"``. Raises ``TypeError`` for values with no JSON form.

    >>> serialize_output({"n": {1, 2}}, wrap=True)
    {'result': {'n': [1, 2]}}
    """
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        data = to_jsonable_python(value, by_alias=True)
    except PydanticSerializationError as exc:
        raise TypeError(f"cannot serialize {type(value).__name__} as JSON: {exc}") from exc
    return {"result": data} if wrap else data
