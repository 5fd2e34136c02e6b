"""IndexNow's notes in the state: a fingerprint of each URL's ``<url>`` entry
(:func:`..sitemaps.indexnow.fingerprint`) per output and origin, kept as blocks of
``loc<TAB>fingerprint`` lines, and the URLs this run added, changed or removed, in a
temporary table (``url_changes``) the submission reads after the commit. Pure.

A run with IndexNow off notes none, and the fingerprints kept stay as they are: the next
run with it on compares with the last run that had it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.indexnow import ADDED, CHANGED, REMOVED
from .notes import BLOCK, NoteKind, Notes, Save, pack, unpack

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "ENTRY_PRINTS",
    "ChangeNotes",
    "Changes",
    "changed_locs",
    "changes_to",
    "create_changes",
]

#: (kind, loc) of URLs that changed, in the order they were noted.
Changes = list[tuple[str, str]]

_CHANGES = (
    "TABLE IF NOT EXISTS url_changes (origin TEXT NOT NULL, kind TEXT NOT NULL, loc TEXT NOT NULL)"
)


def _encode(pairs: list[tuple[str, str]]) -> bytes:
    return pack("\n".join(f"{loc}\t{print_}" for loc, print_ in pairs))


def _decode(data: bytes) -> Iterator[tuple[str, str]]:
    for line in unpack(data).split("\n"):
        loc, _, print_ = line.rpartition("\t")
        yield loc, print_


#: IndexNow's fingerprints: ``indexnow_blocks`` across runs, ``current_fingerprints``
#: this run's; an origin this run did not fingerprint keeps the ones it has.
ENTRY_PRINTS: NoteKind[str, tuple[str, str]] = NoteKind(
    "indexnow_blocks", "current_fingerprints", _encode, _decode, kept_unless_noted=True
)


def create_changes(db: sqlite3.Connection, *, temp: bool) -> None:
    """The table of this run's changes in ``db``: ``temp`` in the state's connection,
    where they are read and deleted by origin. Without the index there, each origin's
    read scanned every origin's changes, a square of the origins in all."""
    if not temp:
        db.execute(f"CREATE {_CHANGES}")
        return
    db.execute(f"CREATE TEMP {_CHANGES}")
    db.execute("CREATE INDEX IF NOT EXISTS temp.url_changes_origin ON url_changes (origin)")


def changes_to(db: sqlite3.Connection, origin: str) -> Callable[[Changes], None]:
    """Where the changes of ``origin`` go: ``db``'s ``url_changes``."""

    def on_changes(changes: Changes) -> None:
        db.executemany(
            "INSERT INTO url_changes VALUES (?, ?, ?)", [(origin, k, loc) for k, loc in changes]
        )

    return on_changes


def changed_locs(db: sqlite3.Connection, origin: str) -> Iterator[tuple[str, str]]:
    """(kind, loc) of every URL of ``origin`` this run added, changed or removed, in loc
    order per kind as noted; read in pages, so no cursor stays open."""
    after = 0
    while True:
        rows = db.execute(
            "SELECT rowid, kind, loc FROM url_changes WHERE origin = ? AND rowid > ?"
            " ORDER BY rowid LIMIT ?",
            (origin, after, BLOCK),
        ).fetchall()
        if not rows:
            return
        for _, kind, loc in rows:
            yield kind, loc
        after = rows[-1][0]


class ChangeNotes(Notes[str, tuple[str, str]]):
    """One origin's (loc, fingerprint) pairs as this run writes them, in loc order,
    compared on the fly with the previous run's: each URL added, changed (its entry's
    fingerprint differs) or removed goes to ``on_changes`` as ``(kind, loc)`` pairs, a
    block at a time; the pairs are kept as blocks for the next run through ``save``."""

    def __init__(
        self,
        previous: Iterator[tuple[str, str]],
        save: Save,
        on_changes: Callable[[Changes], None],
    ) -> None:
        super().__init__(ENTRY_PRINTS, previous, save)
        self._last: str | None = None
        self._on_changes = on_changes
        self._changes: Changes = []
        self.counts = {ADDED: 0, CHANGED: 0, REMOVED: 0}

    def note_all(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Note each (loc, fingerprint) of ``pairs``, in loc order, after those before."""
        changes: Changes = []
        self._changes = changes  # where _passed puts the removed, in loc order
        last, match, size = self._last, self._match, self._size
        kept = self._block
        for loc, print_ in pairs:
            if last is not None and loc <= last:
                if loc == last:
                    continue
                raise ValueError(f"URLs must be noted in loc order: {loc!r} came after {last!r}")
            last = loc
            previous = match(loc)
            if previous is None:
                changes.append((ADDED, loc))
            elif previous[1] != print_:
                changes.append((CHANGED, loc))
            kept.append((loc, print_))
            if len(kept) >= size:
                self._flush()
                kept = self._block
        self._last = last
        self._report(changes)

    def _passed(self, note: tuple[str, str]) -> None:
        self._changes.append((REMOVED, note[0]))

    def _report(self, changes: Changes) -> None:
        for kind, _ in changes:
            self.counts[kind] += 1
        if changes:
            self._on_changes(changes)

    def finish(self) -> dict[str, int]:
        """The counts by kind, once every URL was noted (what is left was removed)."""
        self._flush()
        changes: Changes = []
        self._changes = changes
        self._drain()
        self._report(changes)
        return dict(self.counts)
