"""The quick subset's collection shortcut: a slow module is left uncollected only when no test of it can be selected.

``tests/conftest.py`` skips importing :data:`conftest.SLOW_MODULES` under a ``-m`` expression that
is false for every ``slow`` test; these checks pin that rule, so that the shortcut never drops a
test the expression would have run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT_CONFTEST = Path(__file__).with_name("conftest.py")


def _root_conftest(config: pytest.Config) -> Any:
    """``tests/conftest.py`` as pytest loaded it (``import conftest`` may find another folder's conftest)."""
    return next(p for p in config.pluginmanager.get_plugins() if getattr(p, "__file__", None) == str(ROOT_CONFTEST))


class _Config:
    def __init__(self, markexpr: str) -> None:
        self.markexpr = markexpr

    def getoption(self, name: str, default: Any = None) -> Any:
        assert name == "markexpr"
        return self.markexpr


@pytest.mark.parametrize(
    ("markexpr", "skips"),
    [
        ("not slow", True),
        ("not slow and not live", True),
        ("(not slow) and (live or not live)", True),
        ("not (slow or live)", True),
        ("", False),
        ("slow", False),
        ("live or not slow", False),
        ("not live", False),
        ("slow and live and not asyncio", False),  # a slow live test without asyncio matches
        ("not slow or not live", False),
        ("not slow and foo(x=1)", False),  # marks with arguments: not read, collected as usual
        ("not slow and", False),  # not an expression pytest reads: collected, pytest reports it
    ],
)
def test_a_slow_module_is_skipped_only_when_the_expression_rejects_every_slow_test(
    markexpr: str, skips: bool, pytestconfig: pytest.Config
) -> None:
    conftest = _root_conftest(pytestconfig)
    config: Any = _Config(markexpr)
    assert conftest._never_selects_slow(config) is skips
    slow_module = Path("tests/docs") / f"{sorted(conftest.SLOW_MODULES)[0]}.py"
    expected = True if skips else None
    assert conftest.pytest_ignore_collect(slow_module, config) is expected
    assert conftest.pytest_ignore_collect(Path("tests/test_quick_subset.py"), config) is None
