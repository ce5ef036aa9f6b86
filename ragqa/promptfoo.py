"""Run promptfoo-style test files with ragqa's panel of judges: ``ragqa test FILE.yaml``.

A file holds ``tests: [{description?, vars: {...}, assert: [{type, value, threshold, config}]}]``
and an optional top-level ``defaultTest`` (its ``vars`` are merged under each test's, its
``assert`` list runs before each test's). Every assertion is scored by every judge of the panel
configured in ``application.yaml`` and passes or fails under its threshold and policy.

promptfoo gets the response from a provider; ragqa scores *given* outputs and calls no system
under test: the response is a test's ``output`` (a ragqa extension), else ``vars.response``, else
``vars.output`` (``defaultTest`` may supply either). ``providers`` and ``prompts`` are ignored with a
note.

Vars map to sample fields: ``query`` -> ``user_input``; ``context`` (a string, or a list of strings)
-> ``retrieved_contexts``; ``contextChunks`` (``[{text, relevant}]``) -> ``context_chunks``; the
assertion's ``value`` -> ``reference`` (the ground truth of ``noise-sensitivity`` and
``context-recall``). ``{{var}}`` templates in ``value`` and ``config`` are filled from the vars (a
template that is the whole string keeps the var's type, so ``contextChunks: '{{contextChunks}}'``
passes the list). ``file://path`` values are read relative to the file (text; JSON/YAML parsed).

Assertion types and the ragqa metric each runs (see :data:`ASSERTION_TYPES`):

============================  ================================  =========  ==========================
promptfoo type                ragqa metric                      threshold  direction
============================  ================================  =========  ==========================
``noise-sensitivity``         ``noise_sensitivity``             0.2        lower is better (<=)
``context-faithfulness``      ``faithfulness``                  0          higher is better (>=)
``context-recall``            ``context_recall``                0          higher is better (>=)
``context-relevance``         ``context_relevance`` [1]_        0          higher is better (>=)
``answer-relevance``          ``response_relevancy``            0.7        higher is better (>=)
``ragqa:<metric>``            any ragqa metric by name          metric's   the metric's
============================  ================================  =========  ==========================

.. [1] until ragqa registers the NVIDIA-style ``context_relevance`` metric, ``context-relevance``
   runs ``context_precision(mode=response)``: the share of contexts useful for the answer, ranked.

The threshold is the assertion's ``threshold``, else ``ragqa.thresholds`` of the settings, else the
default above (promptfoo's own defaults). NaN (unscored) never passes. ``config.policy`` (a ragqa
extension) sets the panel policy (``aggregate``, ``all``, ``at_least:k``).

Exit codes: 0 every assertion passed, 1 at least one failed, 2 the file, the settings or a test's
data are invalid (reported before any judge call).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from ragqa.errors import ConfigError, RagqaError, SampleError

if TYPE_CHECKING:
    from ragqa.assertions import MetricVerdict, Policy
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric
    from ragqa.schema import Sample

__all__ = [
    "ASSERTION_TYPES",
    "AssertionType",
    "CaseResult",
    "PromptfooCase",
    "PromptfooSuite",
    "arun_suite",
    "check_suite",
    "load_suite",
    "register",
    "run_promptfoo_file",
    "run_promptfoo_files",
    "write_junit",
]


@dataclass(frozen=True)
class AssertionType:
    """How one promptfoo assertion type maps to a ragqa metric.

    Attributes:
        type: the promptfoo type (``noise-sensitivity``).
        metric: the ragqa metric's registry name.
        default_threshold: promptfoo's default threshold for the type.
        value_is_reference: whether the assertion's ``value`` is the ground truth (``reference``).
        note: how ragqa's metric differs from promptfoo's, if at all.
    """

    type: str
    metric: str
    default_threshold: float | None
    value_is_reference: bool = False
    note: str = ""


ASSERTION_TYPES: Mapping[str, AssertionType] = {
    t.type: t
    for t in (
        AssertionType(
            "noise-sensitivity",
            "noise_sensitivity",
            0.2,
            value_is_reference=True,
            note="RAGAS noise sensitivity; relevant mode counts every incorrect claim as promptfoo documents "
            "(config.counting: ragas for RAGAS's rule: only claims a relevant context entails)",
        ),
        AssertionType("context-faithfulness", "faithfulness", 0.0, note="RAGAS faithfulness, same formula"),
        AssertionType(
            "context-recall",
            "context_recall",
            0.0,
            value_is_reference=True,
            note="RAGAS LLM context recall: share of ground-truth statements attributable to the context",
        ),
        AssertionType(
            "context-relevance",
            "context_relevance",
            0.0,
            note="NVIDIA/RAGAS context relevance (the judge rates how relevant the context is to the query, 0..1); "
            "promptfoo instead counts the share of context sentences it extracts as relevant",
        ),
        AssertionType(
            "answer-relevance",
            "response_relevancy",
            0.7,
            note="RAGAS response relevancy: questions generated from the answer vs the query by embedding "
            "cosine, 0 when the answer is noncommittal; needs an embedding model",
        ),
    )
}
"""The supported promptfoo assertion types; ``ragqa:<metric>`` runs any ragqa metric."""

_IGNORED_TOP = {
    "providers": "ragqa scores the outputs given in the file and calls no provider",
    "prompts": "ragqa scores the outputs given in the file and renders no prompt",
}
_KNOWN_TOP = {"description", "tests", "defaultTest"}
_TEST_KEYS = {"description", "vars", "assert", "output", "metadata", "options", "threshold"}
_ASSERT_KEYS = {"type", "value", "threshold", "config", "contextTransform", "metric", "weight", "provider"}
_WHOLE_TEMPLATE = re.compile(r"^\s*\{\{\s*([A-Za-z_][\w.]*)\s*\}\}\s*$")
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_FIELD_HINTS = {
    "user_input": "vars.query",
    "response": "the test's `output` (or vars.response / vars.output)",
    "reference": "the assertion's `value` (the ground truth)",
    "retrieved_contexts": "vars.context (or vars.contextChunks / config.contextChunks)",
}


@dataclass(frozen=True)
class PromptfooCase:
    """One assertion of one test, ready to score.

    Attributes:
        test_index: 1-based index of the test in the file.
        test_name: the test's ``description``, else ``test <index>: <query>``.
        assertion_index: 1-based index of the assertion within the test (``defaultTest`` ones first).
        type: the promptfoo assertion type.
        metric: the ragqa metric that scores it.
        sample: the sample built from the test's vars and the assertion.
        threshold: the explicit threshold, or ``None`` (then configured, else the type's default).
        default_threshold: the type's default threshold.
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


@dataclass
class PromptfooSuite:
    """A loaded file: its cases and the notes about what was ignored."""

    path: Path
    cases: list[PromptfooCase]
    n_tests: int
    notes: list[str] = field(default_factory=list)


@dataclass
class CaseResult:
    """A scored case: its verdict, and the wall time in seconds."""

    case: PromptfooCase
    verdict: MetricVerdict
    seconds: float = 0.0


# --- loading ------------------------------------------------------------------------------------


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


def _metric_for(kind: str, config: Mapping[str, Any], where: str) -> tuple[Metric, AssertionType | None]:
    from ragqa.metrics import build_metric

    if kind.startswith("ragqa:"):
        name = kind[len("ragqa:") :]
        return build_metric(name, {k: v for k, v in config.items() if k != "policy"}), None
    spec = ASSERTION_TYPES.get(kind)
    if spec is None:
        import difflib

        close = difflib.get_close_matches(kind, list(ASSERTION_TYPES), n=2)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(
            f"{where}: assertion type {kind!r} is not supported.{hint} Supported: "
            f"{', '.join(ASSERTION_TYPES)}, or ragqa:<metric>",
            key=where,
        )
    from ragqa.metrics import METRICS

    name, options = spec.metric, {}
    if name == "noise_sensitivity":
        options = {"mode": config.get("mode", "relevant"), "counting": config.get("counting", "promptfoo")}
    elif name == "context_relevance" and name not in METRICS:
        # until the NVIDIA-style context relevance ships: how useful each context is for the answer
        name, options = "context_precision", {"mode": "response"}
    try:
        return build_metric(name, options), spec
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}", key=where) from exc


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
) -> PromptfooCase:
    from ragqa.assertions import parse_policy
    from ragqa.schema import ContextChunk, Sample

    where = f"tests[{test_index - 1}].assert[{assertion_index - 1}]"
    kind = assertion.get("type")
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"{where}.type is required (e.g. context-faithfulness)", key=f"{where}.type")
    for key in assertion:
        if key not in _ASSERT_KEYS:
            notes.append(f"{where}: ignored key {key!r}")
    if "provider" in assertion:
        notes.append(f"{where}: 'provider' ignored: every judge of the panel grades (pick judges in the settings)")
    config = render_templates(_mapping(assertion.get("config"), f"{where}.config"), vars_, f"{where}.config")
    metric, spec = _metric_for(kind, config, where)
    value = render_templates(_read_ref(assertion.get("value"), base, f"{where}.value"), vars_, f"{where}.value")
    policy = config.get("policy", "aggregate")
    try:
        parse_policy(policy)
    except ValueError as exc:
        raise ConfigError(f"{where}.config.policy: {exc}", key=f"{where}.config.policy") from exc

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
    if spec is None or spec.value_is_reference:
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}.value (the ground truth) must be a string", key=f"{where}.value")
        fields["reference"] = value if value is not None else vars_.get("reference")
    if chunks is not None:
        # labelled chunks replace the plain context (promptfoo ignores noiseContext with chunks too)
        fields["context_chunks"] = [ContextChunk(**c) for c in chunks]
    else:
        fields["retrieved_contexts"] = contexts
        if spec is not None and spec.metric == "noise_sensitivity":
            fields["noise_context"] = noise
    if not isinstance(fields["user_input"], str | None):
        raise ConfigError(f"tests[{test_index - 1}].vars.query must be a string", key="vars.query")
    sample = Sample(**fields)
    try:
        metric.validate(sample)
    except SampleError as exc:
        hint = _FIELD_HINTS.get(exc.field or "", exc.field or "")
        raise SampleError(
            f"{kind} needs {hint}"
            + (" (ragqa scores given outputs and calls no provider)" if exc.field == "response" else ""),
            sample_id=f"{where} ({test_name})",
            field=exc.field,
            metric=metric.key,
        ) from exc
    return PromptfooCase(
        test_index=test_index,
        test_name=test_name,
        assertion_index=assertion_index,
        type=kind,
        metric=metric,
        sample=sample,
        threshold=_threshold(assertion.get("threshold"), where),
        default_threshold=spec.default_threshold if spec is not None else metric.default_threshold,
        policy=policy,
    )


def load_suite(path: str | Path) -> PromptfooSuite:
    """Read a promptfoo-style file into cases; no judge is called.

    Args:
        path: the YAML (or JSON) file.

    Returns:
        The suite: one case per (test, assertion), and notes on ignored keys.

    Raises:
        ConfigError: the file is unreadable or malformed, an assertion type is unsupported, a
            template names no var (the key names the place, e.g. ``tests[2].assert[0].type``).
        SampleError: a test lacks what its assertion needs (query, output, context, value).
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
            cases.append(
                _build_case(
                    test_index=ti,
                    test_name=name,
                    assertion_index=ai,
                    assertion=_mapping(assertion, f"tests[{ti - 1}].assert[{ai - 1}]"),
                    vars_=vars_,
                    output=output,
                    metadata=metadata,
                    base=base,
                    notes=notes,
                )
            )
    return PromptfooSuite(path=file, cases=cases, n_tests=len(tests), notes=notes)


# --- running ------------------------------------------------------------------------------------


def _limit(case: PromptfooCase, thresholds: Mapping[str, float]) -> float:
    if case.threshold is not None:
        return case.threshold
    for key in (case.metric.key, case.metric.name):
        if key in thresholds:
            return float(thresholds[key])
    if case.default_threshold is not None:
        return case.default_threshold
    raise ConfigError(
        f"{case.name}: no threshold; add `threshold:` or set ragqa.thresholds.{case.metric.name}",
        key=f"ragqa.thresholds.{case.metric.name}",
    )


def check_suite(evaluator: PanelEvaluator, suite: PromptfooSuite, thresholds: Mapping[str, float]) -> list[float]:
    """Validate every case against the panel (fields, embedding models) and resolve its threshold.

    No judge is called.

    Returns:
        The threshold of each case, in order.

    Raises:
        SampleError: a case cannot be scored by this panel (e.g. no embedding model).
        ConfigError: a case has no threshold.
    """
    limits = [_limit(c, thresholds) for c in suite.cases]
    for case in suite.cases:
        problems = evaluator.validate([case.sample], [case.metric])
        if problems:
            raise SampleError(f"{case.name}: {problems[0]}", sample_id=case.sample.id, metric=case.metric.key)
    return limits


async def arun_suite(
    evaluator: PanelEvaluator,
    suite: PromptfooSuite,
    *,
    thresholds: Mapping[str, float] | None = None,
    max_concurrent: int = 8,
) -> list[CaseResult]:
    """Score every case across the panel (cases run concurrently, bounded by ``max_concurrent``).

    Every case is checked with :func:`check_suite` before the first judge call.

    Returns:
        One result per case, in file order.

    Raises:
        SampleError: a case cannot be scored by this panel (e.g. no embedding model).
        ConfigError: a case has no threshold.
    """
    from ragqa.assertions import verdict_for

    limits = check_suite(evaluator, suite, thresholds or {})
    gate = asyncio.Semaphore(max_concurrent)

    async def one(case: PromptfooCase, limit: float) -> CaseResult:
        async with gate:
            started = time.perf_counter()
            result = await evaluator.score(case.sample, case.metric)
            verdict = verdict_for(result, threshold=limit, policy=case.policy)
            return CaseResult(case=case, verdict=verdict, seconds=time.perf_counter() - started)

    return list(await asyncio.gather(*(one(c, lim) for c, lim in zip(suite.cases, limits, strict=True))))


def _judges_line(verdict: MetricVerdict) -> str:
    from ragqa.assertions import format_score

    parts = []
    for o in verdict.result.judges:
        parts.append(f"{o.judge_id} {'excluded' if o.score is None else format_score(o.score.value)}")
    return ", ".join(parts)


def print_results(results: Sequence[CaseResult], suite: PromptfooSuite, out: TextIO, seconds: float) -> None:
    """Print one PASS/FAIL line per assertion with every judge's score, failure details, and a summary."""
    from ragqa.assertions import format_score

    for r in results:
        v = r.verdict
        cmp = ">=" if v.direction == "higher" else "<="
        print(
            f"{'PASS' if v.passed else 'FAIL'}  {r.case.name}  [{v.result.metric}] "
            f"aggregate {format_score(v.result.aggregate.value)} {cmp} {v.threshold:g}  |  {_judges_line(v)}",
            file=out,
        )
        if not v.passed:
            for line in v.message().splitlines():
                print(f"      {line}", file=out)
    failed = sum(1 for r in results if not r.verdict.passed)
    print(
        f"\n{len(results) - failed} passed, {failed} failed of {len(results)} assertion(s) "
        f"in {suite.n_tests} test(s) from {suite.path.name} ({seconds:.2f} s)",
        file=out,
    )


def write_junit(suites: Sequence[tuple[str, Sequence[CaseResult]]], path: str | Path) -> None:
    """Write JUnit XML: one ``testsuite`` per file, one ``testcase`` per assertion, scores as properties.

    Args:
        suites: ``(suite name, results)`` per file (the name is the file's stem).
        path: the XML file to write (parent folders are created).

    Each testcase carries ``ragqa:<metric>:sample``, ``:aggregate``, ``:threshold``, ``:direction``,
    ``:policy``, ``:passed`` and ``:judge:<id>`` properties (``excluded`` for failed judges); a
    failing one has a ``failure`` element whose message is the verdict's one-line reason and whose
    text is the full per-judge message; a passing one has that message as ``system-out``.
    """
    import xml.etree.ElementTree as ET

    from ragqa.assertions import format_score

    every = [r for _, results in suites for r in results]
    root = ET.Element(
        "testsuites",
        name="ragqa",
        tests=str(len(every)),
        failures=str(sum(1 for r in every if not r.verdict.passed)),
        errors="0",
        time=f"{sum(r.seconds for r in every):.3f}",
    )
    for suite_name, results in suites:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=suite_name,
            tests=str(len(results)),
            failures=str(sum(1 for r in results if not r.verdict.passed)),
            errors="0",
            skipped="0",
            time=f"{sum(r.seconds for r in results):.3f}",
        )
        for r in results:
            v = r.verdict
            case = ET.SubElement(
                suite, "testcase", classname=f"promptfoo.{suite_name}", name=r.case.name, time=f"{r.seconds:.3f}"
            )
            props = ET.SubElement(case, "properties")
            key = f"ragqa:{v.result.metric}"
            values = [
                ("sample", v.result.sample_id),
                ("aggregate", format_score(v.result.aggregate.value)),
                ("threshold", f"{v.threshold:g}"),
                ("direction", v.direction),
                ("policy", v.policy.label),
                ("passed", "true" if v.passed else "false"),
            ]
            for name, value in values:
                ET.SubElement(props, "property", name=f"{key}:{name}", value=value)
            for o in v.result.judges:
                value = "excluded" if o.score is None else format_score(o.score.value)
                ET.SubElement(props, "property", name=f"{key}:judge:{o.judge_id}", value=value)
            if v.passed:
                ET.SubElement(case, "system-out").text = v.message()
            else:
                failure = ET.SubElement(case, "failure", message=v.why, type="MetricAssertionError")
                failure.text = v.message()
    ET.indent(root)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _thresholds_of(container: Container) -> dict[str, float]:
    section = getattr(container.settings(), "ragqa", None)
    thresholds = getattr(section, "thresholds", None) or {}
    return {str(k): float(v) for k, v in dict(thresholds).items()}


def run_promptfoo_file(
    path: str | Path,
    *,
    container: Container,
    junit_xml: str | Path | None = None,
    out: TextIO | None = None,
    close: bool = True,
) -> int:
    """Run one promptfoo-style file with the container's panel (see :func:`run_promptfoo_files`).

    Returns:
        The exit code: 0 all passed, 1 an assertion failed, 2 invalid file, settings or data.
    """
    return run_promptfoo_files([path], container=container, junit_xml=junit_xml, out=out, close=close)


def run_promptfoo_files(
    paths: Sequence[str | Path],
    *,
    container: Container,
    junit_xml: str | Path | None = None,
    out: TextIO | None = None,
    close: bool = True,
) -> int:
    """Run promptfoo-style files with the container's panel; print results; maybe write JUnit XML.

    Every file is loaded and every case checked (fields, embedding models, thresholds) before the
    first judge call, so invalid input costs nothing.

    Args:
        paths: the test files, run one after the other (the cases of a file run concurrently).
        container: the ragqa container (its judges, embedders and settings are used).
        junit_xml: where to write JUnit XML, one testsuite per file (``None``: not written).
        out: where to print (default ``sys.stdout``); errors go there too.
        close: close the container's clients at the end (on the loop that used them).

    Returns:
        The exit code: 0 all passed, 1 an assertion failed, 2 invalid file, settings or data.
    """
    stream = out if out is not None else sys.stdout
    try:
        suites = [load_suite(p) for p in paths]
        thresholds = _thresholds_of(container)
        evaluator = container.evaluator()
        for suite in suites:
            check_suite(evaluator, suite, thresholds)
    except RagqaError as exc:
        print(f"error: {exc}", file=stream)
        if close:
            from ragqa.container import close_container

            asyncio.run(close_container(container))
        return 2
    judges = ", ".join(j.id for j in evaluator.judges) or "(none)"

    async def main() -> list[tuple[list[CaseResult], float]]:
        runs = []
        try:
            for suite in suites:
                started = time.perf_counter()
                results = await arun_suite(evaluator, suite, thresholds=thresholds)
                runs.append((results, time.perf_counter() - started))
        finally:
            if close:
                from ragqa.container import close_container

                await close_container(container)
        return runs

    try:
        runs = asyncio.run(main())
    except RagqaError as exc:
        print(f"error: {exc}", file=stream)
        return 2
    for suite, (results, seconds) in zip(suites, runs, strict=True):
        for note in suite.notes:
            print(f"note: {note}", file=stream)
        print(f"ragqa test {suite.path.name}: {len(suite.cases)} assertion(s), panel: {judges}", file=stream)
        print_results(results, suite, stream, seconds)
    every = [r for results, _ in runs for r in results]
    if len(suites) > 1:
        failed = sum(1 for r in every if not r.verdict.passed)
        print(f"total: {len(every) - failed} passed, {failed} failed of {len(every)} assertion(s)", file=stream)
    if junit_xml is not None:
        write_junit([(s.path.stem, results) for s, (results, _) in zip(suites, runs, strict=True)], junit_xml)
        print(f"JUnit XML: {junit_xml}", file=stream)
    return 1 if any(not r.verdict.passed for r in every) else 0


def register(app: typer.Typer) -> None:
    """Add the ``test`` command to the ``ragqa`` typer app.

    ``ragqa test FILE.yaml... [--config application.yaml] [--profile a,b] [--junit-xml out.xml]``;
    exits with :func:`run_promptfoo_files`'s code (0 passed, 1 an assertion failed, 2 invalid input).
    """

    @app.command("test")
    def test_command(
        files: Annotated[
            list[Path],
            typer.Argument(metavar="FILE...", help="promptfoo-style files: tests: [{vars, output, assert: [...]}]."),
        ],
        config: Annotated[
            Path | None, typer.Option("--config", "-c", help="The application.yaml (default: ./application.yaml).")
        ] = None,
        profile: Annotated[
            str | None,
            typer.Option("--profile", "-p", help="Active profiles, comma separated (default: RAGQA_PROFILES_ACTIVE)."),
        ] = None,
        junit_xml: Annotated[
            Path | None, typer.Option("--junit-xml", help="Write JUnit XML here (one testcase per assertion).")
        ] = None,
    ) -> None:
        """Run promptfoo-style assertions (noise-sensitivity, context-faithfulness, ...) across the judge panel."""
        from ragqa.container import create_container

        if config is not None and not config.is_file():
            typer.echo(f"error: settings file {config} does not exist; pass --config path/to/application.yaml")
            raise typer.Exit(2)
        profiles = [p.strip() for p in (profile or "").split(",") if p.strip()]
        container = create_container(config, profiles)
        raise typer.Exit(run_promptfoo_files(files, container=container, junit_xml=junit_xml))
