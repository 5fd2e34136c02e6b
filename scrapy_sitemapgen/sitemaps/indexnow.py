"""IndexNow's pure part: the key, the URLs that changed since the previous run, batches.

IndexNow (https://www.indexnow.org/documentation) is how a site tells search engines which
of its URLs were added, changed or removed: a POST of JSON ``{"host", "key",
"keyLocation", "urlList"}``, at most 10,000 URLs of the one host per request, the key
proved by a text file on that host holding the key.

What changed is found like the state's URL set (:mod:`.manifest`): this run's URLs, each
with a fingerprint of its ``<url>`` entry, in loc order, compared in one merge pass with the
previous run's, read in the same order; kept as zlib blocks for the next run.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from .blocks import pack, unpack

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "ADDED",
    "CHANGED",
    "ENDPOINT",
    "KEY_RE",
    "MAX_URLS_PER_REQUEST",
    "REMOVED",
    "ChangeNotes",
    "batches",
    "fingerprint",
    "key_file_name",
    "previous_fingerprints",
]

#: The shared endpoint, which passes each submission on to every engine taking part.
ENDPOINT = "https://api.indexnow.org/indexnow"
#: The protocol's key: 8 to 128 characters of a-z, A-Z, 0-9 and ``-``.
KEY_RE = re.compile(r"[a-zA-Z0-9-]{8,128}")
#: The protocol's limit of URLs in one request.
MAX_URLS_PER_REQUEST = 10_000
ADDED, CHANGED, REMOVED = "added", "changed", "removed"
#: (loc, fingerprint) pairs per stored block, as the state's URL blocks.
FINGERPRINT_BLOCK = 2000

FINGERPRINT_TABLES = (
    """CREATE TABLE IF NOT EXISTS indexnow_blocks (
        output TEXT NOT NULL, origin TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (output, origin, seq))""",
)


def key_file_name(key: str) -> str:
    """The key file the protocol looks for without a ``keyLocation``: ``<key>.txt``."""
    return f"{key}.txt"


def fingerprint(entry: bytes) -> str:
    """A short fingerprint of a ``<url>`` entry's bytes: equal entries, equal prints."""
    return hashlib.blake2b(entry, digest_size=8).hexdigest()


def _encode(pairs: list[tuple[str, str]]) -> bytes:
    return pack("\n".join(f"{loc}\t{print_}" for loc, print_ in pairs))


def _decode(data: bytes) -> Iterator[tuple[str, str]]:
    for line in unpack(data).split("\n"):
        loc, _, print_ = line.rpartition("\t")
        yield loc, print_


def previous_fingerprints(
    db: sqlite3.Connection, output: str, origin: str
) -> Iterator[tuple[str, str]]:
    """The (loc, fingerprint) pairs the previous run published, in loc order, one block in
    memory at a time (each block its own query, as :func:`.manifest.previous_locs`)."""
    seq = 0
    while True:
        row = db.execute(
            "SELECT data FROM indexnow_blocks WHERE output = ? AND origin = ? AND seq = ?",
            (output, origin, seq),
        ).fetchone()
        if row is None:
            return
        yield from _decode(row[0])
        seq += 1


def has_fingerprints(db: sqlite3.Connection, output: str, origin: str) -> bool:
    """Whether a previous run left fingerprints for (``output``, ``origin``)."""
    row = db.execute(
        "SELECT 1 FROM indexnow_blocks WHERE output = ? AND origin = ? LIMIT 1", (output, origin)
    ).fetchone()
    return row is not None


class ChangeNotes:
    """One origin's (loc, fingerprint) pairs as this run writes them, in loc order,
    compared on the fly with the previous run's: each URL added, changed (its entry's
    fingerprint differs) or removed goes to ``on_changes`` as ``(kind, loc)`` pairs, a
    block at a time; the pairs are kept as blocks for the next run through ``save``."""

    def __init__(
        self,
        previous: Iterator[tuple[str, str]],
        save: Callable[[int, bytes], None],
        on_changes: Callable[[list[tuple[str, str]]], None],
    ) -> None:
        self._previous = previous
        self._head = next(previous, None)
        self._last: str | None = None
        self._block: list[tuple[str, str]] = []
        self._seq = 0
        self._save = save
        self._on_changes = on_changes
        self.counts = {ADDED: 0, CHANGED: 0, REMOVED: 0}

    def note_all(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Note each (loc, fingerprint) of ``pairs``, in loc order, after those before."""
        changes: list[tuple[str, str]] = []
        head, previous, last = self._head, self._previous, self._last
        for loc, print_ in pairs:
            if last is not None and loc <= last:
                if loc == last:
                    continue
                raise ValueError(f"URLs must be noted in loc order: {loc!r} came after {last!r}")
            last = loc
            while head is not None and head[0] < loc:
                changes.append((REMOVED, head[0]))
                head = next(previous, None)
            if head is not None and head[0] == loc:
                if head[1] != print_:
                    changes.append((CHANGED, loc))
                head = next(previous, None)
            else:
                changes.append((ADDED, loc))
            self._block.append((loc, print_))
            if len(self._block) >= FINGERPRINT_BLOCK:
                self._flush()
        self._head, self._last = head, last
        self._report(changes)

    def _report(self, changes: list[tuple[str, str]]) -> None:
        for kind, _ in changes:
            self.counts[kind] += 1
        if changes:
            self._on_changes(changes)

    def _flush(self) -> None:
        if self._block:
            self._save(self._seq, _encode(self._block))
            self._seq += 1
            self._block = []

    def finish(self) -> dict[str, int]:
        """The counts by kind, once every URL was noted (what is left was removed)."""
        self._flush()
        changes = []
        while self._head is not None:
            changes.append((REMOVED, self._head[0]))
            self._head = next(self._previous, None)
        self._report(changes)
        return dict(self.counts)


def batches(locs: Iterable[str], size: int = MAX_URLS_PER_REQUEST) -> Iterator[list[str]]:
    """``locs`` in lists of at most ``size`` (at most the protocol's 10,000)."""
    size = min(size, MAX_URLS_PER_REQUEST)
    batch: list[str] = []
    for loc in locs:
        batch.append(loc)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def key_folder(key_location: str) -> str:
    """The folder a key file at ``key_location`` vouches for: IndexNow accepts only URLs
    that start with it."""
    return key_location.rsplit("/", 1)[0] + "/"
