#!/usr/bin/env python3
"""What a user does first, checked exactly as they do it (run by .ci/run, before the tests).

The developer install (``.[all,test]``) pulls in packages a user never has, so it cannot
prove that a bare ``pip install`` works. This script can, from the standard library alone:

    python3 scripts/user_paths.py readme-command N     # print the README's Nth sh block
    python3 scripts/user_paths.py readme-examples DIR  # the README's server, client and CLI
                                                        #   examples, run as written with the
                                                        #   virtual environment at DIR
    python3 scripts/user_paths.py wheel PYTHON [DIR]   # build the wheel with PYTHON (which has
                                                        #   `build`), install it alone and with
                                                        #   each extra into fresh venvs, check each;
                                                        #   keep it in DIR (other_pythons.py uses it)

tests/test_readme.py runs ``readme-examples`` against the developer's environment too.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Each extra, and the checks (scripts/installed_checks.py) a venv with only it must pass.
FLAVORS = {
    "": "bare",
    "http": "http",
    "trio": "trio",
    "otel": "otel",
    "auth": "auth",
    "redis": "redis",
    "llm": "llm",
    "granian": "granian",
    "all": "all",
}
TIMEOUT = 300


def readme_blocks(lang: str) -> list[str]:
    """The README's fenced code blocks in ``lang``, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def _run(argv: list[str], cwd: Path, stdin: int | None = None) -> str:
    done = subprocess.run(
        argv, cwd=cwd, stdin=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise SystemExit(
            f"FAILED ({done.returncode}): {' '.join(argv)}\n{done.stdout}\n{done.stderr}"
        )
    if "Traceback" in done.stderr:
        raise SystemExit(f"FAILED (traceback on stderr): {' '.join(argv)}\n{done.stderr}")
    return done.stdout


def readme_examples(env_dir: Path) -> None:
    """Save the README's server and client as it says, then run its commands as written.

    The commands name ``.venv/bin/...`` relative to where the files are saved, so a scratch
    directory gets a ``.venv`` link to ``env_dir``: nothing is rewritten.
    """
    server, client = readme_blocks("python")[:2]
    # Found by what it runs, not by its place: the README may gain sh blocks before it.
    (block,) = [b for b in readme_blocks("sh") if "python client.py" in b]
    commands = [
        line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")
    ]
    with tempfile.TemporaryDirectory(prefix="mcpkit-readme-") as tmp:
        where = Path(tmp)
        (where / "weather.py").write_text(server)
        (where / "client.py").write_text(client)
        (where / ".venv").symlink_to(env_dir.resolve(), target_is_directory=True)
        expected = {
            "client.py": "['forecast'] Paris: sunny for 3 days",
            " list ": "forecast",
            " call ": "Paris: sunny for 3 days",
        }
        for command in commands:
            out = _run(["/bin/sh", "-c", command], where)
            wanted = [text for key, text in expected.items() if key in command]
            if not wanted or wanted[0] not in out:
                raise SystemExit(f"FAILED: {command!r} printed {out!r}, expected {wanted}")
            print(f"ok: {command}")
        # The quickstart server started the way nohup, systemd or `docker run` without -i
        # start it: stdin is /dev/null, so it must end cleanly at once.
        for argv in (
            [".venv/bin/python", "weather.py"],
            [".venv/bin/mcpkit", "run", "weather.py"],
        ):
            _run(argv, where, stdin=subprocess.DEVNULL)
            print(f"ok: {' '.join(argv)} < /dev/null")


def wheel(build_python: str, keep: Path | None = None) -> None:
    """Build the wheel, then install it alone (and with each extra) into fresh venvs; a
    copy of it stays in ``keep`` if given (the other Pythons' run installs the same one)."""
    with tempfile.TemporaryDirectory(prefix="mcpkit-wheel-") as tmp:
        dist = Path(tmp) / "dist"
        _run([build_python, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)], ROOT)
        (whl,) = dist.glob("mcpkit-*.whl")
        print(f"ok: built {whl.name}")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy2(whl, keep / whl.name)

        def one(extra: str, flavor: str) -> str:
            env_dir = Path(tmp) / f"venv-{flavor}"
            venv.create(env_dir, with_pip=True)
            py = str(env_dir / "bin" / "python")
            spec = f"{whl}[{extra}]" if extra else str(whl)
            _run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", spec], ROOT)
            # Run from a scratch directory, so the checkout's src/ cannot be imported instead.
            out = _run([py, str(ROOT / "scripts" / "installed_checks.py"), flavor], Path(tmp))
            return out + f"ok: the wheel installed as {spec.split('/')[-1]} alone\n"

        # The venvs are independent and mostly wait on pip and the disk: a few at a time,
        # each one's report printed in order.
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            reports = [pool.submit(one, extra, flavor) for extra, flavor in FLAVORS.items()]
            for report in reports:
                print(report.result(), end="")


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "readme-command":
        print(readme_blocks("sh")[int(argv[1]) - 1].strip())
    elif len(argv) == 2 and argv[0] == "readme-examples":
        readme_examples(Path(argv[1]))
    elif len(argv) in (2, 3) and argv[0] == "wheel":
        wheel(argv[1], Path(argv[2]) if len(argv) == 3 else None)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)  # a user's shell has none pointing into the checkout
    main(sys.argv[1:])
