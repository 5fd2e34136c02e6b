"""The content notes the state keeps per output and origin: each published page's content
fingerprint, when a run last found it changed, and the lastmod published with it
(:class:`..sitemaps.lastmod.Seen`), for the ``observed`` lastmod and lastmods that follow
the content (docs/lastmod.rst).

Kept as blocks of tab-separated lines: loc, fingerprint, observed, lastmod ("" for none),
after a first line that names the fingerprint's version (:data:`VERSION_LINE`). A block
without it was written by the text-only fingerprint (version 1): its fingerprints are read
as :data:`..sitemaps.lastmod.TEXT_ONLY` notes, compared with the text alone, so the
upgrade moves no lastmod. The version is in each block, not once for the file, because a
publish that stops part-way leaves some origins noted by this run and the others as they
were. A state file of 0.1.0 has no such table: every page is then seen for the first
time. Pure.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..sitemaps.lastmod import FINGERPRINT_VERSION, TEXT_ONLY, UNKNOWN_FINGERPRINT, Seen, settle
from .notes import BLOCK, NoteKind, Notes, Save, pack, previous_notes, unpack

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator

    from ..sitemaps.facts import UrlFacts

__all__ = [
    "CONTENTS",
    "VERSION_LINE",
    "ContentNotes",
    "Note",
    "decode_contents",
    "encode_contents",
]

#: The notes of one URL as the state keeps them: (loc, what was seen).
Note = tuple[str, Seen]


#: The first line of a block: the fingerprint's version, as a note of the empty loc (an
#: earlier version of the package reads it as a note no URL meets, and passes it over).
VERSION_LINE = f"\t{FINGERPRINT_VERSION}\t\t"
_TEXT_ONLY_VERSION = "1"


def encode_contents(notes: list[Note]) -> bytes:
    """A block of content notes as the state keeps it."""
    lines = [
        f"{loc}\t{seen.fingerprint}\t{seen.observed or ''}\t{seen.lastmod or ''}"
        for loc, seen in notes
    ]
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1 or text.count("\t") != 3 * len(lines):
        raise ValueError("a loc with a line feed or a tab cannot be noted")
    return pack(f"{VERSION_LINE}\n{text}")


def decode_contents(data: bytes) -> list[Note]:
    """What :func:`encode_contents` packed; a block of another fingerprint's version with
    fingerprints that this run's cannot be compared with (:data:`TEXT_ONLY` for version
    1, whose fingerprint is the text's; unknown for any other)."""
    lines = unpack(data).split("\n")
    version = _TEXT_ONLY_VERSION
    if lines[0][:1] == "\t":  # no loc: the version line
        version = lines.pop(0).split("\t")[1]
    notes = []
    for line in lines:
        loc, fingerprint, observed, lastmod = line.split("\t")
        notes.append((loc, Seen(fingerprint, observed or None, lastmod or None)))
    if version != str(FINGERPRINT_VERSION):
        notes = [(loc, _older(seen, version)) for loc, seen in notes]
    return notes


def _older(seen: Seen, version: str) -> Seen:
    """A note of another fingerprint's version as this one can compare it."""
    noted = seen.fingerprint
    if noted == UNKNOWN_FINGERPRINT or noted[:1] == TEXT_ONLY:
        return seen
    mark = TEXT_ONLY + noted if version == _TEXT_ONLY_VERSION else UNKNOWN_FINGERPRINT
    return Seen(mark, seen.observed, seen.lastmod)


#: The content notes: ``content_blocks`` across runs, ``current_contents`` this run's.
CONTENTS: NoteKind[Seen, Note] = NoteKind(
    "content_blocks", "current_contents", encode_contents, decode_contents
)


def previous_contents(db: sqlite3.Connection, output: str, origin: str) -> Iterator[Note]:
    """The content notes the previous run kept for (``output``, ``origin``), in loc
    order (none from a state file that has no content table)."""
    return previous_notes(db, CONTENTS, output, origin)


class ContentNotes(Notes[Seen, Note]):
    """One origin's entries as this run publishes them, in ``loc`` order, each with the
    lastmod :func:`..sitemaps.lastmod.settle` gives against the previous run's notes
    (read in the same order), and the notes for the next run handed to ``save`` in
    blocks of ``block`` (``save=None``: another pass over the same entries, which keeps
    nothing). A URL the run did not publish keeps no note: when it comes back, it is
    new. ``on_settled`` is told (loc, lastmod) of each entry whose lastmod the notes
    settled to another value than the one it came with (a kept or an observed one)."""

    def __init__(
        self,
        previous: Iterator[Note],
        save: Save | None,
        *,
        observed: bool,
        follows_content: bool,
        block: int = BLOCK,
        on_settled: Callable[[str, str | None], None] | None = None,
    ) -> None:
        super().__init__(CONTENTS, previous, save, block)
        self._observed = observed
        self._follows = follows_content
        self._on_settled = on_settled

    def follow(self, entries: Iterable[UrlFacts]) -> Iterator[UrlFacts]:
        """``entries`` with their lastmod settled."""
        keeping = self._save is not None
        match = self._match
        for facts in entries:
            loc = facts.loc
            previous = match(loc)
            seen = None if previous is None else previous[1]
            if facts.content is None:
                # settle's first rule, without its call: a feed's every record (no
                # fingerprint) keeps its lastmod and what was seen of it.
                if seen is not None and keeping:
                    self._keep((loc, seen))
                yield facts
                continue
            lastmod, note = settle(
                facts, seen, observed=self._observed, follows_content=self._follows
            )
            if note is not None and keeping:
                self._keep((loc, note))
            if lastmod != facts.lastmod:
                facts = dataclasses.replace(facts, lastmod=lastmod)
                if self._on_settled is not None:
                    self._on_settled(loc, lastmod)
            yield facts

    def finish(self) -> None:
        """Save the last block, once every entry was followed."""
        self._flush()
