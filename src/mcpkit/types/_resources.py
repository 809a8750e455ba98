"""Resources: listing, templates, reading, subscriptions."""

from typing import Literal

from pydantic import Field

from ._base import (
    Annotations,
    BaseMetadata,
    Icons,
    Meta,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
    Result,
    _CacheHints,
    _NotificationBase,
    _RequestBase,
)
from ._content import BlobResourceContents, TextResourceContents, _ResourceDescription
from ._mrtr import _InputResponseFields

__all__ = [
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ReadResourceRequest",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceListChangedNotification",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
]


class Resource(_ResourceDescription):
    """A resource the server can read: URI, name, and optional description, type, size."""


class ResourceTemplate(BaseMetadata, Icons):
    """A family of resources described by an RFC 6570 URI template."""

    uri_template: str = Field(alias="uriTemplate")
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    annotations: Annotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ResourceRequestParams(RequestParams):
    """Params of the requests that name one resource by URI."""

    uri: str


class ListResourcesRequest(_RequestBase):
    """Asks the server for (a page of) its resources."""

    method: Literal["resources/list"] = "resources/list"
    params: PaginatedRequestParams | None = None


class ListResourcesResult(_CacheHints, PaginatedResult):
    """Answer to ``resources/list`` (2026-07-28 adds the caching hints ``ttlMs`` and ``cacheScope``)."""

    resources: list[Resource]


class ListResourceTemplatesRequest(_RequestBase):
    """Asks the server for (a page of) its resource templates."""

    method: Literal["resources/templates/list"] = "resources/templates/list"
    params: PaginatedRequestParams | None = None


class ListResourceTemplatesResult(_CacheHints, PaginatedResult):
    """Answer to ``resources/templates/list`` (2026-07-28 adds the caching hints ``ttlMs`` and ``cacheScope``)."""

    resource_templates: list[ResourceTemplate] = Field(alias="resourceTemplates")


class ReadResourceRequestParams(_InputResponseFields, ResourceRequestParams):
    """Params of ``resources/read`` (plus ``inputResponses``/``requestState`` on a 2026-07-28 retry)."""


class ReadResourceRequest(_RequestBase):
    """Asks the server for the contents of a resource."""

    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceResult(_CacheHints, Result):
    """Answer to ``resources/read``: one or more pieces of content (cacheable from 2026-07-28)."""

    contents: list[TextResourceContents | BlobResourceContents]


class SubscribeRequestParams(ResourceRequestParams):
    """Params of ``resources/subscribe``."""


class SubscribeRequest(_RequestBase):
    """Asks to be told (``notifications/resources/updated``) when a resource changes."""

    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams


class UnsubscribeRequestParams(ResourceRequestParams):
    """Params of ``resources/unsubscribe``."""


class UnsubscribeRequest(_RequestBase):
    """Ends a subscription made with ``resources/subscribe``."""

    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class ResourceListChangedNotification(_NotificationBase):
    """Tells the client the server's list of resources changed."""

    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None


class ResourceUpdatedNotificationParams(NotificationParams):
    """Params of ``notifications/resources/updated``: which resource changed."""

    uri: str


class ResourceUpdatedNotification(_NotificationBase):
    """Tells a subscribed client that a resource changed and may be read again."""

    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams
