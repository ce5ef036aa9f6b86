"""Test doubles for ragqa's tests and for users' own: scripted judges and the fake server."""

from ragqa.testing.judges import FunctionJudge, RecordedCall, ScriptedJudge, StaticEmbedder, make_sample

__all__ = ["FunctionJudge", "RecordedCall", "ScriptedJudge", "StaticEmbedder", "make_sample"]
