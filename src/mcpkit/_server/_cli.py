"""``mcpkit run FILE[:OBJECT] [--transport stdio|http|sse]``: serve a server defined in a file."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

#: Names tried, in order, when FILE has no ``:OBJECT`` part.
DEFAULT_OBJECTS = ("server", "mcp", "app")


def http_runner() -> Callable[..., None]:
    """The HTTP transports' entry point: ``run(server, transport, **options)`` of the app."""
    from .._app import run

    return run


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


def main(command: str, argv: list[str]) -> int:
    """``mcpkit run``."""
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
        default="stdio",
        help="how to serve (default: stdio)",
    )
    parser.add_argument("--host", default=None, help="HTTP: address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="HTTP: port (default 8000)")
    args = parser.parse_args(argv)
    try:
        server = load_server(args.target)
    except LookupError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except LoadFailed as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 1
    if args.transport == "stdio":
        if args.host is not None or args.port is not None:
            print(f"mcpkit {command}: --host/--port apply to HTTP transports only", file=sys.stderr)
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
    options = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    try:
        http_runner()(server, args.transport, **options)
    except KeyboardInterrupt:
        return 130
    except RuntimeError as e:  # e.g. the [http] extra is not installed
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 1
    return 0
