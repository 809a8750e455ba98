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


def _starts(command: str, args: list[str], env: dict[str, str] | None, cwd: Path) -> str:
    """What the host does with an entry: start it (from a directory of its own) and call."""

    async def use() -> str:
        target = stdio([command, *args], env=env or None, cwd=str(cwd))
        with anyio.fail_after(30):
            async with Client(target) as client:
                result = await client.call_tool("hello", {"name": "Ada"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    return anyio.run(use)


def test_the_output_says_which_file_and_why_and_both_scopes_are_offered(
    tmp_path: Path, server_file: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    done = _install(home, "vscode", str(server_file), cwd=project)
    assert done.returncode == 0, done.stderr
    user_file = home / ".config" / "Code" / "User" / "mcp.json"
    assert done.stderr.splitlines() == [
        f"weather: added in {project / '.vscode' / 'mcp.json'}",
        "(vscode, project scope: this project only, shareable in its repository; "
        f"--scope user writes {user_file} instead)",
    ]
    assert (project / ".vscode" / "mcp.json").is_file()
    done = _install(home, "vscode", str(server_file), "--scope", "user", cwd=project)
    assert done.returncode == 0 and "user scope: every project of this user" in done.stderr
    assert "weather" in json.loads(user_file.read_text())["servers"]
    # cursor: the user's file by default, the project's on request
    done = _install(home, "cursor", str(server_file), cwd=project)
    assert f"added in {home / '.cursor' / 'mcp.json'}" in done.stderr
    assert "--scope project writes .cursor/mcp.json instead" in done.stderr
    done = _install(home, "cursor", str(server_file), "--scope", "project", cwd=project)
    assert done.returncode == 0 and (project / ".cursor" / "mcp.json").is_file()
    refused = _install(home, "claude-desktop", str(server_file), "--scope", "project")
    assert refused.returncode == 2 and "claude-desktop reads one file" in refused.stderr


def test_claude_code_user_and_project_files(tmp_path: Path, server_file: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))
    done = _install(home, "claude-code", str(server_file), "--env", "GREETER=cc", cwd=project)
    assert done.returncode == 0, done.stderr
    document = json.loads((home / ".claude.json").read_text())
    assert document["numStartups"] == 3 and document["projects"] == {}  # the rest is kept
    entry = document["mcpServers"]["weather"]
    assert entry["type"] == "stdio"
    assert _starts(entry["command"], entry["args"], entry["env"], tmp_path) == "hello Ada from cc"
    url = "https://mcp.example.com/mcp"
    done = _install(home, "claude-code", url, "--scope", "project", cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"mcp.example.com": {"type": "http", "url": url}}
    }


def test_gemini_cli_settings(tmp_path: Path, server_file: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "GitHub"}))
    done = _install(home, "gemini-cli", str(server_file), "--env", "GREETER=gem")
    assert done.returncode == 0, done.stderr
    document = json.loads(settings.read_text())
    entry = document["mcpServers"]["weather"]
    assert document["theme"] == "GitHub" and "type" not in entry
    assert _starts(entry["command"], entry["args"], entry["env"], tmp_path) == "hello Ada from gem"
    url = "http://127.0.0.1:8000/mcp"
    done = _install(home, "gemini-cli", url, "--name", "local", "--scope", "project", cwd=project)
    assert done.returncode == 0, done.stderr
    local = json.loads((project / ".gemini" / "settings.json").read_text())
    assert local == {"mcpServers": {"local": {"httpUrl": url}}}  # "url" would mean SSE


def test_goose_extensions_in_its_yaml(tmp_path: Path, server_file: Path) -> None:
    import yaml

    home = tmp_path / "home"
    config = home / ".config" / "goose" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("GOOSE_PROVIDER: openai\nextensions:\n  developer:\n    enabled: true\n")
    done = _install(home, "goose", str(server_file), "--env", "GREETER=goose")
    assert done.returncode == 0, done.stderr
    assert f"weather: added in {config}" in done.stderr
    document = yaml.safe_load(config.read_text())
    assert document["GOOSE_PROVIDER"] == "openai"
    assert document["extensions"]["developer"] == {"enabled": True}
    entry = document["extensions"]["weather"]
    assert {k: entry[k] for k in ("name", "type", "enabled")} == {
        "name": "weather",
        "type": "stdio",
        "enabled": True,
    }
    assert _starts(entry["cmd"], entry["args"], entry["envs"], tmp_path) == "hello Ada from goose"
    assert "unchanged" in _install(home, "goose", str(server_file), "--env", "GREETER=goose").stderr
    url = "https://mcp.example.com/mcp"
    assert _install(home, "goose", url).returncode == 0
    remote = yaml.safe_load(config.read_text())["extensions"]["mcp.example.com"]
    assert (remote["type"], remote["uri"]) == ("streamable_http", url)


def test_a_relative_script_in_a_command_line_is_stored_absolute(
    tmp_path: Path, server_file: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    target = f"{sys.executable} srv/weather.py --verbose"
    done = _install(home, "mcp-json", target, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["weather"]
    assert entry["args"] == [str(server_file), "--verbose"]
