"""A hub mounting the counter app of ``examples/apps_server.py`` twice, for
tests/apps/test_apps_mounted.py: in place under the prefix ``p`` (the example's ``Server``)
and forwarded under ``r`` (the example run as a stdio subprocess, through a ``Client``)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the example is imported from the repository

from examples.apps_server import server as counter  # noqa: E402

from mcpkit import Client, Server  # noqa: E402

hub = Server("hub")
hub.mount(counter, prefix="p")
hub.mount(Client(str(ROOT / "examples" / "apps_server.py")), prefix="r")


@hub.tool()
def hello() -> str:
    """A tool of the hub's own."""
    return "hello"


if __name__ == "__main__":
    hub.run()
