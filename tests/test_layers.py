"""The layering of docs/architecture.md, enforced: lower layers never import higher ones."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
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


# ---------------------------------------------------------------- circles inside a package

#: The most modules an import circle inside one package may hold (issue 42). A part names
#: the object that holds it through a Protocol of an interface module (``_server/_face.py``,
#: ``_client/_face.py``: docs/architecture.md), not by importing it back.
MAX_CIRCLE = 3


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module ``from ... import`` reads from, relative levels resolved in ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _module_targets(source: str, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``module`` imports: every import statement counts,
    under ``if TYPE_CHECKING:`` and inside functions too (a circle of annotations or of
    deferred imports is still a circle of the design); ``from pkg import sub`` imports the
    submodule ``pkg.sub``; ``import a.b.c`` or ``from a.b.c import name`` the module ``a.b.c``
    (or the nearest module above it that exists)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _package_graphs() -> dict[str, dict[str, set[str]]]:
    """Each package -> its modules (the package itself and the modules and packages right
    inside it) -> those of them each one imports."""
    paths = {_module_name(p): p for p in PKG.rglob("*.py")}
    modules = set(paths)
    graphs: dict[str, dict[str, set[str]]] = {}
    for module, path in paths.items():
        is_package = path.name == "__init__.py"
        if is_package:
            graphs.setdefault(module, {}).setdefault(module, set())
        if "." in module:
            graphs.setdefault(module.rpartition(".")[0], {}).setdefault(module, set())
    for module, path in paths.items():
        is_package = path.name == "__init__.py"
        for target in _module_targets(path.read_text(), module, is_package, modules):
            for graph in graphs.values():
                if module in graph and target in graph:
                    graph[module].add(target)
    return graphs


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one
    module, each sorted (Tarjan's algorithm, iterative: no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(graph[node]))))

    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        visit(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    visit(successor)
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:  # every successor seen: node is done
                work.pop()
                if work:
                    caller = work[-1][0]
                    low[caller] = min(low[caller], low[node])
                if low[node] == index[node]:  # node is the root of a component
                    component: list[str] = []
                    while not component or component[-1] != node:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    if len(component) > 1:
                        circles.append(sorted(component))
    return circles


def test_no_import_circle_inside_a_package() -> None:
    graphs = _package_graphs()
    assert {"mcpkit", "mcpkit._server", "mcpkit._client"} <= set(graphs)
    assert "mcpkit._server._face" in graphs["mcpkit._server"]
    problems = [
        f"{package}: {len(circle)} modules import each other: {', '.join(circle)}"
        for package, graph in sorted(graphs.items())
        for circle in _circles(graph)
        if len(circle) > MAX_CIRCLE
    ]
    assert not problems, (
        f"import circles of more than {MAX_CIRCLE} modules inside a package (name the "
        "holder through a Protocol, see docs/architecture.md):\n" + "\n".join(problems)
    )


def test_the_circle_finder_sees_every_kind_of_import() -> None:
    """What the test above counts: deferred, type-only and ``from pkg import sub`` imports."""
    modules = {"p", "p.a", "p.b", "p.c", "p.d", "p.e"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "from .c import thing\n"
        "if TYPE_CHECKING:\n"
        "    from p.d import Other\n"
        "def later():\n"
        "    import p.e\n"
        "    from os import path\n"
    )
    assert _module_targets(source, "p.a", False, modules) == {"p.b", "p.c", "p.d", "p.e"}
    assert _module_targets("from . import a\nfrom .b import x", "p", True, modules) == {
        "p.a",
        "p.b",
    }
    graph = {"a": {"b"}, "b": {"c"}, "c": {"d", "e"}, "d": {"a"}, "e": {"f"}, "f": {"e"}}
    assert sorted(_circles(graph)) == [["a", "b", "c", "d"], ["e", "f"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
