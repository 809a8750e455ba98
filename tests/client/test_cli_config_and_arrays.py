"""``mcpkit list|call|read|prompt --config FILE NAME`` (a server of a host's config file),
``tags=a,b`` for an array of strings, the JSON hint for other arrays, and parameter
descriptions in ``mcpkit list``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit._client._cli import main

SERVER = textwrap.dedent(
    '''
    import os

    from mcpkit import Server

    server = Server("notes")


    @server.tool()
    def tag(note: str, tags: list[str], weights: list[int] | None = None) -> str:
        """Tag a note.

        Args:
            note: The note's title.
            tags: Labels to put on it.
        """
        return repr((note, tags, weights, os.environ.get("NOTES_MODE")))


    @server.resource("notes://{day}", mime_type="text/plain")
    def day(day: str) -> str:
        """A day's note."""
        return f"note of {day}"


    @server.prompt()
    def review(code: str) -> str:
        """Review some code."""
        return f"Review: {code}"


    if __name__ == "__main__":
        server.run()
    '''
)


@pytest.fixture
def config(tmp_path: Path) -> str:
    (tmp_path / "notes.py").write_text(SERVER)
    path = tmp_path / "mcp.json"
    entry = {
        "command": sys.executable,
        "args": ["notes.py"],
        "cwd": str(tmp_path),
        "env": {"NOTES_MODE": "from-config"},
    }
    path.write_text(json.dumps({"mcpServers": {"notes": entry}}))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(argv[0], list(argv[1:]))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_parameter_descriptions(capsys: pytest.CaptureFixture[str], config: str) -> None:
    code, out, err = run(capsys, "list", "notes", "--config", config)
    assert code == 0, err
    assert out.splitlines() == [
        "tag  Tag a note.",
        "    note: string (required)  The note's title.",
        "    tags: array of string (required)  Labels to put on it.",
        "    weights: array of integer|null = null",
    ]


def test_every_command_takes_a_server_of_a_config_file(
    capsys: pytest.CaptureFixture[str], config: str
) -> None:
    code, out, err = run(capsys, "call", "notes", "tag", "note=x", "tags=a", "--config", config)
    assert (code, out) == (0, "('x', ['a'], None, 'from-config')\n"), err
    # --env on the command line wins over the entry's
    code, out, err = run(
        capsys, "call", "notes", "tag", "note=x", "tags=a", "--config", config,
        "--env", "NOTES_MODE=from-cli",
    )  # fmt: skip
    assert (code, out) == (0, "('x', ['a'], None, 'from-cli')\n"), err
    assert run(capsys, "read", "notes", "notes://monday", "--config", config)[:2] == (
        0,
        "note of monday\n",
    )
    code, out, err = run(capsys, "prompt", "notes", "review", "code=1", "--config", config)
    assert (code, out) == (0, "# Review some code.\nuser: Review: 1\n"), err


def test_a_name_the_config_lacks_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], config: str, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "list", "nope", "--config", config)
    assert (code, out) == (2, "")
    assert f"{config} has no server 'nope' (it has: notes)" in err
    code, out, err = run(capsys, "list", "notes", "--config", str(tmp_path / "missing.json"))
    assert (code, out) == (2, "") and "cannot read" in err and "Traceback" not in err


def test_comma_separated_values_fill_an_array_of_strings(
    capsys: pytest.CaptureFixture[str], config: str
) -> None:
    code, out, err = run(
        capsys, "call", "notes", "tag", "note=x", "tags=a, b,c", "weights=[1, 2]",
        "--config", config,
    )  # fmt: skip
    assert (code, out) == (0, "('x', ['a', 'b', 'c'], [1, 2], 'from-config')\n"), err
    # a JSON array still works, commas inside its strings kept
    code, out, err = run(
        capsys, "call", "notes", "tag", "note=x", 'tags=["a,b"]', "--config", config
    )
    assert (code, out) == (0, "('x', ['a,b'], None, 'from-config')\n"), err


def test_other_arrays_say_to_write_json(capsys: pytest.CaptureFixture[str], config: str) -> None:
    code, out, err = run(
        capsys, "call", "notes", "tag", "note=x", "tags=a", "weights=1,2", "--config", config
    )
    assert (code, out) == (2, "")
    assert "argument weights: '1,2' is not a valid array/null; write it as JSON, e.g. " in err
    assert "weights='[1, 2]'" in err


def test_the_console_script_with_config(config: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpkit",
            "call",
            "notes",
            "tag",
            "note=n",
            "tags=x,y",
            "--config",
            config,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout) == (0, "('n', ['x', 'y'], None, 'from-config')\n"), (
        done.stderr
    )
