"""SitemapExporter: the extension at the centre of a crawl. It owns the crawl's
:class:`~.recorder.Recorder`, and when the spider closes (after the item pipelines, before
the stats dump) it publishes the store's sitemaps through :mod:`..publish`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import is_asyncio_available, run_in_thread
from scrapy.utils.defer import maybe_deferred_to_future

from .. import stats as keys
from ..failures import failure_of
from ..publish.delivery import DestinationError, FeedStorages, check_destination
from ..publish.publisher import PublishOutcome, failure_of_publish, kept_after, publish
from ..state.repair import prepare_state
from ..stats import Reporter
from ..store.base import StoreError
from .exitstatus import exit_non_zero
from .feed import SitemapFeeds
from .live_audit import LiveAudit, write_reports
from .recheck import Recheck
from .recorder import Recorder
from .robots_rules import RobotsRules
from .startup import checked_config, refuse_start

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..features.hreflang_clusters import ClusterIndex
    from ..settings import Config
    from ..store.base import Coordination, FactSource

__all__ = ["SitemapExporter"]

logger = logging.getLogger(__name__)

#: Close reasons that mean "paused or aborted", after which a partial crawl must not replace
#: a complete published set (unless SITEMAPGEN_WRITE_ON_SHUTDOWN says so).
_INTERRUPTED = frozenset({"shutdown", "cancelled"})


class SitemapExporter:
    """Opens the recorder when the spider opens; publishes its store when the spider
    closes. The middleware, the pipeline and the resume middleware record through
    :attr:`recorder`."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.reporter = Reporter(crawler.stats, logger)
        #: The feed storages of a remote output, built from this crawler's settings.
        self.storages = FeedStorages(crawler)
        self.recorder = Recorder(crawler, config, self.reporter)
        #: Each origin's robots.txt for the listing rules (SITEMAPGEN_RESPECT_ROBOTS_TXT).
        self.robots = RobotsRules(crawler, config) if config.respect_robots_txt else None
        #: What the last write staged and delivered, per origin (for tests and tools).
        #: The feeds of the ``sitemap`` format (``-O sitemap.xml:sitemap``).
        self.feeds = SitemapFeeds(crawler, config.sitemap_feeds)
        self._feeds_active = False
        #: The pages published before that the crawl did not reach, requested once when
        #: the spider idles (SITEMAPGEN_RECHECK_UNREACHED), before the audit.
        self.recheck = Recheck(crawler, config, self.recorder)
        #: The audit of the live sitemaps (SITEMAPGEN_AUDIT), run when the spider idles.
        self.audit = (
            LiveAudit(crawler, config, self.recorder, self.robots) if config.audit else None
        )
        #: Whether the publish at close failed in part or whole (an origin not published,
        #: or the state file not written): the crawl then exits non-zero.
        self.failed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Check the settings and the output, so that a mistake stops the crawl before its
        first request (``crawl.startup``), and warn once of what looks wrong in them."""
        config = checked_config(crawler.settings)
        if not config.enabled:
            raise NotConfigured
        for warning in config.warnings:
            logger.warning("Sitemap: %(warning)s", {"warning": warning})
        try:
            check_destination(config, FeedStorages(crawler))
        except DestinationError as exc:
            refuse_start(str(exc))
        if config.audit and not is_asyncio_available():
            refuse_start(
                "SITEMAPGEN_AUDIT=True needs the asyncio reactor (TWISTED_REACTOR = "
                "'twisted.internet.asyncioreactor.AsyncioSelectorReactor', Scrapy's default)."
            )
        exporter = cls(crawler, config)
        try:
            exporter.recorder.check()
        except StoreError as exc:
            refuse_start(str(exc))
        prepare_state(config.state_path, config.state_key, config.uri, config.output_dir)
        crawler.signals.connect(exporter.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(exporter.spider_closed, signal=signals.spider_closed)
        if exporter.audit is not None or not exporter.recheck.done:
            crawler.signals.connect(exporter.spider_idle, signal=signals.spider_idle)
        return exporter

    @classmethod
    def required_by(cls, crawler: Crawler, component: str) -> SitemapExporter:
        """The crawl's exporter, for the middleware and the pipeline; they have nothing to
        do without it, so they are disabled (with a hint when that looks like a mistake)."""
        exporter = crawler.get_extension(cls)
        if exporter is not None:
            return exporter
        if not checked_config(crawler.settings).enabled:
            raise NotConfigured
        raise NotConfigured(
            f"{component} needs the scrapy_sitemapgen.SitemapExporter extension: add it to "
            f"EXTENSIONS, or enable everything with ADDONS = {{'scrapy_sitemapgen.Addon': 500}}."
        )

    def spider_idle(self) -> None:
        """The recheck of unreached pages first, then the audit (which then finds them
        judged); each keeps the spider open until it is done."""
        self.recheck.spider_idle()
        if self.audit is not None:
            self.audit.spider_idle()

    def spider_opened(self) -> None:
        self.recorder.open()
        self._feeds_active = self.feeds.active

    def _writes_shared(self, coordination: Coordination) -> bool:
        """Whether this process writes the sitemaps of a store that several crawl
        processes share."""
        mode = self.config.shared_write
        if mode == "always" or (mode == "last" and coordination.worker_finished()):
            return True
        logger.info(
            "Sitemap: the store is shared by several crawl processes, so this one does not "
            "write the sitemaps%(why)s; write them once with: scrapy sitemapgen-build --store %(url)s",
            {
                "why": (
                    " (another worker is still running, or won the writer's lock)"
                    if mode == "last"
                    else ""
                ),
                "url": self.config.store,
            },
        )
        return False

    async def _report_audit(self, source: FactSource, clusters: ClusterIndex | None) -> None:
        """The audit's report and its close log lines; a failure is logged and counted,
        never raised (the sitemaps are out already)."""
        audit, log = self.audit, self.recorder.verdicts
        if audit is None or log is None:
            return
        if not audit.done:
            logger.info("Sitemap audit: the crawl closed before the audit ran; no report")
            return
        try:
            deduped = source if self.config.dedupe_content else None
            lines = await run_in_thread(write_reports, audit, log, deduped, clusters)
        except Exception as exc:
            self.stats.inc_value(keys.AUDIT_REPORT_FAILED)
            logger.error(
                "Sitemap audit: writing the report to %(dir)s failed: %(failure)s; the "
                "sitemaps are published, the report of an earlier audit is as it was",
                {"dir": self.config.report_dir, "failure": failure_of(exc, self.config.report_dir)},
            )
            logger.debug("Sitemap audit: the report's failure", exc_info=True)
            return
        for line in lines:
            logger.info("Sitemap audit of %(line)s", {"line": line})

    async def _fetch(self, request: Request) -> Response | Request:
        """IndexNow's request straight to the downloader: by ``spider_closed`` the engine
        takes no request any more, its downloader still does (``publish.submissions``)."""
        engine = self.crawler.engine
        assert engine is not None
        result: Response | Request = await maybe_deferred_to_future(
            engine.downloader.fetch(request)
        )
        return result

    def _publish_failed(self) -> None:
        """Count the failed publish and have the crawl exit non-zero (``crawl.exitstatus``)."""
        self.stats.set_value(keys.OUTPUT_FAILED, 1)
        if not self.failed:
            self.failed = True
            exit_non_zero(self.crawler)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        recorder = self.recorder
        store = recorder.store
        if store is None:
            return
        outcome = PublishOutcome()
        try:
            recorder.stop(finished=reason == "finished")
            if reason in _INTERRUPTED and not self.config.write_on_shutdown:
                self.stats.set_value(keys.OUTPUT_POSTPONED, 1)
                logger.info(
                    "Sitemap: the spider closed with reason %(reason)r, so the sitemaps in "
                    "%(out)s were left as they are; %(kept)s",
                    {
                        "reason": reason,
                        "out": self.config.uri,
                        "kept": (
                            "the recorded URLs stay in JOBDIR for the resumed crawl"
                            if self.config.jobdir
                            else "set SITEMAPGEN_WRITE_ON_SHUTDOWN = True to write partial ones"
                        ),
                    },
                )
                return
            self.recheck.report()
            coordination = store.coordination()
            if coordination is not None:
                await run_in_thread(store.flush)
                if not self._writes_shared(coordination):
                    return
            try:
                feeds = self.feeds if self._feeds_active else None
                # The audit compares the live lastmods with those published: the verdicts
                # learn the ones the content notes kept.
                log = recorder.verdicts if recorder.audits else None
                await publish(
                    store,
                    self.config,
                    self.reporter,
                    self.storages,
                    feeds,
                    fetch=self._fetch if self.crawler.engine is not None else None,
                    outcome=outcome,
                    keep_clusters=self.audit is not None,
                    settled=None if log is None else log.published_lastmod,
                    cut=reason if reason != "finished" else self.recheck.cut,
                )
                if outcome.failed:  # each failed file has had its line
                    self._publish_failed()
                else:
                    # A shared store's next crawl starts a run of its own.
                    await run_in_thread(store.finish_run)
            finally:
                self.stats.set_value(keys.URLS_STORED, await run_in_thread(len, store))
                try:
                    await self._report_audit(store, outcome.clusters)
                finally:
                    if outcome.clusters is not None:
                        outcome.clusters.close()
        except Exception as exc:  # Scrapy would swallow it; make the failure visible and counted.
            self._publish_failed()
            recorder.count_lost()
            logger.error(
                "Sitemap: writing to %(out)s failed: %(failure)s; %(kept)s",
                {
                    "out": self.config.uri,
                    "failure": failure_of_publish(exc, self.config),
                    "kept": await kept_after(store, outcome),
                },
                extra={"spider": spider},
            )
            logger.debug("Sitemap: the publish's failure", exc_info=True, extra={"spider": spider})
        finally:
            recorder.close()
