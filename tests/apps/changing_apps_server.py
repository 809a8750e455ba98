"""An apps server whose app-only tools change at run time: ``unlock`` adds the app-only
``secret`` (and tells its clients their tool list changed)."""

from __future__ import annotations

from mcpkit import Server
from mcpkit.types import AppToolMeta

server = Server("changing-apps")
server.app_resource("ui://vault/view", "<p>vault</p>")


@server.tool(app="ui://vault/view")
def vault() -> str:
    """Show the vault."""
    return "closed"


@server.tool()
def unlock() -> str:
    """Add the app-only ``secret``."""

    def secret() -> str:
        """Only the vault's view calls this."""
        return "opened"

    server.tool(app=AppToolMeta(resource_uri="ui://vault/view", visibility=["app"]))(secret)
    return "unlocked"


if __name__ == "__main__":
    server.run()
