"""The offline build's store: sorted runs on disk, merged on the fly.

A feed's rows (:mod:`.input_reader`) are kept in runs sorted by ``loc``. :class:`RunStore`
reads each origin's runs through the :class:`~..store.base.FactSource` interface, merged
in ``loc`` order, repeated URLs combined by the merge rules (:mod:`.run_merge`), so the
exporter writes and publishes them as it would a crawl's store: the same bytes. Its
origins are staged in the build's worker processes (:mod:`.pool`, through the abilities
of :class:`.source.PooledSource`), each merging its own origin's runs while it writes: no
merged copy is ever written. Nothing here imports Scrapy.
"""

from __future__ import annotations

import heapq
import logging
import shutil
from array import array
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from ..sitemaps.codec import run_entries
from ..sitemaps.urls import origin_of_root
from .run_files import (
    INDEX_KEYS,
    Index,
    LoadedSegment,
    OriginKey,
    Run,
    Segment,
    covering,
    read_keyed,
    read_segment,
)
from .run_merge import merged_rows, runs_of
from .source import PooledSource

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from concurrent.futures import Executor
    from pathlib import Path

    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin


logger = logging.getLogger(__name__)

__all__ = ["FIRST_ORIGINS", "OriginRuns", "RunStore", "read_stretches"]


@dataclass(frozen=True, slots=True)
class OriginRuns:
    """One origin's runs and counts, as a staging task gets them: no ``__dict__`` of its
    own, a task of small origins has hundreds."""

    runs: list[Run] | None  # None: in the store's range indexes (see run_merge.runs_of)
    rows: int  # repeats counted: an upper bound of the URLs
    news: int
    #: Distinct URLs, once the runs were merged to the end; None: not yet.
    count: int | None = None

    def with_runs(self, runs: list[Run] | None) -> OriginRuns:
        return OriginRuns(runs, self.rows, self.news, self.count)

    def with_count(self, count: int) -> OriginRuns:
        return OriginRuns(self.runs, self.rows, self.news, count)


#: The most bytes of one shared file a staging task reads at once (see read_stretches).
_SPAN_BYTES = 8 << 20


def read_stretches(entries: dict[Origin, OriginRuns]) -> dict[Origin, OriginRuns]:
    """``entries`` with their segments read, each shared file's in one read where the
    segments lie close together: a spill writes its small origins in the order of their
    roots, and a task of small origins takes neighbours in that order (see
    :func:`.pool.tasks`), so a task's segments of one spill are one stretch of it. One
    read per segment was most of what reading a broad crawl's small origin cost."""
    spans: dict[str, list[int]] = {}  # path -> [lowest start, highest end, bytes wanted]
    for origin_runs in entries.values():
        for run in origin_runs.runs or ():
            if isinstance(run, Segment):
                path, start, end = run
                span = spans.get(path)
                if span is None:
                    spans[path] = [start, end, end - start]
                else:
                    span[0] = min(span[0], start)
                    span[1] = max(span[1], end)
                    span[2] += end - start
    read: dict[str, tuple[int, bytes]] = {
        # Only a dense stretch: the task's segments at least half of what is read.
        path: (low, read_segment(path, low, high))
        for path, (low, high, wanted) in spans.items()
        if high - low <= min(_SPAN_BYTES, 2 * wanted)
    }
    if not read:
        return entries

    def loaded(run: Run) -> Run:
        if isinstance(run, Segment) and run.path in read:
            low, data = read[run.path]
            return LoadedSegment(data[run.start - low : run.end - low])
        return run

    return {
        origin: origin_runs.with_runs([loaded(run) for run in origin_runs.runs or ()])
        for origin, origin_runs in entries.items()
    }


#: How many of the first origins a run store keeps (see :meth:`RunStore.first_origins`):
#: the close report's lines are for the first few (``SITEMAPGEN_LOG_ORIGINS``, 20 by
#: default), and finding them in the origins file is a pass over every origin.
FIRST_ORIGINS = 1000

#: Decoded blocks of the origins file kept (see RunStore._listed): a task of small
#: origins spans two or three.
_RECENT_BLOCKS = 4

#: In the counts kept by place in the origins file: not counted yet.
_UNCOUNTED = -1


class RunStore(PooledSource):
    """:class:`~..store.base.FactSource` over sorted run files: what the exporter needs to
    publish. Read-only; :meth:`close` removes the files and stops the worker processes,
    which the exporter stages origins in (see :func:`.pool.stage_in_pool`).

    Its origins are in a keyed file of their own (``origins``: each one's key, rows and
    rows with news, in key order; see :func:`.run_files.write_keyed`), read a few blocks
    at a time as the staging tasks are made and sent, so that the main process holds no
    object per origin, whatever the origin count: of each, only the distinct URLs its
    task counted, a number in an array, by its place in that file. ``held`` are the
    entries whose runs were looked up while the store was built, by origin: those read in
    the main process (a build in one process: all of them) and those merged down in
    passes. A staging task's part holds its origins' entries alone (``origins`` None)."""

    has_content = False  # a feed's records are items: no page content

    def __init__(
        self,
        folder: Path,
        held: dict[Origin, OriginRuns],
        pool: Executor | None = None,
        lock: BinaryIO | None = None,
        indexes: list[Index] | None = None,
        origins: Index | None = None,
        first: list[Origin] | None = None,
    ) -> None:
        self.folder = folder
        self._lock = lock
        self._held = held
        self._origins = origins
        #: The first FIRST_ORIGINS origins in origin order (see first_origins): all of
        #: them when there are fewer. Made while the store was built.
        self._first = sorted(held)[:FIRST_ORIGINS] if first is None else first
        #: The origins file's blocks read last, decoded (see _listed).
        self._recent: deque[tuple[int, list[Any]]] = deque(maxlen=_RECENT_BLOCKS)
        #: Distinct URLs of each origin of the origins file, by its place there;
        #: _UNCOUNTED: not known yet (see add_counts).
        self._counts = array("q")
        if origins is not None and origins[1]:
            # The file's length in entries: the blocks before the last are full.
            at, last = next(read_keyed(origins, [origins[1][-1][0]]))
            self._counts = array("q", [_UNCOUNTED]) * (at + len(last))
        #: Where the runs of the origins whose ``runs`` are None are (see runs_of), and
        #: each index's blocks' first keys, once a part is taken.
        self._indexes = indexes or []
        self._firsts: list[list[OriginKey]] | None = None
        #: The build's worker processes (None: this process only).
        self._pool = pool
        #: A staging task's part (see :meth:`part`): its segments are read all at once,
        #: before the first origin is.
        self._unread = False

    def __getstate__(self) -> dict[str, Any]:
        # What a staging worker gets: its part's entries and the files, not the pool it
        # runs in, nor the lock, nor the parent's counts.
        return {
            "folder": self.folder,
            "_held": self._held,
            "_origins": None,
            "_counts": array("q"),
            "_first": [],
            "_recent": deque(maxlen=_RECENT_BLOCKS),
            "_pool": None,
            "_lock": None,
            "_unread": self._unread,
            "_indexes": self._indexes,
            "_firsts": None,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def pool(self) -> Executor | None:
        """The build's worker processes: its run files can be read in any of them."""
        return self._pool

    def _listed(self, smallest: int = 0) -> Iterator[tuple[int | None, Origin, OriginRuns]]:
        """Every entry of at least ``smallest`` rows with its place in the origins file
        (None for a part's), in key order; a held entry in place of the file's. The blocks
        read last are kept (decoded) for :meth:`_found`: a staging task is made of the
        origins just listed, and its part is taken next."""
        if self._origins is None:
            for origin, entry in sorted(self._held.items(), key=lambda item: item[0].root):
                if entry.rows >= smallest:
                    yield None, origin, entry
            return
        held = self._held
        for first, block in read_keyed(self._origins):
            self._recent.append((first, block))
            for at, (key, rows, news) in enumerate(block, first):
                if rows >= smallest:
                    origin = origin_of_root(key)
                    kept = held.get(origin) if held else None
                    yield at, origin, kept or OriginRuns(None, rows, news)

    def _found(self, origins: Iterable[Origin]) -> dict[Origin, tuple[int | None, OriginRuns]]:
        """``origins``' entries (those the store has): the held ones at None (their counts
        are kept on them), the others with their places in the origins file, found by
        their roots, each block needed read once."""
        found: dict[Origin, tuple[int | None, OriginRuns]] = {}
        wanted: dict[OriginKey, Origin] = {}
        held = self._held
        for origin in origins:
            entry = held.get(origin) if held else None
            if entry is not None:
                found[origin] = (None, entry)
            else:
                wanted[origin.root] = origin
        if not wanted or self._origins is None:
            return found
        low, high = min(wanted), max(wanted)
        missing = set(wanted)

        def take(blocks: Iterable[tuple[int, list[Any]]]) -> None:
            for first, block in blocks:
                if block[-1][0] < low or block[0][0] > high:
                    continue
                for at, (key, rows, news) in enumerate(block, first):
                    match = wanted.get(key)
                    if match is not None:
                        found[match] = (at, OriginRuns(None, rows, news))
                        missing.discard(key)

        take(list(self._recent))  # a task just made: its origins were listed last
        if missing:
            take(read_keyed(self._origins, missing))
        return found

    def part(self, origins: list[Origin]) -> RunStore:
        """The run files of ``origins`` alone: a staging task's whole input. Sending every
        origin's runs with every task cost the square of the origins."""
        entries = {origin: entry for origin, (_, entry) in self._found(origins).items()}
        keys = [origin.root for origin, entry in entries.items() if entry.runs is None]
        indexes: list[Index] = []
        if keys:
            if self._firsts is None:
                self._firsts = [[first for first, _, _ in d] for _, d in self._indexes]
            low, high = min(keys), max(keys)
            indexes = [
                covering(index, firsts, low, high)
                for index, firsts in zip(self._indexes, self._firsts)
            ]
        part = RunStore(self.folder, entries, indexes=indexes, first=[])
        part._unread = True
        return part

    def with_runs(self, origins: Iterable[Origin]) -> dict[Origin, OriginRuns]:
        """``origins``' entries, their runs read from the range indexes where they are
        there (one read of each index block they need)."""
        return self._with_runs({o: entry for o, (_, entry) in self._found(origins).items()})

    def _with_runs(self, entries: dict[Origin, OriginRuns]) -> dict[Origin, OriginRuns]:
        keys = [o.root for o, entry in entries.items() if entry.runs is None]
        if keys:
            found = runs_of(self._indexes, keys)
            for origin, entry in entries.items():
                if entry.runs is None:
                    entries[origin] = entry.with_runs(found.get(origin.root, []))
        return entries

    def counts(self, origins: list[Origin]) -> list[int | None]:
        found = self._found(origins)
        return [self._count(*found[o]) if o in found else None for o in origins]

    def _count(self, at: int | None, entry: OriginRuns) -> int | None:
        if at is not None and self._counts[at] != _UNCOUNTED:
            return self._counts[at]
        return entry.count

    def add_counts(self, origins: list[Origin], counts: list[int | None]) -> None:
        found = self._found(origins)
        for origin, count in zip(origins, counts):
            if count is None or origin not in found:
                continue
            at, entry = found[origin]
            if at is not None:
                self._counts[at] = count
            else:
                self._held[origin] = entry.with_count(count)

    def sized_origins(self, smallest: int = 0) -> Iterator[tuple[Origin, int]]:
        """Every origin of at least ``smallest`` rows (repeats counted) and its rows, in
        the order of their roots. An Origin is made only for those: a broad crawl's
        hundreds of thousands are made once per pass, the cost of a pass."""
        for _, origin, entry in self._listed(max(smallest, 1)):
            yield origin, entry.rows

    def origins(self) -> list[Origin]:
        return sorted(origin for origin, _ in self.sized_origins())

    def first_origins(self, count: int) -> list[Origin]:
        if count <= len(self._first) or len(self._first) < FIRST_ORIGINS:
            return self._first[:count]
        return heapq.nsmallest(count, (origin for origin, _ in self.sized_origins()))

    def _entry(self, origin: Origin) -> OriginRuns | None:
        """The origin's entry, its runs found now (None: the store has no such origin)."""
        if self._unread:
            self._held = read_stretches(self._with_runs(self._held))
            self._unread = False
        entry = self._held.get(origin)
        if entry is None:  # the main process reading an origin itself: a rare road
            entry = self.with_runs([origin]).get(origin)
        if entry is not None and entry.runs is None:
            entry = self._with_runs({origin: entry})[origin]
        return entry

    def runs(self, origin: Origin) -> list[Run]:
        """The sorted runs of ``origin``, in feed order: what a window of it is read from
        (:mod:`.windows`)."""
        entry = self._entry(origin)
        return [] if entry is None or entry.runs is None else entry.runs

    def sized(self, origin: Origin) -> tuple[int, int] | None:
        """Its rows and its rows with news, repeats counted (None: no such origin): held,
        or found in the origins file (the main process staging an origin itself)."""
        found = self._found([origin]).get(origin)
        return None if found is None else (found[1].rows, found[1].news)

    def _facts(self, origin: Origin, news_only: bool) -> Iterator[UrlFacts]:
        """The origin's entries; its runs are found now, and its count is kept once they
        have all been read."""
        entry = self._entry(origin)
        if entry is None or (news_only and not entry.news):
            return iter(())
        assert entry.runs is not None
        return run_entries(
            merged_rows(entry.runs), news_only, lambda count: self.add_counts([origin], [count])
        )

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=False)

    def most_entries(self, origin: Origin) -> int | None:
        """Its rows, repeats counted, for an origin this store holds (a staging task's)."""
        entry = self._held.get(origin)
        return None if entry is None else entry.rows

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=True)

    def __len__(self) -> int:
        """Distinct URLs: counted while the origins were written (see :meth:`counts`),
        else by merging their runs, a block of them at a time."""
        known = 0
        uncounted: dict[Origin, OriginRuns] = {}
        for at, origin, entry in self._listed():
            count = self._count(at, entry)
            if count is not None:
                known += count
            else:
                uncounted[origin] = entry
            if len(uncounted) >= INDEX_KEYS:
                known += self._merged_count(uncounted)
                uncounted = {}
        return known + self._merged_count(uncounted)

    def _merged_count(self, entries: dict[Origin, OriginRuns]) -> int:
        return sum(
            sum(1 for _ in merged_rows(entry.runs or []))
            for entry in self._with_runs(entries).values()
        )

    def close(self) -> None:
        try:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            if self._lock is not None:
                self._lock.close()
                self._lock = None
