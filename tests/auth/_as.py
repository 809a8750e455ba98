"""A real OAuth authorization server for the tests: panva's oidc-provider on node.

``oidc_server.mjs`` configures it for MCP (resource indicators issuing JWT access tokens for
the requested resource, client credentials, PKCE, introspection, registration). The npm
package is installed once, pinned, under ``~/.cache/mcpkit-tests`` (``.ci/run`` installs it
up front; a test run without it installs it, bounded, and fails loudly if it cannot).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import threading
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

VERSION = "9.13.3"
HOME = Path(os.environ.get("MCPKIT_OIDC_HOME", Path.home() / ".cache" / "mcpkit-tests"))
ROOT = HOME / f"oidc-provider-{VERSION}"
SCRIPT = Path(__file__).with_name("oidc_server.mjs")
MACHINE = ("machine", "machine-secret-0123456789abcdef")
#: Tokens for this resource are opaque (checked by introspection); JWTs for any other.
OPAQUE_RESOURCE = "http://127.0.0.1/opaque-mcp"
INTROSPECTOR = ("mcp-server", "mcp-server-secret-0123456789abcdef")


def ensure_installed() -> Path:
    """The directory holding ``node_modules/oidc-provider`` (installed on first use)."""
    if not (ROOT / "node_modules" / "oidc-provider" / "package.json").exists():
        ROOT.mkdir(parents=True, exist_ok=True)
        (ROOT / "package.json").write_text('{"name": "mcpkit-test-as", "private": true}\n')
        npm = shutil.which("npm")
        assert npm is not None, "the auth tests need node and npm (a real authorization server)"
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", f"oidc-provider@{VERSION}"],
            cwd=ROOT,
            check=True,
            timeout=300,
            capture_output=True,
        )
    # node resolves imports from the script's directory: the script lives beside the package.
    target = ROOT / SCRIPT.name
    if not target.exists() or target.read_bytes() != SCRIPT.read_bytes():
        target.write_bytes(SCRIPT.read_bytes())
    return ROOT


class AuthorizationServer:
    """One oidc-provider process; a context manager (the process ends at exit).

    Clients: ``machine`` (client credentials) and ``mcp-server`` (introspection), plus any
    given as ``clients`` (oidc-provider client metadata).
    """

    def __init__(
        self,
        *,
        clients: list[dict[str, Any]] | None = None,
        subject: str = "alice",
        scopes: tuple[str, ...] = ("mcp:tools", "mcp:admin"),
        token_ttl: int = 600,
        path: str = "",
        token_alg: str = "ES256",
        opaque_resources: tuple[str, ...] = (OPAQUE_RESOURCE,),
    ) -> None:
        base = [
            {
                "client_id": MACHINE[0],
                "client_secret": MACHINE[1],
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
                "response_types": [],
            },
            {
                "client_id": INTROSPECTOR[0],
                "client_secret": INTROSPECTOR[1],
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
                "response_types": [],
            },
        ]
        self.config = {
            "clients": base + list(clients or []),
            "subject": subject,
            "scopes": list(scopes),
            "accessTokenTTL": token_ttl,
            "path": path,
            "tokenAlg": token_alg,
            "opaqueResources": list(opaque_resources),
        }
        self.issuer = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def __enter__(self) -> AuthorizationServer:
        root = ensure_installed()
        cfg = root / f"config-{os.getpid()}-{id(self)}.json"
        cfg.write_text(json.dumps(self.config))
        node = shutil.which("node")
        assert node is not None
        # stdin stays open: closing it (or our exit) ends the server.
        self._proc = subprocess.Popen(
            [node, "--no-warnings", str(root / SCRIPT.name), str(cfg)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        lines = self._lines

        def read() -> None:
            assert self._proc is not None and self._proc.stdout is not None
            for raw in self._proc.stdout:
                lines.put(raw.decode().strip())
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        try:
            line = lines.get(timeout=30)
        except queue.Empty:
            line = None
        if line is None or not line.startswith("ISSUER "):
            self.__exit__()
            raise AssertionError(f"the authorization server did not start: {line!r}")
        self.issuer = line.split(" ", 1)[1]
        cfg.unlink()
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        self._proc = None

    def rotate(self, timeout: float = 30) -> str:
        """Rotate the signing keys (the old ones stay published); the new key id."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.write(b"rotate\n")
        proc.stdin.flush()
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            line = None
        if line is None or not line.startswith("ROTATED "):
            raise AssertionError(f"the authorization server did not rotate its keys: {line!r}")
        return line.split(" ", 1)[1]

    # ------------------------------------------------------------------ tokens

    def post(self, path: str, form: dict[str, str], client: tuple[str, str]) -> dict[str, Any]:
        """POST ``form`` to an endpoint with client_secret_basic; the JSON answer."""
        basic = base64.b64encode(f"{client[0]}:{client[1]}".encode()).decode()
        req = urllib.request.Request(
            self.issuer + path,
            data=urllib.parse.urlencode(form).encode(),
            headers={"authorization": f"Basic {basic}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return dict(json.loads(resp.read()))
        except urllib.error.HTTPError as e:
            return dict(json.loads(e.read()))

    def token(
        self, resource: str, scope: str = "mcp:tools", client: tuple[str, str] = MACHINE
    ) -> str:
        """An access token from the client-credentials grant, for ``resource``."""
        answer = self.post(
            "/token",
            {"grant_type": "client_credentials", "scope": scope, "resource": resource},
            client,
        )
        assert "access_token" in answer, answer
        return str(answer["access_token"])
