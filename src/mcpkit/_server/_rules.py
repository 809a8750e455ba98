"""Visibility rules and component labels: the pure part of visibility (see ``_visibility``).

A component's tags and version are listed in its ``_meta`` under :data:`TAGS_META_KEY` and
:data:`VERSION_META_KEY` and read back from there. A :class:`Rule` enables or disables what
it matches; :func:`shown` decides a component by the last rule matching it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

#: ``_meta`` key of a component's tags (a list of strings, sorted).
TAGS_META_KEY = "io.github.mcpkit/tags"
#: ``_meta`` key of a component's version (a string).
VERSION_META_KEY = "io.github.mcpkit/version"
#: The kinds of component a rule may name (templates are resources).
KINDS = frozenset({"tool", "resource", "prompt"})
#: Most rules one session may hold (each kept in its snapshot, in Redis too).
MAX_SESSION_RULES = 256
#: The name of the change function carrying server-wide rules to every worker.
CHANGE_NAME = "mcpkit.visibility"

#: List kind -> (component kind, registry table).
LISTS = {
    "tools": ("tool", "tools"),
    "resources": ("resource", "resources"),
    "templates": ("resource", "templates"),
    "prompts": ("prompt", "prompts"),
}
#: Component kind -> the list-changed kind announcing it.
CHANGED = {"tool": "tools", "resource": "resources", "prompt": "prompts"}


def _names(value: Collection[str] | None, what: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        raise TypeError(f"{what} must be a collection of strings, not one string")
    found = frozenset(value)
    if not all(isinstance(v, str) for v in found):
        raise TypeError(f"{what} must be strings")
    return found


def labelled(
    meta: Mapping[str, Any] | None, tags: Collection[str] | None, version: str | None
) -> Mapping[str, Any] | None:
    """``meta`` with ``tags`` and ``version`` listed (unchanged when both are None)."""
    found = _names(tags, "tags")
    if not found and version is None:
        return meta
    if version is not None and not isinstance(version, str):
        raise TypeError("version must be a string")
    out = dict(meta or {})
    if found:
        out[TAGS_META_KEY] = sorted(found)
    if version is not None:
        out[VERSION_META_KEY] = version
    return out


def tags_of(definition: Mapping[str, Any]) -> frozenset[str]:
    """The tags a component's definition lists (in its ``_meta``)."""
    meta = definition.get("_meta")
    tags = meta.get(TAGS_META_KEY) if isinstance(meta, dict) else None
    return (
        frozenset(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else frozenset()
    )


def version_of(definition: Mapping[str, Any]) -> str | None:
    """The version a component's definition lists (in its ``_meta``), if any."""
    meta = definition.get("_meta")
    version = meta.get(VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


@dataclasses.dataclass(frozen=True)
class Rule:
    """Enable (``enabled``) or disable the components matching every criterion given: a
    name among ``names`` (a tool's or prompt's name; a resource's URI, template or name),
    a tag among ``tags``, a kind among ``kinds``, a version among ``versions``. No criterion:
    every component. ``only`` (enabling): what does not match is disabled."""

    enabled: bool
    names: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    only: bool = False

    @classmethod
    def of(
        cls,
        enabled: bool,
        *,
        names: Collection[str] | None = None,
        tags: Collection[str] | None = None,
        kinds: Collection[str] | None = None,
        versions: Collection[str] | None = None,
        only: bool = False,
    ) -> Rule:
        """A rule from the keywords of ``enable``/``disable`` (checked)."""
        kind_set = _names(kinds, "kinds")
        if not kind_set <= KINDS:
            raise ValueError(f"unknown kinds {sorted(kind_set - KINDS)}: one of {sorted(KINDS)}")
        if only and not enabled:
            raise ValueError("only=True is for enabling: what it names is all that is shown")
        return cls(
            enabled,
            _names(names, "names"),
            _names(tags, "tags"),
            kind_set,
            _names(versions, "versions"),
            only,
        )

    def matches(self, kind: str, key: str, definition: Mapping[str, Any]) -> bool:
        """Whether the component ``key`` of ``kind`` (its ``definition``) is one this names."""
        if self.kinds and kind not in self.kinds:
            return False
        if self.names and key not in self.names and definition.get("name") not in self.names:
            return False
        if self.tags and not self.tags & tags_of(definition):
            return False
        return not self.versions or version_of(definition) in self.versions

    def decides_all(self) -> bool:
        """Whether this decides every component (the rules before it no longer count)."""
        return self.only or not (self.names or self.tags or self.kinds or self.versions)

    def target(self) -> tuple[Any, ...]:
        """What this rule is about, whether it enables or disables."""
        return (self.names, self.tags, self.kinds, self.versions, self.only)

    def to_json(self) -> dict[str, Any]:
        """This rule as JSON data (kept in session snapshots, sent to other workers)."""
        out: dict[str, Any] = {"on": self.enabled}
        for field in ("names", "tags", "kinds", "versions"):
            value = getattr(self, field)
            if value:
                out[field] = sorted(value)
        if self.only:
            out["only"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rule:
        """The rule :meth:`to_json` wrote."""
        return cls.of(
            bool(data.get("on")),
            names=data.get("names"),
            tags=data.get("tags"),
            kinds=data.get("kinds"),
            versions=data.get("versions"),
            only=bool(data.get("only")),
        )


def added(rules: Sequence[Rule], rule: Rule) -> tuple[Rule, ...]:
    """``rules`` then ``rule``, without the rules it makes moot."""
    if rule.decides_all():
        return (rule,)
    target = rule.target()
    return (*(r for r in rules if r.target() != target), rule)


def shown(rules: Sequence[Rule], kind: str, key: str, definition: Mapping[str, Any]) -> bool:
    """Whether ``rules`` show the component (the last rule deciding it counts)."""
    for rule in reversed(rules):
        if rule.matches(kind, key, definition):
            return rule.enabled
        if rule.only:
            return False
    return True


def rules_json(rules: Iterable[Rule]) -> list[dict[str, Any]]:
    """``rules`` as JSON data."""
    return [r.to_json() for r in rules]


def rules_from_json(data: Any) -> tuple[Rule, ...]:
    """The rules :func:`rules_json` wrote (nothing for anything else)."""
    if not isinstance(data, list):
        return ()
    return tuple(Rule.from_json(d) for d in data if isinstance(d, dict))
