"""SitemapItemPipeline: lets spiders add or correct a URL's facts through their items."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from ..sitemaps.records import record_facts
from ..sitemaps.urls import UrlRejected
from ..stats import ITEMS_RECORDED
from .exporter import SitemapExporter

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["SitemapItemPipeline"]


class SitemapItemPipeline:
    """Reads the sitemap fields (``loc``, ``lastmod``, ``changefreq``, ``priority``,
    ``images``, ``videos``, ``news``) from any item that has a ``loc``; validates each,
    drops a bad one with a warning and a count, and merges the rest into that URL's entry
    (adding the URL if no response recorded it). The item always passes through unchanged."""

    def __init__(self, exporter: SitemapExporter) -> None:
        self.exporter = exporter

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapExporter.required_by(crawler, cls.__name__))

    def process_item(self, item: Any) -> Any:
        exporter = self.exporter
        if exporter.store is None:
            return item
        if type(item) is dict:  # the common case, and every record of a feed: no adapter needed
            adapter: Any = item
        elif ItemAdapter.is_item(item):
            adapter = ItemAdapter(item)
        else:
            return item
        raw_loc = adapter.get("loc")
        if not raw_loc:
            return item
        reporter = exporter.reporter
        policy = exporter.config.url_policy
        try:
            loc = policy.loc(str(raw_loc))
        except UrlRejected as exc:
            reporter.skip(f"item_{exc.reason}", str(raw_loc))
            return item
        refusal = policy.refusal(loc)
        if refusal is not None:
            reporter.exclude(refusal, loc)
            return item

        def issue(reason: str, value: object) -> None:
            reporter.skip(f"item_{reason}", loc, detail=value)

        facts = record_facts(loc, adapter.get, issue, datetime.now(timezone.utc), _as_mapping)
        if exporter.record(facts, from_item=True):
            exporter.stats.inc_value(ITEMS_RECORDED)
        return item


def _as_mapping(raw: object) -> Mapping[str, object] | None:
    """A nested item (``news`` given as an item object) read as a mapping."""
    return ItemAdapter(raw).asdict() if ItemAdapter.is_item(raw) else None
