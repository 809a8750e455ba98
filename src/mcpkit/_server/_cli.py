"""``mcpkit run FILE[:OBJECT] [--transport stdio|http|sse]``: serve a server defined in a file."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import _env

if TYPE_CHECKING:
    from .._auth._resource import ResourceServer

#: Names tried, in order, when FILE has no ``:OBJECT`` part.
DEFAULT_OBJECTS = ("server", "mcp", "app")


def load_server(spec: str) -> Any:
    """Load ``FILE[:OBJECT]`` (or ``module.path[:OBJECT]``) and return the server object.

    OBJECT may name a :class:`~mcpkit.Server` or a function returning one.
    """
    from ._server import Server

    target, _, obj_name = spec.partition(":")
    if os.path.exists(target) or target.endswith(".py"):
        path = os.path.abspath(target)
        if not os.path.isfile(path):
            raise LookupError(f"no such file: {target}")
        mod_name = os.path.splitext(os.path.basename(path))[0]
        sys.path.insert(0, os.path.dirname(path))
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        if module_spec is None or module_spec.loader is None:
            raise LookupError(f"cannot load {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        _execute(module_spec.loader, module, path)
    else:
        module = importlib.import_module(target)
    candidates = [obj_name] if obj_name else list(DEFAULT_OBJECTS)
    for name in candidates:
        obj = getattr(module, name, None)
        if obj is None:
            continue
        if isinstance(obj, Server):
            return obj
        if callable(obj) and obj_name:
            made = obj()
            if isinstance(made, Server):
                return made
            raise LookupError(
                f"{spec}: {name}() returned {type(made).__name__}, not a mcpkit.Server"
            )
        if obj_name:
            raise LookupError(f"{spec}: {name} is a {type(obj).__name__}, not a mcpkit.Server")
    if obj_name:
        raise LookupError(f"{target} has no object named {obj_name!r}")
    found = [n for n, v in vars(module).items() if isinstance(v, Server)]
    if len(found) == 1:
        return getattr(module, found[0])
    if found:
        raise LookupError(
            f"{target} defines several servers ({', '.join(found)}): say which with {target}:NAME"
        )
    raise LookupError(f"{target} defines no mcpkit.Server (name it 'server', or use {target}:NAME)")


class LoadFailed(Exception):
    """The server file could not be run: one line, with the file and line at fault."""


def _execute(loader: Any, module: Any, path: str) -> None:
    """Run the server file; its syntax or import-time errors become :class:`LoadFailed`."""
    try:
        loader.exec_module(module)
    except SyntaxError as e:
        where = f"{e.filename or path}:{e.lineno or '?'}" + (f":{e.offset}" if e.offset else "")
        raise LoadFailed(f"{where}: {type(e).__name__}: {e.msg}") from None
    except Exception as e:
        # The innermost frame in the server file itself is where the user looks first.
        frames = traceback.extract_tb(e.__traceback__)
        mine = [f for f in frames if os.path.abspath(f.filename) == path] or frames[-1:]
        where = f"{mine[-1].filename}:{mine[-1].lineno}" if mine else path
        raise LoadFailed(
            f"{where}: {type(e).__name__}: {e} (while loading the server; "
            f"run 'python {os.path.basename(path)}' for the traceback)"
        ) from None


#: ``mcpkit run`` settings that come from the environment when not given as options:
#: variable -> (option, how to read it). docs/deploy.md lists them (``mcpkit._env``).
ENVIRONMENT: tuple[tuple[_env.Variable, str, Callable[[str], Any]], ...] = (
    (_env.TRANSPORT, "transport", str),
    (_env.HOST, "host", str),
    (_env.PORT, "port", int),
    (_env.PATH, "path", str),
    (_env.JSON_RESPONSE, "json_response", lambda v: _env.parse_flag(_env.JSON_RESPONSE.name, v)),
    (_env.SESSIONLESS, "sessionless", lambda v: _env.parse_flag(_env.SESSIONLESS.name, v)),
    (_env.MAX_SESSIONS, "max_sessions", lambda v: _at_least_one(_env.MAX_SESSIONS.name, v)),
    (_env.LOG_LEVEL, "log_level", str),
)


def _at_least_one(name: str, value: str) -> int:
    """``value`` as a whole number of at least 1, or ValueError naming ``name``."""
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: a whole number of at least 1") from None
    if n < 1:
        raise ValueError(f"{name}={value!r}: a whole number of at least 1")
    return n


def _count(value: str) -> int:
    """argparse's reader of ``--max-sessions``."""
    try:
        return _at_least_one("--max-sessions", value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


#: The options that only an HTTP transport takes.
_HTTP_OPTIONS = (
    "host",
    "port",
    "path",
    "json_response",
    "sessionless",
    "stateless",  # the deprecated spelling of --sessionless
    "max_sessions",
    "allowed_host",
    "allowed_origin",
    "redis",
    "http_server",
    "auth_issuer",
    "auth_resource",
    "auth_scope",
)


def run_settings(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings of ``mcpkit run``: options first, then ``MCPKIT_*`` variables.

    Allowed hosts and origins from the environment (``MCPKIT_ALLOWED_HOSTS``/``_ORIGINS``)
    are read where every HTTP entry point reads them (``options_from_env``).
    """
    out: dict[str, Any] = {}
    for variable, key, read in ENVIRONMENT:
        given = getattr(args, key, None)
        value = variable.value(environ)
        if given is not None:
            out[key] = given
        elif value is not None:
            name = variable.name
            try:
                out[key] = read(value)
            except ValueError as e:
                raise ValueError(str(e) if name in str(e) else f"{name}: {e}") from None
    _deprecated_sessionless(args, environ, out)
    transport = out.setdefault("transport", "stdio")
    if transport not in ("stdio", "http", "sse"):
        raise ValueError(f"{_env.TRANSPORT.name}={transport!r}: use stdio, http or sse")
    if args.allowed_host:
        out["allowed_hosts"] = list(args.allowed_host)
    if args.allowed_origin:
        out["allowed_origins"] = list(args.allowed_origin)
    if args.redis:
        out["redis"] = args.redis  # else MCPKIT_REDIS_URL, read where every entry point reads it
    if getattr(args, "http_server", None):  # a Namespace made by hand may lack it
        if transport == "sse":
            raise ValueError("--http-server: the legacy sse transport is served by uvicorn only")
        out["http_server"] = args.http_server
    if transport in ("http", "sse"):
        from .._app._serve import allow_list_problem

        problem = allow_list_problem(out, environ)
        if problem is not None:
            raise ValueError(problem)
    if transport == "http":
        from .._app._serve import http_server_choice

        # Else MCPKIT_HTTP_SERVER, read where it serves: a wrong name is refused here
        # already, with the other settings (exit 2), before the file is loaded.
        http_server_choice(out.get("http_server"), environ)
    auth = auth_settings(args)
    if auth is not None:
        out["auth"] = auth
    return out


def _deprecated_sessionless(
    args: argparse.Namespace, environ: Mapping[str, str], out: dict[str, Any]
) -> None:
    """The old spellings of ``--sessionless``, kept one release: the flag ``--stateless``
    and ``MCPKIT_STATELESS``, each with a line on stderr (a DeprecationWarning would not be
    shown: Python hides them outside ``__main__``). The new spellings win over the old."""
    if getattr(args, "stateless", None):
        print(
            "mcpkit: --stateless is deprecated, use --sessionless (the same setting; "
            '"stateless" names the 2026-07-28 era only)',
            file=sys.stderr,
        )
        if getattr(args, "sessionless", None) is None:
            out["sessionless"] = True
    old = _env.STATELESS.value(environ)
    if old is not None and "sessionless" not in out:
        print(
            f"mcpkit: {_env.STATELESS.name} is deprecated, use {_env.SESSIONLESS.name} "
            '(the same setting; "stateless" names the 2026-07-28 era only)',
            file=sys.stderr,
        )
        out["sessionless"] = _env.parse_flag(_env.STATELESS.name, old)


def auth_settings(args: argparse.Namespace) -> ResourceServer | None:
    """The bearer-token check of ``--auth-issuer URL --auth-resource URL [--auth-scope S]``:
    JWT access tokens from that issuer (its keys found through its metadata, as
    :class:`~mcpkit.auth.JWTVerifier` does), issued for that resource. None without them.

    Raises ValueError for an incomplete or malformed set (a usage error), ImportError when
    the ``[auth]`` extra is missing."""
    issuer = getattr(args, "auth_issuer", None)
    resource = getattr(args, "auth_resource", None)
    scopes: list[str] = list(getattr(args, "auth_scope", None) or [])
    if issuer is None:
        if resource is not None or scopes:
            raise ValueError(
                "--auth-resource and --auth-scope go with --auth-issuer URL "
                "(the authorization server whose tokens to accept)"
            )
        return None
    if resource is None:
        raise ValueError(
            "--auth-issuer needs --auth-resource URL: this server's URL as clients reach it "
            "(https://mcp.example.com/mcp), the audience its tokens must name"
        )
    if urlsplit(issuer).scheme not in ("http", "https") or not urlsplit(issuer).netloc:
        raise ValueError(f"--auth-issuer {issuer!r}: an absolute http(s) URL, the issuer's")
    from .._auth._jwt import JWTVerifier
    from .._auth._resource import ResourceServer

    try:
        return ResourceServer(
            JWTVerifier(issuer=issuer, audience=resource),
            resource=resource,
            authorization_servers=[issuer],
            scopes=scopes,
        )
    except ValueError as e:
        raise ValueError(f"--auth-resource: {e}") from None


def configure_logging(level: str) -> None:
    """The server's own log messages (``mcpkit.*`` loggers) on stderr, at ``level``."""
    import logging

    logging.basicConfig(
        level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )


def _reloading(command: str, argv: list[str], target: str, transport: str) -> int:
    """Serve in a child process, restarted when the code changes (``--reload``)."""
    from pathlib import Path

    from ._reload import supervise

    if transport == "stdio":
        print(
            f"mcpkit {command}: --reload needs an HTTP transport (a stdio client's "
            "connection cannot move to a new process)",
            file=sys.stderr,
        )
        return 2
    path = target.partition(":")[0]
    watch = Path(path).resolve().parent if os.path.exists(path) else Path.cwd()
    child = [sys.executable, "-m", "mcpkit", command, *(a for a in argv if a != "--reload")]
    return supervise(child, watch)


def add_http_options(parser: argparse.ArgumentParser, *, whose: str) -> None:
    """The serving options ``mcpkit run`` and ``mcpkit proxy`` share (one definition, one
    help text): where and how the HTTP endpoint listens, its bounds and allow-lists, and
    the log level (``whose``: "the server's", "the proxy's")."""
    parser.add_argument("--host", default=None, help="HTTP: address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="HTTP: port (default 8000)")
    parser.add_argument("--path", default=None, help="HTTP: the MCP endpoint (default /mcp)")
    parser.add_argument(
        "--json-response",
        action="store_true",
        default=None,
        help="HTTP: answer each request with one JSON body instead of an SSE stream",
    )
    parser.add_argument(
        "--max-sessions",
        type=_count,
        default=None,
        metavar="N",
        help="HTTP: handshake-era sessions this process holds at once; past it the least "
        "recently active idle one makes room, else 503 (default 10000)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="HOST",
        help="HTTP: a Host value to accept (repeatable; default: loopback names only)",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="HTTP: an Origin to accept, scheme://host[:port] (repeatable; default: the "
        "allowed hosts); a browser host there gets CORS answers",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default=None,
        help=f"{whose} own log level on stderr (default: warning)",
    )


def _parser(command: str) -> argparse.ArgumentParser:
    """The options of ``mcpkit run`` (``command``: the name it was called by)."""
    parser = argparse.ArgumentParser(
        prog=f"mcpkit {command}", description="Serve an mcpkit server from a Python file."
    )
    parser.add_argument(
        "target", metavar="FILE[:OBJECT]", help="a .py file or module, and the server object in it"
    )
    parser.add_argument(
        "--transport",
        "-t",
        choices=("stdio", "http", "sse"),
        default=None,
        help="how to serve (default: stdio)",
    )
    add_http_options(parser, whose="the server's")
    parser.add_argument(
        "--sessionless",
        action="store_true",
        default=None,
        help="HTTP: keep no sessions for handshake-era clients (each POST served on its own; "
        "no GET stream); 2026-07-28 requests need none either way",
    )
    # The old spelling of --sessionless, for one release (warns; not in --help).
    parser.add_argument("--stateless", action="store_true", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--redis",
        default=None,
        metavar="URL",
        help="HTTP: keep sessions, events and tasks in this Redis, shared by every worker "
        "(redis://host:6379/0; default: $MCPKIT_REDIS_URL, else this process only)",
    )
    parser.add_argument(
        "--http-server",
        choices=("uvicorn", "granian"),
        default=None,
        help="HTTP: the server the http transport runs on (default: $MCPKIT_HTTP_SERVER, else "
        "uvicorn; granian: its RSGI interface, one worker, the [granian] extra)",
    )
    parser.add_argument(
        "--auth-issuer",
        default=None,
        metavar="URL",
        help="HTTP: require a bearer token on every request, a JWT access token from this "
        "OAuth authorization server (its keys found through its metadata; the [auth] "
        "extra); needs --auth-resource",
    )
    parser.add_argument(
        "--auth-resource",
        default=None,
        metavar="URL",
        help="HTTP: with --auth-issuer, this server's URL as clients reach it "
        "(https://mcp.example.com/mcp): the audience tokens must name",
    )
    parser.add_argument(
        "--auth-scope",
        action="append",
        default=None,
        metavar="SCOPE",
        help="HTTP: with --auth-issuer, a scope every request needs (repeatable)",
    )
    parser.add_argument(
        "--reload",
        action="store_true",
        help="HTTP: restart when a .py file beside FILE changes (for development)",
    )
    return parser


def main(command: str, argv: list[str]) -> int:
    """``mcpkit run``."""
    args = _parser(command).parse_args(argv)
    try:
        settings = run_settings(args, os.environ)
    except ValueError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # --auth-issuer without the [auth] extra
        print(f"mcpkit {command}: --auth-issuer: {e}", file=sys.stderr)
        return 1
    if args.reload:
        return _reloading(command, argv, args.target, settings["transport"])
    level = settings.get("log_level")
    if level is not None:
        configure_logging(level)  # and uvicorn's own, over HTTP
    try:
        server = load_server(args.target)
    except LookupError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except LoadFailed as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 1
    if "auth" in settings and getattr(server, "auth", None) is not None:
        print(
            f"mcpkit {command}: {args.target} sets its own auth= (Server(auth=...)): "
            "drop --auth-issuer, or the server's auth=",
            file=sys.stderr,
        )
        return 2
    transport = settings.pop("transport")
    if transport == "stdio":
        http_only = [f"--{k.replace('_', '-')}" for k in _HTTP_OPTIONS if getattr(args, k)]
        if http_only:
            print(
                f"mcpkit {command}: {', '.join(http_only)} apply to HTTP transports only",
                file=sys.stderr,
            )
            return 2
        from .._exceptions import TransportError

        try:
            server.run("stdio")
        except KeyboardInterrupt:
            return 130
        except TransportError as e:
            print(f"mcpkit {command}: {e}", file=sys.stderr)
            return 1
        return 0
    if transport == "sse":
        # The legacy transport has fixed paths and no modes, and keeps its sessions here.
        for key in ("path", "json_response", "sessionless"):
            settings.pop(key, None)
    from .._exceptions import BackendUnavailable
    from ._port import PortInUse

    try:
        server.run(transport, **settings)
    except KeyboardInterrupt:
        return 130
    except PortInUse as e:
        print(
            f"mcpkit {command}: port {e.port} on {e.host} is already in use: "
            "pick another with --port (or MCPKIT_PORT)",
            file=sys.stderr,
        )
        return 1
    except (RuntimeError, ImportError, BackendUnavailable) as e:
        # The [http] or [redis] extra missing, a Redis that refuses: one line.
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 1
    return 0
