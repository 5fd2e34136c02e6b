"""The state file: what was published before, per output and origin, in a small SQLite file
that outlives the crawl: each file's content hash and index lastmod (and, locally, its size
and modification time on disk), the section counts, and the notes of each kind
(:data:`.view.KINDS`).

It is what makes the output incremental (P10): a sitemap whose bytes did not change keeps
its previous ``<lastmod>`` in the index and is not delivered again, so a search engine
re-fetches only what changed; and it lets the close log say which URLs came and went.
Pure.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..sitemaps.lastmod import FINGERPRINT_VERSION
from ..sitemaps.sections import section_counts
from .indexnow_changes import ENTRY_PRINTS, changed_locs, changes_to, create_changes
from .notes import chunks, has_notes, has_table, previous_notes
from .published_entries import ENTRIES
from .url_notes import URLS
from .view import KINDS, StateView
from .worker_notes import adopt

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from ..sitemaps.evidence import Previous
    from ..sitemaps.manifest import FileRecord
    from .indexnow_changes import Changes
    from .notes import NoteKind, Save

__all__ = ["PublishState", "Stamp", "Stamps"]

#: A published file's size and modification time (``st_mtime_ns``) on disk.
Stamp = tuple[int, int]
#: Origin name -> file name -> :data:`Stamp`.
Stamps = dict[str, dict[str, Stamp]]

_FILES = """CREATE TABLE IF NOT EXISTS files (
        output TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,
        sha256 TEXT NOT NULL, lastmod TEXT NOT NULL,
        disk_size INTEGER, disk_mtime_ns INTEGER,
        PRIMARY KEY (output, origin, name)) WITHOUT ROWID"""
#: The columns of a local file's :data:`Stamp` as the publish last saw it on disk (when it
#: delivered the file, or found it intact by its bytes), for the delivery's quick check
#: (:func:`..publish.delivery.publish_local`). NULL where none was seen (a remote output,
#: a state rebuilt from the manifests): the bytes are compared then. Added in place to
#: the ``files`` table of a state file made before them.
_STAMP_COLUMNS = ("disk_size", "disk_mtime_ns")
_UNSEEN: tuple[int | None, int | None] = (None, None)
# Per section (SITEMAPGEN_SECTIONS) of each origin: its urlset files and URLs.
_SECTIONS = """CREATE TABLE IF NOT EXISTS sections (
        output TEXT NOT NULL, origin TEXT NOT NULL, section TEXT NOT NULL,
        files INTEGER NOT NULL, urls INTEGER NOT NULL,
        PRIMARY KEY (output, origin, section)) WITHOUT ROWID"""
# What the file was last written with, by name: the content fingerprint's version.
_META = """CREATE TABLE IF NOT EXISTS meta (
        name TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"""
_FINGERPRINT = "fingerprint_version"


class PublishState(StateView):
    """The state file. One instance per write; the notes of the run are kept as they are
    written (blocks into temporary tables) and stored with the files once the delivery
    succeeded, so memory stays flat however many URLs there are."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")
        # FULL, not NORMAL: in WAL mode NORMAL syncs the log only at checkpoints, so a
        # power cut can undo the last commits, and a commit is what says a delivered set
        # (synced before it: publish.delivery) is published. One sync per group's commit.
        self._db.execute("PRAGMA synchronous = FULL")
        #: Whether this state file was written by a version that kept no content notes
        #: (it has published files, no content table): the publish says so once.
        self.migrated = (
            not has_table(self._db, "content_blocks")
            and has_table(self._db, "files")
            and self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        )
        #: Whether this state file holds content notes of an earlier fingerprint's
        #: version (:data:`..sitemaps.lastmod.FINGERPRINT_VERSION`): the publish says once
        #: that lastmods were kept. Each block of notes says its own version, which is
        #: what the notes are read by (:mod:`.content_notes`); this is the file's last.
        self.fingerprint_upgraded = (
            not self.migrated
            and has_table(self._db, "content_blocks")
            and self._db.execute("SELECT 1 FROM content_blocks LIMIT 1").fetchone() is not None
            and self._fingerprint_version() < FINGERPRINT_VERSION
        )
        urls, contents, prints, feed, entries = KINDS
        with self._db:
            for statement in (
                _FILES,
                urls.schema,
                contents.schema,
                _SECTIONS,
                prints.schema,
                _META,
                feed.schema,
                entries.schema,
            ):
                self._db.execute(statement)
            present = {row[1] for row in self._db.execute("PRAGMA table_info(files)")}
            for column in _STAMP_COLUMNS:
                if column not in present:  # a state file of an earlier version
                    self._db.execute(f"ALTER TABLE files ADD COLUMN {column} INTEGER")
        for kind in KINDS:
            self._db.execute(kind.current_schema(temp=True))
        # The origins commit_all records at once, and those noted of a kind whose rows
        # are kept when an origin is not.
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS committing (origin TEXT PRIMARY KEY)")
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS noted (kind TEXT NOT NULL, origin TEXT NOT NULL,"
            " PRIMARY KEY (kind, origin))"
        )
        create_changes(self._db, temp=True)
        #: The legacy tables there are: now in blocks, their rows would only be read again.
        self._legacy = [
            kind.legacy.table
            for kind in KINDS
            if kind.legacy is not None and has_table(self._db, kind.legacy.table)
        ]

    def _fingerprint_version(self) -> int:
        """The fingerprint's version the file was last written with: 1 before it was
        noted (the text-only fingerprint)."""
        if not has_table(self._db, "meta"):
            return 1
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (_FINGERPRINT,))
        found = row.fetchone()
        return 1 if found is None else int(found[0])

    def notes(
        self, kind: NoteKind[Any, Any], output: str, origin: str
    ) -> tuple[Iterator[tuple[str, Any]], Save]:
        self._db.execute(f"DELETE FROM {kind.current} WHERE origin = ?", (origin,))
        if kind.kept_unless_noted:
            self._db.execute("INSERT OR IGNORE INTO noted VALUES (?, ?)", (kind.table, origin))
        insert = f"INSERT INTO {kind.current} VALUES (?, ?, ?)"

        def save(seq: int, data: bytes) -> None:
            self._db.execute(insert, (origin, seq, data))

        return previous_notes(self._db, kind, output, origin), save

    def read_again(
        self, kind: NoteKind[Any, Any], output: str, origin: str
    ) -> Iterator[tuple[str, Any]]:
        return previous_notes(self._db, kind, output, origin)

    def previous_published(self, output: str, origin: str) -> Iterator[tuple[str, Previous]]:
        """What the previous run published for ``origin``, in loc order: its entries, or,
        from a state file written before they were kept, its URLs alone."""
        if has_notes(self._db, ENTRIES, output, origin):
            return previous_notes(self._db, ENTRIES, output, origin)
        return ((loc, (None, None)) for loc, _ in previous_notes(self._db, URLS, output, origin))

    def published_origins(self, output: str) -> set[str]:
        """The origins the previous runs published for ``output`` (by their URL sets)."""
        rows = self._db.execute(
            f"SELECT DISTINCT origin FROM {URLS.table} WHERE output = ?", (output,)
        )
        return {origin for (origin,) in rows}

    def changes_to(self, origin: str) -> Callable[[Changes], None]:
        self._db.execute("DELETE FROM url_changes WHERE origin = ?", (origin,))
        return changes_to(self._db, origin)

    def changed_locs(self, origin: str) -> Iterator[tuple[str, str]]:
        """(kind, loc) of every URL of ``origin`` this run added, changed or removed, in
        loc order per kind as noted."""
        return changed_locs(self._db, origin)

    def has_fingerprints(self, output: str, origin: str) -> bool:
        """Whether a previous run left IndexNow fingerprints for ``origin``."""
        return has_notes(self._db, ENTRY_PRINTS, output, origin)

    def section_counts(self, output: str, origin: str) -> dict[str, tuple[int, int]]:
        """Section -> (urlset files, URLs) as last published for ``origin``."""
        rows = self._db.execute(
            "SELECT section, files, urls FROM sections WHERE output = ? AND origin = ?",
            (output, origin),
        )
        return {section: (files, urls) for section, files, urls in rows}

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        rows = self._db.execute(
            "SELECT name, sha256, lastmod FROM files WHERE output = ? AND origin = ?",
            (output, origin),
        )
        return {name: (sha256, lastmod) for name, sha256, lastmod in rows}

    def previous_files_of(
        self, output: str, origins: list[str]
    ) -> dict[str, dict[str, tuple[str, str]]]:
        """:meth:`previous_files` of each of ``origins`` (those with none left out), in
        queries of up to 500 origins rather than one each."""
        return self._files_of(output, origins, "sha256, lastmod")

    def file_stamps(self, output: str, origins: list[str]) -> Stamps:
        """The :data:`Stamp` of each published file of ``origins`` the state keeps (those
        with none left out), in queries of up to 500 origins."""
        return self._files_of(
            output,
            origins,
            "disk_size, disk_mtime_ns",
            " AND disk_size IS NOT NULL AND disk_mtime_ns IS NOT NULL",
        )

    def _files_of(
        self, output: str, origins: list[str], columns: str, condition: str = ""
    ) -> dict[str, dict[str, Any]]:
        """Origin -> file name -> the two ``columns`` of each file of ``origins`` in the
        ``files`` table (rows meeting ``condition`` only)."""
        found: dict[str, dict[str, Any]] = {}
        for chunk in chunks(origins):
            rows = self._db.execute(
                f"SELECT origin, name, {columns} FROM files WHERE output = ?{condition}"
                f" AND origin IN ({', '.join('?' * len(chunk))})",
                (output, *chunk),
            )
            for origin, name, first, second in rows:
                found.setdefault(origin, {})[name] = (first, second)
        return found

    def take_notes(self, path: Path) -> None:
        """Take in the notes a staging worker saved into its side file at ``path``, for
        every origin it holds (:func:`.worker_notes.adopt`)."""
        self._db.commit()  # ATTACH is refused inside a transaction
        adopt(self._db, path)

    def commit(self, output: str, origin: str, files: Iterable[FileRecord]) -> None:
        """Record what was published for one origin (after delivery succeeded)."""
        self.commit_all(output, [(origin, files)])

    def commit_all(
        self,
        output: str,
        published: Iterable[tuple[str, Iterable[FileRecord]]],
        stamps: Stamps | None = None,
    ) -> None:
        """Record what was published for each (origin, files), in one transaction: a
        transaction per origin is a sync to disk per origin, which for a broad crawl's
        100,000 origins outweighed writing their sitemaps. The statements are one per
        table for the whole group (its origins in a temporary table), not one per table
        and origin: nine statements an origin cost more than staging a small one.
        ``stamps``: each file's :data:`Stamp` on disk as the local delivery left it (a file
        without one is recorded without)."""
        latest = {origin: list(records) for origin, records in published}  # an origin once
        if not latest:
            return
        scope = "origin IN (SELECT origin FROM temp.committing)"
        with self._db:
            self._db.execute("DELETE FROM temp.committing")
            self._db.executemany("INSERT INTO temp.committing VALUES (?)", [(o,) for o in latest])
            for table in ("files", "sections", *self._legacy):
                self._db.execute(f"DELETE FROM {table} WHERE output = ? AND {scope}", (output,))
            for kind in KINDS:
                if kind.kept_unless_noted:
                    self._db.execute(
                        f"DELETE FROM {kind.table} WHERE output = ? AND {scope} AND origin IN"
                        " (SELECT origin FROM temp.noted WHERE kind = ?)",
                        (output, kind.table),
                    )
                else:
                    self._db.execute(
                        f"DELETE FROM {kind.table} WHERE output = ? AND {scope}", (output,)
                    )
                self._db.execute(
                    f"INSERT INTO {kind.table} SELECT ?, origin, seq, data FROM {kind.current}"
                    f" WHERE {scope}",
                    (output,),
                )
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (_FINGERPRINT, str(FINGERPRINT_VERSION)),
            )
            on_disk = stamps or {}
            rows = []
            for origin, files in latest.items():
                seen = on_disk.get(origin, {})
                for f in files:
                    size, mtime_ns = seen.get(f.name, _UNSEEN)
                    rows.append((output, origin, f.name, f.sha256, f.lastmod, size, mtime_ns))
            self._db.executemany(
                "INSERT INTO files (output, origin, name, sha256, lastmod, disk_size,"
                " disk_mtime_ns) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.executemany(
                "INSERT INTO sections VALUES (?, ?, ?, ?, ?)",
                [
                    (output, origin, section, count[0], count[1])
                    for origin, files in latest.items()
                    for section, count in section_counts(
                        (f.name, f.entries) for f in files if f.kind == "urlset"
                    ).items()
                ],
            )

    def close(self) -> None:
        self._db.close()
