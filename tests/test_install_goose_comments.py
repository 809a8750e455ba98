"""Issue 33: ``mcpkit install goose`` rewrites goose's whole YAML file, which drops its
comments; it says so on the terminal, in one line, when the file it rewrites had any (run as
a user runs it: the console script, HOME a scratch directory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mcpkit._install import yaml_comments

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
WARNING = "had comments; they are not kept (the YAML is rewritten whole)"


def _install(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA")}
    env["HOME"] = str(home)
    return subprocess.run(
        [MCPKIT, "install", "goose", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
    )


def _config(tmp_path: Path, text: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    config = home / ".config" / "goose" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    return home, config


def test_a_commented_goose_file_gets_one_warning_line(tmp_path: Path) -> None:
    home, config = _config(
        tmp_path, "# my goose settings\nGOOSE_PROVIDER: openai  # for now\nextensions: {}\n"
    )
    url = "https://mcp.example.com/mcp"
    done = _install(home, url)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "comments" in line]
    assert warned == [f"mcpkit install: warning: {config} {WARNING}"], done.stderr
    document = yaml.safe_load(config.read_text())
    assert document["GOOSE_PROVIDER"] == "openai"
    assert document["extensions"]["mcp.example.com"]["uri"] == url
    assert "#" not in config.read_text()  # what the warning said: the comments are gone
    again = _install(home, url)  # unchanged: not rewritten, nothing lost, nothing said
    assert again.returncode == 0 and "unchanged" in again.stderr
    assert "comments" not in again.stderr


@pytest.mark.parametrize(
    "text",
    ["GOOSE_PROVIDER: openai\n", 'GOOSE_MODEL: "gpt # 5"\nnote: a#b\n', ""],
    ids=["plain", "hash-in-values", "empty"],
)
def test_no_warning_without_comments(tmp_path: Path, text: str) -> None:
    home, config = _config(tmp_path, text)
    done = _install(home, "https://mcp.example.com/mcp")
    assert done.returncode == 0, done.stderr
    assert "added" in done.stderr and "comments" not in done.stderr
    assert "mcp.example.com" in yaml.safe_load(config.read_text())["extensions"]


def test_what_counts_as_a_comment() -> None:
    assert yaml_comments("# top\na: 1\n")
    assert yaml_comments("a:\n  - x # why\n")
    assert not yaml_comments('a: "x # y"\nb: c#d\n')
    assert not yaml_comments("a: |\n  # a line of the text\n  x\n")
