"""Periodic pings that detect a dead peer (ping.mdx: implementation considerations)."""

from __future__ import annotations

import logging

import anyio

from .._exceptions import ConnectionClosed, ProtocolError, RequestTimeout
from .._jsonrpc import JSONRPCEngine

logger = logging.getLogger("mcpkit.keepalive")


async def keepalive(engine: JSONRPCEngine, interval: float, timeout: float) -> None:
    """Ping the peer every ``interval`` seconds; a ping unanswered within ``timeout`` is a
    connection failure: it is logged and the connection is closed.

    Only one ping is ever in flight, and the interval runs from the previous answer, so a
    slow link is never flooded.
    """
    while True:
        await anyio.sleep(interval)
        try:
            await engine.request("ping", None, timeout=timeout)
        except RequestTimeout:
            logger.warning(
                "%s: ping unanswered after %s s; closing the connection", engine.name, timeout
            )
            await engine.aclose(f"the peer did not answer a ping within {timeout} s")
            return
        except ConnectionClosed:
            return
        except ProtocolError as e:
            # Answered, even if with an error: the peer is alive.
            logger.info("%s: ping answered with an error: %s", engine.name, e)


def check_keepalive(interval: float | None, timeout: float) -> None:
    """Validate keepalive settings at construction, so mistakes fail early."""
    if interval is not None and (interval <= 0 or timeout <= 0):
        raise ValueError("keepalive_interval and keepalive_timeout must be positive")
