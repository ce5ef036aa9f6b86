"""Sample ids kept compactly: one UTF-8 buffer and typed arrays instead of a Python object per id.

A run over 300,000 samples keeps every sample's id (for the report's sample lists and the loader's
check that ids are unique). As Python objects (a ``str`` in a ``list`` or a ``dict``) that costs
100 to 200 bytes per id; :class:`CompactIds` keeps about ``len(id) + 4`` bytes per id (``+ 8`` once
the ids' text passes 4 GiB), plus 8 to 16
for its optional index from id to position (an open-addressing hash table of positions with linear
probing, grown at half full, 4 bytes a slot; Knuth, *The Art of Computer Programming*, vol. 3, section 6.4).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["CompactIds", "IdView"]

_EMPTY = -1
_MAX_SHORT_END = 2**32 - 1  # the largest end an unsigned 32-bit array ("I") holds


class IdView(Sequence[str]):
    """A read-only sequence of ids whose subclasses say only how to read one (:meth:`_one`) and how many."""

    def __len__(self) -> int:
        """How many ids."""
        raise NotImplementedError

    def _one(self, index: int) -> str:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        """The id at ``index`` (negative counts from the end), or a list of them for a slice."""
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        return self._one(index)


class CompactIds(IdView):
    """Ids appended in order, readable by position, optionally found by value (each id's end: 4 bytes, 8 past 4 GiB).

    Args:
        indexed: keep the index that :meth:`position` uses (8 to 16 bytes per id more).

    ``ids[i]`` is the ``i``-th id appended (0-based; ``IndexError`` out of range); ``len(ids)`` their count.
    Ids are text as :class:`~ragqa.schema.Sample` accepts it (no lone surrogate).
    """

    def __init__(self, *, indexed: bool = True) -> None:
        """Start empty."""
        self._text = bytearray()
        self._ends = array("I")  # 4 bytes an id while the text is under 4 GiB, then 8 ("q")
        self._table: array[int] | None = array("i", [_EMPTY]) * 16 if indexed else None

    def __len__(self) -> int:
        """Ids appended so far."""
        return len(self._ends)

    @property
    def indexed(self) -> bool:
        """Whether :meth:`position` can be asked (the ids were kept with their index)."""
        return self._table is not None

    def _one(self, index: int) -> str:
        return self._bytes(index).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        """The ids in the order they were appended."""
        start = 0
        text = self._text
        for end in self._ends:
            yield text[start:end].decode("utf-8")
            start = end

    def _bytes(self, index: int) -> bytes:
        n = len(self._ends)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"id position {index} out of range ({n} ids)")
        start = self._ends[index - 1] if index else 0
        return bytes(self._text[start : self._ends[index]])

    def append(self, value: str) -> int:
        """Add ``value`` at the end (a repeat is added again; see :meth:`position`); returns its position."""
        position = len(self._ends)
        self._text += value.encode("utf-8")
        end = len(self._text)
        if end > _MAX_SHORT_END and self._ends.typecode == "I":
            self._ends = array("q", self._ends)
        self._ends.append(end)
        table = self._table
        if table is not None:
            if 2 * len(self._ends) > len(table):
                self._grow()
            else:
                self._place(table, hash(value), position)
        return position

    def position(self, value: str) -> int | None:
        """The position of the first ``value`` appended, else ``None`` (needs ``indexed``).

        Raises:
            ValueError: when the ids were kept without an index.
        """
        table = self._table
        if table is None:
            raise ValueError("these ids were kept without an index")
        encoded = value.encode("utf-8")
        mask = len(table) - 1
        slot = hash(value) & mask
        while (found := table[slot]) != _EMPTY:
            if self._bytes(found) == encoded:
                return found
            slot = (slot + 1) & mask
        return None

    def __contains__(self, value: object) -> bool:
        """Whether ``value`` was appended (by the index when kept, else by a scan)."""
        if not isinstance(value, str):
            return False
        if self._table is not None:
            return self.position(value) is not None
        return any(v == value for v in self)

    @staticmethod
    def _place(table: array[int], key: int, position: int) -> None:
        mask = len(table) - 1
        slot = key & mask
        while table[slot] != _EMPTY:
            slot = (slot + 1) & mask
        table[slot] = position

    def _grow(self) -> None:
        size = len(self._table or ())
        while 2 * len(self._ends) > size:
            size *= 2
        table = array("i", [_EMPTY]) * size
        for position, value in enumerate(self):  # in order: a repeated id's first position comes first
            self._place(table, hash(value), position)
        self._table = table

    def __repr__(self) -> str:
        """``CompactIds(N ids)``: the count only (the ids may be hundreds of thousands)."""
        return f"CompactIds({len(self)} ids)"
