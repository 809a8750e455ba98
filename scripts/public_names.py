"""Write the public namespace of ``mcpkit`` from its one table.

``src/mcpkit/__init__.py`` names each public name once, in ``_LAZY`` (name -> the module it
is imported from on first use). What type checkers and ``from mcpkit import *`` read, the
``if _TYPE_CHECKING:`` imports and ``__all__``, are written from that table by this script
between the ``generated`` markers; never by hand.

    python scripts/public_names.py          # rewrite them after changing _LAZY
    python scripts/public_names.py --check  # exit 1 if they are not what _LAZY says

``tests/test_namespace.py`` runs the check.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

INIT = Path(__file__).resolve().parents[1] / "src" / "mcpkit" / "__init__.py"
BEGIN = "# --- generated from _LAZY by scripts/public_names.py: do not edit ---"
END = "# --- end of generated ---"


def table(source: str) -> dict[str, str]:
    """The ``_LAZY`` table of the module source."""
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_LAZY" and node.value is not None:
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return {str(k): str(v) for k, v in value.items()}
    raise SystemExit(f"{INIT}: no _LAZY table")


def block(lazy: dict[str, str]) -> str:
    """The generated part: the imports type checkers follow, then ``__all__``."""
    by_module: defaultdict[str, list[str]] = defaultdict(list)
    for name, module in lazy.items():
        by_module[module].append(name)
    lines = [BEGIN, "if _TYPE_CHECKING:"]
    for module in sorted(by_module):
        names = ", ".join(f"{n} as {n}" for n in sorted(by_module[module]))
        lines.append(f"    from {module} import {names}")
    lines.append("")
    lines.append("__all__ = [" + ", ".join(f'"{n}"' for n in sorted(lazy)) + "]")
    lines.append(END)
    return "\n".join(lines) + "\n"


def render(source: str) -> str:
    """``source`` with its generated part written anew from its table, formatted as
    ``ruff format`` and ruff's import sorting leave it (so the check and CI agree)."""
    head, sep, rest = source.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{INIT}: the generated markers are missing")
    text = head + block(table(source)) + tail.lstrip("\n").join(["\n", ""])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "__init__.py"
        path.write_text(text)
        ruff = [sys.executable, "-m", "ruff"]
        config = ["--config", str(INIT.parents[2] / "pyproject.toml")]
        subprocess.run(
            [*ruff, "check", *config, "--select", "I", "--fix", "-q", str(path)], check=False
        )
        subprocess.run([*ruff, "format", *config, "-q", str(path)], check=True)
        return path.read_text()


def main(argv: list[str]) -> int:
    source = INIT.read_text()
    wanted = render(source)
    if argv == ["--check"]:
        if wanted != source:
            print(f"{INIT}: run python scripts/public_names.py (_LAZY changed)", file=sys.stderr)
            return 1
        return 0
    if argv:
        raise SystemExit(__doc__)
    INIT.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
