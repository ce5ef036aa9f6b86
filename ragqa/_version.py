"""The installed ragqa version, for results headers and the local judge's cache identity."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["ragqa_version"]


def ragqa_version() -> str:
    """The installed distribution's version (``importlib.metadata``), e.g. ``"0.1.0"``.

    Returns:
        The version string, or ``"unknown"`` when ragqa runs from a source tree without
        installed metadata. Never raises.
    """
    try:
        return version("ragqa")
    except PackageNotFoundError:
        return "unknown"
