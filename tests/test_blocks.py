"""The state's blocks of lines: packed by zlib with a compressor sized to the block, or by
zlib-ng (the extra ``fast``, installed for the tests), read back by zlib's own decompress,
and blocks packed the older way (``zlib.compress``) still read."""

from __future__ import annotations

import random
import zlib
from typing import TYPE_CHECKING

import pytest

from scrapy_sitemapgen.state.notes import PACKERS, pack, unpack

if TYPE_CHECKING:
    from collections.abc import Callable


def _lines(count: int, seed: int) -> str:
    rng = random.Random(seed)
    return "\n".join(
        f"https://h{rng.randrange(10**6)}.example/{'x' * rng.randrange(200)}/é{n}"
        for n in range(count)
    )


def test_both_packers_are_there_and_zlib_ng_packs_by_default() -> None:
    assert set(PACKERS) == {"zlib", "zlib-ng"}
    text = _lines(50, 3)
    assert pack(text) == PACKERS["zlib-ng"](text.encode())


@pytest.mark.parametrize("backend", ["zlib", "zlib-ng"])
@pytest.mark.parametrize("count", [0, 1, 10, 60, 120, 150, 2000])
def test_a_block_packs_and_reads_back_whole(backend: str, count: int) -> None:
    packer: Callable[[bytes], bytes] = PACKERS[backend]
    text = _lines(count, count)
    packed = packer(text.encode())
    assert unpack(packed) == text
    assert zlib.decompress(packed) == text.encode()  # zlib's format, any reader
    # No worse than the one-size compressor at level 1, give or take a few bytes of
    # block framing.
    assert len(packed) <= len(zlib.compress(text.encode(), 1)) + 16


@pytest.mark.parametrize("backend", ["zlib", "zlib-ng"])
@pytest.mark.parametrize("size", [32768 - 262 - 1, 32768 - 262, 32768 - 261, 32768])
def test_blocks_around_the_largest_window_read_back(backend: str, size: int) -> None:
    text = ("https://example.com/a-page-" * 2000)[:size]
    assert unpack(PACKERS[backend](text.encode())) == text


def test_a_block_an_older_version_packed_is_read() -> None:
    text = _lines(40, 7)
    assert unpack(zlib.compress(text.encode(), 1)) == text
