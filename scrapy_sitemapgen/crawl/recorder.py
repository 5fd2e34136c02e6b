"""Recorder: the crawl's side of the store, from the spider's opening to its close (and
the offline build's, which opens a stored crawl's store to publish it, or to record a
feed's records into it first).

It opens the backend that the settings name, records the facts the middleware and the
pipeline give it, commits on a timer, and keeps the request journal a resumed crawl needs.
A storage failure is logged and counted here, never raised into the crawl. The intake
adapters (middleware, pipeline, resume) reach the store only through it.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CloseSpider
from scrapy.utils.asyncio import create_looping_call

from .. import stats as keys
from ..audit.live import key_of
from ..failures import failure_of
from ..locations import StoreLocation, store_location
from ..plural import counted
from ..sitemaps.exclusions import OriginExclusions
from ..store.base import StoreError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.verdicts import Verdict
    from ..stats import Reporter
    from ..store.base import FactStore
    from ..store.journal import RequestJournal
    from ..store.verdict_log import VerdictLog

__all__ = ["Recorder", "store_failure"]

logger = logging.getLogger(__name__)

_STORE_FILE = "store.sqlite3"
#: Recorded pages are added to ``sitemapgen/pages/recorded`` this many at a time (and the
#: rest at close): Scrapy's ``inc_value`` is not free, and it would run once per page.
_PAGES_PER_STAT = 100
#: What a store write can raise besides StoreError: the SQLite file, or the disk under it.
_STORE_ERRORS = (sqlite3.Error, OSError, StoreError)
#: The schemes of the links kept (a mailto: or data: request is no page to link to).
_WEB = ("http://", "https://")
#: Link targets whose store key is remembered: a site's navigation links repeat on every
#: page, and each would be normalised again; emptied when full, so memory stays flat.
_KEYS_KEPT = 10_000


def _seen_before(jobdir: Path | None) -> bool:
    """Whether Scrapy's duplicate filter of ``jobdir`` remembers requests: the crawl in it
    started before, and this process resumes it."""
    if not jobdir:
        return False
    try:
        return (Path(jobdir) / "requests.seen").stat().st_size > 0
    except OSError:
        return False


def store_failure(exc: BaseException, location: object) -> object:
    """What a store's failure says: a StoreError's message is in words already."""
    if isinstance(exc, StoreError):
        return exc
    return failure_of(exc, location, what="store")


class Recorder:
    """One crawl's store: ``store`` is None before the spider opens and after it closes."""

    def __init__(
        self, crawler: Crawler, config: Config, reporter: Reporter, *, starts_runs: bool = True
    ) -> None:
        self.crawler = crawler
        #: Whether opening the store starts a crawl on it (False: the offline build, which
        #: publishes what the store's crawl recorded, and tracks no request of it).
        self.starts_runs = starts_runs
        self.config = config
        self.reporter = reporter
        # Pages left out, per origin: the close report explains a crawl that lists few.
        reporter.by_origin = OriginExclusions(config.log_origins)
        self.stats = crawler.stats
        self.store: FactStore | None = None
        #: The requests tracked for a resume: only with a store that outlives the process.
        self.journal: RequestJournal | None = None
        #: Whether the previous process on this store closed normally (its Scrapy queue is
        #: then intact); after a kill it did not, and the journal's requests are sent again.
        self.closed_cleanly = True
        self._temp_dir: Path | None = None
        self._marker: Path | None = None
        self._failed = False
        self._flusher: Any = None
        self._pages_uncounted = 0
        #: Where the verdicts go, with a store that keeps them: every URL's with
        #: SITEMAPGEN_AUDIT, else those of the pages not listed when the hreflang
        #: clusters are checked (a listed page is in the store already).
        self.verdicts: VerdictLog | None = None
        #: Whether the live sitemaps are audited (SITEMAPGEN_AUDIT, and verdicts kept).
        self.audits = False
        self._verdicts_uncounted = 0
        #: Whether this process resumes a crawl of the same JOBDIR (its scheduler had seen
        #: requests before): the verdicts the store kept are then this crawl's own. Read
        #: now, before the scheduler opens its files.
        self.resumed = _seen_before(config.jobdir)
        #: Where the canonical targets of pages left out as canonical_elsewhere go: only
        #: the choice among duplicates by content reads them.
        self.named: Callable[[str], None] | None = (
            self.record_canonical if config.dedupe_content else None
        )
        #: Whether the links of each page are recorded (SITEMAPGEN_LINK_SOURCES > 0).
        self.records_links = config.link_sources > 0
        self._link_keys: dict[str, str] = {}

    @property
    def keeps_store(self) -> bool:
        """Whether the store outlives this process (JOBDIR, or SITEMAPGEN_STORE)."""
        return self.config.store is not None or self.config.jobdir is not None

    def _kept_location(self) -> StoreLocation | None:
        """The store that outlives this process, as (the setting that names it, its
        location), or None."""
        return store_location(store_setting=self.config.store, jobdir_setting=self.config.jobdir)

    def check(self) -> None:
        """Open and close the store that outlives the crawl (JOBDIR, SITEMAPGEN_STORE), so
        that one that cannot be opened (a folder that cannot be written, a file of another
        schema, a store in use by another crawl, a Redis server that does not answer) is
        found before the crawl starts. Raises StoreError naming the setting."""
        kept = self._kept_location()
        if kept is None:
            return
        try:
            self.config.store_backend.from_config(self.config, kept.location).close()
        except _STORE_ERRORS as exc:
            failure = store_failure(exc, kept.location)
            raise StoreError(
                f"{kept.named_by}: the sitemap store cannot be opened: {failure}"
            ) from None

    def open(self) -> None:
        """Open the store the settings name; a store that cannot be opened closes the
        spider before its first request."""
        config = self.config
        kept = self._kept_location()
        if kept is not None:
            location = kept.location
        else:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="sitemapgen-"))
            location = str(self._temp_dir / _STORE_FILE)
        try:
            store = config.store_backend.from_config(config, location)
            coordination = store.coordination()
            if coordination is not None and config.shared_write == "last" and self.starts_runs:
                coordination.worker_started()
        except _STORE_ERRORS as exc:
            logger.error(
                "Sitemap: cannot open the store: %(failure)s; closing the spider before its "
                "first request",
                {"failure": store_failure(exc, location)},
            )
            logger.debug("Sitemap: the store's failure", exc_info=True)
            raise CloseSpider("sitemapgen_store_unavailable") from None
        self.store = store
        try:
            store.start_run(resumed=self.resumed or not self.starts_runs)
        except _STORE_ERRORS as exc:
            self._store_failed("(the start of the crawl)", exc)
        # The requests a killed crawl left pending are that crawl's, for its resume.
        tracks = config.resume_requests and self.keeps_store and self.starts_runs
        journal = store.journal() if tracks else None
        if journal is not None:
            self.journal = journal
            self._marker = Path(location).with_name(Path(location).name + ".closed")
            self.closed_cleanly = self._marker.exists()
            self._marker.unlink(missing_ok=True)
        if config.audit or config.checks_clusters:
            self.verdicts = store.verdicts()
            self.audits = config.audit and self.verdicts is not None
            if self.verdicts is None and config.audit:
                logger.warning(
                    "Sitemap: the store %(backend)s keeps no verdicts, so there is no audit "
                    "(SITEMAPGEN_AUDIT needs the SQLite store)",
                    {"backend": type(store).__name__},
                )
        self._flusher = create_looping_call(self._flush)
        self._flusher.start(config.commit_seconds, now=False)
        if self._temp_dir is None and coordination is None and len(store):
            logger.info(
                "Sitemap: the store %(path)s already holds %(count)s (a resumed crawl, "
                "or SITEMAPGEN_STORE kept from an earlier one)",
                {"count": counted(len(store), "URL"), "path": location},
            )

    def record(self, facts: UrlFacts, *, from_item: bool) -> bool:
        """Store facts; a storage failure is logged and counted, never raised."""
        assert self.store is not None
        try:
            self.store.record(facts, from_item=from_item)
        except _STORE_ERRORS as exc:
            self._store_failed(facts.loc, exc)
            return False
        return True

    def judge(self, url: str, verdict: str) -> None:
        """Keep this run's verdict on a URL it did not list (a URL the policy refused,
        which no sitemap can list, has none); a storage failure is logged and counted."""
        assert self.store is not None
        try:
            self.store.judge(url, verdict)
        except (ValueError, KeyError):  # no origin: a port out of range, another scheme
            return
        except _STORE_ERRORS as exc:
            self._store_failed(url, exc)

    def record_canonical(self, target: str) -> None:
        """Keep a URL that a page left out as ``canonical_elsewhere`` names; a storage
        failure is logged and counted, never raised."""
        assert self.store is not None
        try:
            self.store.record_canonical(target)
        except _STORE_ERRORS as exc:
            self._store_failed(target, exc)

    def linked(self, page: str, urls: Iterable[str]) -> None:
        """Keep the links of ``page`` (the URLs of the requests its callback yielded):
        the http(s) ones, in the store's terms (as the verdicts they are joined with),
        each once, the page's own left out; a storage failure is logged and counted."""
        assert self.store is not None
        policy = self.config.url_policy
        known = self._link_keys
        if len(known) > _KEYS_KEPT:
            known.clear()
        targets = set()
        for url in urls:
            target = known.get(url)
            if target is None:
                if not url.startswith(_WEB):
                    continue
                target = known[url] = key_of(url, policy)
            targets.add(target)
        source = key_of(page, policy)
        targets.discard(source)
        if not targets:
            return
        try:
            self.store.record_links(source, targets)
        except _STORE_ERRORS as exc:
            self._store_failed(source, exc)

    def judged(self, verdicts: list[Verdict]) -> None:
        """Keep the verdicts of a response; a storage failure is logged and counted."""
        assert self.verdicts is not None
        for verdict in verdicts:
            try:
                self.verdicts.put(verdict)
            except _STORE_ERRORS as exc:
                self._store_failed(verdict.url, exc)
                return
            self._verdicts_uncounted += 1

    def page_recorded(self) -> None:
        """Count a page recorded by the middleware (in the stats by the hundred)."""
        self._pages_uncounted += 1
        if self._pages_uncounted >= _PAGES_PER_STAT:
            self._count_pages()

    def _count_pages(self) -> None:
        if self._verdicts_uncounted:
            self.stats.inc_value(keys.VERDICTS_RECORDED, self._verdicts_uncounted)
            self._verdicts_uncounted = 0
        if self._pages_uncounted:
            self.stats.inc_value(keys.PAGES_RECORDED, self._pages_uncounted)
            self._pages_uncounted = 0

    def track(self, request: Request, serialize: Callable[[], bytes]) -> bool:
        """A request was scheduled: journal it until it is answered; True if new."""
        if self.journal is None:
            return False
        try:
            return self.journal.track(self._key(request), serialize)
        except _STORE_ERRORS as exc:
            self._store_failed(request.url, exc)
            return False

    def answered(self, request: Request) -> None:
        """The request's answer is settled (recorded, or never to be listed)."""
        if self.journal is None:
            return
        try:
            self.journal.done(self._key(request))
        except _STORE_ERRORS as exc:
            self._store_failed(request.url, exc)

    def _key(self, request: Request) -> str:
        return self.crawler.request_fingerprinter.fingerprint(request).hex()

    def _store_failed(self, url: str, exc: BaseException) -> None:
        self.stats.inc_value(keys.skipped("store_error"))
        self.count_lost()
        if not self._failed:
            logger.error(
                "Sitemap: cannot record %(url)s: %(failure)s; what the store holds is kept, "
                "and the next failures are counted in %(key)s",
                {
                    "url": url,
                    "failure": store_failure(exc, self._location()),
                    "key": keys.skipped("store_error"),
                },
            )
            logger.debug("Sitemap: the store's failure", exc_info=exc)
        self._failed = True

    def _location(self) -> str | None:
        """The store's file or URL, for a failure's line."""
        kept = self._kept_location()
        if kept is not None:
            return kept.location
        return None if self._temp_dir is None else str(self._temp_dir / _STORE_FILE)

    def count_lost(self) -> None:
        """A shared store loses whole batches: count the records, not the calls."""
        if self.store is not None and self.store.lost:
            self.stats.set_value(keys.STORE_LOST, self.store.lost)

    def _flush(self) -> None:
        """Commit what waited: an idle crawl keeps nothing longer than SITEMAPGEN_COMMIT_SECONDS."""
        if self.store is not None:
            try:
                self.store.flush()
            except _STORE_ERRORS as exc:
                self._store_failed("(periodic commit)", exc)

    def stop(self, finished: bool) -> None:
        """The spider closed: no more writes. A finished crawl has no request in flight."""
        self._count_pages()
        if self._flusher is not None and self._flusher.running:
            self._flusher.stop()
        if finished and self.journal is not None:
            self.journal.clear()

    def close(self) -> None:
        """Release the store (its files stay when it outlives the crawl); mark a clean
        close for the next run on it."""
        store, self.store = self.store, None
        self.verdicts = None
        self.audits = False
        if store is None:
            return
        try:
            store.close()
        finally:
            if self._temp_dir is not None:
                shutil.rmtree(self._temp_dir, ignore_errors=True)
            elif self._marker is not None:
                self._marker.touch()
