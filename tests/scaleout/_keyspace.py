"""Waiting for Redis to expire keys, on Redis's own word (keyspace notifications), bounded:
what a test does instead of sleeping for a TTL. Blocking calls: run them in a thread
(``anyio.to_thread.run_sync``), on either event loop."""

from __future__ import annotations

import time

import redis as redis_py


def notify_expiry(port: int) -> None:
    """Make the Redis on ``port`` announce each key it expires."""
    client = redis_py.Redis(port=port)
    try:
        client.config_set("notify-keyspace-events", "Ex")
    finally:
        client.close()


def wait_expired(port: int, names: set[bytes], seconds: float) -> set[bytes]:
    """Until the Redis on ``port`` has expired each of ``names`` (or ``seconds`` passed):
    those still there. Needs :func:`notify_expiry`; a key already gone needs no word."""
    client = redis_py.Redis(port=port)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    try:
        pubsub.subscribe("__keyevent@0__:expired")
        left = {n for n in names if client.exists(n)}
        deadline = time.monotonic() + seconds
        while left and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.5)
            if message is not None:
                left.discard(message["data"])
            left = {n for n in left if client.exists(n)}
        return left
    finally:
        pubsub.close()
        client.close()
