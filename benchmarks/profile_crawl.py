"""What the extension costs per crawled page, measured without the noise of a crawl:

    python -m benchmarks.profile_crawl --pages 2000 --repeat 5

On the pages of the crawl benchmark (``benchmarks.crawlsite``), in this process, with
``time.process_time`` (the minimum of ``--repeat`` rounds), side by side:

- the baseline: what a crawl does with each page anyway, without the extension: Scrapy
  builds the ``HtmlResponse``, parses it (``response.selector``) and the benchmark spider
  reads its links and builds their requests;
- ours: what the extension adds: ``extract.page_facts`` on the already parsed page (the
  parse is shared with the spider) and the store's ``record``, flushes included.

The baseline leaves out most of what a crawl spends per response: Twisted, the HTTP
client, the engine, the scheduler and the middlewares (in the benchmark crawl of
``benchmarks.bench``, about 4.7 ms of CPU per response in all, add-on off). So ours over
the baseline is far above the crawl's own slowdown; ours over the crawl's CPU per response
is the share that matters. Unlike a crawl's pages/s, these figures hardly move from run
to run, so they tell whether a change made the extension cheaper. ``--profile`` adds a
cProfile listing of ours.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.statscollectors import MemoryStatsCollector

from scrapy_sitemapgen.crawl.extract import page_facts
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.stats import Reporter
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

from . import crawlsite

ROOT = "http://127.0.0.1:8000"
HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT",
}


class _Crawler:
    """What MemoryStatsCollector reads of a crawler."""

    spider = None
    settings = Settings()


def baseline(bodies: list[bytes]) -> list[HtmlResponse]:
    """The crawl's own work per page, as the benchmark spider does it."""
    responses = []
    host = urlsplit(ROOT).hostname
    for number, body in enumerate(bodies):
        url = f"{ROOT}/p/{number}"
        response = HtmlResponse(url, body=body, headers=HEADERS, request=Request(url))
        for href in response.css("a::attr(href)").getall():
            link = response.urljoin(href)
            if urlsplit(link).hostname == host:
                Request(link)
        responses.append(response)
    return responses


def ours(responses: list[HtmlResponse], config: Config, reporter: Reporter, folder: Path) -> int:
    """The extension's work on pages already parsed: facts, then the store."""
    store = SqliteFactStore(folder / f"store-{time.monotonic_ns()}.sqlite3")
    recorded = 0
    try:
        for response in responses:
            facts = page_facts(response, config, reporter)
            if facts is not None:
                store.record(facts)
                recorded += 1
        store.flush()
    finally:
        store.close()
    return recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also a cProfile listing of ours")
    args = parser.parse_args(argv)
    settings = Settings()
    settings.set("SITEMAPGEN_URI", "sitemaps")
    config = Config.from_settings(settings)
    reporter = Reporter(MemoryStatsCollector(_Crawler()), logging.getLogger("profile_crawl"))  # type: ignore[arg-type]
    bodies = [crawlsite.page(number, args.pages) for number in range(args.pages)]
    best: dict[str, float] = {"baseline": float("inf"), "ours": float("inf")}
    recorded = 0
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            started = time.process_time()
            responses = baseline(bodies)
            best["baseline"] = min(best["baseline"], time.process_time() - started)
            started = time.process_time()
            recorded = ours(responses, config, reporter, Path(folder))
            best["ours"] = min(best["ours"], time.process_time() - started)
        if args.profile:
            responses = baseline(bodies)
            profile = cProfile.Profile()
            profile.runcall(ours, responses, config, reporter, Path(folder))
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    per_page = {key: value / args.pages * 1e6 for key, value in best.items()}
    print(
        f"{args.pages} pages ({recorded} recorded), process time per page, minimum of {args.repeat}:\n"
        f"  baseline (response, parse, the spider's links): {per_page['baseline']:7.0f} us\n"
        f"  ours (page facts on the shared parse, store):   {per_page['ours']:7.0f} us\n"
        f"  ours / baseline: {per_page['ours'] / per_page['baseline']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
