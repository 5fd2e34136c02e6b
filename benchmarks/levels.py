"""Compressed size and deflate time of a urlset at each backend and level, over URL shapes:
what the default ``SITEMAPGEN_GZIP_LEVEL`` of each backend is chosen from.

    python -m benchmarks levels --sizes 50000,5000,500

Each shape is a deterministic (seeded) list of URLs, rendered by our writer into one
uncompressed urlset (a full file of 50,000 URLs, and small files of 5,000 and 500), then
deflated in this process, one thread. ``bench`` is the start of the benchmark feed's
largest origin (``benchmarks.feed``: images, lastmods, changefreqs), the others are shapes
real sites have: short tokens, numeric ids, word slugs, UUIDs, dated blog paths, search
queries. Sizes are given against Python's zlib at level 9, the smallest common setting
(issue 6 asks for the default within 10 % of level 9); times against zlib-ng at level 6,
the default before.
"""

from __future__ import annotations

import io
import random
import string
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.records import record_fields
from scrapy_sitemapgen.sitemaps.urls import normalize_loc
from scrapy_sitemapgen.sitemaps.writer import GZIP_BACKENDS, WriterOptions, write_origin

from . import feed, measure

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from types import ModuleType

    from .results import Record

#: (label, backend, level), in the table's order. The first is what sizes are given against.
SETTINGS = (
    ("zlib 9", "zlib", 9),
    ("zlib 6", "zlib", 6),
    ("zlib 5", "zlib", 5),
    ("zlib-ng 5", "zlib-ng", 5),
    ("zlib-ng 6", "zlib-ng", 6),
    ("zlib-ng 9", "zlib-ng", 9),
)
TIME_BASE = "zlib-ng 6"


def _shapes(count: int, seed: int) -> dict[str, list[UrlFacts]]:
    rng = random.Random(seed)
    words = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(3000)
    ]

    def token(length: int) -> str:
        return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(length))

    def slug() -> str:
        return "-".join(rng.choice(words) for _ in range(rng.randint(2, 6)))

    def date() -> str:
        return f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"

    def facts(
        locs: Iterator[str], lastmod: Callable[[], str | None] = lambda: None
    ) -> list[UrlFacts]:
        return [UrlFacts(loc, lastmod()) for loc in locs]

    n = range(count)
    return {
        "bench": _bench_shape(count, seed),
        "short tokens": facts(f"https://a.co/{token(6)}" for _ in n),
        "numeric ids": facts(f"https://ex.com/p/{i}" for i in rng.sample(range(10**7), count)),
        "sequential ids": facts(f"https://ex.com/p/{i}" for i in n),
        "word slugs": facts(f"https://www.example.com/{rng.choice(words)}/{slug()}" for _ in n),
        "slugs + lastmod": facts(
            (f"https://www.example.com/{rng.choice(words)}/{slug()}" for _ in n), date
        ),
        "uuids": facts(
            f"https://shop.example.org/item/{token(8)}-{token(4)}-{token(4)}-{token(12)}" for _ in n
        ),
        "dated blog": facts(
            f"https://blog.example.net:8080/{2010 + i % 15}/{1 + i % 12:02d}/{rng.choice(words)}-{i}/"
            for i in n
        ),
        "search queries": facts(
            f"https://shop.example.org/search?q={rng.choice(words)}&page={rng.randint(1, 50)}"
            f"&sort={rng.choice(['asc', 'desc'])}"
            for _ in n
        ),
        "tokens + images": [
            UrlFacts(
                f"https://ex.com/{token(5)}",
                None,
                images=tuple(
                    f"https://img.ex.com/{token(10)}.jpg" for _ in range(rng.randint(0, 3))
                ),
            )
            for _ in n
        ],
    }


def _bench_shape(count: int, seed: int) -> list[UrlFacts]:
    """The benchmark feed's www origin, its first ``count`` distinct URLs, as the build
    reads them."""
    now = datetime.now(timezone.utc)
    found: dict[str, UrlFacts] = {}
    for record, _flags in feed.records(count * 4, seed):
        loc = normalize_loc(record["loc"])
        if not loc.startswith(feed.ORIGINS[0] + "/") or loc in found:
            continue
        lastmod, changefreq, priority, images, _videos, _news = record_fields(
            record.get, _ignore, now
        )
        found[loc] = UrlFacts(loc, lastmod, changefreq, priority, images=images)
        if len(found) == count:
            break
    return list(found.values())


def _ignore(reason: str, value: object) -> None:
    raise ValueError(f"the benchmark feed has a bad field: {reason} {value!r}")


def render(entries: list[UrlFacts]) -> bytes:
    """One uncompressed urlset of ``entries``, as our writer writes it."""
    entries = sorted(entries, key=lambda facts: facts.loc)
    root = entries[0].loc[: entries[0].loc.index("/", 8) + 1]
    sinks: dict[str, io.BytesIO] = {}

    def open_sink(name: str) -> Any:
        sink = sinks[name] = io.BytesIO()
        sink.close = lambda: None  # type: ignore[method-assign]  # read after the writer closes it
        return sink

    write_origin(
        iter(entries),
        scope=root,
        base_url=root,
        lastmod=lambda written: "2024-01-01",
        open_sink=open_sink,
        options=WriterOptions(gzip=False, max_urls=len(entries)),
    )
    return sinks["sitemap-1.xml"].getvalue()


def deflate(backend: ModuleType, level: int, data: bytes, repeat: int) -> tuple[int, float]:
    """Gzip size of ``data`` and the least process time of ``repeat`` runs, fed in the
    writer's 64 KiB pieces."""

    def once() -> int:
        compressor = backend.compressobj(level, backend.DEFLATED, 31)
        size = sum(
            len(compressor.compress(data[i : i + 65536])) for i in range(0, len(data), 65536)
        )
        return size + len(compressor.flush())

    runs = [measure.timed(once) for _ in range(repeat)]
    return runs[0][0], min(timing.cpu for _, timing in runs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes", default="50000,5000,500", help="URLs per urlset, comma-separated"
    )
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--repeat", type=int, default=3, help="deflate runs per cell; the least time counts"
    )


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``parameters``: ``settings`` (label, backend, level; the first is what sizes are
    given against), ``time_base`` (the label times are given against, or null when that
    backend is missing). ``measurements``: ``rows``, one per shape and size: ``shape``,
    ``urls``, ``raw_bytes``, and ``cells`` (label to ``bytes`` and least ``seconds``).
    ``summary``: ``largest`` (per label, the largest size over the first setting's, and
    its shape)."""
    settings = [
        (label, GZIP_BACKENDS[name], level)
        for label, name, level in SETTINGS
        if name in GZIP_BACKENDS
    ]
    timed = TIME_BASE in {label for label, _, _ in settings}
    sizes = [int(n) for n in args.sizes.split(",")]
    record["parameters"] = {
        "sizes": sizes,
        "seed": args.seed,
        "repeat": args.repeat,
        "settings": [
            [label, name, level] for label, name, level in SETTINGS if name in GZIP_BACKENDS
        ],
        "time_base": TIME_BASE if timed else None,
    }
    rows: list[dict[str, Any]] = []
    record["measurements"] = {"rows": rows}
    for count in sizes:
        for shape, entries in _shapes(count, args.seed).items():
            data = render(entries)
            cells = {}
            for label, backend, level in settings:
                size, seconds = deflate(backend, level, data, args.repeat)
                cells[label] = {"bytes": size, "seconds": seconds}
            rows.append(
                {"shape": shape, "urls": len(entries), "raw_bytes": len(data), "cells": cells}
            )
            print(f"  {shape}, {len(entries):,} URLs", flush=True)
    first = settings[0][0]
    largest = {}
    for label, _, _ in settings[1:]:
        worst = max(
            rows, key=lambda row: row["cells"][label]["bytes"] / row["cells"][first]["bytes"]
        )
        largest[label] = {
            "over_first": worst["cells"][label]["bytes"] / worst["cells"][first]["bytes"] - 1,
            "shape": worst["shape"],
            "urls": worst["urls"],
        }
    record["summary"] = {"largest": largest}
    return 0
