"""``Annotated[Model, Ask("...")]``: questions declared in a tool's signature, asked together
before its body runs, in both eras, through the real client."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcpkit import Ask, Client, ElicitationResult, Server, StatelessSettings

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


class Reason(BaseModel):
    why: str


def _server(settings: StatelessSettings | None = None) -> tuple[Server, list[str]]:
    server = Server("ask", stateless=settings)
    ran: list[str] = []

    @server.tool()
    async def delete_repo(
        repo: str,
        confirm: Annotated[Confirm, Ask("Really delete it?")],
        reason: Annotated[Reason, Ask("Why?", key="why")],
    ) -> str:
        """Delete a repository once the user confirmed."""
        ran.append(repo)
        return f"{repo}: {'deleted' if confirm.ok else 'kept'} ({reason.why})"

    @server.tool()
    def archive(repo: str, answer: Annotated[ElicitationResult[Confirm], Ask("Archive?")]) -> str:
        """A sync tool that takes the whole answer, whatever the user did."""
        ran.append(repo)
        return f"{repo}: {answer.action}"

    return server, ran


def _answering(action: str, seen: list[str]) -> Any:
    def handler(params: Any, ctx: Any) -> dict[str, Any]:
        seen.append(params.message)
        if action != "accept":
            return {"action": action}
        if params.message == "Why?":
            return {"action": "accept", "content": {"why": "old"}}
        return {"action": "accept", "content": {"ok": True}}

    return handler


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_declared_questions_are_asked_before_the_body_and_fill_its_parameters(
    version: str,
) -> None:
    server, ran = _server()
    seen: list[str] = []
    with anyio.fail_after(20):
        async with Client(
            server, protocol_version=version, elicitation_handler=_answering("accept", seen)
        ) as client:
            tools = {t.name: t for t in await client.list_tools()}
            result = await client.call_tool("delete_repo", {"repo": "r1"})
    # The user's parameters are not the model's: the schema names only the repository.
    assert list(tools["delete_repo"].input_schema["properties"]) == ["repo"]
    assert result.content[0].text == "r1: deleted (old)"
    assert sorted(seen) == ["Really delete it?", "Why?"]
    assert ran == ["r1"]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_declined_question_means_the_body_never_runs(version: str) -> None:
    server, ran = _server()
    with anyio.fail_after(20):
        async with Client(
            server, protocol_version=version, elicitation_handler=_answering("decline", [])
        ) as client:
            refused = await client.call_tool("delete_repo", {"repo": "r2"})
            archived = await client.call_tool("archive", {"repo": "r3"})
    assert refused.is_error
    assert "not run: the user declined the question 'Really delete it?'" in refused.content[0].text
    assert archived.content[0].text == "r3: decline"  # it takes the whole answer
    assert ran == ["r3"]


async def test_the_questions_reach_a_2026_client_in_one_round_even_unheld() -> None:
    # Without holding, a call runs again from the top on its retry: the declared questions
    # come first, so the body still runs once.
    server, ran = _server(StatelessSettings(hold_calls=False))
    asked = 0

    async def count_rounds(params: Any, ctx: Any) -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return _answering("accept", [])(params, ctx)

    async with Client(
        server, protocol_version="2026-07-28", elicitation_handler=count_rounds
    ) as client:
        result = await client.call_tool("delete_repo", {"repo": "r4"})
    assert result.content[0].text == "r4: deleted (old)"
    assert asked == 2 and ran == ["r4"]  # each question asked once, the body run once


def test_ask_is_refused_where_nothing_asks_it() -> None:
    server = Server("ask")

    def greeting(name: Annotated[Reason, Ask("Name?")]) -> str:
        return "hi"

    with pytest.raises(TypeError, match="Ask\\(\\) marks a tool's parameter"):
        server.add_prompt(greeting)
    with pytest.raises(TypeError, match="non-empty str"):
        Ask("")
