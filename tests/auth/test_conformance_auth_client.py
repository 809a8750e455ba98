"""The conformance suite's authorization client scenarios (``auth/*``), every one, run
against ``examples/conformance_client.py`` with the pinned harness.

The harness plays the MCP servers and authorization servers (discovery variants, scope
selection and step-up, token endpoint authentication, pre-registration, CIMD, DPoP with
and without nonces, client credentials, workload identity, enterprise-managed
authorization, RFC 9207 ``iss`` checks, a moved authorization server, and the servers a
careful client must refuse). A scenario passes only with no FAILURE and no WARNING check.
Those that apply to 2026-07-28 run again at that revision (registration must then name an
``application_type``; the client is stateless).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.client._conformance_harness import ScenarioPool, harness_for

HARNESS_VERSION = "0.2.0-alpha.12"
DISCOVERY = ["metadata-default", "metadata-var1", "metadata-var2", "metadata-var3"]
SCOPES = [
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "scope-step-up",
    "scope-retry-limit",
]
REGISTRATION = [
    "basic-cimd",
    "pre-registration",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
]
#: Introduced by 2026-07-28 (the harness runs them at that revision).
DRAFT = [
    "resource-mismatch",
    "offline-access-scope",
    "offline-access-not-supported",
    "authorization-server-migration",
    "iss-supported",
    "iss-not-advertised",
    "iss-supported-missing",
    "iss-wrong-issuer",
    "iss-unexpected",
    "iss-normalized",
    "metadata-issuer-mismatch",
]
LEGACY = ["2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback"]
EXTENSIONS = [
    "client-credentials-jwt",
    "client-credentials-basic",
    "enterprise-managed-authorization",
    "dpop",
    "dpop-nonce",
    "wif-jwt-bearer",
]
ALL = DISCOVERY + SCOPES + REGISTRATION + DRAFT + LEGACY + EXTENSIONS

# One xdist worker runs the module: its `scenarios` fixture starts every selected scenario,
# so tests spread over workers would run each scenario once per worker (4x the CPU).
pytestmark = pytest.mark.xdist_group("auth-conformance-client")


@pytest.fixture(scope="module")
def harness() -> tuple[str, str]:
    return harness_for(HARNESS_VERSION)


@pytest.fixture(scope="module")
def scenarios(
    harness: tuple[str, str],
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ScenarioPool]:
    """The scenarios of this module's selected tests, run ahead of them a few at a time."""
    runs: dict[str, tuple[str, Path, tuple[str, ...]]] = {}
    for item in request.session.items:
        scenario = getattr(getattr(item, "callspec", None), "params", {}).get("scenario")
        if getattr(item, "module", None) is not request.module or scenario is None:
            continue
        at_2026 = item.name.startswith("test_an_auth_scenario_at_2026")
        key = f"{scenario}@2026" if at_2026 else scenario
        extra = ("--spec-version", "2026-07-28") if at_2026 else ()
        runs[key] = (f"auth/{scenario}", tmp_path_factory.mktemp(key), extra)
    with ScenarioPool(harness, runs) as pool:
        yield pool


def test_every_auth_scenario_of_the_harness_is_run(harness: tuple[str, str]) -> None:
    """A scenario added to the pinned harness cannot be missed here."""
    import subprocess

    node, entry = harness
    listed = subprocess.run(
        [node, entry, "list", "--client"], capture_output=True, text=True, timeout=60
    ).stdout
    names = {w.strip("- ").split()[0] for w in listed.splitlines() if "auth/" in w}
    assert names == {f"auth/{s}" for s in ALL}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", ALL)
def test_an_auth_scenario(scenarios: ScenarioPool, scenario: str) -> None:
    checks, _ = scenarios.result(scenario)
    ids = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    if scenario == "scope-step-up":
        assert "scope-step-up-escalation" in ids
    if scenario == "dpop-nonce":
        assert {"sep-1932-client-as-nonce", "sep-1932-client-rs-nonce"} <= ids


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", DISCOVERY + SCOPES + REGISTRATION)
def test_an_auth_scenario_at_2026(scenarios: ScenarioPool, scenario: str) -> None:
    checks, _ = scenarios.result(f"{scenario}@2026")
    ids = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    if scenario in ("token-endpoint-auth-none", "metadata-default"):
        assert "sep-837-application-type-present" in ids
    if scenario == "scope-step-up":  # the scopes held are kept on re-authorization
        assert "sep-2350-scope-union-on-reauth" in ids
