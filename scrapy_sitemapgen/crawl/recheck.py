"""Recheck: the pages the previous run published that this crawl did not reach, requested
once before the spider closes (SITEMAPGEN_RECHECK_UNREACHED).

A page whose links were removed with it is never reached by a crawl that follows links,
so only a request of its own finds its 404; a page that only lost its links (an orphan)
still answers 200 and stays listed, since a sitemap is how search engines find such a
page. When the spider first goes idle after a crawl that reached the end of its links,
the recheck schedules a request for each such URL through the engine (``engine.crawl``,
as scrapy-redis feeds an idle spider): the downloader middlewares apply (robots.txt,
retries, redirects, throttling), the spider middlewares record the answer as they record
any page (the listing rules judge it, whatever its status), and the callback is the
recheck's own, which follows no link. The spider closes once they are answered. A crawl
cut short (a ``closespider_*`` close, a ``DEPTH_LIMIT`` reached) requests nothing more:
what it did not reach keeps its entry.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import DontCloseSpider, IgnoreRequest

from .. import stats as keys
from ..failures import failure_of
from ..plural import counted, verb
from ..sitemaps.evidence import UNREACHED, OriginEvidence, published_set
from ..sitemaps.facts import UrlFacts
from ..sitemaps.urls import origin_of
from ..sitemaps.verdicts import BLOCKED_BY_ROBOTS
from ..state.notes import previous_notes
from ..state.url_notes import URLS

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from ..settings import Config
    from .recorder import Recorder

__all__ = ["RECHECK_META", "Recheck"]

logger = logging.getLogger(__name__)

#: The meta key of the recheck's own requests: the ``<loc>`` the request stands for (the
#: request's URL is the crawl's, which differs under SITEMAPGEN_ORIGIN_MAP).
RECHECK_META = "sitemapgen_recheck"
#: Orphans named in the log per origin.
_NAMED = 10


class Recheck:
    """The recheck of one crawl, driven by ``spider_idle``: :attr:`done` once its
    requests are answered (at once when there are none)."""

    def __init__(self, crawler: Crawler, config: Config, recorder: Recorder) -> None:
        self.crawler = crawler
        self.config = config
        self.recorder = recorder
        self.done = not config.recheck_unreached
        #: Why the crawl did not reach every page, when it stopped at a limit of its own
        #: (``DEPTH_LIMIT``); what it did not reach is then not requested.
        self.cut: str | None = None
        #: The pages requested again that are listed: linked from no page the crawl
        #: reached, by origin root (the spider middleware says which, :meth:`listed`).
        self.orphans: dict[str, list[str]] = {}
        self._scheduled = False

    def spider_idle(self) -> None:
        """The first time: schedule a request for each unreached URL, and keep the spider
        open (the audit, which comes next, waits for them). The next time the spider is
        idle, they are answered. Which URLs those are is read here, at once: the crawl
        is idle, and nothing waits on the reactor."""
        if self.done:
            return
        if self._scheduled:
            self.done = True
            return
        unreached = self._to_request()
        if not unreached:
            self.done = True
            return
        self._scheduled = True
        logger.info(
            "Sitemap: requesting once %(count)s published before that this crawl did "
            "not reach (SITEMAPGEN_RECHECK_UNREACHED), without following their links",
            {"count": counted(len(unreached), "URL")},
        )
        self.crawler.stats.inc_value(keys.RECHECKED, len(unreached))
        engine = self.crawler.engine
        assert engine is not None
        policy = self.config.url_policy
        for loc in unreached:
            # Where the crawl would have fetched it: on the server the origin map maps.
            target = policy.crawl_url(loc) if policy.origin_map else loc
            engine.crawl(
                Request(
                    target,
                    callback=self._answered,
                    errback=self._failed,
                    dont_filter=True,
                    # Every status reaches the spider middlewares, which judge it.
                    meta={RECHECK_META: loc, "handle_httpstatus_all": True},
                )
            )
        raise DontCloseSpider

    def _to_request(self) -> list[str]:
        """What to request: nothing after a crawl that stopped at its DEPTH_LIMIT."""
        depth = self.config.depth_limit
        if depth and (self.crawler.stats.get_value("request_depth_max") or 0) >= depth:
            self.cut = "DEPTH_LIMIT"
            return []
        if self.recorder.store is None:
            return []
        try:
            return self._unreached()
        except Exception as exc:  # the sitemaps must not go down with it: those URLs stay kept
            # A WARNING: the publish, which reads the same state file next, says its ERROR.
            logger.warning(
                "Sitemap: the pages published before that this crawl did not reach could not "
                "be found (%(failure)s); they are kept as unreached",
                {"failure": failure_of(exc, self.config.state_path)},
            )
            logger.debug("Sitemap: the unreached pages' failure", exc_info=True)
            return []

    def _answered(self, response: Response) -> None:
        """The spider middleware recorded the answer: nothing to follow."""

    def _failed(self, failure: Failure) -> None:
        """No answer: SitemapFetchFailureMiddleware kept its verdict, but for Scrapy's
        own ROBOTSTXT_OBEY refusal (the crawler's user agent, no engine's), kept here."""
        request = getattr(failure, "request", None)
        error = failure.value
        if request is None or self.recorder.store is None:
            return
        if isinstance(error, IgnoreRequest) and "robots.txt" in str(error):
            self.recorder.judge(request.meta[RECHECK_META], BLOCKED_BY_ROBOTS)

    def listed(self, loc: str) -> None:
        """A page requested again is listed: an orphan."""
        self.orphans.setdefault(origin_of(loc).root, []).append(loc)

    def _unreached(self) -> list[str]:
        """Each URL the state's previous run published for an origin this crawl reached,
        that the crawl neither listed nor judged, in origin and loc order."""
        store = self.recorder.store
        path = self.config.state_path
        if store is None or not path.is_file():
            return []
        found: list[str] = []
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            for origin in sorted(set(store.origins()) | set(store.judged_origins())):

                def unreached(loc: str, reason: str) -> None:
                    if reason == UNREACHED:
                        found.append(loc)

                previous = previous_notes(db, URLS, self.config.state_key, origin.name)
                for _ in published_set(
                    store.entries(origin),
                    store.earlier(origin),
                    ((loc, (None, None)) for loc, _ in previous),
                    store.judged(origin),
                    now=0,
                    keep_for=0,
                    entry_of=lambda loc, _: UrlFacts(loc),
                    tally=OriginEvidence(),
                    on_kept=unreached,
                ):
                    pass
        finally:
            db.close()
        return found

    def report(self) -> None:
        """The orphans found, counted and named: one INFO line per origin (the first
        SITEMAPGEN_LOG_ORIGINS), the rest summed up."""
        total = sum(len(locs) for locs in self.orphans.values())
        if not total:
            return
        self.crawler.stats.set_value(keys.ORPHANS, total)
        shown = self.config.log_origins
        for root, locs in list(self.orphans.items())[:shown]:
            logger.info(
                "Sitemap: %(root)s: %(count)s published before %(are)s linked from no "
                "page this crawl reached and still %(answer)s 200, so %(they)s listed "
                "(orphans: a sitemap is how search engines find them): %(first)s%(more)s",
                {
                    "root": root,
                    "count": counted(len(locs), "page"),
                    "are": verb(len(locs), "is"),
                    "answer": verb(len(locs), "answers"),
                    "they": "it stays" if len(locs) == 1 else "they stay",
                    "first": ", ".join(locs[:_NAMED]),
                    "more": ", ..." if len(locs) > _NAMED else "",
                },
            )
        rest = list(self.orphans.values())[shown:]
        if rest:
            logger.info(
                "Sitemap: and %(count)s on %(origins)s",
                {
                    "count": counted(sum(len(locs) for locs in rest), "orphan page"),
                    "origins": counted(len(rest), "more origin"),
                },
            )
