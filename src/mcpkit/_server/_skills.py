"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640) on the server side.

A skill directory is read once, when it is added: its ``SKILL.md`` (frontmatter checked:
a ``description``, a ``name`` that is the directory's) and every file under it, kept in
memory with its SHA-256 digest and size. So what a host reads is always what the manifest
it listed promised, even while the files on disk are being edited.

``SKILL.md`` is a listed resource (``skill://<skill-path>/SKILL.md``, ``text/markdown``,
named and described from its frontmatter); the other files are read through
``resources/read`` without being listed (hosts learn them from the manifest).
``skills/list`` pages whole entries; ``skills/get`` answers one; ``resources/directory/read``
lists a directory's children (``inode/directory`` for subdirectories).
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from .._exceptions import InvalidParams
from .._session._base import RequestContext, RequestHandlerFn
from ..types._skillformat import (
    SKILL_MANIFEST,
    SKILLS_EXTENSION,
    check_skill_name,
    parse_frontmatter,
    skill_digest,
)
from ._extensions import Extension
from ._handlers import uri_param
from ._registry import decode_cursor, encode_cursor

if TYPE_CHECKING:
    from ._face import ServerLike

logger = logging.getLogger("mcpkit.server")

#: Most files one skill may have, and most bytes in all (the extension's SHOULD NOTs).
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
DIRECTORY = "inode/directory"


@dataclasses.dataclass
class _File:
    uri: str
    data: bytes
    digest: str
    mime_type: str


@dataclasses.dataclass
class _Skill:
    uri: str  # of its SKILL.md
    root: str  # skill://<skill-path>
    frontmatter: dict[str, Any]
    files: list[_File]

    def entry(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [
                {"uri": f.uri, "digest": f.digest, "size": len(f.data)} for f in self.files
            ],
        }


def _mime(name: str) -> str:
    if name.endswith(".md"):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"


def load_skill(directory: Path, skill_path: str) -> _Skill:
    """Read the skill in ``directory``, served as ``skill://<skill_path>/``."""
    manifest = directory / SKILL_MANIFEST
    if not manifest.is_file():
        raise ValueError(f"{directory}: a skill directory needs a {SKILL_MANIFEST}")
    root = f"skill://{skill_path}"
    files: list[_File] = []
    total = 0
    real_root = directory.resolve()
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts):
            continue  # hidden files (.git, .env) are never served
        if not path.is_file():
            continue
        if not path.resolve().is_relative_to(real_root):
            logger.warning("skill %s: %s links outside the skill; not served", skill_path, rel)
            continue
        data = path.read_bytes()
        total += len(data)
        uri = f"{root}/{PurePosixPath(*rel.parts)}"
        files.append(_File(uri, data, skill_digest(data), _mime(path.name)))
    if len(files) > MAX_FILES or total > MAX_BYTES:
        raise ValueError(
            f"skill {skill_path}: {len(files)} files, {total} bytes; a skill should stay "
            f"within {MAX_FILES} files and {MAX_BYTES} bytes"
        )
    files.sort(key=lambda f: (f.uri != f"{root}/{SKILL_MANIFEST}", f.uri))  # SKILL.md first
    text = manifest.read_bytes().decode("utf-8")
    front = parse_frontmatter(text)
    if front is None:
        raise ValueError(f"{manifest}: must open with YAML frontmatter between --- lines")
    name = front.get("name")
    problem = check_skill_name(name)
    if problem is not None:
        raise ValueError(f"{manifest}: {problem}")
    if name != skill_path.rsplit("/", 1)[-1]:
        raise ValueError(f"{manifest}: the name {name!r} must be its directory's name")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"{manifest}: the frontmatter needs a description")
    return _Skill(f"{root}/{SKILL_MANIFEST}", root, front, files)


class SkillsExtension(Extension):
    """Serves skills: ``skills/list``, ``skills/get``, ``resources/directory/read`` and the
    ``skill://`` resources (use ``Server.add_skill`` / ``Server.add_skills_dir``)."""

    id = SKILLS_EXTENSION
    handshake = True
    cacheable = frozenset({"skills/list", "skills/get", "resources/directory/read"})

    def __init__(self) -> None:
        self._server: ServerLike | None = None
        self.skills: dict[str, _Skill] = {}  # by SKILL.md URI, in the order added
        self._files: dict[str, _File] = {}
        self._dirs: dict[str, dict[str, str | None]] = {}  # dir URI -> child URI -> mime

    def attach(self, server: ServerLike) -> None:
        self._server = server
        server.registry.sources.append(self)

    def settings(self) -> dict[str, Any] | None:
        return {"directoryRead": True}

    def methods(self) -> Mapping[str, RequestHandlerFn]:
        return {
            "skills/list": self.h_list,
            "skills/get": self.h_get,
            "resources/directory/read": self.h_directory,
        }

    # ------------------------------------------------------------------ adding

    def add(self, path: str | os.PathLike[str]) -> None:
        directory = Path(path)
        self._add(load_skill(directory, directory.resolve().name))

    def add_dir(self, path: str | os.PathLike[str]) -> None:
        base = Path(path)
        if not base.is_dir():
            raise ValueError(f"{base}: not a directory")
        found = sorted(p.parent for p in base.rglob(SKILL_MANIFEST))
        for directory in found:
            rel = directory.relative_to(base)
            if not rel.parts or any(part.startswith(".") for part in rel.parts):
                continue
            self._add(load_skill(directory, str(PurePosixPath(*rel.parts))))

    def _add(self, skill: _Skill) -> None:
        if skill.uri in self.skills:
            raise ValueError(f"a skill is already served at {skill.uri}")
        server = self._server
        assert server is not None
        manifest = skill.files[0]
        server.add_resource(
            skill.uri,
            manifest.data.decode("utf-8"),
            name=str(skill.frontmatter["name"]),
            description=str(skill.frontmatter["description"]),
            mime_type="text/markdown",
        )
        self.skills[skill.uri] = skill
        for f in skill.files:
            self._files[f.uri] = f
            self._index(skill.root, f.uri, f.mime_type)

    def _index(self, root: str, uri: str, mime: str) -> None:
        """Enter ``uri`` and its parent directories (up to the skill's root) in the tree."""
        parent = uri.rsplit("/", 1)[0]
        self._dirs.setdefault(parent, {})[uri] = mime
        while parent != root:
            grand = parent.rsplit("/", 1)[0]
            self._dirs.setdefault(grand, {})[parent] = DIRECTORY
            parent = grand

    # ------------------------------------------------------------------ resource source

    def resolves(self, uri: str) -> bool:
        return uri in self._files

    def read(self, uri: str) -> list[dict[str, Any]]:
        f = self._files[uri]
        try:
            return [{"uri": uri, "mimeType": f.mime_type, "text": f.data.decode("utf-8")}]
        except UnicodeDecodeError:
            blob = base64.b64encode(f.data).decode("ascii")
            return [{"uri": uri, "mimeType": f.mime_type, "blob": blob}]

    # ------------------------------------------------------------------ methods

    def _page_size(self) -> int | None:
        server = self._server
        return server.page_size if server is not None else None

    def _page(
        self, kind: str, items: list[Any], params: dict[str, Any] | None
    ) -> tuple[list[Any], str | None]:
        cursor = params.get("cursor") if params else None
        keys = self._server.stateless if self._server is not None else None
        start = decode_cursor(kind, cursor, keys) if cursor is not None else 0
        size = self._page_size()
        if size is None:
            return items[start:], None
        end = start + size
        return items[start:end], encode_cursor(kind, end, keys) if end < len(items) else None

    async def h_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        page, nxt = self._page("skills", list(self.skills.values()), params)
        result: dict[str, Any] = {"skills": [s.entry() for s in page]}
        if nxt is not None:
            result["nextCursor"] = nxt
        return result

    async def h_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = uri_param(params)
        skill = self.skills.get(uri)
        if skill is None:
            raise InvalidParams(message=f"Unknown skill: {uri}", data={"uri": uri})
        return {"skill": skill.entry()}

    async def h_directory(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = uri_param(params).rstrip("/")
        children = self._dirs.get(uri)
        if children is None:
            raise InvalidParams(
                message=f"Invalid params: {uri} is not a directory", data={"uri": uri}
            )
        entries = []
        for child, mime in sorted(children.items()):
            entry: dict[str, Any] = {
                "uri": child,
                "name": child.rsplit("/", 1)[-1],
                "mimeType": mime,
            }
            f = self._files.get(child)
            if f is not None:
                entry["size"] = len(f.data)
            entries.append(entry)
        page, nxt = self._page("dir", entries, params)
        result: dict[str, Any] = {"resources": page}
        if nxt is not None:
            result["nextCursor"] = nxt
        return result


__all__ = ["SkillsExtension", "load_skill"]
