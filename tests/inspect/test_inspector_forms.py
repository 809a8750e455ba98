"""Forms for the input shapes beyond the plain types (unions of kinds, discriminated unions
of objects, lists of them), filled in headless Chromium against tests/inspect/forms_server.py.

A module of its own: one Playwright (sync) instance runs at a time, and the module-scoped
page of the other browser tests is closed before this one opens.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import ROOT, browser_page, inspected, shot, tab

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)


FORMS = ROOT / "tests" / "inspect" / "forms_server.py"


@pytest.fixture(scope="module")
def forms_page() -> Iterator[Any]:
    with inspected(["inspect", str(FORMS)]) as running, browser_page(running.url()) as (page, _):
        page.wait_for_selector('[data-testid="server-name"]')
        yield page


def _echoed(page: Any) -> dict[str, Any]:
    """The arguments a tool of forms_server.py echoed, from the result shown."""
    page.wait_for_selector('#tool-detail [data-testid="result"]')
    text = page.inner_text('#tool-detail [data-testid="result"] pre[data-content="text"]')
    echoed: dict[str, Any] = json.loads(text)
    return echoed


def _open_tool(page: Any, name: str) -> None:
    tab(page, "tools")
    page.click(f'#tool-list .item[data-name="{name}"]')


def _branch(page: Any, field: str, label: str, value: str | None = None) -> None:
    """Pick a union field's branch, and fill the branch's input when ``value`` is given."""
    page.select_option(f'[data-field="{field}"] [data-testid="union-branch"]', label=label)
    if value is not None:
        page.fill(f'[data-field="{field}"] .union-slot input', value)


def test_a_union_of_kinds_is_a_choice_then_a_field(forms_page: Any) -> None:
    p = forms_page
    _open_tool(p, "scalar_union")
    _branch(p, "value", "string", "abc")
    _branch(p, "maybe", "integer", "7")
    shot(p, "form-union")
    p.click('#tool-detail [data-testid="submit"]')
    assert _echoed(p) == {"value": "abc", "maybe": 7}
    _branch(p, "value", "integer", "5")
    _branch(p, "maybe", "null")
    p.click('#tool-detail [data-testid="submit"]')
    p.wait_for_selector('#tool-detail [data-testid="result"]:has-text("null")')
    assert _echoed(p) == {"value": 5, "maybe": None}


def test_a_discriminated_union_of_objects_and_a_list_of_them(forms_page: Any) -> None:
    p = forms_page
    _open_tool(p, "shapes")
    _branch(p, "first", "Square")
    p.fill('[data-field="first"] [data-field="side"] input', "2.5")
    p.click('[data-field="more"] [data-testid="add-item"]')
    p.fill('[data-field="more"] .array-item [data-field="radius"] input', "1")  # Circle first
    p.click('#tool-detail [data-testid="submit"]')
    assert _echoed(p) == {
        "first": {"kind": "square", "side": 2.5},
        "more": [{"kind": "circle", "radius": 1.0}],
    }
