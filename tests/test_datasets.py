import json
import math
from pathlib import Path

import pytest
from factories import nli_answer

from ragqa.datasets import load_dataset, parse_column_map, samples_from_records
from ragqa.errors import DatasetError, SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.render.records import result_record
from ragqa.schema import ContextChunk
from ragqa.testing import ScriptedJudge, make_sample

ROOT = Path(__file__).resolve().parent.parent
IT_HELPDESK = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, *records: object, name: str = "data.jsonl") -> Path:
    return _write(tmp_path, name, "\n".join(json.dumps(r) for r in records) + "\n")


# -- formats ---------------------------------------------------------------------------------------


def test_jsonl_ragas_names_and_default_ids(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        {"id": "q1", "user_input": "Q?", "response": "A.", "retrieved_contexts": ["c1", "c2"], "reference": "R"},
        {"user_input": "Q2?", "response": "A2.", "reference_contexts": ["g"], "metadata": {"k": 1}},
    )
    # a blank line in the middle is skipped but still counts for line numbers
    path.write_text(path.read_text().replace("\n", "\n\n", 1))
    s1, s2 = load_dataset(path)
    assert (s1.id, s1.user_input, s1.retrieved_contexts, s1.reference) == ("q1", "Q?", ["c1", "c2"], "R")
    assert s2.id == "line 3"
    assert s2.reference_contexts == ["g"] and s2.metadata == {"k": 1}


def test_json_list_and_samples_object(tmp_path: Path) -> None:
    records = [{"user_input": "Q?", "response": "A."}, {"id": 7, "user_input": "Q2?", "response": "B."}]
    as_list = load_dataset(_write(tmp_path, "a.json", json.dumps(records)))
    as_object = load_dataset(_write(tmp_path, "b.json", json.dumps({"samples": records})))
    assert [s.id for s in as_list] == ["item 1", "7"]  # integer ids become strings
    assert [s.response for s in as_object] == ["A.", "B."]


def test_csv_list_columns_as_json_and_empty_cells_absent(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "d.csv",
        "id,user_input,response,retrieved_contexts,reference,metadata\n"
        'a,"Q, with comma?",A.,"[""c1"", ""c2""]",,"{""team"": ""it""}"\n'
        ',Q2?,"multi\nline",[],R2,\n',
    )
    a, b = load_dataset(path)
    assert a.id == "a" and a.user_input == "Q, with comma?" and a.retrieved_contexts == ["c1", "c2"]
    assert a.reference is None and a.metadata == {"team": "it"}
    assert b.id == "row 2" and b.response == "multi\nline" and b.retrieved_contexts == [] and b.reference == "R2"


def test_format_override_and_unknown_extension(tmp_path: Path) -> None:
    path = _write(tmp_path, "data.txt", json.dumps({"user_input": "Q", "response": "A"}) + "\n")
    with pytest.raises(DatasetError, match=r"data\.txt.*extension '\.txt'.*jsonl"):
        load_dataset(path)
    assert load_dataset(path, fmt="jsonl")[0].response == "A"


def test_shipped_it_helpdesk_dataset_loads() -> None:
    samples = load_dataset(IT_HELPDESK)
    assert len(samples) == 60
    assert len({s.id for s in samples}) == 60
    assert all(s.user_input and s.response and s.reference and s.retrieved_contexts for s in samples)
    assert sum(s.reference_contexts is None for s in samples) == 9
    assert not any("【" in (s.response or "") for s in samples)  # citation markers stripped
    assert samples[0].metadata["accuracy_llm"] == 2 and samples[0].metadata["retrieval_hit_at_1"] is True


def test_shipped_dataset_matches_converter_output() -> None:
    """The converter reproduces the shipped file (only when the raw CSV is beside the clone)."""
    raw = ROOT.parent / "shared" / "data" / "trulens_snowflake_it_rag" / "cortex_eval_df_with_trulens_scores.csv"
    if not raw.exists():
        pytest.skip("raw TruLens CSV not available")
    import importlib.util

    spec = importlib.util.spec_from_file_location("convert_trulens", ROOT / "scripts" / "convert_trulens.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = [json.dumps(s, ensure_ascii=False) for s in module.convert(raw)]
    assert IT_HELPDESK.read_text(encoding="utf-8").splitlines() == lines


# -- aliases and column map ---------------------------------------------------------------------


def test_ragas_v01_aliases(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        {"question": "Q?", "answer": "A.", "contexts": ["c"], "ground_truth": "R"},
        {"question": "Q?", "answer": "A.", "contexts": ["c"], "ground_truths": ["R1", "R2"]},
    )
    a, b = load_dataset(path)
    assert (a.user_input, a.response, a.retrieved_contexts, a.reference) == ("Q?", "A.", ["c"], "R")
    assert b.reference == "R1\nR2"


def test_promptfoo_names(tmp_path: Path) -> None:
    chunks = [{"text": "Python is high-level.", "relevant": True}, {"text": "Ruby, 1995.", "relevant": False}]
    path = _jsonl(
        tmp_path,
        {"query": "Q?", "context": "Paris is the capital.", "response": "A", "noiseContext": "Rome has pasta."},
        {"query": "Q?", "contextChunks": chunks, "response": "A"},
    )
    a, b = load_dataset(path)
    assert a.user_input == "Q?" and a.retrieved_contexts == ["Paris is the capital."]
    assert a.noise_context == "Rome has pasta."
    assert b.context_chunks == [
        ContextChunk(text="Python is high-level.", relevant=True),
        ContextChunk(text="Ruby, 1995.", relevant=False),
    ]
    assert b.contexts() == ["Python is high-level.", "Ruby, 1995."]


def test_promptfoo_context_string_in_csv_is_one_chunk(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.csv", 'query,context,response\nQ?,"Plain text, not JSON",A\nQ2?,"[""a"", ""b""]",B\n')
    a, b = load_dataset(path)
    assert a.retrieved_contexts == ["Plain text, not JSON"]
    assert b.retrieved_contexts == ["a", "b"]


def test_column_map_applied_before_aliases(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.csv", 'key,q,bot_answer,docs\nk1,Q?,A.,"[""c""]"\n')
    (s,) = load_dataset(path, column_map={"key": "id", "q": "question", "bot_answer": "response", "docs": "contexts"})
    assert (s.id, s.user_input, s.response, s.retrieved_contexts) == ("k1", "Q?", "A.", ["c"])


def test_column_map_in_the_ragas_direction_is_explained(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": "Q?", "response": "A"})
    with pytest.raises(DatasetError, match=r"user_input=q: 'q' is not a sample field.*write q=user_input"):
        load_dataset(path, column_map={"user_input": "q"})


def test_column_map_target_typo_and_unused_column(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": "Q?", "response": "A"})
    with pytest.raises(DatasetError, match=r"'user_inptu' is not a sample field\. Did you mean 'user_input'"):
        load_dataset(path, column_map={"q": "user_inptu"})
    with pytest.raises(DatasetError, match=r"renames 'qq', but no record has that field"):
        load_dataset(path, column_map={"q": "user_input", "qq": "reference"})


def test_parse_column_map() -> None:
    assert parse_column_map("q=user_input, docs = retrieved_contexts,") == {
        "q": "user_input",
        "docs": "retrieved_contexts",
    }
    with pytest.raises(DatasetError, match="'docs' is not column=field"):
        parse_column_map("q=user_input,docs")


# -- errors name the file, the line/row/id, the field and the fix ---------------------------------


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    lines = [json.dumps({"user_input": "Q", "response": "A"})] * 6 + ['{"user_input": "Q" "response": "A"}']
    path = _write(tmp_path, "bad.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert "bad.jsonl line 7" in message and "not valid JSON" in message and "one JSON object" in message
    assert info.value.sample_id == "line 7"


def test_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.jsonl", '["a", "b"]\n')
    with pytest.raises(DatasetError, match=r"d\.jsonl line 1: expected a JSON object, got a list"):
        load_dataset(path)


def test_csv_list_column_not_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.csv", "id,user_input,retrieved_contexts\nq1,Q?,[ok]\nq2,Q?,first chunk; second\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert "d.csv row 1 (id 'q1'), field 'retrieved_contexts': not valid JSON" in message
    assert '["first chunk", "second chunk"]' in message
    assert (info.value.sample_id, info.value.field) == ("q1", "retrieved_contexts")


def test_unknown_field_did_you_mean(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"user_input": "Q"}, {"user_input": "Q", "retrived_contexts": ["c"]})
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert "data.jsonl line 2, field 'retrived_contexts': unknown field" in message
    assert "Did you mean 'retrieved_contexts'" in message and "metadata" in message
    assert "--column-map retrived_contexts=retrieved_contexts" in message


def test_wrong_types_name_field_and_expectation(tmp_path: Path) -> None:
    cases = [
        ({"id": "x", "response": 42}, "field 'response': expected a string, got a number 42"),
        (
            {"id": "x", "retrieved_contexts": "one chunk"},
            "field 'retrieved_contexts': expected a list of strings, got a string; write it as [\"one chunk\"]",
        ),
        ({"id": "x", "contexts": ["a", 3]}, "field 'contexts': expected a list of strings, got a list of 2"),
        (
            {"id": "x", "contextChunks": [{"text": "t"}]},
            "field 'contextChunks': wrong type at 0.relevant: Field required",
        ),
        ({"id": ["x"]}, "field 'id': expected a string or an integer"),
        ({"id": "x", "metadata": "not an object"}, "field 'metadata': wrong type"),
    ]
    for record, expected in cases:
        path = _jsonl(tmp_path, record)
        with pytest.raises(DatasetError) as info:
            load_dataset(path)
        assert expected in str(info.value), str(info.value)
        assert "data.jsonl line 1" in str(info.value)


def test_alias_and_field_both_given(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"question": "Q", "user_input": "Q again"})
    with pytest.raises(DatasetError, match=r"both 'question' and 'user_input' give 'user_input'"):
        load_dataset(path)


def test_duplicate_ids(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"id": "a"}, {"id": "b"}, {"id": "a"})
    with pytest.raises(DatasetError, match=r"line 3 \(id 'a'\), field 'id': id 'a' is also used by line 1"):
        load_dataset(path)


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match="holds no sample"):
        load_dataset(_write(tmp_path, "empty.jsonl", "\n\n"))
    with pytest.raises(DatasetError, match=r"expected a list of sample objects.*got an object with keys rows"):
        load_dataset(_write(tmp_path, "d.json", '{"rows": []}'))
    with pytest.raises(DatasetError, match=r"d2\.json line 2: not valid JSON"):
        load_dataset(_write(tmp_path, "d2.json", '[\n{"user_input": }]'))
    with pytest.raises(DatasetError, match=r"d\.csv row 1: has 2 cells but the header has 3 columns"):
        load_dataset(_write(tmp_path, "d.csv", "user_input,response,reference\nQ,A\n"))
    with pytest.raises(DatasetError, match="repeated column name"):
        load_dataset(_write(tmp_path, "e.csv", "user_input,user_input\nQ,A\n"))


def test_dataset_error_is_a_sample_error() -> None:
    assert issubclass(DatasetError, SampleError)


# -- DataFrame-style records --------------------------------------------------------------------


class _Array:
    """Stands in for a numpy array cell (what pandas gives for list columns read from parquet)."""

    def __init__(self, items: list[str]) -> None:
        self.items = items

    def tolist(self) -> list[str]:
        return list(self.items)


def test_samples_from_records_pandas_conventions() -> None:
    records = [
        {"question": "Q?", "answer": "A.", "contexts": _Array(["c1"]), "ground_truth": float("nan")},
        {"id": 12, "question": "Q2?", "answer": "B.", "contexts": ["c2"], "ground_truth": "R"},
    ]
    a, b = samples_from_records(records)
    assert a.id == "index 0" and a.retrieved_contexts == ["c1"] and a.reference is None
    assert b.id == "12" and b.reference == "R"
    with pytest.raises(DatasetError, match=r"^index 1, field 'answr': unknown field\. Did you mean 'answer'"):
        samples_from_records([{"question": "Q"}, {"answr": "A"}])


# -- results out --------------------------------------------------------------------------------


async def test_results_jsonl_one_line_per_sample_and_metric(tmp_path: Path) -> None:
    good = ScriptedJudge(
        "good",
        {"statements": [{"statements": ["a", "b"]}, {"statements": []}], "nli": [nli_answer(1, 0)]},
    )
    bad = ScriptedJudge("bad", {})  # every call fails: excluded with its step and cause
    samples = [make_sample(id="s1"), make_sample(id="s2")]
    evaluator = PanelEvaluator([good, bad], [Faithfulness(), Hallucination()])
    report = await evaluator.evaluate(samples)
    out = tmp_path / "results.jsonl"
    report.to_jsonl(out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4
    assert [(r["sample_id"], r["metric"]) for r in lines] == [
        ("s1", "faithfulness"),
        ("s1", "hallucination"),
        ("s2", "faithfulness"),
        ("s2", "hallucination"),
    ]
    first = lines[0]
    assert first["direction"] == "higher" and first["aggregate"]["value"] == 0.5
    assert first["aggregate"]["n_failed"] == 1 and first["aggregate"]["strategy"] == "mean"
    good_row, bad_row = first["judges"]
    assert good_row["judge_id"] == "good" and good_row["score"] == 0.5 and good_row["failure"] is None
    assert good_row["details"]["statements"] == ["a", "b"] and "usage" in good_row and "latency_s" in good_row
    assert bad_row["score"] is None
    assert bad_row["failure"]["step"] == "statements" and bad_row["failure"]["error_type"] == "JudgeOutputError"
    # no statements -> NaN, written as null (strict JSON)
    assert lines[2]["judges"][0]["score"] is None and lines[2]["aggregate"]["value"] is None
    assert "NaN" not in out.read_text(encoding="utf-8")
    assert math.isnan(report.results[2].aggregate.value)
    assert result_record(report.results[1])["direction"] == "lower"
