"""SitemapSpiderMiddleware: records the facts of every page the spider receives."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .exporter import SitemapExporter
from .extract import page_facts

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

    def _record(self, response: Response) -> None:
        recorder = self.recorder
        if recorder.store is None:
            return
        facts = page_facts(response, recorder.config, recorder.reporter)
        if facts is not None and recorder.record(facts, from_item=False):
            recorder.page_recorded()
