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
import logging
import marshal
import os
import shutil
import threading
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, BinaryIO

from ..sitemaps.facts import News, UrlFacts, Video
from ..sitemaps.merge import latest_given, newest
from ..sitemaps.pickling import by_fields
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

__all__ = ["Index", "Run", "RunStore", "Runs", "merge_passes", "merged_rows", "runs_of"]

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
    """One worker's sorted runs: ``files[origin]`` lists the run files holding it."""

    def __init__(self, folder: Path, tag: str, run_records: int) -> None:
        self.folder = folder
        self.tag = tag
        self.run_records = run_records
        self.pending: dict[OriginKey, list[Row]] = {}
        self.held = 0
        self.files: dict[OriginKey, list[Run]] = {}
        #: Per origin: its rows and its rows with news (repeats counted, so an upper
        #: bound), and how many runs hold them.
        self.rows: dict[OriginKey, list[int]] = {}
        self.number = 0

    def spill(self) -> None:
        if not self.held:
            return
        self.number += 1
        shared_path = str(self.folder / f"run-{self.tag}-{self.number}-small")
        shared: BinaryIO | None = None
        at = 0  # where the next block starts in the shared file
        try:
            # In key order: a staging task's small origins are then one stretch of the
            # shared file (see _read_segments).
            for index, (key, rows) in enumerate(sorted(self.pending.items())):
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
                self.files.setdefault(key, []).append(run)
                counts = self.rows.setdefault(key, [0, 0, 0])
                counts[0] += len(rows)
                counts[1] += sum(1 for row in rows if row[6] is not None)
                counts[2] += 1
        finally:
            if shared is not None:
                shared.close()
        self.pending = {}
        self.held = 0

    def index(self) -> Index:
        """Write every origin's runs, in key order, into the range's index file, in blocks
        of ``_INDEX_KEYS`` origins; the runs are let go of here. A broad crawl's range has
        a list of runs for each of 100,000 origins, which the main process would hold,
        every range's, until the build ends."""
        path = str(self.folder / f"index-{self.tag}")
        directory: list[tuple[OriginKey, int, int]] = []
        entries = sorted(self.files.items())
        at = 0
        with open(path, "wb") as file:
            for start in range(0, len(entries), _INDEX_KEYS):
                block = entries[start : start + _INDEX_KEYS]
                data = marshal.dumps(block)
                file.write(data)
                directory.append((block[0][0], at, at + len(data)))
                at += len(data)
        self.files = {}
        return path, directory

    def counts(self) -> str:
        """Write every origin's counts, ``(key, rows, news, runs)`` in key order, into the
        range's counts file, in blocks as a run's; they are let go of here. Sent back
        instead, a broad crawl's range was a dict of an entry for each of most origins,
        every range's unpickled in the main process while the others' came in, which the
        allocator then kept (benchmarks/RECORD.md); read from files in key order
        (:func:`merged_counts`), they are a few blocks at a time."""
        path = self.folder / f"counts-{self.tag}"
        _write_blocks(path, [(key, *counts) for key, counts in sorted(self.rows.items())])
        self.rows = {}
        return str(path)


#: Origins per block of a range's index (see :meth:`_Runs.index`): a staging task of
#: neighbours reads a block or two of each range's index, a lookup of one origin one block.
_INDEX_KEYS = 256

#: A range's index: its file and, per block, the first key and the block's bytes in it.
Index = tuple[str, list[tuple[OriginKey, int, int]]]


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
    for path, directory in indexes:
        firsts = [first for first, _, _ in directory]
        blocks = sorted({n for n in (bisect_right(firsts, key) - 1 for key in wanted) if n >= 0})
        for n in blocks:
            _, start, end = directory[n]
            for key, runs in marshal.loads(_segment(path, start, end)):
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


@dataclass(frozen=True, slots=True)
class _OriginRuns:
    """One origin's runs and counts: one per origin, held in the main process for the whole
    build and sent with each staging task, so no ``__dict__`` of its own."""

    paths: list[Run] | None  # None: in the store's range indexes (see runs_of)
    rows: int  # repeats counted: an upper bound of the URLs
    news: int
    #: Distinct URLs, once the runs were merged to the end; -1: not yet. Kept on the entry
    #: the parent holds anyway: a map of its own, keyed by what each task sent back, was
    #: a string and an entry more per origin for the whole build (benchmarks/RECORD.md).
    count: int = -1

    __reduce__ = by_fields

    def with_paths(self, paths: list[Run] | None) -> _OriginRuns:
        return _OriginRuns(paths, self.rows, self.news, self.count)

    def with_count(self, count: int) -> _OriginRuns:
        return _OriginRuns(self.paths, self.rows, self.news, count)


class RunStore(FactSource):
    """:class:`~.base.FactSource` over sorted run files: what the exporter needs to
    publish. Read-only; :meth:`close` removes the files and stops the
    worker processes, which the exporter stages origins in (see build.stage_origins)."""

    has_content = False  # a feed's records are items: no page content

    def __init__(
        self,
        folder: Path,
        runs: dict[Origin, _OriginRuns],
        pool: Executor | None = None,
        lock: BinaryIO | None = None,
        indexes: list[Index] | None = None,
    ) -> None:
        self.folder = folder
        self._lock = lock
        self._runs = runs
        #: Where the runs of the origins whose ``paths`` are None are (see runs_of).
        self._indexes = indexes or []
        #: The build's worker processes (None: this process only).
        self._pool = pool
        #: A staging task's part (see :meth:`part`): its segments are read all at once,
        #: before the first origin is.
        self._unread = False

    def __getstate__(self) -> dict[str, Any]:
        # What a staging worker gets: the files, not the pool it runs in nor the lock.
        return {
            "folder": self.folder,
            "_runs": self._runs,
            "_pool": None,
            "_lock": None,
            "_unread": self._unread,
            "_indexes": self._indexes,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def pool(self) -> Executor | None:
        """The build's worker processes: its run files can be read in any of them."""
        return self._pool

    def part(self, origins: list[Origin]) -> RunStore:
        """The run files of ``origins`` alone: a staging task's whole input. Sending every
        origin's runs with every task cost the square of the origins."""
        part = RunStore(
            self.folder,
            {o: self._runs[o] for o in origins if o in self._runs},
            indexes=self._indexes,
        )
        part._unread = True
        return part

    def with_runs(self, origins: Iterable[Origin]) -> dict[Origin, _OriginRuns]:
        """``origins``' entries, their runs read from the range indexes where they are
        there (one read of each index block they need)."""
        entries = {o: self._runs[o] for o in origins if o in self._runs}
        keys = [o.root for o, runs in entries.items() if runs.paths is None]
        if keys:
            found = runs_of(self._indexes, keys)
            for origin, runs in entries.items():
                if runs.paths is None:
                    entries[origin] = runs.with_paths(found.get(origin.root, []))
        return entries

    def counts(self, origins: list[Origin]) -> list[int]:
        runs = self._runs
        return [runs[o].count if o in runs else -1 for o in origins]

    def add_counts(self, origins: list[Origin], counts: list[int]) -> None:
        for origin, count in zip(origins, counts):
            runs = self._runs.get(origin)
            if runs is not None and count >= 0:
                self._runs[origin] = runs.with_count(count)

    def size_of(self, origin: Origin) -> int:
        """Rows held for ``origin``, repeats counted: for sharing out the work."""
        runs = self._runs.get(origin)
        return runs.rows if runs else 0

    def origins(self) -> list[Origin]:
        return sorted(origin for origin, runs in self._runs.items() if runs.rows)

    def _facts(self, origin: Origin, news_only: bool) -> Iterator[UrlFacts]:
        if self._unread:
            self._runs = _read_segments(self.with_runs(list(self._runs)))
            self._unread = False
        runs = self._runs.get(origin)
        if runs is None or (news_only and not runs.news):
            return
        if runs.paths is None:  # the main process reading an origin itself: a rare road
            runs = self.with_runs([origin])[origin]
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
        # On the entry held, not on ``runs``: the parent keeps no paths it looked up.
        self._runs[origin] = self._runs[origin].with_count(count)

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=False)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=True)

    def __len__(self) -> int:
        """Distinct URLs: counted while the origins were written (``_OriginRuns.count``),
        else by merging their runs."""
        known = sum(runs.count for runs in self._runs.values() if runs.count >= 0)
        # The others' runs looked up at once: one read of each index block they need.
        uncounted = self.with_runs(o for o, runs in self._runs.items() if runs.count < 0)
        return known + sum(
            sum(1 for _ in merged_rows(runs.paths or [])) for runs in uncounted.values()
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
