"""What a user meets first: the README's examples as written, the declared dependencies, the
extras, the version. (.ci/run also runs the README's first command and the wheel checks in
fresh virtual environments: scripts/user_paths.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
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
    assert set(extras) == {"http", "granian", "trio", "otel", "auth", "redis", "llm", "all", "test"}
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
    assert _names(extras["granian"]) == {"granian"}


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


def test_sampling_imports_without_httpx2_and_says_which_extra() -> None:
    """A bare install imports mcpkit.sampling; building a handler needs the [llm] extra."""
    code = (
        "import sys\n"
        "sys.modules['httpx2'] = None\n"
        "from mcpkit.sampling import OpenAIHandler\n"
        "try:\n"
        "    OpenAIHandler('gpt-4o', api_key='k')\n"
        "except ImportError as e:\n"
        "    assert 'mcpkit[llm]' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('OpenAIHandler built without httpx2')\n"
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


#: What a bare ``pip install mcpkit`` does not bring (h11 it does: the client's HTTP/1.1
#: framing, a core dependency since issue 42).
BLOCKED = ["uvicorn", "httptools", "uvloop", "trio", "httpx2", "jsonschema", "jwt"]


@pytest.mark.parametrize("module", ["mcpkit._transports._stdio", "mcpkit._http"])
def test_a_bare_install_imports_without_the_extras(module: str) -> None:
    """The modules a bare install uses import with every optional package hidden."""
    code = (
        "import sys\n"
        f"for name in {BLOCKED!r}:\n"
        "    sys.modules[name] = None  # import of it raises ImportError\n"
        f"import importlib; importlib.import_module({module!r})\n"
        "import mcpkit, mcpkit.types\n"
        "[getattr(mcpkit, n) for n in mcpkit.__all__]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_bare_install_client_calls_a_tool_over_http() -> None:
    """``Client("http://...")`` after a bare install: the whole call, extras hidden."""
    from tests.http._http_helpers import running

    server = mcpkit.Server("bare")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    code = (
        "import sys\n"
        f"for name in {BLOCKED!r}:\n"
        "    sys.modules[name] = None\n"
        "import anyio, mcpkit\n"
        "async def main():\n"
        "    async with mcpkit.Client(sys.argv[1]) as c:\n"
        "        r = await c.call_tool('add', {'a': 2, 'b': 3})\n"
        "        print(r.structured_content, c.protocol_version)\n"
        "anyio.run(main)\n"
    )
    with running(server.http_app()) as srv:
        out = subprocess.run(
            [sys.executable, "-c", code, srv.url], capture_output=True, text=True, timeout=60
        )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["{'result':", "5}", "2026-07-28"]


#: What tests, tools and caches leave in a checkout: never shipped in the sdist.
LEFTOVERS = (
    ".hypothesis",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "test-artifacts",
    "node_modules",
    ".venv",
)
_MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)")


def relative_links(markdown: str) -> list[str]:
    """The links of ``markdown`` (outside code) that a page elsewhere cannot follow: neither
    absolute (``https://...``) nor anchors within the page."""
    text = re.sub(r"^\s*```.*?^\s*```", "", markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in _MD_LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t, re.I)]


def _copy_with_leftovers(dest: Path) -> Path:
    """The checkout's files (no .git, no virtual environment) with a leftover of each kind
    planted, so the sdist's exclusions are tested even from a clean checkout."""
    src = dest / "mcpkit"
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", *LEFTOVERS, "dist", "build")
    )
    for leftover in (
        ".hypothesis/examples/x",
        "tests/__pycache__/x.cpython-311.pyc",
        ".pytest_cache/v/x",
        "test-artifacts/inspector/x.png",
        "tests/auth/node_modules/x/index.js",
        "src/mcpkit/__pycache__/x.cpython-311.pyc",
    ):
        (src / leftover).parent.mkdir(parents=True, exist_ok=True)
        (src / leftover).write_text("left over\n")
    return src


@pytest.mark.slow  # builds the sdist, then the wheel from it, as `python -m build` does
def test_sdist_and_wheel_ship_the_right_files_and_links(tmp_path: Path) -> None:
    src = _copy_with_leftovers(tmp_path)
    out = tmp_path / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = out.glob("mcpkit-*.tar.gz")
    (wheel,) = out.glob("mcpkit-*.whl")
    with tarfile.open(sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
        pkg_info = tar.extractfile(tar.getmember(f"{sdist.name[:-7]}/PKG-INFO"))
        assert pkg_info is not None
        sdist_meta = pkg_info.read().decode()
    shipped_leftovers = [n for n in names if set(n.split("/")) & set(LEFTOVERS)]
    assert not shipped_leftovers, shipped_leftovers
    assert not [n for n in names if n.endswith(".pyc")]
    for needed in (
        "README.md",
        "CHANGELOG.md",
        "pyproject.toml",
        "docs/index.md",
        "src/mcpkit/__init__.py",
        "src/mcpkit/py.typed",
        "tests/test_packaging.py",
    ):
        assert needed in names, f"{needed} is not in the sdist"
    with zipfile.ZipFile(wheel) as whl:
        (meta_name,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        wheel_meta = whl.read(meta_name).decode()
        assert "mcpkit/py.typed" in whl.namelist()
    for meta in (sdist_meta, wheel_meta):
        headers, _, description = meta.partition("\n\n")
        assert description.lstrip().startswith("# mcpkit"), description[:200]
        assert not relative_links(description), relative_links(description)
        urls = dict(
            line.removeprefix("Project-URL: ").split(", ", 1)
            for line in headers.splitlines()
            if line.startswith("Project-URL: ")
        )
        assert {"Documentation", "Source", "Changelog", "Issues"} <= set(urls), urls
        assert all(u.startswith("https://") for u in urls.values()), urls
        assert "pypi.org" not in urls["Documentation"] + urls["Source"]


def test_the_readme_links_absolutely_and_the_urls_agree() -> None:
    """The long description is the README: its links work on the package page."""
    readme = (ROOT / "README.md").read_text()
    assert not relative_links(readme), relative_links(readme)
    source = PROJECT["urls"]["Source"].rstrip("/")
    pointing_home = re.findall(re.escape(source) + r"/blob/main/([^)#\s]+)", readme)
    assert "docs/index.md" in pointing_home and "CHANGELOG.md" in pointing_home
    assert all((ROOT / p).exists() for p in pointing_home), pointing_home
    assert PROJECT["urls"]["Changelog"] == f"{source}/blob/main/CHANGELOG.md"
    assert PROJECT["urls"]["Documentation"] == f"{source}/blob/main/docs/index.md"


@pytest.mark.parametrize(
    ("markdown", "relative"),
    [
        ("[a](docs/x.md) [b](https://x.org/y) [c](#here)", ["docs/x.md"]),
        ("![img](docs/p.png) `[no](code.md)`\n```\n[no](block.md)\n```\n", ["docs/p.png"]),
    ],
)
def test_relative_links_are_found(markdown: str, relative: list[str]) -> None:
    assert relative_links(markdown) == relative


def test_the_readme_test_command_names_what_ci_installs() -> None:
    """The README's test command says which system packages the tests use; .ci/run
    installs the same ones on a fresh machine."""
    (block,) = [b for b in user_paths.readme_blocks("sh") if "scripts/test" in b]
    install, command = block.strip().splitlines()
    assert install.startswith("sudo apt-get install -y ")
    packages = set(install.split()[4:])
    ci = (ROOT / ".ci" / "run").read_text()
    installed_by_ci = set(re.findall(r"apt-get install -y -qq (\S+)", ci))
    assert installed_by_ci and installed_by_ci <= packages, (installed_by_ci, packages)
    assert {"chromium", "redis-server"} <= packages
    assert command.endswith("&& scripts/test")
    assert re.search(r"^\s*(?:exec\s+)?scripts/test\b", ci, re.M), "CI runs scripts/test"
