"""SitemapExporter: owns the store for the crawl and writes the sitemaps when the spider
closes (after the item pipelines, before the stats dump)."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.asyncio import run_in_thread

from . import stats as keys
from .delivery import write_sitemaps
from .settings import Config
from .stats import Reporter
from .store import SqliteFactStore, StoreError

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from .delivery import OriginReport
    from .facts import UrlFacts
    from .store import FactStore

__all__ = ["SitemapExporter"]

logger = logging.getLogger(__name__)

#: Close reasons that mean "paused or aborted", after which a partial crawl must not replace
#: a complete published set (unless SITEMAPGEN_WRITE_ON_SHUTDOWN says so).
_INTERRUPTED = frozenset({"shutdown", "cancelled"})
_STORE_FILE = "store.sqlite3"


class SitemapExporter:
    """The extension at the centre: the middleware and the pipeline record through it, and
    its ``spider_closed`` handler turns the store into published sitemaps."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.reporter = Reporter(crawler.stats, logger)
        self.store: FactStore | None = None
        self._temp_dir: Path | None = None
        self._record_failed = False
        self.reports: list[OriginReport] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = Config.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured
        exporter = cls(crawler, config)
        crawler.signals.connect(exporter.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(exporter.spider_closed, signal=signals.spider_closed)
        return exporter

    @classmethod
    def required_by(cls, crawler: Crawler, component: str) -> SitemapExporter:
        """The crawl's exporter, for the middleware and the pipeline; they have nothing to
        do without it, so they are disabled (with a hint when that looks like a mistake)."""
        exporter = crawler.get_extension(cls)
        if exporter is not None:
            return exporter
        if not Config.from_settings(crawler.settings).enabled:
            raise NotConfigured
        raise NotConfigured(
            f"{component} needs the scrapy_sitemapgen.SitemapExporter extension: add it to "
            f"EXTENSIONS, or enable everything with ADDONS = {{'scrapy_sitemapgen.Addon': 500}}."
        )

    def spider_opened(self) -> None:
        jobdir = self.config.jobdir
        if jobdir is not None:
            path = jobdir / "sitemapgen" / _STORE_FILE
        else:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="sitemapgen-"))
            path = self._temp_dir / _STORE_FILE
        try:
            self.store = SqliteFactStore(path)
        except StoreError:
            logger.error("Sitemap: cannot open the store; closing the spider", exc_info=True)
            raise CloseSpider("sitemapgen_store_unavailable") from None
        if jobdir is not None and len(self.store):
            logger.info(
                "Sitemap: resuming with %(count)d URLs recorded before the pause (%(path)s)",
                {"count": len(self.store), "path": path},
            )

    def record(self, facts: UrlFacts, *, from_item: bool) -> bool:
        """Store facts; a storage failure is logged and counted, never raised into the crawl."""
        assert self.store is not None
        try:
            self.store.record(facts, from_item=from_item)
        except (sqlite3.Error, OSError):
            self.stats.inc_value(keys.skipped("store_error"))
            if not self._record_failed:
                logger.error("Sitemap: cannot record %s", facts.loc, exc_info=True)
            self._record_failed = True
            return False
        return True

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        store = self.store
        if store is None:
            return
        try:
            if reason in _INTERRUPTED and not self.config.write_on_shutdown:
                self.stats.set_value(keys.OUTPUT_POSTPONED, 1)
                logger.info(
                    "Sitemap: the spider closed with reason %(reason)r, so the sitemaps in "
                    "%(out)s were left as they are; %(kept)s",
                    {
                        "reason": reason,
                        "out": self.config.output_dir,
                        "kept": (
                            "the recorded URLs stay in JOBDIR for the resumed crawl"
                            if self.config.jobdir
                            else "set SITEMAPGEN_WRITE_ON_SHUTDOWN = True to write partial ones"
                        ),
                    },
                )
                return
            await run_in_thread(self._write, store)
        except Exception:  # Scrapy would swallow it; make the failure visible and counted.
            self.stats.inc_value(keys.OUTPUT_FAILED)
            logger.error(
                "Sitemap: writing to %(out)s failed; the files published before are unchanged",
                {"out": self.config.output_dir},
                exc_info=True,
                extra={"spider": spider},
            )
        finally:
            self.store = None
            store.close()
            if self._temp_dir is not None:
                shutil.rmtree(self._temp_dir, ignore_errors=True)

    def _write(self, store: FactStore) -> None:
        now = datetime.now(timezone.utc)
        self.stats.set_value(keys.URLS_STORED, len(store))
        self.reports = write_sitemaps(store, self.config, now, self.reporter)
        self.stats.set_value(keys.ORIGINS, len(self.reports))
        self.stats.set_value(keys.URLS_WRITTEN, sum(r.output.url_count for r in self.reports))
        self.stats.set_value(keys.FILES_WRITTEN, sum(len(r.output.files) for r in self.reports))
        for report in self.reports:
            name = report.origin.name
            self.stats.set_value(keys.urls_written_for(name), report.output.url_count)
            self.stats.set_value(keys.files_written_for(name), len(report.output.files))
            logger.info(
                "Sitemap: %(root)s: %(urls)d URLs in %(files)d sitemap file(s)%(news)s under "
                "%(folder)s; add to its robots.txt: %(robots)s",
                {
                    "root": report.origin.root,
                    "urls": report.output.url_count,
                    "files": len(report.output.sitemaps),
                    "news": (
                        f", {sum(f.entries for f in report.output.news)} news entries in "
                        f"{len(report.output.news)} news sitemap(s)"
                        if report.output.news
                        else ""
                    ),
                    "folder": report.folder,
                    "robots": report.robots_lines.strip().replace("\n", " | "),
                },
            )
        if not self.reports:
            logger.info("Sitemap: no page was recorded, so no sitemap was written")
