"""The public namespace: one table (``mcpkit._LAZY``), from which the imports for type
checkers and ``__all__`` are generated (scripts/public_names.py), and every public exception in one tree, mapped by error code both ways."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import mcpkit
from mcpkit import _exceptions

INIT = Path(mcpkit.__file__)


def _type_checking_names(init: Path = INIT) -> set[str]:
    tree = ast.parse(init.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    names |= {a.asname or a.name for a in inner.names}
    return names


def test_one_table_mirrored_exactly() -> None:
    table = set(mcpkit._LAZY)
    assert set(mcpkit.__all__) == table, "__all__ and the table differ"
    assert len(mcpkit.__all__) == len(table), "a name twice in __all__"
    assert _type_checking_names() == table, "the TYPE_CHECKING imports and the table differ"


def test_generated_from_the_table() -> None:
    """The TYPE_CHECKING imports and ``__all__`` are what scripts/public_names.py writes
    from ``_LAZY``: a name is added in one place, the table."""
    script = INIT.parents[2] / "scripts" / "public_names.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_types_table_mirrored_exactly() -> None:
    """mcpkit.types: its table (in ``types._index``), ``__all__`` and the TYPE_CHECKING
    imports name the same set, and each name comes from the submodule the table says."""
    import mcpkit.types as types
    from mcpkit.types._index import WHERE

    assert set(types.__all__) == set(WHERE), "__all__ and the table differ"
    assert len(types.__all__) == len(set(types.__all__)), "a name twice in __all__"
    init = Path(types.__file__)
    assert _type_checking_names(init) == set(WHERE), "TYPE_CHECKING imports and table differ"
    tree = ast.parse(init.read_text())
    imported = {
        a.asname or a.name: f".{node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module != "_index"
        for a in node.names
    }
    assert imported == WHERE, "a name's submodule differs between the table and its import"


@pytest.mark.parametrize("name", sorted(mcpkit._LAZY))
def test_every_public_name_resolves_from_its_module(name: str) -> None:
    value = getattr(mcpkit, name)
    assert value is not None
    assert value.__doc__, f"mcpkit.{name} has no docstring"
    if inspect.isclass(value) and issubclass(value, BaseException):
        assert value.__module__ == "mcpkit._exceptions", f"{name} lives outside _exceptions"


def test_every_exception_of_the_tree_is_public() -> None:
    tree = {
        n
        for n, v in vars(_exceptions).items()
        if inspect.isclass(v)
        and issubclass(v, BaseException)
        and v.__module__ == _exceptions.__name__
    }
    assert tree <= set(mcpkit.__all__), f"not exported: {tree - set(mcpkit.__all__)}"


CODED = [
    c
    for c in vars(_exceptions).values()
    if inspect.isclass(c)
    and issubclass(c, _exceptions.ProtocolError)
    and c is not _exceptions.ProtocolError
]


@pytest.mark.parametrize("cls", CODED, ids=lambda c: c.__name__)
def test_error_codes_map_both_ways(cls: type[_exceptions.ProtocolError]) -> None:
    sent = cls(message="boom", data={"k": 1}).to_error()
    assert sent == {"code": cls.code, "message": "boom", "data": {"k": 1}}
    received = _exceptions.ProtocolError.from_error(sent)
    assert type(received) is cls and received.code == cls.code and received.data == {"k": 1}


def test_codes_are_distinct_and_unknown_codes_stay_generic() -> None:
    assert len({c.code for c in CODED}) == len(CODED)
    other = _exceptions.ProtocolError.from_error({"code": -31999, "message": "custom"})
    assert type(other) is _exceptions.ProtocolError and other.code == -31999


def test_http_client_errors_are_transport_errors() -> None:
    for cls in (
        mcpkit.HTTPConnectError,
        mcpkit.HTTPReadTimeout,
        mcpkit.HTTPProtocolError,
        mcpkit.HTTPStatusError,
        mcpkit.SessionExpired,
    ):
        assert issubclass(cls, mcpkit.TransportError)
    assert issubclass(mcpkit.HTTPReadTimeout, TimeoutError)
    from mcpkit._http import _h1client

    assert _h1client.HTTPError is mcpkit.HTTPError  # one tree, not a second one


@pytest.mark.anyio
async def test_a_client_catches_resource_not_found_by_its_class() -> None:
    """-32002 from the server is raised as ResourceNotFound on the client (was ProtocolError)."""
    server = mcpkit.Server("docs")

    @server.resource("doc://{name}")
    def doc(name: str) -> str:
        """A document."""
        if name != "known":
            raise mcpkit.ResourceNotFound(message=f"no document {name}", data={"uri": name})
        return "text"

    async with mcpkit.Client(server) as client:
        with pytest.raises(mcpkit.ResourceNotFound) as caught:
            await client.read_resource("doc://missing")
        assert caught.value.code == -32002
        with pytest.raises(mcpkit.ResourceNotFound):
            await client.read_resource("nothing://at-all")


def test_lowlevel_names_all_resolve_and_are_documented() -> None:
    import mcpkit.lowlevel as lowlevel

    for name in lowlevel.__all__:
        value = getattr(lowlevel, name)
        assert value.__doc__, f"mcpkit.lowlevel.{name} has no docstring"
    assert len(set(lowlevel.__all__)) == len(lowlevel.__all__)


def test_docs_never_name_an_underscore_module() -> None:
    root = INIT.parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    for page in pages:
        if page.name in ("architecture.md", "performance-notes.md"):
            continue  # the map of the internals and the lab notebook name them on purpose
        text = page.read_text()
        hits = [w for w in text.split() if "mcpkit._" in w or "mcpkit/_" in w]
        assert not hits, f"{page.name} names private modules: {hits[:5]}"


@pytest.mark.anyio
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_resource_not_found_takes_the_uri_first(revision: str) -> None:
    # The natural call: the first argument is the URI (it used to be taken for the code,
    # so the client saw -32603).
    error = mcpkit.ResourceNotFound("doc://missing")
    assert (error.code, error.uri, error.data) == (
        -32002,
        "doc://missing",
        {"uri": "doc://missing"},
    )
    assert "doc://missing" in error.message
    server = mcpkit.Server("docs")

    @server.resource("doc://{name}")
    def doc(name: str) -> str:
        """A document."""
        raise mcpkit.ResourceNotFound(f"doc://{name}")

    async with mcpkit.Client(server, protocol_version=revision) as client:
        with pytest.raises(mcpkit.ResourceNotFound) as caught:
            await client.read_resource("doc://gone")
    assert caught.value.uri == "doc://gone"


def test_middleware_names_all_resolve_and_are_documented() -> None:
    import mcpkit.middleware as middleware

    for name in middleware.__all__:
        value = getattr(middleware, name)
        # Classes carry their own docstring; aliases and constants are named in the module's.
        own = isinstance(value, type) and value.__doc__
        assert own or f"``{name}``" in (middleware.__doc__ or ""), f"{name} is not documented"
    assert len(set(middleware.__all__)) == len(middleware.__all__)


def test_sampling_names_all_resolve_and_are_documented() -> None:
    import mcpkit.sampling as sampling

    for name in sampling.__all__:
        value = getattr(sampling, name)
        assert value.__doc__, f"mcpkit.sampling.{name} has no docstring"
        assert callable(value)
    assert len(set(sampling.__all__)) == len(sampling.__all__)
