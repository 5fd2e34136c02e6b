"""The URL set the state keeps per output and origin: which URLs came and went since the
previous run (the close log's ``+N, -M``), as blocks of locs joined by line feeds.

A state file of 0.1.0 has a row per URL in ``urls`` instead: read once, then moved to
blocks by the commit. Pure.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

from .notes import BLOCK, Legacy, NoteKind, Notes, Save, pack, unpack

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["URLS", "URL_BLOCK", "UrlCounts", "UrlNotes"]

#: Locs per stored block, and per call that notes them.
URL_BLOCK = BLOCK


def _encode(locs: list[str]) -> bytes:
    text = "\n".join(locs)
    if text.count("\n") != len(locs) - 1:  # normalize_loc never lets one through
        raise ValueError("a loc with a line feed cannot be noted")
    return pack(text)


def _decode(data: bytes) -> Iterator[tuple[str, None]]:
    return zip(unpack(data).split("\n"), repeat(None))


def _rows_of_0_1_0(db: sqlite3.Connection, output: str, origin: str) -> Iterator[tuple[str, None]]:
    """The rows a state file from before the blocks has, in their key's order."""
    after = ""
    while True:
        rows = db.execute(
            "SELECT loc FROM urls WHERE output = ? AND origin = ? AND loc > ? ORDER BY loc LIMIT ?",
            (output, origin, after, URL_BLOCK),
        ).fetchall()
        if not rows:
            return
        for (loc,) in rows:
            yield loc, None
        after = rows[-1][0]


#: The URL sets: ``url_blocks`` across runs, ``current_blocks`` this run's.
URLS: NoteKind[None, str] = NoteKind(
    "url_blocks", "current_blocks", _encode, _decode, legacy=Legacy("urls", _rows_of_0_1_0)
)


class UrlCounts(NamedTuple):
    """What one origin's URL notes counted: the URLs this run added and removed, and how
    many the previous run had noted (the guard on shrinking weighs ``removed`` against
    it)."""

    added: int
    removed: int
    previous: int


class UrlNotes(Notes[None, str]):
    """One origin's URLs as this run writes them, in loc order (the order every store
    gives): compared on the fly with the previous run's set, read in the same order, so
    counting what came and went is one merge pass with one block of each in memory; and
    kept as blocks for the next run through ``save(seq, data)``."""

    def __init__(self, previous: Iterator[tuple[str, None]], save: Save) -> None:
        super().__init__(URLS, previous, save)
        self._last: str | None = None
        self.added = 0
        self.removed = 0
        #: The URLs noted that the previous run had noted too.
        self.again = 0

    def note_all(self, locs: list[str]) -> None:
        """Note each of ``locs`` as published, in order, after those noted before: one call
        a block of URLs, not one a URL."""
        last, match, size = self._last, self._match, self._size
        added = matched = 0
        kept = self._block
        for loc in locs:
            if last is not None and loc <= last:
                if loc == last:
                    continue
                raise ValueError(f"URLs must be noted in loc order: {loc!r} came after {last!r}")
            last = loc
            if match(loc) is None:
                added += 1
            else:
                matched += 1
            kept.append(loc)
            if len(kept) >= size:
                self._flush()
                kept = self._block
        self._last = last
        self.added += added
        self.again += matched

    def _passed(self, note: tuple[str, None]) -> None:
        self.removed += 1

    def finish(self) -> UrlCounts:
        """What came and went since the previous run, once every URL was noted. The
        previous run's count is its notes', each noted again or removed, not the files'
        entries: a URL noted and then not written (an entry too large for a file) would
        make that one short."""
        self._flush()
        self._drain()
        return UrlCounts(self.added, self.removed, self.again + self.removed)
