"""The state file's size per URL: the URL set and the content notes an incremental
output keeps between runs (docs/lastmod.rst, "What the state keeps").

    python -m benchmarks state-size --urls 100000

Writes one origin of ``--urls`` URLs of the benchmark site's shape
(``https://www.example.com/p/<n>``) through :class:`PublishState`, as a publish does, in
three cases: no URL has a date, half have a lastmod and a tenth an observed change, all
have both. Each fingerprint is random (as incompressible as real ones). Records the
content blocks' bytes, the URL blocks' bytes and the vacuumed state file's size, each per
URL. Also the memory the duplicate choice (``content.duplicate_choice``) holds over as
many pages of one origin, at its peak and after, by tracemalloc.
"""

from __future__ import annotations

import os
import random
import sqlite3
import tracemalloc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from pathlib import Path

    from .results import Record

#: (label, share of URLs with a stated lastmod, share with an observed change)
CASES = (
    ("no dates", 0.0, 0.0),
    ("half with a lastmod, a tenth observed", 0.5, 0.1),
    ("every URL with a lastmod and an observed change", 1.0, 1.0),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: per case, ``content_bytes``, ``url_bytes`` and ``file_bytes``.
    ``summary``: the same per URL."""
    from scrapy_sitemapgen.sitemaps.lastmod import Seen
    from scrapy_sitemapgen.state.content_notes import encode_contents
    from scrapy_sitemapgen.state.statefile import PublishState
    from scrapy_sitemapgen.state.url_notes import URL_BLOCK

    record["parameters"] = {"urls": args.urls, "seed": args.seed}
    rng = random.Random(args.seed)
    measurements: dict[str, dict[str, int]] = {}
    for number, (label, stated, observed) in enumerate(CASES):
        notes = []
        for i in range(args.urls):
            seen = None
            if rng.random() < observed:
                seen = f"2026-12-01T18:{rng.randrange(60):02d}:{rng.randrange(60):02d}+00:00"
            lastmod = "2015-10-21T07:28:00+00:00" if rng.random() < stated else seen
            fingerprint = rng.getrandbits(64).to_bytes(8, "big").hex()
            notes.append((f"https://www.example.com/p/{i}", Seen(fingerprint, seen, lastmod)))
        notes.sort()
        path = work / f"state-{number}.sqlite3"
        state = PublishState(path)
        _, save = state.content_notes("out", "origin")
        for start in range(0, len(notes), URL_BLOCK):
            save(start // URL_BLOCK, encode_contents(notes[start : start + URL_BLOCK]))
        urls = state.url_notes("out", "origin")
        urls.note_all([loc for loc, _ in notes])
        urls.finish()
        state.commit("out", "origin", [])
        state.close()
        db = sqlite3.connect(path)
        content = db.execute("SELECT SUM(LENGTH(data)) FROM content_blocks").fetchone()[0]
        url = db.execute("SELECT SUM(LENGTH(data)) FROM url_blocks").fetchone()[0]
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("VACUUM")
        db.close()
        measurements[label] = {
            "content_bytes": content,
            "url_bytes": url,
            "file_bytes": os.path.getsize(path),
        }
    choice = _choice_memory(args.urls, rng)
    record["measurements"] = {"state": measurements, "duplicate_choice": choice}
    record["summary"] = {
        "state": {
            label: {
                key.replace("_bytes", "_per_url"): value / args.urls for key, value in m.items()
            }
            for label, m in measurements.items()
        },
        "duplicate_choice_peak_per_url": choice["peak"] / args.urls,
        "duplicate_choice_held_per_url": choice["held"] / args.urls,
    }
    for label, per_url in record["summary"]["state"].items():
        print(
            f"{label}: content notes {per_url['content_per_url']:.1f} B/URL, URL set "
            f"{per_url['url_per_url']:.1f} B/URL, state file {per_url['file_per_url']:.1f} B/URL"
        )
    print(
        f"the duplicate choice: {record['summary']['duplicate_choice_peak_per_url']:.0f} B/page "
        f"at its peak, {record['summary']['duplicate_choice_held_per_url']:.0f} B/page held"
    )
    return 0


def _choice_memory(urls: int, rng: random.Random) -> dict[str, int]:
    from scrapy_sitemapgen.sitemaps.duplicates import duplicate_choice
    from scrapy_sitemapgen.sitemaps.facts import Content, UrlFacts

    def pages() -> Iterator[UrlFacts]:
        for i in range(urls):
            fingerprint = rng.getrandbits(64).to_bytes(8, "big").hex()
            content = Content(fingerprint, "2026-12-01T18:00:00+00:00")
            yield UrlFacts(f"https://www.example.com/p/{i}", content=content)

    tracemalloc.start()
    try:
        chosen = duplicate_choice(pages())
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del chosen
    return {"peak": peak, "held": held}
