"""The official extensions' wire: tasks (``io.modelcontextprotocol/tasks``, SEP-2663) and
skills (``io.modelcontextprotocol/skills``, SEP-2640), with the skill format's rules.

A skill is a directory whose ``SKILL.md`` opens with YAML frontmatter (``name``,
``description``); its files are resources (``skill://<skill-path>/<file>``), each listed
with the SHA-256 digest and size of its raw bytes so a host verifies what it reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import MCPModel, Result
from ._skillformat import (
    SKILL_MANIFEST,
    SKILLS_EXTENSION,
    TASKS_EXTENSION,
    check_skill_name,
    parse_frontmatter,
    skill_digest,
)

__all__ = [
    "SKILLS_EXTENSION",
    "SKILL_MANIFEST",
    "TASKS_EXTENSION",
    "DetailedTask",
    "SkillEntry",
    "SkillFile",
    "check_skill_name",
    "parse_frontmatter",
    "skill_digest",
]


class SkillFile(MCPModel):
    """One file of a skill, as its manifest lists it: URI, SHA-256 digest and size."""

    uri: str
    digest: str
    size: int


class SkillEntry(MCPModel):
    """A skill as ``skills/list`` and ``skills/get`` describe it.

    ``resources`` lists every file (``SKILL.md`` included) or is ``"dynamic"`` when the
    server publishes no manifest.
    """

    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillFile] | Literal["dynamic"]

    @property
    def name(self) -> str:
        """The skill's name (from its frontmatter)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        """The skill's description (from its frontmatter)."""
        return str(self.frontmatter.get("description", ""))


class DetailedTask(Result):
    """A task of the tasks extension as ``tasks/get`` answers: its state and, once known,
    its ``result`` (completed), ``error`` (failed) or ``input_requests`` (waiting)."""

    task_id: str = Field(alias="taskId")
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    created_at: str | None = Field(default=None, alias="createdAt")
    last_updated_at: str | None = Field(default=None, alias="lastUpdatedAt")
    ttl_ms: int | None = Field(default=None, alias="ttlMs")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")
    status_message: str | None = Field(default=None, alias="statusMessage")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")
