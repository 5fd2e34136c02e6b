"""SitemapItemPipeline: lets spiders add or correct a URL's facts through their items."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from ..sitemaps.records import RecordReader
from ..stats import ITEMS_RECORDED
from .exporter import SitemapExporter

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from .recorder import Recorder

__all__ = ["SitemapItemPipeline"]


class SitemapItemPipeline:
    """Reads the sitemap fields (``loc``, ``lastmod``, ``changefreq``, ``priority``,
    ``images``, ``videos``, ``news``) from any item that has a ``loc``; validates each,
    drops a bad one with a warning and a count, and merges the rest into that URL's entry
    (adding the URL if no response recorded it). The item always passes through unchanged."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._reader = RecordReader(recorder.config.url_policy, recorder.reporter, _as_mapping)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapExporter.required_by(crawler, cls.__name__).recorder)

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
        facts = self._reader.facts(adapter.get, datetime.now(timezone.utc))
        if facts is not None and recorder.record(facts, from_item=True):
            recorder.stats.inc_value(ITEMS_RECORDED)
        return item


def _as_mapping(raw: object) -> Mapping[str, object] | None:
    """A nested item (``news`` given as an item object) read as a mapping."""
    return ItemAdapter(raw).asdict() if ItemAdapter.is_item(raw) else None
