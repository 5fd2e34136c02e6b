"""A JSON-lines feed read into sorted runs, on every core: the offline build's intake.

The offline build (``scrapy sitemapgen-build --input``) has the whole feed up front, so it
need not take the crawl's road of one store upsert per record. The feed is cut into byte
ranges at line ends, and worker processes (:mod:`.pool`) read them: each record read by
the :class:`~..sitemaps.records.RecordReader` the item pipeline reads items with, then
kept as a plain row in sorted runs on disk (:mod:`.spills`; at most ``run_records`` rows
in memory per worker, whatever the feed's size). The result is a
:class:`~.run_store.RunStore`.

No Scrapy here. The build's files live in a folder of its own in the temporary
folder, locked while the build lives, so a killed build's leftovers can be told apart.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..plural import counted
from ..sitemaps.codec import run_row
from ..sitemaps.records import DEFAULT_JSON_PARSER, JSON_PARSERS, RecordReader, url_field
from ..sitemaps.urls import origin_key, origin_of_root
from ..stats import Tally
from .pool import executor, main_script_hidden
from .run_files import Index, OriginKey, write_keyed
from .run_merge import FAN_IN, merge_passes, merged_counts, runs_of
from .run_store import FIRST_ORIGINS, OriginRuns, RunStore
from .spills import RangeRuns, RangeSpills

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: killed builds' folders are left behind
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime

    from ..sitemaps.urls import Origin, UrlPolicy

__all__ = [
    "RUN_RECORDS",
    "build_store",
    "input_ranges",
    "line_at",
    "read_range",
    "remove_stale_folders",
]

logger = logging.getLogger(__name__)

#: Rows a worker holds before it sorts them and writes a run: its memory bound (a row is
#: a few hundred bytes), and large enough that a million records make only a few runs.
RUN_RECORDS = 50_000


_FOLDER_PREFIX = "sitemapgen-build-"


# Held locked by the build that owns the folder; the system drops the lock when that
# process dies, however it dies, so an unlocked one marks a killed build's leftovers.
_LOCK_NAME = "owner.lock"


def input_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
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


def line_at(path: Path, offset: int) -> int:
    """The 1-based number of the line of ``path`` that byte ``offset`` is on."""
    line = 1
    with path.open("rb") as file:
        while offset > 0 and (chunk := file.read(min(offset, 1 << 20))):
            line += chunk.count(b"\n")
            offset -= len(chunk)
    return line


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
) -> tuple[RangeRuns, Tally]:
    """Phase 1, in a worker: the records of ``feed[start:end]`` as sorted run files.

    Each record is read by the :class:`~..sitemaps.records.RecordReader` the item
    pipeline reads items with. One loop with little in it: this runs a million times per
    million records."""
    tally = Tally()
    runs = RangeSpills(Path(folder), tag, run_records)
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
                if tally.first_bad_offset is None:
                    tally.first_bad_offset = seq
                continue
            found = read(record.get, now)
            if found is None:
                if not record.get("loc"):  # what the reader reads as no loc
                    tally.add_no_loc(seq, url_field(record))
                else:  # counted by the reader as skipped or excluded
                    tally.refused += 1
                continue
            loc, fields = found
            row = run_row(loc, fields)
            key = origin_key(loc)
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
    tally.records += records
    return runs.finish(), tally


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
    that keeps those processes for staging, until it is closed.

    The store's bookkeeping is on disk: each range's runs in its index file, every
    origin's counts in the store's origins file, so that this process holds little of
    it, whatever the origin count."""
    stale = remove_stale_folders(temp_dir)
    if stale:
        logger.info(
            "Sitemap: removed %(count)s that killed builds left in %(dir)s",
            {"count": counted(stale, "run folder"), "dir": temp_dir or tempfile.gettempdir()},
        )
    folder = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX, dir=temp_dir))
    lock = _claim(folder)
    pool = executor(workers)
    try:
        tally = Tally()
        indexes: list[Index] = []
        counts: list[str] = []  # each range's counts file, in feed order
        with main_script_hidden():  # the pool starts its processes on the first submits
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
                # One range per worker: each range's rows are spilled apart, so a finer
                # cut gives each small origin a run more in every extra range, and the
                # staging a block more to read and merge per origin; the balance it buys
                # on a feed with a slower part was not seen on the benchmark's shapes.
                for n, (start, end) in enumerate(input_ranges(feed, workers))
            ]
        futures.reverse()
        while futures:  # in feed order: the merge keeps it for repeated URLs
            # A range's runs stay in its index file, in feed order (runs_of), and its
            # counts in a file of their own (merged_counts): held here, a broad crawl's
            # lists of runs and counts, one for each origin in each range, were most of
            # what this process held for every origin.
            range_runs, part = futures.pop().result()
            tally.update(part)
            indexes.append(range_runs.index)
            counts.append(range_runs.counts)
        if tally.first_no_loc_offset is not None:  # a worker knows its offset, not its line
            tally.first_no_loc_line = line_at(feed, tally.first_no_loc_offset)
        # Every origin's key and counts, in key order, into the store's origins file,
        # which the main process reads a few blocks at a time as it makes and sends the
        # staging tasks: held here, an entry per origin was most of what it kept for a
        # broad crawl's feed. An origin of more runs than a merge reads at once is merged
        # down first, and one process reads everything itself: those origins' runs are
        # looked up now, and held. So is any whose root is not its key, which a later
        # lookup by root would not find (origin_key gives a normalised loc's origin's
        # root: only a policy that lets other locs through makes one).
        # The first origins in origin order are kept too, for the close report's lines
        # (RunStore.first_origins): the files' order is their keys'.
        lookups: dict[OriginKey, tuple[Origin, int, int]] = {}
        first: list[Origin] = []

        def listed() -> Iterator[tuple[OriginKey, int, int]]:
            for key, rows, news, spread in merged_counts(counts):
                origin = origin_of_root(key)
                if spread > FAN_IN or workers <= 1 or origin.root != key:
                    lookups[key] = (origin, rows, news)
                if len(first) < FIRST_ORIGINS:
                    bisect.insort(first, origin)
                elif origin < first[-1]:  # rare: the keys' order is nearly the origins'
                    bisect.insort(first, origin)
                    first.pop()
                yield key, rows, news

        origins = write_keyed(str(folder / "origins"), listed())
        looked_up = runs_of(indexes, list(lookups))
        passes = {
            key: pool.submit(merge_passes, runs, str(folder / f"merged-{n}"))
            for n, (key, runs) in enumerate(looked_up.items())
            if len(runs) > FAN_IN
        }
        held: dict[Origin, OriginRuns] = {}
        for key, (origin, rows, news) in lookups.items():
            runs = passes[key].result() if key in passes else looked_up.get(key)
            held[origin] = OriginRuns(runs, rows, news)
        store = RunStore(
            folder,
            held,
            pool if workers > 1 else None,
            lock,
            indexes,
            origins,
            first,
        )
    except BaseException:
        pool.shutdown(cancel_futures=True)
        shutil.rmtree(folder, ignore_errors=True)
        if lock is not None:
            lock.close()
        raise
    if store.pool() is None:
        pool.shutdown()
    return store, tally
