"""The requirements manifest (``tests/requirements.toml``) and the tests that cite it.

Tests cite requirement ids with ``@pytest.mark.req("ID", ...)``. This module reads the manifest,
checks each entry against the spec page it quotes, and finds the citations *statically* (by
parsing the test files with :mod:`ast`), so the result does not depend on which tests pytest
selected. ``tests/test_requirements_manifest.py`` turns the findings into test failures.

From the repository root::

    python -m tests._reqs report              # id -> citing tests
    python -m tests._reqs report --markdown   # the same as a Markdown table
    python -m tests._reqs report --uncited    # only ids no test cites
    python -m tests._reqs check               # manifest and citation problems; exit 1 if any

Nothing here writes to disk.
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent
MANIFEST = TESTS_DIR / "requirements.toml"
#: The pinned spec (prose pages under ``<rev>/``, schemas under ``schema/``), vendored in
#: tests/spec (the same default as tests/_schema.py, which this stdlib-only script can't import).
SPEC_DIR = Path(os.environ.get("MCPKIT_SPEC_DIR") or TESTS_DIR / "spec")
#: Revision of the prose pages an entry quotes, unless the entry says ``rev = "..."``.
DEFAULT_REV = "2025-11-25"
URL_BASE = "https://modelcontextprotocol.io/specification/"
#: Extension specs vendored beside the revisions (``tests/spec/<label>/``; an entry says
#: ``rev = "<label>"``): the folder their pages come from, at the vendored commit.
EXTENSION_URLS: Mapping[str, str] = {
    "ext-tasks": "https://github.com/modelcontextprotocol/ext-tasks/blob/"
    "e4345978be1f602f1fc48d89051e8559dd5302a6/specification/draft/",
}

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT")
SIDES = ("client", "server", "both")
STATUSES = ("tested", "untested")
#: Required fields and their types.
FIELDS: Mapping[str, type] = {
    "id": str,
    "level": str,
    "page": str,
    "line": int,
    "url": str,
    "text": str,
    "side": str,
    "status": str,
    "reason": str,
}
#: Optional fields and their types.
OPTIONAL_FIELDS: Mapping[str, type] = {"rev": str, "note": str}
ID_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
#: Words that must appear in the quoted text for each level (RFC 2119 synonyms allowed).
LEVEL_WORDS: Mapping[str, tuple[str, ...]] = {
    "MUST": ("MUST", "REQUIRED", "SHALL"),
    "MUST NOT": ("MUST NOT", "SHALL NOT"),
    "SHOULD": ("SHOULD", "RECOMMENDED"),
    "SHOULD NOT": ("SHOULD NOT", "NOT RECOMMENDED"),
}
#: A quote may run over this many lines, starting at ``line``.
QUOTE_WINDOW = 8
#: Joins the lead-in of a list to one of its items in ``text``.
ELISION = "…"

_LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


# --------------------------------------------------------------------------- manifest


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    """The ``[[req]]`` entries of the manifest, in file order."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    entries = data.get("req", [])
    if not isinstance(entries, list):
        raise ValueError(f"{path}: `req` must be an array of tables ([[req]])")
    return entries


def normalize(text: str) -> str:
    """Spec prose as plain text: link targets, bold markers, list markers and runs of
    whitespace dropped. Applied to both the page and the quote before comparing."""
    text = _LINK_RE.sub(r"\1", text)
    text = text.replace("**", "")
    text = _LIST_MARK_RE.sub("", text)
    return " ".join(text.split())


@functools.cache
def _page_lines(path: Path) -> tuple[str, ...]:
    return tuple(path.read_text(encoding="utf-8").splitlines())


def page_path(entry: Mapping[str, Any], spec_dir: Path = SPEC_DIR) -> Path:
    return spec_dir / str(entry.get("rev", DEFAULT_REV)) / str(entry["page"])


def page_url(entry: Mapping[str, Any]) -> str:
    """The canonical URL of the entry's page (without anchor)."""
    extension = EXTENSION_URLS.get(str(entry.get("rev", DEFAULT_REV)))
    if extension is not None:
        return extension + str(entry["page"])
    page = str(entry["page"]).removesuffix(".mdx")
    page = page.removesuffix("/index") if page != "index" else ""
    return f"{URL_BASE}{entry.get('rev', DEFAULT_REV)}/{page}".rstrip("/")


def quote_problem(entry: Mapping[str, Any], spec_dir: Path = SPEC_DIR) -> str | None:
    """Why ``entry["text"]`` is not what the page says at ``entry["line"]`` (None if it is).

    The quote must start on ``line`` and continue (verbatim, after :func:`normalize`) within
    :data:`QUOTE_WINDOW` lines; ``…`` separates fragments that must appear in that order.
    """
    path = page_path(entry, spec_dir)
    if not path.is_file():
        return f"page file {path} does not exist"
    lines = _page_lines(path)
    line = entry["line"]
    if not 1 <= line <= len(lines):
        return f"line {line} is outside {entry['page']} (1..{len(lines)})"
    window = [_LIST_MARK_RE.sub("", raw) for raw in lines[line - 1 : line - 1 + QUOTE_WINDOW]]
    first = normalize(window[0])
    if not first:
        return f"line {line} of {entry['page']} is blank"
    joined = normalize(" ".join(window))  # links may span lines
    pos = 0
    for i, fragment in enumerate(normalize(part) for part in str(entry["text"]).split(ELISION)):
        if not fragment:
            return "empty fragment around `…` in text"
        found = joined.find(fragment, pos)
        if found < 0:
            where = f"lines {line}..{line + QUOTE_WINDOW - 1}" if i else f"line {line}"
            return (
                f"text {fragment!r} not found from {where} of {entry['page']} "
                f"(line {line} reads {first!r})"
            )
        if i == 0 and found >= len(first):
            return f"quote does not start on line {line} (it reads {first!r})"
        pos = found + len(fragment)
    return None


def manifest_problems(
    entries: Sequence[Mapping[str, Any]], spec_dir: Path = SPEC_DIR, *, check_quotes: bool = True
) -> list[str]:
    """Every problem with the manifest entries, as readable lines (empty: all fine)."""
    problems: list[str] = []
    seen: Counter[str] = Counter()
    for n, entry in enumerate(entries, 1):
        label = f"entry #{n} ({entry.get('id', '<no id>')})"
        bad: list[str] = []
        for name, typ in FIELDS.items():
            if name not in entry:
                bad.append(f"missing field `{name}`")
            elif not isinstance(entry[name], typ) or isinstance(entry[name], bool):
                bad.append(f"`{name}` must be {typ.__name__}, got {entry[name]!r}")
        if bad:  # later checks need the fields
            problems.extend(f"{label}: {b}" for b in bad)
            continue
        for name in sorted(set(entry) - set(FIELDS)):
            typ = OPTIONAL_FIELDS.get(name)
            if typ is None:
                bad.append(f"unknown field `{name}`")
            elif not isinstance(entry[name], typ):
                bad.append(f"`{name}` must be {typ.__name__}, got {entry[name]!r}")
        rid = entry["id"]
        seen[rid] += 1
        if not ID_RE.match(rid):
            bad.append("id must be UPPER-KEBAB with a page prefix, e.g. LIFECYCLE-INIT-FIRST")
        if entry["level"] not in LEVELS:
            bad.append(f"level must be one of {LEVELS}, got {entry['level']!r}")
        elif not any(w in entry["text"] for w in LEVEL_WORDS[entry["level"]]):
            bad.append(f"text does not contain {' / '.join(LEVEL_WORDS[entry['level']])}")
        if entry["side"] not in SIDES:
            bad.append(f"side must be one of {SIDES}, got {entry['side']!r}")
        if entry["status"] not in STATUSES:
            bad.append(f"status must be one of {STATUSES}, got {entry['status']!r}")
        elif entry["status"] == "untested" and not entry["reason"].strip():
            bad.append("status = 'untested' needs a `reason`")
        elif entry["status"] == "tested" and entry["reason"].strip():
            bad.append("status = 'tested' must have an empty `reason`")
        suffixes = (".mdx", ".md") if entry.get("rev") in EXTENSION_URLS else (".mdx",)
        if not entry["page"].endswith(suffixes):
            bad.append(f"page must be an .mdx path under <rev>/, got {entry['page']!r}")
        url = page_url(entry)
        if entry["url"] != url and not entry["url"].startswith(url + "#"):
            bad.append(f"url must be {url} (optionally with #anchor), got {entry['url']!r}")
        if not bad and check_quotes:
            problem = quote_problem(entry, spec_dir)
            if problem:
                bad.append(problem)
        problems.extend(f"{label}: {b}" for b in bad)
    problems.extend(f"id {rid} is used by {k} entries" for rid, k in seen.items() if k > 1)
    return problems


# --------------------------------------------------------------------------- citations


@dataclass(frozen=True)
class Citation:
    """One id named in a ``pytest.mark.req(...)`` call."""

    req_id: str
    test: str  # "tests/test_x.py::TestY::test_z", or "tests/test_x.py" for module pytestmark
    lineno: int


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_req_mark(call: ast.Call) -> bool:
    name = _dotted(call.func)
    return name == "mark.req" or name.endswith(".mark.req")


class _MarkFinder(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.citations: list[Citation] = []
        self.problems: list[str] = []

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        # Decorators belong to the function/class they decorate.
        self.scope.append(node.name)
        for child in ast.iter_child_nodes(node):
            self.visit(child)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Call(self, node: ast.Call) -> None:
        if _is_req_mark(node):
            test = "::".join([self.module, *self.scope])
            where = f"{self.module}:{node.lineno}"
            if not node.args or node.keywords:
                self.problems.append(f"{where}: req mark needs one or more ids and no keywords")
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    self.citations.append(Citation(arg.value, test, node.lineno))
                else:
                    self.problems.append(
                        f"{where}: req mark argument {ast.unparse(arg)} is not a string literal"
                        " (ids are collected statically)"
                    )
        self.generic_visit(node)


def citations_in_source(source: str, module: str) -> tuple[list[Citation], list[str]]:
    """The req citations in one file's source (``module`` names it in the results)."""
    try:
        tree = ast.parse(source, module)
    except SyntaxError as exc:
        return [], [f"{module}: cannot parse: {exc}"]
    finder = _MarkFinder(module)
    finder.visit(tree)
    return finder.citations, finder.problems


def find_test_files(root: Path = TESTS_DIR) -> list[Path]:
    """Files pytest would collect tests from, plus conftest.py files."""
    return sorted(
        p
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts
        and (p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py")
    )


def collect_citations(
    files: Iterable[Path] | None = None, base: Path = REPO_DIR
) -> tuple[dict[str, list[Citation]], list[str]]:
    """Map id -> citations over the test files, and problems (unparsable marks/files)."""
    by_id: dict[str, list[Citation]] = {}
    problems: list[str] = []
    for path in find_test_files() if files is None else files:
        try:
            module = path.resolve().relative_to(base).as_posix()
        except ValueError:
            module = path.as_posix()
        found, bad = citations_in_source(path.read_text(encoding="utf-8"), module)
        problems.extend(bad)
        for c in found:
            by_id.setdefault(c.req_id, []).append(c)
    return by_id, problems


def unknown_citations(
    entries: Sequence[Mapping[str, Any]], cited: Mapping[str, Sequence[Citation]]
) -> list[str]:
    known = {e.get("id") for e in entries}
    return [
        f"{c.test} (line {c.lineno}) cites unknown id {rid!r}"
        for rid, cs in sorted(cited.items())
        if rid not in known
        for c in cs
    ]


def uncited_tested(
    entries: Sequence[Mapping[str, Any]], cited: Mapping[str, Sequence[Citation]]
) -> list[Mapping[str, Any]]:
    """Entries with ``status = "tested"`` that no test cites."""
    return [e for e in entries if e.get("status") == "tested" and e.get("id") not in cited]


# --------------------------------------------------------------------------- report


def report(
    entries: Sequence[Mapping[str, Any]] | None = None,
    cited: Mapping[str, Sequence[Citation]] | None = None,
    *,
    markdown: bool = False,
    only_uncited: bool = False,
) -> str:
    """id -> citing tests, as plain text or a Markdown table."""
    if entries is None:
        entries = load_manifest()
    if cited is None:
        cited = collect_citations()[0]
    rows = [e for e in entries if not (only_uncited and e["id"] in cited)]
    out: list[str] = []
    if markdown:
        out += [
            "| id | level | side | status | spec | cited by |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for e in rows:
            tests = "<br>".join(f"`{c.test}`" for c in cited.get(e["id"], ())) or (
                f"— ({e['reason']})" if e["status"] == "untested" else "**none**"
            )
            spec = f"[{e['page']}:{e['line']}]({e['url']})"
            out.append(
                f"| `{e['id']}` | {e['level']} | {e['side']} | {e['status']} | {spec} | {tests} |"
            )
    else:
        for e in rows:
            out.append(
                f"{e['id']}  [{e['level']}, {e['side']}, {e['status']}]  {e['page']}:{e['line']}"
            )
            for c in cited.get(e["id"], ()):
                out.append(f"    {c.test}")
            if e["id"] not in cited:
                out.append(
                    f"    (untested: {e['reason']})"
                    if e["status"] == "untested"
                    else "    (NOT CITED)"
                )
    total = Counter(e["status"] for e in entries)
    n_cited = sum(1 for e in entries if e["id"] in cited)
    out.append("")
    out.append(
        f"{len(entries)} requirements: {total['tested']} tested, {total['untested']} untested; "
        f"{n_cited} cited by at least one test"
    )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests._reqs", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    rep = sub.add_parser("report", help="print id -> citing tests")
    rep.add_argument("--markdown", action="store_true", help="as a Markdown table")
    rep.add_argument("--uncited", action="store_true", help="only ids that no test cites")
    sub.add_parser("check", help="print manifest and citation problems; exit 1 if any")
    args = parser.parse_args(argv)
    entries = load_manifest()
    cited, citation_problems = collect_citations()
    if args.cmd == "report":
        print(report(entries, cited, markdown=args.markdown, only_uncited=args.uncited))
        return 0
    problems = [
        *manifest_problems(entries),
        *citation_problems,
        *unknown_citations(entries, cited),
        *(
            f"{e['id']} is status = 'tested' but no test cites it"
            for e in uncited_tested(entries, cited)
        ),
    ]
    print("\n".join(problems) or "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
