"""Recheck: the pages the previous run published that this crawl did not reach, requested
once before the spider closes (SITEMAPGEN_RECHECK_UNREACHED).

A page whose links were removed with it is never reached by a crawl that follows links,
so only a request of its own finds its 404; a page that only lost its links (an orphan)
still answers 200 and stays listed, since a sitemap is how search engines find such a
page. When the spider first goes idle after a crawl that reached the end of its links,
the recheck keeps it open (``DontCloseSpider``), requests each such URL through
``engine.download_async`` (the downloader middlewares apply: robots.txt, retries,
redirects, throttling), and records the answer as the spider middleware records a page:
the listing rules judge it, its links are not followed. A crawl cut short (a
``closespider_*`` close, a ``DEPTH_LIMIT`` reached) requests nothing more: what it did not
reach keeps its entry.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import DontCloseSpider, IgnoreRequest

from .. import stats as keys
from ..failures import failure_of
from ..sitemaps.evidence import UNREACHED, OriginEvidence, published_set
from ..sitemaps.facts import UrlFacts
from ..sitemaps.verdicts import BLOCKED_BY_ROBOTS
from ..state.notes import previous_notes
from ..state.url_notes import URLS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from .recorder import Recorder

__all__ = ["RECHECK_META", "Recheck"]

logger = logging.getLogger(__name__)

#: URLs requested at once: the downloader's own limits (per domain, delays) still apply;
#: this only bounds what waits in memory.
_PARALLEL = 16
#: The meta key that marks the recheck's own requests, for downloader middlewares that
#: want to tell them apart (they never reach the spider).
RECHECK_META = "sitemapgen_recheck"
#: Orphans named in the log per origin, and origins with a line of their own.
_NAMED = 10


class Recheck:
    """The recheck of one crawl, driven by ``spider_idle``. ``record`` records a
    response as the spider middleware does (its facts when listed), set by the
    middleware; without it there is nothing to recheck into."""

    def __init__(self, crawler: Crawler, config: Config, recorder: Recorder) -> None:
        self.crawler = crawler
        self.config = config
        self.recorder = recorder
        self.record: Callable[[Response], Awaitable[UrlFacts | None]] | None = None
        self.done = not config.recheck_unreached
        #: Why the crawl did not reach every page, when it stopped at a limit of its own
        #: (``DEPTH_LIMIT``); what it did not reach is then not requested.
        self.cut: str | None = None
        #: The pages requested again that are listed: linked from no page the crawl
        #: reached, by origin root.
        self.orphans: dict[str, list[str]] = {}
        self._task: asyncio.Future[None] | None = None

    def spider_idle(self) -> None:
        """Keep the spider open until every unreached URL was requested once. Which URLs
        those are is read here, at once: the crawl is idle, nothing waits on the reactor,
        and a crawl with none (a first run, one that reached everything) closes now, not
        at the engine's next look at an idle spider (seconds later)."""
        if self.done:
            return
        if self._task is None:
            unreached = self._to_request()
            if not unreached:
                self.done = True
                return
            self._task = asyncio.ensure_future(self._run(unreached))
        raise DontCloseSpider

    def _to_request(self) -> list[tuple[Origin, str]]:
        """What to request: nothing after a crawl that stopped at its DEPTH_LIMIT."""
        depth = self.config.depth_limit
        if depth and (self.crawler.stats.get_value("request_depth_max") or 0) >= depth:
            self.cut = "DEPTH_LIMIT"
            return []
        if self.record is None or self.recorder.store is None:
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

    async def _run(self, unreached: list[tuple[Origin, str]]) -> None:
        try:
            await self._recheck(unreached)
        except Exception:  # the sitemaps must not go down with it: those URLs stay kept
            logger.error(
                "Sitemap: requesting the unreached pages again failed; they are kept as unreached",
                exc_info=True,
            )
        finally:
            self.done = True

    async def _recheck(self, unreached: list[tuple[Origin, str]]) -> None:
        logger.info(
            "Sitemap: requesting once %(count)d URL(s) published before that this crawl did "
            "not reach (SITEMAPGEN_RECHECK_UNREACHED), without following their links",
            {"count": len(unreached)},
        )
        self.crawler.stats.inc_value(keys.RECHECKED, len(unreached))
        for start in range(0, len(unreached), _PARALLEL):
            batch = unreached[start : start + _PARALLEL]
            await asyncio.gather(*(self._fetch(origin, loc) for origin, loc in batch))
            if self.recorder.store is None:  # the spider closed meanwhile
                return

    def _unreached(self) -> list[tuple[Origin, str]]:
        """(origin, loc) of each URL the state's previous run published for an origin
        this crawl reached, that the crawl neither listed nor judged, in origin and loc
        order."""
        store = self.recorder.store
        path = self.config.state_path
        if store is None or not path.is_file():
            return []
        found: list[tuple[Origin, str]] = []
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            for origin in sorted(set(store.origins()) | set(store.judged_origins())):

                def unreached(loc: str, reason: str, origin: Origin = origin) -> None:
                    if reason == UNREACHED:
                        found.append((origin, loc))

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

    async def _fetch(self, origin: Origin, loc: str) -> None:
        policy = self.config.url_policy
        # Where the crawl would have fetched it: on the server the origin map maps.
        target = policy.crawl_url(loc) if policy.origin_map else loc
        engine = self.crawler.engine
        assert engine is not None and self.record is not None
        request = Request(target, meta={RECHECK_META: True}, dont_filter=True)
        try:
            response = await engine.download_async(request)
        except IgnoreRequest as exc:  # Scrapy's ROBOTSTXT_OBEY: the crawler's agent, no engine's
            if self.recorder.store is not None and "robots.txt" in str(exc):
                self.recorder.judge(loc, BLOCKED_BY_ROBOTS)
            return
        except Exception:  # no answer: SitemapFetchFailureMiddleware kept its verdict
            return
        if self.recorder.store is None:
            return
        facts = await self.record(response)
        if facts is not None and facts.loc == loc:
            self.orphans.setdefault(origin.root, []).append(loc)

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
                "Sitemap: %(root)s: %(count)d page(s) published before are linked from no "
                "page this crawl reached and still answer 200, so they stay listed "
                "(orphans: a sitemap is how search engines find them): %(first)s%(more)s",
                {
                    "root": root,
                    "count": len(locs),
                    "first": ", ".join(locs[:_NAMED]),
                    "more": ", ..." if len(locs) > _NAMED else "",
                },
            )
        rest = list(self.orphans.values())[shown:]
        if rest:
            logger.info(
                "Sitemap: and %(count)d orphan page(s) on %(origins)d more origin(s)",
                {"count": sum(len(locs) for locs in rest), "origins": len(rest)},
            )
