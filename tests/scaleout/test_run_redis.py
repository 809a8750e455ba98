"""``mcpkit run -t http --redis URL`` and ``MCPKIT_REDIS_URL``, as docs/deploy.md has them.

The two commands of deploy.md's "Turning it on" are read from the page and run as written
(only the Redis URL, the server file and the address are the test's): two workers each, on
one real redis-server, and a session made on the first is served by the second. Each worker
says at startup which Redis it uses (never the password); a Redis that refuses stops the
worker with one line (tests/http/test_run_redis_setting.py has the cases needing no Redis).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from tests.scaleout._cluster import RedisServer, redis_server
from tests.scaleout._run import ASKER, MCPKIT, environment, run_argv, run_to_exit, worker
from tests.scaleout._wire import call, initialize

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
#: What the documented commands name, and what the test runs instead.
DOC_REDIS = "redis://redis.internal:6379/0"
DOC_HOST = "mcp.example.com"


def documented_commands() -> list[tuple[dict[str, str], list[str]]]:
    """``(environment, argv)`` of each command of deploy.md's "Turning it on" block."""
    section = DEPLOY.read_text(encoding="utf-8").split("## Turning it on", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands: list[tuple[dict[str, str], list[str]]] = []
    for line in block.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line)
        env: dict[str, str] = {}
        while re.fullmatch(r"[A-Z_]+=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        commands.append((env, words))
    return commands


def as_test_runs_it(
    command: tuple[dict[str, str], list[str]], redis_url: str
) -> tuple[dict[str, str], list[str]]:
    """The documented command, with the test's Redis, server file, address and a free port."""
    swap = {
        DOC_REDIS: redis_url,
        "mcpkit": MCPKIT,
        "server.py": str(ASKER),
        "0.0.0.0": "127.0.0.1",
        "8000": "0",
    }
    env, argv = command
    return (
        environment({k: swap.get(v, v) for k, v in env.items()}),
        [swap.get(w, w) for w in argv],
    )


def documented_startup_line() -> str:
    section = DEPLOY.read_text(encoding="utf-8").split("## Turning it on", 1)[1]
    return section.split("```text\n", 1)[1].split("\n", 1)[0]


def test_the_page_has_the_flag_and_the_variable() -> None:
    commands = documented_commands()
    assert len(commands) == 2, commands
    (env_a, flag), (env_b, variable) = commands
    assert env_a == {} and flag[flag.index("--redis") + 1] == DOC_REDIS
    assert env_b == {"MCPKIT_REDIS_URL": DOC_REDIS} and "--redis" not in variable


@pytest.mark.parametrize("way", ["--redis", "MCPKIT_REDIS_URL"])
async def test_a_session_made_on_one_worker_is_served_by_another(
    redis: RedisServer, way: str
) -> None:
    flag, variable = documented_commands()
    env, argv = as_test_runs_it(flag if way == "--redis" else variable, redis.url)
    with worker(argv, env) as a, worker(argv, env) as b:
        # Each says so at startup, as the page shows (the Redis and the address are ours).
        for w in (a, b):
            port = w.url.rsplit(":", 1)[1].split("/")[0]
            expected = (
                documented_startup_line()
                .replace("redis.internal:6379", f"127.0.0.1:{redis.port}")
                .replace("0.0.0.0:8000", f"127.0.0.1:{port}")
            )
            assert w.announcement == expected
        async with httpx2.AsyncClient(timeout=20, headers={"host": DOC_HOST}) as http:
            sid = await initialize(http, a.url)
            # Worker B never saw this session: it serves it from Redis (it was a 404 once).
            got = await call(http, b.url, sid, "tools/call", {"name": "where", "arguments": {}})
            assert got["result"]["content"][0]["text"] == "here"
            assert (await call(http, a.url, sid, "ping", None))["result"] == {}
            assert (await http.delete(b.url, headers=_session(sid))).status_code == 200
            # Ended for A once its bus brings the news (docs/deploy.md: a session read less
            # than FRESH_FOR ago is served as it is until then), a moment later.
            with anyio.fail_after(10):
                while True:
                    gone = await http.post(a.url, headers=_session(sid), content=_PING)
                    if gone.status_code != 200:
                        break
                    await anyio.sleep(0.05)
            assert gone.status_code == 404


_PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'


def _session(sid: str) -> dict[str, str]:
    return {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": sid,
    }


@pytest.fixture
def guarded_redis(tmp_path: Path) -> Iterator[int]:
    """A redis-server that wants a password (``s3cret-pw``); its port."""
    with redis_server(tmp_path, extra=("--requirepass", "s3cret-pw")) as server:
        yield server.port


async def test_the_startup_line_names_the_instance_and_never_the_password(
    guarded_redis: int,
) -> None:
    url = f"redis://:s3cret-pw@127.0.0.1:{guarded_redis}/2"
    with worker(run_argv("--redis", url)) as w:
        assert f"(sessions in Redis 127.0.0.1:{guarded_redis}/2) at {w.url}" in w.announcement
        async with httpx2.AsyncClient(timeout=20) as http:
            await initialize(http, w.url)  # it does use that Redis, password and all
    assert "s3cret-pw" not in w.served.stderr()
    # A wrong password: no worker, one line naming the instance (not the password).
    wrong = f"redis://:wrong-pw@127.0.0.1:{guarded_redis}/2"
    code, lines = run_to_exit(run_argv("--redis", wrong))
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith(f"mcpkit run: cannot reach Redis 127.0.0.1:{guarded_redis}/2: ")
    assert "wrong-pw" not in lines[0]


async def test_legacy_sse_with_redis_says_its_sessions_stay_in_process(
    redis: RedisServer,
) -> None:
    argv = [MCPKIT, "run", str(ASKER), "-t", "sse", "--port", "0", "--redis", redis.url]
    with worker(argv) as w:
        assert "(legacy; sessions in this process)" in w.announcement
    said = [line for line in w.served.lines if "legacy HTTP+SSE" in line]
    assert said == [  # once, from the one place that says it (server.run says it too)
        "legacy HTTP+SSE keeps its sessions in this process: "
        f"Redis 127.0.0.1:{redis.port}/0 is not used "
        "(the 'http' transport shares sessions between workers)"
    ]
