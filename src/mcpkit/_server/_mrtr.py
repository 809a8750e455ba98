"""Multi round-trip requests (revision 2026-07-28): asking the client without a request.

Under a stateless revision the server cannot send ``elicitation/create``,
``sampling/createMessage`` or ``roots/list`` to the client. A handler that needs one of
them ends its request with an ``InputRequiredResult`` naming what it needs; the client
gathers the answers and sends the same request again with ``inputResponses`` (and the
``requestState`` we gave it). The handler then runs again from the start, and this time
``ctx.elicit(...)`` returns the answer instead of asking.

So tool code is written once: :class:`~mcpkit.Context` asks through :meth:`RoundState.take`
under 2026-07-28 and sends a real request under the handshake revisions. What earlier rounds
answered travels in ``requestState``, sealed with HMAC-SHA256 under the server's key, bound
to the request (method and parameters) and expiring, so a client can neither forge earlier
answers, replay them on another request, nor keep them forever.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from .. import _env
from .._exceptions import InvalidParams
from ._threads import Unwind

if TYPE_CHECKING:
    from ._held import HeldCall

#: Parameters that carry the rounds themselves, left out of the request's fingerprint.
_ROUND_PARAMS = ("inputResponses", "requestState", "_meta")


class StateKeySource(Protocol):
    """Keys for ``requestState`` shared by many workers, rotated (a Redis backend's
    ``state_keys()``): what :meth:`StatelessSettings.share_keys` takes."""

    def sealing_key(self) -> bytes:
        """The key new states are sealed with."""
        ...

    def verifying_keys(self) -> Sequence[bytes]:
        """Every key a state may have been sealed with (the sealing one among them)."""
        ...

    def describe(self) -> str:
        """Where the keys come from, for the message of a state that fails verification."""
        ...


@dataclasses.dataclass
class StatelessSettings:
    """How a :class:`~mcpkit.Server` serves the stateless revision (2026-07-28), in one object.

    Example::

        server = Server("shop", stateless=StatelessSettings(cache_ttl_ms=60_000, cache_scope="public"))
    """

    #: The key ``requestState`` is sealed with. Workers behind one load balancer must share
    #: it (a retry may reach another worker); default: ``MCPKIT_STATE_KEY`` from the
    #: environment, else the keys shared by the workers of one Redis (``redis=``,
    #: ``--redis``: created there and rotated), else a random key per process.
    state_key: bytes | None = None
    #: How long a ``requestState`` stays valid, in seconds.
    state_ttl: float = 600.0
    #: Most rounds one request may take before it is refused.
    max_rounds: int = 16
    #: Keep a call that asks suspended where it asked, and resume it with the answers,
    #: so that code before a question runs once (see docs/server.md). False: every round
    #: runs the function again from the top.
    hold_calls: bool = True
    #: Most calls of one server held at once for their clients' answers; beyond, new
    #: calls are not held (logged).
    max_held: int = 1000
    #: How long a held call waits for its client's next round, in seconds (never longer
    #: than ``state_ttl``); then it is cancelled where it waits.
    hold_seconds: float = 300.0
    #: ``ttlMs`` of cacheable results (lists, reads, discovery) when a registration sets none.
    cache_ttl_ms: int = 0
    #: ``cacheScope`` of cacheable results: ``"private"`` (per user) or ``"public"``.
    cache_scope: str = "private"
    #: The wall clock, in seconds (state expiry); tests give a clock they move.
    clock: Callable[[], float] = time.time

    #: Keys shared by the workers of one backend (:meth:`share_keys`), when no key was set.
    _shared: StateKeySource | None = dataclasses.field(default=None, init=False, repr=False)
    #: This process's random key, when neither a key nor shared keys were given.
    _own: bytes | None = dataclasses.field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.cache_scope not in ("private", "public"):
            raise ValueError("cache_scope must be 'private' or 'public'")
        if self.cache_ttl_ms < 0 or self.state_ttl <= 0 or self.max_rounds < 1:
            raise ValueError("cache_ttl_ms must be >= 0, state_ttl > 0 and max_rounds >= 1")
        if self.max_held < 0 or self.hold_seconds <= 0:
            raise ValueError("max_held must be >= 0 and hold_seconds > 0")

    def _given(self) -> bytes | None:
        # An explicit key, else MCPKIT_STATE_KEY (read until found, then kept as the key).
        if self.state_key is None:
            env = _env.STATE_KEY.value()
            if env:
                self.state_key = env.encode()
        return self.state_key

    def share_keys(self, source: StateKeySource) -> bool:
        """Seal and verify with ``source``'s keys from now on (workers sharing a backend
        share them), unless a key was given (``state_key``, ``MCPKIT_STATE_KEY``), which
        stays in use. True when ``source`` is used."""
        if self._given() is not None:
            return False
        self._shared = source
        return True

    def key(self) -> bytes:
        """The key new states are sealed with: the given one, else the shared keys' current
        one, else a random key of this process."""
        given = self._given()
        if given is not None:
            return given
        if self._shared is not None:
            return self._shared.sealing_key()
        if self._own is None:
            self._own = secrets.token_bytes(32)
        return self._own

    def verifying_keys(self) -> Sequence[bytes]:
        """The keys a state is accepted under (with shared keys: the previous and next
        ones too, so a state outlives a rotation)."""
        given = self._given()
        if given is not None:
            return (given,)
        if self._shared is not None:
            return self._shared.verifying_keys()
        return (self.key(),)

    def unverified(self) -> str:
        """The error message of a ``requestState`` that carries a seal none of our keys
        made, naming the likely cause."""
        head = "Invalid params: requestState failed verification: not sealed with a key of "
        if self._given() is not None:
            return head + (
                "this server (its key is MCPKIT_STATE_KEY / StatelessSettings.state_key: do "
                "all workers behind the load balancer have the same one?)"
            )
        if self._shared is not None:
            return head + (
                f"{self._shared.describe()}: was it sealed by a worker on another Redis or "
                "prefix, or with a key of its own (MCPKIT_STATE_KEY), or before the last two "
                "rotations?"
            )
        return head + (
            "this worker, which has a random key of its own: workers behind one load "
            "balancer must share the key (set the same MCPKIT_STATE_KEY on each, or give them "
            "one Redis: --redis / MCPKIT_REDIS_URL)"
        )


class InputRequired(Unwind):
    """Raised in a handler served statelessly when it needs answers the client has not
    given yet; the server turns it into an ``InputRequiredResult``.

    A ``BaseException`` (:class:`Unwind`) so that a tool's ``except Exception`` does not
    swallow it, and the caller of the tool's function lets it through.
    """

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


def fingerprint(method: str, params: Mapping[str, Any] | None) -> str:
    """A digest of the request a state belongs to (its rounds' own parameters left out)."""
    rest = {k: v for k, v in (params or {}).items() if k not in _ROUND_PARAMS}
    blob = orjson.dumps([method, rest], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(settings: StatelessSettings, payload: dict[str, Any]) -> str:
    """``payload`` as an opaque, integrity-protected ``requestState``."""
    body = orjson.dumps(payload)
    tag = hmac.new(settings.key(), body, hashlib.sha256).digest()
    return f"{_b64(body)}.{_b64(tag)}"


def unseal(settings: StatelessSettings, token: Any) -> dict[str, Any]:
    """The payload of a ``requestState`` we sealed; :class:`InvalidParams` for anything else."""
    bad = InvalidParams(message="Invalid params: requestState failed verification")
    if not isinstance(token, str) or token.count(".") != 1 or len(token) > 4_000_000:
        raise bad
    body_text, tag_text = token.split(".")
    try:
        body, tag = _unb64(body_text), _unb64(tag_text)
    except ValueError:
        raise bad from None
    verified = False
    for key in settings.verifying_keys():
        expected = hmac.new(key, body, hashlib.sha256).digest()
        verified = hmac.compare_digest(tag, expected) or verified
    if not verified:
        # Well formed, but sealed with a key we do not hold: most likely another worker's.
        raise InvalidParams(message=settings.unverified())
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad from None
    if not isinstance(payload, dict):
        raise bad
    return payload


def check_answer(method: str, answer: Any) -> str | None:
    """Why ``answer`` is not a result of ``method``, or None."""
    if not isinstance(answer, dict):
        return "must be an object"
    if method == "elicitation/create":
        if answer.get("action") not in ("accept", "decline", "cancel"):
            return "must be an ElicitResult (action accept, decline or cancel)"
        content = answer.get("content")
        if content is not None and not isinstance(content, dict):
            return "content must be an object"
    elif method == "sampling/createMessage":
        if answer.get("role") not in ("user", "assistant") or "content" not in answer:
            return "must be a CreateMessageResult (role and content)"
    elif method == "roots/list" and not isinstance(answer.get("roots"), list):
        return "must be a ListRootsResult (a roots array)"
    return None


class RoundState:
    """The answers one stateless request has so far, and the questions it asks now."""

    def __init__(
        self,
        settings: StatelessSettings,
        method: str,
        params: Mapping[str, Any] | None,
        principal: str | None = None,
    ) -> None:
        self.settings = settings
        self.method = method
        self.principal = principal
        self._params = params
        #: key -> (method asked, answer), from earlier rounds and this request.
        self.answers: dict[str, tuple[str, Any]] = {}
        self.round = 1
        self._auto = 0
        #: The held call these rounds belong to (``_held``), once it is held here.
        self.held: HeldCall | None = None
        #: The id of the held call and the worker holding it, from the ``requestState``.
        self.held_id: str | None = None
        self.held_worker: str | None = None
        self._call_id: str | None = None
        params = params or {}
        if params.get("requestState") is not None:
            self._restore(params["requestState"])
        given = params.get("inputResponses")
        if given is not None and not isinstance(given, dict):
            raise InvalidParams(message="Invalid params: inputResponses must be an object")
        #: This round's answers, checked against the question when the handler asks it.
        self.given: dict[str, Any] = dict(given or {})

    @functools.cached_property
    def fingerprint(self) -> str:
        """The request's digest, computed only when a state is sealed or restored: most
        requests ask nothing, and hashing their arguments would tax every call."""
        return fingerprint(self.method, self._params)

    def _restore(self, token: Any) -> None:
        payload = unseal(self.settings, token)
        if payload.get("f") != self.fingerprint or payload.get("m") != self.method:
            raise InvalidParams(message="Invalid params: requestState belongs to another request")
        if payload.get("p") != self.principal:
            raise InvalidParams(message="Invalid params: requestState belongs to another caller")
        expires = payload.get("e")
        if not isinstance(expires, (int, float)) or self.settings.clock() > expires:
            raise InvalidParams(message="Invalid params: requestState has expired; start over")
        answers = payload.get("a")
        if isinstance(answers, dict):
            for key, pair in answers.items():
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str):
                    self.answers[key] = (pair[0], pair[1])
        call_id = payload.get("c")
        self._call_id = call_id if isinstance(call_id, str) else None
        held, worker = payload.get("h"), payload.get("w")
        self.held_id = held if isinstance(held, str) else None
        self.held_worker = worker if isinstance(worker, str) else None
        rounds = payload.get("r")
        self.round = (rounds if isinstance(rounds, int) else 0) + 1
        if self.round > self.settings.max_rounds:
            raise InvalidParams(
                message=f"Invalid params: more than {self.settings.max_rounds} input rounds"
            )

    @property
    def call_id(self) -> str:
        """An id of the call these rounds serve: drawn at its first round, then carried by
        its ``requestState``, so the same in every round of the call, and when a gone held
        call runs again from the top (``Context.call_id``)."""
        if self._call_id is None:
            self._call_id = secrets.token_urlsafe(12)
        return self._call_id

    def hold(self, call: HeldCall | None, worker: str | None) -> None:
        """These rounds belong to held ``call`` (of this process, ``worker`` among many):
        the states sealed from now on name it (None: no call any more)."""
        self.held = call
        self.held_id = call.id if call is not None else None
        self.held_worker = worker

    def adopt(self, earlier: RoundState) -> None:
        """Go on from ``earlier``, the rounds of the same held call before this request:
        its call, and the count of the questions it asked without a key."""
        self.held, self.held_id, self.held_worker = (
            earlier.held,
            earlier.held_id,
            earlier.held_worker,
        )
        self._auto = max(self._auto, earlier._auto)
        self._call_id = self._call_id or earlier._call_id

    def next_key(self, method: str) -> str:
        """A key for a question the handler did not name: the method and its call order."""
        self._auto += 1
        return f"{method.rsplit('/', 1)[0]}-{self._auto}"

    def take(self, key: str, method: str, params: dict[str, Any]) -> Any:
        """The answer to question ``key``, or :class:`InputRequired` asking it."""
        if key in self.given:
            answer = self.given.pop(key)
            problem = check_answer(method, answer)
            if problem is not None:
                raise InvalidParams(message=f"Invalid params: inputResponses[{key!r}] {problem}")
            self.answers[key] = (method, answer)
            return answer
        known = self.answers.get(key)
        if known is not None and known[0] == method:
            return known[1]
        raise InputRequired({key: {"method": method, "params": params}})

    def input_required(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The ``InputRequiredResult`` asking ``requests``, with the state of this round."""
        payload = {
            "m": self.method,
            "f": self.fingerprint,
            "p": self.principal,
            "e": self.settings.clock() + self.settings.state_ttl,
            "r": self.round,
            "a": {k: [m, a] for k, (m, a) in self.answers.items()},
            "c": self.call_id,
        }
        if self.held_id is not None:
            payload["h"] = self.held_id
            if self.held_worker is not None:
                payload["w"] = self.held_worker
        return {
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": seal(self.settings, payload),
        }


def collect_input_required(exc: BaseException) -> dict[str, dict[str, Any]] | None:
    """The questions of an :class:`InputRequired`, or of a group made only of them (handlers
    that ask several at once from a task group); None for anything else."""
    if isinstance(exc, InputRequired):
        return exc.requests
    # An exception group (the builtin on 3.11+, anyio's backport before), told by shape.
    subs = getattr(exc, "exceptions", None)
    if isinstance(subs, tuple) and subs:
        merged: dict[str, dict[str, Any]] = {}
        for sub in subs:
            found = collect_input_required(sub)
            if found is None:
                return None
            merged.update(found)
        return merged
    return None
