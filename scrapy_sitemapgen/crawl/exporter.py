"""SitemapExporter: owns the store for the crawl and writes the sitemaps when the spider
closes (after the item pipelines, before the stats dump)."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.asyncio import create_looping_call, run_in_thread

from .. import stats as keys
from ..publish.delivery import publish_local, publish_remote, staging_for
from ..publish.staging import stage_origins
from ..settings import Config
from ..sitemaps.manifest import PublishState
from ..sitemaps.urls import origin_folder
from ..stats import Reporter
from ..store.sqlite import SqliteFactStore, StoreError

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from ..publish.staging import OriginSet
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from ..store.sqlite import FactStore

__all__ = ["SitemapExporter"]

logger = logging.getLogger(__name__)

#: Close reasons that mean "paused or aborted", after which a partial crawl must not replace
#: a complete published set (unless SITEMAPGEN_WRITE_ON_SHUTDOWN says so).
_INTERRUPTED = frozenset({"shutdown", "cancelled"})
_STORE_FILE = "store.sqlite3"
#: Recorded pages are added to ``sitemapgen/pages/recorded`` this many at a time (and the
#: rest when the spider closes): Scrapy 2.19's ``inc_value`` costs about 2.4 µs a call
#: behind its deprecation wrapper, 2 to 4 % of what recording a page costs.
_PAGES_PER_STAT = 100


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
        #: Whether requests are tracked for a resume: only with a store that outlives us.
        self._resume = config.resume_requests and (
            config.jobdir is not None or config.store_path is not None
        )
        self._flusher: Any = None
        self._pages_uncounted = 0
        self.closed_cleanly = True
        #: What the last write staged and delivered, per origin (for tests and tools).
        self.sets: list[OriginSet] = []

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
        if self.config.store_url is not None:
            self._open_shared()
            return
        jobdir = self.config.jobdir
        if self.config.store_path is not None:
            path = self.config.store_path
        elif jobdir is not None:
            path = jobdir / "sitemapgen" / _STORE_FILE
        else:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="sitemapgen-"))
            path = self._temp_dir / _STORE_FILE
        try:
            self.store = SqliteFactStore(
                path, batch_size=self.config.commit_writes, max_delay=self.config.commit_seconds
            )
        except StoreError:
            logger.error("Sitemap: cannot open the store; closing the spider", exc_info=True)
            raise CloseSpider("sitemapgen_store_unavailable") from None
        #: Whether the previous process closed normally (its Scrapy queue is then intact);
        #: after a kill it did not, and resume.py sends the unanswered requests again.
        self.closed_cleanly = self._clean_marker(path).exists()
        self._clean_marker(path).unlink(missing_ok=True)
        self._flusher = create_looping_call(self._flush)
        self._flusher.start(self.config.commit_seconds, now=False)
        if self._temp_dir is None and len(self.store):
            logger.info(
                "Sitemap: the store %(path)s already holds %(count)d URLs (a resumed crawl, "
                "or SITEMAPGEN_STORE kept from an earlier one)",
                {"count": len(self.store), "path": path},
            )

    def replace_store(self, store: FactStore) -> None:
        """Publish from ``store`` instead of the one opened for this run, which is closed:
        the offline build reads a whole feed faster than it could record it (bulk.py)."""
        previous, self.store = self.store, store
        if previous is not None:
            previous.close()

    def track(self, request: Request, serialize: Callable[[], bytes]) -> bool:
        """A request was scheduled: remember it until it is answered (see resume.py);
        True if it was new to the store."""
        if self.store is None:
            return False
        try:
            return self.store.track(self._key(request), serialize)
        except (sqlite3.Error, OSError):
            self._store_failed(request.url)
            return False

    def answered(self, request: Request) -> None:
        """The request's answer is settled (recorded, or never to be listed)."""
        if self.store is None or self._resume is False:
            return
        try:
            self.store.done(self._key(request))
        except (sqlite3.Error, OSError):
            self._store_failed(request.url)

    def _key(self, request: Request) -> str:
        return self.crawler.request_fingerprinter.fingerprint(request).hex()

    def _store_failed(self, url: str) -> None:
        self.stats.inc_value(keys.skipped("store_error"))
        lost = getattr(self.store, "lost", 0)
        if lost:  # a shared store loses whole batches: count the records, not the calls
            self.stats.set_value(keys.STORE_LOST, lost)
        if not self._record_failed:
            logger.error("Sitemap: cannot record %s", url)
        self._record_failed = True

    def page_recorded(self) -> None:
        """Count a page recorded by the middleware (in the stats by the hundred)."""
        self._pages_uncounted += 1
        if self._pages_uncounted >= _PAGES_PER_STAT:
            self._count_pages()

    def _count_pages(self) -> None:
        if self._pages_uncounted:
            self.stats.inc_value(keys.PAGES_RECORDED, self._pages_uncounted)
            self._pages_uncounted = 0

    def record(self, facts: UrlFacts, *, from_item: bool) -> bool:
        """Store facts; a storage failure is logged and counted, never raised into the crawl."""
        assert self.store is not None
        try:
            self.store.record(facts, from_item=from_item)
        except (sqlite3.Error, OSError, StoreError):
            self._store_failed(facts.loc)
            return False
        return True

    def _open_shared(self) -> None:
        from ..store.redis import RedisFactStore

        assert self.config.store_url is not None
        try:
            store = RedisFactStore(self.config.store_url, prefix=self.config.redis_prefix)
            if self.config.shared_write == "last":
                store.worker_started()
        except StoreError:
            logger.error("Sitemap: cannot open the shared store; closing the spider", exc_info=True)
            raise CloseSpider("sitemapgen_store_unavailable") from None
        self.store = store
        self._flusher = create_looping_call(self._flush)
        self._flusher.start(self.config.commit_seconds, now=False)

    def _shared_writes(self, store: FactStore) -> bool:
        """Whether this process writes the sitemaps of a shared store at close."""
        mode = self.config.shared_write
        if mode == "always":
            return True
        if mode == "last" and store.worker_finished():  # type: ignore[attr-defined]
            return True
        logger.info(
            "Sitemap: the store is shared by several crawl processes, so this one does not "
            "write the sitemaps%(why)s; write them once with: scrapy sitemapgen-build --store %(url)s",
            {
                "why": " (another worker is still running, or won the writer's lock)"
                if mode == "last"
                else "",
                "url": self.config.store_url,
            },
        )
        return False

    @staticmethod
    def _clean_marker(store: Path) -> Path:
        return store.with_name(store.name + ".closed")

    def _flush(self) -> None:
        """Commit what waited: an idle crawl keeps nothing longer than SITEMAPGEN_COMMIT_SECONDS."""
        if self.store is not None:
            try:
                self.store.flush()
            except (sqlite3.Error, OSError, StoreError):
                self._store_failed("(periodic commit)")

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        self._count_pages()
        if self._flusher is not None and self._flusher.running:
            self._flusher.stop()
        store = self.store
        if store is None:
            return
        try:
            if reason == "finished" and self._resume:
                store.clear_pending()  # a finished crawl has nothing in flight
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
            if self.config.store_url is not None:
                await run_in_thread(store.flush)
                if not self._shared_writes(store):
                    return
            try:
                self.sets = await publish(store, self.config, self.reporter, self.crawler)
            finally:
                # Counted after writing: a build's run store learns its count as it merges.
                self.stats.set_value(keys.URLS_STORED, await run_in_thread(len, store))
        except Exception:  # Scrapy would swallow it; make the failure visible and counted.
            self.stats.inc_value(keys.OUTPUT_FAILED)
            if getattr(store, "lost", 0):
                self.stats.set_value(keys.STORE_LOST, store.lost)  # type: ignore[attr-defined]
            logger.error(
                "Sitemap: writing to %(out)s failed; the files published before are unchanged",
                {"out": self.config.uri},
                exc_info=True,
                extra={"spider": spider},
            )
        finally:
            self.store = None
            store.close()
            if self._temp_dir is not None:
                shutil.rmtree(self._temp_dir, ignore_errors=True)
            elif isinstance(store, SqliteFactStore):
                self._clean_marker(store.path).touch()


def _stage(
    store: FactStore, config: Config, reporter: Reporter, state: PublishState, staged: list[Path]
) -> list[OriginSet]:
    def staging_of(origin: Origin) -> Path:
        staging = staging_for(config, origin_folder(config.uri, origin))
        staged.append(staging)
        return staging

    return stage_origins(store, config, datetime.now(timezone.utc), state, reporter, staging_of)


async def publish(
    store: FactStore, config: Config, reporter: Reporter, crawler: Crawler | None
) -> list[OriginSet]:
    """Stage every origin's set from ``store``, deliver it, remember what was published,
    and log and count the result. Staging runs in a thread: a million URLs take seconds.
    ``crawler`` builds the feed storages of a remote output (None: local output only)."""
    staged: list[Path] = []
    state = await run_in_thread(PublishState, config.state_path)
    try:
        sets = await run_in_thread(_stage, store, config, reporter, state, staged)
        if config.local:
            await run_in_thread(publish_local, sets)
            delivered = {s.origin for s in sets}
        else:
            if crawler is None:
                raise ValueError(f"delivering to {config.uri} needs a crawler for its feed storage")
            delivered = set(await publish_remote(sets, crawler, reporter))
        for origin_set in sets:
            if origin_set.origin in delivered:
                state.commit(config.uri, origin_set.origin.name, origin_set.records)
        _report(sets, delivered, reporter)
        return sets
    finally:
        state.close()
        for staging in staged:
            shutil.rmtree(staging, ignore_errors=True)


def _report(sets: list[OriginSet], delivered: set[Origin], reporter: Reporter) -> None:
    stats = reporter.stats
    stats.set_value(keys.ORIGINS, len(sets))
    stats.set_value(keys.URLS_WRITTEN, sum(s.output.url_count for s in sets))
    stats.set_value(keys.FILES_WRITTEN, sum(len(s.output.files) for s in sets))
    for origin_set in sets:
        output = origin_set.output
        name = origin_set.origin.name
        stats.set_value(
            keys.urls_written_for(name), output.url_count or sum(f.entries for f in output.texts)
        )
        stats.set_value(keys.files_written_for(name), len(output.files))
        changed = origin_set.changed
        logger.info(
            "Sitemap: %(root)s: %(urls)d URLs (%(added)+d, -%(removed)d since the previous run) "
            "in %(files)d sitemap file(s)%(news)s%(texts)s at %(folder)s%(failed)s; changed: "
            "%(changed)s; add to its robots.txt: %(robots)s",
            {
                "root": origin_set.origin.root,
                "urls": output.url_count or sum(f.entries for f in output.texts),
                "added": origin_set.added,
                "removed": origin_set.removed,
                "files": len(output.sitemaps),
                "news": f", {len(output.news)} news sitemap(s)" if output.news else "",
                "texts": f", {len(output.texts)} text sitemap(s)" if output.texts else "",
                "folder": origin_set.folder,
                "failed": "" if origin_set.origin in delivered else " (DELIVERY INCOMPLETE)",
                "changed": ", ".join(changed) if changed else "nothing",
                "robots": origin_set.robots_lines.strip().replace("\n", " | "),
            },
        )
    if not sets:
        logger.info("Sitemap: no page was recorded, so no sitemap was written")
