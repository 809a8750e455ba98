"""Every ```python block of docs/*.md runs, as written, in a fresh interpreter.

One test per block, id ``<page>:<line>`` (the line of the opening fence). Each block is saved
to a scratch directory (with ``examples/*.py`` copied beside it, as the pages assume the
repository's root) and run by a small driver in a new ``python -W error`` process:

* the block runs as a module named ``docs_block`` (not ``__main__``), so a server page's
  ``if __name__ == "__main__": server.run()`` does not block; it must not raise;
* then every ``mcpkit.Server`` the block left in its globals is connected in memory with
  ``mcpkit.Client(server)`` and its tools, resources, templates and prompts are listed, so
  their definitions are checked;
* and an ASGI app left as ``app`` is served by uvicorn on a free port and connected over
  Streamable HTTP at ``/mcp``.

The process must exit 0 without a traceback on stderr. Lines of the saved file keep their
line numbers in the page, so a failure points into the Markdown.

A block that cannot run alone says so in an HTML comment right above its fence:

* ``<!-- docs-test: continues -->``: runs after the previous block of the same page (which
  runs first, in the same process);
* ``<!-- docs-test: file NAME -->``: the block is also saved as ``NAME`` in the scratch
  directory of the later blocks of its page (for a client that starts it: ``Client("NAME")``);
* ``<!-- docs-test: http-server -->``: the block may ``await`` at top level (it runs on
  asyncio) and finds ``url``, the Streamable HTTP endpoint of a small server the driver
  serves with uvicorn, and ``token()``, returning a bearer token (for client fragments);
* ``<!-- docs-test: skip because REASON -->``: not run (keep these few; REASON is shown).

docs/architecture.md (a map of the internals), docs/performance.md and docs/performance-notes.md
(measurements) have no runnable examples and are not collected.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
#: Pages whose blocks are not run (see the module docstring).
NOT_COLLECTED = {"architecture.md", "performance.md", "performance-notes.md"}
#: How long one block may run, driver checks included.
TIMEOUT = 60.0
#: At most this many skipped blocks over all pages: each one is a page that does not run.
MAX_SKIPS = 2

FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")

#: The driver the blocks run under: ``python -W error DRIVER BLOCK [http-server]``.
#: The in-memory check of each ``Server`` runs on ``MCPKIT_TEST_BACKEND`` (the suite runs on
#: asyncio and on trio), even when the block's own ``anyio.run(main)`` served it on asyncio
#: first: one server may serve under one loop, then another. Served apps run on uvicorn's
#: asyncio.
DRIVER = r"""
import ast
import os
import socket
import sys
import types

import anyio

import mcpkit


async def list_everything(client):
    caps = client.server_capabilities
    listed = {}
    if caps.tools is not None:
        listed["tools"] = [t.name for t in await client.list_tools()]
    if caps.resources is not None:
        listed["resources"] = [str(r.uri) for r in await client.list_resources()]
        listed["templates"] = [t.uri_template for t in await client.list_resource_templates()]
    if caps.prompts is not None:
        listed["prompts"] = [p.name for p in await client.list_prompts()]
    return listed


async def check_server(name, server):
    with anyio.fail_after(20):
        async with mcpkit.Client(server) as client:
            print(f"docs-test: {name} in memory: {await list_everything(client)}")


async def serving(app, then):
    # Serve the ASGI `app` with uvicorn on a free port and await `then(port)`.
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    served = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    up = anyio.Event()  # set once it listens, or has given up starting
    startup = served.startup

    async def startup_then_signal(sockets=None):
        try:
            await startup(sockets)
        finally:
            up.set()

    async def serve():
        try:
            await served.serve([sock])
        finally:
            up.set()

    served.startup = startup_then_signal
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            await up.wait()
            assert served.started, "uvicorn did not start"
            try:
                await then(sock.getsockname()[1])
            finally:
                served.should_exit = True


async def check_app(name, app, port):
    # /mcp: the default endpoint; /mcp/: an app mounted at /mcp in a framework.
    for url in (f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{port}/mcp/"):
        try:
            async with mcpkit.Client(url) as client:
                listed = await list_everything(client)
        except mcpkit.ProtocolError as e:
            if "HTTP 307" not in str(e):
                raise
            continue
        print(f"docs-test: {name} over HTTP at {url}: {listed}")
        return
    raise AssertionError(f"{name}: no MCP endpoint at /mcp or /mcp/")


async def with_http_server(code, namespace):
    # The block may `await` at top level, with `url` (a server's Streamable HTTP endpoint)
    # and `token()` (its bearer token, which the server checks) defined.
    from mcpkit.auth import ResourceServer, StaticTokenVerifier

    demo = mcpkit.Server(
        "docs-demo",
        auth=ResourceServer(
            StaticTokenVerifier({"docs-token": []}), resource="http://127.0.0.1/mcp"
        ),
    )

    def echo(text: str) -> str:
        return text

    demo.add_tool(echo)

    async def run(port):
        namespace["url"] = f"http://127.0.0.1:{port}/mcp"
        namespace["token"] = lambda: "docs-token"
        result = eval(code, namespace)
        if result is not None:
            await result

    await serving(demo.http_app(), run)


path = sys.argv[1]
module = types.ModuleType("docs_block")
module.__file__ = path
sys.modules["docs_block"] = module
with open(path, encoding="utf-8") as f:
    source = f.read()
if "http-server" in sys.argv[2:]:
    code = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    anyio.run(with_http_server, code, module.__dict__, backend="asyncio")  # uvicorn: asyncio
else:
    exec(compile(source, path, "exec"), module.__dict__)

found = list(vars(module).items())
for name, value in found:
    if isinstance(value, mcpkit.Server):
        anyio.run(check_server, name, value, backend=os.environ.get("MCPKIT_TEST_BACKEND", "asyncio"))
for name, value in found:
    if name == "app" and callable(value) and not isinstance(value, mcpkit.Server):
        anyio.run(serving, value, lambda port: check_app(name, value, port), backend="asyncio")
"""


@dataclass
class Block:
    """One ```python block of a page, as the program that runs it."""

    page: str
    line: int
    #: The program: this block (after the blocks it continues), padded with blank lines so
    #: that each line keeps its line number in the page.
    program: str
    #: Files saved beside it (``file NAME`` markers of earlier blocks of the page).
    files: dict[str, str] = field(default_factory=dict)
    skip: str | None = None
    #: Runs with top-level ``await`` and ``url``/``token()`` of a served demo server.
    http_server: bool = False

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _markers(lines: list[str], fence: int) -> list[str]:
    """The ``docs-test`` comments right above the fence at index ``fence``."""
    found: list[str] = []
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    while i >= 0 and (m := MARKER.match(lines[i])):
        found.append(m.group("body"))
        i -= 1
    return found[::-1]


def page_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    files: dict[str, str] = {}
    previous: list[str] | None = None  # the padded lines of the previous block
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening or opening.group("lang") == "":
            i += 1
            continue
        indent, lang, start = opening.group("indent"), opening.group("lang"), i
        i += 1
        while i < len(lines) and not (FENCE.match(lines[i]) and lines[i].strip() == "```"):
            i += 1
        if i == len(lines):
            raise ValueError(f"{page.name}:{start + 1}: the ```{lang} block is never closed")
        body = lines[start + 1 : i]
        i += 1
        if lang not in ("python", "py"):
            continue
        padded = [""] * (start + 1) + [line[len(indent) :] for line in body]
        skip = None
        http_server = False
        saves: list[str] = []
        for marker in _markers(lines, start):
            if marker == "continues":
                if previous is None:
                    raise ValueError(f"{page.name}:{start + 1}: nothing to continue")
                padded = previous + padded[len(previous) :]
            elif marker.startswith("skip because "):
                skip = marker.removeprefix("skip because ").strip()
            elif marker == "http-server":
                http_server = True
            elif marker.startswith("file "):
                saves.append(marker.removeprefix("file ").strip())
            else:
                raise ValueError(f"{page.name}:{start + 1}: unknown marker docs-test: {marker}")
        program = "\n".join(padded) + "\n"
        blocks.append(Block(page.name, start + 1, program, dict(files), skip, http_server))
        for name in saves:
            files[name] = program
        previous = padded
    return blocks


def all_blocks() -> list[Block]:
    pages = sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_COLLECTED)
    return [block for page in pages for block in page_blocks(page)]


BLOCKS = all_blocks()


#: The errors of a process start that are the machine's, not the block's: once in a CI run
#: of ~150 blocks started from 4 threads at once, the child's ``execve`` failed with EFAULT
#: ("Bad address", under vfork); the block had not run at all, so it is started again.
_START_AGAIN = {errno.EFAULT, errno.EAGAIN}


def _start(argv: list[str], where: Path) -> subprocess.Popen[str]:
    """Start a block's interpreter in ``where``, a start that failed for the machine's
    reasons (:data:`_START_AGAIN`) tried twice more."""
    for _ in range(2):
        proc = _popen(argv, where, again=True)
        if proc is not None:
            return proc
    proc = _popen(argv, where, again=False)
    assert proc is not None
    return proc


def _popen(argv: list[str], where: Path, *, again: bool) -> subprocess.Popen[str] | None:
    """The started process; None when it failed for the machine's reasons and ``again``."""
    try:
        return subprocess.Popen(
            argv,
            cwd=where,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a timeout ends the servers the block started, too
        )
    except OSError as e:
        if again and e.errno in _START_AGAIN:
            return None
        raise


def run_block(block: Block) -> tuple[int | str, str, str]:
    """Run ``block`` in a fresh interpreter in a scratch directory: (exit code, out, err)."""
    with tempfile.TemporaryDirectory(prefix="mcpkit-docs-") as tmp:
        where = Path(tmp)
        (where / "examples").mkdir()
        for example in EXAMPLES.glob("*.py"):
            shutil.copy(example, where / "examples" / example.name)
        for name, text in block.files.items():
            (where / name).write_text(text, encoding="utf-8")
        driver = where / "docs_driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        path = where / f"{block.page.removesuffix('.md')}_{block.line}.py"
        path.write_text(block.program, encoding="utf-8")
        proc = _start(
            [sys.executable, "-W", "error", str(driver), str(path)]
            + (["http-server"] if block.http_server else []),
            where,
        )
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return f"timeout after {TIMEOUT:g} s", out, err
        return proc.returncode, out, err


@cache
def _runs() -> dict[str, Future[tuple[int | str, str, str]]]:
    """Every runnable block, started at once on a few workers (the first test waits)."""
    pool = ThreadPoolExecutor(max_workers=max(4, 2 * (os.cpu_count() or 1)))
    runs = {b.id: pool.submit(run_block, b) for b in BLOCKS if b.skip is None}
    pool.shutdown(wait=False)
    return runs


PARAMS = [
    pytest.param(b, id=b.id, marks=[pytest.mark.skip(reason=b.skip)] if b.skip else [])
    for b in BLOCKS
]


@pytest.mark.loop_dependent  # the driver checks each Server on MCPKIT_TEST_BACKEND
# One xdist worker runs them all: the first test starts every block (_runs), so blocks
# spread over workers would each run once per worker (4x the CPU, measured).
@pytest.mark.xdist_group("doc-blocks")
@pytest.mark.parametrize("block", PARAMS)
def test_block_runs(block: Block) -> None:
    code, out, err = _runs()[block.id].result(timeout=10 * TIMEOUT)
    assert code == 0 and "Traceback" not in err, (
        f"docs/{block.id} failed ({code}):\n--- stdout\n{out}\n--- stderr\n{err}"
    )


def test_blocks_are_found_and_few_are_skipped() -> None:
    pages = {b.page for b in BLOCKS}
    assert {"client.md", "server.md", "tasks.md", "http.md", "requirements.md"} <= pages
    skipped = [f"{b.id} ({b.skip})" for b in BLOCKS if b.skip]
    assert len(skipped) <= MAX_SKIPS, f"too many blocks skipped: {skipped}"
    assert all(b.skip for b in BLOCKS if b.skip is not None), "a skip needs its reason"


def test_markers_are_understood(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```python\nx = 1\n```\n\n<!-- docs-test: continues -->\n"
        "<!-- docs-test: file a.py -->\n```python\nprint(x)\n```\n\n"
        "<!-- docs-test: skip because a sketch -->\n```python\nf(...)\n```\n"
        "```sh\nnot python\n```\n"
    )
    first, second, third = page_blocks(page)
    assert (first.line, second.line, third.line) == (3, 9, 14)
    assert second.program.splitlines()[3:] == ["x = 1", "", "", "", "", "", "print(x)"]
    assert third.files == {"a.py": second.program} and third.skip == "a sketch"
    page.write_text("<!-- docs-test: sometimes -->\n```python\npass\n```\n")
    with pytest.raises(ValueError, match="unknown marker"):
        page_blocks(page)
