"""Bounds on what 2026-07-28 requests hold at once, app-wide and per caller.

A stateless request is served in the task of its own POST, so no client waits for a slot
another holds; what remains to bound is how much one app (and one caller) may hold at a
time. Calls and listen streams have separate budgets: a listen stream lives as long as its
client wants, and a thousand of them must not stop a single call.
"""

from __future__ import annotations


class Budget:
    """Counts what is held, in all and per key; :meth:`enter` refuses past either bound.

    Used from the event loop's thread only (no lock: no await between test and count).

    Example::

        calls = Budget(total=4096, per_key=512)
        refusal = calls.enter("principal-key")
        if refusal is None:
            try: ...
            finally: calls.leave("principal-key")
    """

    __slots__ = ("_by_key", "held", "per_key", "total")

    def __init__(self, total: int, per_key: int | None) -> None:
        if total < 1 or (per_key is not None and per_key < 1):
            raise ValueError("a budget holds at least one")
        self.total = total
        self.per_key = per_key
        self.held = 0
        self._by_key: dict[str, int] = {}

    def enter(self, key: str | None) -> str | None:
        """Hold one for ``key`` (None: a caller with no identity); None when admitted,
        else ``"total"`` or ``"key"``: the bound that refused."""
        if self.held >= self.total:
            return "total"
        if key is not None and self.per_key is not None:
            n = self._by_key.get(key, 0)
            if n >= self.per_key:
                return "key"
            self._by_key[key] = n + 1
        self.held += 1
        return None

    def leave(self, key: str | None) -> None:
        """Give back what :meth:`enter` admitted for ``key``."""
        self.held -= 1
        if key is not None and self.per_key is not None:
            n = self._by_key.get(key, 0) - 1
            if n > 0:
                self._by_key[key] = n
            else:
                self._by_key.pop(key, None)

    def held_by(self, key: str) -> int:
        """How many ``key`` holds now."""
        return self._by_key.get(key, 0)
