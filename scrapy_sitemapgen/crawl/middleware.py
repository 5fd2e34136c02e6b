"""SitemapSpiderMiddleware: records the facts of every page the spider receives."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.spidermiddlewares.httperror import HttpError

from ..sitemaps.verdicts import LISTED
from .exporter import SitemapExporter
from .extract import page_facts
from .judging import response_verdicts

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.robots_txt import RobotsTxt
    from .recorder import Recorder
    from .robots_rules import RobotsRules

__all__ = ["SitemapSpiderMiddleware"]

logger = logging.getLogger(__name__)


class SitemapSpiderMiddleware:
    """Records each response's facts into the exporter's store and yields the spider's
    output unchanged. Recording happens before the callback's output is consumed, so a
    callback that yields nothing still gets its page listed."""

    def __init__(self, recorder: Recorder, robots: RobotsRules | None = None) -> None:
        self.recorder = recorder
        #: Each origin's robots.txt (SITEMAPGEN_RESPECT_ROBOTS_TXT), else None.
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        exporter = SitemapExporter.required_by(crawler, cls.__name__)
        return cls(exporter.recorder, exporter.robots)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        robots = self.robots
        if robots is None or response.status != 200:  # no other status is listed
            self._record(response)
        else:
            await self._record_checked(response, robots)
        try:
            async for item_or_request in result:
                yield item_or_request
        finally:
            # The page's facts are recorded whatever the callback does next, so its request
            # is settled; written after the facts, in the same ordered stream.
            if response.request is not None:
                self.recorder.answered(response.request)

    def process_spider_exception(self, response: Response, exception: Exception) -> None:
        """A status Scrapy's HttpErrorMiddleware refused (no errback saw it, so
        :meth:`process_spider_output` never will): counted as the listing rules count it,
        with its verdict for the audit; the exception goes on to the other middlewares."""
        if isinstance(exception, HttpError):
            self._record(response)

    def _record(self, response: Response) -> None:
        if self.recorder.store is not None:
            self._keep(response, self._facts(response, None))

    async def _record_checked(self, response: Response, robots: RobotsRules) -> None:
        """:meth:`_record` with robots.txt's listing rule: the origin's file is read first
        (once per origin), the files of the images' origins before the facts are kept."""
        if self.recorder.store is None:
            return
        page_robots = await robots.of_response(response)
        if self.recorder.store is None:  # the spider closed meanwhile
            return
        facts = self._facts(response, page_robots)
        if facts is not None and facts.images:
            facts = await robots.allowed_images(facts, self.recorder.reporter)
            if self.recorder.store is None:
                return
        self._keep(response, facts)

    def _facts(self, response: Response, robots: RobotsTxt | None) -> UrlFacts | None:
        recorder = self.recorder
        reporter = recorder.reporter
        if recorder.verdicts is not None:
            reporter.last_exclusion = reporter.last_skip = None
        return page_facts(response, recorder.config, reporter, robots=robots, named=recorder.named)

    def _keep(self, response: Response, facts: UrlFacts | None) -> None:
        """Record the facts, and the response's verdicts (read from the reporter when
        ``facts`` is None: nothing may report between :meth:`_facts` and this)."""
        recorder = self.recorder
        if facts is not None and recorder.record(facts, from_item=False):
            recorder.page_recorded()
        if recorder.verdicts is None:
            return
        reporter = recorder.reporter
        if recorder.audits:
            recorder.judged(response_verdicts(response, facts, reporter, recorder.config))
            return
        # Only the clusters' check: the pages not listed (the URLs that redirected to a
        # listed one among them); a listed page's verdict would repeat its store row.
        request = response.request
        if facts is None or (request is not None and request.meta.get("redirect_urls")):
            verdicts = response_verdicts(response, facts, reporter, recorder.config)
            recorder.judged([v for v in verdicts if v.verdict != LISTED])
