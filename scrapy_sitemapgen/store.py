"""Where the facts live during a crawl: an SQLite file, so memory stays flat however large
the site, and a paused crawl (``JOBDIR``) finds what it recorded before the pause.

:class:`FactStore` is the whole interface the adapters use; a shared store for crawls on
several machines implements the same few methods.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .facts import UrlFacts
from .urls import Origin, origin_of

__all__ = ["FactStore", "SqliteFactStore", "StoreError"]

_SCHEMA_VERSION = 1
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
    PRIMARY KEY (scheme, host, port, loc)
) WITHOUT ROWID
"""
# Merge rules, the same whatever order the facts arrive in: the newest lastmod of each
# source wins, an item's lastmod beats the page's (read at output), and an item's
# changefreq/priority replace earlier ones. SQLite's two-argument max() is NULL if either
# side is, hence the COALESCE.
_UPSERT = """
INSERT INTO urls (scheme, host, port, loc, page_lastmod, item_lastmod, changefreq, priority)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO UPDATE SET
    page_lastmod = COALESCE(MAX(page_lastmod, excluded.page_lastmod),
                            page_lastmod, excluded.page_lastmod),
    item_lastmod = COALESCE(MAX(item_lastmod, excluded.item_lastmod),
                            item_lastmod, excluded.item_lastmod),
    changefreq = COALESCE(excluded.changefreq, changefreq),
    priority = COALESCE(excluded.priority, priority)
"""
_Row = tuple[str, str, int, str, "str | None", "str | None", "str | None", "str | None"]


class StoreError(RuntimeError):
    """The store file cannot be used (unreadable, another schema, another program's)."""


class FactStore(Protocol):
    """The operations the middleware, the pipeline and the exporter need."""

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        """Add or merge the facts of one URL. Cheap: may be buffered until :meth:`flush`."""

    def flush(self) -> None:
        """Make every recorded fact durable and visible to readers."""

    def origins(self) -> list[Origin]:
        """Every origin with at least one URL, sorted."""

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        """The merged entries of one origin in ``loc`` order (code-point order)."""

    def __len__(self) -> int:
        """Distinct URLs recorded."""

    def close(self) -> None:
        """Flush and release the store."""


class SqliteFactStore:
    """:class:`FactStore` on one SQLite file, written in batched transactions."""

    def __init__(self, path: str | Path, *, batch_size: int = 500) -> None:
        self.path = Path(path)
        self.batch_size = batch_size
        self._pending: list[_Row] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # The exporter reads the store from a worker thread at close, never concurrently
            # with the crawl's writes, so sharing the connection across threads is safe.
            self._db = sqlite3.connect(self.path, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the sitemap store {self.path}: {exc}") from exc
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            tables = self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
            ).fetchall()
            if tables and version != _SCHEMA_VERSION:
                self._db.close()
                raise StoreError(
                    f"{self.path} is not a scrapy-sitemapgen store of schema "
                    f"{_SCHEMA_VERSION} (found user_version {version})"
                )
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._db:
                self._db.execute(_SCHEMA)
                self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"cannot open the sitemap store {self.path}: {exc}") from exc

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        origin = origin_of(facts.loc)
        self._pending.append(
            (
                origin.scheme,
                origin.host,
                origin.port,
                facts.loc,
                None if from_item else facts.lastmod,
                facts.lastmod if from_item else None,
                facts.changefreq,
                facts.priority,
            )
        )
        if len(self._pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        with self._db:
            self._db.executemany(_UPSERT, self._pending)
        self._pending.clear()

    def origins(self) -> list[Origin]:
        self.flush()
        rows = self._db.execute(
            "SELECT DISTINCT scheme, host, port FROM urls ORDER BY scheme, host, port"
        )
        return [Origin(scheme, host, port) for scheme, host, port in rows]

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        self.flush()
        cursor = self._db.execute(
            "SELECT loc, COALESCE(item_lastmod, page_lastmod), changefreq, priority FROM urls"
            " WHERE scheme = ? AND host = ? AND port = ? ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )
        for loc, lastmod, changefreq, priority in cursor:
            yield UrlFacts(loc, lastmod, changefreq, priority)

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT COUNT(*) FROM urls").fetchone()[0])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()
