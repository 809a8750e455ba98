"""Every Python the package declares is tested: CI (``.ci/run``) runs part of the suite on
each supported version besides the developer's through ``scripts/other_pythons.py``, and
that script's versions, pyproject.toml's classifiers and ``requires-python``, and the
README's sentence name the same versions. Its interpreter lookup runs here for real."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import other_pythons  # noqa: E402  (scripts/ is not a package)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the developer install runs 3.11
    import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DEVELOPER = f"{sys.version_info.major}.{sys.version_info.minor}"


def _declared() -> list[str]:
    prefix = "Programming Language :: Python :: "
    found = [c.removeprefix(prefix) for c in PROJECT["classifiers"] if c.startswith(prefix)]
    return sorted((v for v in found if re.fullmatch(r"3\.\d+", v)), key=other_pythons.version_key)


def test_the_script_covers_every_declared_version_but_the_developers() -> None:
    declared = _declared()
    assert declared[0] == "3.10" and PROJECT["requires-python"] == ">=3.10", declared
    assert sorted([*other_pythons.VERSIONS, DEVELOPER], key=other_pythons.version_key) == declared


def test_the_readme_names_the_range_it_is_tested_on() -> None:
    declared = _declared()
    readme = (ROOT / "README.md").read_text()
    assert f"Python {declared[0]}\N{EN DASH}{declared[-1]}, each tested in CI" in readme


def test_ci_runs_it_on_the_wheel_of_the_wheel_checks() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r'user_paths\.py wheel \.venv/bin/python "\$wheel_dir"', ci), ci
    assert re.search(r'other_pythons\.py --wheel "\$\(echo "\$wheel_dir"/mcpkit-\*\.whl\)"', ci)
    # Before the suite: a version that fails stops the run (set -e) with its log shown.
    assert ci.index("other_pythons.py") < ci.index("scripts/test -q")


@pytest.mark.parametrize("version", other_pythons.VERSIONS)
def test_each_interpreter_is_found_and_is_that_version(version: str) -> None:
    python = other_pythons.find_python(version)
    assert python is not None, f"no Python {version} here: pyenv install {version}"
    assert python.name == f"python{version}", python


def test_an_unknown_version_is_not_found() -> None:
    # No shim or stray binary stands in for a version that is not installed.
    assert other_pythons.find_python("3.99") is None
