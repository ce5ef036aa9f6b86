"""Input guards at load: what is not text (lone surrogates) and blank chunks are refused with line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragqa.datasets import load_dataset, samples_from_records
from ragqa.errors import DatasetError


def test_a_lone_surrogate_from_a_json_escape_is_refused_with_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    good = json.dumps({"user_input": "Q", "response": "A", "retrieved_contexts": ["c"]})
    path.write_text(good + "\n" + '{"user_input": "Q", "response": "bad \\ud800 text"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"d\.jsonl line 2, field 'response': holds a lone surrogate") as raised:
        load_dataset(path)
    assert raised.value.field == "response" and raised.value.sample_id == "line 2"
    with pytest.raises(DatasetError, match="field 'retrieved_contexts': holds a lone surrogate"):
        samples_from_records([{"user_input": "Q", "retrieved_contexts": ["ok", "\udfff"]}])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"retrieved_contexts": ["first", "  "]}, "field 'retrieved_contexts': item 2 of 2 is blank"),
        ({"contexts": [""]}, "field 'contexts': item 1 of 1 is blank"),
        ({"reference_contexts": ["\n"]}, "field 'reference_contexts': item 1 of 1 is blank"),
        ({"context_chunks": [{"text": " ", "relevant": True}]}, "field 'context_chunks': chunk 1 has blank text"),
    ],
)
def test_blank_context_chunks_are_refused_at_load(tmp_path: Path, record: dict[str, object], message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "q1", "user_input": "Q", "response": "A", **record}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"d\.jsonl line 1 \(id 'q1'\), {message}"):
        load_dataset(path)
