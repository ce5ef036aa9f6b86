"""Judges and embedders: the seam between metrics and models."""

from ragqa.judges.base import Embedder, Judge, SharedCallJudge

__all__ = ["Embedder", "Judge", "SharedCallJudge"]
