"""The round trips the example tests of every revision share: through a model (its wire
form, ``to_wire()`` and JSON text agreeing), through a type alias, or through several."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from tests.types._spec import same_json

import mcpkit.types as t

Roundtrip = Callable[[Any], Any]


@dataclass
class Example:
    source: str
    value: Any
    definition: str  # what it was classified as
    roundtrip: Roundtrip


def model_roundtrip(model: type[t.MCPModel]) -> Roundtrip:
    def run(value: Any) -> Any:
        obj = model.model_validate(value)
        wire = obj.model_dump(by_alias=True, exclude_unset=True)
        # to_wire() and the JSON text give the same wire form.
        assert same_json(obj.to_wire(), wire)
        assert same_json(json.loads(obj.to_json()), wire)
        return wire

    return run


def alias_roundtrip(alias: Any) -> Roundtrip:
    adapter: TypeAdapter[Any] = TypeAdapter(alias)

    def run(value: Any) -> Any:
        return adapter.dump_python(
            adapter.validate_python(value), by_alias=True, exclude_unset=True
        )

    return run


def by_name(name: str) -> Roundtrip:
    obj = getattr(t, name)
    if isinstance(obj, type) and issubclass(obj, t.MCPModel):
        return model_roundtrip(obj)
    return alias_roundtrip(obj)


def both(*runs: Roundtrip) -> Roundtrip:
    """Round-trip through several types; each must give the value back."""

    def run(value: Any) -> Any:
        outs = [r(value) for r in runs]
        for out in outs[1:]:
            assert same_json(out, outs[0])
        return outs[0]

    return run
