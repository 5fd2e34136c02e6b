"""The SQLite store: the facts of a crawl in one file, so memory stays flat however large
the site, and a paused or killed crawl (``JOBDIR``) finds what it recorded before; the
request journal for resuming shares the file and its ordered stream of writes.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sitemaps.broken_links import BrokenLink
from ..sitemaps.codec import ALTERNATES_LIKE, COLUMNS, ENTRY_SELECT, fact_row, row_facts
from ..sitemaps.evidence import removes
from ..sitemaps.urls import Origin, origin_of
from . import link_sources as link_rows
from .base import FactStore, StoreError
from .journal import SCHEMA as JOURNAL_SCHEMA
from .journal import RequestJournal
from .verdict_log import SCHEMA as VERDICT_SCHEMA
from .verdict_log import TABLES as VERDICT_TABLES
from .verdict_log import VerdictLog

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from typing_extensions import Self

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts

__all__ = ["SqliteFactStore"]

_SCHEMA_VERSION = 3
_TABLES = frozenset({"urls", "requests"})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls (
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    loc TEXT NOT NULL,
    page_lastmod TEXT,
    item_lastmod TEXT,
    changefreq TEXT,
    priority TEXT,
    page_extra TEXT,
    item_extra TEXT,
    news TEXT,
    PRIMARY KEY (scheme, host, port, loc)
) WITHOUT ROWID
"""
# sitemaps.merge.merge in SQL (held to it by tests/test_merge.py): lastmod.newest() for the
# two lastmods (tests/test_lastmod_decision.py), latest_given() for the rest. SQLite's
# two-argument max() is NULL if either side is, hence the COALESCE.
_UPSERT = f"""
INSERT INTO urls (scheme, host, port, loc, {", ".join(COLUMNS)}, run)
VALUES (?, ?, ?, ?, {", ".join("?" * len(COLUMNS))}, ?)
ON CONFLICT DO UPDATE SET
    run = excluded.run,
    page_lastmod = COALESCE(MAX(page_lastmod, excluded.page_lastmod),
                            page_lastmod, excluded.page_lastmod),
    item_lastmod = COALESCE(MAX(item_lastmod, excluded.item_lastmod),
                            item_lastmod, excluded.item_lastmod),
    changefreq = COALESCE(excluded.changefreq, changefreq),
    priority = COALESCE(excluded.priority, priority),
    page_extra = COALESCE(excluded.page_extra, page_extra),
    item_extra = COALESCE(excluded.item_extra, item_extra),
    news = COALESCE(excluded.news, news)
"""
#: The URLs that pages left out as canonical_elsewhere name (FactSink.record_canonical):
#: one row per URL, not per naming page, under the URL's own origin.
_TARGETS_SCHEMA = """
CREATE TABLE IF NOT EXISTS canonical_targets (
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    loc TEXT NOT NULL,
    PRIMARY KEY (scheme, host, port, loc)
) WITHOUT ROWID
"""
_NAME_TARGET = (
    "INSERT OR IGNORE INTO canonical_targets (scheme, host, port, loc) VALUES (?, ?, ?, ?)"
)
#: This run's verdicts of the URLs it did not list (FactSink.judge): one row per URL, a
#: later verdict replacing an earlier one; emptied when a new crawl starts (start_run).
_JUDGED_SCHEMA = """
CREATE TABLE IF NOT EXISTS judged (
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    loc TEXT NOT NULL,
    verdict TEXT NOT NULL,
    PRIMARY KEY (scheme, host, port, loc)
) WITHOUT ROWID
"""
_JUDGE = "INSERT OR REPLACE INTO judged (scheme, host, port, loc, verdict) VALUES (?, ?, ?, ?, ?)"
_FORGET = "DELETE FROM urls WHERE scheme = ? AND host = ? AND port = ? AND loc = ?"
#: Which crawl is the store's current one (``run``: each row's ``run`` column says which
#: crawl last recorded it), and whether rows of an earlier one are there (``earlier``).
_RUNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID
"""
#: Tables that came after the first stores of this schema: a store without them gets
#: them when it opens (they start empty), so an older store file still opens. (The
#: ``run`` column of ``urls`` came with the last two; an older store's rows have none,
#: and count as an earlier crawl's.)
_ADDED_TABLES = VERDICT_TABLES | {"canonical_targets", "judged", "runs", "links"}
#: Targets a batch of links holds at most before it is written, besides at each commit.
_MOST_LINK_TARGETS = 10_000
# What row_facts() reads, the lastmod to publish chosen in SQL (codec.ENTRY_SELECT).
_SELECT = f"SELECT {ENTRY_SELECT} FROM urls"


class SqliteFactStore(FactStore):
    """:class:`~.base.FactStore` on one SQLite file, written in batched transactions.

    A write is committed at the latest when ``batch_size`` writes are waiting or the
    oldest has waited ``max_delay`` seconds: that is all a ``kill -9`` can lose (WAL mode,
    ``synchronous=NORMAL``: a committed transaction survives the death of the process).
    The file is locked while open, so a second crawl on the same store fails at once
    instead of interleaving its writes.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 500,
        max_delay: float = 1.0,
        link_sources: int = 5,
    ) -> None:
        self.path = Path(path)
        self.batch_size = batch_size
        self.max_delay = max_delay
        self._uncommitted = 0
        self._since = 0.0
        self._rows: list[tuple[Any, ...]] = []
        self._targets: list[tuple[str, str, int, str]] = []
        #: This run's verdicts waiting, and the removals among them (with their locs).
        self._judged: list[tuple[str, str, int, str, str]] = []
        self._forgets: list[tuple[str, str, int, str]] = []
        self._forgotten: set[str] = set()
        #: The links recorded since the last commit, a row per target (store.link_sources).
        self._links = link_rows.LinkBatch(link_sources)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _Lock(self.path)
        try:
            self._open()
        except BaseException:
            self._lock.close()
            raise

    @classmethod
    def from_config(cls, config: Config, location: str) -> Self:
        return cls(
            location,
            batch_size=config.commit_writes,
            max_delay=config.commit_seconds,
            link_sources=config.link_sources,
        )

    def _open(self) -> None:
        try:
            # The exporter reads the store from a worker thread at close, never concurrently
            # with the crawl's writes, so sharing the connection across threads is safe.
            self._db = sqlite3.connect(self.path, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the sitemap store {self.path}: {exc}") from exc
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                name
                for (name,) in self._db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
            if tables and (version != _SCHEMA_VERSION or tables - _ADDED_TABLES != _TABLES):
                self._db.close()
                raise StoreError(
                    f"{self.path} is not a scrapy-sitemapgen store of schema "
                    f"{_SCHEMA_VERSION} (found user_version {version})"
                )
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._db:
                self._db.execute(_SCHEMA)
                self._db.execute(JOURNAL_SCHEMA)
                for schema in VERDICT_SCHEMA:
                    self._db.execute(schema)
                self._db.execute(_TARGETS_SCHEMA)
                self._db.execute(_JUDGED_SCHEMA)
                self._db.execute(_RUNS_SCHEMA)
                self._db.execute(link_rows.SCHEMA)
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(urls)")}
                if "run" not in columns:
                    self._db.execute("ALTER TABLE urls ADD COLUMN run INTEGER")
                self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            runs = dict(self._db.execute("SELECT name, value FROM runs").fetchall())
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"cannot open the sitemap store {self.path}: {exc}") from exc
        link_rows.register(self._db, self._links.limit)
        #: The current crawl's number, and whether an earlier crawl's rows are there.
        self._run: int = runs.get("run", 0)
        self._earlier = bool(runs.get("earlier", 0))

    def start_run(self, *, resumed: bool) -> None:
        if resumed:
            return
        self.flush()
        with self._db:
            earlier = self._db.execute("SELECT EXISTS (SELECT 1 FROM urls)").fetchone()[0]
            self._run += 1
            self._earlier = bool(earlier)
            self._db.executemany(
                "INSERT OR REPLACE INTO runs VALUES (?, ?)",
                [("run", self._run), ("earlier", int(self._earlier))],
            )
            self._db.execute("DELETE FROM judged")
            self._db.execute("DELETE FROM links")  # an earlier crawl's links are not this one's

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        if self._forgotten and facts.loc in self._forgotten:
            self._drain()  # its removal waiting in the batch was made before this record
        origin = origin_of(facts.loc)
        # Upserts wait in a short list and go to SQLite together (executemany is several
        # times cheaper per row); any other write, read or commit sends them first, so
        # the order of writes is kept.
        self._rows.append(
            (
                origin.scheme,
                origin.host,
                origin.port,
                facts.loc,
                *fact_row(facts, from_item),
                self._run,
            )
        )
        self._count()
        if len(self._rows) >= 256:
            self._drain()

    def record_canonical(self, target: str) -> None:
        origin = origin_of(target)
        # Batched as the upserts; the two tables are independent, so which of the two
        # lists goes to SQLite first does not matter.
        self._targets.append((origin.scheme, origin.host, origin.port, target))
        self._count()
        if len(self._targets) >= 256:
            self._drain()

    def record_links(self, source: str, targets: Iterable[str]) -> None:
        # Aggregated until the commit, not sent with each other write (the journal's
        # writes drain the lists at every request): one upsert per target per batch.
        self._links.add(source, targets)
        self._count()
        if len(self._links) >= _MOST_LINK_TARGETS:
            self._write_links()

    def _write_links(self) -> None:
        if self._links:
            self._db.executemany(link_rows.UPSERT, link_rows.upsert_rows(self._links))

    def judge(self, loc: str, verdict: str) -> None:
        origin = origin_of(loc)
        key = (origin.scheme, origin.host, origin.port, loc)
        # Batched as the upserts; a removal is applied after the upserts waiting with it
        # (made before it), and a record of the same URL made after it drains it first.
        self._judged.append((*key, verdict))
        if removes(verdict):
            self._forgets.append(key)
            self._forgotten.add(loc)
        self._count()
        if len(self._judged) >= 256:
            self._drain()

    def _drain(self) -> None:
        if self._rows:
            self._db.executemany(_UPSERT, self._rows)
            self._rows.clear()
        if self._targets:
            self._db.executemany(_NAME_TARGET, self._targets)
            self._targets.clear()
        if self._judged:
            self._db.executemany(_JUDGE, self._judged)
            self._judged.clear()
        if self._forgets:
            self._db.executemany(_FORGET, self._forgets)
            self._forgets.clear()
            self._forgotten.clear()

    def write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Run one write in the open transaction, after every write made before it
        (readers on this connection see it at once); commit when the window is full."""
        self._drain()
        cursor = self._db.execute(sql, params)
        self._count()
        return cursor

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """The rows of a query, after every write made before it."""
        self._drain()
        self._write_links()
        return self._db.execute(sql, params)

    def journal(self) -> RequestJournal:
        return RequestJournal(self)

    def verdicts(self) -> VerdictLog:
        return VerdictLog(self)

    def has_alternates(self) -> bool:
        """Whether some page declares alternates, found in SQL without reading a row into
        Python: the page extras' key of alternates (:data:`~..sitemaps.codec.ALTERNATES_LIKE`);
        the scan stops at the first."""
        self.flush()
        found = self._db.execute(
            "SELECT 1 FROM urls WHERE page_extra LIKE ? LIMIT 1", (ALTERNATES_LIKE,)
        ).fetchone()
        return found is not None

    def _count(self) -> None:
        if not self._uncommitted:
            self._since = time.monotonic()
        self._uncommitted += 1
        if self._uncommitted >= self.batch_size or time.monotonic() - self._since >= self.max_delay:
            self.flush()

    def flush(self, force: bool = False) -> None:
        """Commit: every write so far becomes durable, in order, all at once."""
        if self._uncommitted or force:
            self._drain()
            self._write_links()  # in the same transaction: durable with what came before
            self._db.commit()
            self._uncommitted = 0

    def origins(self) -> list[Origin]:
        self.flush()
        rows = self._db.execute(
            "SELECT DISTINCT scheme, host, port FROM urls ORDER BY scheme, host, port"
        )
        return [Origin(scheme, host, port) for scheme, host, port in rows]

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        self.flush()
        cursor = self._db.execute(
            f"{_SELECT} WHERE scheme = ? AND host = ? AND port = ? ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )
        for row in cursor:
            yield row_facts(*row)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        self.flush()
        cursor = self._db.execute(
            f"{_SELECT} WHERE scheme = ? AND host = ? AND port = ? AND news IS NOT NULL"
            " ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )
        for row in cursor:
            yield row_facts(*row)

    def judged(self, origin: Origin) -> Iterator[tuple[str, str]]:
        self.flush()
        yield from self._db.execute(
            "SELECT loc, verdict FROM judged WHERE scheme = ? AND host = ? AND port = ?"
            " ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )

    def judged_origins(self) -> list[Origin]:
        self.flush()
        rows = self._db.execute(
            "SELECT DISTINCT scheme, host, port FROM judged ORDER BY scheme, host, port"
        )
        return [Origin(scheme, host, port) for scheme, host, port in rows]

    def earlier(self, origin: Origin) -> Iterator[str]:
        if not self._earlier:
            return
        self.flush()
        rows = self._db.execute(
            "SELECT loc FROM urls WHERE scheme = ? AND host = ? AND port = ?"
            " AND (run IS NULL OR run < ?) ORDER BY loc",
            (origin.scheme, origin.host, origin.port, self._run),
        )
        for (loc,) in rows:
            yield loc

    def broken_links(self, origin: Origin | None = None) -> Iterator[BrokenLink]:
        self.flush()
        sql, params = link_rows.broken_query(origin)
        for loc, verdict, sources in self._db.execute(sql, params):
            count, first = link_rows.decode(sources)
            yield BrokenLink(loc, verdict, count, first)

    def canonical_targets(self, origin: Origin) -> Iterator[str]:
        self.flush()
        cursor = self._db.execute(
            "SELECT loc FROM canonical_targets WHERE scheme = ? AND host = ? AND port = ?"
            " ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )
        for (loc,) in cursor:
            yield loc

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT COUNT(*) FROM urls").fetchone()[0])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()
            self._lock.close()


class _Lock:
    """An exclusive advisory lock on ``<store>.lock``, held while the store is open."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")
        self._file = self.path.open("a+")
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; the store still works
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            raise StoreError(
                f"the sitemap store {path} is in use by {holder}: another crawl with the same "
                f"JOBDIR or SITEMAPGEN_STORE is running"
            ) from None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"process {os.getpid()}\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()  # closing the file releases the lock
