"""A ``ray.data.Dataset`` as a run's dataset (needs the ``ray`` extra and the loopback cluster).

It gives the samples its JSON Lines twin gives, and a bad record is refused before any call with
the index, the field and the fix. Parquet files, the other input of large runs, need no cluster:
``tests/test_datasets_parquet.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _records import untimed

import ragqa
from ragqa.errors import DatasetError

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.slow
def test_a_ray_dataset_is_scored_on_ray_as_its_jsonl_twin_in_one_process(cluster: None) -> None:
    import ray  # the cluster fixture skips without the ray extra; it runs on loopback before Ray Data would start one

    local = ragqa.evaluate(str(DATASET), profile="local")
    spread = ragqa.evaluate(ray.data.from_items(_records()), profile="local", engine="ray", workers=2)
    bad = _records()[:4]
    bad[2] = {**bad[2], "retrieved_contexts": "one string, not a list"}
    with pytest.raises(DatasetError, match=r"index 2 \(id 'it-003'\), field 'retrieved_contexts'"):
        ragqa.evaluate(ray.data.from_items(bad), profile="local", engine="ray", workers=1)
    assert [untimed(r.model_dump(mode="json")) for r in spread.results] == [
        untimed(r.model_dump(mode="json")) for r in local.results
    ]
