"""``mcpkit read`` and ``mcpkit prompt``, ``mcpkit list`` showing what a parameter accepts,
and ``-v`` showing the server's log messages and progress."""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit._client._cli import main

SERVER = textwrap.dedent(
    '''
    from typing import Literal

    from mcpkit import Context, Server

    server = Server("cli")


    @server.tool()
    async def convert(
        value: float, unit: Literal["c", "f"] = "c", tags: list[str] | None = None, *, ctx: Context
    ) -> str:
        """Convert a temperature."""
        await ctx.info("converting")
        await ctx.report_progress(1, 2, "half way")
        return f"{value}{unit}"


    @server.resource("notes://{day}", mime_type="text/plain")
    def note(day: str) -> str:
        """A day's note."""
        return f"note of {day}"


    @server.resource("blob://logo", mime_type="image/png")
    def logo() -> bytes:
        """A logo."""
        return b"\\x89PNG1234"


    @server.prompt()
    def review(code: str, style: str = "short") -> str:
        """Review some code."""
        return f"Review ({style}): {code}"


    if __name__ == "__main__":
        server.run()
    '''
)


@pytest.fixture
def target(tmp_path: Path) -> str:
    path = tmp_path / "cli_server.py"
    path.write_text(SERVER)
    return shlex.join([sys.executable, str(path)])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(argv[0], list(argv[1:]))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_types_enums_defaults_and_required(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code, out, err = run(capsys, "list", target)
    assert code == 0, err
    assert out.splitlines() == [
        "convert  Convert a temperature.",
        "    value: number (required)",
        '    unit: string (one of: c, f) = "c"',
        "    tags: array of string|null = null",
    ]


def test_read_prints_text_and_describes_blobs(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    assert run(capsys, "read", target, "notes://monday") == (0, "note of monday\n", "")
    code, out, _ = run(capsys, "read", target, "blob://logo")
    assert (code, out) == (0, "[blob://logo: image/png, 8 bytes]\n")
    code, out, _ = run(capsys, "read", target, "notes://x", "--format", "json")
    assert code == 0 and '"text": "note of x"' in out


def test_read_of_a_missing_resource_is_one_line(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code, out, err = run(capsys, "read", target, "nothing://here")
    assert code == 1 and not out
    assert len(err.strip().splitlines()) == 1 and "nothing://here" in err


def test_prompt_fills_the_arguments(capsys: pytest.CaptureFixture[str], target: str) -> None:
    code, out, err = run(capsys, "prompt", target, "review", "code=x = 1", "style=long")
    assert code == 0, err
    assert out.splitlines() == ["# Review some code.", "user: Review (long): x = 1"]
    code, _, err = run(capsys, "prompt", target, "review")  # `code` is required
    assert code == 1 and "code" in err


def test_verbose_shows_log_messages_and_progress(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code, out, err = run(capsys, "call", target, "convert", "value=20", "-v")
    assert (code, out) == (0, "20.0c\n")
    assert "[info] converting" in err
    assert "[progress 1/2] half way" in err
    code, _, err = run(capsys, "call", target, "convert", "value=20")
    assert "converting" not in err and "progress" not in err
