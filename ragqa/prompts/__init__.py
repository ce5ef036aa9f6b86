"""Typed judge prompts, one module per step; shared steps are shared modules."""

from ragqa.prompts.base import Example, Prompt

__all__ = ["Example", "Prompt"]
