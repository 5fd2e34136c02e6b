"""The changes feed's kind of note in the state file: per output and origin, the last
entries of the feed, newest first (:data:`CHANGES_FEED`), so that the feed holds the changes of
several runs, not only this one's (SITEMAPGEN_CHANGES_FEED; the feature itself is
:mod:`..features.changes_feed`).

A kind of note like the others (:class:`.notes.NoteKind`), with two differences: its
blocks hold the feed's order, not loc order (the notes are read whole, at most
SITEMAPGEN_CHANGES_FEED_ENTRIES of them, never joined in a merge pass), and an origin
published by a run with the feed off keeps them (as IndexNow's fingerprints): the next
run with it on goes on from there. Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .notes import NoteKind, pack, unpack

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["CHANGES_FEED", "ChangesFeedEntry", "encode_entries"]


@dataclass(frozen=True, slots=True)
class ChangesFeedEntry:
    """One entry of the feed: the URL (its ``id`` and ``link``), when it changed (its
    lastmod, RFC 3339 in UTC) and its title (None: the page's title is not known)."""

    loc: str
    updated: str
    title: str | None = None


_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def encode_entries(entries: list[ChangesFeedEntry]) -> bytes:
    """A block of the feed's entries as the state keeps it."""
    # One JSON array a line: a title may hold any character, a line feed too.
    return pack("\n".join(_ENCODE([e.loc, e.updated, e.title]) for e in entries))


def _decode(data: bytes) -> Iterator[tuple[str, ChangesFeedEntry]]:
    for line in unpack(data).split("\n"):
        loc, updated, title = json.loads(line)
        yield loc, ChangesFeedEntry(loc, updated, title)


#: The feed's entries: ``feed_blocks`` across runs, ``current_feed`` this run's.
CHANGES_FEED: NoteKind[ChangesFeedEntry, ChangesFeedEntry] = NoteKind(
    "feed_blocks", "current_feed", encode_entries, _decode, kept_unless_noted=True
)
