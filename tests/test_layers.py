"""The layering of docs/architecture.md, enforced: lower layers never import higher ones."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "mcpkit"
DOC = PKG.parents[1] / "docs" / "architecture.md"


def _doc_table() -> list[tuple[str, int]]:
    """(package prefix, level) from the table between the ``layers`` markers of the doc."""
    text = DOC.read_text()
    start, end = text.index("<!-- layers: begin -->"), text.index("<!-- layers: end -->")
    rows: list[tuple[str, int]] = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        rows += [(name, int(cells[0])) for name in re.findall(r"`(mcpkit[\w.]*)`", cells[2])]
    return rows


# package prefix -> level; a module may import only from strictly lower levels or its own
# package. Imports under `if TYPE_CHECKING:` are ignored (they cost nothing at run time).
# The one table is the doc's: this test reads it, so the two cannot disagree.
LAYERS: list[tuple[str, int]] = _doc_table()


def _layer(module: str) -> tuple[str, int] | None:
    # The longest prefix wins: mcpkit._transports._base sits below mcpkit._transports.
    best: tuple[str, int] | None = None
    for prefix, level in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, level)
    return best


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                skip.add(id(inner))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return found


def test_lower_layers_never_import_higher_ones() -> None:
    problems: list[str] = []
    for path in sorted(PKG.rglob("*.py")):
        module = _module_name(path)
        mine = _layer(module)
        if mine is None:
            continue  # the top-level namespace may import anything
        for lineno, target in _imports(path, module):
            theirs = _layer(target)
            if theirs is None or theirs[0] == mine[0]:
                continue
            if theirs[1] >= mine[1]:
                problems.append(
                    f"{path.relative_to(PKG.parent)}:{lineno}: {module} (layer {mine[1]}) imports {target} (layer {theirs[1]})"
                )
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_every_module_has_a_layer() -> None:
    unknown = [
        _module_name(p)
        for p in PKG.rglob("*.py")
        if _layer(_module_name(p)) is None and _module_name(p) != "mcpkit"
    ]
    assert not unknown, f"modules outside the layer table of docs/architecture.md: {unknown}"


def test_the_table_is_read_from_the_doc() -> None:
    prefixes = [p for p, _ in LAYERS]
    assert len(prefixes) == len(set(prefixes)) >= 12
    assert dict(LAYERS)["mcpkit._session"] < dict(LAYERS)["mcpkit._app"]
    assert dict(LAYERS)["mcpkit._http"] < dict(LAYERS)["mcpkit._session"]


def test_no_importlib_hops_between_layers() -> None:
    """Another layer is reached by an import statement, never by a module name in a string."""
    hops = [
        f"{path.relative_to(PKG.parent)}: import_module({m.group(1)!r})"
        for path in sorted(PKG.rglob("*.py"))
        for m in re.finditer(r"import_module\(\s*[\"']([\w.]+)", path.read_text())
    ]
    assert not hops, "\n".join(hops)
