"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640) for hosts.

``Client.list_skills()`` gives what a host shows before anything is loaded: each skill's
name, description and file manifest, from ``skills/list`` alone (no file is read ahead of
need). ``Client.load_skill()`` reads the skill's ``SKILL.md`` and checks it against the
manifest: size, then SHA-256 digest, then its frontmatter field by field against the
listed one. Content failing any check is never returned (:class:`~mcpkit.SkillVerificationError`).
The skill's other files are read, and checked the same way, only when asked for.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import TYPE_CHECKING, Any

from .._exceptions import InvalidResponse, SkillVerificationError
from ..types._extensions import SKILLS_EXTENSION, SkillEntry, SkillFile
from ..types._skillformat import parse_frontmatter, skill_digest
from ._extensions import ClientExtension

if TYPE_CHECKING:
    from ._face import ClientLike

#: Most pages of ``skills/list`` read before giving up on a server that never ends it.
MAX_PAGES = 1000


class SkillsClientExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/skills`` (hosts that load skills)."""

    id = SKILLS_EXTENSION


def parse_entry(raw: Any, what: str) -> SkillEntry:
    try:
        return SkillEntry.model_validate(raw)
    except Exception as e:
        raise InvalidResponse(f"{what}: the server sent a malformed skill entry: {e}") from e


@dataclasses.dataclass
class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified: ``text`` is the whole file,
    ``body`` what follows the frontmatter; :meth:`read` fetches (and verifies) its other
    files on demand."""

    entry: SkillEntry
    text: str
    client: ClientLike

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def frontmatter(self) -> dict[str, Any]:
        return self.entry.frontmatter

    @property
    def body(self) -> str:
        text = self.text[1:] if self.text.startswith("\ufeff") else self.text
        if not text.startswith("---"):
            return text
        end = text.find("\n---", 3)
        if end < 0:
            return text
        rest = text[end + 4 :]
        return rest.split("\n", 1)[1] if "\n" in rest else ""

    @property
    def files(self) -> list[str]:
        """The URIs of the skill's files (its manifest), ``SKILL.md`` included."""
        resources = self.entry.resources
        return [] if isinstance(resources, str) else [f.uri for f in resources]

    async def read(self, path_or_uri: str) -> bytes:
        """A file of the skill (a path relative to it, or its URI), verified."""
        uri = path_or_uri
        if "://" not in uri:
            uri = self.entry.uri.rsplit("/", 1)[0] + "/" + path_or_uri.lstrip("/")
        return await read_verified(self.client, self.entry, uri)


async def list_skills(client: ClientLike) -> list[SkillEntry]:
    skills: list[SkillEntry] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        raw = await client.send_request("skills/list", {"cursor": cursor} if cursor else {})
        if not isinstance(raw, dict) or not isinstance(raw.get("skills"), list):
            raise InvalidResponse("skills/list: the answer has no 'skills' list")
        skills += [parse_entry(e, "skills/list") for e in raw["skills"]]
        nxt = raw.get("nextCursor")
        if not isinstance(nxt, str) or not nxt:
            return skills
        if nxt in seen:
            raise InvalidResponse(f"skills/list: the server repeated the cursor {nxt!r}")
        seen.add(nxt)
        cursor = nxt
    raise InvalidResponse(f"skills/list: more than {MAX_PAGES} pages; giving up")


async def get_skill(client: ClientLike, uri: str) -> SkillEntry:
    raw = await client.send_request("skills/get", {"uri": uri})
    if not isinstance(raw, dict):
        raise InvalidResponse("skills/get: the answer is not an object")
    return parse_entry(raw.get("skill"), "skills/get")


def _listed(entry: SkillEntry, uri: str) -> SkillFile | None:
    if isinstance(entry.resources, str):
        return None  # "dynamic": the server publishes no manifest to check against
    for f in entry.resources:
        if f.uri == uri:
            return f
    raise SkillVerificationError(f"{uri} is not in the manifest of skill {entry.uri}")


async def read_verified(client: ClientLike, entry: SkillEntry, uri: str) -> bytes:
    """The bytes of skill file ``uri``, checked against its manifest entry."""
    listed = _listed(entry, uri)
    result = await client.read_resource(uri)
    data: bytes | None = None
    for item in result.contents:
        wire = item.model_dump(by_alias=True)
        if wire.get("uri") not in (None, uri):
            continue
        if isinstance(wire.get("text"), str):
            data = wire["text"].encode("utf-8")
        elif isinstance(wire.get("blob"), str):
            data = base64.b64decode(wire["blob"])
        break
    if data is None:
        raise SkillVerificationError(f"{uri}: the server returned no content for it")
    if listed is not None:
        # The size first: a mismatch fails without hashing what may be a huge answer.
        if len(data) != listed.size:
            raise SkillVerificationError(
                f"{uri}: {len(data)} bytes read, the manifest lists {listed.size}; not used"
            )
        if skill_digest(data) != listed.digest:
            raise SkillVerificationError(
                f"{uri}: the content does not match the manifest's digest; not used"
            )
    return data


async def load_skill(client: ClientLike, skill: SkillEntry | str) -> LoadedSkill:
    entry = skill if isinstance(skill, SkillEntry) else await get_skill(client, skill)
    data = await read_verified(client, entry, entry.uri)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillVerificationError(f"{entry.uri}: SKILL.md is not UTF-8 text") from None
    front = parse_frontmatter(text)
    if front is None:
        raise SkillVerificationError(f"{entry.uri}: SKILL.md has no YAML frontmatter")
    differ = sorted(
        k for k in set(front) | set(entry.frontmatter) if front.get(k) != entry.frontmatter.get(k)
    )
    if differ:
        raise SkillVerificationError(
            f"{entry.uri}: the frontmatter differs from the listed one ({', '.join(differ)}); "
            "the skill is not loaded"
        )
    return LoadedSkill(entry, text, client)
