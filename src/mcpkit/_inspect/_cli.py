"""``mcpkit inspect TARGET`` and ``mcpkit dev FILE``: the web inspector, from the terminal.

The first line on stdout is the page's URL (its token included), printed once the socket
listens. Unless ``--no-open``, the browser is opened on a launch file that only the user can
read (mode 0600, in a directory of their own), which sends it on to that URL: a browser's
command line is readable by every local user (``/proc/PID/cmdline``), so the token never
goes there. The file is deleted once the page has loaded (and at exit). ``dev`` runs a server
file over stdio with the inspector attached and starts it again (the page reconnects)
whenever a Python file beside it changes.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import secrets
import shlex
import shutil
import socket
import sys
import tempfile
import threading
import webbrowser
from pathlib import Path
from typing import Any, NoReturn

import anyio

from .._client._cli import config_target, parse_pairs
from .._client._client import Client
from .._client._login import stored_login
from .._client._targets import is_url
from .._server._reload import POLL, changed, snapshot
from ._app import InspectorApp
from ._state import Inspector


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message}\n\n{self.format_usage().strip()}")


def _parser(command: str) -> _Parser:
    if command == "dev":
        p = _Parser(
            prog="mcpkit dev",
            description="Run a server file with the inspector attached; restart it on changes.",
        )
        p.add_argument("file", help="the server's Python file")
    else:
        p = _Parser(prog="mcpkit inspect", description="Inspect a server in a web page.")
        p.add_argument(
            "target",
            help="the server: a command line (one quoted string), a .py file, an http(s) URL, "
            "or the name of an entry of --config",
        )
        p.add_argument("--config", help="an mcpServers JSON file; TARGET names one of its entries")
        p.add_argument("--header", action="append", default=[], metavar="NAME:VALUE")
        p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument(
        "--port",
        type=int,
        default=0,
        help="the page's port (default: any free one); MCP Apps views are served from a "
        "second port, always a free one (their sandbox proxy, of another origin)",
    )
    p.add_argument("--no-open", action="store_true", help="print the URL, do not open a browser")
    p.add_argument(
        "--protocol-version", default=None, help="the revision to ask for (default: the newest)"
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for each answer (600)"
    )
    return p


def _target(ns: argparse.Namespace) -> tuple[Any, dict[str, Any], str]:
    """What the client connects to, its keywords, and how to name it."""
    if ns.command == "dev":
        path = Path(ns.file)
        if not path.is_file():
            raise _UsageError(f"no such file: {ns.file}")
        ns.watch = path.resolve().parent
        argv = [sys.executable, "-m", "mcpkit", "run", str(path)]
        return argv, {"inherit_env": True}, f"mcpkit run {ns.file}"
    target: Any = ns.target
    kw: dict[str, Any] = {}
    if ns.config:
        try:
            return config_target(ns.config, target)
        except ValueError as e:
            raise _UsageError(str(e)) from None
    if not is_url(target) and not target.strip():
        raise _UsageError("the target is empty: give a command line, a file or a URL")
    if target.endswith(".py") and Path(target).is_file():
        # A server file, served as `mcpkit run` serves it (no `server.run()` needed in it).
        target = [sys.executable, "-m", "mcpkit", "run", target]
    try:
        headers = parse_pairs(ns.header, ":", "--header")
        env = parse_pairs(ns.env, "=", "--env")
    except ValueError as e:
        raise _UsageError(str(e)) from None
    if headers:
        kw["headers"] = headers
    if env:
        kw["env"] = env
    kw["inherit_env"] = True
    # A command as a person would type it (quoted where a shell needs it), not a list.
    return target, kw, target if isinstance(target, str) else shlex.join(target)


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as e:
        sock.close()
        raise _UsageError(f"cannot listen on 127.0.0.1:{port}: {e.strerror}") from None
    sock.listen(64)
    return sock


class LaunchFile:
    """A page that sends the browser on to ``url``, in a new directory only the user can
    enter (0700), itself readable by the user only (0600): what the browser is opened on.

    ``discard()`` deletes it (idempotent): once the page has loaded, and at exit.
    """

    def __init__(self, url: str) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="mcpkit-inspect-"))  # mode 0700
        self.path = self._dir / "open-inspector.html"
        attr, script = html.escape(url, quote=True), json.dumps(url).replace("<", "\\u003c")
        page = (
            '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
            f'<meta http-equiv="refresh" content="0;url={attr}">'
            f"<title>mcpkit inspector</title><script>location.replace({script})</script>"
            f'<p><a href="{attr}">Open the mcpkit inspector</a></p>\n'
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        self.uri = self.path.as_uri()

    def discard(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


async def _watch(inspector: Inspector, root: Path) -> None:
    # A development tool's file watch: a look twice a second, in a worker thread.
    seen = await anyio.to_thread.run_sync(snapshot, root)
    while True:
        await anyio.sleep(POLL)
        now = await anyio.to_thread.run_sync(snapshot, root)
        edits = changed(seen, now)
        if edits:
            seen = now
            shown = ", ".join(p.removeprefix(f"{root}{os.sep}") for p in edits[:3])
            print(f"mcpkit dev: {shown} changed; restarting the server", file=sys.stderr)
            inspector.reconnect()


async def _serve(
    ns: argparse.Namespace,
    sock: socket.socket,
    sandbox: socket.socket,
    launch: LaunchFile | None,
    token: str,
) -> None:
    import uvicorn  # checked by main() before anything listens

    target, kw, describe = _target(ns)
    given = any(k.lower() == "authorization" for k in kw.get("headers") or {})
    if is_url(target) and not given:
        # A server logged in to with `mcpkit auth login` gets its (refreshed) token.
        kw = {**kw, "auth": stored_login(target)}

    def make_client(**callbacks: Any) -> Client:
        return Client(
            target,
            protocol_version=ns.protocol_version,
            timeout=ns.timeout,
            max_timeout=None,
            name="mcpkit-inspector",
            apps=True,  # a host of MCP Apps: tool views are rendered in the page
            on_stderr=lambda line: print(line, file=sys.stderr),
            **kw,
            **callbacks,
        )

    inspector = Inspector(make_client, describe)
    inspector.login_url = target if is_url(target) else None
    inspector.tell = lambda line: print(f"mcpkit {ns.command}: {line}", file=sys.stderr)
    app = InspectorApp(
        inspector,
        token,
        port=sock.getsockname()[1],
        # The MCP Apps sandbox proxy: another port, so another origin than the page's.
        sandbox_port=sandbox.getsockname()[1],
        on_page=launch.discard if launch is not None else None,
    )
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", access_log=False, timeout_graceful_shutdown=5
    )

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # A page's pending long poll (up to 20 s) does not hold up Ctrl-C or SIGTERM.
            inspector.end_polls()
            if launch is not None:
                # Here, not only in main(): uvicorn raises SIGTERM again once it has served,
                # and the process ends there.
                launch.discard()
            await super().shutdown(sockets)

    server = Server(config)
    async with inspector.connected(), anyio.create_task_group() as tg:
        if ns.command == "dev":
            tg.start_soon(_watch, inspector, ns.watch)
        if launch is not None:
            # The launch file, not the URL: the token stays off the browser's command line.
            threading.Thread(target=webbrowser.open, args=(launch.uri,), daemon=True).start()
        await server.serve(sockets=[sock, sandbox])
        tg.cancel_scope.cancel()


def main(command: str, argv: list[str]) -> int:
    """Run ``mcpkit inspect`` or ``mcpkit dev``; returns the exit status."""
    parser = _parser(command)
    try:
        ns = parser.parse_args(argv)
        ns.command = command
        _target(ns)  # a bad target is a usage error before anything listens
        if importlib.util.find_spec("uvicorn") is None:
            raise _UsageError(
                "the inspector serves its page with uvicorn: pip install 'mcpkit[http]'"
            )
        sock = _listen(ns.port)
        sandbox = _listen(0)
    except _UsageError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else 0
    token = secrets.token_urlsafe(24)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    print(url, flush=True)
    print(f"mcpkit {command}: the inspector is at the URL above (Ctrl-C to stop)", file=sys.stderr)
    launch = None
    if not ns.no_open:
        try:
            launch = LaunchFile(url)
        except OSError as e:
            print(f"mcpkit {command}: not opening a browser ({e}); open the URL", file=sys.stderr)
    try:
        anyio.run(_serve, ns, sock, sandbox, launch, token)
    except KeyboardInterrupt:
        return 130
    except _UsageError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    finally:
        sock.close()
        sandbox.close()
        if launch is not None:
            launch.discard()
    return 0
