"""Tool transformation: tools derived from the server's own, its mounted servers' and its
proxied servers' tools (``Server.transform_tool``), and prompts and resources served as
tools (``Server.add_prompts_as_tools``, ``Server.add_resources_as_tools``, in ``_astools``).

A transformation is a rule kept by the server: "serve tool ``source`` as ``name``, its
arguments changed so". It is applied whenever the server's tools change, not once: a mounted
server re-lists its tools (its own changes, a remote one reconnecting) and a remote mount's
tools only exist once it connected, so the derived tool follows its source. A derived tool
is served while its source is; removing the derived tool (``remove_tool``) ends the rule.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..types._jsonschema import schema_errors
from ._argproblems import unknown_arguments_line
from ._astools import AsTools
from ._context import Context
from ._func import FuncInfo, describe
from ._tools import ToolDef, _header_params, check_tool_name, error_result

if TYPE_CHECKING:
    from ..types import CallToolResult
    from ._callface import CallContext
    from ._registry import Registry

logger = logging.getLogger("mcpkit.server")


class Host(Protocol):
    """What transformations use of their :class:`~mcpkit.Server` (which is one; named
    through this Protocol, not imported back: see _face)."""

    registry: Registry
    mask_errors: bool

    @property
    def _mounts(self) -> Sequence[Any]: ...
    def _changed(self, kind: str | None) -> None: ...


class _Unset:
    """The value of an :class:`ArgTransform` field left as it is."""

    def __repr__(self) -> str:
        return "UNSET"


#: An :class:`ArgTransform` field not given: the source's own stays.
UNSET: Any = _Unset()


@dataclasses.dataclass(frozen=True, kw_only=True)
class ArgTransform:
    """How a derived tool changes one argument of its source (see ``Server.transform_tool``).

    Args:
        name: the argument's new name (clients use it; the source still gets the old one).
        description: the argument's new description.
        default: a new default (the argument becomes optional); for a hidden argument, the
            value the source always gets.
        default_factory: ``fn()`` giving the default (or the hidden value) at each call,
            instead of ``default``; a visible argument's schema then shows no default.
        hide: leave the argument out of the derived tool: the source gets ``default`` (or
            ``default_factory()``), or, an optional argument given neither, its own default.
            Hiding a required argument without a value is a ``ValueError``.
        required: make an optional argument required.

    Example::

        ArgTransform(name="query", description="What to search for")
        ArgTransform(hide=True, default="eu-west-1")
    """

    name: str | None = None
    description: str | None = None
    default: Any = UNSET
    default_factory: Callable[[], Any] | None = None
    hide: bool = False
    required: bool = False

    def __post_init__(self) -> None:
        if self.default is not UNSET and self.default_factory is not None:
            raise ValueError("ArgTransform: give default or default_factory, not both")
        if self.required and (self.hide or self.has_default):
            raise ValueError("ArgTransform: a required argument has no default and is not hidden")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"ArgTransform: invalid argument name {self.name!r}")

    @property
    def has_default(self) -> bool:
        """Whether a default (or a factory of one) is given."""
        return self.default is not UNSET or self.default_factory is not None

    def value(self) -> Any:
        """The default to pass now (a copy: a mutable default is not shared by calls)."""
        if self.default_factory is not None:
            return self.default_factory()
        return copy.deepcopy(self.default)


@dataclasses.dataclass
class _Plan:
    """The derived tool's arguments, and how they map back onto the source's."""

    schema: dict[str, Any]
    #: derived name -> source name, for every visible argument of the source.
    back: dict[str, str]
    #: source name -> how its value is made, for the hidden arguments with one.
    hidden: dict[str, ArgTransform]
    #: derived name -> its transform, for the visible ones given a default.
    defaults: dict[str, ArgTransform]
    #: Source names a client may not send under their own name (renamed or hidden).
    shadowed: frozenset[str]


def _plan(source: str, schema: Mapping[str, Any], changes: Mapping[str, ArgTransform]) -> _Plan:
    """The derived schema of ``source``'s input ``schema`` under ``changes`` (ValueError
    naming the problem: an argument it does not have, a name taken twice, a required
    argument hidden without a value, a default its schema refuses)."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or ())
    for old, change in changes.items():
        if not isinstance(change, ArgTransform):
            raise TypeError(f"arguments[{old!r}] must be an ArgTransform")
        if old not in props:
            raise ValueError(
                f"tool {source!r} has no argument {old!r} (its arguments: {', '.join(props) or 'none'})"
            )
    out: dict[str, Any] = {}
    plan = _Plan({}, {}, {}, {}, frozenset())  # plan.back: derived name -> source name
    needed: list[str] = []
    for old, prop in props.items():
        change = changes.get(old, ArgTransform())
        if change.hide:
            if change.default is not UNSET:
                _check_default(source, old, schema, prop, change.default)
            if change.has_default:
                plan.hidden[old] = change
            elif old in required:
                raise ValueError(
                    f"tool {source!r}: argument {old!r} is required: hiding it needs a value "
                    "(ArgTransform(hide=True, default=...))"
                )
            continue
        new = change.name or old
        if new in out:
            raise ValueError(
                f"tool {source!r}: arguments {plan.back[new]!r} and {old!r} would both be "
                f"named {new!r} (an argument's new name must be free)"
            )
        prop = dict(prop) if isinstance(prop, dict) else prop
        if change.description is not None and isinstance(prop, dict):
            prop["description"] = change.description
        if change.default is not UNSET and isinstance(prop, dict):
            _check_default(source, old, schema, prop, change.default)
            prop["default"] = change.default
        if change.has_default:
            plan.defaults[new] = change
        elif change.required or old in required:
            needed.append(new)
            if isinstance(prop, dict):
                prop.pop("default", None)  # required now: the source's default is not offered
        out[new] = prop
        plan.back[new] = old
    derived = {k: v for k, v in schema.items() if k not in ("properties", "required")}
    derived["properties"] = out
    if needed:
        derived["required"] = needed
    plan.schema = derived
    plan.shadowed = frozenset(props) - set(plan.back.values()) | (
        frozenset(old for new, old in plan.back.items() if new != old)
    )
    return plan


def _check_default(source: str, arg: str, schema: Mapping[str, Any], prop: Any, value: Any) -> None:
    # Checked with the schema's $defs, against the source's own schema of the argument.
    probe: dict[str, Any] = {"type": "object", "properties": {arg: prop}}
    for key in ("$defs", "definitions", "$schema"):
        if key in schema:
            probe[key] = schema[key]
    problems = schema_errors({arg: value}, probe)
    if problems:
        raise ValueError(
            f"tool {source!r}: the default {value!r} of argument {arg!r} does not fit its "
            f"schema ({'; '.join(problems)})"
        )


#: The derived tool being called, and its Context: what ``forward`` calls.
_forwarding: contextvars.ContextVar[tuple[DerivedTool, CallContext | None] | None] = (
    contextvars.ContextVar("mcpkit_forwarding", default=None)
)


async def forward(**arguments: Any) -> CallToolResult:
    """Call the source of the transformed tool being served, with ``arguments`` named as
    the derived tool names them (renamed back, hidden values and new defaults added).

    Awaited in the ``fn`` of ``Server.transform_tool``; returns the source's result, which
    ``fn`` may return as it is. Raises ``RuntimeError`` anywhere else, ``TypeError`` for an
    argument the source does not take.

    Example::

        async def careful(query: str) -> CallToolResult:
            if not query.strip():
                raise ToolError("say what to search for")
            return await forward(query=query)
    """
    tool, ctx = _current("forward")
    unknown = [k for k in arguments if k not in tool.plan.back]
    if unknown:
        accepted = ", ".join(tool.plan.back) or "none"
        raise TypeError(f"forward(): unknown argument {unknown[0]!r} (accepted: {accepted})")
    result: CallToolResult = await tool.call_source(tool.to_source(arguments), ctx)
    return result


async def forward_raw(**arguments: Any) -> CallToolResult:
    """Call the source of the transformed tool being served with ``arguments`` exactly as
    given: named as the source names them, nothing added (see :func:`forward`)."""
    tool, ctx = _current("forward_raw")
    result: CallToolResult = await tool.call_source(dict(arguments), ctx)
    return result


def _current(what: str) -> tuple[DerivedTool, CallContext | None]:
    found = _forwarding.get()
    if found is None:
        raise RuntimeError(
            f"{what}() calls the source of a transformed tool: await it in the async "
            "function given to Server.transform_tool(fn=...), while it serves a call"
        )
    return found


class DerivedTool:
    """A transformed tool as the registry serves it (the call path of a :class:`ToolDef`).

    Without ``fn`` a call is checked against the derived schema, its arguments mapped back,
    and the source called; with ``fn``, ``fn`` is called (as a tool of its own) and reaches
    the source through :func:`forward`.
    """

    task_support = None
    defer_task = False
    at_once = False

    def __init__(self, server: Host, rule: Transformation, source: Any) -> None:
        self.source = source
        self.name = rule.name
        sdef: dict[str, Any] = source.definition
        self.plan = _plan(rule.source, sdef.get("inputSchema") or {}, rule.arguments)
        needs_ctx = source.context_param is not None or bool(getattr(source, "asked", ()))
        self.fn_tool: ToolDef | None = None
        definition = {k: v for k, v in sdef.items() if k != "execution"}
        definition["name"] = rule.name
        if rule.title is not None:
            definition["title"] = rule.title
        if rule.description is not None:
            definition["description"] = rule.description
        if rule.annotations is not None:
            definition["annotations"] = rule.annotations
        if rule.meta is not None:
            definition["_meta"] = dict(rule.meta)
        if rule.fn is not None:
            self.fn_tool = _fn_tool(server, rule, self.plan, definition)
            definition = self.fn_tool.definition
            needs_ctx = needs_ctx or self.fn_tool.context_param is not None
            needs_ctx = needs_ctx or bool(self.fn_tool.asked)
        else:
            definition["inputSchema"] = self.plan.schema
            if rule.output_schema is False:
                definition.pop("outputSchema", None)
            elif isinstance(rule.output_schema, Mapping):
                definition["outputSchema"] = dict(rule.output_schema)
        #: The ``Tool`` object as listed.
        self.definition = definition
        self.header_params = _header_params(rule.name, definition["inputSchema"])
        schema = definition["inputSchema"]
        self._closed = schema.get("additionalProperties") is False
        #: Whether a call gets a Context (the handlers make one only when asked to).
        self.context_param: str | None = "ctx" if needs_ctx else None
        self.asked = (self.fn_tool.asked if self.fn_tool else ()) or getattr(source, "asked", ())

    def to_source(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` of the derived tool as the source takes them."""
        plan = self.plan
        out: dict[str, Any] = {}
        for key, value in arguments.items():
            old = plan.back.get(key)
            if old is not None:
                out[old] = value
            elif key not in plan.shadowed:  # an extra the source's schema decides about
                out[key] = value
        for new, change in plan.defaults.items():
            if new not in arguments:
                out[plan.back[new]] = change.value()
        for old, change in plan.hidden.items():
            out[old] = change.value()
        return out

    async def call_source(self, arguments: dict[str, Any], ctx: CallContext | None) -> Any:
        """The source's result for ``arguments`` (named as it names them)."""
        from ..types import CallToolResult

        result = await self.source.call(arguments, ctx)
        return CallToolResult.model_validate(result)

    async def call(self, arguments: dict[str, Any], ctx: CallContext | None) -> Any:
        """Serve a call of the derived tool (a ``CallToolResult`` dict)."""
        if self.fn_tool is None:
            problems = self._problems(arguments)
            if problems:
                return error_result(
                    f"Invalid arguments for tool {self.name!r}:\n"
                    + "\n".join(f"- {p}" for p in problems)
                )
            result: dict[str, Any] = await self.source.call(self.to_source(arguments), ctx)
            return result
        given = dict(arguments)
        takes = self.definition["inputSchema"]["properties"]
        for new, change in self.plan.defaults.items():
            if new not in given and new in takes:  # (those fn leaves out: forward adds them)
                given[new] = change.value()
        token = _forwarding.set((self, ctx))
        try:
            return await self.fn_tool.call(given, ctx)
        finally:
            _forwarding.reset(token)

    def _problems(self, arguments: dict[str, Any]) -> list[str]:
        schema = self.definition["inputSchema"]
        problems = schema_errors(arguments, schema)
        if problems and self._closed:
            declared = tuple(schema.get("properties") or ())
            unknown = [k for k in arguments if k not in declared]
            if unknown:  # one line naming the accepted ones, as a registered tool's
                problems = [p for p in problems if not p.startswith("$: unexpected property")]
                problems.insert(0, unknown_arguments_line(unknown, declared))
        return problems


def _fn_tool(
    server: Host, rule: Transformation, plan: _Plan, definition: dict[str, Any]
) -> ToolDef:
    """``rule.fn`` as a tool of its own, taking the derived tool's arguments (and any of its
    own parameters beyond them): its schema the derived one extended by those."""
    fn = rule.fn
    assert fn is not None
    info: FuncInfo = describe(fn, Context, extras="forbid")
    schema = copy.deepcopy(plan.schema)
    props: dict[str, Any] = schema["properties"]
    required: list[str] = list(schema.get("required") or ())
    if not info.var_keyword:
        # fn's signature decides: the arguments it does not take are left out (the source
        # uses its own defaults for them), which a required one cannot be.
        for arg in [a for a in props if a not in info.params]:
            if arg in required:
                raise TypeError(
                    f"transform of {rule.source!r}: fn takes no argument {arg!r}, which the "
                    "source requires (take it as a parameter, or **kwargs)"
                )
            del props[arg]
    own = info.input_schema.get("properties") or {}
    for param in info.params:
        if param in props:
            if param in info.required and param not in required and param not in plan.defaults:
                raise TypeError(
                    f"transform of {rule.source!r}: argument {param!r} is optional in the "
                    "derived tool: give fn's parameter a default"
                )
            continue
        if "$ref" in repr(own.get(param)):
            raise TypeError(
                f"transform of {rule.source!r}: fn's own parameter {param!r} needs a schema "
                "without $ref (a plain type)"
            )
        props[param] = own.get(param, {})
        if param in info.required:
            required.append(param)
    if required:
        schema["required"] = required
    output: Mapping[str, Any] | bool | None = rule.output_schema
    if output is None and info.output_schema is None:
        output = definition.get("outputSchema", False)  # the source's, kept
    return ToolDef(
        fn,
        info,
        name=rule.name,
        title=definition.get("title"),
        description=definition.get("description"),
        input_schema=schema,
        output_schema=output,
        annotations=definition.get("annotations"),
        icons=definition.get("icons"),
        meta=definition.get("_meta"),
        task_support=None,
        mask_errors=server.mask_errors,
    )


@dataclasses.dataclass(eq=False)
class Transformation:
    """One transformation, and what it serves now."""

    source: str
    name: str
    keep_original: bool
    arguments: dict[str, ArgTransform]
    title: str | None = None
    description: str | None = None
    fn: Callable[..., Any] | None = None
    output_schema: Mapping[str, Any] | bool | None = None
    annotations: dict[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    #: The source served from (an entry of the registry or of a mount) and the derived tool.
    entry: Any = None
    derived: DerivedTool | None = None
    #: The mount whose entry the source is (None: the server's own tool).
    mount: Any = None
    #: Whether the derived tool is in the registry, and whether the source was taken out.
    served: bool = False
    hid: bool = False
    #: Whether a missing source was logged (once).
    warned: bool = False
    #: The derived tool last put in the registry (a removal is told by its absence).
    placed: DerivedTool | None = None

    @property
    def in_place(self) -> bool:
        """Whether the derived tool takes its source's name (and so its place)."""
        return self.name == self.source


def rules_of(server: Host) -> list[Transformation]:
    """``server``'s transformations, in the order they were made."""
    found: list[Transformation] = vars(server).setdefault("_tool_rules", [])
    return found


def reapply(server: Host) -> None:
    """Serve every rule's derived tool from its source as the tools are now (called on each
    change of the tools, before it is announced).

    First the rules whose derived tool was removed end (the last made first: a rule built
    on another's derived tool ends before it), then each rule is applied in order (a rule
    built on another's derived tool after it)."""
    rules: list[Transformation] | None = vars(server).get("_tool_rules")
    if not rules:
        return
    tools: dict[str, Any] = server.registry.tools
    for rule in reversed(list(rules)):
        here = tools.get(rule.name)
        if (
            rule.served
            and not _consumed(rule, rules)
            and here is not rule.placed
            and not (rule.in_place and here is not None)
            and (rule.mount is None or _listed(rule) is not None)
        ):
            _end(server, rule, rules)  # its derived tool removed: the rule ends
    for rule in list(rules):
        try:
            src = _source(server, rule, rules)
            if src is None:
                if rule.entry is None and not rule.warned and not _may_come(server, rule.source):
                    # Waiting for a remote mount that has listed its tools now, without it.
                    logger.warning(
                        "tool transform %r: no tool %r to transform", rule.name, rule.source
                    )
                    rule.warned = True
                _withdraw(server, rule)
                continue
            if src is not rule.entry or rule.derived is None:
                rule.derived = DerivedTool(server, rule, src)
                rule.entry = src
                rule.mount = next(
                    (
                        m
                        for m in server._mounts
                        if m.entries.get("tools", {}).get(rule.source) is src
                    ),
                    None,
                )
            _install(server, rule, src, rules)
        except (TypeError, ValueError) as e:  # a source that changed under its rule
            logger.warning("tool transform %r of %r not served: %s", rule.name, rule.source, e)
            _withdraw(server, rule)


def _consumed(rule: Transformation, rules: list[Transformation]) -> bool:
    """Whether a later rule serves this one's derived tool in its place (derived from it,
    the original not kept)."""
    later = rules[rules.index(rule) + 1 :] if rule in rules else []
    return any(r.source == rule.name and r.served and not r.keep_original for r in later)


def _source(server: Host, rule: Transformation, rules: list[Transformation]) -> Any:
    """What the rule's source is now (None: there is none)."""
    for r in rules:
        if r is rule:
            break
        if r.name == rule.source:  # built on an earlier rule's derived tool
            return r.derived if r.served else None
    found: Any = server.registry.tools.get(rule.source)
    if found is not None and found is not rule.placed:
        return found
    if rule.mount is not None:
        return _listed(rule)
    if found is not None:  # in place: the source it replaced
        return rule.entry
    # Taken out of the list by a rule (this one or another deriving from it too).
    return next((r.entry for r in rules if r.hid and r.source == rule.source), None)


def _listed(rule: Transformation) -> Any:
    """The entry the rule's mount lists for its source now (None: it lists none)."""
    return rule.mount.entries.get("tools", {}).get(rule.source)


def _install(server: Host, rule: Transformation, src: Any, rules: list[Transformation]) -> None:
    tools: dict[str, Any] = server.registry.tools
    scopes = server.registry.scopes
    derived = rule.derived
    assert derived is not None
    need = tuple(scopes.get(("tool", rule.source), ()) or getattr(src, "scopes", ()) or ())
    consumed = _consumed(rule, rules)
    if not rule.keep_original and tools.get(rule.source) is src:
        if consumed:
            del tools[rule.source]
        else:
            # The derived tool takes its source's place in the list (models weigh the
            # first ones); in place, the same key.
            items = [(rule.name if k == rule.source else k, v) for k, v in tools.items()]
            tools.clear()
            tools.update((k, derived if k == rule.name else v) for k, v in items)
            rule.placed = derived
        if not rule.in_place:
            scopes.pop(("tool", rule.source), None)
            rule.hid = True
    rule.served = True
    if consumed:
        return
    current = tools.get(rule.name)
    if current is not derived:
        if current is not None and current is not rule.placed:
            logger.warning("tool transform: a tool named %r is served already; kept", rule.name)
            rule.served = False
            return
        tools[rule.name] = derived
    rule.placed = derived
    if need:
        scopes[("tool", rule.name)] = need


def _withdraw(server: Host, rule: Transformation) -> None:
    """The source is gone: so is the derived tool (the rule waits for the source)."""
    tools: dict[str, Any] = server.registry.tools
    if rule.placed is not None and tools.get(rule.name) is rule.placed:
        del tools[rule.name]
        server.registry.scopes.pop(("tool", rule.name), None)
    rule.served = rule.hid = False
    rule.entry = rule.derived = rule.placed = None


def _end(server: Host, rule: Transformation, rules: list[Transformation]) -> None:
    """The derived tool was removed: the rule ends, and an original it took out of the
    list under another name is served again."""
    rules.remove(rule)
    tools: dict[str, Any] = server.registry.tools
    server.registry.scopes.pop(("tool", rule.name), None)
    if rule.hid and rule.source not in tools:
        entry = _listed(rule) if rule.mount is not None else rule.entry
        if entry is not None and not any(r.hid and r.source == rule.source for r in rules):
            tools[rule.source] = entry
            need = getattr(entry, "scopes", ())
            if need:
                server.registry.scopes[("tool", rule.source)] = tuple(need)


def _may_come(server: Host, name: str) -> bool:
    """Whether a remote mount not yet listing its tools may serve tool ``name``."""
    for m in server._mounts:
        remote = getattr(m, "client", None) is not None  # a RemoteMount (a local one: child)
        covers = m.prefix is None or name.startswith(f"{m.prefix}_")
        if remote and covers and "tools" not in m.entries:
            return True
    return False


class ToolTransforms(AsTools):
    """``Server.transform_tool`` (and, from :class:`AsTools`, prompts and resources as tools)."""

    def transform_tool(
        self,
        source: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: Mapping[str, ArgTransform] | None = None,
        fn: Callable[..., Any] | None = None,
        keep_original: bool = False,
        output_schema: Mapping[str, Any] | bool | None = None,
        annotations: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Serve tool ``source`` changed: renamed, described anew, its arguments renamed,
        described, given defaults or hidden (``arguments``: source argument name ->
        :class:`~mcpkit.ArgTransform`), or wrapped by ``fn``.

        ``source`` is a tool of this server, of a mounted server (by its prefixed name) or
        of a proxied one; a remote mount's tool is transformed once that server lists it.
        The derived tool replaces its source (``keep_original=True``: both are served); its
        input schema is derived from the source's (unknown arguments refused as the
        source refuses them), its output schema is the source's. ``fn``, an async or sync
        function, is called with the derived tool's arguments instead of the source (its
        own extra parameters become arguments too; a :class:`~mcpkit.Context` parameter
        gets the context); an async one reaches the source with ``await forward(...)``.
        Connected clients are told the list changed. Removing the derived tool
        (``remove_tool``) ends the transformation.

        Raises ``ValueError`` for an unknown tool or argument, a name taken, a required
        argument hidden without a value, a default its schema refuses; ``TypeError`` for
        an ``fn`` that does not take the derived tool's arguments.

        Example::

            server.transform_tool(
                "search",
                name="find_books",
                description="Find books by title or author.",
                arguments={
                    "q": ArgTransform(name="query", description="Title or author"),
                    "index": ArgTransform(hide=True, default="books"),
                },
            )
        """
        server = cast("Host", self)
        new = name if name is not None else source
        check_tool_name(new)
        if keep_original and new == source:
            raise ValueError(f"transform of {source!r}: keeping the original needs a new name")
        rules = rules_of(server)
        tools: dict[str, Any] = server.registry.tools
        taken = new != source and (new in tools or any(r.name == new for r in rules))
        if taken:
            raise ValueError(f"a tool named {new!r} is already registered (remove it first)")
        rule = Transformation(
            source,
            new,
            keep_original,
            dict(arguments or {}),
            title=title,
            description=description,
            fn=fn,
            output_schema=output_schema,
            annotations=_annotations(annotations),
            meta=meta,
        )
        entry: Any = tools.get(source)
        if entry is None:  # a source another rule took out of the list, or serves in place
            entry = next(
                (
                    r.derived if r.name == source else r.entry
                    for r in rules
                    if source in (r.name, r.source) and r.served
                ),
                None,
            )
        if entry is None and not _may_come(server, source):
            known = ", ".join(sorted(tools)) or "none"
            raise ValueError(f"no tool named {source!r} to transform (tools: {known})")
        if entry is not None:
            DerivedTool(server, rule, entry)  # every error raised now, before serving it
        rules.append(rule)
        server._changed("tools")


def _annotations(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    from ._util import to_wire

    wire = to_wire(value)
    if not isinstance(wire, dict):
        raise TypeError("annotations must be a ToolAnnotations or a dict")
    return dict(wire)


__all__ = ["UNSET", "ArgTransform", "ToolTransforms", "forward", "forward_raw", "reapply"]
