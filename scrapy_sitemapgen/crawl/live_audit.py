"""LiveAudit: the sitemaps each origin publishes today, read through the crawl's own
downloader once the crawl's links are exhausted, and the listed URLs it never reached.

When the spider first goes idle, the audit keeps it open (``DontCloseSpider``) and, per
origin: fetches ``robots.txt`` and follows its ``Sitemap:`` lines (else ``/sitemap.xml``),
plus ``SITEMAPGEN_AUDIT_SITEMAPS``, every index's sitemaps after it; each file goes
through the validator's bounded reading (:meth:`Validator.check_data`), whose violations
become ``invalid_sitemap`` findings and whose entries are kept in the store. Then the
listed URLs without a verdict (at most ``SITEMAPGEN_AUDIT_MAX_FETCH``) are fetched and
judged by the listing rules, without following their links and without adding them to the
published sitemap. Every fetch is ``engine.download_async``: the downloader middlewares
(proxies, auth, robots.txt, throttling, retries) apply, the spider's callbacks do not.
Nothing is requested outside the origin audited (:class:`FetchScope`): a file or URL named
off it is reported, not fetched, and redirects are followed here, hop by hop, only while
they stay on it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.statscollectors import DummyStatsCollector

from .. import clock
from .. import stats as keys
from ..audit.findings import CrawlRun
from ..audit.live import FetchScope, LiveRead, key_of
from ..audit.report import report_origins, summary
from ..plural import counted, verb
from ..sitemaps.duplicates import duplicate_choice
from ..sitemaps.urls import Origin, origin_of
from ..sitemaps.verdicts import (
    BLOCKED_BY_ROBOTS,
    DUPLICATE_CONTENT,
    FETCH_FAILED,
    SOURCE_SITEMAP,
    Verdict,
)
from ..stats import Reporter
from ..validate import DEFAULT_MAX_FILES, RAW_SLACK, Validator
from .extract import page_facts
from .judging import response_verdicts

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..features.hreflang_clusters import ClusterIndex
    from ..settings import Config
    from ..store.base import FactSource
    from ..store.verdict_log import VerdictLog
    from ..validate import SitemapFile
    from .recorder import Recorder
    from .robots_rules import RobotsRules

__all__ = ["LiveAudit", "write_reports"]

logger = logging.getLogger(__name__)

#: Listed URLs fetched at once: the downloader's own limits (per domain, delays) still
#: apply; this only bounds what waits in memory.
_PARALLEL = 16
#: The meta key that marks the audit's own requests, for downloader middlewares that
#: want to tell them apart (they never reach the spider or its middlewares).
AUDIT_META = "sitemapgen_audit"
#: The statuses whose ``Location`` the audit follows (Scrapy's RedirectMiddleware's).
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class OffOrigin(IgnoreRequest):
    """A request the audit may not make (:meth:`FetchScope.refusal`); ``str``: why."""


class LiveAudit:
    """The audit of one crawl, driven by ``spider_idle``; :attr:`origins` holds what it
    read once :attr:`done`."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        recorder: Recorder,
        robots: RobotsRules | None = None,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.recorder = recorder
        #: robots.txt's listing rule, for the listed URLs the crawl never reached.
        self.robots = robots
        self.stats = crawler.stats
        #: The listing rules' counts of audit fetches stay out of the crawl's stats.
        self._reporter = Reporter(DummyStatsCollector(crawler), logger)
        self.origins: dict[Origin, LiveRead] = {}
        #: When the crawl started (the extensions are built as it starts), for the report.
        self.started = clock.now()
        self.done = False
        self._task: asyncio.Future[None] | None = None
        #: Where each origin's audit may send requests (:class:`FetchScope`).
        self._scopes: dict[Origin, FetchScope] = {}

    def spider_idle(self) -> None:
        """Keep the spider open until the audit has read everything."""
        if self.done or not self.recorder.audits:
            return
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        raise DontCloseSpider

    async def _run(self) -> None:
        log = self.recorder.verdicts
        assert log is not None
        try:
            await self._audit(log)
        except Exception:  # the audit must never take the crawl's sitemaps down with it
            logger.error("Sitemap audit: reading the live sitemaps failed", exc_info=True)
        finally:
            self.done = True

    async def _audit(self, log: VerdictLog) -> None:
        log.clear_listed()
        sources: dict[Origin, list[str]] = {o: [] for o in log.origins()}
        for url in self.config.audit_sitemaps:
            sources.setdefault(origin_of(key_of(url, self.config.url_policy)), []).append(url)
        for origin in sorted(sources):
            found = self.origins[origin] = await self._read_origin(origin, sources[origin], log)
            if found.unreadable:
                logger.warning(
                    "Sitemap audit: %(origin)s: its live sitemaps could not be read (%(why)s), "
                    "so no page is reported missing_from_sitemap",
                    {"origin": origin.root, "why": "; ".join(found.unread[:3])},
                )
        log.flush()
        budget = self.config.audit_max_fetch
        for origin in sorted(self.origins):
            unjudged = list(log.unjudged(origin))
            fetch, rest = unjudged[:budget], unjudged[budget:]
            budget -= len(fetch)
            if rest:
                self.stats.inc_value(keys.AUDIT_NOT_FETCHED, len(rest))
                logger.warning(
                    "Sitemap audit: %(count)s listed on %(origin)s %(were)s not fetched "
                    "(SITEMAPGEN_AUDIT_MAX_FETCH = %(max)d); they have no verdict",
                    {
                        "count": counted(len(rest), "URL"),
                        "were": verb(len(rest), "was"),
                        "origin": origin.root,
                        "max": self.config.audit_max_fetch,
                    },
                )
            scope = self._scopes[origin]
            for start in range(0, len(fetch), _PARALLEL):
                batch = fetch[start : start + _PARALLEL]
                await asyncio.gather(*(self._judge(url, scope) for _, url in batch))
        log.flush()

    async def _fetch(self, url: str, scope: FetchScope, *, sitemap: bool) -> Response:
        """The response to ``url``; :class:`OffOrigin` when ``scope`` refuses it.

        Redirects are followed here, not by the downloader (``dont_redirect``), so that
        each hop is checked first: one on the origin is followed (a moved sitemap is read
        where it went; a listed page's chain gives each URL on it a verdict, from the
        ``redirect_urls`` Scrapy's middleware would have left), one off it is not, and its
        3xx response is the answer. REDIRECT_ENABLED and REDIRECT_MAX_TIMES apply."""
        refusal = scope.refusal(url)
        if refusal is not None:
            raise OffOrigin(f"{url[:200]} not fetched: {refusal}")
        meta: dict[str, object] = {AUDIT_META: True, "dont_redirect": True}
        if sitemap:
            limit = self.config.max_bytes + RAW_SLACK
            meta["download_maxsize"] = limit
            meta["download_warnsize"] = limit
        settings = self.crawler.settings
        hops = settings.getint("REDIRECT_MAX_TIMES") if settings.getbool("REDIRECT_ENABLED") else 0
        engine = self.crawler.engine
        assert engine is not None
        request = Request(url, meta=meta, dont_filter=True)
        chain: list[str] = []
        reasons: list[int] = []
        while True:
            response = await engine.download_async(request)
            location = response.headers.get(b"Location")
            if response.status not in _REDIRECTS or not location or len(chain) >= hops:
                return response
            target = response.urljoin(location.decode("latin-1"))
            if scope.refusal(target) is not None:
                return response
            chain.append(request.url)
            reasons.append(response.status)
            request = Request(
                target,
                meta={**meta, "redirect_urls": [*chain], "redirect_reasons": [*reasons]},
                dont_filter=True,
            )

    async def _read_origin(self, origin: Origin, extra: list[str], log: VerdictLog) -> LiveRead:
        found = LiveRead(origin, self.config.url_policy)
        # The user's own SITEMAPGEN_AUDIT_SITEMAPS are read wherever they are (naming one
        # is the consent), and their origins' files with them.
        scope = self._scopes[origin] = FetchScope(origin, self.config.url_policy, extra)
        validator = Validator(max_bytes=self.config.max_bytes, on_entry=found.entry)
        robots = validator.file(origin.root + "robots.txt")
        queue: list[SitemapFile] = []
        robots_body = await self._body(robots, scope, found, validator, named=False)
        if robots_body is not None:
            violations, queue = validator.check_data(robots, robots_body)
            for violation in violations:
                found.violation(violation)
        guess = None
        if not queue:
            guess = validator.file(origin.root + "sitemap.xml")
            queue = [guess]
        queue.extend(validator.file(url) for url in extra)
        # The user's own file is named, even at the guessed place: the one read (the
        # first) must be reported as named when it cannot be, whatever its path.
        if guess is not None and guess.location in extra:
            guess = None
        fetched: set[str] = set()
        while queue:
            target = queue.pop(0)
            if target.location in fetched:  # announced twice (robots.txt and the setting)
                continue
            fetched.add(target.location)
            if validator.files >= DEFAULT_MAX_FILES:
                found.add_invalid(
                    target.display,
                    f"not read: more than {DEFAULT_MAX_FILES:,} sitemap files on this origin",
                )
                break
            refusal = scope.refusal(target.location)
            if refusal is not None:
                # An index's child off its site is a P9 violation already; a robots.txt's
                # Sitemap: line (P13) is no violation, but is not read either: its line
                # is blamed, as for a file that cannot be fetched (and as the command does).
                if not target.in_index:
                    found.violation(validator.unfetched(target, refusal))
                found.not_read(target.display, f"not fetched: {refusal}")
                continue
            body = await self._body(target, scope, found, validator, named=target is not guess)
            if body is None:
                continue
            found.sitemaps.append(target.display)
            self.stats.inc_value(keys.AUDIT_SITEMAPS_READ)
            violations, children = validator.check_data(target, body)
            for violation in violations:
                found.violation(violation)
            self.stats.inc_value(keys.AUDIT_LISTED, found.keep(log))
            queue.extend(children)
        return found

    async def _body(
        self,
        target: SitemapFile,
        scope: FetchScope,
        found: LiveRead,
        validator: Validator,
        *,
        named: bool,
    ) -> bytes | None:
        """The stored bytes of a file, or None. A file not read is an ``invalid_sitemap``
        finding (with why) and makes what the origin lists unknown, whatever its path;
        but for robots.txt and the ``/sitemap.xml`` tried when robots.txt names none (not
        ``named``), whose 4xx is a site without one (RFC 9309 for robots.txt). No answer
        or a 5xx is never that: what the file would announce or list is unknown."""
        try:
            response = await self._fetch(target.location, scope, sitemap=True)
        except Exception as exc:  # no answer, a refused or oversized download
            why = str(exc) or type(exc).__name__
            found.violation(validator.unfetched(target, why))
            found.not_read(target.display, why)
            return None
        if response.status != 200:
            why = f"HTTP {response.status}"
            absent = not named and 400 <= response.status < 500
            location = response.headers.get(b"Location")
            if response.status in _REDIRECTS and location:
                to = response.urljoin(location.decode("latin-1"))
                refusal = scope.refusal(to)
                if refusal is not None:  # the file is there: the audit does not go
                    why = f"{why} to {to[:200]}, not followed: {refusal}"
                    absent = False
            if not absent:
                found.violation(validator.unfetched(target, why))
                found.not_read(target.display, why)
            return None
        return response.body

    async def _judge(self, url: str, scope: FetchScope) -> None:
        """Fetch a listed URL the crawl never reached and keep its verdict."""
        recorder = self.recorder
        config = self.config
        policy = config.url_policy
        # A production URL is judged where the crawl would have fetched it: on the server
        # SITEMAPGEN_ORIGIN_MAP maps to production (the build about to be deployed).
        target = policy.crawl_url(key_of(url, policy)) if policy.origin_map else url
        try:
            response = await self._fetch(target, scope, sitemap=False)
        except Exception as exc:  # robots.txt's refusal (IgnoreRequest), or no answer
            blocked = isinstance(exc, IgnoreRequest) and "robots.txt" in str(exc)
            verdict = Verdict(
                key_of(url, config.url_policy),
                BLOCKED_BY_ROBOTS if blocked else FETCH_FAILED,
                detail=None if blocked else str(exc) or type(exc).__name__,
                source=SOURCE_SITEMAP,
            )
            recorder.judged([verdict])
            return
        self.stats.inc_value(keys.AUDIT_FETCHED)
        robots = None
        if self.robots is not None and response.status == 200:
            robots = await self.robots.of_response(response)
        reporter = self._reporter
        reporter.last_exclusion = reporter.last_skip = None
        facts = page_facts(response, config, reporter, robots=robots)
        recorder.judged(response_verdicts(response, facts, reporter, config, SOURCE_SITEMAP))


def note_duplicates(log: VerdictLog, source: FactSource) -> None:
    """Give the pages that the publish left out as duplicates by content
    (SITEMAPGEN_DEDUPE_CONTENT) that verdict, with the URL listed for them as its detail:
    the crawl judged them listable, the publish chose another URL of the same content. The
    choice is the publish's own (:func:`duplicate_choice` over the same store)."""
    for origin in log.origins():
        chosen = duplicate_choice(source.entries(origin), source.canonical_targets(origin))
        if not chosen:
            continue
        for facts in source.entries(origin):
            content = facts.content
            if content is None or chosen[content.duplicate_key] == facts.loc:
                continue
            listed = chosen[content.duplicate_key]
            known = log.get(facts.loc)
            log.put(
                Verdict(facts.loc, DUPLICATE_CONTENT, detail=listed)
                if known is None
                else dataclasses.replace(known, verdict=DUPLICATE_CONTENT, detail=listed)
            )
    log.flush()


def write_reports(
    audit: LiveAudit,
    log: VerdictLog,
    source: FactSource | None = None,
    clusters: ClusterIndex | None = None,
) -> list[str]:
    """Each origin's report in ``SITEMAPGEN_REPORT_DIR/<origin folder>``; the close log's
    lines. ``source``: the store the publish listed from, when it left duplicates by
    content out; ``clusters``: the hreflang clusters the publish checked. Runs in a
    thread: it reads the whole store."""
    if source is not None:
        note_duplicates(log, source)
    config = audit.config
    reports = report_origins(
        log,
        audit.origins,
        config.report_dir,
        audit.stats,
        config.sections,
        None if clusters is None else (lambda origin: clusters.findings(origin.root)),
        CrawlRun(audit.started, clock.now(), config.listing_settings),
    )
    return [f"{summary(report)}; report in {report.folder}" for report in reports]
