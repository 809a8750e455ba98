"""Small pieces the client's parts share: result parsing, roots, defaults."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from .._exceptions import InvalidResponse, ProtocolError
from .._http._client_common import not_delivered, server_lost
from .._transports._base import answer_lost as marked_lost
from ..types import Root

M = TypeVar("M", bound=BaseModel)

ListKind = Literal["tools", "resources", "prompts"]
RootLike = Root | Mapping[str, Any] | str | os.PathLike[str]
RootsSource = Sequence[RootLike] | Callable[[], Any]
ProgressFn = Callable[[float, "float | None", "str | None"], Any]


_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class Default:
    def __repr__(self) -> str:
        return "<client default>"


DEFAULT: Any = Default()


def package_version() -> str:
    from .._version import __version__

    return __version__


def parse_result(model: type[M], data: Any, what: str) -> M:
    """Validate a peer's result; a malformed one is an :class:`InvalidResponse`."""
    try:
        return model.model_validate(data)
    except PydanticValidationError as e:
        raise InvalidResponse(
            f"malformed {what} result from the server: {short_errors(e)}"
        ) from None


def short_errors(e: PydanticValidationError) -> str:
    errs = e.errors()[:3]
    parts = [f"{'.'.join(str(x) for x in err['loc']) or '$'}: {err['msg']}" for err in errs]
    more = f" (+{e.error_count() - 3} more)" if e.error_count() > 3 else ""
    return "; ".join(parts) + more


def wire(value: Any) -> Any:
    if isinstance(value, BaseModel):
        to_wire = getattr(value, "to_wire", None)
        if callable(to_wire):
            return to_wire()
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return value


def to_root(value: RootLike) -> Root:
    """A :class:`Root` from a ``Root``, a dict, a ``file://`` URI or a local path."""
    if isinstance(value, Root):
        root = value
    elif isinstance(value, Mapping):
        root = Root.model_validate(dict(value))
    elif isinstance(value, str) and _URI_SCHEME.match(value):
        root = Root(uri=value)
    elif isinstance(value, (str, os.PathLike)):
        path = Path(os.fspath(value)).expanduser().resolve()
        root = Root(uri=path.as_uri(), name=path.name or str(path))
    else:
        raise TypeError(f"a root must be a Root, a dict, a file:// URI or a path; got {value!r}")
    if not root.uri.startswith("file://"):
        raise ValueError(f"root URIs must be file:// URIs (spec: client/roots); got {root.uri!r}")
    return root


def undeliverable(e: ProtocolError) -> bool:
    """True for the error the HTTP transport reports when the request never got through
    (a server it could not connect to, or lost before any answer). Only the mark the
    transport sets counts -- a server sending the transport's words is still answering."""
    return not_delivered(e)


def answer_lost(e: ProtocolError) -> bool:
    """True for the error the HTTP transport reports when the connection to the server was
    lost before the answer came (a killed or restarted server; a 2026 request re-sent as
    often as allowed): a transport failure, not an answer of the server. Only the marks the
    transport sets count -- a server sending the transport's words is still answering."""
    return marked_lost(e) or server_lost(e)
