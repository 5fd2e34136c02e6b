"""What was published before: each file's content hash and index lastmod, and the URL set,
per output and origin, in a small SQLite file that outlives the crawl.

It is what makes the output incremental (P10): a sitemap whose bytes did not change keeps
its previous ``<lastmod>`` in the index and is not delivered again, so a search engine
re-fetches only what changed; and it lets the close log say which URLs came and went.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from . import indexnow
from .blocks import pack, unpack
from .content import Seen
from .sections import section_counts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

__all__ = [
    "URL_BLOCK",
    "FileRecord",
    "PublishState",
    "StoredOrigins",
    "UrlNotes",
    "decode_contents",
    "encode_contents",
    "manifest_json",
    "previous_contents",
    "previous_locs",
    "stored_origins",
]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS files (
        output TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,
        sha256 TEXT NOT NULL, lastmod TEXT NOT NULL,
        PRIMARY KEY (output, origin, name)) WITHOUT ROWID""",
    # An origin's URL set, in loc order, as zlib blocks of URL_BLOCK locs joined by line
    # feeds: a million URLs are a few hundred small rows, written and read at once, where a
    # row per URL cost more than writing the sitemaps themselves. (A state file of 0.1.0
    # has a row per URL in ``urls`` instead: read once, then moved to blocks.)
    """CREATE TABLE IF NOT EXISTS url_blocks (
        output TEXT NOT NULL, origin TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (output, origin, seq))""",
    # What each published page's content was (``content.Seen``), in loc order, as zlib
    # blocks of tab-separated lines: loc, fingerprint, observed, lastmod ("" for none).
    # A state file of 0.1.0 has no such table: every page is then seen for the first time.
    """CREATE TABLE IF NOT EXISTS content_blocks (
        output TEXT NOT NULL, origin TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (output, origin, seq))""",
    # Per section (SITEMAPGEN_SECTIONS) of each origin: its urlset files and URLs.
    """CREATE TABLE IF NOT EXISTS sections (
        output TEXT NOT NULL, origin TEXT NOT NULL, section TEXT NOT NULL,
        files INTEGER NOT NULL, urls INTEGER NOT NULL,
        PRIMARY KEY (output, origin, section)) WITHOUT ROWID""",
)
#: Locs per stored block: large enough to compress well (sorted URLs share prefixes), small
#: enough that reading the previous run's set holds one block at a time.
URL_BLOCK = 2000


def _encode_block(locs: list[str]) -> bytes:
    text = "\n".join(locs)
    if text.count("\n") != len(locs) - 1:  # normalize_loc never lets one through
        raise ValueError("a loc with a line feed cannot be noted")
    return pack(text)


def _decode_block(data: bytes) -> list[str]:
    return unpack(data).split("\n")


def encode_contents(notes: list[tuple[str, Seen]]) -> bytes:
    """A block of content notes as the state keeps it."""
    lines = [
        f"{loc}\t{seen.fingerprint}\t{seen.observed or ''}\t{seen.lastmod or ''}"
        for loc, seen in notes
    ]
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1 or text.count("\t") != 3 * len(lines):
        raise ValueError("a loc with a line feed or a tab cannot be noted")
    return pack(text)


def decode_contents(data: bytes) -> list[tuple[str, Seen]]:
    notes = []
    for line in unpack(data).split("\n"):
        loc, fingerprint, observed, lastmod = line.split("\t")
        notes.append((loc, Seen(fingerprint, observed or None, lastmod or None)))
    return notes


def previous_contents(
    db: sqlite3.Connection, output: str, origin: str
) -> Iterator[tuple[str, Seen]]:
    """The content notes the previous run kept for (``output``, ``origin``), in loc
    order, one block in memory at a time (each block its own query, as
    :func:`previous_locs`)."""
    if not _has_table(db, "content_blocks"):  # a read-only look at an old state file
        return
    seq = 0
    while True:
        row = db.execute(
            "SELECT data FROM content_blocks WHERE output = ? AND origin = ? AND seq = ?",
            (output, origin, seq),
        ).fetchone()
        if row is None:
            return
        yield from decode_contents(row[0])
        seq += 1


def previous_locs(db: sqlite3.Connection, output: str, origin: str) -> Iterator[str]:
    """The URLs the previous run published for (``output``, ``origin``), in loc order,
    one block in memory at a time. Each block is its own query, so no cursor stays open
    while the caller writes through the same connection."""
    seq = 0
    while True:
        row = db.execute(
            "SELECT data FROM url_blocks WHERE output = ? AND origin = ? AND seq = ?",
            (output, origin, seq),
        ).fetchone()
        if row is None:
            break
        yield from _decode_block(row[0])
        seq += 1
    if seq or not _has_table(db, "urls"):
        return
    after = ""  # a state file from before the blocks: its rows, in their key's order
    while True:
        rows = db.execute(
            "SELECT loc FROM urls WHERE output = ? AND origin = ? AND loc > ? ORDER BY loc LIMIT ?",
            (output, origin, after, URL_BLOCK),
        ).fetchall()
        if not rows:
            return
        for (loc,) in rows:
            yield loc
        after = rows[-1][0]


class StoredOrigins:
    """Which of some origins the state file has URL blocks and content notes for, asked
    once for all of them (:func:`stored_origins`): :func:`previous_locs` and
    :func:`previous_contents` for those, nothing to read for the others."""

    def __init__(
        self, db: sqlite3.Connection, urls: set[str], contents: set[str], old_urls: bool
    ) -> None:
        self._db = db
        self._urls = urls
        self._contents = contents
        self._old_urls = old_urls  # a state file of 0.1.0: its rows are read for any origin

    def locs(self, output: str, origin: str) -> Iterator[str]:
        if origin in self._urls or self._old_urls:
            return previous_locs(self._db, output, origin)
        return iter(())

    def contents(self, output: str, origin: str) -> Iterator[tuple[str, Seen]]:
        if origin in self._contents:
            return previous_contents(self._db, output, origin)
        return iter(())


def stored_origins(db: sqlite3.Connection, output: str, origins: list[str]) -> StoredOrigins:
    """What the state file behind ``db`` holds for ``origins``, in a query per table and
    up to 500 origins."""
    found: dict[str, set[str]] = {"url_blocks": set(), "content_blocks": set()}
    for table, names in found.items():
        if not _has_table(db, table):
            continue
        for chunk in _chunks(origins):
            rows = db.execute(
                f"SELECT DISTINCT origin FROM {table} WHERE output = ? AND origin IN"
                f" ({', '.join('?' * len(chunk))})",
                (output, *chunk),
            )
            names.update(origin for (origin,) in rows)
    return StoredOrigins(db, found["url_blocks"], found["content_blocks"], _has_table(db, "urls"))


#: Origins named in one query: under SQLite's oldest limit of 999 parameters.
_ORIGINS_A_QUERY = 500


def _chunks(origins: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(origins), _ORIGINS_A_QUERY):
        yield origins[start : start + _ORIGINS_A_QUERY]


def _has_table(db: sqlite3.Connection, name: str, schema: str = "main") -> bool:
    return (
        db.execute(
            f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


class UrlNotes:
    """One origin's URLs as this run writes them, in loc order (the order every store
    gives): compared on the fly with the previous run's set, read in the same order, so
    counting what came and went is one merge pass with one block of each in memory; and
    kept as blocks for the next run through ``save(seq, data)``."""

    def __init__(self, previous: Iterator[str], save: Callable[[int, bytes], None]) -> None:
        self._previous = previous
        self._head = next(previous, None)
        self._last: str | None = None
        self._block: list[str] = []
        self._seq = 0
        self._save = save
        self.added = 0
        self.removed = 0

    def note_all(self, locs: list[str]) -> None:
        """Note each of ``locs`` as published, in order, after those noted before: one call
        a block of URLs, not one a URL."""
        last, head, previous = self._last, self._head, self._previous
        added = removed = 0
        kept = self._block
        for loc in locs:
            if last is not None and loc <= last:
                if loc == last:
                    continue
                raise ValueError(f"URLs must be noted in loc order: {loc!r} came after {last!r}")
            last = loc
            while head is not None and head < loc:
                removed += 1
                head = next(previous, None)
            if head == loc:
                head = next(previous, None)
            else:
                added += 1
            kept.append(loc)
            if len(kept) >= URL_BLOCK:
                self._flush()
                kept = self._block
        self._last, self._head = last, head
        self.added += added
        self.removed += removed

    def _flush(self) -> None:
        if self._block:
            self._save(self._seq, _encode_block(self._block))
            self._seq += 1
            self._block = []

    def finish(self) -> tuple[int, int]:
        """(added, removed) since the previous run, once every URL was noted."""
        self._flush()
        while self._head is not None:
            self.removed += 1
            self._head = next(self._previous, None)
        return self.added, self.removed


class FileRecord(NamedTuple):
    """One published file as the manifest lists it. ``size`` and ``sha256`` are of the
    uncompressed bytes; ``lastmod`` is when this content was first published.

    A tuple, not a dataclass: a broad crawl's every origin sends a few of them back from
    a staging worker, and a tuple crosses as one, made again in C (see
    ``staging.OriginSet``), where a frozen dataclass is a Python call each way and a
    ``setattr`` per field."""

    name: str
    kind: str
    entries: int
    size: int
    sha256: str
    lastmod: str
    changed: bool


class PublishState:
    """The state file. One instance per write; the URLs of the run are noted as they are
    written (see :class:`UrlNotes`, blocks into a temporary table) and stored with the
    files once the delivery succeeded, so memory stays flat however many URLs there are."""

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
            not _has_table(self._db, "content_blocks")
            and _has_table(self._db, "files")
            and self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        )
        with self._db:
            for statement in _SCHEMA:
                self._db.execute(statement)
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS current_blocks (origin TEXT NOT NULL,"
            " seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (origin, seq))"
        )
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS current_contents (origin TEXT NOT NULL,"
            " seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (origin, seq))"
        )
        # The origins commit_all records at once.
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS committing (origin TEXT PRIMARY KEY)")
        self._old_urls = _has_table(self._db, "urls")
        self._fingerprinted: set[str] = set()
        self._open_indexnow()

    def _open_indexnow(self) -> None:
        """IndexNow's tables: the fingerprints kept, and this run's in temporary tables."""
        with self._db:
            for statement in indexnow.FINGERPRINT_TABLES:
                self._db.execute(statement)
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS current_fingerprints (origin TEXT NOT NULL,"
            " seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (origin, seq))"
        )
        self._db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS url_changes (origin TEXT NOT NULL,"
            " kind TEXT NOT NULL, loc TEXT NOT NULL)"
        )
        # Read and deleted by origin: without an index, each origin's read scanned every
        # origin's changes, a square of the origins in all.
        self._db.execute(
            "CREATE INDEX IF NOT EXISTS temp.url_changes_origin ON url_changes (origin)"
        )

    def change_notes(self, output: str, origin: str) -> indexnow.ChangeNotes:
        """Notes of what changed for IndexNow, for the URLs this run writes for ``origin``."""
        self._db.execute("DELETE FROM current_fingerprints WHERE origin = ?", (origin,))
        self._db.execute("DELETE FROM url_changes WHERE origin = ?", (origin,))
        self._fingerprinted.add(origin)

        def save(seq: int, data: bytes) -> None:
            self._db.execute(
                "INSERT INTO current_fingerprints VALUES (?, ?, ?)", (origin, seq, data)
            )

        def on_changes(changes: list[tuple[str, str]]) -> None:
            self._db.executemany(
                "INSERT INTO url_changes VALUES (?, ?, ?)", [(origin, k, loc) for k, loc in changes]
            )

        previous = indexnow.previous_fingerprints(self._db, output, origin)
        return indexnow.ChangeNotes(previous, save, on_changes)

    def section_counts(self, output: str, origin: str) -> dict[str, tuple[int, int]]:
        """Section -> (urlset files, URLs) as last published for ``origin``."""
        rows = self._db.execute(
            "SELECT section, files, urls FROM sections WHERE output = ? AND origin = ?",
            (output, origin),
        )
        return {section: (files, urls) for section, files, urls in rows}

    def has_fingerprints(self, output: str, origin: str) -> bool:
        """Whether a previous run left IndexNow fingerprints for ``origin``."""
        return indexnow.has_fingerprints(self._db, output, origin)

    def changed_locs(self, origin: str) -> Iterator[tuple[str, str]]:
        """(kind, loc) of every URL of ``origin`` this run added, changed or removed, in
        loc order per kind as noted; read in pages, so no cursor stays open."""
        after = 0
        while True:
            rows = self._db.execute(
                "SELECT rowid, kind, loc FROM url_changes WHERE origin = ? AND rowid > ?"
                " ORDER BY rowid LIMIT ?",
                (origin, after, URL_BLOCK),
            ).fetchall()
            if not rows:
                return
            for _, kind, loc in rows:
                yield kind, loc
            after = rows[-1][0]

    def _commit_fingerprints(self, output: str, origin: str) -> None:
        if origin not in self._fingerprinted:
            return  # IndexNow is off for this run: the fingerprints kept stay as they are
        self._db.execute(
            "DELETE FROM indexnow_blocks WHERE output = ? AND origin = ?", (output, origin)
        )
        self._db.execute(
            "INSERT INTO indexnow_blocks SELECT ?, origin, seq, data FROM current_fingerprints"
            " WHERE origin = ?",
            (output, origin),
        )

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        """name -> (sha256, lastmod) of what the previous run published."""
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
        found: dict[str, dict[str, tuple[str, str]]] = {}
        for chunk in _chunks(origins):
            rows = self._db.execute(
                "SELECT origin, name, sha256, lastmod FROM files WHERE output = ? AND origin IN"
                f" ({', '.join('?' * len(chunk))})",
                (output, *chunk),
            )
            for origin, name, sha256, lastmod in rows:
                found.setdefault(origin, {})[name] = (sha256, lastmod)
        return found

    def url_notes(self, output: str, origin: str) -> UrlNotes:
        """Notes for the URLs this run writes for ``origin`` (anew if it is staged again)."""
        self._db.execute("DELETE FROM current_blocks WHERE origin = ?", (origin,))

        def save(seq: int, data: bytes) -> None:
            self._db.execute("INSERT INTO current_blocks VALUES (?, ?, ?)", (origin, seq, data))

        return UrlNotes(previous_locs(self._db, output, origin), save)

    def content_notes(
        self, output: str, origin: str
    ) -> tuple[Iterator[tuple[str, Seen]], Callable[[list[tuple[str, Seen]]], None]]:
        """The previous run's content notes of ``origin`` and where this run's go (anew if
        it is staged again): what :class:`content.ContentNotes` reads and saves."""
        self._db.execute("DELETE FROM current_contents WHERE origin = ?", (origin,))
        seq = 0

        def save(notes: list[tuple[str, Seen]]) -> None:
            nonlocal seq
            self._db.execute(
                "INSERT INTO current_contents VALUES (?, ?, ?)",
                (origin, seq, encode_contents(notes)),
            )
            seq += 1

        return previous_contents(self._db, output, origin), save

    def previous_contents(self, output: str, origin: str) -> Iterator[tuple[str, Seen]]:
        """The previous run's content notes of ``origin`` again, for another pass."""
        return previous_contents(self._db, output, origin)

    def take_notes(self, path: Path) -> None:
        """Take the blocks a staging worker saved into another SQLite file (its ``blocks``
        table: origin, seq, data), for every origin it holds, copied inside SQLite."""
        self._db.commit()  # ATTACH is refused inside a transaction
        self._db.execute("ATTACH DATABASE ? AS notes", (str(path),))
        try:
            with self._db:
                self._db.execute(
                    "DELETE FROM current_blocks WHERE origin IN "
                    "(SELECT DISTINCT origin FROM notes.blocks)"
                )
                self._db.execute(
                    "INSERT INTO current_blocks SELECT origin, seq, data FROM notes.blocks"
                )
                self._db.execute(
                    "DELETE FROM current_contents WHERE origin IN "
                    "(SELECT DISTINCT origin FROM notes.contents)"
                )
                self._db.execute(
                    "INSERT INTO current_contents SELECT origin, seq, data FROM notes.contents"
                )
                if _has_table(self._db, "fingerprinted", "notes"):  # IndexNow's, when on
                    noted = [
                        o for (o,) in self._db.execute("SELECT origin FROM notes.fingerprinted")
                    ]
                    self._fingerprinted.update(noted)
                    for table in ("current_fingerprints", "url_changes"):
                        self._db.execute(
                            f"DELETE FROM {table} WHERE origin IN"
                            " (SELECT origin FROM notes.fingerprinted)"
                        )
                    self._db.execute(
                        "INSERT INTO current_fingerprints SELECT origin, seq, data"
                        " FROM notes.fingerprints"
                    )
                    self._db.execute(
                        "INSERT INTO url_changes SELECT origin, kind, loc FROM notes.changes"
                        " ORDER BY rowid"
                    )
        finally:
            self._db.execute("DETACH DATABASE notes")

    def commit(self, output: str, origin: str, files: Iterable[FileRecord]) -> None:
        """Record what was published for one origin (after delivery succeeded)."""
        self.commit_all(output, [(origin, files)])

    def commit_all(
        self, output: str, published: Iterable[tuple[str, Iterable[FileRecord]]]
    ) -> None:
        """Record what was published for each (origin, files), in one transaction: a
        transaction per origin is a sync to disk per origin, which for a broad crawl's
        100,000 origins outweighed writing their sitemaps. The statements are one per
        table for the whole group (its origins in a temporary table), not one per table
        and origin: nine statements an origin cost more than staging a small one."""
        latest = {origin: list(records) for origin, records in published}  # an origin once
        if not latest:
            return
        scope = "origin IN (SELECT origin FROM temp.committing)"
        with self._db:
            self._db.execute("DELETE FROM temp.committing")
            self._db.executemany("INSERT INTO temp.committing VALUES (?)", [(o,) for o in latest])
            tables = ["files", "url_blocks", "content_blocks", "sections"]
            if self._old_urls:  # now in blocks: the old rows would only be read again
                tables.append("urls")
            for table in tables:
                self._db.execute(f"DELETE FROM {table} WHERE output = ? AND {scope}", (output,))
            self._db.executemany(
                "INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                [
                    (output, origin, f.name, f.sha256, f.lastmod)
                    for origin, files in latest.items()
                    for f in files
                ],
            )
            for table, current in (
                ("url_blocks", "current_blocks"),
                ("content_blocks", "current_contents"),
            ):
                self._db.execute(
                    f"INSERT INTO {table} SELECT ?, origin, seq, data FROM {current} WHERE {scope}",
                    (output,),
                )
            for origin in latest:
                self._commit_fingerprints(output, origin)
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


def manifest_json(origin_root: str, files: Iterable[FileRecord], sectioned: bool = False) -> bytes:
    """The machine-readable manifest published beside an origin's files. It holds only
    what the files are (no run time, no "changed since" flags), so an unchanged set has an
    unchanged manifest and nothing at all is delivered again. ``sectioned``
    (SITEMAPGEN_SECTIONS): also the urlset files and URLs of each section."""
    files = list(files)
    if not sectioned and files:
        return _manifest_text(origin_root, files)
    document: dict[str, object] = {
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
    if sectioned:
        counts = section_counts((f.name, f.entries) for f in files if f.kind == "urlset")
        document["sections"] = {
            name: {"files": n_files, "urls": urls} for name, (n_files, urls) in counts.items()
        }
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode()


def _manifest_text(origin_root: str, files: list[FileRecord]) -> bytes:
    """What ``json.dumps(document, indent=1, ensure_ascii=False)`` gives for a manifest
    without sections, put together here: with an indent, json.dumps takes its pure-Python
    encoder, whose cost per origin outweighed writing a broad crawl's small sitemaps.
    tests/test_manifest.py holds the two to the same bytes."""
    quote = json.encoder.encode_basestring
    entries = ",\n".join(
        f'  {{\n   "name": {quote(f.name)},\n   "kind": {quote(f.kind)},\n'
        f'   "entries": {int(f.entries)},\n   "bytes": {int(f.size)},\n'
        f'   "sha256": {quote(f.sha256)},\n   "lastmod": {quote(f.lastmod)}\n  }}'
        for f in files
    )
    return f'{{\n "origin": {quote(origin_root)},\n "files": [\n{entries}\n ]\n}}\n'.encode()
