"""Spring durations: ``2000ms``, ``2s``, ``1m``...; a bare number means milliseconds, as in Spring."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

__all__ = ["Duration", "PositiveDuration", "parse_duration"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)?\s*$", re.IGNORECASE)
_UNIT_SECONDS: dict[str | None, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    None: 1e-3,  # a bare number is milliseconds, as in Spring
}


def parse_duration(value: Any) -> Any:
    """Parse a Spring-style duration; anything else is left for pydantic (ISO-8601, ``timedelta``).

    Args:
        value: ``"2000ms"``, ``"2s"``, ``"1m"``, ``"1h"``, ``"1d"`` (also ``ns``, ``us``; unit
            case-insensitive), or a bare number (``2000``, ``"2000"``) meaning **milliseconds**
            (Spring's ``DurationStyle.SIMPLE`` with its default unit).

    Returns:
        A ``timedelta`` for the forms above; other values unchanged (pydantic then accepts
        ISO-8601 ``"PT2S"``, ``"00:00:02"`` or a ``timedelta``, and rejects the rest).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return timedelta(milliseconds=value)
    if isinstance(value, str) and (match := _DURATION.match(value)):
        unit = match[2].lower() if match[2] else None
        return timedelta(seconds=float(match[1]) * _UNIT_SECONDS[unit])
    return value


def _positive(value: timedelta) -> timedelta:
    if value <= timedelta(0):
        raise ValueError("must be a duration greater than 0, such as 30s (a bare number is milliseconds)")
    return value


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
"""A ``timedelta`` that also accepts Spring durations (``2000ms``, ``2s``; bare number = ms)."""
PositiveDuration = Annotated[timedelta, BeforeValidator(parse_duration), AfterValidator(_positive)]
"""A :data:`Duration` that must be greater than zero (timeouts, cool-downs, deadlines)."""
