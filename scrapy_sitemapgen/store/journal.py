"""Requests tracked for resume: every request the crawl scheduled, until it is answered.

Scrapy's JOBDIR marks a request seen when it is scheduled, and a SIGKILL can lose its disk
queue and what was in flight: the requests still held here are what a resumed crawl must
send again. The journal lives in the SQLite store's file and writes in the store's ordered
stream, so a commit never keeps a request answered without the page it answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable

__all__ = ["SCHEMA", "RequestJournal"]

#: By fingerprint: ``request`` holds the request (pickled) until it is answered, then NULL.
SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY,
    request BLOB
) WITHOUT ROWID
"""
_TRACK = "INSERT OR IGNORE INTO requests (key) VALUES (?)"
_KEEP = "UPDATE requests SET request = ? WHERE key = ?"
_DONE = "UPDATE requests SET request = NULL WHERE key = ? AND request IS NOT NULL"
_PENDING = "SELECT request FROM requests WHERE request IS NOT NULL"
_CLEAR = "DELETE FROM requests"


class OrderedWrites(Protocol):
    """What the journal needs of the store whose file it shares."""

    def write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Run one write after every write made before it."""
        ...

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> Iterable[tuple[Any, ...]]:
        """Rows of a query, after every write made before it."""
        ...

    def flush(self, force: bool = False) -> None:
        """Commit every write so far."""
        ...


class RequestJournal:
    """Scheduled requests by key, until each is answered."""

    def __init__(self, store: OrderedWrites) -> None:
        self._store = store

    def track(self, key: str, serialize: Callable[[], bytes]) -> bool:
        """Remember a scheduled request until it is answered; True if ``key`` was new
        (``serialize`` is called only then)."""
        if not self._store.write(_TRACK, (key,)).rowcount:
            return False
        self._store.write(_KEEP, (serialize(), key))
        # Committed before Scrapy's dupefilter can persist the request as seen: a request
        # it remembers and we do not would be lost to both after a kill.
        self._store.flush()
        return True

    def done(self, key: str) -> None:
        """The request was answered (or never can be): no longer pending."""
        self._store.write(_DONE, (key,))

    def pending(self) -> list[bytes]:
        """The requests scheduled and not answered, in no particular order."""
        return [bytes(blob) for (blob,) in self._store.read(_PENDING)]

    def clear(self) -> None:
        """Forget every tracked request (a finished crawl has nothing left to send)."""
        self._store.write(_CLEAR, ())
        self._store.flush(force=True)
