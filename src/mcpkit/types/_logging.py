"""Logging: the client sets a level, the server sends log messages."""

from typing import Any, Literal, TypeAlias

from ._base import NotificationParams, RequestParams, _NotificationBase, _RequestBase

__all__ = [
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "SetLevelRequest",
    "SetLevelRequestParams",
]

#: Log severities, as in syslog (RFC 5424), from least to most severe.
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
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
