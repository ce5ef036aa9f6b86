"""How promptfoo's assertion types map to ragqa metrics (as :class:`~ragqa.run.spec.MetricSpec`)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragqa.errors import ConfigError
from ragqa.run.spec import MetricSpec

__all__ = ["ASSERTION_TYPES", "FIELD_HINTS", "SAMPLE_CONFIG_KEYS", "AssertionType", "spec_for"]


@dataclass(frozen=True)
class AssertionType:
    """How one promptfoo assertion type maps to a ragqa metric.

    Attributes:
        type: the promptfoo type (``noise-sensitivity``).
        metric: the ragqa metric's registry name.
        default_threshold: promptfoo's default threshold for the type.
        value_is_reference: whether the assertion's ``value`` is the ground truth (``reference``).
        note: how ragqa's metric differs from promptfoo's, if at all.
        value_option: the metric option the assertion's ``value`` fills (``definition`` for
            ``llm-rubric``), or ``None``; such a type needs a non-blank string value.
        options: fixed metric options of the type (``{"name": "llm_rubric"}``, ``{"mode": "regex"}``).
    """

    type: str
    metric: str
    default_threshold: float | None
    value_is_reference: bool = False
    note: str = ""
    value_option: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def _string_checks() -> tuple[AssertionType, ...]:
    """Promptfoo's deterministic string assertions and their ``not-`` negations, as ``string_match``."""
    checks = {
        "equals": ("equals", "the output is exactly the value (a string value; promptfoo also compares JSON objects)"),
        "contains": ("contains", "the value is a substring of the output"),
        "icontains": ("icontains", "the value is a substring of the output, ignoring case"),
        "starts-with": ("starts_with", "the output starts with the value"),
        "regex": ("regex", "the value, a Python regular expression, matches somewhere in the output (re.search)"),
    }
    return tuple(
        AssertionType(
            f"{prefix}{kind}",
            "string_match",
            1.0,
            value_is_reference=True,
            note=("not: " if negate else "") + note,
            options={"mode": mode, **({"negate": True} if negate else {})},
        )
        for kind, (mode, note) in checks.items()
        for prefix, negate in (("", False), ("not-", True))
    )


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
            "llm-rubric",
            "aspect_critic",
            0.5,
            note="RAGAS aspect critic with the rubric as its definition: each judge gives a yes/no verdict and the "
            "score is the share of judges saying yes; promptfoo's grader returns pass and a graded score",
            value_option="definition",
            options={"name": "llm_rubric"},
        ),
        AssertionType(
            "model-graded-closedqa",
            "aspect_critic",
            0.5,
            note="RAGAS aspect critic with the criterion as its definition (promptfoo's closed-QA grader also "
            "answers yes or no); the score is the share of judges saying yes",
            value_option="definition",
            options={"name": "closedqa"},
        ),
        AssertionType(
            "answer-relevance",
            "response_relevancy",
            0.7,
            note="RAGAS response relevancy: questions generated from the answer vs the query by embedding "
            "cosine, 0 when the answer is noncommittal; needs an embedding model",
        ),
        AssertionType(
            "factuality",
            "factual_correctness",
            0.5,
            value_is_reference=True,
            note="RAGAS factual correctness in precision mode: the share of the output's claims the reference "
            "supports (2 decimals), pass at 0.5; promptfoo instead asks for one of five categories (A subset, "
            "B superset, C same, D disagreement, E immaterial differences) and fails only D, so an output that "
            "adds facts the reference lacks (B) loses precision here",
            options={"mode": "precision"},
        ),
        AssertionType(
            "similar",
            "semantic_similarity",
            0.75,
            value_is_reference=True,
            note="RAGAS semantic similarity: embedding cosine of output and value, the mean over every "
            "embedding model (promptfoo uses one); needs an embedding model",
        ),
        *_string_checks(),
        AssertionType(
            "levenshtein",
            "levenshtein_distance",
            5.0,
            value_is_reference=True,
            note="edit distance between the output and the value, passing at or below the threshold; "
            "a threshold of 0 means 0 (promptfoo reads 0 as its default 5)",
        ),
        AssertionType(
            "rouge-n",
            "rouge_score",
            0.75,
            value_is_reference=True,
            note="ROUGE-1 recall against the value, as promptfoo's js-rouge; words are spring-ai-ragas's "
            "(lower-cased, punctuation dropped) where js-rouge is case-sensitive with treebank tokens",
            options={"rouge_type": "rouge1", "mode": "recall"},
        ),
        AssertionType(
            "bleu",
            "bleu_score",
            0.5,
            value_is_reference=True,
            note="promptfoo's own BLEU (whitespace words, 4-gram weights 0.25, 1e-7 for a zero precision); "
            "one reference string (promptfoo also takes a list)",
            options={"variant": "promptfoo"},
        ),
    )
}
"""The supported promptfoo assertion types; ``ragqa:<metric>`` runs any ragqa metric."""

_RUNS_CODE = "it runs code (JavaScript, Python, Ruby or a webhook), which ragqa never executes"
_FORMAT = "a text or format check of promptfoo's that ragqa does not implement"
_PROVIDER = "it reads the provider's call (latency, cost, log-probabilities, traces), and ragqa calls no provider"
_MODEL = "a model-graded check ragqa does not implement; llm-rubric or ragqa:<metric> grade with the panel"

SKIPPED_TYPES: Mapping[str, str] = {
    **dict.fromkeys(("javascript", "python", "ruby", "webhook"), _RUNS_CODE),
    **dict.fromkeys(
        (
            "is-json",
            "contains-json",
            "is-html",
            "contains-html",
            "is-sql",
            "contains-sql",
            "is-xml",
            "contains-xml",
            "is-valid-function-call",
            "is-valid-openai-function-call",
            "is-valid-openai-tools-call",
            "contains-any",
            "contains-all",
            "icontains-any",
            "icontains-all",
            "word-count",
            "gleu",
            "meteor",
            "f-score",
            "tool-call-f1",
        ),
        _FORMAT,
    ),
    **dict.fromkeys(
        (
            "latency",
            "cost",
            "perplexity",
            "perplexity-score",
            "finish-reason",
            "trace-span-count",
            "trace-span-duration",
            "trace-error-spans",
        ),
        _PROVIDER,
    ),
    **dict.fromkeys(
        (
            "g-eval",
            "classifier",
            "moderation",
            "pi",
            "select-best",
            "max-score",
            "conversation-relevance",
            "search-rubric",
            "is-refusal",
            "guardrails",
        ),
        _MODEL,
    ),
}
"""promptfoo assertion types that ragqa skips with a note (and why), so the rest of the file still runs.

A type in neither this table nor :data:`ASSERTION_TYPES` is refused (a typo gets "Did you mean").
``not-<type>`` of a skipped type is skipped too."""


def skip_reason(kind: str) -> str | None:
    """Why ragqa skips the promptfoo assertion type ``kind`` (:data:`SKIPPED_TYPES`), or ``None`` when it runs it."""
    base = kind[len("not-") :] if kind.startswith("not-") and kind not in ASSERTION_TYPES else kind
    return SKIPPED_TYPES.get(base)


SAMPLE_CONFIG_KEYS = frozenset({"policy", "contextChunks", "noiseContext"})
"""``config`` keys that describe the sample or the policy, never a metric option."""

FIELD_HINTS: Mapping[str, str] = {
    "user_input": "vars.query",
    "response": "the test's `output` (or vars.response / vars.output)",
    "reference": "the assertion's `value` (the ground truth)",
    "retrieved_contexts": "vars.context (or vars.contextChunks / config.contextChunks)",
}
"""Where in a promptfoo file each sample field comes from, for error messages."""


def spec_for(
    kind: str, config: Mapping[str, Any], where: str, value: Any = None
) -> tuple[MetricSpec, AssertionType | None]:
    """The metric spec an assertion runs, and its promptfoo type (``None`` for ``ragqa:<metric>``).

    ``ragqa:<spec>`` (e.g. ``ragqa:hallucination`` or ``ragqa:noise_sensitivity(mode=irrelevant)``)
    takes its options from the spec, overlaid by ``config`` (less :data:`SAMPLE_CONFIG_KEYS`).
    ``noise-sensitivity`` reads ``config.mode`` (default ``relevant``) and ``config.counting``
    (default ``promptfoo``). ``llm-rubric`` and ``model-graded-closedqa`` put ``value`` (the
    rubric, the criterion) into the aspect critic's ``definition``.

    Args:
        kind: the assertion's ``type``.
        config: the assertion's ``config`` (templates already filled).
        where: the assertion's place (``tests[0].assert[1]``), named in errors.
        value: the assertion's ``value`` (templates already filled), for types with a ``value_option``.

    Raises:
        ConfigError: an unsupported type (with the closest types), a malformed ``ragqa:`` spec, or
            a missing or blank ``value`` where the type needs one.
    """
    if kind.startswith("ragqa:"):
        parsed = MetricSpec.parse(kind[len("ragqa:") :], source=f"{where}.type")
        extra = {k: v for k, v in config.items() if k not in SAMPLE_CONFIG_KEYS}
        return MetricSpec.of(parsed.name, {**parsed.kwargs, **extra}), None
    mapped = ASSERTION_TYPES.get(kind)
    if mapped is None and kind.startswith("not-") and kind[len("not-") :] in ASSERTION_TYPES:
        negatable = ", ".join(t for t in ASSERTION_TYPES if t.startswith("not-"))
        raise ConfigError(
            f"{where}: {kind!r} is not supported: ragqa's thresholds pass one way, so only the string checks "
            f"are negated ({negatable}); assert {kind[len('not-') :]!r} with a threshold instead",
            key=where,
        )
    if mapped is None:
        close = difflib.get_close_matches(kind, list(ASSERTION_TYPES), n=2)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(
            f"{where}: assertion type {kind!r} is not supported.{hint} Supported: "
            f"{', '.join(ASSERTION_TYPES)}, or ragqa:<metric>",
            key=where,
        )
    if mapped.metric == "noise_sensitivity":
        options = {"mode": config.get("mode", "relevant"), "counting": config.get("counting", "promptfoo")}
        return MetricSpec.of(mapped.metric, options), mapped
    if mapped.value_option is not None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(
                f"{where}.value is required: {kind} grades the output against it (the rubric or criterion text)",
                key=f"{where}.value",
            )
        return MetricSpec.of(mapped.metric, {**mapped.options, mapped.value_option: value}), mapped
    return MetricSpec.of(mapped.metric, mapped.options), mapped
