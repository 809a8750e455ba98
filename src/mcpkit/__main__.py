"""``python -m mcpkit``: the ``mcpkit`` command, for when the script is not on PATH."""

from ._cli import console

console()
