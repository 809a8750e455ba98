"""The keys sealing 2026-07-28 ``requestState``, shared by every worker of one Redis.

A multi round-trip request (an elicitation under 2026-07-28) answers its first round with a
``requestState`` sealed by the worker that served it; the client's retry may reach any other
worker, which must verify it. Workers sharing a Redis share the key without being told: time
is cut into periods (a day by default), and the key of period ``n`` is 32 random bytes that
the first worker to need it creates in Redis (``SET NX``) and every worker reads.

A worker seals with the key of the current period and verifies with the keys of the
previous, current and next periods (the next one is created a period ahead, so workers
whose clocks straddle a boundary agree): a state sealed just before a rotation stays valid
for at least one more period, and at most three keys are held. Each key expires from Redis
three periods after it was made.

Anyone who can read the Redis can read the key: the same trust as the sessions kept there.
An explicit key (``MCPKIT_STATE_KEY``, ``StatelessSettings(state_key=...)``) takes
precedence, and then nothing of this is used.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from ._bus import Bus

logger = logging.getLogger("mcpkit.redis")

#: Seconds each key seals new states, by default (a new key every day).
ROTATION = 86400.0
#: Most seconds between two reads of the keys (a new period's key is read well ahead).
REFRESH = 60.0


class RedisStateKeys:
    """The ``requestState`` keys of a :class:`~mcpkit.RedisBackend` (``backend.state_keys()``).

    Args:
        backend: the Redis the keys live in (under its prefix: ``<prefix>statekey:<n>``).
        rotation: seconds between two keys (at least 60; keep it above the server's
            ``StatelessSettings.state_ttl``, ten minutes by default).
        clock: the wall clock, in seconds; periods are counted on it (tests move it).

    Example::

        keys = backend.state_keys()
        await keys.refresh()          # what the backend does at start and every minute
        keys.sealing_key(), keys.verifying_keys()
    """

    def __init__(
        self,
        backend: Bus,
        *,
        rotation: float = ROTATION,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if rotation < 60:
            raise ValueError(
                f"the state key rotation must be at least 60 seconds, not {rotation:g}"
            )
        self.backend = backend
        self.rotation = rotation
        self.clock = clock
        #: Seconds between two reads of the keys by :meth:`keep_fresh`.
        self.refresh_interval = min(rotation / 8, REFRESH)
        self._keys: dict[int, bytes] = {}
        self._own: bytes | None = None

    def period(self) -> int:
        """The number of the current period, on :attr:`clock`."""
        return math.floor(self.clock() / self.rotation)

    async def refresh(self) -> None:
        """Read the keys of the previous, current and next periods, creating the current and
        next ones when no worker did yet: one round trip. Raises
        :class:`~mcpkit.BackendUnavailable` when Redis does not answer."""
        b = self.backend
        n = self.period()
        wanted = (n - 1, n, n + 1)
        ttl = int(3 * self.rotation) + 60
        async with b.guard("requestState keys"):
            pipe = b.client.pipeline(transaction=False)
            for p in (n, n + 1):
                pipe.set(b.key("statekey", str(p)), secrets.token_bytes(32), nx=True, ex=ttl)
            pipe.mget([b.key("statekey", str(p)) for p in wanted])
            *_, found = await pipe.execute()
        keys = {p: bytes(v) for p, v in zip(wanted, found, strict=True) if v}
        self._keys = {p: k for p, k in {**self._keys, **keys}.items() if p >= n - 1}

    def sealing_key(self) -> bytes:
        """The key new states are sealed with: the current period's (the previous one's, or
        the next one's, while Redis could not be read); a key of this process alone when
        none is held (Redis never answered), which other workers will not verify."""
        n = self.period()
        for p in (n, n - 1, n + 1):
            key = self._keys.get(p)
            if key is not None:
                return key
        if self._own is None:
            logger.warning(
                "no requestState key could be read from Redis: this worker seals with a key "
                "of its own until it can (a retry reaching another worker fails meanwhile)"
            )
            self._own = secrets.token_bytes(32)
        return self._own

    def verifying_keys(self) -> Sequence[bytes]:
        """The keys a state is verified with: those of the previous, current and next
        periods (and this process's own key, if it ever sealed with one)."""
        n = self.period()
        out = [k for p, k in sorted(self._keys.items()) if n - 1 <= p <= n + 1]
        if self._own is not None:
            out.append(self._own)
        return out

    def describe(self) -> str:
        """Where the keys come from, for the message of a state that fails verification."""
        return (
            f"{self.backend.where} (shared by the workers using it, a new one every "
            f"{self.rotation / 3600:g} h)"
        )

    async def keep_fresh(self) -> None:
        """Read the keys every :attr:`refresh_interval` seconds, until cancelled (the
        backend runs it beside its heartbeat); a failed read is tried again sooner."""
        while True:
            try:
                await self.refresh()
                wait = self.refresh_interval
            except Exception as e:  # Redis down: the keys held go on serving meanwhile
                logger.warning("could not read the requestState keys: %s", e)
                wait = min(self.refresh_interval, 5.0)
            await anyio.sleep(wait)


__all__ = ["RedisStateKeys"]
