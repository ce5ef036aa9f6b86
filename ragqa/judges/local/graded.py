"""Graded outputs: the local judge's side of the judge seam.

An LLM judge answers with binary verdicts, parsed into the prompts' output models
(:class:`~ragqa.prompts.nli.NLIOutput`...), which have no field for a grade: a ``support`` key in
an LLM's JSON is ignored. The offline local judge measures a graded support in [0, 1] instead;
it returns these subclasses, which add ``support`` as a real, validated and serialised field and
make ``value`` return it. Metrics read ``value`` and never know which side answered; the disk
cache stores and restores the subclass itself, so a cached answer scores what a fresh one does.

Each class is a subclass of the prompt's output model, so ``isinstance(out, prompt.output_model)``
holds and every consumer typed against the LLM model works unchanged.
"""

from __future__ import annotations

from pydantic import Field

from ragqa.prompts.attribution import Attribution, AttributionOutput
from ragqa.prompts.context_usefulness import ContextUsefulnessOutput
from ragqa.prompts.nli import NLIOutput, StatementVerdict
from ragqa.prompts.nvidia import ContextRelevance1Output, ContextRelevance2Output
from ragqa.prompts.statement_relevance import RelevanceVerdict, StatementRelevanceOutput

__all__ = [
    "GradedAttribution",
    "GradedAttributionOutput",
    "GradedContextRelevance1Output",
    "GradedContextRelevance2Output",
    "GradedContextUsefulnessOutput",
    "GradedNLIOutput",
    "GradedRelevanceOutput",
    "GradedRelevanceVerdict",
    "GradedStatementVerdict",
]


class GradedStatementVerdict(StatementVerdict):
    """An NLI verdict with a graded support (the local judge's).

    Attributes:
        support: how much of the statement the context supports, in [0, 1]; ``verdict`` is 1
            when it reaches the judge's ``support_threshold``.
    """

    support: float = Field(
        ge=0.0, le=1.0, allow_inf_nan=False, description="Graded support of the statement by the context, in [0, 1]"
    )

    @property
    def value(self) -> float:
        """The graded support in [0, 1] (higher = better supported)."""
        return self.support


class GradedNLIOutput(NLIOutput):
    """One graded verdict per statement, in the order the statements were given."""

    verdicts: list[GradedStatementVerdict]  # type: ignore[assignment]


class GradedAttribution(Attribution):
    """A reference sentence's classification with a graded attribution (the local judge's).

    Attributes:
        support: how much of the sentence the context supports, in [0, 1]; ``attributed`` is 1
            when it reaches the judge's ``support_threshold``.
    """

    support: float = Field(
        ge=0.0, le=1.0, allow_inf_nan=False, description="Graded attribution of the sentence to the context, in [0, 1]"
    )

    @property
    def value(self) -> float:
        """The graded attribution in [0, 1] (higher = better attributed)."""
        return self.support


class GradedAttributionOutput(AttributionOutput):
    """One graded classification per sentence of the reference, in order."""

    classifications: list[GradedAttribution]  # type: ignore[assignment]


class GradedContextUsefulnessOutput(ContextUsefulnessOutput):
    """A context's usefulness with a graded value (the local judge's).

    Attributes:
        support: how useful the context is for the answer, in [0, 1]; ``verdict`` is 1 when it
            reaches the judge's ``support_threshold``.
    """

    support: float = Field(
        ge=0.0, le=1.0, allow_inf_nan=False, description="Graded usefulness of the context for the answer, in [0, 1]"
    )

    @property
    def value(self) -> float:
        """The graded usefulness in [0, 1] (higher = more useful)."""
        return self.support


class GradedRelevanceVerdict(RelevanceVerdict):
    """A statement's relevance verdict with a graded value (the local judge's).

    Attributes:
        support: how relevant the statement is to the question, in [0, 1]; ``verdict`` is 1
            when it reaches the judge's ``support_threshold``.
    """

    support: float = Field(
        ge=0.0, le=1.0, allow_inf_nan=False, description="Graded relevance of the statement to the question, in [0, 1]"
    )

    @property
    def value(self) -> float:
        """The graded relevance in [0, 1] (higher = more relevant)."""
        return self.support


class GradedRelevanceOutput(StatementRelevanceOutput):
    """One graded relevance verdict per statement, in the order the statements were given."""

    verdicts: list[GradedRelevanceVerdict]  # type: ignore[assignment]


_GRADED_RATING = Field(
    ge=0.0,
    le=2.0,
    allow_inf_nan=False,
    description="Graded rating on the template's 0..2 scale; ``rating`` is the level nearest to it",
)


class GradedContextRelevance1Output(ContextRelevance1Output):
    """Context relevance template 1's rating with a graded value (the local judge's).

    Attributes:
        graded_rating: the rating on the template's scale, continuous in [0, 2] (higher = more
            relevant); ``rating`` is the integer level (0, 1 or 2) nearest to it, what an LLM
            would send.
    """

    graded_rating: float = _GRADED_RATING

    @property
    def value(self) -> float:
        """The graded rating in [0, 2]."""
        return self.graded_rating


class GradedContextRelevance2Output(ContextRelevance2Output):
    """Context relevance template 2's rating with a graded value (see :class:`GradedContextRelevance1Output`)."""

    graded_rating: float = _GRADED_RATING

    @property
    def value(self) -> float:
        """The graded rating in [0, 2]."""
        return self.graded_rating
