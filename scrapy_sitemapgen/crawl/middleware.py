"""SitemapSpiderMiddleware: records the facts of every page the spider receives."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.spidermiddlewares.httperror import HttpError

from ..sitemaps.verdicts import LISTED, SOURCE_CRAWL, SOURCE_SITEMAP
from .exporter import SitemapExporter
from .extract import page_facts
from .judging import response_verdicts
from .recheck import RECHECK_META

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.robots_txt import RobotsTxt
    from .recheck import Recheck
    from .recorder import Recorder
    from .robots_rules import RobotsRules

__all__ = ["SitemapSpiderMiddleware"]

logger = logging.getLogger(__name__)


class SitemapSpiderMiddleware:
    """Records each response's facts into the exporter's store and yields the spider's
    output unchanged. Recording happens before the callback's output is consumed, so a
    callback that yields nothing still gets its page listed."""

    def __init__(
        self, recorder: Recorder, robots: RobotsRules | None = None, recheck: Recheck | None = None
    ) -> None:
        self.recorder = recorder
        #: Each origin's robots.txt (SITEMAPGEN_RESPECT_ROBOTS_TXT), else None.
        self.robots = robots
        #: Told of each page that its recheck (a request of the add-on's own) listed.
        self.recheck = recheck

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        exporter = SitemapExporter.required_by(crawler, cls.__name__)
        return cls(exporter.recorder, exporter.robots, exporter.recheck)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        robots = self.robots
        request = response.request
        if request is not None and RECHECK_META in request.meta:
            await self._record_rechecked(response)
        elif robots is None or response.status != 200:  # no other status is listed
            self._record(response)
        else:
            await self._record_checked(response, robots)
        # The requests the callback yields are the page's links (SITEMAPGEN_LINK_SOURCES):
        # their URLs only, kept once the output ends, so what is yielded is untouched.
        links: list[str] | None = [] if self.recorder.records_links else None
        try:
            async for item_or_request in result:
                if links is not None and isinstance(item_or_request, Request):
                    links.append(item_or_request.url)
                yield item_or_request
        finally:
            recorder = self.recorder
            if links and recorder.store is not None:
                recorder.linked(response.url, links)
            # The page's facts are recorded whatever the callback does next, so its request
            # is settled; written after the facts and links, in the same ordered stream.
            if response.request is not None:
                recorder.answered(response.request)

    def process_spider_exception(self, response: Response, exception: Exception) -> None:
        """A status Scrapy's HttpErrorMiddleware refused (no errback saw it, so
        :meth:`process_spider_output` never will): counted as the listing rules count it,
        with its verdict for the audit; the exception goes on to the other middlewares."""
        if isinstance(exception, HttpError):
            self._record(response)

    async def _record_rechecked(self, response: Response) -> None:
        """A page published before that the crawl did not reach, requested by the
        recheck: its verdicts say it was reached through the published sitemap, not a link
        (the audit's ``listed_unreachable``), and a page listed is an orphan."""
        robots = self.robots
        if robots is None or response.status != 200:
            facts = self._record(response, SOURCE_SITEMAP)
        else:
            facts = await self._record_checked(response, robots, SOURCE_SITEMAP)
        if facts is not None and self.recheck is not None:
            self.recheck.listed(facts.loc)

    def _record(self, response: Response, source: str = SOURCE_CRAWL) -> UrlFacts | None:
        if self.recorder.store is None:
            return None
        facts = self._facts(response, None)
        self._keep(response, facts, source)
        return facts

    async def _record_checked(
        self, response: Response, robots: RobotsRules, source: str = SOURCE_CRAWL
    ) -> UrlFacts | None:
        """:meth:`_record` with robots.txt's listing rule: the origin's file is read first
        (once per origin), the files of the images' origins before the facts are kept."""
        if self.recorder.store is None:
            return None
        page_robots = await robots.of_response(response)
        if self.recorder.store is None:  # the spider closed meanwhile
            return None
        facts = self._facts(response, page_robots)
        if facts is not None and facts.images:
            facts = await robots.allowed_images(facts, self.recorder.reporter)
            if self.recorder.store is None:
                return None
        self._keep(response, facts, source)
        return facts

    def _facts(self, response: Response, robots: RobotsTxt | None) -> UrlFacts | None:
        recorder = self.recorder
        reporter = recorder.reporter
        reporter.last_exclusion = reporter.last_skip = None
        return page_facts(response, recorder.config, reporter, robots=robots, named=recorder.named)

    def _keep(self, response: Response, facts: UrlFacts | None, source: str = SOURCE_CRAWL) -> None:
        """Record the facts, and the verdicts of the URLs not listed: the response's own
        when ``facts`` is None (read from the reporter: nothing may report between
        :meth:`_facts` and this), and those that redirected to it. They are this run's
        evidence (:mod:`..sitemaps.evidence`), and the audit's (``source``: how the URL
        was reached, :data:`..sitemaps.verdicts.SOURCE_CRAWL` by a link)."""
        recorder = self.recorder
        if facts is not None and recorder.record(facts, from_item=False):
            recorder.page_recorded()
        request = response.request
        redirected = request is not None and request.meta.get("redirect_urls")
        if facts is not None and not redirected and not recorder.audits:
            return  # a listed page: its store row is its verdict
        verdicts = response_verdicts(response, facts, recorder.reporter, recorder.config, source)
        unlisted = [v for v in verdicts if v.verdict != LISTED]
        for verdict in unlisted:
            recorder.judge(verdict.url, verdict.verdict)
        if recorder.verdicts is not None:
            # The audit keeps every verdict; the clusters' check those of the pages not
            # listed (a listed page's verdict would repeat its store row).
            recorder.judged(verdicts if recorder.audits else unlisted)
