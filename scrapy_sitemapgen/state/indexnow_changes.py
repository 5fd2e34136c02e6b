"""IndexNow's part of the state file: the kind of note that keeps a fingerprint of each
URL's ``<url>`` entry per output and origin (:data:`ENTRY_PRINTS`, blocks of
``loc<TAB>fingerprint`` lines; the notes themselves are :mod:`..features.entry_prints`'s), and
the URLs this run added, changed or removed, in a temporary table (``url_changes``) the
submission reads after the commit. Pure.

A run with IndexNow off notes none, and the fingerprints kept stay as they are: the next
run with it on compares with the last run that had it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .notes import BLOCK, NoteKind, pack, unpack

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

__all__ = [
    "ENTRY_PRINTS",
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
