#!/usr/bin/env python3
"""The suite on every supported Python besides the developer's (run by .ci/run, after the
wheel checks; a developer runs it the same way):

    python3 scripts/other_pythons.py [--wheel dist/mcpkit-X.whl] [3.10 3.13 ...]

pyproject.toml declares Python 3.10 to 3.13 and the developer install (README) runs the
whole suite on one of them (3.11). For each other version this script installs mcpkit's
wheel with the ``[all,test]`` extras into a fresh virtual environment and runs part of the
suite there, on asyncio, from the checkout's ``tests/`` (the package imported is the
installed wheel's, never ``src/``): the oldest and newest supported versions run ``FULL``,
the ones between ``QUICK``. The installs, then the test runs, go concurrently; each
version's output is kept in a log, shown when it fails. A version with no interpreter on
this machine fails the run: it is looked for under pyenv (``pyenv root``, ``$PYENV_ROOT``,
``~/.pyenv``: ``versions/3.X*/bin/python3.X``, the newest patch release), then as
``python3.X`` on ``PATH``.

Without ``--wheel`` it is built first from the checkout, by the developer install's
``.venv/bin/python`` (``build`` is in the ``[test]`` extra) or else this interpreter.
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The supported versions besides the developer's (3.11, which runs the whole suite).
VERSIONS = ("3.10", "3.12", "3.13")
#: What the oldest and newest run: servers, clients, the stateless era, the types, the
#: engine, without the slow tests and the files that mostly wait on other programs (the
#: CLI's terminal sessions and help texts, remote mounts, node's interop runs, stdin of
#: every file kind, the docs' CLI commands, mypy on typed state): they exercise no other
#: Python code of ours, and would double the time (measured). The client's conformance
#: scenarios stay (7 s): from 3.12 on, handler tasks start eagerly, a path 3.11 never
#: takes, and two of those scenarios are what caught a task that ran too early there.
FULL = [
    "tests/server",
    "tests/client",
    "tests/stateless",
    "tests/types",
    "tests/engine",
    # The loop fork's contract, eager handler tasks (3.12+) included: 3.11 never runs those.
    "tests/test_backend.py",
    "-m",
    "not slow",
    "--ignore=tests/client/test_cli_answers.py",
    "--ignore=tests/client/test_docs.py",
    "--ignore=tests/client/test_interop_servers.py",
    "--ignore=tests/server/test_mount.py",
    "--ignore=tests/server/test_mount_mixed_eras.py",
    "--ignore=tests/server/test_stdio_fd_kinds.py",
    "--ignore=tests/server/test_typed_state.py",
    "--ignore=tests/client/test_cli_help_and_hints.py",
    "--ignore=tests/client/test_cli_read_prompt.py",
    "--ignore=tests/client/test_cli_config_and_arrays.py",
    "--ignore=tests/client/test_cli_first_hour.py",
]
#: What the versions between them run: a quick pass over the wire, both eras.
QUICK = ["tests/stateless", "tests/types", "tests/engine", "-m", "not slow"]
INSTALL_TIMEOUT = 600
TEST_TIMEOUT = 900


def find_python(version: str) -> Path | None:
    """The interpreter of ``version`` (``"3.12"``) on this machine, or None."""
    roots: list[Path] = []
    if shutil.which("pyenv"):
        done = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            roots.append(Path(done.stdout.strip()))
    if os.environ.get("PYENV_ROOT"):
        roots.append(Path(os.environ["PYENV_ROOT"]))
    roots.append(Path.home() / ".pyenv")
    candidates: list[Path] = []
    for root in roots:
        # 3.12.1 and 3.12.10: the newest patch release, by number.
        found = sorted(
            (root / "versions").glob(f"{version}.*/bin/python{version}"),
            key=lambda p: [int(n) for n in re.findall(r"\d+", p.parents[1].name)],
        )
        candidates.extend(reversed(found))
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(Path(on_path))
    for python in candidates:
        # A pyenv shim on PATH exists for every version it knows, installed or not: ask it.
        done = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == version:
            return python
    return None


def build_wheel(outdir: Path) -> Path:
    """mcpkit's wheel built from the checkout, in ``outdir``."""
    developer = ROOT / ".venv" / "bin" / "python"
    python = str(developer) if developer.exists() else sys.executable
    argv = [python, "-m", "build", "--wheel", "--outdir", str(outdir), str(ROOT)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(argv)}\n{done.stdout}\n{done.stderr}")
    (wheel,) = outdir.glob("mcpkit-*.whl")
    return wheel


def _logged(argv: list[str], log: Path, timeout: float, env: dict[str, str] | None = None) -> bool:
    """Run ``argv`` from the checkout, its output appended to ``log``: whether it passed."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        try:
            done = subprocess.run(
                argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            out.write(f"\nTIMEOUT after {timeout} s\n")
            return False
    return done.returncode == 0


def install(python: Path, wheel: Path, env_dir: Path, log: Path) -> bool:
    """A fresh venv at ``env_dir`` made by ``python``, with the wheel and ``[all,test]``."""
    made = _logged([str(python), "-m", "venv", str(env_dir)], log, 120)
    spec = f"{wheel}[all,test]"
    # No byte-compiling of all of [test] (mypy, playwright, ...): the tests compile what
    # they import, a fraction of it.
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile"]
    return made and _logged([*pip, "--disable-pip-version-check", spec], log, INSTALL_TIMEOUT)


def run_tests(env_dir: Path, selection: list[str], log: Path) -> bool:
    """The selection on asyncio with the venv's interpreter, the wheel's mcpkit imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(MCPKIT_TEST_BACKEND="asyncio", MCPKIT_CONFORMANCE="0")
    env["PATH"] = f"{env_dir / 'bin'}:{env.get('PATH', '')}"
    python = str(env_dir / "bin" / "python")
    where = "import mcpkit, sys; assert sys.prefix in mcpkit.__file__, mcpkit.__file__"
    if not _logged([python, "-c", where], log, 60, env):
        return False
    return _logged(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection], log, TEST_TIMEOUT, env
    )


def check(versions: list[str], wheel: Path, tmp: Path) -> list[str]:
    """Install the wheel for each version and run its selection, all concurrently: the
    versions that failed (or have no interpreter here)."""
    pythons = {v: find_python(v) for v in versions}
    missing = [v for v, python in pythons.items() if python is None]
    for version in missing:
        print(
            f"   Python {version}: not found (pyenv install {version}, or python{version} on PATH)"
        )
    found = [v for v in versions if v not in missing]
    logs = {v: tmp / f"python{v}.log" for v in found}
    envs = {v: tmp / f"venv{v}" for v in found}
    oldest, newest = min(versions, key=version_key), max(versions, key=version_key)

    def one(version: str) -> tuple[bool, float, float]:
        begun = time.monotonic()
        python = pythons[version]
        assert python is not None
        if not install(python, wheel, envs[version], logs[version]):
            return False, time.monotonic() - begun, 0.0
        installed = time.monotonic()
        selection = FULL if version in (oldest, newest) else QUICK
        passed = run_tests(envs[version], selection, logs[version])
        return passed, installed - begun, time.monotonic() - installed

    with ThreadPoolExecutor(max(1, len(found))) as pool:
        results = dict(zip(found, pool.map(one, found), strict=True))
    failed = list(missing)
    for version, (passed, install_s, test_s) in results.items():
        log = logs[version].read_text()
        summary = re.findall(r"^=* ?(\d+ (?:passed|failed|errors?)\b.*?) ?=*$", log, flags=re.M)
        print(
            f"   Python {version} ({pythons[version]}): installed in {install_s:.0f} s, "
            f"{summary[-1] if summary else 'no test summary'} (tests {test_s:.0f} s)"
        )
        if not passed:
            failed.append(version)
            print(log[-6000:])
    return failed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="mcpkit's wheel (else built from here)")
    parser.add_argument("versions", nargs="*", default=list(VERSIONS))
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpkit-pythons-") as tmp_name:
        tmp = Path(tmp_name)
        wheel = args.wheel.resolve() if args.wheel else build_wheel(tmp / "dist")
        failed = check(args.versions, wheel, tmp)
    print(f"   {time.monotonic() - started:.0f} s in all")
    if failed:
        print(f"FAILED on Python {', '.join(failed)}")
        return 1
    return 0


def version_key(version: str) -> tuple[int, ...]:
    """``"3.10"`` as ``(3, 10)``: versions in numeric order (3.9 before 3.10)."""
    return tuple(int(n) for n in version.split("."))


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)  # the checkout's src/ must not shadow the wheel
    raise SystemExit(main(sys.argv[1:]))
