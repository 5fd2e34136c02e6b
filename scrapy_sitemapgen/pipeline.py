"""SitemapItemPipeline: lets spiders add or correct a URL's facts through their items."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from .exporter import SitemapExporter
from .facts import (
    FactRejected,
    News,
    UrlFacts,
    Video,
    make_news,
    make_video,
    parse_changefreq,
    parse_lastmod,
    parse_priority,
)
from .limits import MAX_IMAGES_PER_URL
from .stats import ITEMS_RECORDED
from .urls import UrlRejected, normalize_loc

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from .stats import Reporter

__all__ = ["SitemapItemPipeline"]

_SCALARS = (
    ("lastmod", parse_lastmod),
    ("changefreq", parse_changefreq),
    ("priority", parse_priority),
)


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
        facts = _ItemFacts(loc, adapter, reporter)
        if exporter.record(facts.build(), from_item=True):
            exporter.stats.inc_value(ITEMS_RECORDED)
        return item


class _ItemFacts:
    """Validation of one item's fields; every rejection is reported as ``item_<reason>``."""

    def __init__(self, loc: str, adapter: Any, reporter: Reporter) -> None:
        self.loc = loc
        self.adapter = adapter
        self.reporter = reporter
        self.now = datetime.now(timezone.utc)

    def issue(self, reason: str, value: object) -> None:
        self.reporter.skip(f"item_{reason}", self.loc, detail=value)

    def build(self) -> UrlFacts:
        values: dict[str, str] = {}
        for name, parse in _SCALARS:
            raw = self.adapter.get(name)
            if raw is None or raw == "":
                continue
            try:
                values[name] = parse(raw)
            except FactRejected as exc:
                self.issue(exc.reason, raw)
        return UrlFacts(
            self.loc,
            values.get("lastmod"),
            values.get("changefreq"),
            values.get("priority"),
            images=self.images(),
            videos=self.videos(),
            news=self.news(),
        )

    def _list(self, name: str) -> list[Any]:
        raw = self.adapter.get(name)
        if raw is None:
            return []
        if isinstance(raw, (str, bytes, Mapping)) or not hasattr(raw, "__iter__"):
            self.issue(f"bad_{name}", raw)
            return []
        return list(raw)

    def images(self) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for raw in self._list("images"):
            try:
                found[normalize_loc(raw)] = None
            except (UrlRejected, AttributeError, TypeError):
                self.issue("bad_image", raw)
        if len(found) > MAX_IMAGES_PER_URL:
            self.issue("images_over_limit", len(found))
        return tuple(found)[:MAX_IMAGES_PER_URL]

    def videos(self) -> tuple[Video, ...]:
        videos = []
        for raw in self._list("videos"):
            if not isinstance(raw, Mapping):
                self.issue("video_incomplete", raw)
                continue
            try:
                videos.append(make_video(raw, normalize_loc, self.issue, self.now))
            except FactRejected as exc:
                self.issue(exc.reason, exc.value)
        return tuple(videos)

    def news(self) -> News | None:
        raw = self.adapter.get("news")
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raw = ItemAdapter(raw).asdict() if ItemAdapter.is_item(raw) else None
        if raw is None:
            self.issue("news_incomplete", self.adapter.get("news"))
            return None
        try:
            return make_news(raw, self.now)
        except FactRejected as exc:
            self.issue(exc.reason, exc.value)
            return None
