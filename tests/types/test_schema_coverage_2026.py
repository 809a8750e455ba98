"""Every definition of the 2026-07-28 schema has a model (or alias) in ``mcpkit.types``.

The same checks as for 2025-11-25 (``_coverage``), on the stateless revision: the
definitions it added, and the shared ones whose shape it changed (accepted beside the
2025-11-25 shape by the same models).
"""

from __future__ import annotations

from typing import get_args

import pytest
from tests.types._coverage import (
    check_alias,
    check_constants_and_enums,
    check_exported,
    check_object_fields,
    leaves,
    object_definitions,
    other_definitions,
)
from tests.types._spec import LATEST, SCHEMA_DIR, STATELESS, definitions, method_map

import mcpkit.types as t

REV = STATELESS
DEFS = definitions(REV)
OBJECT_DEFS = object_definitions(REV)
OTHER_DEFS = other_definitions(REV)
#: Definitions 2026-07-28 added.
ADDED = sorted(set(DEFS) - set(definitions(LATEST)))


def test_schema_file_is_the_expected_one() -> None:
    assert (SCHEMA_DIR / f"{REV}.json").is_file()
    assert len(DEFS) > 100
    # The definitions this revision added, as its changelog describes them.
    assert len(ADDED) == 42, ADDED
    for name in ("DiscoverResult", "InputRequiredResult", "SubscriptionsListenRequest"):
        assert name in ADDED


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


def test_the_collapsed_sender_unions_are_unions() -> None:
    """2026-07-28 emits ClientNotification as a copy of CancelledNotification and
    ClientResult as Result: they stay unions (holding the 2025-11-25 members too)."""
    assert "ClientNotification" in OTHER_DEFS and "ClientResult" in OTHER_DEFS
    assert t.CancelledNotification in leaves(t.ClientNotification)
    assert t.Result in leaves(t.ClientResult)


@pytest.mark.parametrize("method", sorted(method_map(REV)))
def test_every_method_has_its_message_and_result(method: str) -> None:
    """Each request and notification model pins its method; a request's result (and its
    typed response, where the schema has one) exists too."""
    name = method_map(REV)[method]
    cls = getattr(t, name)
    assert cls.model_fields["method"].default == method
    if name.endswith("Request"):
        result = name.removesuffix("Request") + "Result"
        if result in DEFS:
            assert issubclass(getattr(t, result), t.Result)
        response = result + "Response"
        if response in DEFS:
            field = getattr(t, response).model_fields["result"]
            assert getattr(t, result) in leaves(field.annotation), response


@pytest.mark.parametrize(
    "union",
    ["ClientRequest", "ServerNotification", "ServerResult"],
)
def test_sender_unions_hold_both_revisions(union: str) -> None:
    members = {leaf.__name__ for leaf in leaves(getattr(t, union))}
    for rev in (LATEST, REV):
        listed = {b["$ref"].rsplit("/", 1)[-1] for b in definitions(rev)[union]["anyOf"]}
        assert listed <= members, (rev, sorted(listed - members))


def test_meta_key_constants_match_the_schema() -> None:
    keys = {
        t.PROTOCOL_VERSION_META_KEY,
        t.CLIENT_CAPABILITIES_META_KEY,
        t.CLIENT_INFO_META_KEY,
        t.LOG_LEVEL_META_KEY,
        t.SERVER_INFO_META_KEY,
        t.SUBSCRIPTION_ID_META_KEY,
    }
    declared = {
        key
        for name in ("RequestMetaObject", "ResultMetaObject", "NotificationMetaObject")
        for key in DEFS[name]["properties"]
        if key.startswith("io.modelcontextprotocol/")
    }
    assert keys == declared


def test_error_code_constants_match_the_schema() -> None:
    codes = {
        "HeaderMismatchError": t.HEADER_MISMATCH,
        "MissingRequiredClientCapabilityError": t.MISSING_REQUIRED_CLIENT_CAPABILITY,
        "UnsupportedProtocolVersionError": t.UNSUPPORTED_PROTOCOL_VERSION,
    }
    for name, code in codes.items():
        parts = DEFS[name]["properties"]["error"]["allOf"]
        assert parts[1]["properties"]["code"]["const"] == code, name
        detail = getattr(t, name).model_fields["error"].annotation
        assert get_args(detail.model_fields["code"].annotation) == (code,), name
