"""``mcpkit install HOST TARGET``: add a server to an MCP host's configuration file.

Hosts: ``claude-desktop``, ``claude-code``, ``cursor``, ``vscode``, ``gemini-cli``, ``goose``
and ``mcp-json`` (the generic ``{"mcpServers": {...}}`` document most hosts read; printed
unless ``--config`` names a file). Hosts that read both a project's file and the user's
take ``--scope project|user`` (see :data:`SCOPES`); the output names the file and why.
``TARGET`` is a server file (run as ``python -m mcpkit run FILE`` with this Python, so the
host uses the environment mcpkit is installed in), a command line (its arguments naming
files here are made absolute: a host starts it from another directory), or an ``http(s)`` URL.

Installing is idempotent: the same entry again changes nothing, a different one under the
same name replaces it (and says so); other entries and keys of the file are kept. A file that
is not strict JSON (duplicate keys, ``NaN``, numbers beyond a float) is left alone with an
error. ``--dry-run`` prints the file it would write.

The file is changed under a lock (``.NAME.lock`` beside it), so installs running at once all
land, and replaced atomically; a symbolic link stays a link (its target is written). A new
file is made readable by its owner only (``--env`` values are often secrets); an existing
file keeps its mode.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HOSTS = ("claude-desktop", "claude-code", "cursor", "vscode", "gemini-cli", "goose", "mcp-json")
#: The scopes of hosts that read a project's file and the user's, the default first.
SCOPES = {
    "claude-code": ("user", "project"),
    "cursor": ("user", "project"),
    "vscode": ("project", "user"),
    "gemini-cli": ("user", "project"),
}
#: Why a scope's file is the one written, as the output says it.
_WHY = {
    "user": "user scope: every project of this user",
    "project": "project scope: this project only, shareable in its repository",
}
#: Mode of a configuration file mcpkit creates (an existing file keeps its own).
NEW_FILE_MODE = 0o600


class InstallError(Exception):
    """Installation refused: the message says why (one line for the user)."""


class UsageError(InstallError):
    """The command line itself is wrong (exit status 2, as argparse's errors)."""


def _split(target: str) -> list[str]:
    try:
        return shlex.split(target)
    except ValueError as e:  # an unterminated quote, a trailing backslash
        raise UsageError(
            f"the target {target!r} is not a valid command line ({str(e).lower()})"
        ) from None


def _user_config_dir() -> Path:
    """The per-user configuration folder of desktop applications on this platform."""
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")


def config_path(host: str, project: str | None, scope: str | None = None) -> Path | None:
    """Where ``host`` keeps its servers in ``scope`` (default: the host's usual one; a
    ``project`` directory means the project scope); None for ``mcp-json`` (printed)."""
    home = Path.home()
    scope = "project" if project else scope or SCOPES.get(host, ("user",))[0]
    root = Path(project or ".")
    if host == "claude-desktop":
        return _user_config_dir() / "Claude" / "claude_desktop_config.json"
    if host == "claude-code":
        return root / ".mcp.json" if scope == "project" else home / ".claude.json"
    if host == "cursor":
        return (root if scope == "project" else home) / ".cursor" / "mcp.json"
    if host == "vscode":
        if scope == "project":
            return root / ".vscode" / "mcp.json"
        return _user_config_dir() / "Code" / "User" / "mcp.json"
    if host == "gemini-cli":
        return (root if scope == "project" else home) / ".gemini" / "settings.json"
    if host == "goose":
        if sys.platform == "win32":
            return _user_config_dir() / "Block" / "goose" / "config" / "config.yaml"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "goose" / "config.yaml"
    return None


def _servers_key(host: str) -> str:
    return {"vscode": "servers", "goose": "extensions"}.get(host, "mcpServers")


def _absolute_files(argv: list[str]) -> list[str]:
    """A command line with each word naming a file here made absolute (the host starts the
    server from a directory of its own, where ``server.js`` means nothing)."""
    out = []
    for i, word in enumerate(argv):
        # The program itself is looked up on PATH unless it names a folder (./run.sh).
        if word.startswith("-") or os.path.isabs(word) or (i == 0 and os.sep not in word):
            out.append(word)
            continue
        path = Path(word).expanduser()
        out.append(str(path.resolve()) if path.is_file() else word)
    return out


def server_entry(
    host: str, target: str, env: dict[str, str], name: str | None = None
) -> dict[str, Any]:
    """The configuration entry that starts (or reaches) ``target`` from ``host``."""
    url = target.lower().startswith(("http://", "https://"))
    name = name or default_name(target)
    if url:
        if host == "claude-desktop":
            raise InstallError(
                "Claude Desktop adds remote (URL) servers in Settings > Connectors, not in its "
                "configuration file; install a local server file or command instead"
            )
        if env:
            raise InstallError("--env applies to servers started as commands, not to URLs")
        if host in ("vscode", "claude-code"):
            return {"type": "http", "url": target}
        if host == "gemini-cli":
            return {"httpUrl": target}  # its "url" means the older SSE transport
        if host == "goose":
            return {"name": name, "type": "streamable_http", "uri": target, "enabled": True,
                    "timeout": 300}  # fmt: skip
        return {"url": target}
    argv = _split(target)
    if not argv:
        raise InstallError("the target is empty: give a server file, a command line or a URL")
    if len(argv) == 1 and argv[0].endswith(".py"):
        path = Path(argv[0]).expanduser().resolve()
        if not path.is_file():
            raise InstallError(f"no such file: {argv[0]}")
        # This Python: the host runs the server where mcpkit and its dependencies are.
        argv = [sys.executable, "-m", "mcpkit", "run", str(path)]
    argv = _absolute_files(argv)
    if host == "goose":
        return {"name": name, "type": "stdio", "cmd": argv[0], "args": argv[1:],
                "envs": dict(env), "enabled": True, "timeout": 300}  # fmt: skip
    entry: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if env:
        entry["env"] = dict(env)
    if host in ("vscode", "claude-code"):
        entry = {"type": "stdio", **entry}
    return entry


def default_name(target: str) -> str:
    """A server name from the target: the file's stem, the URL's host, or the program."""
    if target.lower().startswith(("http://", "https://")):
        return urlsplit(target).hostname or "server"
    argv = _split(target) or ["server"]
    word = next((a for a in reversed(argv) if a.endswith(".py")), argv[0])
    return Path(word).stem or "server"


class _DuplicateKey(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is beyond a float")
    return value


def _read_yaml(path: Path) -> dict[str, Any]:
    """goose's YAML document in ``path`` ({} when there is none)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise InstallError(f"{path} is not valid YAML ({e}); fix or move it first") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a YAML mapping; fix or move it first")
    return data


def yaml_comments(text: str) -> bool:
    """Whether the YAML ``text`` has comments (which a rewrite through PyYAML drops): a
    ``#`` outside every scalar (``a#b``, ``"x # y"`` and block scalars are not comments)."""
    import yaml

    if "#" not in text:
        return False
    try:
        spans = [
            (t.start_mark.index, t.end_mark.index)
            for t in yaml.scan(text, Loader=yaml.SafeLoader)
            if isinstance(t, yaml.ScalarToken)
        ]
    except yaml.YAMLError:
        return False  # not read either: _read_yaml refuses it
    return any(
        not any(start <= i < end for start, end in spans) for i, c in enumerate(text) if c == "#"
    )


def _read(path: Path) -> dict[str, Any]:
    """The document in ``path`` ({} when there is none); refused unless strict JSON
    (YAML for a ``.yaml`` file: goose's)."""
    if not path.exists():
        return {}
    if _is_yaml(path):
        return _read_yaml(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(
            text or "{}",
            object_pairs_hook=_unique,
            parse_constant=_no_constant,
            parse_float=_finite,
        )
    except _DuplicateKey as e:
        raise InstallError(
            f"{path}: the key {e.args[0]!r} appears twice in one object (a host keeps only "
            "one of them); merge them into one first"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InstallError(f"{path} is not valid JSON ({e}); fix or move it first") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; fix or move it first")
    return data


def _is_yaml(path: Path | None) -> bool:
    return path is not None and path.suffix in (".yaml", ".yml")


def _dumps(document: dict[str, Any], as_yaml: bool = False) -> str:
    if as_yaml:
        import yaml

        return str(yaml.safe_dump(document, sort_keys=False, default_flow_style=False))
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the lock of ``path`` (``.NAME.lock`` beside it; kept, as lock files must be),
    waiting while another ``mcpkit install`` changes the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, NEW_FILE_MODE)
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # tries for 10 s, then OSError
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _write(path: Path, document: dict[str, Any]) -> None:
    """Replace ``path`` atomically (a host reading it never sees half a file), keeping its
    mode (a new file: :data:`NEW_FILE_MODE`). ``path`` is the real file, not a link."""
    text = _dumps(document, _is_yaml(path))
    mode = path.stat().st_mode & 0o7777 if path.exists() else NEW_FILE_MODE
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _merge(
    document: dict[str, Any], key: str, name: str, entry: dict[str, Any], path: Path | None
) -> str:
    """Put ``entry`` under ``document[key][name]``; ``added``, ``updated`` or ``unchanged``."""
    servers = document.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: {key!r} is not a JSON object; fix it first")
    before = servers.get(name)
    status = "unchanged" if before == entry else "added" if before is None else "updated"
    servers[name] = entry
    return status


def install(
    host: str,
    target: str,
    *,
    name: str | None = None,
    env: dict[str, str] | None = None,
    config: str | None = None,
    project: str | None = None,
    scope: str | None = None,
    dry_run: bool = False,
    warn: Callable[[str], None] | None = None,
) -> tuple[str, Path | None, dict[str, Any]]:
    """Add ``target`` to ``host``'s configuration: ``(status, path, document)``.

    ``status`` is ``"added"``, ``"updated"`` or ``"unchanged"``; ``path`` is the file
    written (None when nothing is written: ``mcp-json`` without ``config``, or ``dry_run``
    when the path is unknown); ``document`` the whole configuration as written.
    ``scope`` (``"project"`` or ``"user"``) picks the file of a host that reads both.
    ``warn`` is told (one line) when a rewrite loses something: a YAML file's comments.
    """
    if host not in HOSTS:
        raise InstallError(f"unknown host {host!r} (one of: {', '.join(HOSTS)})")
    if (scope == "project" or project) and host not in SCOPES:
        raise UsageError(
            f"{host} reads one file, not a project's: drop --scope/--project "
            f"(hosts with both: {', '.join(SCOPES)})"
        )
    name = name or default_name(target)
    entry = server_entry(host, target, env or {}, name)
    path = Path(config).expanduser() if config else config_path(host, project, scope)
    key = _servers_key(host)
    if path is None or dry_run:
        document = _read(path) if path is not None else {}
        return _merge(document, key, name, entry, path), path, document
    # A symbolic link stays one: its target is the file read, locked and replaced.
    real = Path(os.path.realpath(path))
    with _locked(real):
        document = _read(real)
        status = _merge(document, key, name, entry, path)
        if status != "unchanged":
            lossy = _is_yaml(real) and real.exists() and yaml_comments(real.read_text("utf-8"))
            _write(real, document)
            if lossy and warn is not None:
                warn(f"{path} had comments; they are not kept (the YAML is rewritten whole)")
    return status, path, document


def _why(host: str, project: str | None, scope: str | None) -> str:
    """Which file a host reads and why this one: what the output says after the path."""
    if host not in SCOPES:
        return f"({host} keeps its servers in this one file; restart it to load them)"
    chosen = "project" if project else scope or SCOPES[host][0]
    other = "user" if chosen == "project" else "project"
    elsewhere = config_path(host, None, other)
    return f"({host}, {_WHY[chosen]}; --scope {other} writes {elsewhere} instead)"


def main(command: str, argv: list[str]) -> int:
    """``mcpkit install HOST TARGET [--name N] [--env K=V]... [--scope S] [--config PATH]
    [--dry-run]``."""
    p = argparse.ArgumentParser(
        prog=f"mcpkit {command}", description="Add a server to an MCP host's configuration."
    )
    p.add_argument("host", choices=HOSTS, help="the host whose configuration to change")
    p.add_argument("target", help="a server file, a command line (one quoted string) or a URL")
    p.add_argument("--name", help="the server's name in the host (default: from the target)")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--config", help="the configuration file (default: the host's own)")
    p.add_argument(
        "--scope",
        choices=("project", "user"),
        help="the project's file (in the current directory) or the user's, for hosts with "
        f"both ({', '.join(SCOPES)}); default: {', '.join(f'{h} {s[0]}' for h, s in SCOPES.items())}",
    )
    p.add_argument("--project", help="the project scope, in this directory instead of .")
    p.add_argument("--dry-run", action="store_true", help="print the result, write nothing")
    try:
        ns = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    env: dict[str, str] = {}
    for item in ns.env:
        key, found, value = item.partition("=")
        if not found or not key:
            print(
                f"mcpkit {command}: --env must look like NAME=VALUE, got {item!r}", file=sys.stderr
            )
            return 2
        env[key] = value
    try:
        status, path, document = install(
            ns.host, ns.target, name=ns.name, env=env, config=ns.config,
            project=ns.project, scope=ns.scope, dry_run=ns.dry_run,
            warn=lambda line: print(f"mcpkit {command}: warning: {line}", file=sys.stderr),
        )  # fmt: skip
    except UsageError as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    except (InstallError, OSError) as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 1
    if path is None or ns.dry_run:
        sys.stdout.write(_dumps(document, _is_yaml(path)))
        if path is not None:
            print(f"(dry run: {path} not written; the server would be {status})", file=sys.stderr)
        return 0
    shown = ns.name or default_name(ns.target)
    print(f"{shown}: {status} in {path.absolute()}", file=sys.stderr)
    if ns.config is None:
        print(_why(ns.host, ns.project, ns.scope), file=sys.stderr)
    if env and (mode := path.stat().st_mode & 0o777) & 0o077:
        print(
            f"mcpkit {command}: note: {path} holds the --env values and is readable by "
            f"others (mode {mode:o}); chmod 600 it if they are secret",
            file=sys.stderr,
        )
    return 0
