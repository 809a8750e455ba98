"""The MCP Apps extension's wire (``io.modelcontextprotocol/ui``, SEP-1865, 2026-01-26).

A tool carries an interactive HTML view: a ``ui://`` resource served as
``text/html;profile=mcp-app``, named by the tool's ``_meta.ui.resourceUri``. The tool's
``_meta.ui.visibility`` says who may call it (``"model"``: the agent; ``"app"``: views of
the same server). The resource's ``_meta.ui`` declares what the view needs from its
sandbox: the origins it may reach (``csp``), browser permissions, a dedicated origin
(``domain``) and whether the host draws a border.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._appconst import APP_MIME_TYPE, APPS_EXTENSION
from ._base import MCPModel

__all__ = [
    "APPS_EXTENSION",
    "APP_MIME_TYPE",
    "AppCsp",
    "AppPermissions",
    "AppResourceMeta",
    "AppToolMeta",
    "app_csp_header",
]

#: The key, in ``_meta``, of the deprecated flat form of ``ui.resourceUri``.
_FLAT_RESOURCE_URI = "ui/resourceUri"


class AppCsp(MCPModel):
    """The origins an app's view may reach; each empty or omitted list means none."""

    #: fetch / XHR / WebSocket targets (CSP ``connect-src``).
    connect_domains: list[str] | None = Field(default=None, alias="connectDomains")
    #: Scripts, styles, images, fonts and media (``script-src``, ``style-src``, ...).
    resource_domains: list[str] | None = Field(default=None, alias="resourceDomains")
    #: Nested frames (``frame-src``; none when omitted).
    frame_domains: list[str] | None = Field(default=None, alias="frameDomains")
    #: Allowed ``<base href>`` targets (``base-uri``; ``'self'`` when omitted).
    base_uri_domains: list[str] | None = Field(default=None, alias="baseUriDomains")


class AppPermissions(MCPModel):
    """Browser features an app asks for (a host may or may not grant them)."""

    camera: dict[str, Any] | None = None
    microphone: dict[str, Any] | None = None
    geolocation: dict[str, Any] | None = None
    clipboard_write: dict[str, Any] | None = Field(default=None, alias="clipboardWrite")


class AppResourceMeta(MCPModel):
    """``_meta.ui`` of an app's resource (listed, and on its ``resources/read`` contents)."""

    csp: AppCsp | None = None
    permissions: AppPermissions | None = None
    #: A dedicated sandbox origin; its format is the host's to define.
    domain: str | None = None
    #: True: the host draws a border and background; False: it does not.
    prefers_border: bool | None = Field(default=None, alias="prefersBorder")

    @classmethod
    def of(cls, meta: dict[str, Any] | None) -> AppResourceMeta | None:
        """The ``ui`` member of a resource's (or contents') ``_meta``; None without one."""
        ui = meta.get("ui") if isinstance(meta, dict) else None
        return cls.model_validate(ui) if isinstance(ui, dict) else None


class AppToolMeta(MCPModel):
    """``_meta.ui`` of a tool: the view showing its results, and who may call it.

    Example::

        @server.tool(app=AppToolMeta(resource_uri="ui://board", visibility=["app"]))
        def move(piece: str, to: str) -> dict: ...
    """

    resource_uri: str | None = Field(default=None, alias="resourceUri")
    #: ``"model"``: the agent may see and call it; ``"app"``: views of this server may
    #: call it. Omitted means both.
    visibility: list[Literal["model", "app"]] | None = None

    @classmethod
    def of(cls, meta: dict[str, Any] | None) -> AppToolMeta | None:
        """The ``ui`` member of a tool's ``_meta`` (the deprecated flat
        ``ui/resourceUri`` read too); None when the tool has no app."""
        if not isinstance(meta, dict):
            return None
        ui = meta.get("ui")
        if isinstance(ui, dict):
            found = cls.model_validate(ui)
            if found.resource_uri is None and isinstance(meta.get(_FLAT_RESOURCE_URI), str):
                found.resource_uri = meta[_FLAT_RESOURCE_URI]
            return found
        flat = meta.get(_FLAT_RESOURCE_URI)
        return cls(resource_uri=flat) if isinstance(flat, str) else None

    @property
    def for_model(self) -> bool:
        """Whether the agent may see and call the tool."""
        return self.visibility is None or "model" in self.visibility

    @property
    def for_app(self) -> bool:
        """Whether a view of the same server may call the tool."""
        return self.visibility is None or "app" in self.visibility


def _sources(domains: list[str] | None) -> str:
    # A declared origin is one token: anything else (a quote, a ';') would let a server
    # write its own directives into the policy.
    return "".join(
        f" {d}"
        for d in domains or ()
        if isinstance(d, str) and d and all(c.isprintable() and c not in " ;,'\"" for c in d)
    )


def app_csp_header(csp: AppCsp | None) -> str:
    """The Content-Security-Policy a host enforces on a view declaring ``csp``.

    Nothing beyond what is declared: no network at all without ``connectDomains``, no
    external script, style, image or font without ``resourceDomains``, no frame without
    ``frameDomains``, never plugins.
    """
    c = csp or AppCsp()
    res = _sources(c.resource_domains)
    connect = _sources(c.connect_domains).strip() or "'none'"
    frames = _sources(c.frame_domains).strip() or "'none'"
    base = _sources(c.base_uri_domains).strip() or "'self'"
    return (
        "default-src 'none'; "
        f"script-src 'self' 'unsafe-inline'{res}; "
        f"style-src 'self' 'unsafe-inline'{res}; "
        f"img-src 'self' data:{res}; "
        f"font-src 'self'{res}; "
        f"media-src 'self' data:{res}; "
        f"connect-src {connect}; "
        f"frame-src {frames}; "
        "object-src 'none'; "
        f"base-uri {base}"
    )
