"""Sorted runs on disk, merged on the fly: the offline build's store.

A feed's rows (:mod:`.feed`) are kept in runs sorted by ``loc``. :class:`RunStore` reads
each origin's runs through the :class:`~.base.FactSource` interface, merged in ``loc``
order, repeated URLs combined by :mod:`~..sitemaps.merge`'s rules, so the exporter writes
and publishes them as it would a crawl's store: the same bytes. Its origins are staged in
the build's worker processes (see :func:`..publish.staging.stage_origins`), each merging
its own origin's runs while it writes: no merged copy is ever written.

Pure: no Scrapy here. The rows are tuples of strings, numbers and ``None``, stored with
:mod:`marshal` in blocks (the fastest serialisation of such data in the standard library,
and the files never outlive the build).
"""

from __future__ import annotations

import gc
import heapq
import logging
import marshal
import os
import shutil
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict, deque
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, BinaryIO

from ..sitemaps.facts import News, UrlFacts, Video
from ..sitemaps.merge import latest_given, newest
from ..sitemaps.pickling import by_fields
from ..sitemaps.urls import origin_of_root
from .base import FactSource

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: killed builds' folders are left behind
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from concurrent.futures import Executor
    from pathlib import Path

    from ..sitemaps.urls import Origin


logger = logging.getLogger(__name__)

__all__ = [
    "FIRST_ORIGINS",
    "Index",
    "Run",
    "RunStore",
    "Runs",
    "merge_passes",
    "merged_rows",
    "read_keyed",
    "runs_of",
    "write_keyed",
]

# Rows per marshal block: one read or write call per block, not per row. A merge holds
# one block of each run it reads, and reads at most _FAN_IN runs at once (more are first
# merged in groups, an extra pass on disk): its memory is bounded whatever the feed's size.
# At 32 runs (16,000 rows) a merge holds less than reading does (RUN_RECORDS); at 64 a merge
# would hold more, and each worker's peak would grow with the feed.
_BLOCK = 500
_FAN_IN = 32

# A row: (loc, lastmod, changefreq, priority, images, videos, news). Runs are sorted by
# loc alone with a stable sort, and merged by loc alone with a stable merge in feed order
# (see _sorted_batches): repeats of a URL come out together, oldest first, so combining them
# needs no other state.
Row = tuple[Any, ...]
_LOC = itemgetter(0)
OriginKey = str  # the origin's root, "https://host[:port]/": a prefix of every loc of it
#: A sorted run of one origin: a file of its own (its path), or, for fewer rows than a
#: block, a segment of a spill's file shared by such origins: (path, start, end) in bytes,
#: or that segment's bytes once a staging task has read them (see _read_segments).
#: A broad crawl's feed has a few rows of each of many origins in every spill, and a file
#: each cost more to create than the rows in it cost to read and sort.
Run = str | tuple[str, int, int] | bytes


def _dump_block(file: BinaryIO, rows: list[Row]) -> int:
    """Write one block; returns its length in bytes, so that a writer of many keeps its
    own offset (a buffered file's ``tell()`` is a system call)."""
    # Length-prefixed: marshal.load() on a file reads it in many small calls, several
    # times slower than one read() and marshal.loads().
    data = marshal.dumps(rows)
    file.write(len(data).to_bytes(4, "little"))
    file.write(data)
    return 4 + len(data)


def _write_blocks(path: Path, rows: list[Row]) -> None:
    with path.open("wb") as file:
        for start in range(0, len(rows), _BLOCK):
            _dump_block(file, rows[start : start + _BLOCK])


#: Shared spill files kept open in this process, by path, the least recently read closed
#: first: a broad crawl's small origin has a segment in most spills, and opening the file
#: for each segment cost more than reading it. Read with ``os.pread`` (no shared offset:
#: the lock is for the cache), closed by :meth:`RunStore.close`.
_OPEN_SEGMENT_FILES = 64
_segment_files: OrderedDict[str, int] = OrderedDict()
_segment_lock = threading.Lock()


def _segment(path: str, start: int, end: int) -> bytes:
    if not hasattr(os, "pread"):  # pragma: no cover - Windows
        with open(path, "rb") as file:
            file.seek(start)
            return file.read(end - start)
    with _segment_lock:
        fd = _segment_files.get(path)
        if fd is None:
            fd = _segment_files[path] = os.open(path, os.O_RDONLY)
            if len(_segment_files) > _OPEN_SEGMENT_FILES:
                os.close(_segment_files.popitem(last=False)[1])
        else:
            _segment_files.move_to_end(path)
        return os.pread(fd, end - start, start)


#: The most bytes of one shared file a staging task reads at once (see _read_segments).
_SPAN_BYTES = 8 << 20


def _read_segments(runs: dict[Origin, _OriginRuns]) -> dict[Origin, _OriginRuns]:
    """``runs`` with their segments read, each shared file's in one read where the
    segments lie close together: a spill writes its small origins in the order of their
    roots, and a task of small origins takes neighbours in that order (see
    ``publish.staging._tasks``), so a task's segments of one spill are one stretch of it.
    One read per segment was most of what reading a broad crawl's small origin cost."""
    spans: dict[str, list[int]] = {}  # path -> [lowest start, highest end, bytes wanted]
    for origin_runs in runs.values():
        for run in origin_runs.paths or ():
            if type(run) is tuple:
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
        path: (low, _segment(path, low, high))
        for path, (low, high, wanted) in spans.items()
        if high - low <= min(_SPAN_BYTES, 2 * wanted)
    }
    if not read:
        return runs

    def segment(run: Run) -> Run:
        if type(run) is tuple and run[0] in read:
            low, data = read[run[0]]
            return data[run[1] - low : run[2] - low]
        return run

    return {
        origin: origin_runs.with_paths([segment(run) for run in origin_runs.paths or ()])
        for origin, origin_runs in runs.items()
    }


def _close_segments() -> None:
    with _segment_lock:
        while _segment_files:
            os.close(_segment_files.popitem()[1])


def _read_blocks(run: Run) -> Iterator[list[Row]]:
    if type(run) is not str:  # a segment, or one read already (see _read_segments)
        data = run if type(run) is bytes else _segment(*run)
        at = 0
        while at < len(data):
            length = int.from_bytes(data[at : at + 4], "little")
            yield marshal.loads(data[at + 4 : at + 4 + length])
            at += 4 + length
        return
    with open(run, "rb") as file:
        while size := file.read(4):
            yield marshal.loads(file.read(int.from_bytes(size, "little")))


def _whole_blocks(run: Run) -> Iterator[list[Row]]:
    """A run's blocks, joined where a loc goes on into the next block, so that no loc of
    a block's last row comes again in a later one."""
    pending: list[Row] | None = None
    for block in _read_blocks(run):
        if pending is None:
            pending = block
        elif block[0][0] == pending[-1][0]:
            pending += block
        else:
            yield pending
            pending = block
    if pending:
        yield pending


def _sorted_batches(paths: list[Run]) -> Iterator[list[Row]]:
    """The rows of sorted runs, in loc order, in batches; rows of equal loc in the order
    of ``paths``, then of their run: what ``heapq.merge(..., key=loc)`` gives, for less.

    Python's merge pays a heap step per row. Here every round takes, from the head block
    of each run, the rows up to the smallest last loc among those blocks (nothing later in
    any run can sort before it), and sorts them with the built-in stable sort, which finds
    the sorted pieces and merges them in C. Runs that are all segments (a small origin's:
    less than a block each, at most _FAN_IN of them) are one batch, sorted at once."""
    if all(type(path) is not str for path in paths):
        rows: list[Row] = []
        for path in paths:
            for block in _read_blocks(path):
                rows += block
        rows.sort(key=_LOC)  # stable: equal locs stay in the order of paths, then of runs
        if rows:
            yield rows
        return
    readers = [_whole_blocks(path) for path in paths]
    heads = [next(reader, None) for reader in readers]
    starts = [0] * len(paths)  # where each head block's unread rows start
    live = [n for n, head in enumerate(heads) if head]
    while live:
        if len(live) == 1:
            n = live[0]
            head = heads[n]
            assert head is not None
            yield head[starts[n] :]
            yield from readers[n]
            return
        bound = min(heads[n][-1][0] for n in live)  # type: ignore[index]
        batch: list[Row] = []
        for n in live:  # in path order: the sort keeps it for equal locs
            head = heads[n]
            assert head is not None
            start = starts[n]
            cut = bisect_right(head, bound, start, key=_LOC)
            if cut == len(head):
                batch += head[start:] if start else head
                heads[n] = next(readers[n], None)
                starts[n] = 0
            elif cut > start:
                batch += head[start:cut]
                starts[n] = cut
        batch.sort(key=_LOC)
        yield batch
        live = [n for n in live if heads[n]]


class _Runs:
    """One worker's sorted runs of one feed range: its rows, held by origin until a spill
    writes them out; each spill's entries (an origin's run and counts) on disk, in key
    order, until :meth:`finish` merges them into the range's index and counts files."""

    def __init__(self, folder: Path, tag: str, run_records: int) -> None:
        self.folder = folder
        self.tag = tag
        self.run_records = run_records
        self.pending: dict[OriginKey, list[Row]] = {}
        self.held = 0
        #: Each spill's entries file: ``(key, run, rows, rows with news)`` in key order.
        #: Held here instead, a range's lists of runs and counts, one of each for each of
        #: a broad crawl's origins, were most of what a reading worker held, and grew
        #: with the origin count (benchmarks/RECORD.md).
        self.entries: list[str] = []
        self.number = 0

    def spill(self) -> None:
        if not self.held:
            return
        self.number += 1
        shared_path = str(self.folder / f"run-{self.tag}-{self.number}-small")
        entries_path = str(self.folder / f"entries-{self.tag}-{self.number}")
        shared: BinaryIO | None = None
        at = 0  # where the next block starts in the shared file
        block: list[Row] = []
        try:
            with open(entries_path, "wb") as entries:
                # In key order: a staging task's small origins are then one stretch of the
                # shared file (see _read_segments), and the entries merge as runs do. The
                # keys alone are sorted: a list of strings takes the sort's string
                # comparison, where (key, rows) pairs take a tuple's, item by item.
                pending = self.pending
                for index, key in enumerate(sorted(pending)):
                    rows = pending[key]
                    rows.sort(key=_LOC)  # stable: a repeated URL's rows stay in feed order
                    run: Run
                    if len(rows) < _BLOCK:  # one block, into the spill's shared file
                        if shared is None:
                            shared = open(shared_path, "wb")  # noqa: SIM115 - closed below
                        start = at
                        at += _dump_block(shared, rows)
                        run = (shared_path, start, at)
                    else:
                        path = self.folder / f"run-{self.tag}-{self.number}-{index}"
                        _write_blocks(path, rows)
                        run = str(path)
                    block.append(
                        (key, run, len(rows), sum(1 for row in rows if row[6] is not None))
                    )
                    if len(block) >= _BLOCK:
                        _dump_block(entries, block)
                        block = []
                if block:
                    _dump_block(entries, block)
        finally:
            if shared is not None:
                shared.close()
        self.entries.append(entries_path)
        self.pending = {}
        self.held = 0

    def finish(self) -> Runs:
        """Spill what is held, then write every origin's runs, in key order, into the
        range's index file (see :func:`write_keyed`) and its counts, ``(key, rows, news,
        runs)`` in key order, into the range's counts file, in blocks as a run's: both
        merged from the spills' entries files a block of each at a time, as runs are
        merged, then those files removed. Held instead, a broad crawl's range has a list
        of runs for each of 100,000 origins, which the main process would hold, every
        range's, until the build ends; sent back, its counts were a dict of an entry for
        each of most origins, every range's unpickled in the main process while the
        others' came in, which the allocator then kept (benchmarks/RECORD.md); read from
        files in key order (:func:`merged_counts`), they are a few blocks at a time."""
        self.spill()
        counts_path = str(self.folder / f"counts-{self.tag}")
        with open(counts_path, "wb") as counts:
            block: list[Row] = []

            def grouped() -> Iterator[tuple[OriginKey, list[Run]]]:
                nonlocal block
                key: OriginKey | None = None
                runs: list[Run] = []
                rows = news = 0
                # The spills in order: an origin's runs in feed order (runs_of).
                for batch in _sorted_batches(list(self.entries)):
                    for next_key, run, more_rows, more_news in batch:
                        if next_key != key:
                            if key is not None:
                                block.append((key, rows, news, len(runs)))
                                yield key, runs
                            key, runs, rows, news = next_key, [], 0, 0
                        runs.append(run)
                        rows += more_rows
                        news += more_news
                    if len(block) >= _BLOCK:
                        _dump_block(counts, block)
                        block = []
                if key is not None:
                    block.append((key, rows, news, len(runs)))
                    yield key, runs

            index = write_keyed(str(self.folder / f"index-{self.tag}"), grouped())
            if block:
                _dump_block(counts, block)
        for path in self.entries:
            os.unlink(path)
        self.entries = []
        return Runs(index, counts_path)


#: Keys per block of a keyed file (see :func:`write_keyed`): a staging task of neighbours
#: reads a block or two of each range's index, a lookup of one origin one block.
_INDEX_KEYS = 256

#: A keyed file (a range's index, the store's origins): its path and, per block, the
#: first key and the block's bytes in it.
Index = tuple[str, list[tuple[OriginKey, int, int]]]


def write_keyed(path: str, entries: Iterable[tuple[Any, ...]]) -> Index:
    """Write ``entries``, tuples whose first item is an origin's key, in key order, into
    ``path`` in blocks of ``_INDEX_KEYS``; returns the file's :data:`Index`. What is in
    memory is one block and the blocks' first keys, however many origins there are."""
    directory: list[tuple[OriginKey, int, int]] = []
    at = 0
    with open(path, "wb") as file:
        for block in _batched(entries, _INDEX_KEYS):
            data = marshal.dumps(block)
            file.write(data)
            directory.append((block[0][0], at, at + len(data)))
            at += len(data)
    return path, directory


def _batched(entries: Iterable[tuple[Any, ...]], size: int) -> Iterator[list[tuple[Any, ...]]]:
    block: list[tuple[Any, ...]] = []
    for entry in entries:
        block.append(entry)
        if len(block) == size:
            yield block
            block = []
    if block:
        yield block


def read_keyed(
    index: Index, keys: Iterable[OriginKey] | None = None
) -> Iterator[tuple[int, list[Any]]]:
    """The blocks of a keyed file, in key order, each with the position of its first entry
    in the file: all of them, or those that may hold any of ``keys`` (each read once)."""
    path, directory = index
    if keys is None:
        numbers: Iterable[int] = range(len(directory))
    else:
        firsts = [first for first, _, _ in directory]
        numbers = sorted({n for n in (bisect_right(firsts, key) - 1 for key in keys) if n >= 0})
    for n in numbers:
        _, start, end = directory[n]
        yield n * _INDEX_KEYS, marshal.loads(_segment(path, start, end))


@dataclass
class Runs:
    """What a range's worker wrote: its runs, per origin, in an index file on disk (one
    list of runs per origin, in feed order: see :func:`runs_of`), and a file of how many
    rows and rows with news they hold per origin (repeats counted) and how many runs
    (see :func:`merged_counts`)."""

    index: Index
    counts: str


def merged_counts(paths: list[str]) -> Iterator[tuple[OriginKey, int, int, int]]:
    """Every origin's ``(key, rows, news, runs)`` over the ranges' counts files, in key
    order: the files merged as runs are (a few blocks of each in memory at a time), an
    origin's counts summed over the ranges that hold it."""
    key: OriginKey | None = None
    rows = news = runs = 0
    for batch in _sorted_batches(list(paths)):
        for next_key, more_rows, more_news, more_runs in batch:
            if next_key == key:
                rows += more_rows
                news += more_news
                runs += more_runs
                continue
            if key is not None:
                yield key, rows, news, runs
            key, rows, news, runs = next_key, more_rows, more_news, more_runs
    if key is not None:
        yield key, rows, news, runs


def runs_of(indexes: list[Index], keys: list[OriginKey]) -> dict[OriginKey, list[Run]]:
    """The runs of the origins ``keys`` (roots) in the range indexes ``indexes`` (in feed
    order, and so are each origin's runs then), each block needed read once."""
    found: dict[OriginKey, list[Run]] = {}
    wanted = set(keys)
    for index in indexes:
        for _, block in read_keyed(index, wanted):
            for key, runs in block:
                if key in wanted:
                    known = found.get(key)
                    if known is None:
                        found[key] = runs
                    else:
                        known += runs
    return found


def _combine(old: Row, new: Row) -> Row:
    """Two records of one URL, ``new`` read after ``old``: :mod:`~..sitemaps.merge`'s
    rules for item records, so a feed builds what the pipeline would have stored. A row
    keeps an item's media as two columns, which the rules treat as one (``item_extra``)."""
    media = (new[4], new[5]) if new[4] or new[5] else (old[4], old[5])
    return (
        new[0],
        newest(old[1], new[1]),
        latest_given(old[2], new[2]),
        latest_given(old[3], new[3]),
        *media,
        latest_given(old[6], new[6]),
    )


def merged_rows(paths: list[Run]) -> Iterator[Row]:
    """One origin's runs (in feed order, at most _FAN_IN of them) in ``loc`` order, each
    URL once, its repeats combined."""
    previous: Row | None = None
    for batch in _sorted_batches(paths):
        for row in batch:
            if previous is not None:
                if row[0] == previous[0]:
                    previous = _combine(previous, row)
                    continue
                yield previous
            previous = row
    if previous is not None:
        yield previous


def merge_passes(paths: list[Run], out: str) -> list[Run]:
    """In a worker, for an origin of more than _FAN_IN runs (millions of records): its
    runs merged in groups, in order, until at most _FAN_IN are left, so that a reader
    holds at most _FAN_IN blocks whatever the feed's size. Repeats are combined later."""
    number = 0
    while len(paths) > _FAN_IN:
        groups = [paths[i : i + _FAN_IN] for i in range(0, len(paths), _FAN_IN)]
        paths = []
        for group in groups:
            number += 1
            merged = f"{out}.pass-{number}"
            with open(merged, "wb") as file:
                for batch in _sorted_batches(group):
                    for start in range(0, len(batch), _BLOCK):
                        _dump_block(file, batch[start : start + _BLOCK])
            for path in group:
                if isinstance(path, str):  # a shared file goes with the folder
                    os.unlink(path)
            paths.append(merged)
    return paths


def _covering(index: Index, firsts: list[OriginKey], low: OriginKey, high: OriginKey) -> Index:
    """The part of ``index`` (its blocks' first keys: ``firsts``) whose blocks may hold
    keys from ``low`` to ``high``: what a staging task of neighbours needs of a range's
    index. Every range's whole directory went with every task: a block for each 256 of
    its origins, so a broad crawl's tasks grew with the origin count."""
    path, directory = index
    start = max(bisect_right(firsts, low) - 1, 0)
    return path, directory[start : bisect_right(firsts, high)]


@dataclass(frozen=True, slots=True)
class _OriginRuns:
    """One origin's runs and counts, as a staging task gets them: no ``__dict__`` of its
    own, a task of small origins has hundreds."""

    paths: list[Run] | None  # None: in the store's range indexes (see runs_of)
    rows: int  # repeats counted: an upper bound of the URLs
    news: int
    #: Distinct URLs, once the runs were merged to the end; -1: not yet.
    count: int = -1

    __reduce__ = by_fields

    def with_paths(self, paths: list[Run] | None) -> _OriginRuns:
        return _OriginRuns(paths, self.rows, self.news, self.count)

    def with_count(self, count: int) -> _OriginRuns:
        return _OriginRuns(self.paths, self.rows, self.news, count)


#: How many of the first origins a run store keeps (see :meth:`RunStore.first_origins`):
#: the close report's lines are for the first few (``SITEMAPGEN_LOG_ORIGINS``, 20 by
#: default), and finding them in the origins file is a pass over every origin.
FIRST_ORIGINS = 1000

#: Decoded blocks of the origins file kept (see RunStore._listed): a task of small
#: origins spans two or three.
_RECENT_BLOCKS = 4


class RunStore(FactSource):
    """:class:`~.base.FactSource` over sorted run files: what the exporter needs to
    publish. Read-only; :meth:`close` removes the files and stops the
    worker processes, which the exporter stages origins in (see build.stage_origins).

    Its origins are in a keyed file of their own (``origins``: each one's key, rows and
    rows with news, in key order; see :func:`write_keyed`), read a few blocks at a time
    as the staging tasks are made and sent, so that the main process holds no object per
    origin, whatever the origin count (benchmarks/RECORD.md): of each, only the distinct
    URLs its task counted, a number in an array, by its place in that file. ``held`` are
    the entries whose runs were looked up while the store was built, by origin: those
    read in the main process (a build in one process: all of them) and those merged down
    in passes. A staging task's part holds its origins' entries alone (``origins`` None)."""

    has_content = False  # a feed's records are items: no page content

    def __init__(
        self,
        folder: Path,
        held: dict[Origin, _OriginRuns],
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
        #: Distinct URLs of each origin of the origins file, by its place there; -1: not
        #: known yet (see add_counts).
        self._counts = array("q")
        if origins is not None and origins[1]:
            # The file's length in entries: the blocks before the last are full.
            at, last = next(read_keyed(origins, [origins[1][-1][0]]))
            self._counts = array("q", [-1]) * (at + len(last))
        #: Where the runs of the origins whose ``paths`` are None are (see runs_of), and
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

    def _listed(self, smallest: int = 0) -> Iterator[tuple[int, Origin, _OriginRuns]]:
        """Every entry of at least ``smallest`` rows with its place in the origins file
        (-1 for a part's), in key order; a held entry in place of the file's. The blocks
        read last are kept (decoded) for :meth:`_found`: a staging task is made of the
        origins just listed, and its part is taken next."""
        if self._origins is None:
            for origin, entry in sorted(self._held.items(), key=lambda item: item[0].root):
                if entry.rows >= smallest:
                    yield -1, origin, entry
            return
        held = self._held
        for first, block in read_keyed(self._origins):
            self._recent.append((first, block))
            for at, (key, rows, news) in enumerate(block, first):
                if rows >= smallest:
                    origin = origin_of_root(key)
                    kept = held.get(origin) if held else None
                    yield at, origin, kept or _OriginRuns(None, rows, news)

    def _found(self, origins: Iterable[Origin]) -> dict[Origin, tuple[int, _OriginRuns]]:
        """``origins``' entries (those the store has): the held ones at -1 (their counts
        are kept on them), the others with their places in the origins file, found by
        their roots, each block needed read once."""
        found: dict[Origin, tuple[int, _OriginRuns]] = {}
        wanted: dict[OriginKey, Origin] = {}
        held = self._held
        for origin in origins:
            entry = held.get(origin) if held else None
            if entry is not None:
                found[origin] = (-1, entry)
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
                        found[match] = (at, _OriginRuns(None, rows, news))
                        missing.discard(key)

        take(list(self._recent))  # a task just made: its origins were listed last
        if missing:
            take(read_keyed(self._origins, missing))
        return found

    def part(self, origins: list[Origin]) -> RunStore:
        """The run files of ``origins`` alone: a staging task's whole input. Sending every
        origin's runs with every task cost the square of the origins."""
        entries = {origin: entry for origin, (_, entry) in self._found(origins).items()}
        keys = [origin.root for origin, entry in entries.items() if entry.paths is None]
        indexes: list[Index] = []
        if keys:
            if self._firsts is None:
                self._firsts = [[first for first, _, _ in d] for _, d in self._indexes]
            low, high = min(keys), max(keys)
            indexes = [
                _covering(index, firsts, low, high)
                for index, firsts in zip(self._indexes, self._firsts)
            ]
        part = RunStore(self.folder, entries, indexes=indexes, first=[])
        part._unread = True
        return part

    def with_runs(self, origins: Iterable[Origin]) -> dict[Origin, _OriginRuns]:
        """``origins``' entries, their runs read from the range indexes where they are
        there (one read of each index block they need)."""
        return self._with_runs({o: entry for o, (_, entry) in self._found(origins).items()})

    def _with_runs(self, entries: dict[Origin, _OriginRuns]) -> dict[Origin, _OriginRuns]:
        keys = [o.root for o, runs in entries.items() if runs.paths is None]
        if keys:
            found = runs_of(self._indexes, keys)
            for origin, runs in entries.items():
                if runs.paths is None:
                    entries[origin] = runs.with_paths(found.get(origin.root, []))
        return entries

    def counts(self, origins: list[Origin]) -> list[int]:
        found = self._found(origins)
        return [self._count(*found[o]) if o in found else -1 for o in origins]

    def _count(self, at: int, entry: _OriginRuns) -> int:
        return self._counts[at] if at >= 0 and self._counts[at] >= 0 else entry.count

    def add_counts(self, origins: list[Origin], counts: list[int]) -> None:
        found = self._found(origins)
        for origin, count in zip(origins, counts):
            if count < 0 or origin not in found:
                continue
            at, entry = found[origin]
            if at >= 0:
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

    def _facts(self, origin: Origin, news_only: bool) -> Iterator[UrlFacts]:
        if self._unread:
            self._held = _read_segments(self._with_runs(self._held))
            self._unread = False
        runs = self._held.get(origin)
        if runs is None:  # the main process reading an origin itself: a rare road
            runs = self.with_runs([origin]).get(origin)
        if runs is None or (news_only and not runs.news):
            return
        if runs.paths is None:
            runs = self._with_runs({origin: runs})[origin]
        assert runs.paths is not None
        count = 0
        for loc, lastmod, changefreq, priority, images, videos, news in merged_rows(runs.paths):
            count += 1
            if news_only and news is None:
                continue
            yield UrlFacts(  # by position: keyword arguments cost more, and this runs per URL
                loc,
                lastmod,
                changefreq,
                priority,
                images or (),
                tuple(Video(*v) for v in videos) if videos else (),
                (),
                News(*news) if news else None,
            )
        self.add_counts([origin], [count])

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=False)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=True)

    def __len__(self) -> int:
        """Distinct URLs: counted while the origins were written (see :meth:`counts`),
        else by merging their runs, a block of them at a time."""
        known = 0
        uncounted: dict[Origin, _OriginRuns] = {}
        for at, origin, entry in self._listed():
            count = self._count(at, entry)
            if count >= 0:
                known += count
            else:
                uncounted[origin] = entry
            if len(uncounted) >= _INDEX_KEYS:
                known += self._merged_count(uncounted)
                uncounted = {}
        return known + self._merged_count(uncounted)

    def _merged_count(self, entries: dict[Origin, _OriginRuns]) -> int:
        return sum(
            sum(1 for _ in merged_rows(runs.paths or []))
            for runs in self._with_runs(entries).values()
        )

    def close(self) -> None:
        _close_segments()
        gc.unfreeze()  # what build_store froze: collected as usual again
        try:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            if self._lock is not None:
                self._lock.close()
                self._lock = None
