"""The state's blocks of lines: packed with a compressor sized to the block, read back by
zlib's own decompress, and blocks packed the older way (``zlib.compress``) still read."""

from __future__ import annotations

import random
import zlib

import pytest

from scrapy_sitemapgen.sitemaps.blocks import pack, unpack


def _lines(count: int, seed: int) -> str:
    rng = random.Random(seed)
    return "\n".join(
        f"https://h{rng.randrange(10**6)}.example/{'x' * rng.randrange(200)}/é{n}"
        for n in range(count)
    )


@pytest.mark.parametrize("count", [0, 1, 10, 60, 120, 150, 2000])
def test_a_block_packs_and_reads_back_whole(count: int) -> None:
    text = _lines(count, count)
    packed = pack(text)
    assert unpack(packed) == text
    assert zlib.decompress(packed) == text.encode()  # zlib's format, any reader
    # No worse than the one-size compressor, give or take a few bytes of block framing.
    assert len(packed) <= len(zlib.compress(text.encode(), 1)) + 16


@pytest.mark.parametrize("size", [32768 - 262 - 1, 32768 - 262, 32768 - 261, 32768])
def test_blocks_around_the_largest_window_read_back(size: int) -> None:
    text = ("https://example.com/a-page-" * 2000)[:size]
    assert unpack(pack(text)) == text


def test_a_block_an_older_version_packed_is_read() -> None:
    text = _lines(40, 7)
    assert unpack(zlib.compress(text.encode(), 1)) == text
