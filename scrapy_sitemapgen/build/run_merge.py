"""Sorted runs merged in ``loc`` order: one origin's rows with each URL once, its repeats
combined by the merge rules (:func:`..sitemaps.merge.merge`), so a feed builds what the
item pipeline would have stored; the merge passes that bound what a reader holds; and
the keyed files' entries (a range's counts, its index of runs) merged over the ranges.

Runs are sorted by ``loc`` alone with a stable sort, and merged by ``loc`` alone with a
stable merge in feed order: repeats of a URL come out together, oldest first, so
combining them needs no other state. Nothing here imports Scrapy.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from ..sitemaps.codec import RUN_LOC, item_run_record, run_loc, run_row_of
from ..sitemaps.merge import merge
from .run_files import (
    BLOCK_ROWS,
    BlockRow,
    Index,
    LoadedSegment,
    OriginKey,
    Run,
    Segment,
    WholeRun,
    dump_block,
    read_blocks,
    read_keyed,
    run_from_disk,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "FAN_IN",
    "combined_rows",
    "merge_passes",
    "merged_counts",
    "merged_rows",
    "runs_of",
    "sorted_batches",
    "sorted_streams",
]

#: The most runs a merge reads at once (more are first merged in groups, an extra pass on
#: disk): a merge holds one block of each, so its memory is bounded whatever the feed's
#: size. At 32 runs (16,000 rows) a merge holds less than reading does (RUN_RECORDS); at
#: 64 a merge would hold more, and each worker's peak would grow with the feed.
FAN_IN = 32


def _whole_blocks(blocks: Iterable[list[BlockRow]]) -> Iterator[list[BlockRow]]:
    """A run's blocks, joined where a loc goes on into the next block, so that no loc of
    a block's last row comes again in a later one."""
    pending: list[BlockRow] | None = None
    for block in blocks:
        if pending is None:
            pending = block
        elif run_loc(block[0]) == run_loc(pending[-1]):
            pending += block
        else:
            yield pending
            pending = block
    if pending:
        yield pending


def sorted_batches(runs: list[Run]) -> Iterator[list[Any]]:
    """The rows of sorted runs, in loc order (their first item), in batches; rows of equal
    loc in the order of ``runs``, then of their run: what ``heapq.merge(..., key=loc)``
    gives, for less.

    Python's merge pays a heap step per row. Here each step takes, from the head block
    of each run, the rows up to the smallest last loc among those blocks (nothing later in
    any run can sort before it), and sorts them with the built-in stable sort, which finds
    the sorted pieces and merges them in C. Runs that are all segments (a small origin's:
    less than a block each, at most FAN_IN of them) are one batch, sorted at once."""
    if not any(isinstance(run, WholeRun) for run in runs):
        rows: list[BlockRow] = []
        for run in runs:
            for block in read_blocks(run):
                rows += block
        rows.sort(key=run_loc)  # stable: equal locs stay in the order of runs
        if rows:
            yield rows
        return
    yield from sorted_streams([read_blocks(run) for run in runs])


def sorted_streams(streams: list[Iterator[list[BlockRow]]]) -> Iterator[list[Any]]:
    """The rows of sorted runs given as their blocks (each run's, or a key range of it:
    :mod:`.windows`), in loc order, in batches, as :func:`sorted_batches` gives them."""
    readers = [_whole_blocks(stream) for stream in streams]
    heads = [next(reader, None) for reader in readers]
    starts = [0] * len(readers)  # where each head block's unread rows start
    live = [n for n, head in enumerate(heads) if head]
    while live:
        if len(live) == 1:
            n = live[0]
            head = heads[n]
            assert head is not None
            yield head[starts[n] :]
            yield from readers[n]
            return
        bound = min(run_loc(heads[n][-1]) for n in live)  # type: ignore[index]
        batch: list[BlockRow] = []
        for n in live:  # in run order: the sort keeps it for equal locs
            head = heads[n]
            assert head is not None
            start = starts[n]
            cut = bisect_right(head, bound, start, key=run_loc)
            if cut == len(head):
                batch += head[start:] if start else head
                heads[n] = next(readers[n], None)
                starts[n] = 0
            elif cut > start:
                batch += head[start:cut]
                starts[n] = cut
        batch.sort(key=run_loc)
        yield batch
        live = [n for n in live if heads[n]]


def _combine(old: BlockRow, new: BlockRow) -> BlockRow:
    """Two rows of one URL, ``new`` read after ``old``, as :func:`~..sitemaps.merge.merge`
    combines two item records of it."""
    return run_row_of(run_loc(new), merge(item_run_record(old), item_run_record(new)))


def merged_rows(runs: list[Run]) -> Iterator[BlockRow]:
    """One origin's runs (in feed order, at most FAN_IN of them) in ``loc`` order, each
    URL once, its repeats combined."""
    return combined_rows(sorted_batches(runs))


def combined_rows(batches: Iterable[list[BlockRow]]) -> Iterator[BlockRow]:
    """Rows in loc order, in batches (:func:`sorted_batches`, :func:`sorted_streams`),
    each URL once, its repeats combined."""
    previous: BlockRow | None = None
    at = RUN_LOC
    for batch in batches:
        for row in batch:
            if previous is not None:
                if row[at] == previous[at]:
                    previous = _combine(previous, row)
                    continue
                yield previous
            previous = row
    if previous is not None:
        yield previous


def merge_passes(runs: list[Run], out: str) -> list[Run]:
    """In a worker, for an origin of more than FAN_IN runs (millions of records): its
    runs merged in groups, in order, until at most FAN_IN are left, so that a reader
    holds at most FAN_IN blocks whatever the feed's size. Repeats are combined later."""
    number = 0
    while len(runs) > FAN_IN:
        groups = [runs[i : i + FAN_IN] for i in range(0, len(runs), FAN_IN)]
        runs = []
        for group in groups:
            number += 1
            merged = f"{out}.pass-{number}"
            with open(merged, "wb") as file:
                for batch in sorted_batches(group):
                    for start in range(0, len(batch), BLOCK_ROWS):
                        dump_block(file, batch[start : start + BLOCK_ROWS])
            for run in group:
                match run:
                    case WholeRun(path):
                        os.unlink(path)
                    case Segment() | LoadedSegment():
                        pass  # a shared file goes with the folder
            runs.append(WholeRun(merged))
    return runs


def merged_counts(paths: list[str]) -> Iterator[tuple[OriginKey, int, int, int]]:
    """Every origin's ``(key, rows, news, runs)`` over the ranges' counts files, in key
    order: the files merged as runs are (a few blocks of each in memory at a time), an
    origin's counts summed over the ranges that hold it."""
    key: OriginKey | None = None
    rows = news = runs = 0
    for batch in sorted_batches([WholeRun(path) for path in paths]):
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
            for key, kept in block:
                if key in wanted:
                    found.setdefault(key, []).extend(map(run_from_disk, kept))
    return found
