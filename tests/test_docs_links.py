"""The documentation hangs together: every page of docs/ is reachable from the README or
docs/index.md, every link between pages (relative, or absolute into this repository, as the
README's are for the package page) leads to a file and heading that exist, and no page
claims an older protocol revision as the one mcpkit speaks or defaults to (issue 33).

Links inside code (fenced blocks, inline code) are examples, not links, and are not read.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from mcpkit.types import LATEST_PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: Where the README's absolute links point: this repository's files on its main branch
#: (pyproject.toml's Source URL; the package page shows the README without the repository).
REPO_FILES = "https://github.com/mcpkit/mcpkit/blob/main/"

PAGES = sorted(DOCS.glob("*.md"))
TEXTS = [README, *PAGES]

FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)

DATE = r"[`*]*(\d{4}-\d\d-\d\d)"
#: Sentences saying which revision mcpkit speaks, or which one is the default or current:
#: the (first) revision they name must be the latest one.
REVISION_CLAIMS = [
    re.compile(
        rf"\bspeaks\s+(?:only\s+)?(?:the\s+)?(?:stateless\s+)?(?:protocol\s+)?"
        rf"(?:revision\s+|version\s+)?{DATE}",
        re.I,
    ),
    re.compile(
        rf"\b(?:default|current|latest|newest)\s+(?:protocol\s+)?(?:revision|version)"
        rf"(?:\s+is)?\s*:?\s*{DATE}",
        re.I,
    ),
    re.compile(rf"{DATE}[`*]*\s*\((?:the\s+)?(?:default|current|latest)\b", re.I),
    re.compile(rf"{DATE}[`*]*\s+is\s+(?:the\s+)?(?:default|current|latest)\b", re.I),
    re.compile(rf"\bprotocol\s+revision\s+{DATE}[`*]*\s*(?:,\s*negotiating|\(and\s+answers)", re.I),
]
#: Phrases that were true once and are not any more.
STALE_PHRASES = ["until the tasks extension lands"]


def without_fences(text: str) -> str:
    """``text`` with its fenced code blocks blanked (line numbers kept)."""
    return FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def prose(text: str) -> str:
    """``text`` without code: fenced blocks and inline code dropped, but for a bare date in
    backticks (`` `2026-07-28` ``), which is prose about a revision."""

    def keep_dates(m: re.Match[str]) -> str:
        inner = m.group(0).strip("`")
        return inner if re.fullmatch(r"\d{4}-\d\d-\d\d", inner) else ""

    return INLINE_CODE.sub(keep_dates, without_fences(text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to dashes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    found: set[str] = set()
    for heading in HEADING.findall(without_fences(page.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # repeated headings get -1, -2, ...
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return frozenset(found)


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every link of ``page`` outside code."""
    text = prose(page.read_text(encoding="utf-8"))
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]


def resolve(page: Path, target: str) -> tuple[Path, str] | None:
    """The file and anchor a link of ``page`` leads to in this checkout; None when it
    leads elsewhere (another site, an e-mail address)."""
    if target.startswith(REPO_FILES):
        path, _, anchor = target.removeprefix(REPO_FILES).partition("#")
        return ROOT / path, anchor
    if SCHEME.match(target) or target.startswith("/"):
        return None
    path, _, anchor = target.partition("#")
    return (page.parent / path if path else page), anchor


def broken(page: Path) -> list[str]:
    problems = []
    for line, target in links(page):
        found = resolve(page, target)
        if found is None:
            continue
        path, anchor = found
        where = f"{page.name}:{line}: {target}"
        if not path.exists():
            problems.append(f"{where}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path.resolve()):
            problems.append(f"{where}: no heading #{anchor} in {path.name}")
    return problems


def stale_claims(name: str, text: str) -> list[str]:
    text = prose(text)
    problems = []
    for pattern in REVISION_CLAIMS:
        for m in pattern.finditer(text):
            if m.group(1) != LATEST_PROTOCOL_VERSION:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{name}:{line}: {' '.join(m.group(0).split())!r}")
    flat = " ".join(text.split())
    problems += [f"{name}: {phrase!r}" for phrase in STALE_PHRASES if phrase in flat]
    return problems


def test_every_docs_page_is_linked_from_the_readme_or_the_index() -> None:
    index = DOCS / "index.md"
    assert index.exists(), "docs/index.md links every page"
    reached = {
        found[0].resolve()
        for page in (README, index)
        for _, target in links(page)
        if (found := resolve(page, target)) is not None
    }
    orphans = [p.name for p in PAGES if p != index and p.resolve() not in reached]
    assert not orphans, f"pages no one links to (add them to docs/index.md): {orphans}"
    assert index.resolve() in reached, "the README links docs/index.md"


def test_the_index_links_every_page() -> None:
    index = DOCS / "index.md"
    listed = {
        found[0].resolve() for _, t in links(index) if (found := resolve(index, t)) is not None
    }
    missing = [p.name for p in PAGES if p != index and p.resolve() not in listed]
    assert not missing, f"docs/index.md does not list {missing}"


@pytest.mark.parametrize("page", TEXTS, ids=lambda p: p.name)
def test_links_lead_to_files_and_headings_that_exist(page: Path) -> None:
    problems = broken(page)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", TEXTS, ids=lambda p: p.name)
def test_no_stale_revision_is_claimed_as_current(page: Path) -> None:
    problems = stale_claims(page.name, page.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_readme_says_both_eras_first() -> None:
    opening = README.read_text(encoding="utf-8").split("\n## ")[0]
    assert LATEST_PROTOCOL_VERSION in opening and "2024-11-05" in opening, opening


@pytest.mark.parametrize(
    "text",
    [
        "It speaks protocol revision 2025-11-25 (and answers clients of ...)",
        "mcpkit speaks **2025-06-18**.",
        "The default revision is 2025-11-25.",
        "the latest protocol version: `2025-11-25`",
        "`2025-11-25` (the default)",
        "2025-11-25 is the default",
        "Protocol revision **2025-11-25**, negotiating down to 2025-06-18",
        "Tasks are served to 2025 clients only, until the tasks\nextension lands.",
    ],
)
def test_the_checks_catch_stale_claims(text: str) -> None:
    assert stale_claims("page.md", text)


@pytest.mark.parametrize(
    "text",
    [
        "`Client` speaks revision 2026-07-28 and the handshake revisions 2025-11-25 down to ...",
        "this client speaks 2026-07-28, 2025-11-25, ...",
        "# Tasks (MCP 2025-11-25, experimental)",
        "```sh\nmcpkit speaks 2025-11-25\n```",
        "`protocol_version='2025-11-25'` forces the handshake",
    ],
)
def test_the_checks_pass_current_claims(text: str) -> None:
    assert not stale_claims("page.md", text)


def test_the_link_checks_catch_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Some `code` here\n")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md) [ok](a.md#some-code-here) [ok](#b) [web](https://example.com/x.md)\n"
        "[gone](missing.md) [no anchor](a.md#nowhere)\n\n# B\n\n```\n[in code](nope.md)\n```\n"
    )
    problems = broken(page)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "missing.md: no such file",
        "a.md#nowhere: no heading #nowhere in a.md",
    ], problems
    assert slug("The client: `mcpkit.Client`") == "the-client-mcpkitclient"
