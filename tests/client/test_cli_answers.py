"""``mcpkit call`` answers a tool's questions (elicitation), run as a user runs it: the console
script in a subprocess, against a real server subprocess, in both eras.

Non-interactively the answers come from ``--answer``/``--answers-file``; on a terminal (a
pseudo-terminal here, typed into) each field is asked and checked; with neither, the command
fails naming the flags.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
ASKS = str(Path(__file__).parent / "servers" / "asks.py")
ERAS = ("2025-11-25", "2026-07-28")
#: Bound on one command, spawning both processes included.
TIMEOUT = 60.0


def call(*argv: str, era: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCPKIT, "call", ASKS, *argv, "--protocol-version", era],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.mark.parametrize("era", ERAS)
def test_answer_given_as_json(era: str) -> None:
    p = call("book", "--answer", '{"name": "Ada", "guests": 4}', era=era)
    assert (p.returncode, p.stdout, p.stderr) == (0, "booked for Ada: 4 guests, indoor\n", "")
    # Fields left out get the form's defaults.
    p = call("book", "--answer", '{"name": "Bo"}', era=era)
    assert (p.returncode, p.stdout) == (0, "booked for Bo: 2 guests, indoor\n")


@pytest.mark.parametrize("era", ERAS)
def test_answers_in_order_and_from_a_file(era: str, tmp_path: Path) -> None:
    p = call("two", "--answer", '{"word": "hello"}', "--answer", '{"word": "world"}', era=era)
    assert (p.returncode, p.stdout) == (0, "hello world\n")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"word": "from"}, "decline"]))
    p = call("two", "--answers-file", str(answers), era=era)
    assert (p.returncode, p.stdout) == (0, "from decline\n")
    p = call("two", "--answer", '{"word": "first"}', "--answers-file", str(answers), era=era)
    assert (p.returncode, p.stdout) == (0, "first from\n")


@pytest.mark.parametrize("era", ERAS)
def test_declined_or_cancelled(era: str) -> None:
    for action in ("decline", "cancel"):
        p = call("book", "--answer", action, era=era)
        assert (p.returncode, p.stdout) == (0, f"no booking ({action})\n")


@pytest.mark.parametrize("era", ERAS)
def test_no_answer_names_the_flags(era: str) -> None:
    p = call("book", era=era)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith("mcpkit call: the server asks: 'Who is the table for?'")
    assert '--answer \'{"name": "...", "guests": 1, "seating": "indoor"}\'' in p.stderr
    assert "--answers-file FILE" in p.stderr and "Traceback" not in p.stderr
    # One answer for two questions: the second has none left.
    p = call("two", "--answer", '{"word": "one"}', era=era)
    assert p.returncode == 2
    assert "'Second word?'" in p.stderr and "no answer is left" in p.stderr


@pytest.mark.parametrize("era", ERAS)
def test_an_answer_that_does_not_fit(era: str) -> None:
    p = call("book", "--answer", '{"name": "Ada", "guests": 40}', era=era)
    assert p.returncode == 2
    assert "answer #1 does not fit the question 'Who is the table for?'" in p.stderr
    assert "guests: must be <= 12" in p.stderr


@pytest.mark.parametrize("era", ERAS)
def test_a_url_to_open(era: str) -> None:
    p = call("pay", "--answer", "{}", era=era)
    assert (p.returncode, p.stdout) == (0, "accept\n")
    assert "The server asks you to open: https://bank.example/pay/42" in p.stderr
    p = call("pay", "--answer", "decline", era=era)
    assert (p.returncode, p.stdout) == (0, "decline\n")
    p = call("pay", era=era)
    assert p.returncode == 2
    assert "open it and say so with --answer '{}'" in p.stderr


@pytest.mark.parametrize("era", ERAS)
def test_read_and_prompt_answer_too(era: str) -> None:
    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [MCPKIT, argv[0], ASKS, *argv[1:], "--protocol-version", era],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    p = run("read", "mem://secret", "--answer", '{"word": "sesame"}')
    assert (p.returncode, p.stdout) == (0, "unlocked by sesame\n")
    p = run("prompt", "greet", "--answer", '{"word": "Ada"}')
    assert (p.returncode, p.stdout.splitlines()[-1]) == (0, "user: Say hello to Ada")
    p = run("prompt", "greet")
    assert p.returncode == 2
    assert "mcpkit prompt: the server asks: 'Whom to greet?'" in p.stderr
    assert '--answer \'{"word": "..."}\'' in p.stderr


def test_malformed_answers_are_usage_errors(tmp_path: Path) -> None:
    p = call("book", "--answer", "{name: Ada}", era=ERAS[1])
    assert p.returncode == 2 and "--answer #1 is not valid JSON" in p.stderr
    p = call("book", "--answer", "[1]", era=ERAS[1])
    assert p.returncode == 2 and "--answer #1 must be a JSON object" in p.stderr
    p = call("book", "--answers-file", str(tmp_path / "none.json"), era=ERAS[1])
    assert p.returncode == 2 and "--answers-file: cannot read" in p.stderr


class Terminal:
    """``mcpkit call`` with a pseudo-terminal as its stdin and stderr (where it asks)."""

    def __init__(self, *argv: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [MCPKIT, "call", ASKS, *argv],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            text=True,
        )
        os.close(slave)
        self.seen = ""
        self.pos = 0
        self.deadline = time.monotonic() + TIMEOUT

    def expect(self, text: str) -> None:
        """Wait (bounded) until ``text`` is shown after what was expected before."""
        while text not in self.seen[self.pos :]:
            left = self.deadline - time.monotonic()
            ready, _, _ = select.select([self.master], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"{text!r} never shown; the terminal shows:\n{self.seen}")
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the program ended
                chunk = b""
            if not chunk:
                raise AssertionError(f"{text!r} never shown; the terminal shows:\n{self.seen}")
            self.seen += chunk.decode(errors="replace")
        self.pos = self.seen.index(text, self.pos) + len(text)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        """The exit status and what was printed on stdout."""
        out, _ = self.proc.communicate(timeout=TIMEOUT)
        return self.proc.returncode, out

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:  # the test failed half-way: end what it started
            self.proc.kill()
            self.proc.communicate(timeout=TIMEOUT)
        os.close(self.master)


@pytest.mark.parametrize("era", ERAS)
def test_asked_field_by_field_on_a_terminal(era: str) -> None:
    with Terminal("book", "--protocol-version", era) as t:
        t.expect("The server asks: Who is the table for?")
        t.expect("name (string): ")
        t.type("")  # required: asked again
        t.expect("an answer is required; try again")
        t.type("Ada")
        t.expect("guests (integer; Enter: 2): ")
        t.type("many")
        t.expect("'many' is not an integer; try again")
        t.expect("guests (integer; Enter: 2): ")
        t.type("13")
        t.expect("must be <= 12; try again")
        t.type("3")
        t.expect('seating (string, one of: indoor, outdoor; Enter: "indoor"): ')
        t.type("roof")
        t.expect("must be one of ['indoor', 'outdoor']; try again")
        t.type("outdoor")
        assert t.finish() == (0, "booked for Ada: 3 guests, outdoor\n")


@pytest.mark.parametrize("era", ERAS)
def test_declined_on_a_terminal(era: str) -> None:
    with Terminal("two", "--protocol-version", era) as t:
        t.expect("First word?")
        t.expect("word (string): ")
        t.type("decline")
        t.expect("Second word?")
        t.expect("word (string): ")
        t.type("end")
        assert t.finish() == (0, "decline end\n")


def test_a_form_without_fields_is_still_asked() -> None:
    for typed, action in (("", "accept"), ("decline", "decline"), ("cancel", "cancel")):
        with Terminal("confirm") as t:
            t.expect("The server asks: Go ahead?")
            t.expect("Enter to accept (or decline, cancel): ")
            t.type(typed)
            assert t.finish() == (0, f"{action}\n")


def test_a_url_on_a_terminal() -> None:
    with Terminal("pay") as t:
        t.expect("The server asks you to open: https://bank.example/pay/42")
        t.expect("Enter once it is open (or decline, cancel): ")
        t.type("")
        assert t.finish() == (0, "accept\n")


@pytest.mark.parametrize("era", ERAS)
def test_typing_time_does_not_count_against_the_timeout(era: str) -> None:
    with Terminal("book", "--protocol-version", era, "--timeout", "4") as t:
        t.expect("name (string): ")
        time.sleep(5)  # a person slower than --timeout (not a wait for the program)
        t.type("Ada")
        t.expect("guests (integer; Enter: 2): ")
        t.type("")
        t.expect("seating")
        t.type("")
        assert t.finish() == (0, "booked for Ada: 2 guests, indoor\n")


def test_command_line_answers_first_then_the_terminal() -> None:
    with Terminal("two", "--answer", '{"word": "given"}') as t:
        t.expect("Second word?")
        t.expect("word (string): ")
        t.type("typed")
        assert t.finish() == (0, "given typed\n")
