"""``--engine``: the default stays in this process; ``ray`` without the extra stops with exit 2 and the fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.run.engine import RAY_MISSING, make_engine

DATASET = str(Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl")


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import ray`` fail as it does without the extra, whether Ray is installed or not."""
    monkeypatch.setitem(sys.modules, "ray", None)
    for name in ("ragqa.run.ray_engine", "ragqa.run.ray_limits"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_the_default_engine_is_this_process() -> None:
    assert make_engine(None) is None
    assert make_engine("local") is None


def test_ray_without_the_extra_names_the_install_command(no_ray: None) -> None:
    with pytest.raises(ConfigError, match=r"pip install 'ragqa\[ray\]'"):
        make_engine("ray")


def test_the_cli_exits_2_naming_the_extra_before_anything_runs(no_ray: None, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(app, ["evaluate", DATASET, "--profile", "local", "--engine", "ray", "--out", str(out)])
    assert result.exit_code == 2
    assert RAY_MISSING in result.output
    assert not out.exists() and not Path(f"{out}.partial").exists()


def test_the_python_api_raises_before_anything_runs(no_ray: None) -> None:
    with pytest.raises(ConfigError, match=r"pip install 'ragqa\[ray\]'"):
        ragqa.evaluate(DATASET, profile="local", engine="ray")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "2"], "--workers need --engine ray"),
        (["--engine", "spark"], "--engine 'spark': use one of local, ray"),
        (["--engine", "ray", "--batch-size", "0"], "--batch-size 0: give 1 or more"),
    ],
)
def test_engine_options_are_checked(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["evaluate", DATASET, "--profile", "local", *args])
    assert result.exit_code == 2
    assert message in result.output
