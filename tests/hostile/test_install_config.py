"""``mcpkit install`` against the host configuration files it changes: the console script run
as a user runs it (HOME pointing at a scratch directory).

Before: a symlinked config was replaced by a regular file (the link lost, its target stale);
a new config holding an ``--env`` secret was written 0644; of 8 installs at once some were
lost; duplicate ``mcpServers`` keys silently dropped the first object's entries; a ``NaN``
was written back (not JSON); an unterminated quote in TARGET was a traceback.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and links")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA")}
    env["HOME"] = str(home)
    return env


def _install(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCPKIT, "install", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(home),
        cwd=home,
        stdin=subprocess.DEVNULL,
    )


def _one_line_error(done: subprocess.CompletedProcess[str], status: int, *words: str) -> None:
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_symlinked_config_stays_a_link_and_its_target_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    target.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    link = home / ".config" / "Claude" / "claude_desktop_config.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    done = _install(home, "claude-desktop", "my-server --flag", "--name", "mine")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    servers = json.loads(target.read_text())["mcpServers"]
    assert servers == {
        "other": {"command": "x"},
        "mine": {"command": "my-server", "args": ["--flag"]},
    }


def test_a_new_config_with_an_env_secret_is_owner_only_and_an_old_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _install(home, "cursor", "srv", "--env", "API_KEY=s3cret")
    assert done.returncode == 0, done.stderr
    config = home / ".cursor" / "mcp.json"
    assert json.loads(config.read_text())["mcpServers"]["srv"]["env"] == {"API_KEY": "s3cret"}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    # A file the user made keeps the mode they gave it (and is told it is readable).
    shared = tmp_path / "shared.json"
    shared.write_text("{}")
    shared.chmod(0o640)
    done = _install(home, "mcp-json", "srv", "--env", "API_KEY=s3cret", "--config", str(shared))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    assert "readable by others" in done.stderr


def test_installs_running_at_once_all_land(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"kept": {"command": "k"}}}))
    names = [f"server{i}" for i in range(16)]
    procs = [
        subprocess.Popen(
            [MCPKIT, "install", "mcp-json", f"prog{n}", "--name", n, "--config", str(config)],
            env=_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n in names
    ]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * len(names), errors
    servers = json.loads(config.read_text())["mcpServers"]
    assert sorted(servers) == sorted(["kept", *names])
    # The lock they took turns about: a file beside the config, left in place, owner-only.
    lock = tmp_path / ".mcp.json.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mcp.json.lock", "home", "mcp.json"]


def test_duplicate_mcpservers_keys_are_refused_naming_the_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    text = '{"mcpServers": {"a": {"command": "a"}}, "mcpServers": {"b": {"command": "b"}}}'
    config.write_text(text)
    done = _install(home, "cursor", "srv")
    _one_line_error(done, 1, "'mcpServers'", "appears twice")
    assert config.read_text() == text


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_and_never_written(tmp_path: Path, value: str) -> None:
    home = tmp_path / "home"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    text = '{"timeout": ' + value + ', "mcpServers": {}}'
    config.write_text(text)
    done = _install(home, "cursor", "srv")
    _one_line_error(done, 1, "not valid JSON")
    assert config.read_text() == text


def test_an_unterminated_quote_in_the_target_is_one_line_and_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _install(home, "cursor", 'python "server.py', "--dry-run")
    _one_line_error(done, 2, "not a valid command line", "no closing quotation")
    assert not (home / ".cursor").exists()
