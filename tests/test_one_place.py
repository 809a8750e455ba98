"""Facts of the protocol written once in ``src/mcpkit`` and imported everywhere else: the
``_meta`` keys (``mcpkit.types._metakeys``) and the log levels (``mcpkit.types._levels``)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from mcpkit.types._levels import LOG_LEVELS, LoggingLevel

SRC = Path(__file__).resolve().parents[1] / "src" / "mcpkit"

#: A literal, and the one module that may write it.
HOMES = {
    '"io.modelcontextprotocol/protocolVersion"': "types/_metakeys.py",
    '"io.modelcontextprotocol/clientCapabilities"': "types/_metakeys.py",
    '"io.modelcontextprotocol/clientInfo"': "types/_metakeys.py",
    '"io.modelcontextprotocol/logLevel"': "types/_metakeys.py",
    '"io.modelcontextprotocol/serverInfo"': "types/_metakeys.py",
    '"io.modelcontextprotocol/subscriptionId"': "types/_metakeys.py",
    '"emergency"': "types/_levels.py",
}
#: Modules that still write one of them, each until its owner imports it instead (issue 42:
#: ``_app/`` was being rewritten at the time). A stale entry fails the test.
NOT_YET: set[str] = set()


@pytest.mark.parametrize("literal", sorted(HOMES))
def test_written_in_one_module(literal: str) -> None:
    writers = {
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if literal in path.read_text()
    }
    assert HOMES[literal] in writers
    assert writers - NOT_YET == {HOMES[literal]}, f"import {literal} from mcpkit.{HOMES[literal]}"


def test_not_yet_is_not_stale() -> None:
    for module in NOT_YET:
        text = (SRC / module).read_text()
        assert any(literal in text for literal in HOMES), f"{module} imports them now: drop it"


def test_the_levels_are_the_type_s() -> None:
    assert LOG_LEVELS[0] == "debug" and LOG_LEVELS[-1] == "emergency" and len(LOG_LEVELS) == 8
    assert set(LOG_LEVELS) == set(get_args(LoggingLevel))
