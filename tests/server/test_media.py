"""``Image``, ``Audio`` and ``File``: media returned by tools, from a path or from bytes."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest

from mcpkit import Audio, Client, File, Image, Server
from mcpkit.types import AudioContent, EmbeddedResource, ImageContent

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))


def _server(tmp: Path) -> Server:
    (tmp / "chart.png").write_bytes(PNG)
    (tmp / "table.csv").write_text("a,b\n1,2\n")
    server = Server("media")

    @server.tool()
    def chart() -> Image:
        """A chart from a file."""
        return Image(tmp / "chart.png")

    @server.tool()
    def beep() -> Audio:
        """A sound from bytes."""
        return Audio(data=b"RIFF....WAVE", format="wav")

    @server.tool()
    def table() -> File:
        """A text file, embedded as text."""
        return File(tmp / "table.csv")

    @server.tool()
    def blob() -> list[Image | File]:
        """Bytes with a name, embedded as base64, beside an image."""
        return [Image(data=PNG, format="png"), File(data=b"\x00\x01", name="raw data.bin")]

    return server


async def test_media_reach_the_client_as_content_blocks(tmp_path: Path) -> None:
    server = _server(tmp_path)
    with anyio.fail_after(20):
        async with Client(server) as client:
            tools = {t.name: t for t in await client.list_tools()}
            chart = (await client.call_tool("chart", {})).content
            beep = (await client.call_tool("beep", {})).content
            table = (await client.call_tool("table", {})).content
            blob = (await client.call_tool("blob", {})).content
    # A media return type declares content, not structured output.
    assert all(t.output_schema is None for t in tools.values())
    (image,) = chart
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    (sound,) = beep
    assert isinstance(sound, AudioContent) and sound.mime_type == "audio/wav"
    (embedded,) = table
    assert isinstance(embedded, EmbeddedResource)
    wire = embedded.resource.to_wire()
    assert wire["text"] == "a,b\n1,2\n" and wire["mimeType"] == "text/csv"
    assert wire["uri"] == (tmp_path / "table.csv").resolve().as_uri()
    image2, raw = blob
    assert isinstance(image2, ImageContent)
    assert isinstance(raw, EmbeddedResource)
    raw_wire = raw.resource.to_wire()
    assert raw_wire["uri"] == "file:///raw%20data.bin"
    assert raw_wire["mimeType"] == "application/octet-stream"
    assert base64.b64decode(raw_wire["blob"]) == b"\x00\x01"


def test_bad_arguments_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="one of them"):
        Image(tmp_path / "x.png", data=PNG)
    with pytest.raises(TypeError, match="one of them"):
        Audio()
    with pytest.raises(ValueError, match="format="):
        Image(data=PNG)  # no name, no format: no MIME type
    with pytest.raises(TypeError, match="bytes"):
        Image(data="not bytes", format="png")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        File(tmp_path / "missing.txt")
    # A text type that is not UTF-8 travels as a blob, not as broken text.
    latin = File(data="café".encode("latin-1"), name="notes.txt").resource.to_wire()
    assert "blob" in latin and "text" not in latin
