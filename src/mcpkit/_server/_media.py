"""``Image``, ``Audio`` and ``File``: what a tool (or prompt) returns to give media, built from a
path or from bytes.

Each *is* the content block it stands for (``Image`` is an ``ImageContent``, ``Audio`` an
``AudioContent``, ``File`` an ``EmbeddedResource``), so it goes wherever a content block goes:
returned alone, in a list, inside a ``CallToolResult``, and as a return annotation it declares
content (no structured output). The MIME type comes from ``format`` or the file name.

Reading a path happens where the object is built: in a sync tool that is the worker thread;
an ``async`` tool reading a large file should build it through ``anyio.to_thread``.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextResourceContents,
)

_Source = str | os.PathLike[str] | None


def _read(kind: str, path: _Source, data: bytes | None) -> tuple[bytes, Path | None]:
    if (path is None) == (data is None):
        raise TypeError(f"{kind}: give a path or data=bytes (one of them)")
    if data is not None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{kind}: data must be bytes, not {type(data).__name__}")
        return bytes(data), None
    assert path is not None
    p = Path(path)
    return p.read_bytes(), p


def _mime(kind: str, major: str, fmt: str | None, path: Path | None) -> str:
    if fmt:
        return fmt if "/" in fmt else f"{major}/{fmt.lower().lstrip('.')}"
    if path is not None:
        guessed, _ = mimetypes.guess_type(path.name)
        if guessed:
            return guessed
    if major == "application":
        return "application/octet-stream"
    raise ValueError(f"{kind}: cannot tell the MIME type; pass format= (e.g. 'png')")


class Image(ImageContent):
    """An image for a tool result: ``Image("chart.png")`` or ``Image(data=png, format="png")``.

    Example::

        @server.tool()
        def chart() -> Image:
            '''The latest chart.'''
            return Image(data=render_png(), format="png")
    """

    def __init__(
        self, path: _Source = None, *, data: bytes | None = None, format: str | None = None
    ) -> None:
        raw, p = _read("Image", path, data)
        super().__init__(
            data=base64.b64encode(raw).decode("ascii"),
            mime_type=_mime("Image", "image", format, p),
        )


class Audio(AudioContent):
    """Audio for a tool result: ``Audio("note.wav")`` or ``Audio(data=ogg, format="ogg")``.

    Example::

        @server.tool()
        def beep() -> Audio:
            '''A short beep.'''
            return Audio("sounds/beep.wav")
    """

    def __init__(
        self, path: _Source = None, *, data: bytes | None = None, format: str | None = None
    ) -> None:
        raw, p = _read("Audio", path, data)
        super().__init__(
            data=base64.b64encode(raw).decode("ascii"),
            mime_type=_mime("Audio", "audio", format, p),
        )


class File(EmbeddedResource):
    """A file embedded in a tool result: text files as text, anything else base64.

    ``File("report.csv")`` embeds the file under its ``file://`` URI;
    ``File(data=b"...", name="out.bin")`` embeds bytes under ``file:///out.bin``. ``format``
    (an extension or a MIME type) overrides the type guessed from the name.

    Example::

        @server.tool()
        def export() -> File:
            '''The table as CSV.'''
            return File(data=table_csv().encode(), name="table.csv")
    """

    def __init__(
        self,
        path: _Source = None,
        *,
        data: bytes | None = None,
        name: str | None = None,
        format: str | None = None,
    ) -> None:
        raw, p = _read("File", path, data)
        named = Path(name) if name else p
        mime = _mime("File", "application", format, named)
        uri = (
            p.resolve().as_uri()
            if p is not None and not name
            else "file:///" + quote(name or "file")
        )
        contents: Any
        text = _as_text(raw, mime)
        if text is not None:
            contents = TextResourceContents(uri=uri, mimeType=mime, text=text)
        else:
            contents = BlobResourceContents(
                uri=uri, mimeType=mime, blob=base64.b64encode(raw).decode("ascii")
            )
        super().__init__(resource=contents)


def _as_text(raw: bytes, mime: str) -> str | None:
    """The bytes as text when the MIME type is textual and they are UTF-8; else None."""
    textual = mime.startswith("text/") or mime in (
        "application/json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/javascript",
    )
    if not textual:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
