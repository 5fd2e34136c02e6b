"""Sitemaps from a JSON-lines feed at the writer's speed, in flat memory, on every core.

The offline build (``scrapy sitemapgen-build --input``) has the whole feed up front, so it
need not take the crawl's road of one store upsert per record. Instead:

1. the feed is cut into byte ranges at line ends, and worker processes read them: each
   record validated by :func:`records.record_fields`, exactly as the item pipeline does,
   then kept as a plain row in sorted runs on disk (at most ``run_records`` rows in memory
   per worker, whatever the feed's size);
2. :class:`RunStore` reads each origin's runs through the :class:`~.base.FactSource`
   interface, merged on the fly in ``loc`` order, repeated URLs combined by the store's
   merge rules (newest lastmod; the later record's changefreq, priority, media and news),
   so the exporter writes and publishes them as it would a crawl's store: the same bytes.
   Its origins are staged in the same worker processes (see :func:`build.stage_origins`),
   each merging its own origin's runs while it writes: no merged copy is ever written.

Pure: no Scrapy here. The rows are tuples of strings, numbers and ``None``, stored with
:mod:`marshal` in blocks (the fastest serialisation of such data in the standard library,
and the files never outlive the build).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import marshal
import multiprocessing
import os
import shutil
import sys
import tempfile
from bisect import bisect_right
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import stats as keys
from ..sitemaps.facts import News, UrlFacts, Video
from ..sitemaps.merge import latest_given, newest, unique_videos, video_fields
from ..sitemaps.records import DEFAULT_JSON_PARSER, JSON_PARSERS, RecordReader
from ..sitemaps.urls import Origin, UrlPolicy, origin_of
from .base import FactSource

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: killed builds' folders are left behind
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

    from ..stats import Reporter

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_JSON_PARSER",
    "JSON_PARSERS",
    "RUN_RECORDS",
    "RunStore",
    "Runs",
    "Tally",
    "build_store",
    "feed_ranges",
    "merged_rows",
]

#: Rows a worker holds before it sorts them and writes a run: its memory bound (a row is
#: a few hundred bytes), and large enough that a million records make only a few runs.
RUN_RECORDS = 50_000
# Rows per marshal block: one read or write call per block, not per row. A merge holds
# one block of each run it reads, and reads at most _FAN_IN runs at once (more are first
# merged in groups, an extra pass on disk): its memory is bounded whatever the feed's size.
# At 32 runs (16,000 rows) a merge holds less than reading does (RUN_RECORDS); at 64, the
# merge passes of a 5,000,000-record feed raised each worker's peak by 9 MiB.
_BLOCK = 500
_FAN_IN = 32
_FOLDER_PREFIX = "sitemapgen-build-"
# Held locked by the build that owns the folder; the system drops the lock when that
# process dies, however it dies, so an unlocked one marks a killed build's leftovers.
_LOCK_NAME = "owner.lock"
_RANGES_PER_WORKER = 4

# A row: (loc, lastmod, changefreq, priority, images, videos, news). Runs are sorted by
# loc alone with a stable sort, and merged by loc alone with a stable merge in feed order
# (see _sorted_batches): repeats of a URL come out together, oldest first, so combining them
# needs no other state.
Row = tuple[Any, ...]
_LOC = itemgetter(0)
OriginKey = str  # the origin's root, "https://host[:port]/": a prefix of every loc of it


@dataclass
class Tally:
    """What a build read: counts by (kind, reason), with the first case of each for the
    log (a million bad dates show as one warning and a count, as in a crawl)."""

    records: int = 0
    bad_lines: int = 0
    first_bad_offset: int = -1
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    first: dict[tuple[str, str], tuple[str, object]] = field(default_factory=dict)

    def add(self, kind: str, reason: str, url: str, detail: object = None) -> None:
        key = (kind, reason)
        count = self.counts.get(key, 0)
        self.counts[key] = count + 1
        if not count:
            self.first[key] = (url, detail)  # a JSON value: it crosses processes as it is

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        """:meth:`stats.Reporter.skip`, kept for the parent process to report."""
        self.add("skip", reason, url, detail)

    def exclude(self, reason: str, url: str) -> None:
        """:meth:`stats.Reporter.exclude`, kept for the parent process to report."""
        self.add("exclude", reason, url)

    def replay(self, reporter: Reporter) -> None:
        """Count and log through ``reporter`` what a worker met: the first case of each
        cause as the crawl would log it, the rest counted."""
        for (kind, reason), count in sorted(self.counts.items()):
            url, detail = self.first[kind, reason]
            if kind == "skip":
                reporter.skip(reason, url, detail)
                reporter.stats.inc_value(keys.skipped(reason), count - 1)
            else:
                reporter.exclude(reason, url)
                reporter.stats.inc_value(keys.excluded(reason), count - 1)

    def update(self, other: Tally) -> None:
        self.records += other.records
        self.bad_lines += other.bad_lines
        if self.first_bad_offset < 0 or 0 <= other.first_bad_offset < self.first_bad_offset:
            self.first_bad_offset = other.first_bad_offset
        for key, count in other.counts.items():
            if key not in self.counts:
                self.first[key] = other.first[key]
            self.counts[key] = self.counts.get(key, 0) + count


def feed_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of about equal size covering the file, each starting at the
    start of a line (fewer when the file has fewer lines)."""
    size = path.stat().st_size
    bounds = [0]
    with path.open("rb") as file:
        for part in range(1, parts):
            file.seek(max(size * part // parts - 1, bounds[-1]))
            file.readline()  # to the end of the line the cut fell in
            bounds.append(max(file.tell(), bounds[-1]))
    bounds.append(size)
    return [(start, end) for start, end in itertools.pairwise(bounds) if end > start]


def _dump_block(file: BinaryIO, rows: list[Row]) -> None:
    # Length-prefixed: marshal.load() on a file reads it in many small calls, several
    # times slower than one read() and marshal.loads().
    data = marshal.dumps(rows)
    file.write(len(data).to_bytes(4, "little"))
    file.write(data)


def _write_blocks(path: Path, rows: list[Row]) -> None:
    with path.open("wb") as file:
        for start in range(0, len(rows), _BLOCK):
            _dump_block(file, rows[start : start + _BLOCK])


def _read_blocks(path: Path) -> Iterator[list[Row]]:
    with path.open("rb") as file:
        while size := file.read(4):
            yield marshal.loads(file.read(int.from_bytes(size, "little")))


def _whole_blocks(path: Path) -> Iterator[list[Row]]:
    """A run's blocks, joined where a loc goes on into the next block, so that no loc of
    a block's last row comes again in a later one."""
    pending: list[Row] | None = None
    for block in _read_blocks(path):
        if pending is None:
            pending = block
        elif block[0][0] == pending[-1][0]:
            pending += block
        else:
            yield pending
            pending = block
    if pending:
        yield pending


def _sorted_batches(paths: list[str]) -> Iterator[list[Row]]:
    """The rows of sorted runs, in loc order, in batches; rows of equal loc in the order
    of ``paths``, then of their run: what ``heapq.merge(..., key=loc)`` gives, for less.

    Python's merge pays a heap step per row. Here every round takes, from the head block
    of each run, the rows up to the smallest last loc among those blocks (nothing later in
    any run can sort before it), and sorts them with the built-in stable sort, which finds
    the sorted pieces and merges them in C."""
    readers = [_whole_blocks(Path(path)) for path in paths]
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


def _video_rows(videos: tuple[Video, ...]) -> tuple[tuple[Any, ...], ...] | None:
    return tuple(video_fields(v) for v in unique_videos(videos)) or None


class _Runs:
    """One worker's sorted runs: ``files[origin]`` lists the run files holding it."""

    def __init__(self, folder: Path, tag: str, run_records: int) -> None:
        self.folder = folder
        self.tag = tag
        self.run_records = run_records
        self.pending: dict[OriginKey, list[Row]] = {}
        self.held = 0
        self.files: dict[OriginKey, list[str]] = {}
        #: Rows and rows with news per origin: repeats counted, so an upper bound.
        self.rows: dict[OriginKey, list[int]] = {}
        self.number = 0

    def spill(self) -> None:
        if not self.held:
            return
        self.number += 1
        for index, (key, rows) in enumerate(self.pending.items()):
            rows.sort(key=_LOC)  # stable: a repeated URL's rows stay in feed order
            path = self.folder / f"run-{self.tag}-{self.number}-{index}"
            _write_blocks(path, rows)
            self.files.setdefault(key, []).append(str(path))
            counts = self.rows.setdefault(key, [0, 0])
            counts[0] += len(rows)
            counts[1] += sum(1 for row in rows if row[6] is not None)
        self.pending = {}
        self.held = 0


@dataclass
class Runs:
    """What a range's worker wrote: per origin, its run files (in feed order) and how many
    rows and rows with news they hold (repeats counted)."""

    files: dict[OriginKey, list[str]]
    rows: dict[OriginKey, list[int]]


def read_range(
    feed: str,
    start: int,
    end: int,
    folder: str,
    tag: str,
    policy: UrlPolicy,
    now: datetime,
    run_records: int = RUN_RECORDS,
    parser: str = DEFAULT_JSON_PARSER,
) -> tuple[Runs, Tally]:
    """Phase 1, in a worker: the records of ``feed[start:end]`` as sorted run files.

    Each record is read by the :class:`~..sitemaps.records.RecordReader` the item
    pipeline reads items with. One loop with little in it: this runs a million times per
    million records."""
    tally = Tally()
    runs = _Runs(Path(folder), tag, run_records)
    read = RecordReader(policy, tally).read
    parse = JSON_PARSERS[parser]
    pending = runs.pending
    records = held = 0  # locals, not attributes: counted once per record
    offset = start
    with open(feed, "rb") as file:
        file.seek(start)
        for line in file:
            if offset >= end:
                break
            seq = offset
            offset += len(line)
            try:
                record = parse(line)
            except ValueError:  # UnicodeDecodeError included
                if line.isspace():
                    continue
                record = None
            if type(record) is not dict:
                tally.bad_lines += 1
                if tally.first_bad_offset < 0:
                    tally.first_bad_offset = seq
                continue
            found = read(record.get, now)
            if found is None:
                continue
            loc, (lastmod, changefreq, priority, images, videos, news) = found
            row = (
                loc,
                lastmod,
                changefreq,
                priority,
                images or None,
                _video_rows(videos) if videos else None,
                (
                    news.publication_name,
                    news.publication_language,
                    news.publication_date,
                    news.title,
                )
                if news
                else None,
            )
            # The root: up to the first "/" after "http://" or "https://", which a
            # normalised loc starts with (the host holds no "/").
            key = loc[: loc.index("/", 8) + 1]
            rows = pending.get(key)
            if rows is None:
                rows = pending[key] = []
            rows.append(row)
            records += 1
            held += 1
            if held >= run_records:
                runs.held = held
                runs.spill()
                pending = runs.pending
                held = 0
    runs.held = held
    runs.spill()
    tally.records += records
    return Runs(runs.files, runs.rows), tally


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


def merged_rows(paths: list[str]) -> Iterator[Row]:
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


def merge_passes(paths: list[str], out: str) -> list[str]:
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
                os.unlink(path)
            paths.append(merged)
    return paths


@dataclass(frozen=True)
class _OriginRuns:
    paths: list[str]
    rows: int  # repeats counted: an upper bound of the URLs
    news: int


class RunStore(FactSource):
    """:class:`~.base.FactSource` over sorted run files: what the exporter needs to
    publish. Read-only; :meth:`close` removes the files and stops the
    worker processes, which the exporter stages origins in (see build.stage_origins)."""

    def __init__(
        self,
        folder: Path,
        runs: dict[Origin, _OriginRuns],
        pool: Executor | None = None,
        lock: BinaryIO | None = None,
    ) -> None:
        self.folder = folder
        self._lock = lock
        self._runs = runs
        #: The build's worker processes (None: this process only).
        self._pool = pool
        #: Distinct URLs per origin, known once its runs were merged to the end.
        self.counted: dict[Origin, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        # What a staging worker gets: the files, not the pool it runs in nor the lock.
        return {
            "folder": self.folder,
            "_runs": self._runs,
            "_pool": None,
            "counted": {},
            "_lock": None,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def pool(self) -> Executor | None:
        """The build's worker processes: its run files can be read in any of them."""
        return self._pool

    def counts(self) -> dict[Origin, int]:
        return self.counted

    def add_counts(self, counts: dict[Origin, int]) -> None:
        self.counted.update(counts)

    def size_of(self, origin: Origin) -> int:
        """Rows held for ``origin``, repeats counted: for sharing out the work."""
        runs = self._runs.get(origin)
        return runs.rows if runs else 0

    def origins(self) -> list[Origin]:
        return sorted(origin for origin, runs in self._runs.items() if runs.rows)

    def _facts(self, origin: Origin, news_only: bool) -> Iterator[UrlFacts]:
        runs = self._runs.get(origin)
        if runs is None or (news_only and not runs.news):
            return
        count = 0
        for loc, lastmod, changefreq, priority, images, videos, news in merged_rows(runs.paths):
            count += 1
            if news_only and news is None:
                continue
            yield UrlFacts(  # by position: keywords took twice as long, once per URL
                loc,
                lastmod,
                changefreq,
                priority,
                images or (),
                tuple(Video(*v) for v in videos) if videos else (),
                (),
                News(*news) if news else None,
            )
        self.counted[origin] = count

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=False)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=True)

    def __len__(self) -> int:
        """Distinct URLs: counted while the origins were written (see :attr:`counted`),
        else by merging their runs."""
        return sum(
            self.counted[origin]
            if origin in self.counted
            else sum(1 for _ in merged_rows(runs.paths))
            for origin, runs in self._runs.items()
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


def _claim(folder: Path) -> BinaryIO | None:
    """Lock ``folder`` as this process's for as long as the returned file is open. The
    lock file is locked under another name, then renamed: no other build ever sees it
    unlocked while this one is alive."""
    if fcntl is None:
        return None
    file = (folder / f"{_LOCK_NAME}.new").open("wb")
    fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(folder / f"{_LOCK_NAME}.new", folder / _LOCK_NAME)
    return file


def remove_stale_folders(temp_dir: str | None = None) -> int:
    """Remove the run folders that killed builds left in ``temp_dir`` (a crashed worker,
    a kill -9, a power cut): those whose lock no live process holds. Returns how many."""
    if fcntl is None:
        return 0
    removed = 0
    for folder in Path(temp_dir or tempfile.gettempdir()).glob(f"{_FOLDER_PREFIX}*"):
        try:
            with (folder / _LOCK_NAME).open("rb") as file:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # no lock file (not one of ours, or not yet claimed), or alive
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


class _Inline(Executor):
    """Runs each task at once in this process: a one-worker build spawns nothing."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered by result(), as a pool would
            future.set_exception(exc)
        return future


def build_store(
    feed: Path,
    policy: UrlPolicy,
    now: datetime,
    *,
    workers: int,
    temp_dir: str | None = None,
    run_records: int = RUN_RECORDS,
    parser: str = DEFAULT_JSON_PARSER,
) -> tuple[RunStore, Tally]:
    """Read ``feed`` with ``workers`` processes (1: in this process) into a :class:`RunStore`
    that keeps those processes for staging, until it is closed."""
    stale = remove_stale_folders(temp_dir)
    if stale:
        logger.info(
            "Sitemap: removed %(count)d run folder(s) that killed builds left in %(dir)s",
            {"count": stale, "dir": temp_dir or tempfile.gettempdir()},
        )
    folder = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX, dir=temp_dir))
    lock = _claim(folder)
    pool = _executor(workers)
    try:
        tally = Tally()
        files: dict[OriginKey, list[str]] = {}
        rows: dict[OriginKey, list[int]] = {}
        with _main_script_hidden():  # the pool starts its processes on the first submits
            futures = [
                pool.submit(
                    read_range,
                    str(feed),
                    start,
                    end,
                    str(folder),
                    str(n),
                    policy,
                    now,
                    run_records,
                    parser,
                )
                # A few ranges per worker: a part of the feed that is slower to read (more
                # images, longer URLs) is shared out, not left to one worker to finish alone.
                for n, (start, end) in enumerate(
                    feed_ranges(feed, workers * _RANGES_PER_WORKER if workers > 1 else 1)
                )
            ]
        for future in futures:  # in feed order: the merge keeps it for repeated URLs
            runs, part = future.result()
            tally.update(part)
            for key, paths in runs.files.items():
                files.setdefault(key, []).extend(paths)
                counts = rows.setdefault(key, [0, 0])
                counts[0] += runs.rows[key][0]
                counts[1] += runs.rows[key][1]
        passes = {
            key: pool.submit(merge_passes, paths, str(folder / f"merged-{n}"))
            for n, (key, paths) in enumerate(files.items())
            if len(paths) > _FAN_IN
        }
        store = RunStore(
            folder,
            {
                origin_of(key): _OriginRuns(
                    passes[key].result() if key in passes else paths, *rows[key]
                )
                for key, paths in files.items()
            },
            pool if workers > 1 else None,
            lock,
        )
    except BaseException:
        pool.shutdown(cancel_futures=True)
        shutil.rmtree(folder, ignore_errors=True)
        if lock is not None:
            lock.close()
        raise
    if store.pool is None:
        pool.shutdown()
    return store, tally


@contextlib.contextmanager
def _main_script_hidden() -> Iterator[None]:
    """While worker processes are spawned, the main script's path is hidden from
    multiprocessing, which otherwise has each worker run that script again (as
    ``__mp_main__``) before its first task. The ``scrapy`` command is such a script: all
    of Scrapy, 0.3 s of imports a worker that no task needs, since the workers only run
    this package's functions. (``python -m scrapy`` runs a package's ``__main__``, which
    multiprocessing already leaves alone.)"""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None:
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _worker_started() -> None:
    """A worker runs this package's tasks and nothing else, and their loops make no
    reference cycles (tests/test_bulk.py checks it on hostile records): reference counting
    frees everything they let go of. The cyclic collector would find nothing, yet it walks
    what a task holds (up to RUN_RECORDS rows, a merge's blocks) each time enough objects
    were allocated: 2 to 7 % of a task's process time, about 2.5 % of a whole build's
    (README, "Performance"). The parent, which runs Scrapy and the user's code, keeps its
    collector."""
    gc.disable()


def _executor(workers: int) -> Executor:
    if workers <= 1:
        return _Inline()
    # spawn, not fork: the build runs inside Scrapy's reactor, whose threads a fork would copy.
    return ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_started
    )
