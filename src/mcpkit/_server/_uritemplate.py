"""RFC 6570 URI templates: expansion (all four levels) and safe matching.

:class:`UriTemplate` parses a template once. :meth:`~UriTemplate.expand` implements the RFC's
expansion algorithm exactly. :meth:`~UriTemplate.match` is the inverse for the cases that
have one, and is written for URIs that come from untrusted clients:

* It never backtracks: each expression consumes text with a single-character-class scan (no
  nested quantifiers), and the literal that follows an expression is found with one
  ``str.rfind`` inside that run: greedy like a regex (``{name}.{ext}`` splits
  ``a.tar.gz`` as ``a.tar`` + ``gz``), leaving room for what the rest of the template needs
  at least; the last expression is anchored at the end. There is no second try: a URI that
  only a backtracking split would fit does not match. Cost is linear in the URI's length,
  and URIs longer than :data:`MAX_URI_LENGTH` are refused outright.
* A simple ``{var}`` (and ``{/var}``, ``{.var}``, ``{;var}``) never spans a ``/``: neither a
  literal one nor an encoded one (``%2F``), nor a backslash. ``{name}`` never matches
  ``a/b``.
* A decoded value that is ``..``, has a ``..`` path segment (``../x``, ``x/..``), or contains
  NUL or another control character (C0, DEL, C1) makes the whole match fail, whatever the
  operator (query values included; a ``/`` is fine there). Reserved expansions (``{+var}``, ``{#var}``) may carry ``/`` (that is their purpose), and
  with ``allow_reserved=True`` they may also carry ``..`` segments and control characters:
  opt in only when the value is not used as a file path or similar.
* Simple and ``+`` expressions must match at least one character (``users://{id}`` does not
  match ``users://``); expressions that start with an operator character (``{/x}``,
  ``{?q}``, ``{#f}``, ...) may be absent, leaving their variables out of the result.
* Query expressions (``{?a,b}{&c}``) accept their parameters in any order and ignore
  parameters the template does not name; a parameter named twice (unless exploded) fails.

Matched values are strings, or lists of strings for exploded variables (``{/path*}``,
``{?tag*}``, ``{list*}``). A non-exploded list expands to ``a,b,c`` and comes back as that
one string; values are returned percent-decoded. Associative arrays are not recovered: an
exploded ``{?keys*}`` has no parameter named ``keys``, so its pairs are ignored like any
unnamed parameter (and ``{keys*}`` comes back as a list of ``name=value`` strings).

>>> t = UriTemplate("repo://{owner}/{repo}/issues{?state,page}")
>>> t.variables
('owner', 'repo', 'state', 'page')
>>> t.expand({"owner": "octo cat", "repo": "mcp", "page": 2})
'repo://octo%20cat/mcp/issues?page=2'
>>> t.match("repo://octo%20cat/mcp/issues?page=2&state=open")
{'owner': 'octo cat', 'repo': 'mcp', 'state': 'open', 'page': '2'}
>>> t.match("repo://octo/a/b/issues") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import quote, unquote_to_bytes

__all__ = ["MAX_URI_LENGTH", "UriTemplate"]

#: URIs longer than this (in characters) never match any template.
MAX_URI_LENGTH = 8192
#: Templates longer than this are refused at construction.
MAX_TEMPLATE_LENGTH = 8192

MatchValue: TypeAlias = "str | list[str]"

_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_GEN_DELIMS = ":/?#[]@"
_SUB_DELIMS = "!$&'()*+,;="
_RESERVED = _GEN_DELIMS + _SUB_DELIMS

_VARSPEC = re.compile(
    r"((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)"
    r"(?::([1-9][0-9]{0,3})|(\*))?"
)
_PCT_TRIPLET = re.compile(r"%[0-9A-Fa-f]{2}")
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1
_SEGMENT_SPLIT = re.compile(r"[/\\]")


@dataclass(frozen=True)
class _OpInfo:
    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool


_OPERATORS: dict[str, _OpInfo] = {
    "": _OpInfo("", ",", False, "", False),
    "+": _OpInfo("", ",", False, "", True),
    ".": _OpInfo(".", ".", False, "", False),
    "/": _OpInfo("/", "/", False, "", False),
    ";": _OpInfo(";", ";", True, "", False),
    "?": _OpInfo("?", "&", True, "=", False),
    "&": _OpInfo("&", "&", True, "=", False),
    "#": _OpInfo("#", ",", False, "", True),
}
_FUTURE_OPERATORS = "=,!@|"


@dataclass(frozen=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True)
class _Expression:
    op: str
    info: _OpInfo
    varspecs: tuple[_VarSpec, ...]


# --------------------------------------------------------------------------- encoding


def _encode(text: str, reserved: bool) -> str:
    """Percent-encode ``text``: only unreserved chars pass, or also reserved and triplets."""
    if not reserved:
        return quote(text, safe="")
    out: list[str] = []
    pos = 0
    for m in _PCT_TRIPLET.finditer(text):
        out.append(quote(text[pos : m.start()], safe=_RESERVED))
        out.append(m.group(0))
        pos = m.end()
    out.append(quote(text[pos:], safe=_RESERVED))
    return "".join(out)


def _prefix(text: str, length: int, reserved: bool) -> str:
    if not reserved or "%" not in text:
        return text[:length]
    # In reserved expansion a pct-triplet passes through as is; count it as one character
    # so that truncation never splits it (RFC 6570, section 2.4.1).
    out: list[str] = []
    pos = 0
    count = 0
    while pos < len(text) and count < length:
        if _PCT_TRIPLET.match(text, pos):
            out.append(text[pos : pos + 3])
            pos += 3
        else:
            out.append(text[pos])
            pos += 1
        count += 1
    return "".join(out)


def _scalar(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise TypeError(
        f"URI template variable `{name}`: cannot expand a {type(value).__name__} "
        "(use str, int, float, bool, a list of those, or a mapping)"
    )


# --------------------------------------------------------------------------- matching plan

_URI_CHARS = _UNRESERVED + _RESERVED + "%"
# Non-ASCII characters are accepted raw in matched URIs (IRIs); controls never are.
_NON_ASCII = "\u00a0-\U0010ffff"


def _class(chars: str, exclude: str = "") -> str:
    kept = "".join(c for c in chars if c not in exclude)
    return "[" + re.escape(kept) + _NON_ASCII + "]"


# What each operator's expansion may contain, a little more liberal than what expand()
# produces so that hand-written URIs (an unencoded "@" or ":" in a segment) still match.
_SEGMENT_CLASS = _class(_URI_CHARS, "/?#[]\\")


def _compile_scanner(expr: _Expression, *, next_is_query: bool, query_run: bool) -> re.Pattern[str]:
    """A pattern matching the longest text ``expr`` may have expanded to, from a position.

    Every pattern is a sequence of single-character-class runs separated by a character
    outside the class: it cannot backtrack.
    """
    info = expr.info
    unbounded = any(v.explode for v in expr.varspecs) or info.named
    count = len(expr.varspecs)
    if expr.op == "":
        return re.compile(_SEGMENT_CLASS + "*")
    if expr.op == "+":
        return re.compile(_class(_URI_CHARS, "#?" if next_is_query else "#") + "*")
    if expr.op == "#":
        return re.compile("(?:#" + _class(_URI_CHARS) + "*)?")
    if expr.op == ".":
        return re.compile(r"(?:\." + _SEGMENT_CLASS + "*)?")
    if expr.op in ("?", "&"):
        item = _class(_URI_CHARS, "&#")
        # "{?x}{&y}" with x undefined expands to "&y=...": a query run may start with either.
        first = "[?&]" if query_run else re.escape(info.first)
        return re.compile("(?:" + first + item + "*(?:&" + item + "*)*)?")
    # "/" and ";": items separated by the operator's own separator, which values never hold.
    sep = re.escape(info.sep)
    item = _class(_URI_CHARS, "/?#[]\\" + info.sep)
    repeat = "*" if unbounded else f"{{0,{count - 1}}}"
    return re.compile("(?:" + sep + item + "*(?:" + sep + item + "*)" + repeat + ")?")


@dataclass(frozen=True)
class _Step:
    """One expression (or a run of query expressions) and the literal after it."""

    exprs: tuple[_Expression, ...]
    scanner: re.Pattern[str]
    literal_after: str
    last: bool
    #: The fewest characters the steps after this one (and their literals) can match.
    tail_min: int
    #: "query" (``?``/``&`` run), "params" (``;``), or "list" (every other operator).
    kind: str
    #: For "list": how to split the text (maxsplit, -1 for all).
    maxsplit: int
    #: The only variable when the expression has one, not exploded (the common case).
    single: _VarSpec | None
    #: Variables by name, for "query" and "params".
    by_name: dict[str, _VarSpec]
    #: Values may not contain "/" or "\\" (every operator but the reserved ones).
    path_like: bool
    #: Skip the traversal and control-character checks (reserved + allow_reserved).
    unchecked: bool


def _decode(text: str) -> str | None:
    if "%" not in text:
        return text
    if _BAD_PCT.search(text):
        return None
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        return None


class UriTemplate:
    """An RFC 6570 URI template, parsed once.

    ``allow_reserved``: let values of ``{+var}``/``{#var}`` contain ``..`` segments and
    control characters when matching (they are refused by default; see the module docs).

    Raises ``ValueError`` for a malformed template (unclosed or stray brace, reserved or
    unknown operator, bad variable name or prefix).

    >>> UriTemplate("{/list*,path:4}").expand(
    ...     {"list": ["red", "green", "blue"], "path": "/foo/bar"})
    '/red/green/blue/%2Ffoo'
    >>> UriTemplate("file:///{+path}").match("file:///docs/readme.md")
    {'path': 'docs/readme.md'}
    """

    __slots__ = ("_allow_reserved", "_parts", "_prefix_literal", "_steps", "template", "variables")

    template: str
    variables: tuple[str, ...]

    def __init__(self, template: str, *, allow_reserved: bool = False) -> None:
        if not isinstance(template, str):
            raise TypeError(f"a URI template is a str, not {type(template).__name__}")
        if len(template) > MAX_TEMPLATE_LENGTH:
            raise ValueError(f"URI template longer than {MAX_TEMPLATE_LENGTH} characters")
        self.template = template
        self._allow_reserved = allow_reserved
        self._parts = _parse(template)
        names: list[str] = []
        for part in self._parts:
            if isinstance(part, _Expression):
                for spec in part.varspecs:
                    if spec.name not in names:
                        names.append(spec.name)
        self.variables = tuple(names)
        self._prefix_literal, self._steps = _plan(self._parts, allow_reserved)

    @property
    def is_template(self) -> bool:
        """True when the template has at least one expression (else it is a plain URI)."""
        return bool(self._steps)

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    # ------------------------------------------------------------------ expansion

    def expand(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> str:
        """Expand the template (RFC 6570, all four levels).

        Values are str, int, float, bool (``true``/``false``), lists/tuples of those, or
        mappings (associative arrays, in their iteration order). ``None``, empty lists and
        empty mappings are undefined: their expression parts disappear.

        >>> UriTemplate("{?x,y,empty}").expand({"x": 1024, "y": 768, "empty": ""})
        '?x=1024&y=768&empty='
        """
        merged: Mapping[str, Any] = (
            {**values, **kwargs} if values and kwargs else (values or kwargs)
        )
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_expand_expression(part, merged))
        return "".join(out)

    # ------------------------------------------------------------------ matching

    def match(self, uri: str) -> dict[str, MatchValue] | None:
        """Return the variables of ``uri`` if it fits the template, else None.

        See the module documentation for the exact rules (no backtracking, no path
        traversal, query parameters in any order).
        """
        if not isinstance(uri, str) or len(uri) > MAX_URI_LENGTH:
            return None
        head = self._prefix_literal
        if not uri.startswith(head):
            return None
        pos = len(head)
        if not self._steps:
            return {} if pos == len(uri) else None
        result: dict[str, MatchValue] = {}
        end_total = len(uri)
        for step in self._steps:
            m = step.scanner.match(uri, pos)
            scan_end = m.end() if m else pos
            lit = step.literal_after
            if step.last:
                end = end_total - len(lit)
                if end < pos or end > scan_end or not uri.endswith(lit):
                    return None
                nxt = end_total
            else:
                # Greedy, as a regex would be, but without backtracking: the last place where
                # the literal can start inside this expression's run that still leaves room
                # for what the rest of the template needs at least.
                limit = end_total - step.tail_min
                if lit:
                    end = uri.rfind(lit, pos, min(scan_end + len(lit), limit))
                    if end < 0:
                        return None
                    nxt = end + len(lit)
                else:
                    end = nxt = min(scan_end, limit)
                    if end < pos:
                        return None
            if not _bind(step, uri[pos:end], result):
                return None
            pos = nxt
        return result if pos == end_total else None


def _bind(step: _Step, text: str, result: dict[str, MatchValue]) -> bool:
    kind = step.kind
    if kind != "list":
        return _bind_named(step, text[1:], result) if text else True
    if step.exprs[0].info.first:
        if not text:
            return True  # the whole expression is absent: its variables are undefined
        text = text[1:]
    elif not text:
        return False  # simple and "+" expressions must match something
    spec = step.single
    if spec is not None:
        value = _checked(text, step)
        if value is None or (spec.prefix is not None and len(value) > spec.prefix):
            return False
        return _store(result, spec.name, value)
    items = text.split(step.exprs[0].info.sep, step.maxsplit)
    assigned = _distribute(step.exprs[0].varspecs, items)
    if assigned is None:
        return False
    for var, raw in assigned:
        if isinstance(raw, list):
            decoded_list: list[str] = []
            for item in raw:
                value = _checked(item, step)
                if value is None:
                    return False
                decoded_list.append(value)
            if not _store(result, var.name, decoded_list):
                return False
        else:
            value = _checked(raw, step)
            if value is None or (var.prefix is not None and len(value) > var.prefix):
                return False
            if not _store(result, var.name, value):
                return False
    return True


def _bind_named(step: _Step, text: str, result: dict[str, MatchValue]) -> bool:
    query = step.kind == "query"
    by_name = step.by_name
    found: dict[str, MatchValue] = {}
    for item in text.split("&" if query else ";") if text else ():
        raw_name, eq, raw_value = item.partition("=")
        # Variable names may themselves hold pct-triplets; expansion copies them as is.
        name: str | None = raw_name
        spec = by_name.get(raw_name)
        if spec is None:
            name = _decode(raw_name)
            if name is None:
                return False
            spec = by_name.get(name)
            if spec is None:
                if query:
                    continue  # a parameter the template does not name
                return False
        value = _checked(raw_value, step) if eq else ""
        if value is None or (spec.prefix is not None and len(value) > spec.prefix):
            return False
        if spec.explode:
            existing = found.setdefault(spec.name, [])
            assert isinstance(existing, list)
            existing.append(value)
        elif spec.name in found:
            return False  # named twice: ambiguous
        else:
            found[spec.name] = value
    # Report in template order, whatever the order in the URI.
    return all(_store(result, name, found[name]) for name in by_name if name in found)


def _checked(raw: str, step: _Step) -> str | None:
    """The decoded value, or None when it is malformed or unsafe for ``step``."""
    value = _decode(raw)
    if value is None or step.unchecked:
        return value
    if _CONTROL.search(value):
        return None
    if step.path_like and ("/" in value or "\\" in value):
        return None
    if ".." in value and ".." in _SEGMENT_SPLIT.split(value):
        return None
    return value


def _store(result: dict[str, MatchValue], name: str, value: MatchValue) -> bool:
    # A variable used twice in one template must get the same value both times.
    if name in result:
        return result[name] == value
    result[name] = value
    return True


def _distribute(
    specs: tuple[_VarSpec, ...], items: list[str]
) -> list[tuple[_VarSpec, MatchValue]] | None:
    """Give each variable its item(s); the first exploded variable takes the surplus."""
    explode_at = next((i for i, s in enumerate(specs) if s.explode), None)
    if explode_at is None:
        if len(items) > len(specs):
            return None
        return [(spec, items[i]) for i, spec in enumerate(specs[: len(items)])]
    before = specs[:explode_at]
    after = specs[explode_at + 1 :]
    if len(items) < len(before) + len(after):
        return [(spec, items[i]) for i, spec in enumerate(specs[: len(items)])]
    out: list[tuple[_VarSpec, MatchValue]] = [(s, items[i]) for i, s in enumerate(before)]
    tail_start = len(items) - len(after)
    out.append((specs[explode_at], items[len(before) : tail_start]))
    out.extend((s, items[tail_start + i]) for i, s in enumerate(after))
    return out


# --------------------------------------------------------------------------- parsing


def _parse(template: str) -> list[str | _Expression]:
    parts: list[str | _Expression] = []
    pos = 0
    n = len(template)
    while pos < n:
        open_at = template.find("{", pos)
        close_at = template.find("}", pos)
        if close_at != -1 and (open_at == -1 or close_at < open_at):
            raise ValueError(f"URI template {template!r}: '}}' without '{{' at {close_at}")
        if open_at == -1:
            parts.append(_encode_literal(template[pos:], template))
            break
        if open_at > pos:
            parts.append(_encode_literal(template[pos:open_at], template))
        if close_at == -1:
            raise ValueError(f"URI template {template!r}: unclosed '{{' at {open_at}")
        nested = template.find("{", open_at + 1, close_at)
        if nested != -1:
            raise ValueError(f"URI template {template!r}: '{{' inside an expression at {nested}")
        parts.append(_parse_expression(template[open_at + 1 : close_at], template))
        pos = close_at + 1
    return parts


def _encode_literal(text: str, template: str) -> str:
    if _CONTROL.search(text):
        raise ValueError(f"URI template {template!r}: control character in a literal")
    # Literal characters that may not appear in a URI are percent-encoded (section 3.1).
    return _encode(text, reserved=True)


def _parse_expression(body: str, template: str) -> _Expression:
    if not body:
        raise ValueError(f"URI template {template!r}: empty expression '{{}}'")
    op = ""
    if body[0] in _OPERATORS:
        op = body[0]
        body = body[1:]
    elif body[0] in _FUTURE_OPERATORS:
        raise ValueError(f"URI template {template!r}: operator {body[0]!r} is reserved by RFC 6570")
    elif not (body[0].isascii() and (body[0].isalnum() or body[0] in "_%")):
        raise ValueError(f"URI template {template!r}: unknown operator {body[0]!r}")
    specs: list[_VarSpec] = []
    for raw in body.split(","):
        m = _VARSPEC.fullmatch(raw)
        if m is None:
            raise ValueError(f"URI template {template!r}: bad variable specification {raw!r}")
        prefix = int(m.group(2)) if m.group(2) else None
        specs.append(_VarSpec(m.group(1), prefix, m.group(3) is not None))
    return _Expression(op, _OPERATORS[op], tuple(specs))


def _plan(parts: list[str | _Expression], allow_reserved: bool) -> tuple[str, tuple[_Step, ...]]:
    prefix_literal = ""
    index = 0
    while index < len(parts) and isinstance(parts[index], str):
        prefix_literal += parts[index]  # type: ignore[operator]
        index += 1
    # Group: [expr-or-query-run, literal, expr-or-query-run, literal, ...]
    groups: list[tuple[list[_Expression], str]] = []
    while index < len(parts):
        part = parts[index]
        assert isinstance(part, _Expression)
        group = [part]
        index += 1
        if part.op in ("?", "&"):
            while (
                index < len(parts)
                and isinstance(parts[index], _Expression)
                and parts[index].op == "&"  # type: ignore[union-attr]
            ):
                group.append(parts[index])  # type: ignore[arg-type]
                index += 1
        literal = ""
        while index < len(parts) and isinstance(parts[index], str):
            literal += parts[index]  # type: ignore[operator]
            index += 1
        groups.append((group, literal))
    steps: list[_Step] = []
    tails = [0] * len(groups)
    for i in range(len(groups) - 2, -1, -1):
        following, following_literal = groups[i + 1]
        # Simple and "+" expressions match at least one character; the others may be absent.
        needed = 1 if following[0].op in ("", "+") else 0
        tails[i] = tails[i + 1] + needed + len(following_literal)
    for i, (group, literal) in enumerate(groups):
        next_is_query = not literal and i + 1 < len(groups) and groups[i + 1][0][0].op in ("?", "&")
        steps.append(
            _Step(
                exprs=tuple(group),
                scanner=_compile_scanner(
                    group[0], next_is_query=next_is_query, query_run=len(group) > 1
                ),
                literal_after=literal,
                last=i == len(groups) - 1,
                tail_min=tails[i],
                **_binding(group, allow_reserved),
            )
        )
    return prefix_literal, tuple(steps)


def _binding(group: list[_Expression], allow_reserved: bool) -> dict[str, Any]:
    expr = group[0]
    specs = expr.varspecs
    explode = any(v.explode for v in specs)
    if expr.op in ("?", "&"):
        kind = "query"
    elif expr.op == ";":
        kind = "params"
    else:
        kind = "list"
    maxsplit = -1 if expr.op == "/" or explode else len(specs) - 1
    return {
        "kind": kind,
        "maxsplit": maxsplit,
        "single": specs[0] if len(specs) == 1 and not explode else None,
        "by_name": {spec.name: spec for e in group for spec in e.varspecs},
        "path_like": not expr.info.reserved and kind != "query",
        "unchecked": expr.info.reserved and allow_reserved,
    }


def _expand_expression(expr: _Expression, values: Mapping[str, Any]) -> str:
    info = expr.info
    pieces: list[str] = []
    for spec in expr.varspecs:
        value = values.get(spec.name)
        if value is None:
            continue
        if isinstance(value, Mapping):
            pairs = [(str(k), _scalar(v, spec.name)) for k, v in value.items() if v is not None]
            if not pairs:
                continue
            pieces.append(_expand_pairs(spec, info, pairs))
        elif isinstance(value, (list, tuple)):
            items = [_scalar(v, spec.name) for v in value if v is not None]
            if not items:
                continue
            pieces.append(_expand_list(spec, info, items))
        else:
            text = _scalar(value, spec.name)
            if spec.prefix is not None:
                text = _prefix(text, spec.prefix, info.reserved)
            encoded = _encode(text, info.reserved)
            if info.named:
                pieces.append(spec.name + ("=" + encoded if text else info.ifemp))
            else:
                pieces.append(encoded)
    if not pieces:
        return ""
    return info.first + info.sep.join(pieces)


def _expand_list(spec: _VarSpec, info: _OpInfo, items: list[str]) -> str:
    if spec.prefix is not None:
        raise ValueError(f"URI template variable `{spec.name}`: a prefix (:n) needs a string")
    encoded = [_encode(item, info.reserved) for item in items]
    if not spec.explode:
        return _named_join(spec, info, ",".join(encoded))
    if info.named:
        return info.sep.join(
            spec.name + ("=" + enc if item else info.ifemp)
            for item, enc in zip(items, encoded, strict=True)
        )
    return info.sep.join(encoded)


def _expand_pairs(spec: _VarSpec, info: _OpInfo, pairs: list[tuple[str, str]]) -> str:
    if spec.prefix is not None:
        raise ValueError(f"URI template variable `{spec.name}`: a prefix (:n) needs a string")
    if not spec.explode:
        return _named_join(
            spec,
            info,
            ",".join(_encode(k, info.reserved) + "," + _encode(v, info.reserved) for k, v in pairs),
        )
    out: list[str] = []
    for key, value in pairs:
        name = _encode(key, info.reserved)
        if info.named:
            out.append(name + ("=" + _encode(value, info.reserved) if value else info.ifemp))
        else:
            out.append(name + "=" + _encode(value, info.reserved))
    return info.sep.join(out)


def _named_join(spec: _VarSpec, info: _OpInfo, joined: str) -> str:
    if not info.named:
        return joined
    return spec.name + ("=" + joined if joined else info.ifemp)
