"""``scrapy sitemapgen-build``: write the sitemaps again from a stored crawl, no crawling."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ..addon import Addon

if TYPE_CHECKING:
    import argparse

__all__ = ["BuildCommand"]


class _NothingToCrawl(scrapy.Spider):
    """Opens and closes at once: the exporter then publishes the store it was given."""

    name = "sitemapgen-build"

    async def start(self) -> Any:
        return
        yield


class BuildCommand(ScrapyCommand):
    """Runs a crawl that requests nothing, so the very components of a real crawl (the
    exporter, Scrapy's feed storages, stats, logging) write the set from the stored facts:
    after a crawl was stopped, or to publish with other output settings."""

    requires_project = False

    def syntax(self) -> str:
        return "[--jobdir DIR | --store FILE] [-s SITEMAPGEN_...=VALUE ...]"

    def short_desc(self) -> str:
        return "Write sitemaps from a stored crawl (JOBDIR or SITEMAPGEN_STORE), without crawling"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--jobdir", metavar="DIR", help="the JOBDIR of the crawl")
        parser.add_argument("--store", metavar="FILE", help="a store file (SITEMAPGEN_STORE)")

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        settings = self.settings
        assert settings is not None
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        store = opts.store or settings.get("SITEMAPGEN_STORE")
        if opts.jobdir:
            store = store or str(Path(opts.jobdir) / "sitemapgen" / "store.sqlite3")
        elif not store and settings.get("JOBDIR"):
            store = str(Path(settings["JOBDIR"]) / "sitemapgen" / "store.sqlite3")
        if not store:
            raise UsageError("name the stored crawl: --jobdir DIR or --store FILE")
        if not Path(store).is_file():
            raise UsageError(f"no sitemap store at {store}")
        settings.set("SITEMAPGEN_STORE", store, priority="cmdline")
        settings.set("JOBDIR", None, priority="cmdline")  # no scheduler state is needed
        # Requests a killed crawl left pending are for that crawl's resume, not for us.
        settings.set("SITEMAPGEN_RESUME_REQUESTS", False, priority="cmdline")
        settings.set("ADDONS", {**settings.getdict("ADDONS"), Addon: 500}, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None
        crawler = self.crawler_process.create_crawler(_NothingToCrawl)
        self.crawler_process.crawl(crawler)
        self.crawler_process.start()
        stats = crawler.stats.get_stats() if crawler.stats else {}
        if stats.get("sitemapgen/output/failed") or not stats.get("sitemapgen/origins"):
            self.exitcode = 1
