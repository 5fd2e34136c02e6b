"""Sitemaps from a JSON-lines feed at the writer's speed, in flat memory, on every core.

The offline build (``scrapy sitemapgen-build --input``) has the whole feed up front, so it
need not take the crawl's road of one store upsert per record. Instead:

1. the feed is cut into byte ranges at line ends, and worker processes read them: each
   record validated by :func:`records.record_fields`, exactly as the item pipeline does,
   then kept as a plain row in sorted runs on disk (at most ``run_records`` rows in memory
   per worker, whatever the feed's size);
2. each origin's runs are merged into one file in ``loc`` order, repeated URLs combined by
   the store's merge rules (newest lastmod; the later record's changefreq, priority, media
   and news), again one origin per worker;
3. :class:`RunStore` reads those files through the :class:`~.store.FactStore` interface,
   so the exporter writes and publishes them as it would a crawl's store: the same bytes
   (its origins staged in parallel processes too, see :func:`build.stage_origins`).

Pure: no Scrapy here. The rows are tuples of strings, numbers and ``None``, stored with
:mod:`marshal` in blocks (the fastest serialisation of such data in the standard library,
and the files never outlive the build).
"""

from __future__ import annotations

import heapq
import json
import marshal
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from . import stats as keys
from .facts import News, UrlFacts, Video
from .records import record_fields
from .store import StoreError
from .urls import Origin, UrlPolicy, UrlRejected, origin_of

if TYPE_CHECKING:
    from .stats import Reporter

__all__ = ["RUN_RECORDS", "RunStore", "Tally", "build_store", "feed_ranges"]

#: Rows a worker holds before it sorts them and writes a run: its memory bound (a row is
#: a few hundred bytes), and large enough that a million records make only a few runs.
RUN_RECORDS = 50_000
# Rows per marshal block: one read or write call per block, not per row. A merge holds
# one block of each run it reads, and reads at most _FAN_IN runs at once (more are first
# merged in groups, an extra pass on disk): its memory is bounded whatever the feed's size.
_BLOCK = 500
_FAN_IN = 64
_BOM = b"\xef\xbb\xbf"

# A row: (loc, seq, lastmod, changefreq, priority, images, videos, news). ``seq`` is the
# record's byte offset in the feed, its arrival order: sorting by (loc, seq) puts repeats
# of a URL together, oldest first, so merging them needs no other state. A merged row has
# no seq: (loc, lastmod, changefreq, priority, images, videos, news).
Row = tuple[Any, ...]
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
    return [(start, end) for start, end in zip(bounds, bounds[1:]) if end > start]


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


def _rows(path: Path) -> Iterator[Row]:
    for block in _read_blocks(path):
        yield from block


def _video_rows(videos: tuple[Video, ...]) -> tuple[tuple[Any, ...], ...] | None:
    rows: dict[tuple[str | None, str | None], tuple[Any, ...]] = {}
    for v in videos:  # one per (content, player), as the store's merge keeps them
        rows.setdefault(
            (v.content_loc, v.player_loc),
            (v.thumbnail_loc, v.title, v.description, v.content_loc, v.player_loc,
             v.duration, v.publication_date),
        )
    return tuple(rows.values()) or None


class _Runs:
    """One worker's sorted runs: ``files[origin]`` lists the run files holding it."""

    def __init__(self, folder: Path, tag: str, run_records: int) -> None:
        self.folder = folder
        self.tag = tag
        self.run_records = run_records
        self.pending: dict[OriginKey, list[Row]] = {}
        self.held = 0
        self.files: dict[OriginKey, list[str]] = {}
        self.number = 0

    def spill(self) -> None:
        if not self.held:
            return
        self.number += 1
        for index, (key, rows) in enumerate(self.pending.items()):
            rows.sort()  # (loc, seq): seq is unique, so later fields are never compared
            path = self.folder / f"run-{self.tag}-{self.number}-{index}"
            _write_blocks(path, rows)
            self.files.setdefault(key, []).append(str(path))
        self.pending = {}
        self.held = 0


class _Issues:
    """``issue`` for :func:`records.record_fields`, about the record being read: one
    bound method for the whole range, not a closure per record."""

    __slots__ = ("loc", "tally")

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.loc = ""

    def issue(self, reason: str, value: object) -> None:
        self.tally.add("skip", f"item_{reason}", self.loc, value)


def read_range(
    feed: str, start: int, end: int, folder: str, tag: str, policy: UrlPolicy, now: datetime,
    run_records: int = RUN_RECORDS,
) -> tuple[dict[OriginKey, list[str]], Tally]:
    """Phase 1, in a worker: the records of ``feed[start:end]`` as sorted run files.

    Each record is taken as :class:`~.pipeline.SitemapItemPipeline` takes an item. One
    loop with little in it: this runs a million times per million records."""
    tally = Tally()
    runs = _Runs(Path(folder), tag, run_records)
    issues = _Issues(tally)
    issue = issues.issue
    decode = json.JSONDecoder().decode  # json.loads less its per-call type checks
    locate = policy.loc
    refuse = policy.refusal
    pending = runs.pending
    offset = start
    with open(feed, "rb") as file:
        file.seek(start)
        for line in file:
            if offset >= end:
                break
            seq = offset
            offset += len(line)
            try:
                # json.loads() of bytes, as the pipeline road reads a line, skips a BOM too.
                record = decode(line.decode("utf-8-sig" if line.startswith(_BOM) else "utf-8"))
            except ValueError:  # UnicodeDecodeError included
                if line.isspace():
                    continue
                record = None
            if type(record) is not dict:
                tally.bad_lines += 1
                if tally.first_bad_offset < 0:
                    tally.first_bad_offset = seq
                continue
            raw_loc = record.get("loc")
            if not raw_loc:
                continue
            try:
                loc = locate(str(raw_loc))
            except UrlRejected as exc:
                tally.add("skip", f"item_{exc.reason}", str(raw_loc))
                continue
            refusal = refuse(loc)
            if refusal is not None:
                tally.add("exclude", refusal, loc)
                continue
            issues.loc = loc
            lastmod, changefreq, priority, images, videos, news = record_fields(record.get, issue, now)
            row = (
                loc,
                seq,
                lastmod,
                changefreq,
                priority,
                images or None,
                _video_rows(videos) if videos else None,
                (news.publication_name, news.publication_language, news.publication_date, news.title)
                if news
                else None,
            )
            key = loc[: loc.index("/", loc.index("//") + 2) + 1]
            rows = pending.get(key)
            if rows is None:
                rows = pending[key] = []
            rows.append(row)
            tally.records += 1
            runs.held += 1
            if runs.held >= run_records:
                runs.spill()
                pending = runs.pending
    runs.spill()
    return runs.files, tally


def _combine(old: Row, new: Row) -> Row:
    """Two records of one URL, ``new`` read after ``old``: the store's merge rules for
    items (see store._UPSERT), so a feed builds what the pipeline would have stored."""
    lastmod = old[2] if new[2] is None or (old[2] is not None and old[2] > new[2]) else new[2]
    media = (new[5], new[6]) if new[5] or new[6] else (old[5], old[6])
    return (
        new[0], new[1], lastmod, new[3] or old[3], new[4] or old[4], *media, new[7] or old[7]
    )


def merge_origin(paths: list[str], out: str) -> tuple[int, int]:
    """Phase 2, in a worker: one origin's runs merged into one file in ``loc`` order, each
    URL once. Returns (URLs, URLs with news)."""
    number = 0
    while len(paths) > _FAN_IN:  # a feed of millions: merge the runs in groups first
        groups = [paths[i : i + _FAN_IN] for i in range(0, len(paths), _FAN_IN)]
        paths = []
        for group in groups:
            number += 1
            merged = f"{out}.pass-{number}"
            with open(merged, "wb") as file:
                block: list[Row] = []
                for row in heapq.merge(*(_rows(Path(p)) for p in group)):
                    block.append(row)
                    if len(block) >= _BLOCK:
                        _dump_block(file, block)
                        block = []
                if block:
                    _dump_block(file, block)
            for path in group:
                os.unlink(path)
            paths.append(merged)
    urls = news = 0
    block = []
    previous: Row | None = None
    with open(out, "wb") as file:
        for row in heapq.merge(*(_rows(Path(p)) for p in paths)):
            if previous is not None:
                if row[0] == previous[0]:
                    previous = _combine(previous, row)
                    continue
                block.append((previous[0], *previous[2:]))
                urls += 1
                news += previous[7] is not None
                if len(block) >= _BLOCK:
                    _dump_block(file, block)
                    block = []
            previous = row
        if previous is not None:
            block.append((previous[0], *previous[2:]))
            urls += 1
            news += previous[7] is not None
        if block:
            _dump_block(file, block)
    for path in paths:
        os.unlink(path)
    return urls, news


@dataclass(frozen=True)
class _Merged:
    path: Path
    urls: int
    news: int


class RunStore:
    """The read side of :class:`~.store.FactStore` over merged run files: what the
    exporter needs to publish. Read-only; :meth:`close` removes the files."""

    def __init__(self, folder: Path, merged: dict[Origin, _Merged], workers: int = 1) -> None:
        self.folder = folder
        self._merged = merged
        #: Processes the exporter may stage origins in (see build.stage_origins): this
        #: store is files and counts, so a worker process can read it too.
        self.workers = workers

    def urls_of(self, origin: Origin) -> int:
        merged = self._merged.get(origin)
        return merged.urls if merged else 0

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        raise StoreError("a build's run store is read-only")

    def flush(self) -> None:
        """Nothing is ever pending."""

    def track(self, key: str, serialize: Callable[[], bytes]) -> bool:
        return False

    def done(self, key: str) -> None:
        """No request is tracked."""

    def pending_requests(self) -> list[bytes]:
        return []

    def clear_pending(self) -> None:
        """No request is tracked."""

    def origins(self) -> list[Origin]:
        return sorted(origin for origin, merged in self._merged.items() if merged.urls)

    def _facts(self, origin: Origin, news_only: bool) -> Iterator[UrlFacts]:
        merged = self._merged.get(origin)
        if merged is None or (news_only and not merged.news):
            return
        for block in _read_blocks(merged.path):
            for loc, lastmod, changefreq, priority, images, videos, news in block:
                if news_only and news is None:
                    continue
                yield UrlFacts(
                    loc,
                    lastmod,
                    changefreq,
                    priority,
                    images=images or (),
                    videos=tuple(Video(*v) for v in videos) if videos else (),
                    news=News(*news) if news else None,
                )

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=False)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return self._facts(origin, news_only=True)

    def __len__(self) -> int:
        return sum(merged.urls for merged in self._merged.values())

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


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
) -> tuple[RunStore, Tally]:
    """Read ``feed`` with ``workers`` processes (1: in this process) into a :class:`RunStore`."""
    folder = Path(tempfile.mkdtemp(prefix="sitemapgen-build-", dir=temp_dir))
    try:
        with _executor(workers) as pool:
            ranges = feed_ranges(feed, workers)
            tally = Tally()
            runs: dict[OriginKey, list[str]] = {}
            futures = [
                pool.submit(read_range, str(feed), start, end, str(folder), str(n), policy, now,
                            run_records)
                for n, (start, end) in enumerate(ranges)
            ]
            for future in futures:
                files, part = future.result()
                tally.update(part)
                for key, paths in files.items():
                    runs.setdefault(key, []).extend(paths)
            # The biggest origins first, so the last one to finish is a small one.
            order = sorted(runs, key=lambda key: -len(runs[key]))
            merges = {
                key: pool.submit(merge_origin, runs[key], str(folder / f"merged-{n}"))
                for n, key in enumerate(order)
            }
            merged = {}
            for n, key in enumerate(order):
                urls, news = merges[key].result()
                merged[origin_of(key)] = _Merged(folder / f"merged-{n}", urls, news)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return RunStore(folder, merged, workers), tally


def _executor(workers: int) -> Executor:
    if workers <= 1:
        return _Inline()
    # spawn, not fork: the build runs inside Scrapy's reactor, whose threads a fork would copy.
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
