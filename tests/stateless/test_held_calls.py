"""Code before a question runs once per call under 2026-07-28: the call is held where it
asked and resumed by the retry (``mcpkit._server._held``).

The example users read (examples/checkout.py: a charge recorded, progress reported, then a
tip asked for) is served as users serve it: over stdio as a subprocess, and by
``mcpkit run --transport http`` (one uvicorn worker), and called by the real
:class:`mcpkit.Client` in both eras; the ledger must show one charge per call. The rest
drives an app in process: what a hold does when its client comes back late, twice, or never.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _stateless_helpers import ALL_CAPS, meta, post, request
from tests._served import Served

from mcpkit import Client, Context, Server, StatelessSettings, stdio
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = ROOT / "examples" / "checkout.py"
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ALICE = {"action": "accept", "content": {"name": "Alice"}}


def _tip(params: Any, ctx: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"percent": 10}}


async def _pay_twice(target: Any, version: str) -> tuple[list[str], list[float]]:
    """Two calls of ``pay`` through the real client: their texts and the progress heard."""
    heard: list[float] = []

    async def progress(params: Any) -> None:
        heard.append(float(params.progress))

    async with Client(
        target, protocol_version=version, elicitation_handler=_tip, progress_handler=progress
    ) as client:
        texts = []
        for order in ("A1", "B2"):
            result = await client.call_tool("pay", {"order": order, "amount": 20})
            texts.append(result.content[0].text)
    return texts, heard


def _charges(ledger: Path) -> list[str]:
    return [line.split(" pid=")[0] for line in ledger.read_text().splitlines()]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_charge_before_a_question_is_recorded_once_over_stdio(
    version: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    target = stdio(str(CHECKOUT), env={"CHECKOUT_LEDGER": str(ledger)})
    with anyio.fail_after(30):
        texts, heard = await _pay_twice(target, version)
    assert texts == ["charged A1: 20.00 + 10% tip", "charged B2: 20.00 + 10% tip"]
    assert _charges(ledger) == ["charge A1 20.00", "charge B2 20.00"]
    assert heard == [1.0, 2.0, 1.0, 2.0]  # each step reported once


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_charge_before_a_question_is_recorded_once_on_one_http_worker(
    version: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    env = {**os.environ, "CHECKOUT_LEDGER": str(ledger)}
    argv = [sys.executable, "-m", "mcpkit", "run", str(CHECKOUT), "--transport", "http"]
    served = Served.start([*argv, "--port", "0"], env=env)
    try:
        url = served.url()
        with anyio.fail_after(30):
            texts, heard = await _pay_twice(url, version)
    finally:
        served.proc.send_signal(signal.SIGTERM)
        served.proc.wait(timeout=20)
        served.close()
    assert texts == ["charged A1: 20.00 + 10% tip", "charged B2: 20.00 + 10% tip"]
    assert _charges(ledger) == ["charge A1 20.00", "charge B2 20.00"]
    assert heard == [1.0, 2.0, 1.0, 2.0]


# ---------------------------------------------------------------- in process


def _call(name: str, *, id: int = 1, caps: Any = None, **params: Any) -> dict[str, Any]:
    if "progress" in params:  # a progress token beside the request's context
        params["_meta"] = meta(caps or ALL_CAPS, progressToken=params.pop("progress"))
    return request("tools/call", {"name": name, "arguments": {}, **params}, id=id, caps=caps)


def _server(settings: StatelessSettings | None = None) -> tuple[Server, list[str], anyio.Event]:
    server = Server("held", stateless=settings)
    ran: list[str] = []
    cancelled = anyio.Event()

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Record, then ask."""
        ran.append("greet")
        try:
            answer = await ctx.elicit("Name?", NAME_FORM, key="name")
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    async def survey(ctx: Context) -> str:
        """Three questions in one round, after one effect."""
        ran.append("survey")
        name, said, roots = await ctx.gather(
            ctx.elicit("Name?", NAME_FORM, key="name"),
            ctx.sample("Say hi", max_tokens=10, key="hi"),
            ctx.list_roots(key="roots"),
        )
        return f"{name.content['name']} / {said.content.text} / {roots[0].uri}"

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Ask twice without keys; report progress around the questions."""
        ran.append("steps")
        await ctx.report_progress(1, 3)
        first = await ctx.elicit("First?", NAME_FORM)
        await ctx.report_progress(2, 3)
        second = await ctx.elicit("Second?", NAME_FORM)
        await ctx.report_progress(3, 3)
        return f"{first.content['name']} then {second.content['name']}"

    return server, ran, cancelled


async def test_unnamed_questions_keep_counting_across_rounds_and_progress_follows_the_retry() -> (
    None
):
    server, ran, _ = _server()
    bob = {"action": "accept", "content": {"name": "Bob"}}
    async with ASGIClient(server.http_app()) as http:
        one = await post(http, _call("steps", progress="p"))
        assert list(one.result["inputRequests"]) == ["elicitation-1"]
        state = one.result["requestState"]
        two = await post(
            http,
            _call(
                "steps",
                inputResponses={"elicitation-1": ALICE},
                requestState=state,
                progress="p",
            ),
        )
        assert list(two.result["inputRequests"]) == ["elicitation-2"]
        three = await post(
            http,
            _call(
                "steps",
                inputResponses={"elicitation-2": bob},
                requestState=two.result["requestState"],
                progress="p",
            ),
        )
    assert three.result["content"][0]["text"] == "Alice then Bob"
    assert ran == ["steps"]
    # Each progress step went out once, on the request of the round it happened in.
    said = [[n["params"]["progress"] for n in a.notifications] for a in (one, two, three)]
    assert said == [[1], [2], [3]]


async def test_gathered_questions_reach_the_client_in_one_round() -> None:
    server, ran, _ = _server()
    caps = {"elicitation": {}, "sampling": {}, "roots": {}}
    answers = {
        "name": ALICE,
        "hi": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "roots": {"roots": [{"uri": "file:///w"}]},
    }
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("survey", caps=caps))).result
        assert sorted(first["inputRequests"]) == ["hi", "name", "roots"]
        done = await post(
            http,
            _call("survey", caps=caps, inputResponses=answers, requestState=first["requestState"]),
        )
    assert done.result["content"][0]["text"] == "Alice / hi / file:///w"
    assert ran == ["survey"]


async def test_a_retry_after_the_call_ended_is_refused_not_run_again() -> None:
    server, ran, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        retry = _call("greet", inputResponses={"name": ALICE}, requestState=first["requestState"])
        done = await post(http, retry)
        again = await post(http, retry)
    assert done.result["content"][0]["text"] == "Hello, Alice!"
    assert again.error["code"] == -32602
    assert "has ended" in again.error["message"]
    assert ran == ["greet"]


async def test_a_hold_past_its_time_is_cancelled_and_the_retry_runs_from_the_top_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, ran, cancelled = _server(StatelessSettings(hold_seconds=0.05))
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        with anyio.fail_after(10):
            await cancelled.wait()  # the hold expired: the call was cancelled where it waited
        with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
            done = await post(
                http,
                _call("greet", inputResponses={"name": ALICE}, requestState=first["requestState"]),
            )
    assert done.result["content"][0]["text"] == "Hello, Alice!"
    assert ran == ["greet", "greet"]  # gone: run again from the top, with the answer
    assert "the call held for these answers is gone" in caplog.text
    assert "'greet'" in caplog.text


async def test_beyond_max_held_new_calls_are_not_held_and_it_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, ran, _ = _server(StatelessSettings(max_held=1))
    async with ASGIClient(server.http_app()) as http:
        with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
            held = (await post(http, _call("greet"))).result
            unheld = (await post(http, _call("greet", id=2))).result
        assert "StatelessSettings.max_held" in caplog.text
        for first in (held, unheld):
            done = await post(
                http,
                _call("greet", inputResponses={"name": ALICE}, requestState=first["requestState"]),
            )
            assert done.result["content"][0]["text"] == "Hello, Alice!"
    assert ran == ["greet", "greet", "greet"]  # the second ran again: it was not held


async def test_hold_calls_false_runs_the_function_again_on_each_round() -> None:
    server, ran, _ = _server(StatelessSettings(hold_calls=False))
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        done = await post(
            http, _call("greet", inputResponses={"name": ALICE}, requestState=first["requestState"])
        )
    assert done.result["content"][0]["text"] == "Hello, Alice!"
    assert ran == ["greet", "greet"]


async def test_a_forged_hold_cannot_be_named_and_another_request_cannot_resume_it() -> None:
    server, ran, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        # The state is sealed to its request: the same state on another tool is refused.
        other = await post(
            http,
            _call("steps", inputResponses={"name": ALICE}, requestState=first["requestState"]),
        )
        assert other.error["code"] == -32602
        done = await post(
            http,
            _call("greet", inputResponses={"name": ALICE}, requestState=first["requestState"]),
        )
    assert done.result["content"][0]["text"] == "Hello, Alice!"
    assert ran == ["greet"]


async def test_held_calls_end_with_the_server() -> None:
    server, _, cancelled = _server()
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("greet"))).result
        assert first["resultType"] == "input_required"
        assert len(server.holds.calls) == 1
    # The app's lifespan ended: the held call was cancelled with the server's task group.
    assert cancelled.is_set()
    assert server.holds.calls == {}


def test_the_example_serves_over_stdio_when_run_directly(tmp_path: Path) -> None:
    # ``python examples/checkout.py`` as its docstring says: a server on stdin/stdout.
    proc = subprocess.run(
        [sys.executable, str(CHECKOUT)],
        input=b"",
        capture_output=True,
        timeout=30,
        env={**os.environ, "CHECKOUT_LEDGER": str(tmp_path / "l.txt")},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()


async def test_call_id_is_the_same_in_every_round_even_run_again_from_the_top() -> None:
    server = Server("keys", stateless=StatelessSettings(hold_seconds=0.05))
    seen: list[str] = []
    gone = anyio.Event()

    @server.tool()
    async def pay(ctx: Context) -> str:
        """Record the call's key, then ask."""
        seen.append(ctx.call_id)
        try:
            await ctx.elicit("Tip?", NAME_FORM, key="tip")
        except anyio.get_cancelled_exc_class():
            gone.set()
            raise
        return ctx.call_id

    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, _call("pay"))).result
        other = (await post(http, _call("pay", id=2))).result
        with anyio.fail_after(10):
            await gone.wait()  # the holds expired: the retries run the function again
        done = await post(
            http, _call("pay", inputResponses={"tip": ALICE}, requestState=first["requestState"])
        )
        assert other["requestState"] != first["requestState"]
    assert len(seen) == 3 and seen[0] != seen[1]  # two calls, then the first run again
    assert seen[2] == seen[0] == done.result["content"][0]["text"]


async def test_call_id_in_the_handshake_era_is_unique_per_call() -> None:
    server = Server("keys")

    @server.tool()
    async def key(ctx: Context) -> str:
        """The call's key, asked twice."""
        assert ctx.call_id == ctx.call_id
        return ctx.call_id

    async with Client(server, protocol_version="2025-11-25") as client:
        a = (await client.call_tool("key", {})).content[0].text
        b = (await client.call_tool("key", {})).content[0].text
    assert a != b and len(a) == 32
