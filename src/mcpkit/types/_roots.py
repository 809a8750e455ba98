"""Roots: the directories or files a client exposes to servers."""

from typing import Literal

from pydantic import Field

from ._base import (
    MCPModel,
    Meta,
    NotificationParams,
    RequestParams,
    Result,
    _InputRequestBase,
    _NotificationBase,
)

__all__ = [
    "ListRootsRequest",
    "ListRootsResult",
    "Root",
    "RootsListChangedNotification",
]


class Root(MCPModel):
    """A directory or file (a ``file://`` URI for now) the server may work in."""

    uri: str
    name: str | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ListRootsRequest(_InputRequestBase):
    """Asks the client for its roots (an input request, without ``jsonrpc``/``id``, from 2026-07-28)."""

    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(Result):
    """Answer to ``roots/list``."""

    roots: list[Root]


class RootsListChangedNotification(_NotificationBase):
    """Tells the server the client's roots changed (it should list them again)."""

    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None
