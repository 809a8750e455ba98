"""The ``mcpkit`` command: dispatches to the subcommand's own module.

Subcommands live beside what they drive (``run`` with the server, ``list``/``call`` with the
client) and are imported only when used, so ``mcpkit --help`` stays fast.
"""

from __future__ import annotations

import sys
from types import ModuleType

# subcommand -> (module, one-line help)
_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("mcpkit._server._cli", "serve a server defined in a Python file"),
    "list": ("mcpkit._client._cli", "list the tools, resources, prompts or templates of a server"),
    "call": ("mcpkit._client._cli", "call a tool of a server"),
    "read": ("mcpkit._client._cli", "read a resource of a server"),
    "prompt": ("mcpkit._client._cli", "get a prompt of a server, filled with arguments"),
    "auth": (
        "mcpkit._client._login",
        "log in to (or out of) a protected server over OAuth; a development issuer",
    ),
    "install": (
        "mcpkit._install",
        "add a server to Claude Desktop/Code, Cursor, VS Code, Gemini CLI, goose or mcp.json",
    ),
    "proxy": ("mcpkit._proxy", "serve any server (command, file, URL) over another transport"),
    "inspect": (
        "mcpkit._inspect._cli",
        "inspect a server in a web page (tools, resources, prompts)",
    ),
    "dev": ("mcpkit._inspect._cli", "run a server file with the inspector, restarted on changes"),
}


def _load(module: str) -> ModuleType:
    # Plain imports (not importlib), so the layer test sees these edges.
    if module == "mcpkit._server._cli":
        from ._server import _cli as server_cli

        return server_cli
    if module == "mcpkit._install":
        from . import _install

        return _install
    if module == "mcpkit._proxy":
        from . import _proxy

        return _proxy
    if module == "mcpkit._inspect._cli":
        from ._inspect import _cli as inspect_cli

        return inspect_cli
    if module == "mcpkit._client._login":
        from ._client import _login

        return _login
    from ._client import _cli as client_cli

    return client_cli


def _usage() -> str:
    lines = ["usage: mcpkit <command> [options]", "", "commands:"]
    lines += [f"  {name:<8} {helptext}" for name, (_, helptext) in _COMMANDS.items()]
    lines += ["", "Run 'mcpkit <command> --help' for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` console script."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        # Asked nothing: usage on stderr and a failure status, so a script's typo shows.
        print(_usage(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version"):
        from ._version import __version__

        print(f"mcpkit {__version__}")
        return 0
    entry = _COMMANDS.get(args[0])
    if entry is None:
        print(f"mcpkit: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = _load(entry[0])
    # Each subcommand module exposes `main(command, argv) -> int`.
    return int(module.main(args[0], args[1:]))


def console() -> None:
    """Console-script wrapper: exit with :func:`main`'s status."""
    sys.exit(main())


if __name__ == "__main__":
    console()
