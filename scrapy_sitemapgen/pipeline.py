"""SitemapItemPipeline: lets spiders add or correct a URL's facts through their items."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from .exporter import SitemapExporter
from .facts import FactRejected, UrlFacts, parse_changefreq, parse_lastmod, parse_priority
from .stats import ITEMS_RECORDED
from .urls import UrlRejected, normalize_loc

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["SitemapItemPipeline"]

_PARSERS = (
    ("lastmod", parse_lastmod),
    ("changefreq", parse_changefreq),
    ("priority", parse_priority),
)


class SitemapItemPipeline:
    """Reads ``loc``, ``lastmod``, ``changefreq`` and ``priority`` from any item that has a
    ``loc``; validates each (P3-P6), drops a bad one with a warning and a count, and merges
    the rest into that URL's entry (adding the URL if no response recorded it). The item
    itself always passes through unchanged."""

    def __init__(self, exporter: SitemapExporter) -> None:
        self.exporter = exporter

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapExporter.required_by(crawler, cls.__name__))

    def process_item(self, item: Any) -> Any:
        exporter = self.exporter
        if exporter.store is None or not ItemAdapter.is_item(item):
            return item
        adapter = ItemAdapter(item)
        raw_loc = adapter.get("loc")
        if not raw_loc:
            return item
        reporter = exporter.reporter
        try:
            loc = normalize_loc(str(raw_loc))
        except UrlRejected as exc:
            reporter.skip(f"item_{exc.reason}", str(raw_loc))
            return item
        values: dict[str, str | None] = {}
        for name, parse in _PARSERS:
            raw = adapter.get(name)
            if raw is None or raw == "":
                continue
            try:
                values[name] = parse(raw)
            except FactRejected as exc:
                reporter.skip(f"item_{exc.reason}", loc, detail=raw)
        if exporter.record(UrlFacts(loc, **values), from_item=True):
            exporter.stats.inc_value(ITEMS_RECORDED)
        return item
