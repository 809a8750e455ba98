"""Questions declared in a tool's signature: asked, all together, before its body runs.

``Annotated[Model, Ask("message")]`` on a parameter of a tool makes it the user's to fill
in (through elicitation), not the model's: the parameter is left out of the tool's input
schema, and when the tool is called every such question is asked in one round (under
2026-07-28, one ``InputRequiredResult``) before a line of the tool runs. So whatever
happens between the rounds (even a call that has to run again from the top), nothing the
tool does can happen before the answers are in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, get_args, get_origin

from ._schemagen import strip_annotated

if TYPE_CHECKING:
    from ._callface import CallContext


class Ask:
    """Marks a tool parameter the user fills in before the tool runs (form elicitation).

    The parameter's type is the form: a pydantic model, dataclass or TypedDict of flat
    fields. It receives the validated answer; if the user declines or cancels, the tool
    is not run and the call's result says so (an error result). Annotate it
    ``ElicitationResult[Model]`` to receive the answer whatever the user did.

    Example::

        class Confirm(BaseModel):
            ok: bool

        @server.tool()
        async def delete_repo(
            repo: str, confirm: Annotated[Confirm, Ask("Really delete this repository?")]
        ) -> str:
            if not confirm.ok:
                return "kept"
            await repos.delete(repo)          # runs once the user answered, and only then
            return "deleted"
    """

    __slots__ = ("key", "message")

    def __init__(self, message: str, *, key: str | None = None) -> None:
        if not isinstance(message, str) or not message:
            raise TypeError("Ask(message): the question shown to the user, a non-empty str")
        self.message = message
        #: The question's key in ``inputRequests`` (default: ``ask-<parameter>``).
        self.key = key

    def __repr__(self) -> str:
        return f"Ask({self.message!r})"


@dataclasses.dataclass(frozen=True)
class AskedParam:
    """A parameter of a tool filled in by the user: its name, form and question."""

    name: str
    form: Any
    #: True when the parameter takes the whole ``ElicitationResult`` (any action).
    whole: bool
    ask: Ask


def asked_param(name: str, annotation: Any) -> AskedParam | None:
    """The question ``annotation`` declares for parameter ``name``, or None."""
    inner, metadata = strip_annotated(annotation)
    marker = next((m for m in metadata if isinstance(m, Ask)), None)
    if marker is None:
        return None
    if getattr(get_origin(inner) or inner, "__name__", None) == "ElicitationResult":
        args = get_args(inner)
        return AskedParam(name, args[0] if args else dict[str, Any], True, marker)
    return AskedParam(name, inner, False, marker)


_DONE = {"decline": "declined", "cancel": "cancelled"}


async def ask_all(
    ctx: CallContext, asked: Sequence[AskedParam]
) -> tuple[dict[str, Any], str | None]:
    """Ask every question of ``asked`` at once: the values of their parameters, or why
    the tool is not run (a question declined or cancelled)."""
    results = await ctx.gather(
        *(ctx.elicit(a.ask.message, a.form, key=a.ask.key or f"ask-{a.name}") for a in asked)
    )
    values: dict[str, Any] = {}
    for param, result in zip(asked, results, strict=True):
        if param.whole:
            values[param.name] = result
        elif result.accepted and result.data is not None:
            values[param.name] = result.data
        else:
            done = _DONE.get(result.action, result.action)
            return {}, f"not run: the user {done} the question {param.ask.message!r}"
    return values, None
