"""``ragqa config show``'s resolved panel shows the values in effect, not nulls."""

from __future__ import annotations

from pathlib import Path

import yaml

from ragqa.settings import DEFAULT_EMBEDDING_BATCH, DEFAULT_STRUCTURED_OUTPUT, Settings, load_settings, render_settings


def _panel(settings: Settings) -> dict:
    docs = list(yaml.safe_load_all(render_settings(settings)))
    return docs[1]


def test_remote_models_show_default_timeout_structured_output_and_batch(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(
        "spring:\n  ai:\n    openai:\n      api-key: sk-test\n"
        "    chat-models:\n      list:\n        - id: a\n        - id: b\n          options: {timeout: 5s}\n"
        "    embedding-models:\n      list:\n        - id: e\n",
        encoding="utf-8",
    )
    panel = _panel(load_settings(tmp_path, config_file=config, environ={}))
    a, b = panel["judges"]
    assert a["options"]["timeout"] == "1m" and a["options"]["structured-output"] == DEFAULT_STRUCTURED_OUTPUT
    assert b["options"]["timeout"] == "5s"
    (e,) = panel["embedders"]
    assert e["options"]["batch-size"] == DEFAULT_EMBEDDING_BATCH and e["options"]["timeout"] == "1m"


def test_local_models_show_only_what_applies_to_them(tmp_path: Path) -> None:
    panel = _panel(load_settings(tmp_path, ["local"], environ={}))
    for model in [*panel["judges"], *panel["embedders"]]:
        assert model["provider"] == "local"
        assert not {"base-url", "api-key", "retry", "limits", "price"} & set(model)
        assert model["options"] == {"model": model["model"]}
