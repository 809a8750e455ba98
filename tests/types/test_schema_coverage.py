"""Every definition of the 2025-11-25 schema has a model (or alias) in ``mcpkit.types``.

The checks are shared with the 2026-07-28 test (``_coverage``): one model serves both
revisions, so a property is required only when both require it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.types._coverage import (
    check_alias,
    check_constants_and_enums,
    check_exported,
    check_object_fields,
    check_own_docstrings,
    object_definitions,
    other_definitions,
)
from tests.types._spec import SCHEMA_DIR, definitions, method_map

import mcpkit.types as t

#: The schema folder this test reads (``/work/shared/spec/schema`` in the workspace).
SCHEMA_PATH = SCHEMA_DIR
REV = "2025-11-25"
DEFS = definitions(REV)
OBJECT_DEFS = object_definitions(REV)
OTHER_DEFS = other_definitions(REV)


def test_schema_file_is_the_expected_one() -> None:
    assert (SCHEMA_PATH / f"{REV}.json").is_file()
    assert len(DEFS) > 100


@pytest.mark.parametrize("name", sorted(DEFS))
def test_definition_is_exported(name: str) -> None:
    check_exported(name)


@pytest.mark.parametrize("name", OBJECT_DEFS)
def test_object_definition_fields(name: str) -> None:
    check_object_fields(REV, name)


@pytest.mark.parametrize("name", OBJECT_DEFS)
def test_constants_and_enums(name: str) -> None:
    check_constants_and_enums(REV, name)


@pytest.mark.parametrize("name", OTHER_DEFS)
def test_alias_definitions(name: str) -> None:
    check_alias(REV, name)


def test_every_model_has_its_own_docstring() -> None:
    check_own_docstrings()


def test_method_registries_match_the_schema() -> None:
    mapping = method_map(REV)
    registry = {**t.REQUEST_TYPES, **t.NOTIFICATION_TYPES}
    assert {m: cls.__name__ for m, cls in registry.items()} == mapping
    for method, cls in t.REQUEST_TYPES.items():
        expected = cls.__name__.removesuffix("Request") + "Result"
        result = t.RESULT_TYPES[method]
        assert result.__name__ == (expected if expected in DEFS else "Result"), method
    assert set(t.RESULT_TYPES) == set(t.REQUEST_TYPES)
    assert not set(t.REQUEST_TYPES) & set(t.NOTIFICATION_TYPES)


def test_import_reads_no_files_and_stays_light() -> None:
    """Importing mcpkit.types opens no JSON/schema file and does not pull in jsonschema."""
    code = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda ev, args: opened.append(str(args[0])) "
        "if ev == 'open' and str(args[0]).endswith('.json') else None)\n"
        "import mcpkit.types\n"
        "assert not opened, opened\n"
        "assert 'jsonschema' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
