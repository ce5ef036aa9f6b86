"""ragqa._ids.CompactIds: 4 bytes per id's end while the text is short, 8 once it is long, the same ids either way."""

from __future__ import annotations

import pytest

import ragqa._ids as ids_module
from ragqa._ids import CompactIds


@pytest.mark.parametrize("indexed", [True, False])
def test_ids_keep_their_positions_across_the_switch_to_eight_byte_ends(
    monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    monkeypatch.setattr(ids_module, "_MAX_SHORT_END", 20)  # the 4 GiB limit, made small
    ids = CompactIds(indexed=indexed)
    values = [f"sample-{i}" for i in range(10)] + ["é-ü", "x"]
    for value in values:
        ids.append(value)
    assert ids._ends.typecode == "q"  # past the limit: 8-byte ends
    assert list(ids) == values and [ids[i] for i in range(len(values))] == values
    if indexed:
        assert [ids.position(v) for v in values] == list(range(len(values)))


def test_short_text_keeps_four_byte_ends() -> None:
    ids = CompactIds(indexed=False)
    for i in range(1000):
        ids.append(f"s{i}")
    assert ids._ends.typecode == "I" and ids._ends.itemsize == 4
    assert ids[999] == "s999" and ids[-1] == "s999"
