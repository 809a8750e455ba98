"""The conformance suite's 2026-07-28 client scenarios, run against ``examples/conformance_client.py``.

The harness (npm ``@modelcontextprotocol/conformance``, pinned to a release that has the
2026-07-28 scenarios) needs node >= 22; both are taken from ``$CONFORMANCE_HOME`` when
the shared conformance runner (``run.sh``) installed them there already, else installed once into
``~/.cache/mcpkit-tests`` (outside the repository). The test is skipped only when the npm
registry cannot be reached, and says so loudly.

Each scenario runs at the revision the harness gives it: the ones introduced by 2026-07-28
at that revision (the client is stateless), and the scenarios carried over from earlier
revisions again with ``--spec-version 2026-07-28`` (the harness's mock server is then
stateless too).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.client._conformance_harness import harness_for, run_scenario

HARNESS_VERSION = "0.2.0-alpha.12"
REV = "2026-07-28"
#: Scenarios introduced by 2026-07-28 (the harness runs them at that revision).
NEW_SCENARIOS = [
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
]
#: Earlier scenarios that still apply, run at 2026-07-28 (stateless lifecycle).
CARRIED_SCENARIOS = ["tools_call", "json-schema-2020-12-preservation"]


@pytest.fixture(scope="module")
def harness() -> tuple[str, str]:
    return harness_for(HARNESS_VERSION)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", NEW_SCENARIOS)
def test_a_2026_scenario(harness: tuple[str, str], scenario: str, tmp_path: Path) -> None:
    checks, stderr = run_scenario(harness, scenario, tmp_path)
    if scenario == "http-invalid-tool-headers":
        # The client says which tools it left out, and why (streamable-http.mdx: SHOULD).
        assert "rejected tool 'invalid_empty_header'" in stderr, stderr
        assert "rejected tool 'valid_tool'" not in stderr
    if scenario == "http-custom-headers":
        mirrored = {c["name"] for c in checks if c["status"] == "SUCCESS"}
        assert {"ClientCustomHeader_NonAscii", "ClientCustomHeaderOmitNull"} <= mirrored


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", CARRIED_SCENARIOS)
def test_an_earlier_scenario_at_2026(
    harness: tuple[str, str], scenario: str, tmp_path: Path
) -> None:
    run_scenario(harness, scenario, tmp_path, "--spec-version", REV)
