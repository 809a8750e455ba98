"""The log levels, written once: the type of a level and the same levels as a tuple.

Kept apart from the logging models (``_logging``) so that code that only names or compares
levels (the session layer, a plain stdio server's logging) imports no pydantic.
"""

from typing import Literal, TypeAlias, get_args

__all__ = ["LOG_LEVELS", "LoggingLevel"]

#: Log severities, as in syslog (RFC 5424), from least to most severe.
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
#: The same levels as a tuple, least severe first: the one list every module of mcpkit
#: reads them from (an index is a severity: ``LOG_LEVELS.index(level)``).
LOG_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
