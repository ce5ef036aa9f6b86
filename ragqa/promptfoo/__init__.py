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
``context-recall``, the expected text of the string and text-similarity assertions).
``{{var}}`` templates in ``value`` and ``config`` are filled from the vars (a template that is
the whole string keeps the var's type, so ``contextChunks: '{{contextChunks}}'`` passes the
list). ``file://path`` values are read relative to the file (text; JSON/YAML parsed).

Assertion types and the ragqa metric each runs (see :data:`ASSERTION_TYPES`):

============================  ================================  =========  ==========================
promptfoo type                ragqa metric                      threshold  direction
============================  ================================  =========  ==========================
``noise-sensitivity``         ``noise_sensitivity``             0.2        lower is better (<=)
``context-faithfulness``      ``faithfulness``                  0          higher is better (>=)
``context-recall``            ``context_recall``                0          higher is better (>=)
``context-relevance``         ``context_relevance`` [1]_        0          higher is better (>=)
``answer-relevance``          ``response_relevancy``            0.7        higher is better (>=)
``equals``, ``contains``,     ``string_match(mode=...)``        1          higher is better (>=)
``icontains``,                (``not-`` prefix: ``negate``)
``starts-with``, ``regex``
``levenshtein``               ``levenshtein_distance``          5          lower is better (<=)
``rouge-n``                   ``rouge_score`` (rouge1 recall)   0.75       higher is better (>=)
``bleu``                      ``bleu_score(variant=promptfoo)`` 0.5        higher is better (>=)
``ragqa:<metric>``            any ragqa metric by name          metric's   the metric's
============================  ================================  =========  ==========================

.. [1] until ragqa registers the NVIDIA-style ``context_relevance`` metric, ``context-relevance``
   runs ``context_precision(mode=response)``: the share of contexts useful for the answer, ranked.

promptfoo types that ragqa does not run (``is-json`` and other format checks, ``javascript`` and
other code, ``g-eval`` and other model-graded types, ``latency``/``cost``: see
:data:`~ragqa.promptfoo.mapping.SKIPPED_TYPES`) are skipped with a note naming the assertion and
why; the file's other assertions run. A type promptfoo does not have either is refused (exit 2,
with the closest types).

The threshold is the assertion's ``threshold``, else ``ragqa.thresholds`` of the settings, else the
default above (promptfoo's own defaults). NaN (unscored) never passes. ``config.policy`` (a ragqa
extension) sets the panel policy (``aggregate``, ``all``, ``at_least:k``).

Exit codes (:class:`ragqa.run.exit_codes.ExitCode`): 0 every assertion passed; 1 at least one
failed; 2 the command line, an output path, the file, the settings or a test's data are invalid
(one ``error:`` line, before any judge call); 3 no assertion failed but one could not be decided
because judges failed, or no assertion ran (all skipped); 130 interrupted.

Modules: :mod:`~ragqa.promptfoo.mapping` (assertion types -> metric specs),
:mod:`~ragqa.promptfoo.loading` (the file -> cases), :mod:`~ragqa.promptfoo.running` (checks,
scoring, exit code), :mod:`~ragqa.promptfoo.output` (lines and JUnit suites),
:mod:`~ragqa.promptfoo.command` (``ragqa test``).
"""

from __future__ import annotations

from ragqa.promptfoo.command import register
from ragqa.promptfoo.loading import PromptfooCase, PromptfooSuite, load_suite, render_templates
from ragqa.promptfoo.mapping import ASSERTION_TYPES, AssertionType
from ragqa.promptfoo.output import junit_suite, print_results
from ragqa.promptfoo.running import (
    CaseResult,
    arun_suite,
    check_suite,
    exit_code,
    run_promptfoo_file,
    run_promptfoo_files,
)

__all__ = [
    "ASSERTION_TYPES",
    "AssertionType",
    "CaseResult",
    "PromptfooCase",
    "PromptfooSuite",
    "arun_suite",
    "check_suite",
    "exit_code",
    "junit_suite",
    "load_suite",
    "print_results",
    "register",
    "render_templates",
    "run_promptfoo_file",
    "run_promptfoo_files",
]
