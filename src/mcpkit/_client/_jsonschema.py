"""The client's JSON Schema checks: the shared validator of :mod:`mcpkit.types._jsonschema`."""

from ..types._jsonschema import schema_errors, validate

__all__ = ["schema_errors", "validate"]
