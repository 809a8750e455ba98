"""The requirements manifest is well-formed, quotes the spec, and matches the tests' citations.

See docs/requirements.md. Citations are found by parsing the test files (tests/_reqs.py), not
from the tests pytest happened to select. Nothing here writes to disk.
"""

from __future__ import annotations

from collections import Counter

import pytest

try:
    from tests import _reqs
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    import _reqs  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return _reqs.load_manifest()


@pytest.fixture(scope="module")
def citations() -> tuple[dict[str, list[_reqs.Citation]], list[str]]:
    return _reqs.collect_citations()


def _fail_listing(title: str, lines: list[str]) -> None:
    if lines:
        pytest.fail(f"{title} ({len(lines)}):\n  " + "\n  ".join(lines), pytrace=False)


def test_manifest_has_entries(entries: list[dict]) -> None:
    assert entries, f"{_reqs.MANIFEST} has no [[req]] entries"


def test_manifest_entries_are_well_formed_and_quote_the_spec(entries: list[dict]) -> None:
    _fail_listing("requirements.toml problems", _reqs.manifest_problems(entries))


def test_manifest_ids_are_unique(entries: list[dict]) -> None:
    dupes = [rid for rid, n in Counter(e.get("id") for e in entries).items() if n > 1]
    assert not dupes, f"duplicate ids: {dupes}"


def test_req_marks_are_static_string_literals(citations) -> None:
    _fail_listing("req marks that cannot be read statically", citations[1])


def test_tests_cite_only_known_ids(entries: list[dict], citations) -> None:
    _fail_listing(
        "tests cite ids that are not in tests/requirements.toml",
        _reqs.unknown_citations(entries, citations[0]),
    )


def test_every_tested_requirement_is_cited(entries: list[dict], citations) -> None:
    missing = _reqs.uncited_tested(entries, citations[0])
    _fail_listing(
        'requirements with status = "tested" that no test cites '
        '(cite with @pytest.mark.req(...), or mark status = "untested" with a reason)',
        [f"{e['id']:<50} {e['level']:<10} {e['page']}:{e['line']}" for e in missing],
    )


# --------------------------------------------------------------------------- the tooling itself

_SAMPLE = """
import pytest
from pytest import mark

pytestmark = [pytest.mark.req("MOD-A"), pytest.mark.anyio]

@pytest.mark.req("FN-A", "FN-B")
def test_plain():
    pass

@mark.req("FN-C")
async def test_async():
    pass

@pytest.mark.req("CLS-A")
class TestGroup:
    pytestmark = pytest.mark.req("CLS-B")

    @pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.req("PARAM-A"))])
    def test_method(self, x):
        pass

def helper():
    return "pytest.mark.req('NOT-A-CALL')"

@pytest.mark.req(SOME_CONSTANT)
def test_dynamic():
    pass
"""


def test_collector_finds_decorators_pytestmark_and_params() -> None:
    found, problems = _reqs.citations_in_source(_SAMPLE, "tests/test_sample.py")
    got = {(c.req_id, c.test) for c in found}
    assert got == {
        ("MOD-A", "tests/test_sample.py"),
        ("FN-A", "tests/test_sample.py::test_plain"),
        ("FN-B", "tests/test_sample.py::test_plain"),
        ("FN-C", "tests/test_sample.py::test_async"),
        ("CLS-A", "tests/test_sample.py::TestGroup"),
        ("CLS-B", "tests/test_sample.py::TestGroup"),
        ("PARAM-A", "tests/test_sample.py::TestGroup::test_method"),
    }
    assert len(problems) == 1
    assert "SOME_CONSTANT" in problems[0]
    assert "not a string literal" in problems[0]


def test_quote_check_rejects_wrong_line_and_wrong_text(entries: list[dict]) -> None:
    good = dict(entries[0])
    assert _reqs.quote_problem(good) is None
    moved = {**good, "line": good["line"] + 1}
    assert _reqs.quote_problem(moved) is not None
    edited = {**good, "text": good["text"].replace("MUST", "MAY", 1)}
    assert _reqs.quote_problem(edited) is not None
    bad = {**good, "level": "MAY", "status": "untested", "reason": "", "extra": 1}
    problems = _reqs.manifest_problems([bad, good])
    text = "\n".join(problems)
    assert "level must be one of" in text
    assert "needs a `reason`" in text
    assert "unknown field `extra`" in text
    assert f"id {good['id']} is used by 2 entries" in text


def test_report_lists_citing_tests(entries: list[dict]) -> None:
    first = entries[0]["id"]
    cited = {first: [_reqs.Citation(first, "tests/test_x.py::test_y", 3)]}
    text = _reqs.report(entries, cited)
    assert f"{first}  [" in text
    assert "    tests/test_x.py::test_y" in text
    assert "NOT CITED" in text or all(e["status"] == "untested" for e in entries[1:])
    table = _reqs.report(entries, cited, markdown=True)
    assert table.splitlines()[0].startswith("| id |")
    assert "`tests/test_x.py::test_y`" in table
