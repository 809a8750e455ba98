"""``mcpkit install``: run as a user runs it (the console script, HOME pointing at a scratch
directory), and the entry it writes really starts the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpkit import Client, stdio

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
SERVER = """
from mcpkit import Server

server = Server("installed")


@server.tool()
def hello(name: str) -> str:
    '''Say hello.'''
    import os
    return f"hello {name} from {os.environ.get('GREETER', '?')}"
"""


def _install(home: Path, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA")}
    env["HOME"] = str(home)
    return subprocess.run(
        [MCPKIT, "install", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd or home,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "srv" / "weather.py"
    path.parent.mkdir()
    path.write_text(SERVER)
    return path


def _claude_config(home: Path) -> Path:
    assert sys.platform.startswith("linux"), "the test knows the Linux location"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def test_claude_desktop_entry_starts_the_server(tmp_path: Path, server_file: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _install(home, "claude-desktop", str(server_file), "--env", "GREETER=mcpkit")
    assert done.returncode == 0, done.stderr
    config = _claude_config(home)
    assert "weather: added in " + str(config) in done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["weather"]
    assert entry["env"] == {"GREETER": "mcpkit"}

    async def use() -> str:
        # Exactly what the host does: the command, its arguments and its environment.
        target = stdio([entry["command"], *entry["args"]], env=entry["env"])
        with anyio.fail_after(30):
            async with Client(target) as client:
                result = await client.call_tool("hello", {"name": "Ada"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    assert anyio.run(use) == "hello Ada from mcpkit"


def test_installing_again_is_idempotent_and_keeps_the_rest(
    tmp_path: Path, server_file: Path
) -> None:
    home = tmp_path / "home"
    config = _claude_config(home)
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "x"}}}))
    assert _install(home, "claude-desktop", str(server_file)).returncode == 0
    written = config.read_bytes()
    again = _install(home, "claude-desktop", str(server_file))
    assert again.returncode == 0 and "unchanged" in again.stderr
    assert config.read_bytes() == written
    document = json.loads(written)
    assert document["theme"] == "dark" and set(document["mcpServers"]) == {"other", "weather"}
    changed = _install(home, "claude-desktop", str(server_file), "--env", "K=V")
    assert "updated" in changed.stderr
    assert json.loads(config.read_text())["mcpServers"]["weather"]["env"] == {"K": "V"}


def test_dry_run_writes_nothing(tmp_path: Path, server_file: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _install(home, "cursor", str(server_file), "--name", "wx", "--dry-run")
    assert done.returncode == 0
    assert "wx" in json.loads(done.stdout)["mcpServers"]
    assert not (home / ".cursor").exists()


def test_vscode_and_cursor_project_files_and_urls(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    url = "https://mcp.example.com/mcp"
    assert _install(home, "vscode", url, cwd=project).returncode == 0
    vscode = json.loads((project / ".vscode" / "mcp.json").read_text())
    assert vscode == {"servers": {"mcp.example.com": {"type": "http", "url": url}}}
    assert _install(home, "cursor", url, "--project", str(project)).returncode == 0
    cursor = json.loads((project / ".cursor" / "mcp.json").read_text())
    assert cursor == {"mcpServers": {"mcp.example.com": {"url": url}}}


def test_mcp_json_is_printed(tmp_path: Path, server_file: Path) -> None:
    done = _install(tmp_path, "mcp-json", f"{sys.executable} {server_file}")
    assert done.returncode == 0
    entry = json.loads(done.stdout)["mcpServers"]["weather"]
    assert entry == {"command": sys.executable, "args": [str(server_file)]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["claude-desktop", "https://x.example/mcp"], "Settings > Connectors"),
        (["cursor", "missing.py"], "no such file"),
        (["cursor", "https://x.example/mcp", "--env", "A=1"], "--env applies"),
    ],
)
def test_refusals_are_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    done = _install(tmp_path, *argv)
    assert done.returncode == 1
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_config_that_is_not_json_is_left_alone(tmp_path: Path, server_file: Path) -> None:
    home = tmp_path / "home"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text("{not json")
    done = _install(home, "cursor", str(server_file))
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert config.read_text() == "{not json"
