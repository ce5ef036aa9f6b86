import ragqa


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_unique_and_importable() -> None:
    assert ragqa.__all__ == sorted(set(ragqa.__all__), key=_isort_key)
    for name in ragqa.__all__:
        assert getattr(ragqa, name) is not None


def test_every_registered_metric_is_exported() -> None:
    exported = {id(getattr(ragqa, n)) for n in ragqa.__all__}
    assert all(id(cls) in exported for cls in ragqa.METRICS.values())
