"""The skill format's rules, without pydantic: frontmatter, digests, names (SEP-2640).

Kept apart from the models so a server serving skills imports neither pydantic nor (until
a skill is read) PyYAML.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

#: The tasks extension's identifier (``capabilities.extensions``).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The skills extension's identifier (``capabilities.extensions``).
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The file every skill has at its root.
SKILL_MANIFEST = "SKILL.md"

#: Agent Skills naming rules: 1-64 lowercase letters, digits and hyphens, no hyphen at
#: either end nor two in a row.
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)")


_LOADER: Any = None


def _loader() -> Any:
    """A YAML loader reading as JSON sees: timestamps stay the strings they are written as
    (the frontmatter is rendered as a JSON object, compared field by field by hosts)."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class Loader(yaml.SafeLoader):
            pass

        Loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        _LOADER = Loader
    return _LOADER


def parse_frontmatter(text: str) -> dict[str, Any] | None:
    """The YAML frontmatter of a ``SKILL.md`` as a JSON object, or None when the text does
    not open with a ``---`` block holding a mapping.

    Example::

        parse_frontmatter("---\\nname: pdf\\ndescription: PDFs\\n---\\nBody")
        # {'name': 'pdf', 'description': 'PDFs'}
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    m = _FRONTMATTER.match(text)
    if m is None:
        return None
    import yaml

    try:
        # A SafeLoader subclass: no arbitrary objects.
        data = yaml.load(m.group(1), Loader=_loader())
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def skill_digest(data: bytes) -> str:
    """The digest a skill's manifest lists for a file: ``sha256:`` and 64 lowercase hex."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_skill_name(name: Any) -> str | None:
    """Why ``name`` breaks the Agent Skills naming rules, or None."""
    if not isinstance(name, str) or not _NAME.match(name):
        return (
            f"skill name {name!r} must be 1-64 lowercase letters, digits and hyphens, with no "
            "hyphen first, last or twice in a row"
        )
    return None
