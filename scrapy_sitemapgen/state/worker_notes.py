"""The state as a staging worker sees it, and how the state file takes in what it noted.

A worker reads the state file (read-only) and writes this run's notes into a side file of
its own, a SQLite file with the tables of the notes as the state's connection has them
(each kind's :attr:`.notes.NoteKind.current`, ``noted`` and ``url_changes``);
:func:`adopt` copies them into the state's temporary tables, inside SQLite, before the
commit. Pure.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from .indexnow_changes import changes_to, create_changes
from .notes import StoredOrigins, has_table, previous_notes
from .view import KINDS, StateView

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .indexnow_changes import Changes
    from .notes import NoteKind, Save

__all__ = ["WorkerState", "adopt"]

#: Rows a worker's notes hold before they are inserted.
_BATCH = 200

_NOTED = (
    "CREATE TABLE IF NOT EXISTS noted (kind TEXT NOT NULL, origin TEXT NOT NULL,"
    " PRIMARY KEY (kind, origin))"
)


class WorkerState(StateView):
    """The state as a staging worker sees it: the previous run's files (read by the
    parent: :attr:`previous`) and notes (read here, from the state file at
    ``state_path``), this run's notes saved into the side file ``notes`` for the parent
    to take in (:func:`adopt`).

    A task of many small origins would otherwise cost several statements an origin:
    which of the task's origins have notes of a kind is asked once for the task (the
    others, a broad crawl's new hosts, read nothing), and what is noted is inserted in
    batches."""

    def __init__(self, state_path: Path, notes: Path, output: str, origins: list[str]) -> None:
        self.previous: dict[str, tuple[str, str]] = {}
        self._state = sqlite3.connect(f"{state_path.resolve().as_uri()}?mode=ro", uri=True)
        self._stored = StoredOrigins(self._state, output, origins)
        self._db = sqlite3.connect(notes)
        self._db.execute("PRAGMA journal_mode = OFF")  # scratch: nothing to recover
        self._db.execute("PRAGMA synchronous = OFF")
        #: Rows not yet inserted, by table: written _BATCH at a time and at close.
        self._pending: dict[str, list[tuple[str, int, bytes]]] = {}

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        return self.previous

    def notes(
        self, kind: NoteKind[Any, Any], output: str, origin: str
    ) -> tuple[Iterator[tuple[str, Any]], Save]:
        table = kind.current
        rows = self._pending.get(table)
        if rows is None:
            self._db.execute(kind.current_schema(temp=False))
            rows = self._pending[table] = []
        if kind.kept_unless_noted:  # IndexNow's: the origins noted, even those with no block
            self._db.execute(_NOTED)
            self._db.execute("INSERT OR IGNORE INTO noted VALUES (?, ?)", (kind.table, origin))
            previous = previous_notes(self._state, kind, output, origin)
        else:
            previous = self._stored.previous(kind, output, origin)

        def save(seq: int, data: bytes) -> None:
            rows.append((origin, seq, data))
            if len(rows) >= _BATCH:
                self._insert(table)

        return previous, save

    def read_again(
        self, kind: NoteKind[Any, Any], output: str, origin: str
    ) -> Iterator[tuple[str, Any]]:
        return self._stored.previous(kind, output, origin)

    def changes_to(self, origin: str) -> Callable[[Changes], None]:
        create_changes(self._db, temp=False)
        return changes_to(self._db, origin)

    def _insert(self, table: str) -> None:
        rows = self._pending[table]
        self._db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)
        rows.clear()

    def forget(self, origin: str) -> None:
        """Drop what was noted for ``origin``: it had nothing to publish."""
        for table, rows in self._pending.items():
            rows[:] = [row for row in rows if row[0] != origin]
            self._db.execute(f"DELETE FROM {table} WHERE origin = ?", (origin,))
        for table in ("noted", "url_changes"):
            if has_table(self._db, table):
                self._db.execute(f"DELETE FROM {table} WHERE origin = ?", (origin,))

    def close(self) -> None:
        self._state.close()
        for table in self._pending:
            self._insert(table)
        self._db.commit()
        self._db.close()


def adopt(db: sqlite3.Connection, path: Path) -> None:
    """Copy the notes of a worker's side file at ``path`` into the temporary tables of
    the state's connection ``db`` (outside a transaction: ATTACH is refused inside one),
    replacing what they held for the origins it noted."""
    db.execute("ATTACH DATABASE ? AS notes", (str(path),))
    try:
        with db:
            for kind in KINDS:
                if not has_table(db, kind.current, "notes"):
                    continue
                if kind.kept_unless_noted:
                    db.execute(
                        f"DELETE FROM temp.{kind.current} WHERE origin IN"
                        " (SELECT origin FROM notes.noted WHERE kind = ?)",
                        (kind.table,),
                    )
                else:
                    db.execute(
                        f"DELETE FROM temp.{kind.current} WHERE origin IN"
                        f" (SELECT DISTINCT origin FROM notes.{kind.current})"
                    )
                db.execute(
                    f"INSERT INTO temp.{kind.current} SELECT origin, seq, data"
                    f" FROM notes.{kind.current}"
                )
            if has_table(db, "noted", "notes"):
                db.execute("INSERT OR IGNORE INTO temp.noted SELECT kind, origin FROM notes.noted")
            if has_table(db, "url_changes", "notes"):  # IndexNow's, when on
                db.execute(
                    "DELETE FROM temp.url_changes WHERE origin IN (SELECT origin FROM notes.noted)"
                )
                db.execute(
                    "INSERT INTO temp.url_changes SELECT origin, kind, loc"
                    " FROM notes.url_changes ORDER BY rowid"
                )
    finally:
        db.execute("DETACH DATABASE notes")
