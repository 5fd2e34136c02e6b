"""The run files' format: rows in length-prefixed :mod:`marshal` blocks, the kinds of run
that hold them, and keyed files (a range's index of runs, the store's origins).

The rows are tuples of strings, numbers and ``None``: :mod:`marshal` is the fastest
serialisation of such data in the standard library, and the files never outlive the
build. Nothing here imports Scrapy: it runs in the build's worker processes.
"""

from __future__ import annotations

import marshal
import os
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

__all__ = [
    "BLOCK_ROWS",
    "INDEX_KEYS",
    "BlockRow",
    "Index",
    "LoadedSegment",
    "OriginKey",
    "Run",
    "RunOnDisk",
    "Segment",
    "WholeRun",
    "covering",
    "dump_block",
    "read_blocks",
    "read_keyed",
    "read_segment",
    "run_from_disk",
    "run_on_disk",
    "write_blocks",
    "write_keyed",
]

#: Rows per marshal block: one read or write call per block, not per row. Also the size
#: below which an origin's rows of a spill are a segment of a shared file (see
#: :class:`Segment`).
BLOCK_ROWS = 500

#: A row of a block: a feed's record as the run files keep it (a plain tuple of
#: :class:`..sitemaps.codec.RunRow`'s fields, which the codec alone builds and reads), or
#: an entry of a keyed or counts file (its key first). Plain tuples: :mod:`marshal` takes
#: no other.
BlockRow = tuple[Any, ...]

#: An origin's root, ``https://host[:port]/`` (:func:`..sitemaps.urls.origin_key`): the
#: key the run files file its rows under, a prefix of every loc of it.
OriginKey = str


class WholeRun(NamedTuple):
    """A sorted run in a file of its own: its blocks from the start to the end."""

    path: str


class Segment(NamedTuple):
    """A sorted run of fewer rows than a block, one block of a spill's file shared by such
    origins: a broad crawl's feed has a few rows of each of many origins in every spill,
    and a file each cost more to create than the rows in it cost to read and sort."""

    path: str
    start: int
    end: int


class LoadedSegment(NamedTuple):
    """A :class:`Segment`'s bytes, read already with its neighbours in one read (see
    :func:`.run_store.read_stretches`)."""

    data: bytes


#: A sorted run of one origin's rows, in one of its three kinds.
Run = WholeRun | Segment | LoadedSegment

#: A run as the keyed files and the spills' entries keep it (:mod:`marshal` takes no
#: class of ours): a whole run by its path, a segment as ``(path, start, end)``.
RunOnDisk = str | tuple[str, int, int]


def run_on_disk(run: WholeRun | Segment) -> RunOnDisk:
    """``run`` as the keyed files keep it."""
    match run:
        case WholeRun(path):
            return path
        case Segment(path, start, end):
            return (path, start, end)


def run_from_disk(kept: RunOnDisk) -> WholeRun | Segment:
    """The run that :func:`run_on_disk` gave ``kept`` for."""
    if isinstance(kept, str):
        return WholeRun(kept)
    return Segment(*kept)


def dump_block(file: BinaryIO, rows: list[Any]) -> int:
    """Write one block; returns its length in bytes, so that a writer of many keeps its
    own offset (a buffered file's ``tell()`` is a system call)."""
    # Length-prefixed: marshal.load() on a file reads it in many small calls, several
    # times slower than one read() and marshal.loads().
    data = marshal.dumps(rows)
    file.write(len(data).to_bytes(4, "little"))
    file.write(data)
    return 4 + len(data)


def write_blocks(path: Path | str, rows: list[BlockRow]) -> None:
    with open(path, "wb") as file:
        for start in range(0, len(rows), BLOCK_ROWS):
            dump_block(file, rows[start : start + BLOCK_ROWS])


def read_segment(path: str, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of ``path``, the file opened for this read alone: no
    descriptor outlives it, in whichever process it runs."""
    with open(path, "rb", buffering=0) as file:
        if hasattr(os, "pread"):
            return os.pread(file.fileno(), end - start, start)
        file.seek(start)  # pragma: no cover - Windows
        return file.read(end - start)  # pragma: no cover - Windows


def _blocks_of(data: bytes) -> Iterator[list[BlockRow]]:
    at = 0
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "little")
        yield marshal.loads(data[at + 4 : at + 4 + length])
        at += 4 + length


def read_blocks(run: Run) -> Iterator[list[BlockRow]]:
    """The blocks of ``run``, in order."""
    match run:
        case LoadedSegment(data):
            yield from _blocks_of(data)
        case Segment(path, start, end):
            yield from _blocks_of(read_segment(path, start, end))
        case WholeRun(path):
            with open(path, "rb") as file:
                while size := file.read(4):
                    yield marshal.loads(file.read(int.from_bytes(size, "little")))


#: Keys per block of a keyed file (see :func:`write_keyed`): a staging task of neighbours
#: reads a block or two of each range's index, a lookup of one origin one block.
INDEX_KEYS = 256

#: A keyed file (a range's index, the store's origins): its path and, per block, the
#: first key and the block's bytes in it.
Index = tuple[str, list[tuple[OriginKey, int, int]]]


def write_keyed(path: str, entries: Iterable[tuple[Any, ...]]) -> Index:
    """Write ``entries``, tuples whose first item is an origin's key, in key order, into
    ``path`` in blocks of ``INDEX_KEYS``; returns the file's :data:`Index`. What is in
    memory is one block and the blocks' first keys, however many origins there are."""
    directory: list[tuple[OriginKey, int, int]] = []
    at = 0
    with open(path, "wb") as file:
        for block in _batched(entries, INDEX_KEYS):
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
        yield n * INDEX_KEYS, marshal.loads(read_segment(path, start, end))


def covering(index: Index, firsts: list[OriginKey], low: OriginKey, high: OriginKey) -> Index:
    """The part of ``index`` (its blocks' first keys: ``firsts``) whose blocks may hold
    keys from ``low`` to ``high``: what a staging task of neighbours needs of a range's
    index. Every range's whole directory went with every task: a block for each 256 of
    its origins, so a broad crawl's tasks grew with the origin count."""
    path, directory = index
    start = max(bisect_right(firsts, low) - 1, 0)
    return path, directory[start : bisect_right(firsts, high)]
