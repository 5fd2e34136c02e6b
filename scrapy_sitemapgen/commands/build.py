"""``scrapy sitemapgen-build``: write the sitemaps from a stored crawl, or from a JSON-lines
feed of records, without crawling."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ..addon import Addon
from ..pipeline import SitemapItemPipeline

if TYPE_CHECKING:
    import argparse

__all__ = ["BuildCommand"]


logger = logging.getLogger(__name__)


class _NothingToCrawl(scrapy.Spider):
    """Requests nothing: it records the ``input`` feed's records, if any, through the item
    pipeline's own validation (straight into it, not through the engine, which would cost
    more than the record), then closes, and the exporter publishes the store."""

    name = "sitemapgen-build"
    input: str | None = None

    async def start(self) -> Any:
        if self.input:
            self._ingest(Path(self.input))
        return
        yield

    def _ingest(self, path: Path) -> None:
        pipeline = self.crawler.get_item_pipeline(SitemapItemPipeline)
        assert pipeline is not None
        bad = 0
        with path.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    bad += 1
                    if bad == 1:
                        logger.warning("Sitemap: %s:%d is not a JSON object; skipped", path, number)
                    continue
                pipeline.process_item(record)
        if bad:
            self.crawler.stats.set_value("sitemapgen/skipped/bad_record", bad)


class BuildCommand(ScrapyCommand):
    """Runs a crawl that requests nothing, so the very components of a real crawl (the
    exporter, Scrapy's feed storages, stats, logging) write the set from the stored facts:
    after a crawl was stopped, or to publish with other output settings."""

    requires_project = False

    def syntax(self) -> str:
        return "[--jobdir DIR | --store FILE | --input FEED.jsonl] [-s SITEMAPGEN_...=VALUE ...]"

    def short_desc(self) -> str:
        return "Write sitemaps from a stored crawl or a JSON-lines feed, without crawling"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--jobdir", metavar="DIR", help="the JOBDIR of the crawl")
        parser.add_argument("--store", metavar="FILE", help="a store file (SITEMAPGEN_STORE)")
        parser.add_argument(
            "--input",
            metavar="FEED",
            help="a JSON-lines feed: one object per page with loc and the item fields",
        )

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
        if opts.input:
            if not Path(opts.input).is_file():
                raise UsageError(f"no feed at {opts.input}")
            self.input = opts.input  # recorded into the store given, or a temporary one
        elif not store:
            raise UsageError("name the source: --jobdir DIR, --store FILE or --input FEED.jsonl")
        elif "://" not in store and not Path(store).is_file():
            raise UsageError(f"no sitemap store at {store}")
        if store:
            settings.set("SITEMAPGEN_STORE", store, priority="cmdline")
        settings.set("JOBDIR", None, priority="cmdline")  # no scheduler state is needed
        # Requests a killed crawl left pending are for that crawl's resume, not for us.
        settings.set("SITEMAPGEN_RESUME_REQUESTS", False, priority="cmdline")
        # A shared (Redis) store: this run is the one that writes.
        settings.set("SITEMAPGEN_SHARED_WRITE", "always", priority="cmdline")
        # Nothing to lose to a crash here (the source is still there): big transactions.
        settings.set("SITEMAPGEN_COMMIT_WRITES", 100_000, priority="command")
        settings.set("SITEMAPGEN_COMMIT_SECONDS", 3600, priority="command")
        settings.set("ADDONS", {**settings.getdict("ADDONS"), Addon: 500}, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None
        crawler = self.crawler_process.create_crawler(_NothingToCrawl)
        self.crawler_process.crawl(crawler, input=getattr(self, "input", None))
        self.crawler_process.start()
        stats = crawler.stats.get_stats() if crawler.stats else {}
        if stats.get("sitemapgen/output/failed") or not stats.get("sitemapgen/origins"):
            self.exitcode = 1
