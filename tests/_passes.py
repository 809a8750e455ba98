"""Which tests can depend on the event loop (tests/conftest.py deselects the others in the
later passes of scripts/test): a static look at a test, its fixtures, and the functions of
tests/ and strings they name, for a read of the suite's backend."""

from __future__ import annotations

import inspect
import types
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: The tests found reading the backend without the ``loop_dependent`` marker (they run in
#: every pass all the same); tests/test_loop_passes.py fails while there is one.
UNMARKED = pytest.StashKey[list[str]]()


@cache
def _in_tests(filename: str) -> bool:
    """A file of tests/, but this one (whose own code names what it looks for)."""
    path = Path(filename).resolve()
    return path.is_relative_to(TESTS) and path != Path(__file__).resolve()


def code_reads_backend(
    code: types.CodeType, scope: dict[str, object], seen: dict[types.CodeType, bool]
) -> bool:
    """Whether ``code`` (or a function of tests/ it names, transitively) reads the backend."""
    if code in seen:
        return seen[code]
    seen[code] = False  # recursion guard
    found = "BACKEND" in code.co_names or any(
        isinstance(c, str) and "MCPKIT_TEST_BACKEND" in c for c in code.co_consts
    )
    for const in code.co_consts:
        if not found and isinstance(const, types.CodeType):
            found = code_reads_backend(const, scope, seen)
    for name in code.co_names:
        if found:
            break
        target = scope.get(name)
        if isinstance(target, str) and "MCPKIT_TEST_BACKEND" in target:  # a program's text
            found = True
            break
        for func in _functions_of_tests(target):
            if code_reads_backend(func.__code__, func.__globals__, seen):
                found = True
                break
    seen[code] = found
    return found


def _functions_of_tests(obj: object) -> list[types.FunctionType]:
    """The functions defined in tests/ that ``obj`` is or holds (a class's methods)."""
    candidates: list[object] = []
    if isinstance(obj, type):
        if obj.__module__.split(".")[0] == "tests":
            candidates = [getattr(v, "__func__", v) for v in list(vars(obj).values())]
    elif isinstance(obj, types.FunctionType) or hasattr(obj, "__wrapped__"):  # @cache & co
        try:
            candidates = [inspect.unwrap(obj)]  # type: ignore[arg-type]
        except ValueError:  # a cycle of __wrapped__
            candidates = []
    return [
        c
        for c in candidates
        if isinstance(c, types.FunctionType) and _in_tests(c.__code__.co_filename)
    ]


def _test_function(item: pytest.Function) -> types.FunctionType | None:
    func = item.obj
    func = getattr(getattr(func, "hypothesis", None), "inner_test", func)
    func = inspect.unwrap(getattr(func, "__func__", func))
    return func if isinstance(func, types.FunctionType) else None


def reads_backend(item: pytest.Function, seen: dict[types.CodeType, bool]) -> bool:
    funcs = [_test_function(item)]
    for name, defs in item._fixtureinfo.name2fixturedefs.items():
        # the fixture in force, and the ones it overrides when it asks for them by name
        in_force = len(defs) - 1
        while in_force > 0 and name in defs[in_force].argnames:
            in_force -= 1
        funcs += [inspect.unwrap(d.func) for d in defs[in_force:]]
    for func in funcs:
        if not isinstance(func, types.FunctionType):
            continue
        if not _in_tests(func.__code__.co_filename):
            continue
        if code_reads_backend(func.__code__, func.__globals__, seen):
            return True
    return False


def same_in_every_pass(item: pytest.Item) -> bool:
    """A plain test using no ``anyio_backend``, or an async one pinned to a backend."""
    if not isinstance(item, pytest.Function):
        return False
    func = _test_function(item)
    if func is None:
        return False
    if inspect.iscoroutinefunction(func):
        params = getattr(getattr(item, "callspec", None), "params", {})
        return "anyio_backend" in params
    return "anyio_backend" not in item.fixturenames
