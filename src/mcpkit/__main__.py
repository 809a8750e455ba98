"""``python -m mcpkit``: the ``mcpkit`` command, for when the script is not on PATH."""

from ._cli import console

if __name__ == "__main__":  # not when a tool merely imports every module
    console()
