"""One origin's runs read by key range: how the build shares a large origin out among its
workers (:mod:`..publish.split`), each worker reading its own window of the origin's
sorted locs from the run files, not rows sent to it.

A pass over the whole origin (the split's survey) reads every block of its runs and
notes, for each whole run, where each block starts and its first loc
(:func:`recorded_blocks`); a window then reads, from each run, only the blocks that may
hold its locs, from the one its first loc may be in (:func:`blocks_between`). The rows
of one URL are all in one window: a window's bounds are locs. Nothing here imports
Scrapy.
"""

from __future__ import annotations

import marshal
from bisect import bisect_left
from typing import TYPE_CHECKING

from ..sitemaps.codec import run_loc
from .run_files import BlockRow, Run, WholeRun, read_blocks
from .run_merge import combined_rows, sorted_streams

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["BlockStarts", "blocks_between", "recorded_blocks", "rows_between", "surveyed_rows"]

#: Of one run: each block's first loc and where the block starts in the run's file, in
#: order (empty for a run shorter than a block, read whole by every window).
BlockStarts = list[tuple[str, int]]


def _blocks_from(path: str, offset: int) -> Iterator[tuple[int, list[BlockRow]]]:
    """The blocks of the run file ``path`` from byte ``offset`` (a block's start), each
    with where it starts."""
    with open(path, "rb") as file:
        file.seek(offset)
        at = offset
        while size := file.read(4):
            length = int.from_bytes(size, "little")
            yield at, marshal.loads(file.read(length))
            at += 4 + length


def recorded_blocks(run: Run, starts: BlockStarts) -> Iterator[list[BlockRow]]:
    """The blocks of ``run``, in order; for a whole run, each block's first loc and start
    appended to ``starts`` on the way."""
    if not isinstance(run, WholeRun):
        yield from read_blocks(run)
        return
    for at, block in _blocks_from(run.path, 0):
        starts.append((run_loc(block[0]), at))
        yield block


def surveyed_rows(runs: list[Run], starts: list[BlockStarts]) -> Iterator[BlockRow]:
    """An origin's rows, each URL once (as :func:`.run_merge.merged_rows` gives them),
    its runs' blocks recorded into ``starts`` (one list per run, filled as they are read)."""
    return combined_rows(
        sorted_streams([recorded_blocks(run, kept) for run, kept in zip(runs, starts)])
    )


def blocks_between(
    run: Run, starts: BlockStarts, low: str | None, high: str | None
) -> Iterator[list[BlockRow]]:
    """The rows of ``run`` whose locs are from ``low`` (None: the first) up to, not
    including, ``high`` (None: to the end), in blocks. A whole run is read from the last
    block that starts before ``low``: a loc at ``low`` may begin in that block."""
    if isinstance(run, WholeRun):
        offset = 0
        if low is not None and starts:
            n = bisect_left(starts, low, key=lambda start: start[0]) - 1
            offset = starts[n][1] if n >= 0 else 0
        blocks: Iterator[list[BlockRow]] = (block for _, block in _blocks_from(run.path, offset))
    else:
        blocks = read_blocks(run)
    for block in blocks:
        if low is not None:
            if run_loc(block[-1]) < low:
                continue
            if run_loc(block[0]) < low:
                block = block[bisect_left(block, low, key=run_loc) :]
        if high is not None and run_loc(block[-1]) >= high:
            block = block[: bisect_left(block, high, key=run_loc)]
            if block:
                yield block
            return
        yield block


def rows_between(
    runs: list[Run], starts: list[BlockStarts], low: str | None, high: str | None
) -> Iterator[BlockRow]:
    """The origin's rows with locs from ``low`` up to ``high`` (see :func:`blocks_between`),
    each URL once, in loc order: one window of it."""
    return combined_rows(
        sorted_streams([blocks_between(run, kept, low, high) for run, kept in zip(runs, starts)])
    )
