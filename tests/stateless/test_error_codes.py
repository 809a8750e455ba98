"""Error codes a 2026-07-28 server may send, over the real HTTP app in process.

The revision retires -32002 and -32042 and reserves -32020..-32099 for the codes it defines:
a ``URLElicitationRequired`` raised by a tool becomes the URL-mode questions of an
``InputRequiredResult`` (the client retries once the user is back), any other reserved code
goes out as -32603, and ``RateLimitMiddleware`` refuses with a code outside the JSON-RPC
range. Handshake clients (2025-11-25) still get -32042 and their own codes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from _stateless_helpers import TIMEOUT, URL, post, request

from mcpkit import ProtocolError, ResourceNotFound, Server, URLElicitationRequired
from mcpkit.lowlevel import ASGIClient, ClientSession, open_streamable_http
from mcpkit.middleware import RATE_LIMITED, RateLimitMiddleware

pytestmark = pytest.mark.anyio

URL_CAPS: dict[str, Any] = {"elicitation": {"url": {}}}
SIGN_IN = {
    "mode": "url",
    "elicitationId": "sign-in-1",
    "message": "Sign in to the calendar",
    "url": "https://calendar.example.com/connect?state=abc",
}
PAY = {"mode": "url", "message": "Pay the fee", "url": "https://pay.example.com/fee"}


def _server() -> tuple[Server, dict[str, bool]]:
    """Tools that need the user to visit a URL first, until the test says they did."""
    server = Server("codes")
    state = {"connected": False}

    def need_url() -> None:
        if not state["connected"]:
            raise URLElicitationRequired(
                message="This request requires more information.",
                data={"elicitations": [SIGN_IN, PAY]},
            )

    @server.tool()
    def calendar() -> str:
        """Needs the calendar connected."""
        need_url()
        return "3 meetings"

    @server.prompt()
    def agenda() -> str:
        """Needs the calendar connected too."""
        need_url()
        return "Today's agenda"

    @server.resource("cal://today", mime_type="text/plain")
    def today() -> str:
        """And so does this resource."""
        need_url()
        return "busy"

    @server.tool()
    def reserved() -> str:
        """Raises a code of the range 2026-07-28 reserves but does not define."""
        raise ProtocolError(-32050, "quota exhausted", {"quota": "daily"})

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        need_url()  # a method that cannot ask for input
        return []

    @server.prompt()
    def pick(day: str) -> str:
        """A prompt with an argument to complete."""
        return day

    return server, state


@asynccontextmanager
async def _handshake(server: Server) -> AsyncIterator[ClientSession]:
    """A 2025-11-25 session with the same app."""
    async with (
        ASGIClient(server.http_app()) as http,
        open_streamable_http(URL, http_client=http) as t,
        ClientSession(t, client_info={"name": "old", "version": "1"}, capabilities={}) as s,
    ):
        await s.initialize()
        yield s


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES", "ELICITATION-2026-URL-MODE-PARAMS")
async def test_url_elicitation_required_is_asked_as_input_never_as_32042() -> None:
    server, state = _server()
    call = request("tools/call", {"name": "calendar"}, caps=URL_CAPS)
    async with ASGIClient(server.http_app()) as http:
        first = await post(http, call)  # schema-checked: an InputRequiredResult
        asked = first.result
        assert asked["resultType"] == "input_required"
        # Keyed by the elicitationId when there is one; 2026-07-28 has no field for it.
        assert asked["inputRequests"] == {
            "sign-in-1": {
                "method": "elicitation/create",
                "params": {k: v for k, v in SIGN_IN.items() if k != "elicitationId"},
            },
            "url-elicitation-2": {"method": "elicitation/create", "params": PAY},
        }
        # The user went, and came back: the retry completes.
        state["connected"] = True
        answers = {"sign-in-1": {"action": "accept"}, "url-elicitation-2": {"action": "accept"}}
        body = {"name": "calendar", "inputResponses": answers}
        body["requestState"] = asked["requestState"]
        done = await post(http, request("tools/call", body, caps=URL_CAPS))
    assert done.result["content"] == [{"type": "text", "text": "3 meetings"}]


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES")
async def test_a_2026_client_opens_the_url_and_its_retry_completes() -> None:
    server, state = _server()
    shown: list[dict[str, Any]] = []

    async def open_url(ctx: Any, params: Any) -> Any:
        shown.append(params)
        state["connected"] = True  # the user went through the page meanwhile
        return {"action": "accept"}

    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(server.http_app()) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(
                t,
                client_info={"name": "new", "version": "1"},
                capabilities=URL_CAPS,
                handlers={"elicitation/create": open_url},
            ) as new,
        ):
            await new.discover()
            done = await new.send_request("tools/call", {"name": "calendar"})
    assert done["content"] == [{"type": "text", "text": "3 meetings"}]
    assert [p["url"] for p in shown] == [SIGN_IN["url"], PAY["url"]]
    assert all(p["mode"] == "url" and "elicitationId" not in p for p in shown)


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES")
async def test_prompts_and_resources_ask_for_the_url_too() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        prompt = await post(http, request("prompts/get", {"name": "agenda"}, caps=URL_CAPS))
        read = await post(http, request("resources/read", {"uri": "cal://today"}, caps=URL_CAPS))
    for got in (prompt, read):
        assert got.status == 200
        assert got.result["resultType"] == "input_required"
        assert set(got.result["inputRequests"]) == {"sign-in-1", "url-elicitation-2"}


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES")
async def test_a_client_without_url_mode_gets_missing_capability() -> None:
    server, _ = _server()
    async with ASGIClient(server.http_app()) as http:
        form_only = await post(
            http, request("tools/call", {"name": "calendar"}, caps={"elicitation": {}})
        )
        none = await post(http, request("tools/call", {"name": "calendar"}, caps={}))
    for got in (form_only, none):
        assert got.error["code"] == -32021
        assert got.error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES", "JSONRPC-2026-NO-UNDEFINED-RESERVED-CODE")
async def test_where_no_input_can_be_asked_a_reserved_code_is_an_internal_error() -> None:
    server, _ = _server()
    complete = {
        "ref": {"type": "ref/prompt", "name": "pick"},
        "argument": {"name": "day", "value": "mo"},
    }
    async with ASGIClient(server.http_app()) as http:
        url_needed = await post(http, request("completion/complete", complete, caps=URL_CAPS))
        reserved = await post(http, request("tools/call", {"name": "reserved"}))
    assert url_needed.error["code"] == -32603
    assert url_needed.error["message"] == "This request requires more information."
    assert url_needed.error["data"] == {"elicitations": [SIGN_IN, PAY]}
    assert reserved.error == {
        "code": -32603,
        "message": "quota exhausted",
        "data": {"quota": "daily"},
    }


@pytest.mark.req("JSONRPC-2026-NO-RETIRED-CODES")
async def test_a_resource_not_found_is_invalid_params_naming_the_uri() -> None:
    server, _ = _server()

    @server.resource("cal://day/{name}", mime_type="text/plain")
    def day(name: str) -> str:
        """No day is found."""
        raise ResourceNotFound(f"cal://day/{name}")

    async with ASGIClient(server.http_app()) as http:
        unknown = await post(http, request("resources/read", {"uri": "nothing://here"}))
        raised = await post(http, request("resources/read", {"uri": "cal://day/sunday"}))
    for got, uri in ((unknown, "nothing://here"), (raised, "cal://day/sunday")):
        assert got.error["code"] == -32602  # -32002 is retired
        assert got.error["data"] == {"uri": uri}


async def test_handshake_clients_still_get_32042_and_their_codes() -> None:
    server, _ = _server()
    with anyio.fail_after(TIMEOUT):
        async with _handshake(server) as old:
            with pytest.raises(URLElicitationRequired) as url_needed:
                await old.send_request("tools/call", {"name": "calendar"})
            with pytest.raises(ProtocolError) as reserved:
                await old.send_request("tools/call", {"name": "reserved"})
    assert url_needed.value.code == -32042
    assert url_needed.value.elicitations == [SIGN_IN, PAY]
    assert (reserved.value.code, reserved.value.data) == (-32050, {"quota": "daily"})


class _Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.req("JSONRPC-2026-APP-CODES-OUTSIDE-RESERVED")
async def test_rate_limited_requests_get_a_code_outside_the_reserved_range() -> None:
    limit = RateLimitMiddleware(rate=1, burst=1, methods=["tools/call"], clock=_Clock())
    server = Server("limited", middleware=[limit])

    @server.tool()
    def ping() -> str:
        """Answer."""
        return "pong"

    call = request("tools/call", {"name": "ping"})
    async with ASGIClient(server.http_app()) as http:
        assert (await post(http, call)).result["content"][0]["text"] == "pong"
        refused = await post(http, call)
        with anyio.fail_after(TIMEOUT):
            async with _handshake(server) as old:
                await old.send_request("tools/call", {"name": "ping"})
                with pytest.raises(ProtocolError) as old_refused:
                    await old.send_request("tools/call", {"name": "ping"})
    assert RATE_LIMITED == -31429 and not -32768 <= RATE_LIMITED <= -32000
    assert refused.error["code"] == RATE_LIMITED
    assert refused.error["data"] == {"retryAfter": 1.0}
    assert old_refused.value.code == RATE_LIMITED
