"""Errors of the HTTP client transports: defined with every other one in ``mcpkit._exceptions``."""

from __future__ import annotations

from .._exceptions import HTTPStatusError, SessionExpired

#: The name this module used before the errors moved into the one tree.
HTTPStatusFailure = HTTPStatusError

__all__ = ["HTTPStatusFailure", "SessionExpired"]
