"""Parquet datasets (``ragqa evaluate traces.parquet``, any engine, needs pyarrow): the samples of the JSON Lines twin.

A bad record is refused before any call with the row, the field and the fix. The ``ray.data.Dataset``
input, which needs a Ray cluster, is checked in ``tests/run/test_ray_inputs.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _records import untimed
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.datasets import PARQUET_MISSING, load_dataset
from ragqa.errors import DatasetError, MissingExtraError

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]


def _parquet(path: Path, records: list[dict[str, Any]]) -> Path:
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the ray extra installs it)")
    import pyarrow.parquet as pq

    columns = list(dict.fromkeys(key for record in records for key in record))  # pyarrow infers from row 1 only
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in columns} for r in records]), path, row_group_size=16)
    return path


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, [*args, "--no-progress"], env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_a_parquet_file_holds_the_samples_of_its_jsonl_twin(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "it.parquet", _records())
    assert load_dataset(path) == load_dataset(DATASET)


def test_ragqa_evaluate_scores_a_parquet_file_as_its_jsonl_twin(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "it.parquet", _records())
    runs = {}
    for name, data in (("jsonl", DATASET), ("parquet", path)):
        out = tmp_path / f"{name}.jsonl"
        result = _cli("evaluate", str(data), "--profile", "local", "--out", str(out))
        assert result.exit_code == 0, result.output
        header, *rows = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
        runs[name] = (header["dataset_fingerprint"], [untimed(r) for r in rows])
    assert runs["parquet"] == runs["jsonl"]  # the same samples (fingerprint) and the same records


def test_an_unknown_parquet_column_is_refused_naming_the_column_and_the_fix(tmp_path: Path) -> None:
    records = _records()[:5]
    for record in records:
        record["respnse"] = record.pop("response")
    path = _parquet(tmp_path / "bad.parquet", records)
    with pytest.raises(DatasetError, match=r"field 'respnse', 5 records \(row 1 \(id 'it-001'\)") as caught:
        load_dataset(path)
    assert "--column-map respnse=response" in str(caught.value)
    result = _cli("evaluate", str(path), "--profile", "local", "--out", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2
    assert "Did you mean 'response'?" in result.output
    assert not (tmp_path / "r.jsonl").exists()


def test_a_bad_parquet_row_is_refused_naming_the_row(tmp_path: Path) -> None:
    records = _records()[:5]
    records[3]["id"] = "it-001"
    path = _parquet(tmp_path / "bad.parquet", records)
    with pytest.raises(DatasetError, match=r"row 4 \(id 'it-001'\).*row 1") as caught:
        load_dataset(path)
    assert caught.value.sample_id == "it-001"


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _parquet(tmp_path / "it.parquet", _records()[:3])
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails as it does without pyarrow
    with pytest.raises(MissingExtraError, match=r"pip install 'ragqa\[ray\]'") as caught:
        load_dataset(path)
    assert caught.value.extra == "ray"
    result = _cli("evaluate", str(path), "--profile", "local")
    assert result.exit_code == 2
    assert PARQUET_MISSING in " ".join(result.output.split())
