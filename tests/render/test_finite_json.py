"""finite_json: every non-finite float becomes None at any depth, whatever the leaf types around it."""

from __future__ import annotations

import math

import numpy as np

from ragqa.report import finite_json


class _Ratio(float):
    """A float subclass: not one of the leaf types finite_json keeps without a look."""


def test_non_finite_floats_become_none_at_every_depth() -> None:
    value = {
        "a": math.nan,
        "b": [1, math.inf, ("x", -math.inf, None, True)],
        "c": {"d": {"e": [np.float64("nan"), _Ratio("inf"), 0.5]}},
        "f": "nan",
        "g": 3,
        "h": False,
    }
    assert finite_json(value) == {
        "a": None,
        "b": [1, None, ["x", None, None, True]],
        "c": {"d": {"e": [None, None, 0.5]}},
        "f": "nan",
        "g": 3,
        "h": False,
    }


def test_finite_values_and_leaves_come_back_unchanged() -> None:
    value = {"s": "text", "i": 7, "b": True, "n": None, "x": [0.25, {"y": 1e300}], "t": (1, 2)}
    out = finite_json(value)
    assert out == {"s": "text", "i": 7, "b": True, "n": None, "x": [0.25, {"y": 1e300}], "t": [1, 2]}
    assert type(out["t"]) is list
    assert type(out["b"]) is bool
