"""What was published before: each file's content hash and index lastmod, and the URL set,
per output and origin, in a small SQLite file that outlives the crawl.

It is what makes the output incremental (P10): a sitemap whose bytes did not change keeps
its previous ``<lastmod>`` in the index and is not delivered again, so a search engine
re-fetches only what changed; and it lets the close log say which URLs came and went.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileRecord", "PublishState", "manifest_json"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS files (
        output TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,
        sha256 TEXT NOT NULL, lastmod TEXT NOT NULL,
        PRIMARY KEY (output, origin, name)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS urls (
        output TEXT NOT NULL, origin TEXT NOT NULL, loc TEXT NOT NULL,
        PRIMARY KEY (output, origin, loc)) WITHOUT ROWID""",
)


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One published file as the manifest lists it. ``size`` and ``sha256`` are of the
    uncompressed bytes; ``lastmod`` is when this content was first published."""

    name: str
    kind: str
    entries: int
    size: int
    sha256: str
    lastmod: str
    changed: bool


class PublishState:
    """The state file. One instance per write; URLs of the run are noted as they are
    written (in batches, into a temporary table) and compared in SQL, so memory stays flat
    however many URLs there are."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")
        with self._db:
            for statement in _SCHEMA:
                self._db.execute(statement)
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS current (origin TEXT NOT NULL, loc TEXT NOT NULL,"
            " PRIMARY KEY (origin, loc)) WITHOUT ROWID"
        )
        self._pending: list[tuple[str, str]] = []

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        """name -> (sha256, lastmod) of what the previous run published."""
        rows = self._db.execute(
            "SELECT name, sha256, lastmod FROM files WHERE output = ? AND origin = ?",
            (output, origin),
        )
        return {name: (sha256, lastmod) for name, sha256, lastmod in rows}

    def note(self, origin: str, loc: str) -> None:
        """Note ``loc`` as published by this run for ``origin``."""
        self._pending.append((origin, loc))
        if len(self._pending) >= 1000:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT OR IGNORE INTO current VALUES (?, ?)", self._pending)
        self._pending.clear()

    def take_notes(self, path: Path) -> None:
        """Note every ``(origin, loc)`` of the ``current`` table of another SQLite file: a
        staging worker's notes, copied inside SQLite rather than row by row in Python."""
        self._flush()
        self._db.commit()  # ATTACH is refused inside a transaction
        self._db.execute("ATTACH DATABASE ? AS notes", (str(path),))
        try:
            with self._db:
                self._db.execute("INSERT OR IGNORE INTO current SELECT origin, loc FROM notes.current")
        finally:
            self._db.execute("DETACH DATABASE notes")

    def url_changes(self, output: str, origin: str) -> tuple[int, int]:
        """(added, removed) between the previous run's URLs and the ones noted now."""
        self._flush()
        added = self._db.execute(
            "SELECT COUNT(*) FROM current WHERE origin = ? AND loc NOT IN"
            " (SELECT loc FROM urls WHERE output = ? AND origin = ?)",
            (origin, output, origin),
        ).fetchone()[0]
        removed = self._db.execute(
            "SELECT COUNT(*) FROM urls WHERE output = ? AND origin = ?"
            " AND loc NOT IN (SELECT loc FROM current WHERE origin = ?)",
            (output, origin, origin),
        ).fetchone()[0]
        return int(added), int(removed)

    def commit(self, output: str, origin: str, files: Iterable[FileRecord]) -> None:
        """Record what was published for one origin (after delivery succeeded)."""
        self._flush()
        with self._db:
            self._db.execute("DELETE FROM files WHERE output = ? AND origin = ?", (output, origin))
            self._db.executemany(
                "INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                [(output, origin, f.name, f.sha256, f.lastmod) for f in files],
            )
            self._db.execute("DELETE FROM urls WHERE output = ? AND origin = ?", (output, origin))
            self._db.execute(
                "INSERT INTO urls SELECT ?, origin, loc FROM current WHERE origin = ?",
                (output, origin),
            )

    def close(self) -> None:
        self._db.close()


def manifest_json(origin_root: str, files: Iterable[FileRecord]) -> bytes:
    """The machine-readable manifest published beside an origin's files. It holds only
    what the files are (no run time, no "changed since" flags), so an unchanged set has an
    unchanged manifest and nothing at all is delivered again."""
    document = {
        "origin": origin_root,
        "files": [
            {
                "name": f.name,
                "kind": f.kind,
                "entries": f.entries,
                "bytes": f.size,
                "sha256": f.sha256,
                "lastmod": f.lastmod,
            }
            for f in files
        ],
    }
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode()
