"""``mcpkit auth login|logout|status|dev-issuer|dev-token``: a person's OAuth login to a
protected server, kept for the other commands, and a development issuer to try one with.

``login`` opens the browser at the server's authorization server (the loopback redirect of
:class:`~mcpkit.auth.LoopbackRedirect`), registers the CLI there when it must, and keeps
the tokens in the user's token file (:class:`~mcpkit.auth.FileTokenStore`, mode 0600).
``mcpkit list|call|read|prompt URL`` then use (and refresh) that login. ``logout`` forgets
a server's tokens; ``status`` lists the logins (never a token). ``dev-issuer`` serves the
development-only authorization server of :mod:`mcpkit._auth._devissuer` on loopback, and
``dev-token`` has it mint an access token (printed on stdout).
"""

from __future__ import annotations

import argparse
import sys
import time
import webbrowser
from typing import Any

import anyio

from .._auth._flow import token_key
from .._auth._loopback import LoopbackRedirect
from .._auth._oauth import NO_REGISTRATION, OAuth
from .._auth._store import FileTokenStore
from .._exceptions import AuthError
from ._client import Client

#: What ``mcpkit auth --help`` says: plain text (the module's docstring is reStructuredText).
_HELP = """\
Log in to a protected MCP server over OAuth once; `mcpkit list|call|read|prompt URL`
then use (and refresh) that login. A development issuer lets you try one.

  mcpkit auth login URL          log in (opens the browser); tokens kept in your token
                                 file, readable by you only
  mcpkit auth status             the servers logged in to (never a token)
  mcpkit auth logout URL         forget a server's tokens
  mcpkit auth dev-issuer         serve a DEVELOPMENT-ONLY authorization server on 127.0.0.1
  mcpkit auth dev-token ISSUER   print an access token minted by a dev-issuer
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcpkit auth",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="action", required=True)
    login = sub.add_parser("login", help="log in to a protected server (opens the browser)")
    login.add_argument("url", help="the server's MCP endpoint (http or https)")
    login.add_argument("--scope", action="append", default=None, help="a scope to ask for")
    login.add_argument("--client-id", help="a client id registered for this CLI")
    login.add_argument("--client-secret", help="its secret, if it has one")
    login.add_argument(
        "--client-metadata-url", help="an https URL of this client's metadata document (CIMD)"
    )
    login.add_argument("--port", type=int, default=0, help="loopback port for the redirect")
    login.add_argument("--no-browser", action="store_true", help="only print the URL to visit")
    login.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for it")
    logout = sub.add_parser("logout", help="forget the tokens of a server")
    logout.add_argument("url")
    status = sub.add_parser("status", help="list the servers logged in to")
    for q in (login, logout, status):
        q.add_argument("--auth-file", help="the token file (default: ~/.config/mcpkit/auth.json)")
    issuer = sub.add_parser(
        "dev-issuer", help="serve a DEVELOPMENT-ONLY authorization server on 127.0.0.1"
    )
    issuer.add_argument("--port", type=int, default=9400, help="its port (default: 9400)")
    issuer.add_argument("--subject", default="dev-user", help="who a browser login signs in")
    issuer.add_argument("--expires-in", type=int, default=3600, help="token lifetime, seconds")
    issuer.add_argument(
        "--no-registration", action="store_true", help="no dynamic client registration"
    )
    mint = sub.add_parser("dev-token", help="print an access token minted by a dev-issuer")
    mint.add_argument("issuer", help="the dev-issuer's URL (http://127.0.0.1:9400)")
    mint.add_argument("--sub", default="dev-user", help="the token's subject")
    mint.add_argument("--scope", action="append", default=[], help="a scope (repeatable)")
    mint.add_argument("--audience", help="the server's URL the token is for (its aud)")
    mint.add_argument("--expires-in", type=int, default=3600, help="lifetime, seconds")
    return p


def stored_login(url: str) -> OAuth | None:
    """The ``auth=`` of a URL the user logged in to with ``mcpkit auth login``, else None.

    It refreshes the tokens by itself; when a new login is needed, the request fails with
    a message saying to run ``mcpkit auth login`` again (a command never opens a browser
    unasked)."""
    store = FileTokenStore()
    if token_key(url) not in store.names():
        return None

    def relogin(authorization_url: str) -> str:
        raise AuthError(
            f"the login has expired: run `mcpkit auth login {url}`", error="login_required"
        )

    # The redirect URI is never visited (the handler refuses first); it names the CLI.
    return OAuth(redirect_handler=relogin, redirect_uri="http://127.0.0.1/callback", store=store)


async def _login(ns: argparse.Namespace, store: FileTokenStore) -> int:
    await store.delete(token_key(ns.url))
    redirect = LoopbackRedirect(
        ns.port, open_browser=None if ns.no_browser else webbrowser.open, timeout=ns.timeout
    )
    auth = OAuth(
        redirect_handler=redirect,
        store=store,
        scopes=ns.scope,
        client_id=ns.client_id,
        client_secret=ns.client_secret,
        client_metadata_url=ns.client_metadata_url,
        client_name="mcpkit CLI",
    )
    try:
        async with Client(ns.url, auth=auth, name="mcpkit-cli") as client:
            if client.server_capabilities.tools is not None:
                await client.list_tools()  # a server may let initialize through unauthenticated
            else:
                await client.ping()
    finally:
        redirect.close()
    token = auth.token
    if token is None:
        print(f"{ns.url} needs no login (it never asked for a token)")
        return 0
    scopes = " ".join(token.scopes) or "(none named)"
    print(f"logged in to {ns.url} through {token.issuer}; scopes: {scopes}")
    return 0


async def _logout(ns: argparse.Namespace, store: FileTokenStore) -> int:
    key = token_key(ns.url)
    if key not in store.names():
        print(f"not logged in to {ns.url}", file=sys.stderr)
        return 1
    await store.delete(key)
    print(f"logged out of {ns.url}")
    return 0


async def _status(store: FileTokenStore) -> int:
    logins = [k for k in store.names() if k.startswith("token:")]
    if not logins:
        print(f"no logins in {store.path}")
        return 0
    for key in logins:
        entry: dict[str, Any] = await store.get(key) or {}
        expires = entry.get("expires_at")
        left = (
            ""
            if not isinstance(expires, (int, float))
            else f", expires in {int(expires - time.time())} s"
        )
        refresh = ", refreshable" if entry.get("refresh_token") else ""
        print(
            f"{key[6:]}: {entry.get('issuer')} scopes={' '.join(entry.get('scopes') or [])}{left}{refresh}"
        )
    return 0


DEV_BANNER = (
    "mcpkit auth dev-issuer: DEVELOPMENT ONLY. It approves every login at once as {subject!r} "
    "and mints any token for anyone on this machine; never let a real server trust it. "
    "Its key lives in memory: tokens end with it. Ctrl-C to stop."
)


def serve_dev_issuer(ns: argparse.Namespace) -> int:
    """``mcpkit auth dev-issuer``: the issuer's URL on stdout, a loud warning on stderr."""
    import importlib.util
    import socket

    missing = [m for m in ("jwt", "cryptography", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"mcpkit auth dev-issuer: needs {', '.join(missing)}: pip install 'mcpkit[auth,http]'",
            file=sys.stderr,
        )
        return 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", ns.port))  # loopback only, always: there is no --host
    except OSError as e:
        sock.close()
        print(
            f"mcpkit auth dev-issuer: cannot listen on 127.0.0.1:{ns.port} ({e.strerror}); "
            "pick another with --port",
            file=sys.stderr,
        )
        return 2
    sock.listen(64)
    from .._auth._devissuer import DevIssuer

    issuer = DevIssuer(
        f"http://127.0.0.1:{sock.getsockname()[1]}",
        subject=ns.subject,
        lifetime=ns.expires_in,
        registration=not ns.no_registration,
    )
    print(issuer.issuer, flush=True)
    print(DEV_BANNER.format(subject=ns.subject), file=sys.stderr, flush=True)
    try:
        anyio.run(_serve_issuer, issuer, sock)
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()
    return 0


async def _serve_issuer(app: Any, sock: Any) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    await uvicorn.Server(config).serve(sockets=[sock])


async def _dev_token(ns: argparse.Namespace) -> int:
    """``mcpkit auth dev-token ISSUER``: the minted access token alone on stdout."""
    from .._auth._devissuer import is_loopback_url
    from .._auth._fetch import FetchError, request_json

    issuer = ns.issuer.rstrip("/")
    if not is_loopback_url(issuer):
        print(
            f"mcpkit auth dev-token: {issuer} is not a loopback URL (a dev-issuer runs on "
            "127.0.0.1)",
            file=sys.stderr,
        )
        return 2
    body: dict[str, Any] = {"sub": ns.sub, "scope": " ".join(ns.scope)}
    body["expires_in"] = ns.expires_in
    if ns.audience:
        body["aud"] = ns.audience
    try:
        status, answer, _ = await request_json(None, f"{issuer}/dev/token", json=body)
    except FetchError as e:
        print(f"mcpkit auth dev-token: error: {e} (is `mcpkit auth dev-issuer` running?)",
              file=sys.stderr)  # fmt: skip
        return 1
    token = answer.get("access_token")
    if status != 200 or not isinstance(token, str):
        why = answer.get("error_description") or answer.get("error") or f"HTTP {status}"
        print(f"mcpkit auth dev-token: refused: {why}", file=sys.stderr)
        return 1
    print(token)
    return 0


def main(command: str, argv: list[str]) -> int:
    """Run ``mcpkit auth ...``; returns the exit status."""
    try:
        ns = _parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) else 2
    if ns.action == "dev-issuer":
        return serve_dev_issuer(ns)
    if ns.action == "dev-token":
        return anyio.run(_dev_token, ns)
    store = FileTokenStore(ns.auth_file)
    try:
        if ns.action == "login":
            return anyio.run(_login, ns, store)
        if ns.action == "logout":
            return anyio.run(_logout, ns, store)
        return anyio.run(_status, store)
    except KeyboardInterrupt:
        print("mcpkit auth: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # every error is one line, never a traceback
        print(f"mcpkit auth {ns.action}: error: {_login_error(e)}", file=sys.stderr)
        return 1


def _login_error(e: BaseException) -> str:
    """The message of a failed command, worded for the command line."""
    data = getattr(e, "data", None)
    if isinstance(data, dict) and data.get("authError") == NO_REGISTRATION:
        return (
            "the server's authorization server registers no clients by itself (no dynamic "
            "registration): register this CLI there (redirect URI http://127.0.0.1/callback) "
            "and pass its id with --client-id (and --client-secret if it has one), or pass "
            "--client-metadata-url if it takes client metadata documents"
        )
    return str(e)
