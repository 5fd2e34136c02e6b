"""The add-on, the item pipeline and the middleware, built the way Scrapy builds them and
fed real Response and item objects."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_sitemapgen import (
    Addon,
    SitemapExporter,
    SitemapItem,
    SitemapItemPipeline,
    SitemapSpiderMiddleware,
)
from scrapy_sitemapgen.sitemaps.facts import News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.urls import origin_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

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
    if exporter.recorder.store is not None:
        exporter.recorder.store.close()


def stored(exporter: SitemapExporter) -> list[UrlFacts]:
    assert exporter.recorder.store is not None
    return [
        e for o in exporter.recorder.store.origins() for e in exporter.recorder.store.entries(o)
    ]


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
        (
            TextResponse(PAGE, headers={"Content-Type": "text/plain"}, request=Request(PAGE)),
            "content_type",
        ),
        (
            HtmlResponse(
                PAGE,
                headers={"Content-Type": "text/html"},
                request=Request(PAGE, meta={"dont_sitemap": True}),
            ),
            "dont_sitemap",
        ),
    ],
)
def test_middleware_excludes(exporter, response, reason) -> None:
    build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)._record(response)
    assert stored(exporter) == []
    assert exporter.stats.get_value(f"sitemapgen/excluded/{reason}") == 1


@deferred_f_from_coro_f
async def test_pages_recorded_counted_in_batches_and_exactly_at_close(exporter) -> None:
    """``sitemapgen/pages/recorded`` is added to by the hundred during the crawl (Scrapy's
    inc_value costs 2 to 4 % of recording a page) and is exact once the spider has
    closed, whatever the remainder."""
    middleware = build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)
    for number in range(250):
        url = f"{PAGE}/{number}"
        middleware._record(
            HtmlResponse(url, headers={"Content-Type": "text/html"}, request=Request(url))
        )
    assert exporter.stats.get_value("sitemapgen/pages/recorded") == 200
    await exporter.spider_closed(exporter.crawler.spider, "shutdown")
    assert exporter.stats.get_value("sitemapgen/pages/recorded") == 250


def test_middleware_records_without_a_request(exporter) -> None:
    """A response built by a spider (no request) still has a URL worth listing."""
    response = HtmlResponse(
        PAGE + "#frag", headers={"Content-Type": "application/xhtml+xml; charset=utf-8"}
    )
    build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)._record(response)
    assert stored(exporter) == [UrlFacts(PAGE)]
    assert origin_of(PAGE).name == "https_www.example.com_443"


def test_addon_adds_the_three_components_without_overriding_user_orders() -> None:
    settings = Settings({"SPIDER_MIDDLEWARES": {"scrapy_sitemapgen.SitemapSpiderMiddleware": 10}})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES") == {
        "scrapy_sitemapgen.SitemapSpiderMiddleware": 10
    }
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


# --- item media and news (G7), URL policy on items (G3, G4) -----------------------------

CDN = "https://cdn.example.net"
NEWS_FIELDS = {
    "publication_name": "The Example Times",
    "publication_language": "en",
    "publication_date": "2024-05-06",
    "title": "Companies A, B in Merger Talks",
}


@pytest.fixture
def exporter_with(tmp_path: Path) -> Iterator[Callable[..., SitemapExporter]]:
    """``exporter_with(**settings)``: an opened exporter built from those settings."""
    opened: list[SitemapExporter] = []

    def build(**settings: Any) -> SitemapExporter:
        crawler = get_crawler(
            settings_dict={
                "EXTENSIONS": {SitemapExporter: 500},
                "SITEMAPGEN_URI": str(tmp_path / "out"),
                "JOBDIR": str(tmp_path / f"job{len(opened)}"),
                **settings,
            }
        )
        exporter = crawler.get_extension(SitemapExporter)
        assert exporter is not None
        exporter.spider_opened()
        opened.append(exporter)
        return exporter

    yield build
    for exporter in opened:
        if exporter.recorder.store is not None:
            exporter.recorder.store.close()


def skipped_stats(exporter: SitemapExporter) -> dict[str, int]:
    prefix = "sitemapgen/skipped/"
    return {
        k[len(prefix) :]: v for k, v in exporter.stats.get_stats().items() if k.startswith(prefix)
    }


def test_item_images_recorded(exporter) -> None:
    item = {
        "loc": PAGE,
        "images": [
            f"{CDN}/a.jpg",
            f"{CDN}/b c.jpg",  # percent-encoded like a loc (P3)
            f"{CDN}/a.jpg",  # a duplicate
            f"{CDN.upper()}/D.jpg",  # host case folded, path case kept
        ],
    }
    assert pipeline_for(exporter).process_item(item) is item
    assert stored(exporter) == [
        UrlFacts(PAGE, images=(f"{CDN}/a.jpg", f"{CDN}/b%20c.jpg", f"{CDN}/D.jpg"))
    ]
    assert skipped_stats(exporter) == {}


def test_item_images_as_a_tuple_or_generator(exporter) -> None:
    pipeline_for(exporter).process_item({"loc": PAGE, "images": (f"{CDN}/a.jpg",)})
    pipeline_for(exporter).process_item(
        {"loc": PAGE + "2", "images": (u for u in [f"{CDN}/b.jpg"])}
    )
    assert [e.images for e in stored(exporter)] == [(f"{CDN}/a.jpg",), (f"{CDN}/b.jpg",)]


@pytest.mark.parametrize(
    "images",
    [f"{CDN}/a.jpg", b"https://cdn.example.net/a.jpg", {"loc": f"{CDN}/a.jpg"}, 5],
    ids=repr,
)
def test_item_images_not_a_list(exporter, images) -> None:
    # A string is not a list of one URL: it is refused, not read character by character.
    pipeline_for(exporter).process_item({"loc": PAGE, "images": images, "priority": 0.5})
    assert stored(exporter) == [UrlFacts(PAGE, priority="0.5")]  # the other fields still count
    assert skipped_stats(exporter) == {"item_bad_images": 1}


def test_item_bad_image_url_dropped_alone(exporter) -> None:
    item = {
        "loc": PAGE,
        "images": ["/relative.png", f"{CDN}/ok.jpg", "javascript:alert(1)", None, 7],
    }
    pipeline_for(exporter).process_item(item)
    assert stored(exporter) == [UrlFacts(PAGE, images=(f"{CDN}/ok.jpg",))]
    assert skipped_stats(exporter) == {"item_bad_image": 4}


ITEM_VIDEO = {
    "thumbnail_loc": f"{CDN}/thumbs/123.jpg",
    "title": "Grilling steaks for summer",
    "description": "Alkis shows you how to get perfectly done steaks every time",
    "content_loc": f"{CDN}/video/123.mp4",
    "player_loc": "https://www.example.com/player?video=123",
    "duration": "600",
    "publication_date": "2024-04-30T12:00:00+02:00",
}


def test_item_videos_recorded(exporter) -> None:
    pipeline_for(exporter).process_item({"loc": PAGE, "videos": [ITEM_VIDEO]})
    assert stored(exporter) == [
        UrlFacts(
            PAGE,
            videos=(
                Video(
                    f"{CDN}/thumbs/123.jpg",
                    "Grilling steaks for summer",
                    "Alkis shows you how to get perfectly done steaks every time",
                    f"{CDN}/video/123.mp4",
                    "https://www.example.com/player?video=123",
                    600,
                    "2024-04-30T10:00:00+00:00",  # 12:00 at UTC+2
                ),
            ),
        )
    ]
    assert skipped_stats(exporter) == {}


@pytest.mark.parametrize(
    "bad",
    [
        {k: v for k, v in ITEM_VIDEO.items() if k != "thumbnail_loc"},
        {k: v for k, v in ITEM_VIDEO.items() if k not in ("content_loc", "player_loc")},
        {"title": "only a title"},
        f"{CDN}/video/123.mp4",  # a URL instead of a mapping
    ],
    ids=["no-thumbnail", "no-media-url", "title-only", "string"],
)
def test_item_incomplete_video_dropped_alone(exporter, bad) -> None:
    pipeline_for(exporter).process_item(
        {"loc": PAGE, "videos": [bad, ITEM_VIDEO], "changefreq": "daily"}
    )
    [entry] = stored(exporter)
    assert [v.content_loc for v in entry.videos] == [f"{CDN}/video/123.mp4"]
    assert entry.changefreq == "daily"
    assert skipped_stats(exporter) == {"item_video_incomplete": 1}


def test_item_videos_not_a_list(exporter) -> None:
    pipeline_for(exporter).process_item({"loc": PAGE, "videos": ITEM_VIDEO})
    assert stored(exporter) == [UrlFacts(PAGE)]
    assert skipped_stats(exporter) == {"item_bad_videos": 1}


def test_item_video_with_bad_duration_kept_without_it(exporter) -> None:
    pipeline_for(exporter).process_item(
        {"loc": PAGE, "videos": [{**ITEM_VIDEO, "duration": 28_801}]}
    )
    [entry] = stored(exporter)
    assert [(v.content_loc, v.duration) for v in entry.videos] == [(f"{CDN}/video/123.mp4", None)]
    assert skipped_stats(exporter) == {"item_video_bad_duration": 1}


@pytest.mark.parametrize(
    "item",
    [{"loc": PAGE, "news": NEWS_FIELDS}, SitemapItem(loc=PAGE, news=NEWS_FIELDS)],
    ids=["dict", "SitemapItem"],
)
def test_item_news_recorded(exporter, item) -> None:
    pipeline_for(exporter).process_item(item)
    news = News("The Example Times", "en", "2024-05-06", "Companies A, B in Merger Talks")
    assert stored(exporter) == [UrlFacts(PAGE, news=news)]
    assert exporter.recorder.store is not None
    assert list(exporter.recorder.store.news_entries(origin_of(PAGE))) == [
        UrlFacts(PAGE, news=news)
    ]


@pytest.mark.parametrize(
    ("news", "reason"),
    [
        ({**NEWS_FIELDS, "publication_language": "English"}, "item_news_bad_language"),
        ({**NEWS_FIELDS, "publication_language": "en-US"}, "item_news_bad_language"),
        ({k: v for k, v in NEWS_FIELDS.items() if k != "title"}, "item_news_incomplete"),
        ({**NEWS_FIELDS, "publication_date": "23/12/2008"}, "item_news_bad_date"),
        ("Companies A, B in Merger Talks", "item_news_incomplete"),
    ],
    ids=["English", "en-US", "no-title", "bad-date", "string"],
)
def test_item_bad_news_dropped_alone(exporter, news, reason) -> None:
    pipeline_for(exporter).process_item({"loc": PAGE, "news": news, "priority": "0.4"})
    assert stored(exporter) == [UrlFacts(PAGE, priority="0.4")]
    assert skipped_stats(exporter) == {reason: 1}
    assert exporter.recorder.store is not None
    assert list(exporter.recorder.store.news_entries(origin_of(PAGE))) == []


def test_item_news_bad_language_with_sitemap_item(exporter) -> None:
    pipeline_for(exporter).process_item(
        SitemapItem(loc=PAGE, news={**NEWS_FIELDS, "publication_language": "English"})
    )
    assert stored(exporter) == [UrlFacts(PAGE)]
    assert exporter.stats.get_value("sitemapgen/skipped/item_news_bad_language") == 1


@pytest.mark.parametrize(
    ("settings", "loc", "reason"),
    [
        ({"SITEMAPGEN_DENY": [r"/private/"]}, "https://www.example.com/private/a", "denied"),
        # Deny wins over allow.
        (
            {"SITEMAPGEN_ALLOW": ["/private/"], "SITEMAPGEN_DENY": [r"/private/"]},
            "https://www.example.com/private/a",
            "denied",
        ),
        ({"SITEMAPGEN_ALLOW": ["/blog/"]}, "https://www.example.com/shop/a", "not_allowed"),
    ],
)
def test_items_refused_by_the_patterns_are_not_recorded(
    exporter_with, settings, loc, reason
) -> None:
    exporter = exporter_with(**settings)
    item = {"loc": loc, "priority": 0.5, "images": [f"{CDN}/a.jpg"]}
    assert pipeline_for(exporter).process_item(item) is item
    assert stored(exporter) == []
    assert exporter.stats.get_value(f"sitemapgen/excluded/{reason}") == 1
    assert exporter.stats.get_value("sitemapgen/items/recorded") is None


def test_items_matching_the_allow_patterns_are_recorded(exporter_with) -> None:
    exporter = exporter_with(SITEMAPGEN_ALLOW=["/blog/"], SITEMAPGEN_DENY=[r"\?print"])
    pipeline_for(exporter).process_item({"loc": "https://www.example.com/blog/a", "priority": 0.5})
    assert stored(exporter) == [UrlFacts("https://www.example.com/blog/a", priority="0.5")]


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("https://www.example.com/p?sid=abc&page=2", "https://www.example.com/p?page=2"),
        (
            "https://www.example.com/cart;jsessionid=0AB12C?item=7",
            "https://www.example.com/cart?item=7",
        ),
        ("https://www.example.com/p?PHPSESSID=1", "https://www.example.com/p"),
    ],
)
def test_g4_item_loc_stored_without_session_id(exporter, loc, expected) -> None:
    pipeline_for(exporter).process_item({"loc": loc, "priority": 0.5})
    assert stored(exporter) == [UrlFacts(expected, priority="0.5")]


def test_g4_page_and_item_with_different_session_ids_are_one_entry(exporter) -> None:
    middleware = build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)
    url = "https://www.example.com/cart;jsessionid=0AB12C?item=7"
    middleware._record(
        HtmlResponse(url, headers={"Content-Type": "text/html"}, request=Request(url))
    )
    item = {"loc": "https://www.example.com/cart?item=7&PHPSESSID=99", "changefreq": "daily"}
    pipeline_for(exporter).process_item(item)
    assert stored(exporter) == [UrlFacts("https://www.example.com/cart?item=7", changefreq="daily")]


def test_g3_item_loc_host_alias(exporter_with) -> None:
    exporter = exporter_with(SITEMAPGEN_HOST_ALIASES={"example.com": "www.example.com"})
    pipeline_for(exporter).process_item({"loc": "https://example.com/a", "priority": 0.5})
    assert stored(exporter) == [UrlFacts("https://www.example.com/a", priority="0.5")]


# --- the middleware's cost: Scrapy's cached selector, or none at all --------------------


class CountingResponse(HtmlResponse):
    """An HtmlResponse that records every ``selector`` it hands out (Scrapy builds and caches
    it on first access, so one object means one parse)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.selectors: list[Any] = []

    @property
    def selector(self) -> Any:
        selector = super().selector
        self.selectors.append(selector)
        return selector


RICH_PAGE = (
    b"<!DOCTYPE html><html><head><title>Roses</title>"
    b'<meta name="robots" content="noindex">'
    b'<link rel="canonical" href="https://www.example.com/elsewhere">'
    b'<meta http-equiv="refresh" content="600; url=https://www.example.com/elsewhere">'
    b'<link rel="alternate" hreflang="de" href="https://www.example.com/de/p">'
    b'<meta property="article:modified_time" content="2024-01-01T00:00:00Z">'
    b'<meta property="og:video" content="https://cdn.example.net/v.mp4">'
    b'</head><body><h1>Pruning</h1><img src="/img/rose.jpg"></body></html>'
)
ALL_PAGE_FACTS_OFF = {
    "SITEMAPGEN_IMAGES": False,
    "SITEMAPGEN_VIDEOS": False,
    "SITEMAPGEN_ALTERNATES": False,
    "SITEMAPGEN_RESPECT_NOINDEX": False,
    "SITEMAPGEN_RESPECT_CANONICAL": False,
    "SITEMAPGEN_RESPECT_META_REFRESH": False,
    "SITEMAPGEN_LASTMOD_SOURCES": ["header"],
    "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": False,
    "SITEMAPGEN_DEDUPE_CONTENT": False,
}


def test_switched_off_page_facts_build_no_selector(exporter_with) -> None:
    exporter = exporter_with(**ALL_PAGE_FACTS_OFF)
    response = CountingResponse(
        PAGE,
        body=RICH_PAGE,
        headers={
            "Content-Type": "text/html; charset=utf-8",
            "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT",
        },
        request=Request(PAGE),
    )
    build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)._record(response)
    # Listed (noindex, canonical and refresh are not looked at), lastmod from the header only.
    assert stored(exporter) == [UrlFacts(PAGE, "2015-10-21T07:28:00+00:00")]
    assert response.selectors == []


@deferred_f_from_coro_f
async def test_middleware_and_callback_share_one_selector(exporter) -> None:
    middleware = build_from_crawler(SitemapSpiderMiddleware, exporter.crawler)
    body = RICH_PAGE.replace(b'<meta name="robots" content="noindex">', b"").replace(
        b"https://www.example.com/elsewhere", PAGE.encode()
    )
    response = CountingResponse(
        PAGE, body=body, headers={"Content-Type": "text/html"}, request=Request(PAGE)
    )
    seen_before_callback: list[int] = []

    async def callback() -> AsyncIterator[dict[str, Any]]:
        seen_before_callback.append(len(response.selectors))
        yield {"title": response.css("title::text").get()}
        yield {"h1": response.css("h1::text").get()}

    output = [x async for x in middleware.process_spider_output(response, callback())]
    assert output == [{"title": "Roses"}, {"h1": "Pruning"}]
    # The middleware read the page through response.selector before the callback ran...
    assert seen_before_callback[0] >= 1
    # ... and the callback's two css() calls got that same object: one parse per page.
    assert len(response.selectors) >= seen_before_callback[0] + 2
    first = response.selectors[0]
    assert all(selector is first for selector in response.selectors)
    [entry] = stored(exporter)
    assert entry.images == ("https://www.example.com/img/rose.jpg",)
    assert entry.lastmod == "2024-01-01T00:00:00+00:00"
