"""One feed range's rows spilled into sorted runs, and the range's index and counts files
merged from the spills at its end: what a reading worker writes (:mod:`.input_reader`).
Nothing here imports Scrapy."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from ..sitemaps.codec import rows_with_news, run_loc
from .run_files import (
    BLOCK_ROWS,
    BlockRow,
    Index,
    OriginKey,
    Segment,
    WholeRun,
    dump_block,
    run_on_disk,
    write_blocks,
    write_keyed,
)
from .run_merge import sorted_batches

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .run_files import RunOnDisk

__all__ = ["RangeRuns", "RangeSpills"]


@dataclass
class RangeRuns:
    """What a range's worker wrote: its runs, per origin, in an index file on disk (one
    list of runs per origin, in feed order: see :func:`.run_merge.runs_of`), and a file of
    how many rows and rows with news they hold per origin (repeats counted) and how many
    runs (see :func:`.run_merge.merged_counts`)."""

    index: Index
    counts: str


class RangeSpills:
    """One worker's sorted runs of one feed range: its rows, held by origin until a spill
    writes them out; each spill's entries (an origin's run and counts) on disk, in key
    order, until :meth:`finish` merges them into the range's index and counts files."""

    def __init__(self, folder: Path, tag: str, run_records: int) -> None:
        self.folder = folder
        self.tag = tag
        self.run_records = run_records
        self.pending: dict[OriginKey, list[BlockRow]] = {}
        self.held = 0
        #: Each spill's entries file: ``(key, run, rows, rows with news)`` in key order.
        #: Held here instead, a range's lists of runs and counts, one of each for each of
        #: a broad crawl's origins, were most of what a reading worker held, and grew
        #: with the origin count.
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
        block: list[tuple[OriginKey, RunOnDisk, int, int]] = []
        try:
            with open(entries_path, "wb") as entries:
                # In key order: a staging task's small origins are then one stretch of the
                # shared file (see run_store.read_stretches), and the entries merge as runs
                # do. The keys alone are sorted: a list of strings takes the sort's string
                # comparison, where (key, rows) pairs take a tuple's, item by item.
                pending = self.pending
                for index, key in enumerate(sorted(pending)):
                    rows = pending[key]
                    rows.sort(key=run_loc)  # stable: a repeated URL's rows stay in feed order
                    run: WholeRun | Segment
                    if len(rows) < BLOCK_ROWS:  # one block, into the spill's shared file
                        if shared is None:
                            shared = open(shared_path, "wb")  # noqa: SIM115 - closed below
                        start = at
                        at += dump_block(shared, rows)
                        run = Segment(shared_path, start, at)
                    else:
                        path = self.folder / f"run-{self.tag}-{self.number}-{index}"
                        write_blocks(path, rows)
                        run = WholeRun(str(path))
                    block.append(
                        (
                            key,
                            run_on_disk(run),
                            len(rows),
                            rows_with_news(rows),
                        )
                    )
                    if len(block) >= BLOCK_ROWS:
                        dump_block(entries, block)
                        block = []
                if block:
                    dump_block(entries, block)
        finally:
            if shared is not None:
                shared.close()
        self.entries.append(entries_path)
        self.pending = {}
        self.held = 0

    def finish(self) -> RangeRuns:
        """Spill what is held, then write every origin's runs, in key order, into the
        range's index file (see :func:`.run_files.write_keyed`) and its counts, ``(key,
        rows, news, runs)`` in key order, into the range's counts file, in blocks as a
        run's: both merged from the spills' entries files a block of each at a time, as
        runs are merged, then those files removed. Held instead, a broad crawl's range has
        a list of runs for each of 100,000 origins, which the main process would hold,
        every range's, until the build ends; sent back, its counts were a dict of an entry
        for each of most origins, every range's unpickled in the main process while the
        others' came in, which the allocator then kept; read from files in key order
        (:func:`.run_merge.merged_counts`), they are a few blocks at a time."""
        self.spill()
        counts_path = str(self.folder / f"counts-{self.tag}")
        with open(counts_path, "wb") as counts:
            block: list[tuple[OriginKey, int, int, int]] = []

            def grouped() -> Iterator[tuple[OriginKey, list[RunOnDisk]]]:
                nonlocal block
                key: OriginKey | None = None
                runs: list[RunOnDisk] = []
                rows = news = 0
                # The spills in order: an origin's runs in feed order (runs_of).
                for batch in sorted_batches([WholeRun(path) for path in self.entries]):
                    for next_key, run, more_rows, more_news in batch:
                        if next_key != key:
                            if key is not None:
                                block.append((key, rows, news, len(runs)))
                                yield key, runs
                            key, runs, rows, news = next_key, [], 0, 0
                        runs.append(run)
                        rows += more_rows
                        news += more_news
                    if len(block) >= BLOCK_ROWS:
                        dump_block(counts, block)
                        block = []
                if key is not None:
                    block.append((key, rows, news, len(runs)))
                    yield key, runs

            index = write_keyed(str(self.folder / f"index-{self.tag}"), grouped())
            if block:
                dump_block(counts, block)
        for path in self.entries:
            os.unlink(path)
        self.entries = []
        return RangeRuns(index, counts_path)
