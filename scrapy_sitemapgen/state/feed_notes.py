"""The changes feed's memory in the state: per output and origin, the last entries of the
feed (:mod:`..sitemaps.atom`), newest first, so that the feed holds the changes of several
runs, not only this one's (SITEMAPGEN_CHANGES_FEED).

A kind of note like the others (:class:`.notes.NoteKind`), with two differences: its
blocks hold the feed's order, not loc order (the notes are read whole, at most
SITEMAPGEN_CHANGES_FEED_ENTRIES of them, never joined in a merge pass), and an origin
published by a run with the feed off keeps them (as IndexNow's fingerprints): the next
run with it on goes on from there. What changed is IndexNow's finding
(:class:`.entry_changes.ChangeNotes`: a URL whose ``<url>`` entry is new or differs),
handed here a block at a time. Pure.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..sitemaps.atom import FeedEntry, atom_time
from ..sitemaps.facts import clean_title
from ..sitemaps.indexnow import ADDED, CHANGED
from .notes import BLOCK, NoteKind, Save, pack, unpack

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ..sitemaps.facts import UrlFacts
    from .entry_changes import Changes

__all__ = ["FEED", "FeedNotes"]

_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def _encode(entries: list[FeedEntry]) -> bytes:
    # One JSON array a line: a title may hold any character, a line feed too.
    return pack("\n".join(_ENCODE([e.loc, e.updated, e.title]) for e in entries))


def _decode(data: bytes) -> Iterator[tuple[str, FeedEntry]]:
    for line in unpack(data).split("\n"):
        loc, updated, title = json.loads(line)
        yield loc, FeedEntry(loc, updated, title)


#: The feed's entries: ``feed_blocks`` across runs, ``current_feed`` this run's.
FEED: NoteKind[FeedEntry, FeedEntry] = NoteKind(
    "feed_blocks", "current_feed", _encode, _decode, kept_unless_noted=True
)


class FeedNotes:
    """One origin's feed for this run: the previous run's entries (``previous``, in the
    feed's order), this run's changes (:meth:`see` each URL written, :meth:`changed` with
    what IndexNow's notes found in the block, :meth:`block_done` after it), and
    :meth:`finish`, which gives the feed and saves it through ``save`` for the next run.

    A URL appears once, with its newest change; a URL no longer written (removed) is
    dropped; at most ``limit`` entries are kept, this run's first (the newest lastmod
    first, then by loc), then the previous ones in their order. Memory: the previous
    feed, one block of this run's URLs and at most twice ``limit`` of its changes."""

    def __init__(
        self, previous: Iterable[tuple[str, FeedEntry]], save: Save, limit: int, stamp: str
    ) -> None:
        self._previous = [entry for _, entry in previous][:limit]
        self._locs = {entry.loc for entry in self._previous}
        self._save = save
        self._limit = limit
        self._stamp = stamp  # the run's time: the updated of an entry with no lastmod
        #: The previous entries whose URL this run writes (the others were removed).
        self._present: set[str] = set()
        #: The previous entries whose URL changed again: this run's entry replaces them.
        self._superseded: set[str] = set()
        self._block: dict[str, UrlFacts] = {}
        self._fresh: list[FeedEntry] = []

    def see(self, facts: UrlFacts) -> None:
        """A URL this run writes, in the block being noted."""
        self._block[facts.loc] = facts
        if facts.loc in self._locs:
            self._present.add(facts.loc)

    def changed(self, changes: Changes) -> None:
        """What IndexNow's notes found in the block: the added and changed become entries."""
        for kind, loc in changes:
            if kind != ADDED and kind != CHANGED:
                continue
            facts = self._block.get(loc)
            if facts is None:  # noted by an earlier block (cannot be: loc order)
                continue
            self._fresh.append(
                FeedEntry(loc, atom_time(facts.lastmod, self._stamp), clean_title(facts.title))
            )
            if loc in self._locs:
                self._superseded.add(loc)
        if len(self._fresh) >= 2 * self._limit:
            self._fresh = self._newest(self._fresh)

    def block_done(self) -> None:
        """The block was noted: its URLs are not needed any more."""
        self._block = {}

    def _newest(self, entries: list[FeedEntry]) -> list[FeedEntry]:
        entries.sort(key=lambda e: e.loc)
        entries.sort(key=lambda e: e.updated, reverse=True)  # stable: by loc within a time
        return entries[: self._limit]

    def finish(self) -> list[FeedEntry]:
        """The feed's entries, newest first, saved for the next run."""
        fresh = self._newest(self._fresh)
        gone = self._superseded
        present = self._present
        kept = [e for e in self._previous if e.loc in present and e.loc not in gone]
        feed = (fresh + kept)[: self._limit]
        for seq, start in enumerate(range(0, len(feed), BLOCK)):
            self._save(seq, _encode(feed[start : start + BLOCK]))
        return feed
