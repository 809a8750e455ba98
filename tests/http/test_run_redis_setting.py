"""``mcpkit run --redis`` (and ``MCPKIT_REDIS_URL``) when the Redis cannot be used: the worker
does not start, and says why in one line; without Redis, the startup line says the sessions
stay in the process. Real ``mcpkit run`` processes; no Redis needed
(tests/scaleout/test_run_redis.py runs them against a real one)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from tests.scaleout._run import ASKER, MCPKIT, environment, run_argv, run_to_exit, worker

HTTP_DOC = Path(__file__).resolve().parents[2] / "docs" / "http.md"

BOGUS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.mark.parametrize("way", ["--redis", "MCPKIT_REDIS_URL"])
def test_a_redis_that_refuses_stops_the_worker_with_one_line(way: str) -> None:
    if way == "--redis":
        code, lines = run_to_exit(run_argv("--redis", BOGUS))
    else:
        code, lines = run_to_exit(run_argv(), environment({"MCPKIT_REDIS_URL": BOGUS}))
    assert code == 1, lines
    assert len(lines) == 1, lines  # no traceback, no uvicorn banner: it never listened
    assert lines[0].startswith("mcpkit run: cannot reach Redis 127.0.0.1:1/0: "), lines


def test_a_url_redis_cannot_use_is_one_line() -> None:
    code, lines = run_to_exit(run_argv("--redis", "http://127.0.0.1:1/0"))
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("mcpkit run: cannot use the Redis URL"), lines


def test_without_the_extra_the_line_names_it() -> None:
    # The same command in an interpreter where redis-py cannot be imported.
    no_redis = (
        "import sys; sys.modules['redis'] = None; from mcpkit._cli import main; sys.exit(main())"
    )
    argv = [sys.executable, "-c", no_redis, *run_argv("--redis", BOGUS)[1:]]
    code, lines = run_to_exit(argv)
    assert code == 1, lines
    assert lines == ["mcpkit run: the Redis backend needs redis-py: pip install 'mcpkit[redis]'"], (
        lines
    )


def test_without_redis_the_startup_line_says_the_sessions_stay_here() -> None:
    # docs/http.md, "Serving": its first command, and the line it shows.
    page = HTTP_DOC.read_text(encoding="utf-8").split("## Serving", 1)[1]
    command = page.split("```sh\n", 1)[1].splitlines()[0].split("#", 1)[0].split()
    shown = re.search(r"`(mcpkit: serving Streamable HTTP [^`]+)`", page)
    assert command[:2] == ["mcpkit", "run"] and shown is not None
    swap = {"mcpkit": MCPKIT, "server.py": str(ASKER), "8000": "0"}
    with worker([swap.get(w, w) for w in command]) as w:
        port = w.url.rsplit(":", 1)[1].split("/")[0]
        assert w.announcement == shown.group(1).replace(":8000/", f":{port}/")
