"""Which key seals a 2026-07-28 ``requestState``, which keys verify it, and what a retry whose
state no key verifies is told: the likely cause (workers not sharing a key), by setting.

Workers on one Redis share rotating keys (tests/scaleout/test_shared_state_keys.py, real
workers and a real Redis); here any source of shared keys, and the errors, in process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from tests.stateless._stateless_helpers import post, request

from mcpkit import Context, Server, StatelessSettings
from mcpkit._exceptions import InvalidParams
from mcpkit._server._mrtr import seal, unseal
from mcpkit.lowlevel import ASGIClient

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

ANSWER = {"name": {"action": "accept", "content": {"name": "Alice"}}}


def _server(settings: StatelessSettings) -> Server[Any]:
    server = Server("asker", stateless=settings)

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask a name, then greet."""
        got = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
        )
        return f"Hello, {got.data['name']}!"

    return server


async def _first_here_retry_there(here: StatelessSettings, there: StatelessSettings) -> Any:
    call = request("tools/call", {"name": "greet", "arguments": {}})
    async with (
        ASGIClient(_server(here).http_app()) as a,
        ASGIClient(_server(there).http_app()) as b,
    ):
        first = (await post(a, call)).result
        params = {**call["params"], "inputResponses": ANSWER}
        params["requestState"] = first["requestState"]
        return await post(b, {**call, "params": params})


async def test_workers_with_keys_of_their_own_are_told_to_share_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEY", raising=False)
    got = await _first_here_retry_there(StatelessSettings(), StatelessSettings())
    assert got.error["code"] == -32602
    message = got.error["message"]
    assert message.startswith("Invalid params: requestState failed verification")
    assert "random key of its own" in message
    assert "MCPKIT_STATE_KEY" in message and "--redis" in message


async def test_workers_with_different_keys_are_asked_whether_they_share_one() -> None:
    got = await _first_here_retry_there(
        StatelessSettings(state_key=b"a" * 32), StatelessSettings(state_key=b"b" * 32)
    )
    assert got.error["code"] == -32602
    assert "have the same one?" in got.error["message"]


async def test_workers_sharing_the_key_serve_each_others_retries() -> None:
    got = await _first_here_retry_there(
        StatelessSettings(state_key=b"a" * 32), StatelessSettings(state_key=b"a" * 32)
    )
    assert got.result["content"] == [{"type": "text", "text": "Hello, Alice!"}]


class Keys:
    """Shared keys whose rotation the test drives: one seals, several verify."""

    def __init__(self) -> None:
        self.sealing = b"1" * 32
        self.verifying = [b"1" * 32]

    def sealing_key(self) -> bytes:
        return self.sealing

    def verifying_keys(self) -> Sequence[bytes]:
        return self.verifying

    def describe(self) -> str:
        return "the test's keys"


async def test_shared_keys_seal_with_the_current_one_and_verify_with_each() -> None:
    keys = Keys()
    settings = StatelessSettings()
    assert settings.share_keys(keys)
    old = seal(settings, {"n": 1})
    keys.sealing, keys.verifying = b"2" * 32, [b"1" * 32, b"2" * 32]  # rotated
    new = seal(settings, {"n": 2})
    assert unseal(settings, old) == {"n": 1} and unseal(settings, new) == {"n": 2}
    keys.verifying = [b"2" * 32]  # the old key retired
    assert unseal(settings, new) == {"n": 2}
    with pytest.raises(InvalidParams, match="the test's keys"):
        unseal(settings, old)
    # Garbage is refused as before, without a hint about keys.
    with pytest.raises(InvalidParams) as garbage:
        unseal(settings, "no dot at all")
    assert garbage.value.message == "Invalid params: requestState failed verification"


async def test_a_given_key_wins_over_shared_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_STATE_KEY", "from-the-environment")
    settings = StatelessSettings()
    assert not settings.share_keys(Keys())
    assert settings.key() == b"from-the-environment"
    assert list(settings.verifying_keys()) == [b"from-the-environment"]
