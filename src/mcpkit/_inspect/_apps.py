"""The inspector as an MCP Apps host: what the page needs to render a tool's view.

The page (``assets/apps.js``) is a web host, so it renders each view through a sandbox
proxy (2026-01-26, "Sandbox proxy"): an iframe of another origin than the page's (the
inspector's second port, ``assets/sandbox.html``), sandboxed ``allow-scripts
allow-same-origin``, which loads the view into an inner frame sandboxed with
``allow-scripts`` only (an opaque origin), from ``srcdoc`` with a Content-Security-Policy
``<meta>`` placed first, and relays the JSON-RPC both ways. The proxy page is served under
that same policy (its ``srcdoc`` frame inherits it), built here from the view's
``_meta.ui`` by the code every mcpkit host uses (:func:`mcpkit.types.app_csp_header`): the
origins the view is told were approved (``hostCapabilities.sandbox.csp``) are exactly those
that policy names. WebRTC is not contained (CSP does not govern it; the pages' ``webrtc
'block'`` is ignored by Chromium): docs/apps.md says what is.
"""

from __future__ import annotations

from typing import Any

from .._client._client import Client
from .._version import __version__
from ..types._apps import AppCsp, _sources

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
        "approved": approved_csp(app.meta.csp if app.meta is not None else None),
        "hostInfo": HOST_INFO,
    }


#: ``_meta.ui.csp`` members, as on the wire, and the model's fields they fill.
_CSP_FIELDS = (
    ("connectDomains", "connect_domains"),
    ("resourceDomains", "resource_domains"),
    ("frameDomains", "frame_domains"),
    ("baseUriDomains", "base_uri_domains"),
)


def approved_csp(csp: AppCsp | None) -> dict[str, list[str]]:
    """The declared origins the view's policy names (a malformed one is left out of the
    policy, so out of this too): what ``hostCapabilities.sandbox.csp`` reports."""
    approved: dict[str, list[str]] = {}
    for wire, field in _CSP_FIELDS:
        kept = _sources(getattr(csp, field, None) if csp is not None else None).split()
        if kept:
            approved[wire] = kept
    return approved


def approved_from_wire(value: object) -> AppCsp:
    """The policy's origins from the page's ``csp`` query (``approved_csp``'s shape)."""
    if not isinstance(value, dict):
        raise ValueError("csp must be an object")
    lists: dict[str, list[str]] = {}
    for wire, _ in _CSP_FIELDS:
        domains = value.get(wire)
        if domains is None:
            continue
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            raise ValueError(f"csp.{wire} must be a list of strings")
        lists[wire] = domains
    return AppCsp.model_validate(lists)
