"""The entries the state keeps per output and origin as they were published, with when
evidence last confirmed each: what a page the next run cannot judge (a 5xx, a timeout,
not reached) is published again from (:mod:`..sitemaps.evidence`).

Kept as blocks of ``loc<TAB>confirmed<TAB>entry`` lines: ``confirmed`` in seconds since
the epoch, ``entry`` the JSON of :func:`..sitemaps.codec.published_text` (compact JSON
escapes every tab and line feed). A run that publishes a feed (``sitemapgen-build
--input``) keeps none: a feed states the whole site, and nothing is kept without it.
Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.codec import published_text
from ..sitemaps.evidence import Previous
from .notes import BLOCK, NoteKind, Notes, Save, pack, unpack

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..sitemaps.facts import UrlFacts

__all__ = ["ENTRIES", "PublishedNotes"]

#: A note as this run writes it: (loc, confirmed, the entry's text).
_Line = tuple[str, int, str]


def _encode(lines: list[_Line]) -> bytes:
    return pack("\n".join(f"{loc}\t{confirmed}\t{text}" for loc, confirmed, text in lines))


def _decode(data: bytes) -> Iterator[tuple[str, Previous]]:
    for line in unpack(data).split("\n"):
        loc, confirmed, text = line.split("\t", 2)
        yield loc, (int(confirmed), text)


#: The published entries: ``entry_blocks`` across runs, ``current_entries`` this run's.
ENTRIES: NoteKind[Previous, _Line] = NoteKind("entry_blocks", "current_entries", _encode, _decode)


class PublishedNotes(Notes[Previous, _Line]):
    """This run's published entries of one origin, noted in loc order as they are
    written, for the next run; ``now``: this run's time, the confirmation of every entry
    this run listed (a kept one carries its own, :attr:`UrlFacts.confirmed`)."""

    def __init__(self, save: Save, now: int) -> None:
        super().__init__(ENTRIES, iter(()), save, BLOCK)
        self._now = now

    def note(self, facts: UrlFacts) -> None:
        confirmed = self._now if facts.confirmed is None else facts.confirmed
        self._keep((facts.loc, confirmed, published_text(facts)))

    def finish(self) -> None:
        self._flush()
