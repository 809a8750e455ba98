"""``mcpkit run``: loading the server object, and clear errors when it cannot."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit import Server
from mcpkit._server._cli import load_server, main


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_loads_by_default_name_explicit_name_and_factory(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "srv_default.py",
        """
        from mcpkit import Server
        server = Server("default")
        other = Server("other")
        def make():
            return Server("made")
        """,
    )
    assert load_server(str(path)).name == "default"
    assert load_server(f"{path}:other").name == "other"
    assert load_server(f"{path}:make").name == "made"


def test_single_server_found_under_any_name(tmp_path: Path) -> None:
    path = write(tmp_path, "srv_any.py", "from mcpkit import Server\nmy_thing = Server('x')\n")
    server = load_server(str(path))
    assert isinstance(server, Server) and server.name == "x"


@pytest.mark.parametrize(
    ("body", "spec_suffix", "message"),
    [
        ("x = 1\n", "", "defines no mcpkit.Server"),
        ("from mcpkit import Server\na = Server('a')\nb = Server('b')\n", "", "several servers"),
        ("x = 1\n", ":missing", "no object named 'missing'"),
        ("x = 1\n", ":x", "not a mcpkit.Server"),
    ],
)
def test_errors_are_clear(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, spec_suffix: str, message: str
) -> None:
    path = write(tmp_path, f"srv_err_{abs(hash(body + spec_suffix))}.py", body)
    assert main("run", [f"{path}{spec_suffix}"]) == 2
    assert message in capsys.readouterr().err


def test_missing_file_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main("run", [str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    path = write(tmp_path, "srv_opts.py", "from mcpkit import Server\nserver = Server('s')\n")
    assert main("run", [str(path), "--port", "9000"]) == 2
    assert "HTTP transports only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main("run", [str(path), "--transport", "carrier-pigeon"])


def test_module_path_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "srv_mod.py", "from mcpkit import Server\nserver = Server('mod')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_server("srv_mod").name == "mod"
    sys.modules.pop("srv_mod", None)


def test_http_transport_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "srv_http.py", "from mcpkit import Server\nserver = Server('h')\n")
    calls: list[tuple[object, str, dict[str, object]]] = []

    import mcpkit._app

    def fake_run(server: object, transport: str, **options: object) -> None:
        calls.append((server, transport, options))

    monkeypatch.setattr(mcpkit._app, "run", fake_run)
    assert main("run", [str(path), "--transport", "sse", "--port", "9123"]) == 0
    assert calls and calls[0][1] == "sse" and calls[0][2] == {"port": 9123}

    def no_uvicorn(server: object, transport: str, **options: object) -> None:
        raise RuntimeError("serving over HTTP needs uvicorn: pip install 'mcpkit[http]'")

    monkeypatch.setattr(mcpkit._app, "run", no_uvicorn)
    assert main("run", [str(path), "--transport", "http"]) == 1
    assert "needs uvicorn" in capsys.readouterr().err


AUTH = ["--auth-issuer", "http://127.0.0.1:9400", "--auth-resource", "https://mcp.example.com/mcp"]


def test_auth_options_protect_the_served_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--auth-issuer``/``--auth-resource``/``--auth-scope``: the server is served with a
    ``ResourceServer`` checking JWTs of that issuer for that resource (docs/deploy.md runs it
    for real, behind nginx, with the development issuer)."""
    from mcpkit.auth import JWTVerifier, ResourceServer

    path = write(tmp_path, "srv_auth.py", "from mcpkit import Server\nserver = Server('a')\n")
    calls: list[dict[str, object]] = []

    import mcpkit._app

    def fake_run(server: object, transport: str, **options: object) -> None:
        calls.append(options)

    monkeypatch.setattr(mcpkit._app, "run", fake_run)
    argv = [str(path), "-t", "http", *AUTH, "--auth-scope", "mcp:tools", "--auth-scope", "x"]
    assert main("run", argv) == 0
    auth = calls[0]["auth"]
    assert isinstance(auth, ResourceServer)
    assert auth.resource == "https://mcp.example.com/mcp"
    assert auth.authorization_servers == ["http://127.0.0.1:9400"]
    assert auth.scopes == ("mcp:tools", "x")
    assert auth.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    assert isinstance(auth.verifier, JWTVerifier)
    assert (auth.verifier.issuer, auth.verifier.audience) == (
        "http://127.0.0.1:9400",
        "https://mcp.example.com/mcp",
    )
    # The legacy transport takes it too; without the options nothing is protected.
    assert main("run", [str(path), "-t", "sse", *AUTH]) == 0
    assert isinstance(calls[1]["auth"], ResourceServer)
    assert main("run", [str(path), "-t", "http"]) == 0
    assert "auth" not in calls[2]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--auth-issuer", "http://127.0.0.1:9400"], "--auth-issuer needs --auth-resource URL"),
        (["--auth-resource", "https://mcp.example.com/mcp"], "go with --auth-issuer URL"),
        (["--auth-scope", "mcp:tools"], "go with --auth-issuer URL"),
        (["--auth-issuer", "auth.example.com", "--auth-resource", "https://m/mcp"], "http(s) URL"),
        (
            ["--auth-issuer", "http://127.0.0.1:9400", "--auth-resource", "/mcp"],
            "--auth-resource: resource must be an absolute http(s) URL",
        ),
    ],
)
def test_auth_options_incomplete_or_malformed_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    path = write(tmp_path, "srv_auth_bad.py", "from mcpkit import Server\nserver = Server('b')\n")
    assert main("run", [str(path), "-t", "http", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_auth_options_are_refused_where_they_cannot_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # over stdio there is no bearer token (a local server's credentials are its environment)
    path = write(tmp_path, "srv_auth_io.py", "from mcpkit import Server\nserver = Server('c')\n")
    assert main("run", [str(path), *AUTH]) == 2
    assert "--auth-issuer, --auth-resource apply to HTTP transports only" in capsys.readouterr().err
    # a server that sets its own auth= is not silently given another one
    own = write(
        tmp_path,
        "srv_auth_own.py",
        """
        from mcpkit import Server
        from mcpkit.auth import ResourceServer, StaticTokenVerifier
        server = Server(
            "own",
            auth=ResourceServer(StaticTokenVerifier({"t": []}), resource="http://127.0.0.1/mcp"),
        )
        """,
    )
    assert main("run", [str(own), "-t", "http", *AUTH]) == 2
    assert "sets its own auth=" in capsys.readouterr().err
