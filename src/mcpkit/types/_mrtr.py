"""Multi round-trip requests (2026-07-28): input the server asks for, and the answers.

Instead of sending its own requests to the client (sampling, roots, elicitation), a server
answers ``tools/call``, ``prompts/get`` or ``resources/read`` with an
:class:`InputRequiredResult`. Its ``inputRequests`` map holds the requests, bare (method
and params, no JSON-RPC envelope); the client fulfils them and sends the original request
again with ``inputResponses`` (the results, under the same keys) and the ``requestState``
it was given.
"""

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag, model_validator

from ._base import MCPModel, RequestParams, Result
from ._elicitation import ElicitRequest, ElicitResult
from ._roots import ListRootsRequest, ListRootsResult
from ._sampling import CreateMessageRequest, CreateMessageResult
from ._stateless import RequestMetaObject

__all__ = [
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponseRequestParams",
    "InputResponses",
]

#: A request the server needs the client to fulfil, told apart by ``method``.
InputRequest: TypeAlias = Annotated[
    CreateMessageRequest | ListRootsRequest | ElicitRequest,
    Field(discriminator="method"),
]

#: The requests of an :class:`InputRequiredResult`, under keys the server chooses.
InputRequests: TypeAlias = dict[str, InputRequest]


def _response_tag(value: Any) -> str:
    """Which result answers an input request, by the member only it requires."""
    if isinstance(value, dict):
        if "action" in value:
            return "elicitation"
        return "roots" if "roots" in value else "sampling"
    if isinstance(value, ElicitResult):
        return "elicitation"
    return "roots" if isinstance(value, ListRootsResult) else "sampling"


#: The client's result for one input request: sampling, roots or elicitation.
InputResponse: TypeAlias = Annotated[
    Annotated[CreateMessageResult, Tag("sampling")]
    | Annotated[ListRootsResult, Tag("roots")]
    | Annotated[ElicitResult, Tag("elicitation")],
    Discriminator(_response_tag),
]

#: The client's results, under the keys of the :data:`InputRequests` they answer.
InputResponses: TypeAlias = dict[str, InputResponse]


class _InputResponseFields(MCPModel):
    """What a retried request adds to its params (``tools/call``, ``prompts/get``,
    ``resources/read``): the answers to the input requests and the server's state."""

    input_responses: InputResponses | None = Field(default=None, alias="inputResponses")
    request_state: str | None = Field(default=None, alias="requestState")


class InputResponseRequestParams(_InputResponseFields, RequestParams):
    """The params a request retried after an :class:`InputRequiredResult` carries.

    ``_meta`` (a :class:`~mcpkit.types.RequestMetaObject`) is required, as on every
    2026-07-28 request; the answers go in ``input_responses`` and the opaque state the
    server returned goes back unchanged in ``request_state``.
    """

    meta: RequestMetaObject = Field(alias="_meta")


class InputRequiredResult(Result):
    """An interim answer: the server needs input before it can complete the request.

    ``result_type`` is always ``"input_required"``. At least one of ``input_requests``
    (what the client must fulfil) and ``request_state`` (opaque, echoed back on the retry)
    is present.
    """

    result_type: Literal["input_required"] = Field(default="input_required", alias="resultType")
    input_requests: InputRequests | None = Field(default=None, alias="inputRequests")
    request_state: str | None = Field(default=None, alias="requestState")

    @model_validator(mode="after")
    def _asks_for_something(self) -> "InputRequiredResult":
        if self.input_requests is None and self.request_state is None:
            raise ValueError("an InputRequiredResult needs inputRequests or requestState")
        return self
