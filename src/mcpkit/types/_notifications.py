"""Utility notifications: progress and cancellation."""

from typing import Literal

from pydantic import Field

from ._base import NotificationParams, ProgressToken, RequestId, _NotificationBase

__all__ = [
    "CancelledNotification",
    "CancelledNotificationParams",
    "ProgressNotification",
    "ProgressNotificationParams",
]


class ProgressNotificationParams(NotificationParams):
    """Params of ``notifications/progress``: how far along, out of how much, and a message."""

    progress_token: ProgressToken = Field(alias="progressToken")
    progress: int | float
    total: int | float | None = None
    message: str | None = None


class ProgressNotification(_NotificationBase):
    """Reports progress of a long-running request that asked for it with a progress token."""

    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


class CancelledNotificationParams(NotificationParams):
    """Params of ``notifications/cancelled``: which request, and why."""

    request_id: RequestId | None = Field(default=None, alias="requestId")
    reason: str | None = None


class CancelledNotification(_NotificationBase):
    """Tells the peer that a request it received is cancelled (either side may send it).

    The answer may already be on its way; the receiver should stop work and not reply.
    Tasks are cancelled with ``tasks/cancel`` instead.
    """

    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams
