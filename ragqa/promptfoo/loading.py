"""Reading a promptfoo-style file into cases: structure, templates, file references, sample fields.

Loading calls no judge and needs no panel: it checks the file's shape and builds one
:class:`PromptfooCase` (a metric spec, a sample, a threshold and a policy) per (test, assertion).
Whether each sample holds what its metric needs is checked once, against the panel, by
:func:`ragqa.promptfoo.running.check_suite`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragqa.errors import ConfigError
from ragqa.promptfoo.mapping import skip_reason, spec_for

if TYPE_CHECKING:
    from ragqa.assertions import Policy
    from ragqa.metrics.base import Metric
    from ragqa.schema import Sample

__all__ = ["PromptfooCase", "PromptfooSuite", "load_suite", "render_templates", "split_settings_files"]

_IGNORED_TOP = {
    "providers": "ragqa scores the outputs given in the file and calls no provider",
    "prompts": "ragqa scores the outputs given in the file and renders no prompt",
}
_KNOWN_TOP = {"description", "tests", "defaultTest"}
_TEST_KEYS = {"description", "vars", "assert", "output", "metadata", "options", "threshold"}
_ASSERT_KEYS = {"type", "value", "threshold", "config", "contextTransform", "metric", "weight", "provider"}
_WHOLE_TEMPLATE = re.compile(r"^\s*\{\{\s*([A-Za-z_][\w.]*)\s*\}\}\s*$")
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


@dataclass(frozen=True)
class PromptfooCase:
    """One assertion of one test, ready to score.

    Attributes:
        test_index: 1-based index of the test in the file.
        test_name: the test's ``description``, else ``test <index>: <query>``.
        assertion_index: 1-based index of the assertion within the test (``defaultTest`` ones first).
        type: the promptfoo assertion type.
        metric: the ragqa metric that scores it (built from its spec over ``ragqa.metric-options``).
        sample: the sample built from the test's vars and the assertion (not yet checked against
            the metric: :func:`ragqa.promptfoo.running.check_suite` does that once).
        threshold: the explicit threshold, or ``None`` (then configured, else the default).
        default_threshold: promptfoo's default for the type; ``None`` for ``ragqa:<metric>``
            (then the metric's own default applies).
        policy: the panel policy.
    """

    test_index: int
    test_name: str
    assertion_index: int
    type: str
    metric: Metric
    sample: Sample
    threshold: float | None
    default_threshold: float | None
    policy: Policy = "aggregate"

    @property
    def name(self) -> str:
        """``[test] name :: type``, the case's display and JUnit name."""
        return f"[{self.test_index}] {self.test_name} :: {self.type}"

    @property
    def where(self) -> str:
        """The assertion's place in the file, ``tests[i].assert[j]`` (0-based, ``defaultTest`` ones first)."""
        return f"tests[{self.test_index - 1}].assert[{self.assertion_index - 1}]"


@dataclass
class PromptfooSuite:
    """A loaded file: its cases and the notes about what was ignored."""

    path: Path
    cases: list[PromptfooCase]
    n_tests: int
    notes: list[str] = field(default_factory=list)


def _read_ref(value: Any, base: Path, where: str) -> Any:
    if not (isinstance(value, str) and value.startswith("file://")):
        return value
    target = Path(value[len("file://") :])
    target = target if target.is_absolute() else base / target
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {value!r}: {exc.strerror}", key=where) from exc
    if target.suffix in (".json", ".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where}: {value!r} is not valid YAML/JSON: {exc}", key=where) from exc
    return text


def _lookup(vars_: Mapping[str, Any], path: str, where: str) -> Any:
    value: Any = vars_
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            raise ConfigError(f"{where}: template {{{{{path}}}}} names no var (known: {', '.join(vars_)})", key=where)
    return value


def render_templates(value: Any, vars_: Mapping[str, Any], where: str) -> Any:
    """Fill ``{{var}}`` templates in ``value`` (recursively in lists and mappings).

    A string that is a single template becomes the var's value with its type (a list stays a
    list); templates inside longer strings are replaced by the var's text (JSON for non-strings).

    Raises:
        ConfigError: when a template names no var.
    """
    if isinstance(value, str):
        whole = _WHOLE_TEMPLATE.match(value)
        if whole:
            return _lookup(vars_, whole.group(1), where)

        def one(m: re.Match[str]) -> str:
            found = _lookup(vars_, m.group(1), where)
            return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)

        return _TEMPLATE.sub(one, value)
    if isinstance(value, list):
        return [render_templates(v, vars_, where) for v in value]
    if isinstance(value, Mapping):
        return {k: render_templates(v, vars_, where) for k, v in value.items()}
    return value


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping, not {type(value).__name__}", key=where)
    return dict(value)


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list, not {type(value).__name__}", key=where)
    return value


def _contexts(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where} must be a string or a list of strings", key=where)


def _chunks(value: Any, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if isinstance(value, str):
        import yaml

        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where}: not a list of {{text, relevant}} chunks: {exc}", key=where) from exc
    if not isinstance(value, list) or not all(
        isinstance(c, Mapping) and isinstance(c.get("text"), str) and isinstance(c.get("relevant"), bool) for c in value
    ):
        raise ConfigError(f"{where} must be a list of {{text: str, relevant: bool}} chunks", key=where)
    return [{"text": c["text"], "relevant": c["relevant"]} for c in value]


def _dig(root: Mapping[str, Any], expr: str, where: str) -> Any:
    path = expr.strip()
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", path):
        raise ConfigError(
            f"{where}: contextTransform {expr!r} is not supported; ragqa accepts a dotted path such as "
            "'output.context' (no JavaScript)",
            key=where,
        )
    if not path.startswith(("output", "vars")):
        path = f"output.{path}"
    value: Any = root
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise ConfigError(f"{where}: contextTransform {expr!r} finds nothing at {part!r}", key=where)
        value = value[part]
    return value


def _response(output: Any, where: str) -> str | None:
    if output is None or isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        for key in ("response", "answer", "output", "text"):
            if isinstance(output.get(key), str):
                return str(output[key])
        raise ConfigError(
            f"{where}: a mapping output needs a 'response', 'answer', 'output' or 'text' string", key=where
        )
    return str(output)


def _threshold(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(float(value)):
        raise ConfigError(f"{where}.threshold must be a number", key=f"{where}.threshold")
    return float(value)


def _build_case(
    *,
    test_index: int,
    test_name: str,
    assertion_index: int,
    assertion: Mapping[str, Any],
    vars_: Mapping[str, Any],
    output: Any,
    metadata: Mapping[str, Any],
    base: Path,
    notes: list[str],
    metric_options: Mapping[str, Mapping[str, Any]] | None,
) -> PromptfooCase | None:
    """One assertion of a test as a case, or ``None`` (with a note) for a type ragqa skips (:data:`SKIPPED_TYPES`)."""
    from ragqa.assertions import parse_policy
    from ragqa.schema import ContextChunk, Sample

    where = f"tests[{test_index - 1}].assert[{assertion_index - 1}]"
    kind = assertion.get("type")
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"{where}.type is required (e.g. context-faithfulness)", key=f"{where}.type")
    skipped = skip_reason(kind)
    if skipped is not None:
        notes.append(f"{where}: assertion type {kind!r} skipped: {skipped}")
        return None
    for key in assertion:
        if key not in _ASSERT_KEYS:
            notes.append(f"{where}: ignored key {key!r}")
    if "provider" in assertion:
        notes.append(f"{where}: 'provider' ignored: every judge of the panel grades (pick judges in the settings)")
    config = render_templates(_mapping(assertion.get("config"), f"{where}.config"), vars_, f"{where}.config")
    value = render_templates(_read_ref(assertion.get("value"), base, f"{where}.value"), vars_, f"{where}.value")
    spec, mapped = spec_for(kind, config, where, value)
    try:
        metric = spec.build(defaults=metric_options)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}", key=where) from exc
    policy = config.get("policy", "aggregate")
    parse_policy(policy, key=f"{where}.config.policy")

    contexts = _contexts(vars_.get("context"), f"tests[{test_index - 1}].vars.context")
    if "contextTransform" in assertion:
        root = {"output": output, "vars": dict(vars_)}
        contexts = _contexts(_dig(root, str(assertion["contextTransform"]), where), f"{where}.contextTransform")
    chunks = _chunks(config.get("contextChunks"), f"{where}.config.contextChunks")
    if chunks is None:
        chunks = _chunks(vars_.get("contextChunks"), f"tests[{test_index - 1}].vars.contextChunks")
    noise = config.get("noiseContext")
    if noise is not None and not isinstance(noise, str):
        raise ConfigError(f"{where}.config.noiseContext must be a string", key=f"{where}.config.noiseContext")

    fields: dict[str, Any] = {
        "id": test_name,
        "user_input": vars_.get("query"),
        "response": _response(output, f"tests[{test_index - 1}].output"),
        "metadata": {"promptfoo_test": test_index, "promptfoo_assert": assertion_index, **metadata},
    }
    if mapped is None or mapped.value_is_reference:
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}.value (the ground truth) must be a string", key=f"{where}.value")
        fields["reference"] = value if value is not None else vars_.get("reference")
    if chunks is not None:
        # labelled chunks replace the plain context (promptfoo ignores noiseContext with chunks too)
        fields["context_chunks"] = [ContextChunk(**c) for c in chunks]
    else:
        fields["retrieved_contexts"] = contexts
        if metric.name == "noise_sensitivity":
            fields["noise_context"] = noise
    if not isinstance(fields["user_input"], str | None):
        raise ConfigError(f"tests[{test_index - 1}].vars.query must be a string", key="vars.query")
    sample = Sample(**fields)
    return PromptfooCase(
        test_index=test_index,
        test_name=test_name,
        assertion_index=assertion_index,
        type=kind,
        metric=metric,
        sample=sample,
        threshold=_threshold(assertion.get("threshold"), where),
        default_threshold=mapped.default_threshold if mapped is not None else None,
        policy=policy,
    )


def load_suite(path: str | Path, *, metric_options: Mapping[str, Mapping[str, Any]] | None = None) -> PromptfooSuite:
    """Read a promptfoo-style file into cases; no judge is called.

    Args:
        path: the YAML (or JSON) file.
        metric_options: default options per metric name (``ragqa.metric-options``), under each
            assertion's own options.

    Returns:
        The suite: one case per (test, assertion), and notes on ignored keys.

    Raises:
        ConfigError: the file is unreadable or malformed, an assertion type is unsupported, a
            template names no var, a policy is invalid (the key names the place, e.g.
            ``tests[2].assert[0].type``).
    """
    import yaml

    file = Path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror}", key=None) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file} is not valid YAML: {exc}", key=None) from exc
    doc = _mapping(raw, str(file))
    base = file.parent
    notes: list[str] = []
    for key in doc:
        if key in _IGNORED_TOP:
            notes.append(f"'{key}' ignored: {_IGNORED_TOP[key]}")
        elif key not in _KNOWN_TOP:
            notes.append(f"top-level key {key!r} ignored")
    default = _mapping(doc.get("defaultTest"), "defaultTest")
    default_vars = _mapping(_read_ref(default.get("vars"), base, "defaultTest.vars"), "defaultTest.vars")
    default_asserts = _list(default.get("assert"), "defaultTest.assert")
    tests = _list(_read_ref(doc.get("tests"), base, "tests"), "tests")
    if not tests:
        raise ConfigError(f"{file} has no tests (expected `tests: [{{vars: ..., assert: [...]}}]`)", key="tests")
    cases: list[PromptfooCase] = []
    for ti, raw_test in enumerate(tests, 1):
        test = _mapping(raw_test, f"tests[{ti - 1}]")
        for key in test:
            if key not in _TEST_KEYS:
                notes.append(f"tests[{ti - 1}]: ignored key {key!r}")
        if "threshold" in test:
            notes.append(f"tests[{ti - 1}]: test-level 'threshold' ignored; each assertion passes on its own")
        vars_raw = _mapping(_read_ref(test.get("vars"), base, f"tests[{ti - 1}].vars"), f"tests[{ti - 1}].vars")
        vars_ = {**default_vars, **vars_raw}
        vars_ = {k: _read_ref(v, base, f"tests[{ti - 1}].vars.{k}") for k, v in vars_.items()}
        query = vars_.get("query")
        shown = f": {query if len(query) <= 60 else query[:57] + '...'}" if isinstance(query, str) else ""
        name = str(test.get("description") or f"test {ti}{shown}")
        output = test.get("output", default.get("output"))
        if output is None:
            output = vars_.get("response", vars_.get("output"))
        output = _read_ref(output, base, f"tests[{ti - 1}].output")
        asserts = [*default_asserts, *_list(test.get("assert"), f"tests[{ti - 1}].assert")]
        if not asserts:
            notes.append(f"tests[{ti - 1}] ({name}) has no assertion")
        metadata = _mapping(test.get("metadata"), f"tests[{ti - 1}].metadata")
        for ai, assertion in enumerate(asserts, 1):
            case = _build_case(
                test_index=ti,
                test_name=name,
                assertion_index=ai,
                assertion=_mapping(assertion, f"tests[{ti - 1}].assert[{ai - 1}]"),
                vars_=vars_,
                output=output,
                metadata=metadata,
                base=base,
                notes=notes,
                metric_options=metric_options,
            )
            if case is not None:
                cases.append(case)
    return PromptfooSuite(path=file, cases=cases, n_tests=len(tests), notes=notes)


def split_settings_files(paths: Sequence[str | Path]) -> tuple[list[str | Path], list[str | Path]]:
    """Separate ragqa settings files from test files, so ``ragqa test *.yaml`` beside an application.yaml works.

    A file is a settings file when its top level has ``spring`` or ``ragqa`` and no ``tests``.
    When every path is a settings file, none is set aside: loading then reports the missing
    ``tests`` as usual.

    Returns:
        ``(test files, settings files)``, each in the order given.
    """
    import yaml

    settings: list[str | Path] = []
    for path in paths:
        try:
            doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # loading reports it
        if isinstance(doc, dict) and "tests" not in doc and ({"spring", "ragqa"} & set(doc)):
            settings.append(path)
    if len(settings) == len(paths):
        return list(paths), []
    return [p for p in paths if p not in settings], settings
