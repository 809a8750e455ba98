"""The ``MCPKIT_*`` environment variables: named in one module (``mcpkit._env``), read through
it, listed in one table (docs/deploy.md, "Environment variables") that agrees with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpkit import _env

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "mcpkit"
DOC = ROOT / "docs" / "deploy.md"
BEGIN, END = "<!-- env: begin -->", "<!-- env: end -->"

#: A variable's name as a string of its own (``os.environ.get("MCPKIT_X")``, a table of
#: names): only ``_env.py`` may hold one; everywhere else the name comes from there.
_NAME_LITERAL = re.compile(r"""["']MCPKIT_[A-Z0-9_]+["']""")
#: Modules that still read one directly, each until its owner moves it to ``mcpkit._env``
#: (issue 42: ``_app/`` was being rewritten at the time). A stale entry fails the test.
_NOT_YET: set[str] = set()
#: ``MCPKIT_*`` names the docs may mention that are not mcpkit's: read only by the test
#: suite (and every ``MCPKIT_TEST_*``), the benchmarks or an example's own code.
_NOT_MCPKIT = {
    "MCPKIT_CONFORMANCE",
    "MCPKIT_CONFORMANCE_RUN_SH",
    "MCPKIT_FUZZ",
    "MCPKIT_SPEC_DIR",
    "MCPKIT_OIDC_HOME",
    "MCPKIT_AUTH_ISSUER",  # examples/protected_server.py
    "MCPKIT_AUTH_RESOURCE",  # examples/protected_server.py
}
_NAME = re.compile(r"\bMCPKIT_[A-Z0-9_]*[A-Z0-9]\b")


def table() -> str:
    """The table docs/deploy.md shows, from ``_env.VARIABLES``."""
    rows = [
        "| variable | `mcpkit run` option | meaning | when unset |",
        "| --- | --- | --- | --- |",
    ]
    for v in _env.VARIABLES:
        option = f"`{v.option}`" if v.option else "-"
        rows.append(f"| `{v.name}` | {option} | {v.meaning} | {v.default} |")
    return "\n".join(rows)


def test_the_doc_table_is_the_module_s() -> None:
    text = DOC.read_text()
    shown = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()
    assert shown == table(), (
        f"docs/deploy.md's table between {BEGIN} and {END} should read:\n{table()}"
    )


def test_the_module_names_each_variable_once() -> None:
    names = [v.name for v in _env.VARIABLES]
    assert len(names) == len(set(names))
    public = {getattr(_env, n) for n in _env.__all__ if isinstance(getattr(_env, n), _env.Variable)}
    assert public == set(_env.VARIABLES)
    for v in _env.VARIABLES:
        assert v.name.startswith("MCPKIT_") and v.meaning and v.default
        assert "|" not in v.meaning + v.default and "\n" not in v.meaning + v.default


def _sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_every_variable_named_in_src_is_the_module_s() -> None:
    known = {v.name for v in _env.VARIABLES}
    unknown = {
        f"{path.relative_to(SRC)}: {name}"
        for path in _sources()
        for name in _NAME.findall(path.read_text())
        if name not in known
    }
    assert not unknown, f"name these in mcpkit._env (and so in docs/deploy.md): {sorted(unknown)}"


def test_only_the_module_reads_them() -> None:
    readers = {
        str(path.relative_to(SRC))
        for path in _sources()
        if path.name != "_env.py" and _NAME_LITERAL.search(path.read_text())
    }
    assert readers - _NOT_YET == set(), "read MCPKIT_* variables through mcpkit._env"
    assert readers >= _NOT_YET, (
        f"{sorted(_NOT_YET - readers)} read through mcpkit._env now: drop them"
    )


def test_every_variable_the_docs_name_is_known() -> None:
    known = {v.name for v in _env.VARIABLES} | _NOT_MCPKIT
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    unknown = {
        f"{page.name}: {name}"
        for page in pages
        for name in _NAME.findall(page.read_text())
        if name not in known and not name.startswith("MCPKIT_TEST_")
    }
    assert not unknown, f"variables mcpkit does not read: {sorted(unknown)}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), (" Yes ", True), ("on", True), ("0", False), ("off", False), ("FALSE", False)],
)
def test_flags(value: str, expected: bool) -> None:
    assert _env.SESSIONLESS.flag({"MCPKIT_SESSIONLESS": value}) is expected


def test_accessors() -> None:
    assert _env.SESSIONLESS.flag({}) is False and _env.SESSIONLESS.flag({}, default=True) is True
    assert _env.REDIS_URL.value({"MCPKIT_REDIS_URL": ""}) is None  # empty counts as unset
    assert _env.ALLOWED_HOSTS.items({"MCPKIT_ALLOWED_HOSTS": " a, ,b "}) == ["a", "b"]
    assert _env.ALLOWED_HOSTS.items({}) is None
    with pytest.raises(ValueError, match="MCPKIT_SESSIONLESS='maybe'"):
        _env.SESSIONLESS.flag({"MCPKIT_SESSIONLESS": "maybe"})


def test_a_variable_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_STATE_KEY", "k1")
    assert _env.STATE_KEY.value() == "k1"
    monkeypatch.delenv("MCPKIT_STATE_KEY")
    assert _env.STATE_KEY.value() is None
