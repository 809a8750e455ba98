"""Content blocks (text, image, audio, resource links, embedded resources) and resource contents."""

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from ._base import Annotations, BaseMetadata, Icons, MCPModel, Meta

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
]


class TextContent(MCPModel):
    """Plain text given to or produced by a model."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ImageContent(MCPModel):
    """An image, base64-encoded, given to or produced by a model."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str = Field(alias="mimeType")
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class AudioContent(MCPModel):
    """Audio, base64-encoded, given to or produced by a model."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str = Field(alias="mimeType")
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ResourceContents(MCPModel):
    """What every piece of resource content has: its URI and, if known, MIME type."""

    uri: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    meta: Meta | None = Field(default=None, alias="_meta")


class TextResourceContents(ResourceContents):
    """Resource content that is text."""

    text: str


class BlobResourceContents(ResourceContents):
    """Resource content that is binary, as base64."""

    blob: str


class _ResourceDescription(BaseMetadata, Icons):
    """Members shared by ``Resource`` and ``ResourceLink``."""

    uri: str
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    size: int | None = None
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ResourceLink(_ResourceDescription):
    """A pointer to a resource the server can read, placed in a prompt or tool result."""

    type: Literal["resource_link"] = "resource_link"


class EmbeddedResource(MCPModel):
    """A resource's contents placed inline in a prompt or tool result."""

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


#: Any content block of prompts and tool results, told apart by ``type``.
ContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
