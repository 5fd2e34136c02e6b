"""SitemapItemPipeline: lets spiders add or correct a URL's facts through their items."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from .. import clock
from ..sitemaps.records import RecordReader
from ..stats import ITEMS_RECORDED
from .exporter import SitemapExporter

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from ..sitemaps.facts import UrlFacts
    from .recorder import Recorder
    from .robots_rules import RobotsRules

__all__ = ["SitemapItemPipeline"]


class SitemapItemPipeline:
    """Reads the sitemap fields (``loc``, ``lastmod``, ``changefreq``, ``priority``,
    ``images``, ``videos``, ``news``) from any item that has a ``loc``; validates each,
    drops a bad one with a warning and a count, and merges the rest into that URL's entry
    (adding the URL if no response recorded it). The item always passes through unchanged.

    With SITEMAPGEN_RESPECT_ROBOTS_TXT, the ``loc`` and the images are judged by robots.txt
    as a page's are; when an origin's file is still to be read, ``process_item`` returns
    an awaitable that reads it first (Scrapy awaits what a pipeline returns)."""

    def __init__(self, recorder: Recorder, robots: RobotsRules | None = None) -> None:
        self.recorder = recorder
        self.robots = robots
        self._reader = RecordReader(recorder.config.url_policy, recorder.reporter, _as_mapping)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        exporter = SitemapExporter.required_by(crawler, cls.__name__)
        return cls(exporter.recorder, exporter.robots)

    def process_item(self, item: Any) -> Any:
        recorder = self.recorder
        if recorder.store is None:
            return item
        if type(item) is dict:  # the common case, and every record of a feed: no adapter needed
            adapter: Any = item
        elif ItemAdapter.is_item(item):
            adapter = ItemAdapter(item)
        else:
            return item
        facts = self._reader.facts(adapter.get, clock.now())
        if facts is None:
            return item
        robots = self.robots
        if robots is not None:
            unread = robots.unread(facts)
            if unread and recorder.crawler.crawling:
                return self._record_checked(item, facts, robots, unread)
            checked = robots.item_facts(facts, recorder.reporter)
            if checked is None:
                return item
            facts = checked
        self._record(facts)
        return item

    async def _record_checked(
        self, item: Any, facts: UrlFacts, robots: RobotsRules, unread: set[str]
    ) -> Any:
        read = await robots.read(unread)
        checked = robots.item_facts(facts, self.recorder.reporter, read)
        if checked is not None and self.recorder.store is not None:
            self._record(checked)
        return item

    def _record(self, facts: UrlFacts) -> None:
        recorder = self.recorder
        if recorder.record(facts, from_item=True):
            recorder.stats.inc_value(ITEMS_RECORDED)


def _as_mapping(raw: object) -> Mapping[str, object] | None:
    """A nested item (``news`` given as an item object) read as a mapping."""
    return ItemAdapter(raw).asdict() if ItemAdapter.is_item(raw) else None
