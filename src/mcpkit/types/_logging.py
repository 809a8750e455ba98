"""Logging: the client sets a level, the server sends log messages."""

from typing import Any, Literal

from ._base import NotificationParams, RequestParams, _NotificationBase, _RequestBase
from ._levels import LoggingLevel

__all__ = [
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "SetLevelRequest",
    "SetLevelRequestParams",
]


class SetLevelRequestParams(RequestParams):
    """Params of ``logging/setLevel``: the lowest severity the client wants."""

    level: LoggingLevel


class SetLevelRequest(_RequestBase):
    """Asks the server to send log messages at this level and above."""

    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams


class LoggingMessageNotificationParams(NotificationParams):
    """Params of ``notifications/message``: severity, logger name, and any JSON data."""

    level: LoggingLevel
    logger: str | None = None
    data: Any


class LoggingMessageNotification(_NotificationBase):
    """A log message from the server."""

    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams
