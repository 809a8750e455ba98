"""Every module of ``src/mcpkit`` stays small enough to read whole: at most 800 lines.

A module that grows past it is split (one job per module), not exempted.
"""

from __future__ import annotations

from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "mcpkit"

#: The most lines a module of the package may have.
MAX_LINES = 800


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def test_no_module_exceeds_the_limit() -> None:
    sizes = {path.relative_to(PKG.parent): _lines(path) for path in PKG.rglob("*.py")}
    assert len(sizes) > 50, "the package was not found"
    offenders = sorted(f"{path} ({n} lines)" for path, n in sizes.items() if n > MAX_LINES)
    assert not offenders, f"modules over {MAX_LINES} lines: {', '.join(offenders)}"
