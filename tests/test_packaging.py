"""What a user meets first: the README's examples as written, the declared dependencies, the
extras, the version. (.ci/run also runs the README's first command and the wheel checks in
fresh virtual environments: scripts/user_paths.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mcpkit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import user_paths  # noqa: E402  (scripts/ is not a package)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_readme_examples_run_as_written() -> None:
    # The same run .ci/run makes in a bare install; here with the developer's environment.
    user_paths.readme_examples(Path(sys.prefix))


def test_readme_first_command_is_the_bare_install_and_main_job() -> None:
    first = user_paths.readme_blocks("sh")[0].strip()
    assert first == (
        "python3 -m venv .venv && .venv/bin/pip install -e . "
        "&& .venv/bin/python examples/demo_client.py"
    )
    ci = (ROOT / ".ci" / "run").read_text()
    assert "user_paths.py readme-command 1" in ci and "readme-examples" in ci


def test_every_import_of_the_package_is_declared() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deptry", "src"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _names(requirements: list[str]) -> frozenset[str]:
    return frozenset(r.split(";")[0].split(">")[0].split("[")[0].strip() for r in requirements)


def test_extras_say_what_they_are() -> None:
    extras = PROJECT["optional-dependencies"]
    assert set(extras) == {"http", "trio", "otel", "auth", "redis", "all", "test"}
    contents = [_names(reqs) for reqs in extras.values()]
    assert all(contents), "an empty extra"
    assert len(set(contents)) == len(contents), "two extras with the same content"
    base = _names(PROJECT["dependencies"])
    user_extras = [n for n in extras if n != "test"]
    # [all] is everything a user may want: every other user-facing extra, and more.
    for name in user_extras:
        assert _names(extras[name]) <= _names(extras["all"]), name
        assert not (_names(extras[name]) & base), f"[{name}] repeats a core dependency"
    assert "uvicorn" in _names(extras["http"]) and "trio" in _names(extras["trio"])
    assert _names(extras["auth"]) == {"pyjwt", "cryptography"}
    assert _names(extras["redis"]) == {"redis"}


def test_redis_backend_without_redis_py_says_which_extra() -> None:
    """A bare install imports mcpkit; only building a RedisBackend needs [redis]."""
    code = (
        "import sys\n"
        "sys.modules['redis'] = None\n"
        "import mcpkit\n"
        "try:\n"
        "    mcpkit.RedisBackend('redis://127.0.0.1:6379/0')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "mcpkit[redis]" in out.stdout, out.stdout + out.stderr


def test_auth_imports_without_pyjwt_and_says_which_extra() -> None:
    """A bare install imports mcpkit.auth (static tokens, introspection need nothing more);
    only building a JWTVerifier needs the [auth] extra, and its error names it."""
    code = (
        "import sys\n"
        "sys.modules['jwt'] = None\n"
        "from mcpkit.auth import JWTVerifier, StaticTokenVerifier, ResourceServer\n"
        "ResourceServer(StaticTokenVerifier({'t': ['s']}), resource='http://127.0.0.1/mcp')\n"
        "try:\n"
        "    JWTVerifier('https://as.example', 'https://rs.example/mcp')\n"
        "except ImportError as e:\n"
        "    assert 'mcpkit[auth]' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('JWTVerifier built without PyJWT')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_version_is_one_value_everywhere() -> None:
    assert "version" in PROJECT["dynamic"]
    out = subprocess.run(
        [sys.executable, "-m", "mcpkit", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == f"mcpkit {mcpkit.__version__}"
    assert mcpkit.__version__.count(".") >= 2
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {mcpkit.__version__}" in changelog or "## Unreleased" in changelog


def test_package_is_typed() -> None:
    assert (Path(mcpkit.__file__).parent / "py.typed").is_file()
    assert "Typing :: Typed" in PROJECT["classifiers"]


@pytest.mark.parametrize("module", ["mcpkit._transports._stdio", "mcpkit._http"])
def test_a_bare_install_imports_without_the_extras(module: str) -> None:
    """The modules a bare install uses import with every optional package hidden."""
    blocked = ["uvicorn", "httptools", "uvloop", "trio", "httpx2", "jsonschema", "jwt"]
    code = (
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None  # import of it raises ImportError\n"
        f"import importlib; importlib.import_module({module!r})\n"
        "import mcpkit, mcpkit.types\n"
        "[getattr(mcpkit, n) for n in mcpkit.__all__]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
