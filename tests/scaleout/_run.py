"""``mcpkit run`` workers started as a deployer starts them, each waited for by its startup
line (no polling): the URL it listens at, and where it says its sessions live."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests._served import ANNOUNCEMENT, Served
from tests.scaleout._cluster import stop_process

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
ASKER = Path(__file__).with_name("_asker.py")
#: Settings a worker must get only from the test (never from the environment running it).
OURS = ("MCPKIT_REDIS_URL", "MCPKIT_STATE_KEY", "MCPKIT_TRANSPORT", "MCPKIT_PORT")


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without our settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(extra or {})
    return env


def run_argv(*options: str, target: Path = ASKER) -> list[str]:
    """``mcpkit run TARGET -t http --port 0 OPTIONS...``."""
    return [MCPKIT, "run", str(target), "-t", "http", "--port", "0", *options]


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    served: Served
    #: The endpoint the worker announced.
    url: str

    @property
    def announcement(self) -> str:
        """Its startup line."""
        return next(line for line in self.served.lines if ANNOUNCEMENT.match(line))


@contextlib.contextmanager
def worker(argv: list[str], env: Mapping[str, str] | None = None) -> Iterator[Worker]:
    """A worker running ``argv`` until the block ends (then SIGTERM, bounded)."""
    proc = subprocess.Popen(
        argv,
        env=dict(env) if env is not None else environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    served = Served(proc)
    try:
        yield Worker(proc, served, served.url(timeout=30))
    finally:
        stop_process(proc)
        served.close()


def run_to_exit(argv: list[str], env: Mapping[str, str] | None = None) -> tuple[int, list[str]]:
    """Run ``argv`` until it exits by itself (bounded): its exit status and stderr lines."""
    done = subprocess.run(
        argv,
        env=dict(env) if env is not None else environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stderr.splitlines()
