"""The inspector as an MCP Apps host: what the page needs to render a tool's view.

The page (``assets/apps.js``) renders the view in an iframe sandboxed with
``allow-scripts`` only, from ``srcdoc`` with a Content-Security-Policy ``<meta>`` placed
first: the view runs in an opaque origin, never the inspector's, and fetches from no origin
its server did not declare. The policy is built here, from the view's ``_meta.ui``, by the
same code every mcpkit host uses (:func:`mcpkit.types.app_csp_header`). WebRTC is not
contained (CSP does not govern it; the page's ``webrtc 'block'`` is ignored by Chromium):
docs/apps.md says what is.
"""

from __future__ import annotations

from typing import Any

from .._client._client import Client
from .._version import __version__

#: Who the views are told their host is (``hostInfo`` of ``ui/initialize``).
HOST_INFO = {"name": "mcpkit-inspector", "version": __version__}


async def load_app(client: Client, uri: str) -> dict[str, Any]:
    """The view at ``uri``: its HTML, its declared ``_meta.ui`` and the CSP enforced."""
    app = await client.read_app(uri)
    return {
        "uri": app.uri,
        "html": app.html,
        "meta": app.meta.to_wire() if app.meta is not None else {},
        "csp": app.csp,
        "hostInfo": HOST_INFO,
    }
