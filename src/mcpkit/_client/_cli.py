"""``mcpkit list``, ``call``, ``read`` and ``prompt``: talk to any server from the shell.

::

    mcpkit list "python server.py"                  # tools, readable
    mcpkit list https://example.com/mcp resources --format json
    mcpkit call "npx -y @modelcontextprotocol/server-everything" get-sum a=1 b=2
    mcpkit call "python server.py" search --json '{"query": "mcp", "limit": 5}'
    mcpkit call server.py book --answer '{"name": "Ada"}'  # answers the tool's question
    mcpkit read server.py notes://secret --answer decline  # read and prompt too
    mcpkit read server.py notes://today
    mcpkit prompt server.py review code="print(1)" -v
    mcpkit list notes --config ~/.cursor/mcp.json     # a server of a host's config file

Errors are one line on stderr and a non-zero exit status (1: the server or the tool failed,
2: bad usage), never a traceback.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Mapping
from typing import Any, NoReturn

import anyio
import orjson

from .._exceptions import MCPError
from ..types._jsonschema import unknown_arguments_line
from ._cli_ask import Answerer, parse_answers
from ._client import Client
from ._group import load_config
from ._login import stored_login
from ._targets import is_url

KINDS = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "prompts": ("prompts/list", "prompts"),
    "templates": ("resources/templates/list", "resourceTemplates"),
}


#: The last protocol revision with a handshake (revisions are dates: later ones sort after).
LAST_HANDSHAKE = "2025-11-25"


class _UsageError(ValueError):
    """A command line the user must change (exit 2, one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message}\n\n{self.format_usage().strip()}")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "target",
        help="the server: a .py file (run with this Python: server.py), a command line (one "
        "quoted string: 'node server.js'), an http(s) URL, or the name of an entry of --config",
    )
    p.add_argument(
        "--config", help="an mcpServers JSON file (a host's config); TARGET names one entry"
    )
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for each answer (default: 60)"
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="HTTP header (repeatable)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="server environment (repeatable)",
    )
    p.add_argument(
        "--protocol-version",
        metavar="REVISION",
        help="the protocol revision to ask for, e.g. 2025-11-25 (default: the newest)",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the server's log messages, progress and stderr (on stderr)",
    )


def _parser(command: str) -> _Parser:
    if command == "list":
        p = _Parser(prog="mcpkit list", description="List what a server offers.")
        _common(p)
        p.add_argument(
            "kind",
            nargs="?",
            default="tools",
            choices=tuple(KINDS),
            help="what to list (default: tools)",
        )
    elif command == "read":
        p = _Parser(prog="mcpkit read", description="Read a resource of a server.")
        _common(p)
        p.add_argument("uri", help="the resource's URI")
        _answer_flags(p, "the resource")
    elif command == "prompt":
        p = _Parser(prog="mcpkit prompt", description="Get a prompt of a server.")
        _common(p)
        p.add_argument("name", help="the prompt's name")
        p.add_argument("args", nargs="*", metavar="key=value", help="the prompt's arguments")
        _answer_flags(p, "the prompt")
    else:
        p = _Parser(prog="mcpkit call", description="Call a tool of a server.")
        _common(p)
        p.add_argument("tool", help="the tool's name")
        p.add_argument(
            "args",
            nargs="*",
            metavar="key=value",
            help="arguments; values are coerced to the tool's schema",
        )
        p.add_argument(
            "--json", dest="json_args", metavar="JSON", help="all arguments as one JSON object"
        )
        _answer_flags(p, "the tool")
    return p


def _answer_flags(p: argparse.ArgumentParser, asker: str) -> None:
    p.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="JSON",
        help=f"the answer to a question {asker} asks (elicitation): a JSON object of the "
        "form's fields, or decline or cancel; repeatable, one per question, in order. "
        "On a terminal, questions left unanswered are asked field by field",
    )
    p.add_argument(
        "--answers-file",
        metavar="FILE",
        help="answers read from a JSON file (an array of them), after those of --answer",
    )


def parse_pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    """``NAME{sep}VALUE`` command-line items as a dict (a header's value stripped); a
    malformed one is a usage error (a :class:`ValueError`) naming ``what``. Shared by every
    command taking ``--header``/``--env``."""
    out: dict[str, str] = {}
    for item in items:
        name, found, value = item.partition(sep)
        if not found or not name.strip():
            raise _UsageError(f"{what} must look like NAME{sep}VALUE, got {item!r}")
        out[name.strip()] = value.strip() if sep == ":" else value
    return out


def config_target(config: str, name: str) -> tuple[Any, dict[str, Any], str]:
    """The server ``name`` of the mcpServers file ``config``: what a :class:`Client`
    connects to, its keywords (headers, or env, cwd and the inherited environment), and
    how to name it to a person. Shared with ``mcpkit inspect --config``.

    Raises:
        ValueError: the file is not an mcpServers document, or has no such server (the
            message names the ones it has).
    """
    try:
        entries = load_config(config)
    except OSError as e:
        raise ValueError(f"cannot read {config}: {e.strerror or e}") from None
    except orjson.JSONDecodeError as e:
        raise ValueError(f"{config} is not valid JSON ({e})") from None
    if name not in entries:
        known = ", ".join(sorted(entries)) or "none"
        raise ValueError(f"{config} has no server {name!r} (it has: {known})")
    entry = entries[name]
    if "url" in entry:
        kw: dict[str, Any] = {"headers": entry.get("headers")}
        return entry["url"], kw, f"{name} ({entry['url']})"
    argv = [str(entry["command"]), *(str(a) for a in entry.get("args") or [])]
    kw = {"env": entry.get("env"), "cwd": entry.get("cwd"), "inherit_env": True}
    return argv, kw, f"{name} ({shlex.join(argv)})"


def _client(ns: argparse.Namespace, **callbacks: Any) -> Client:
    target: Any = ns.target
    headers = parse_pairs(ns.header, ":", "--header")
    env = parse_pairs(ns.env, "=", "--env")
    kw: dict[str, Any] = {}
    if ns.config:
        try:
            target, kw, _ = config_target(ns.config, ns.target)
        except ValueError as e:
            raise _UsageError(str(e)) from None
        # The command line's --header and --env add to (and win over) the entry's.
        headers = {**(kw.pop("headers", None) or {}), **headers}
        env = {**(kw.pop("env", None) or {}), **env}
    elif not is_url(target) and not target.strip():
        raise _UsageError("the target is empty: give a command line or a URL")
    ns.resolved = target  # what a hint names (not the entry's name)
    given = any(k.lower() == "authorization" for k in headers)
    # A server logged in to with `mcpkit auth login` gets its (refreshed) token.
    auth = stored_login(target) if is_url(target) and not given else None
    return Client(
        target,
        auth=auth,
        headers=headers or None,
        env=env or None,
        **kw,
        timeout=ns.timeout,
        init_timeout=ns.timeout,
        protocol_version=ns.protocol_version,
        on_stderr=(lambda line: print(line, file=sys.stderr))
        if ns.verbose
        else (lambda line: None),
        logging_handler=_show_log if ns.verbose else None,
        progress_handler=_show_progress if ns.verbose else None,
        name="mcpkit-cli",
        **callbacks,
    )


def _show_log(message: Any) -> None:
    data = message.data if isinstance(message.data, str) else _dump(message.data)
    source = f" {message.logger}" if message.logger else ""
    print(f"[{message.level}{source}] {data}", file=sys.stderr)


def _show_progress(params: Any) -> None:
    total = f"/{params.total:g}" if params.total is not None else ""
    note = f" {params.message}" if params.message else ""
    print(f"[progress {params.progress:g}{total}]{note}", file=sys.stderr)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


# ---------------------------------------------------------------- list


async def _list(ns: argparse.Namespace) -> int:
    method, key = KINDS[ns.kind]
    async with _client(ns) as client:
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            raw = await client.send_request(method, {"cursor": cursor} if cursor else None)
            page = raw.get(key) if isinstance(raw, dict) else None
            if not isinstance(page, list):
                raise MCPError(f"malformed {method} result from the server: no {key!r} list")
            items.extend(page)
            nxt = raw.get("nextCursor")
            if not isinstance(nxt, str) or not nxt or nxt in seen:
                break
            seen.add(nxt)
            cursor = nxt
    if ns.format == "json":
        print(_dump({key: items}))
        return 0
    if not items:
        print(f"(no {ns.kind})")
    for item in items:
        if isinstance(item, dict):
            print(_describe(ns.kind, item))
    return 0


def _describe(kind: str, item: dict[str, Any]) -> str:
    desc = str(item.get("description") or item.get("title") or "").strip()
    first = desc.splitlines()[0] if desc else ""
    if kind == "tools":
        lines = [f"{item.get('name')}" + (f"  {first}" if first else "")]
        schema = _obj(item.get("inputSchema"))
        props = _obj(schema.get("properties"))
        required = set(schema.get("required") or [])
        for name, prop in props.items():
            about = str(_obj(prop).get("description") or "").strip()
            lines.append(
                f"    {name}: {_param(_obj(prop))}"
                + (" (required)" if name in required else "")
                + (f"  {about.splitlines()[0]}" if about else "")
            )
        return "\n".join(lines)
    if kind == "resources":
        mime = f" [{item['mimeType']}]" if item.get("mimeType") else ""
        return f"{item.get('uri')}  {item.get('name', '')}{mime}" + (f"  {first}" if first else "")
    if kind == "templates":
        mime = f" [{item['mimeType']}]" if item.get("mimeType") else ""
        return f"{item.get('uriTemplate')}  {item.get('name', '')}{mime}" + (
            f"  {first}" if first else ""
        )
    args = item.get("arguments")
    args = args if isinstance(args, list) else []
    names = [
        f"{a.get('name')}{'' if a.get('required') else '?'}" for a in args if isinstance(a, dict)
    ]
    return f"{item.get('name')}({', '.join(names)})" + (f"  {first}" if first else "")


def _param(prop: dict[str, Any]) -> str:
    """A parameter's type as a person reads it: ``string (one of: a, b) = "a"``."""
    t = _type_of(prop)
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        t += " (one of: " + ", ".join(str(e) for e in enum) + ")"
    if "default" in prop:
        t += f" = {orjson.dumps(prop['default']).decode()}"
    return t


def _type_of(prop: dict[str, Any]) -> str:
    options = prop.get("anyOf") or prop.get("oneOf")
    if prop.get("type") is None and isinstance(options, list):
        return "|".join(_type_of(_obj(o)) for o in options)
    kind: Any = prop.get("type") or "any"
    t = "|".join(str(x) for x in kind) if isinstance(kind, list) else str(kind)
    if t == "array" and isinstance(prop.get("items"), dict):
        t = f"array of {_type_of(prop['items'])}"
    return t


# ---------------------------------------------------------------- read, prompt


def _answerer(ns: argparse.Namespace) -> Answerer:
    """What answers the server's questions: ``--answer``/``--answers-file``, then a terminal."""
    try:
        answers = parse_answers(ns.answer, ns.answers_file)
    except ValueError as e:
        raise _UsageError(str(e)) from None
    terminal = sys.stdin if sys.stdin is not None and sys.stdin.isatty() else None
    return Answerer(answers, terminal, sys.stderr)


def _asked(client: Client, answerer: Answerer) -> dict[str, Any]:
    """The ``send_request`` keywords of a request that may ask a person something.

    Under a handshake revision a question arrives while the request awaits its answer: the
    time a person takes to type must not count against --timeout, so on a terminal the
    request is bounded by the client's max_timeout (an hour; Ctrl-C stops it). Under
    2026-07-28 the question ends the request, and each round is bounded as usual."""
    handshake = (client.protocol_version or "") <= LAST_HANDSHAKE
    return {"timeout": None} if answerer.stdin is not None and handshake else {}


def _unanswered(answerer: Answerer) -> None:
    if answerer.problem is not None:  # a question was cancelled for want of an answer
        raise _UsageError(answerer.problem)


async def _read(ns: argparse.Namespace) -> int:
    answerer = _answerer(ns)
    async with _client(ns, **answerer.handlers()) as client:
        raw = await client.send_request(
            "resources/read", {"uri": ns.uri}, **_asked(client, answerer)
        )
    _unanswered(answerer)
    if ns.format == "json":
        print(_dump(raw))
        return 0
    contents = raw.get("contents") if isinstance(raw, dict) else None
    blocks = [_obj(c) for c in contents or []]
    if not blocks:
        print("(no contents)")
    for block in blocks:
        if "text" in block:
            print(block["text"])
        else:
            mime = block.get("mimeType", "binary")
            print(f"[{block.get('uri')}: {mime}, {_b64_size(block.get('blob'))} bytes]")
    return 0


async def _prompt(ns: argparse.Namespace) -> int:
    args = parse_pairs(ns.args, "=", "an argument")
    answerer = _answerer(ns)
    async with _client(ns, **answerer.handlers()) as client:
        params = {"name": ns.name, "arguments": args}
        raw = await client.send_request("prompts/get", params, **_asked(client, answerer))
    _unanswered(answerer)
    if ns.format == "json":
        print(_dump(raw))
        return 0
    result = _obj(raw)
    if result.get("description"):
        print(f"# {result['description']}")
    for message in result.get("messages") or []:
        m = _obj(message)
        print(f"{m.get('role', '?')}: {_render(_obj(m.get('content')))}")
    return 0


# ---------------------------------------------------------------- call


def _types(prop: Any) -> list[str]:
    """The JSON types a parameter's schema allows (``anyOf``/``oneOf`` options included)."""
    prop = _obj(prop)
    kind = prop.get("type")
    found = [str(k) for k in kind] if isinstance(kind, list) else [str(kind)] if kind else []
    for option in prop.get("anyOf") or prop.get("oneOf") or []:
        found += [t for t in _types(option) if t not in found]
    return found


def _string_array(prop: Any) -> bool:
    """Whether the schema takes an array of strings (itself or one of its options)."""
    prop = _obj(prop)
    if prop.get("type") == "array" and _obj(prop.get("items")).get("type") == "string":
        return True
    return any(_string_array(o) for o in prop.get("anyOf") or prop.get("oneOf") or [])


def _coerce(name: str, value: str, prop: Any) -> Any:
    types = _types(prop)
    if types == ["string"]:
        return value
    if _string_array(prop) and not value.lstrip().startswith("[") and value != "null":
        # tags=a,b: a shell-friendly list; a JSON array still works (tags='["a,b"]').
        return [part.strip() for part in value.split(",")] if value.strip() else []
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        if not types or "string" in types:
            return value
        example = "'[1, 2]'" if "array" in types else """'{"key": 1}'"""
        hint = (
            f"; write it as JSON, e.g. {name}={example}" if {"array", "object"} & {*types} else ""
        )
        raise _UsageError(
            f"argument {name}: {value!r} is not a valid {'/'.join(types)}{hint}"
        ) from None
    return parsed


def _check_names(args: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Refuse, before sending, an argument the tool's schema closes out (a misspelling):
    many servers drop unknown arguments silently, so the server's answer would not say."""
    props = schema.get("properties")
    if schema.get("additionalProperties") is not False or not isinstance(props, dict):
        return
    unknown = [k for k in args if k not in props]
    if unknown:
        raise _UsageError(unknown_arguments_line(unknown, list(props)))


async def _call(ns: argparse.Namespace) -> int:
    args: dict[str, Any] = {}
    if ns.json_args is not None:
        try:
            loaded = orjson.loads(ns.json_args)
        except orjson.JSONDecodeError as e:
            raise _UsageError(f"--json is not valid JSON: {e}") from None
        if not isinstance(loaded, dict):
            raise _UsageError("--json must be a JSON object")
        args.update(loaded)
    pairs = parse_pairs(ns.args, "=", "an argument")
    answerer = _answerer(ns)
    async with _client(ns, **answerer.handlers()) as client:
        schema: Mapping[str, Any] = {}
        try:
            for tool in await client.list_tools():
                if tool.name == ns.tool:
                    schema = tool.input_schema
        except MCPError:
            pass  # no list: values are read as JSON when they parse, else as strings
        props = schema.get("properties") or {}
        for k, v in pairs.items():
            args[k] = _coerce(k, v, props.get(k))
        _check_names(args, schema)
        params = {"name": ns.tool, "arguments": args}
        raw = await client.send_request("tools/call", params, **_asked(client, answerer))
        result = await client.check_tool_result(ns.tool, raw)
    _unanswered(answerer)
    failed = bool(result.is_error)
    if ns.format == "json":
        print(_dump(raw))
        return 1 if failed else 0
    out = sys.stderr if failed else sys.stdout
    texts = [_render(block) for block in raw.get("content") or [] if isinstance(block, dict)]
    has_text = any(b.get("type") == "text" for b in raw.get("content") or [] if isinstance(b, dict))
    if not has_text and raw.get("structuredContent") is not None:
        texts.append(_dump(raw["structuredContent"]))
    print("\n".join(texts) if texts else "(no content)", file=out)
    if failed and not ns.verbose and _MASKED.match("\n".join(texts)):
        print(_cause_hint(ns), file=sys.stderr)
    return 1 if failed else 0


#: A failed call that says no more than that (a server hiding its exceptions from clients,
#: as mcpkit's do by default): the cause is in the server's own log.
_MASKED = re.compile(r"^(Error executing tool \S+)?$")


def _cause_hint(ns: argparse.Namespace) -> str:
    """Where the cause of a failure the server did not explain can be seen."""
    if is_url(ns.resolved):
        return (
            "(the server logs the cause; an mcpkit server built with "
            "Server(mask_errors=False) sends it to clients)"
        )
    return "(run it again with -v to see the server's log on stderr, where the cause is)"


def _b64_size(data: Any) -> int:
    text = str(data or "").strip()
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))


def _render(block: dict[str, Any]) -> str:
    t = block.get("type")
    if t == "text":
        return str(block.get("text", ""))
    if t in ("image", "audio"):
        return f"[{t}: {block.get('mimeType', '?')}, {_b64_size(block.get('data'))} bytes]"
    if t == "resource_link":
        return (
            f"[resource link: {block.get('uri')}"
            + (f" ({block['name']})" if block.get("name") else "")
            + "]"
        )
    if t == "resource":
        res = _obj(block.get("resource"))
        if "text" in res:
            return f"[resource {res.get('uri')}]\n{res['text']}"
        return f"[resource {res.get('uri')}: {res.get('mimeType', 'binary')}, {_b64_size(res.get('blob'))} bytes]"
    return _dump(block)


# ---------------------------------------------------------------- entry


def main(command: str, argv: list[str]) -> int:
    """Run ``mcpkit list``, ``call``, ``read`` or ``prompt``; returns the exit status."""
    parser = _parser(command)
    try:
        ns = parser.parse_args(argv)
    except _UsageError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else 0
    run = {"list": _list, "read": _read, "prompt": _prompt}.get(command, _call)
    try:
        return anyio.run(run, ns)
    except _UsageError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mcpkit {command}: interrupted", file=sys.stderr)
        return 130
    except BaseException as e:  # every error is a message, never a traceback
        if isinstance(e, (SystemExit, GeneratorExit)):
            raise
        hint = login_hint(e, getattr(ns, "resolved", ns.target))
        print(f"mcpkit {command}: error: {_message(e)}{hint}", file=sys.stderr)
        return 1


def login_hint(e: BaseException, target: Any) -> str:
    """What to do about a refusal the user can fix: a server wanting a login (else "").

    Shared with the inspector, which shows it in its page."""
    group = getattr(e, "exceptions", None)
    if isinstance(group, (list, tuple)) and group:
        return login_hint(group[0], target)
    data = getattr(e, "data", None)
    if isinstance(data, dict) and data.get("httpStatus") == 401 and is_url(target):
        return f"\n(the server wants an OAuth login: run `mcpkit auth login {target}`)"
    return ""


def _message(e: BaseException) -> str:
    group = getattr(e, "exceptions", None)  # an ExceptionGroup (Python 3.10: the backport)
    if isinstance(group, (list, tuple)) and group:
        return _message(group[0])
    if isinstance(e, MCPError):
        return _condensed(str(e))
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.M)
_LAST = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit)\b.*)$", re.M)


def _condensed(text: str) -> str:
    """A server's Python traceback quoted in an error, as one line: ``FILE:LINE: Error``.

    A server file with a syntax or import error dies before speaking; its traceback is the
    cause, and its last frame and final line are what the user needs.
    """
    frames = list(_FRAME.finditer(text))
    lasts = list(_LAST.finditer(text))
    if not frames or not lasts or lasts[-1].start() < frames[-1].start():
        return text
    frame = frames[-1]
    cut = text.find("Traceback (most recent call last):")
    cut = frames[0].start() if cut < 0 else cut
    head = text[:cut].rstrip().removesuffix("; its last stderr lines:").rstrip(" :;")
    return f"{head}: {frame['file']}:{frame['line']}: {lasts[-1].group(1).strip()}"
