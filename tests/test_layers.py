"""The layering of docs/architecture.md, enforced: lower layers never import higher ones."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "mcpkit"

# package prefix -> layer; a module may import only from strictly lower layers or its own
# package. Imports under `if TYPE_CHECKING:` are ignored (they cost nothing at run time).
# The transport *interface* sits below the engine (the engine is written against it); the
# transports themselves sit above it.
LAYERS: list[tuple[str, int]] = [
    ("mcpkit._exceptions", 0),
    ("mcpkit._version", 0),
    ("mcpkit.types", 1),
    ("mcpkit._transports._base", 1),
    ("mcpkit._jsonrpc", 2),
    ("mcpkit._transports", 3),
    ("mcpkit._session", 4),
    ("mcpkit._http", 5),
    ("mcpkit._server", 6),
    ("mcpkit._client", 6),
    ("mcpkit._cli", 7),
    ("mcpkit.__main__", 8),
    ("mcpkit.lowlevel", 8),
]


def _layer(module: str) -> tuple[str, int] | None:
    for prefix, level in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return prefix, level
    return None


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
