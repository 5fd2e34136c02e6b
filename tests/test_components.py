"""The add-on, the item pipeline and the middleware, built the way Scrapy builds them and
fed real Response and item objects."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import scrapy
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_sitemapgen import (
    Addon,
    SitemapExporter,
    SitemapItem,
    SitemapItemPipeline,
    SitemapSpiderMiddleware,
)
from scrapy_sitemapgen.facts import UrlFacts
from scrapy_sitemapgen.urls import origin_of

PAGE = "https://www.example.com/p"


@pytest.fixture
def exporter(tmp_path: Path) -> Iterator[SitemapExporter]:
    crawler = get_crawler(
        settings_dict={
            "EXTENSIONS": {SitemapExporter: 500},
            "SITEMAPGEN_URI": str(tmp_path / "out"),
            "JOBDIR": str(tmp_path / "job"),
        }
    )
    exporter = crawler.get_extension(SitemapExporter)
    assert exporter is not None
    exporter.spider_opened()
    yield exporter
    if exporter.store is not None:
        exporter.store.close()


def stored(exporter: SitemapExporter) -> list[UrlFacts]:
    assert exporter.store is not None
    return [e for o in exporter.store.origins() for e in exporter.store.entries(o)]


def pipeline_for(exporter: SitemapExporter) -> SitemapItemPipeline:
    return build_from_crawler(SitemapItemPipeline, exporter.crawler)


class ProductItem(scrapy.Item):
    loc = scrapy.Field()
    priority = scrapy.Field()
    name = scrapy.Field()


@dataclass
class Article:
    loc: str
    lastmod: str


@pytest.mark.parametrize(
    "item",
    [
        {"loc": PAGE, "lastmod": "2024-05-01", "changefreq": "Weekly", "priority": 0.75},
        SitemapItem(loc=PAGE, lastmod="2024-05-01", changefreq="weekly", priority="0.75"),
    ],
)
def test_item_facts_recorded_and_item_passed_through(exporter, item) -> None:
    before = repr(item)
    assert pipeline_for(exporter).process_item(item) is item
    assert repr(item) == before  # the item is not touched
    assert stored(exporter) == [UrlFacts(PAGE, "2024-05-01", "weekly", "0.75")]
    assert exporter.stats.get_value("sitemapgen/items/recorded") == 1


def test_any_item_type_with_loc_works(exporter) -> None:
    pipeline = pipeline_for(exporter)
    pipeline.process_item(ProductItem(loc=PAGE, priority=1, name="x"))
    pipeline.process_item(Article(loc="https://www.example.com/a", lastmod="2024-01-02T03:04:05Z"))
    assert stored(exporter) == [
        UrlFacts("https://www.example.com/a", "2024-01-02T03:04:05+00:00"),
        UrlFacts(PAGE, None, None, "1.0"),
    ]


def test_items_without_loc_are_ignored(exporter) -> None:
    pipeline = pipeline_for(exporter)
    for item in ({"title": "x"}, {"loc": ""}, {"loc": None, "priority": 0.5}):
        assert pipeline.process_item(item) is item
    assert stored(exporter) == []
    assert exporter.stats.get_value("sitemapgen/items/recorded") is None


def test_bad_item_values_dropped_with_warning_and_count(exporter, caplog) -> None:
    """P4-P6: each bad value is dropped alone; the good ones are kept."""
    item = {"loc": PAGE, "lastmod": "yesterday", "changefreq": "sometimes", "priority": 1.5}
    with caplog.at_level(logging.WARNING):
        pipeline_for(exporter).process_item(item)
    assert stored(exporter) == [UrlFacts(PAGE)]
    stats = exporter.stats.get_stats()
    assert stats["sitemapgen/skipped/item_bad_lastmod"] == 1
    assert stats["sitemapgen/skipped/item_bad_changefreq"] == 1
    assert stats["sitemapgen/skipped/item_bad_priority"] == 1
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'yesterday'" in m and PAGE in m for m in messages)
    assert len(messages) == 3


def test_bad_item_loc_is_skipped(exporter) -> None:
    pipeline_for(exporter).process_item({"loc": "/relative/only", "priority": 0.5})
    pipeline_for(exporter).process_item({"loc": "https://user:pw@example.com/"})
    assert stored(exporter) == []
    assert exporter.stats.get_value("sitemapgen/skipped/item_bad_scheme") == 1
    assert exporter.stats.get_value("sitemapgen/skipped/item_userinfo") == 1


def test_item_lastmod_beats_page_lastmod_in_either_order(exporter) -> None:
    middleware = build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)
    pipeline = pipeline_for(exporter)
    headers = {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT", "Content-Type": "text/html"}
    pipeline.process_item({"loc": PAGE, "lastmod": "2020-02-02"})
    middleware._record(HtmlResponse(PAGE, headers=headers, request=Request(PAGE)))
    other = "https://www.example.com/q"
    middleware._record(HtmlResponse(other, headers=headers, request=Request(other)))
    pipeline.process_item({"loc": other, "lastmod": "2020-02-02"})
    assert [e.lastmod for e in stored(exporter)] == ["2020-02-02", "2020-02-02"]


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (HtmlResponse(PAGE, status=404, request=Request(PAGE)), "status/404"),
        (HtmlResponse(PAGE, status=301, request=Request(PAGE)), "status/301"),
        (HtmlResponse(PAGE, status=204, request=Request(PAGE)), "status/204"),
        (TextResponse(PAGE, headers={"Content-Type": "text/plain"}, request=Request(PAGE)), "content_type"),
        (
            HtmlResponse(PAGE, headers={"Content-Type": "text/html"}, request=Request(PAGE, meta={"dont_sitemap": True})),
            "dont_sitemap",
        ),
    ],
)
def test_middleware_excludes(exporter, response, reason) -> None:
    build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)._record(response)
    assert stored(exporter) == []
    assert exporter.stats.get_value(f"sitemapgen/excluded/{reason}") == 1


def test_middleware_records_without_a_request(exporter) -> None:
    """A response built by a spider (no request) still has a URL worth listing."""
    response = HtmlResponse(PAGE + "#frag", headers={"Content-Type": "application/xhtml+xml; charset=utf-8"})
    build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)._record(response)
    assert stored(exporter) == [UrlFacts(PAGE)]
    assert origin_of(PAGE).name == "https_www.example.com_443"


def test_addon_adds_the_three_components_without_overriding_user_orders() -> None:
    settings = Settings({"SPIDER_MIDDLEWARES": {"scrapy_sitemapgen.SitemapSpiderMiddleware": 10}})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES") == {"scrapy_sitemapgen.SitemapSpiderMiddleware": 10}
    assert settings.getdict("ITEM_PIPELINES") == {SitemapItemPipeline: 900}
    assert settings.getdict("EXTENSIONS") == {SitemapExporter: 500}


def test_addon_disabled_adds_nothing() -> None:
    settings = Settings({"SITEMAPGEN_ENABLED": "false"})
    with pytest.raises(NotConfigured):
        Addon().update_settings(settings)
    assert settings.getdict("EXTENSIONS") == {}


def test_middleware_without_exporter_says_how_to_fix() -> None:
    crawler = get_crawler(settings_dict={})
    with pytest.raises(NotConfigured, match="ADDONS"):
        build_from_crawler(SitemapSpiderMiddleware, crawler)
