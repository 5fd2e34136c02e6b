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

    from .recorder import Recorder

__all__ = ["SitemapSpiderMiddleware"]

logger = logging.getLogger(__name__)


class SitemapSpiderMiddleware:
    """Records each response's facts into the exporter's store and yields the spider's
    output unchanged. Recording happens before the callback's output is consumed, so a
    callback that yields nothing still gets its page listed."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapExporter.required_by(crawler, cls.__name__).recorder)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        self._record(response)
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
        recorder = self.recorder
        if recorder.store is None:
            return
        reporter = recorder.reporter
        judging = recorder.verdicts is not None
        if judging:
            reporter.last_exclusion = reporter.last_skip = None
        facts = page_facts(response, recorder.config, reporter, named=recorder.named)
        if facts is not None and recorder.record(facts, from_item=False):
            recorder.page_recorded()
        if not judging:
            return
        if recorder.audits:
            recorder.judged(response_verdicts(response, facts, reporter, recorder.config))
            return
        # Only the clusters' check: the pages not listed (the URLs that redirected to a
        # listed one among them); a listed page's verdict would repeat its store row.
        request = response.request
        if facts is None or (request is not None and request.meta.get("redirect_urls")):
            verdicts = response_verdicts(response, facts, reporter, recorder.config)
            recorder.judged([v for v in verdicts if v.verdict != LISTED])
