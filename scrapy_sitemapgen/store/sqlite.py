"""Where the facts live during a crawl: an SQLite file, so memory stays flat however large
the site, and a paused crawl (``JOBDIR``) finds what it recorded before the pause.

:class:`FactStore` is the whole interface the adapters use; a shared store for crawls on
several machines implements the same few methods.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..sitemaps.facts import Alternate, News, UrlFacts, Video
from ..sitemaps.limits import MAX_IMAGES_PER_URL
from ..sitemaps.urls import Origin, origin_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["FactStore", "SqliteFactStore", "StoreError"]

_SCHEMA_VERSION = 3
_TABLES = frozenset({"urls", "requests"})
# Every request the crawl scheduled, by fingerprint: ``request`` holds it (pickled) until
# it is answered, then NULL. Scrapy's JOBDIR marks a request seen when it is scheduled,
# and a SIGKILL can lose its disk queue and what was in flight: the requests still held
# here are what a resumed crawl must send again.
_REQUESTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY,
    request BLOB
) WITHOUT ROWID
"""
_TRACK = "INSERT OR IGNORE INTO requests (key) VALUES (?)"
_KEEP = "UPDATE requests SET request = ? WHERE key = ?"
_DONE = "UPDATE requests SET request = NULL WHERE key = ? AND request IS NOT NULL"
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
# Merge rules, the same whatever order the facts arrive in: the newest lastmod of each
# source wins, an item's lastmod beats the page's (read at output), and an item's
# changefreq/priority replace earlier ones. Media are kept per source (the newest page
# record's, the newest item's) and combined at output. SQLite's two-argument max() is NULL
# if either side is, hence the COALESCE.
_UPSERT = """
INSERT INTO urls (scheme, host, port, loc, page_lastmod, item_lastmod, changefreq, priority,
                  page_extra, item_extra, news)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO UPDATE SET
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
_SELECT = (
    "SELECT loc, COALESCE(item_lastmod, page_lastmod), changefreq, priority,"
    " page_extra, item_extra, news FROM urls"
)


# json.dumps() with options builds an encoder per call: these are built once (same text).
_stdlib_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_news_json = json.JSONEncoder(ensure_ascii=False).encode
try:  # the ``fast`` extra
    from orjson import dumps as _orjson_dumps
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - the extra is installed for the tests
    _orjson_dumps = _orjson_loads = None  # type: ignore[assignment]


def _compact_json(value: object) -> str:
    """The standard library's compact JSON, by orjson when installed: ten times faster (a
    page's media, 0.3 against 3.4 µs), and the same text for every code point, tested.
    What orjson refuses (a lone surrogate, an integer beyond 64 bits) takes the standard road."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    return _stdlib_compact_json(value)


def _dump_extra(facts: UrlFacts) -> str:
    """Images, videos and alternates as compact JSON; "" when there are none (not NULL, so
    a newer page record without media does replace an older one's)."""
    if not (facts.images or facts.videos or facts.alternates):
        return ""
    extra: dict[str, Any] = {}
    if facts.images:
        extra["i"] = facts.images
    if facts.videos:
        extra["v"] = [
            [
                v.thumbnail_loc,
                v.title,
                v.description,
                v.content_loc,
                v.player_loc,
                v.duration,
                v.publication_date,
            ]
            for v in facts.videos
        ]
    if facts.alternates:
        extra["a"] = [[a.hreflang, a.href] for a in facts.alternates]
    return _compact_json(extra)


def _load_extra(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    if _orjson_loads is not None:
        try:
            return _orjson_loads(text)  # type: ignore[no-any-return]
        except ValueError:  # a lone surrogate the standard encoder wrote
            pass
    return json.loads(text)  # type: ignore[no-any-return]


def fact_row(facts: UrlFacts, from_item: bool) -> tuple[str | None, ...]:
    """(page_lastmod, item_lastmod, changefreq, priority, page_extra, item_extra, news): one
    record as every store keeps it, each source in its own column so merges do not depend
    on arrival order."""
    extra = _dump_extra(facts)
    news = (
        _news_json(
            [
                facts.news.publication_name,
                facts.news.publication_language,
                facts.news.publication_date,
                facts.news.title,
            ]
        )
        if facts.news
        else None
    )
    return (
        None if from_item else facts.lastmod,
        facts.lastmod if from_item else None,
        facts.changefreq,
        facts.priority,
        None if from_item else extra,
        extra or None if from_item else None,
        news,
    )


def merge_row(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    page_extra: str | None,
    item_extra: str | None,
    news: str | None,
) -> UrlFacts:
    page, item = _load_extra(page_extra), _load_extra(item_extra)
    images = tuple(dict.fromkeys([*page.get("i", ()), *item.get("i", ())]))[:MAX_IMAGES_PER_URL]
    videos: dict[tuple[str | None, str | None], Video] = {}
    for fields in [*page.get("v", ()), *item.get("v", ())]:
        video = Video(*fields)
        videos.setdefault((video.content_loc, video.player_loc), video)
    return UrlFacts(
        loc,
        lastmod,
        changefreq,
        priority,
        images=images,
        videos=tuple(videos.values()),
        alternates=tuple(Alternate(h, href) for h, href in page.get("a", ())),
        news=News(*json.loads(news)) if news else None,
    )


class StoreError(RuntimeError):
    """The store file cannot be used (unreadable, another schema, another program's)."""


class FactStore(Protocol):
    """The operations the middleware, the pipeline and the exporter need.

    Writes are applied in the order they are made, and :meth:`flush` makes a prefix of
    them durable at once, so a crash never keeps a request marked answered without the
    page it answered."""

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        """Add or merge the facts of one URL. Cheap: may be buffered until :meth:`flush`."""

    def flush(self) -> None:
        """Make every recorded fact durable and visible to readers."""

    def track(self, key: str, serialize: Callable[[], bytes]) -> bool:
        """Remember a scheduled request until it is answered; True if ``key`` was new
        (``serialize`` is called only then)."""

    def done(self, key: str) -> None:
        """The request was answered (or never can be): no longer pending."""

    def pending_requests(self) -> list[bytes]:
        """The requests scheduled and not answered, in no particular order."""

    def clear_pending(self) -> None:
        """Forget every tracked request (a finished crawl has nothing left to send)."""

    def origins(self) -> list[Origin]:
        """Every origin with at least one URL, sorted."""

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        """The merged entries of one origin in ``loc`` order (code-point order)."""

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        """The entries of one origin that carry news facts, in ``loc`` order."""

    def __len__(self) -> int:
        """Distinct URLs recorded."""

    def close(self) -> None:
        """Flush and release the store."""


class SqliteFactStore:
    """:class:`FactStore` on one SQLite file, written in batched transactions.

    A write is committed at the latest when ``batch_size`` writes are waiting or the
    oldest has waited ``max_delay`` seconds: that is all a ``kill -9`` can lose (WAL mode,
    ``synchronous=NORMAL``: a committed transaction survives the death of the process).
    The file is locked while open, so a second crawl on the same store fails at once
    instead of interleaving its writes.
    """

    def __init__(self, path: str | Path, *, batch_size: int = 500, max_delay: float = 1.0) -> None:
        self.path = Path(path)
        self.batch_size = batch_size
        self.max_delay = max_delay
        self._uncommitted = 0
        self._since = 0.0
        self._rows: list[tuple[Any, ...]] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _Lock(self.path)
        try:
            self._open()
        except BaseException:
            self._lock.close()
            raise

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
            if tables and (version != _SCHEMA_VERSION or tables != _TABLES):
                self._db.close()
                raise StoreError(
                    f"{self.path} is not a scrapy-sitemapgen store of schema "
                    f"{_SCHEMA_VERSION} (found user_version {version})"
                )
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._db:
                self._db.execute(_SCHEMA)
                self._db.execute(_REQUESTS_SCHEMA)
                self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"cannot open the sitemap store {self.path}: {exc}") from exc

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        origin = origin_of(facts.loc)
        # Upserts wait in a short list and go to SQLite together (executemany is several
        # times cheaper per row); any other write, read or commit sends them first, so
        # the order of writes is kept.
        self._rows.append(
            (origin.scheme, origin.host, origin.port, facts.loc, *fact_row(facts, from_item))
        )
        self._count()
        if len(self._rows) >= 256:
            self._drain()

    def _drain(self) -> None:
        if self._rows:
            self._db.executemany(_UPSERT, self._rows)
            self._rows.clear()

    def track(self, key: str, serialize: Callable[[], bytes]) -> bool:
        if not self._write(_TRACK, (key,)).rowcount:
            return False
        self._write(_KEEP, (serialize(), key))
        # Committed before Scrapy's dupefilter can persist the request as seen: a request
        # it remembers and we do not would be lost to both after a kill.
        self.flush()
        return True

    def done(self, key: str) -> None:
        self._write(_DONE, (key,))

    def pending_requests(self) -> list[bytes]:
        self._drain()
        rows = self._db.execute("SELECT request FROM requests WHERE request IS NOT NULL")
        return [bytes(blob) for (blob,) in rows]

    def clear_pending(self) -> None:
        self._db.execute("DELETE FROM requests")
        self.flush(force=True)

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Run one write in the open transaction (readers on this connection see it at
        once); commit when the window is full."""
        self._drain()
        cursor = self._db.execute(sql, params)
        self._count()
        return cursor

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
            yield merge_row(*row)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        self.flush()
        cursor = self._db.execute(
            f"{_SELECT} WHERE scheme = ? AND host = ? AND port = ? AND news IS NOT NULL"
            " ORDER BY loc",
            (origin.scheme, origin.host, origin.port),
        )
        for row in cursor:
            yield merge_row(*row)

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
