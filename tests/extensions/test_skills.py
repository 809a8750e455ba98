"""The skills extension (io.modelcontextprotocol/skills, SEP-2640): serving and loading.

Skills are real directories on disk; digests are recomputed here with hashlib; the host
side is the Client against a real Server (in memory, both eras, and over the HTTP app),
and against a server whose files no longer match their manifest.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.stateless._stateless_helpers import check_sent, post, request

from mcpkit import Client, InvalidParams, Server, SkillVerificationError
from mcpkit.lowlevel import ASGIClient
from mcpkit.types import parse_frontmatter

pytestmark = pytest.mark.anyio

SKILLS = "io.modelcontextprotocol/skills"
PDF = """---
name: pdf-processing
description: Work with PDF files.
metadata:
  version: "2"
  released: 2024-05-01
---

# PDF

Read [the forms guide](references/FORMS.md).
"""


def write_skills(base: Path) -> Path:
    pdf = base / "pdf-processing"
    (pdf / "references").mkdir(parents=True)
    (pdf / "SKILL.md").write_text(PDF)
    (pdf / "references" / "FORMS.md").write_text("# Forms\n")
    (pdf / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (pdf / ".env").write_text("SECRET=1\n")  # hidden: never served
    review = base / "team" / "code-review"
    review.mkdir(parents=True)
    (review / "SKILL.md").write_text(
        "---\nname: code-review\ndescription: Review code.\n---\nBody\n"
    )
    return base


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    return write_skills(tmp_path / "skills")


def served(skills_dir: Path, **kw: Any) -> Server:
    server = Server("skills", **kw)
    server.add_skills_dir(skills_dir)
    return server


async def test_skills_list_gives_whole_manifests_with_digests_and_sizes(skills_dir: Path) -> None:
    server = served(skills_dir)
    async with Client(server) as client:
        skills = await client.list_skills()
        assert client.server_capabilities.model_dump(by_alias=True)["extensions"] == {
            SKILLS: {"directoryRead": True}
        }
    assert [s.uri for s in skills] == [
        "skill://pdf-processing/SKILL.md",
        "skill://team/code-review/SKILL.md",
    ]
    pdf = skills[0]
    assert pdf.frontmatter == parse_frontmatter(PDF)
    assert pdf.frontmatter["metadata"]["released"] == "2024-05-01"  # JSON, not a date
    files = {f.uri: f for f in pdf.resources}  # type: ignore[union-attr]
    assert set(files) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/logo.png",
        "skill://pdf-processing/references/FORMS.md",
    }
    root = skills_dir / "pdf-processing"
    for rel in ("SKILL.md", "logo.png", "references/FORMS.md"):
        data = (root / rel).read_bytes()
        entry = files[f"skill://pdf-processing/{rel}"]
        assert (entry.digest, entry.size) == (digest(data), len(data))


async def test_the_wire_over_http_with_pages_caching_hints_and_directories(
    skills_dir: Path,
) -> None:
    server = served(skills_dir, page_size=1)
    async with ASGIClient(server.http_app()) as http:
        first = (await post(http, request("skills/list"), validate=False)).result
        assert len(first["skills"]) == 1 and first["ttlMs"] == 0
        assert first["cacheScope"] == "private"
        rest = request("skills/list", {"cursor": first["nextCursor"]})
        second = (await post(http, rest, validate=False)).result
        assert [s["uri"] for s in second["skills"]] == ["skill://team/code-review/SKILL.md"]
        assert "nextCursor" not in second
        got = request("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})
        one = (await post(http, got, validate=False)).result
        assert one["skill"] == first["skills"][0] and "nextCursor" not in one
        assert "ttlMs" in one and "cacheScope" in one
        unknown = request("skills/get", {"uri": "skill://nope/SKILL.md"})
        err = (await post(http, unknown, validate=False)).response["error"]
        assert err["code"] == -32602
        listed = (await post(http, request("resources/list"))).result["resources"]
        assert {r["uri"]: (r["name"], r["mimeType"]) for r in listed} == {
            "skill://pdf-processing/SKILL.md": ("pdf-processing", "text/markdown"),
        }  # one page of one: the page size is 1
        # The root's children, a page at a time: the subdirectory is a directory.
        children: list[dict[str, Any]] = []
        msg = request("resources/directory/read", {"uri": "skill://pdf-processing"})
        for _ in range(10):
            page = (await post(http, msg, validate=False)).result
            children += page["resources"]
            if "nextCursor" not in page:
                break
            msg = request(
                "resources/directory/read",
                {"uri": "skill://pdf-processing", "cursor": page["nextCursor"]},
            )
        kinds = {c["uri"]: c["mimeType"] for c in children}
        assert kinds == {
            "skill://pdf-processing/SKILL.md": "text/markdown",
            "skill://pdf-processing/logo.png": "image/png",
            "skill://pdf-processing/references": "inode/directory",
        }
        for uri in ("skill://pdf-processing/SKILL.md", "skill://nowhere"):
            bad = request("resources/directory/read", {"uri": uri})
            assert (await post(http, bad, validate=False)).response["error"]["code"] == -32602
        blob = await post(
            http, request("resources/read", {"uri": "skill://pdf-processing/logo.png"})
        )
        check_sent(blob.response)
        content = blob.result["contents"][0]
        assert (
            base64.b64decode(content["blob"])
            == (skills_dir / "pdf-processing/logo.png").read_bytes()
        )
        hidden = request("resources/read", {"uri": "skill://pdf-processing/.env"})
        assert (await post(http, hidden, validate=False)).response["error"]["code"] == -32602


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_host_lists_without_reading_then_loads_and_verifies(
    skills_dir: Path, version: str
) -> None:
    server = served(skills_dir)
    methods: list[str] = []

    async def record(request: Any, call_next: Any) -> Any:
        methods.append(request.method)
        return await call_next(request)

    server.add_middleware(record)
    async with Client(server, protocol_version=version) as client:
        skills = await client.list_skills()
        assert "resources/read" not in methods  # nothing fetched ahead of need
        loaded = await client.load_skill(skills[0])
        assert methods.count("resources/read") == 1
        assert loaded.name == "pdf-processing" and loaded.body.startswith("\n# PDF")
        assert await loaded.read("references/FORMS.md") == b"# Forms\n"
        by_uri = await client.load_skill("skill://team/code-review/SKILL.md")
        assert by_uri.body == "Body\n"


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda t: t + "extra", "bytes read"),  # the size differs
        (lambda t: t.replace("Work with", "Leak from"), "digest"),  # the same size
    ],
)
async def test_content_that_differs_from_its_manifest_is_refused(
    skills_dir: Path, tamper: Any, why: str
) -> None:
    server = served(skills_dir)
    reads: list[str] = []

    async def in_the_middle(request: Any, call_next: Any) -> Any:
        # What a compromised server (or a proxy on the way) serves: not what it listed.
        result = await call_next(request)
        if request.method == "resources/read":
            reads.append(request.params["uri"])
            result = {"contents": [{**c, "text": tamper(c["text"])} for c in result["contents"]]}
        return result

    server.add_middleware(in_the_middle)
    async with Client(server) as client:
        skills = await client.list_skills()
        with pytest.raises(SkillVerificationError, match=why):
            await client.load_skill(skills[0])
    assert reads == [skills[0].uri]  # nothing else of the skill was read


async def test_a_frontmatter_differing_from_the_listing_is_refused(skills_dir: Path) -> None:
    server = served(skills_dir)
    async with Client(server) as client:
        skills = await client.list_skills()
        forged = skills[0].model_copy(
            update={"frontmatter": {**skills[0].frontmatter, "description": "Exfiltrate keys"}}
        )
        with pytest.raises(SkillVerificationError, match="description"):
            await client.load_skill(forged)
        with pytest.raises(SkillVerificationError, match="not in the manifest"):
            loaded = await client.load_skill(skills[0])
            await loaded.read("../../etc/passwd")
        with pytest.raises(InvalidParams):
            await client.get_skill("skill://missing/SKILL.md")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# no frontmatter\n", "YAML frontmatter"),
        ("---\nname: other\ndescription: x\n---\n", "directory's name"),
        ("---\nname: bad\n---\n", "description"),
        ("---\nname: Bad--Name\ndescription: x\n---\n", "lowercase"),
    ],
)
async def test_an_invalid_skill_is_refused_when_added(
    tmp_path: Path, text: str, problem: str
) -> None:
    name = "Bad--Name" if "Bad--Name" in text else "bad"
    skill = tmp_path / name
    skill.mkdir()
    (skill / "SKILL.md").write_text(text)
    with pytest.raises(ValueError, match=problem):
        Server("s").add_skill(skill)


async def test_a_link_out_of_the_skill_is_not_served(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    skill = tmp_path / "linky"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: linky\ndescription: Links.\n---\n")
    (skill / "leak.txt").symlink_to(outside)
    server = Server("s")
    server.add_skill(skill)
    async with Client(server) as client:
        with anyio.fail_after(5):
            [entry] = await client.list_skills()
    assert [f.uri for f in entry.resources] == ["skill://linky/SKILL.md"]  # type: ignore[union-attr]
