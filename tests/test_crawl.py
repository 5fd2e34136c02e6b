"""End to end: real crawls of the two-origin site, the sitemaps read back from disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen import SitemapExporter, SitemapItemPipeline, SitemapSpiderMiddleware

from .helpers import BASE_SETTINGS, NS, SiteSpider, assert_valid, files, lastmods, read_urls

if TYPE_CHECKING:
    from pathlib import Path


def _collect_items(crawler) -> list:
    items: list = []

    def on_item(item: object) -> None:
        items.append(item)

    crawler.signals.connect(on_item, signal=signals.item_scraped, weak=False)
    return items


@deferred_f_from_coro_f
async def test_crawl_writes_one_valid_set_per_origin(site, crawl, tmp_path: Path) -> None:
    crawler = await crawl(start_url=site.a.url("/"))
    out = tmp_path / "out"
    a, b = site.a.origin.name, site.b.origin.name
    # P8, P15: per origin one index, its urlset(s), the robots.txt lines and the manifest;
    # beside them the state that makes the next run incremental; nothing else.
    assert files(out) == {
        f"{a}/sitemap.xml",
        f"{a}/sitemap-1.xml.gz",
        f"{a}/robots.txt",
        f"{a}/manifest.json",
        f"{b}/sitemap.xml",
        f"{b}/sitemap-1.xml.gz",
        f"{b}/robots.txt",
        f"{b}/manifest.json",
        ".sitemapgen-state.sqlite3",
    }
    # Exact URL sets and lastmods (P3, P4): redirect under its final URL; 404, 500, PDF,
    # JSON and dont_sitemap pages absent; broken or missing Last-Modified -> no lastmod.
    got = lastmods(out)
    for name, urls in site.expected().items():
        assert got[name] == urls, sorted(set(got[name]) ^ set(urls))
    assert (out / a / "robots.txt").read_text() == f"Sitemap: {site.a.url('/sitemap.xml')}\n"
    assert (out / b / "robots.txt").read_text() == f"Sitemap: {site.b.url('/sitemap.xml')}\n"
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert stats["sitemapgen/urls/written"] == 12
    assert stats[f"sitemapgen/urls/written/{a}"] == 9
    assert stats[f"sitemapgen/urls/written/{b}"] == 3
    assert stats["sitemapgen/files/written"] == 4
    assert stats["sitemapgen/origins"] == 2
    assert stats["sitemapgen/pages/recorded"] == 12
    assert stats["sitemapgen/excluded/content_type"] == 2  # the PDF and the JSON
    assert stats["sitemapgen/excluded/dont_sitemap"] == 1
    assert stats["sitemapgen/skipped/bad_lastmod"] == 1
    assert stats["sitemapgen/skipped/url_too_long"] == 1  # P3: the 2,048-character URL
    assert stats["sitemapgen/excluded/status/404"] == 1  # reached us through the errback


@deferred_f_from_coro_f
async def test_item_facts_are_merged_and_validated(site, crawl, tmp_path: Path) -> None:
    crawler = await crawl(start_url=site.a.url("/"))
    urls = read_urls(tmp_path / "out")[site.a.origin.name]
    assert urls[site.a.url("/page2")] == {"lastmod": None, "changefreq": "daily", "priority": "0.8"}
    assert urls[site.a.url("/page1")] == {"lastmod": None, "changefreq": None, "priority": None}
    assert crawler.stats.get_value("sitemapgen/items/recorded") == 1


@deferred_f_from_coro_f
async def test_spider_output_is_unchanged(site, crawl, tmp_path: Path) -> None:
    """The same crawl with and without the extension yields the same items and requests."""
    seen: dict[bool, tuple[list, int]] = {}
    for enabled in (True, False):
        from scrapy.crawler import CrawlerRunner
        from scrapy.utils.defer import maybe_deferred_to_future

        runner = CrawlerRunner(
            {
                **BASE_SETTINGS,
                "SITEMAPGEN_ENABLED": enabled,
                "SITEMAPGEN_URI": str(tmp_path / str(enabled)),
            }
        )
        crawler = runner.create_crawler(SiteSpider)
        items = _collect_items(crawler)
        await maybe_deferred_to_future(runner.crawl(crawler, start_url=site.a.url("/")))
        seen[enabled] = (
            sorted(items, key=repr),
            crawler.stats.get_value("scheduler/enqueued"),
        )
    assert seen[True] == seen[False]
    # 16 pages answered 200 (12 listed, PDF, JSON, dont_sitemap, 2,048-character URL)
    # + the /page2 sitemap item
    assert len(seen[True][0]) == 17


@deferred_f_from_coro_f
async def test_disabled_installs_nothing(site, crawl, tmp_path: Path) -> None:
    crawler = await crawl({"SITEMAPGEN_ENABLED": False}, start_url=site.a.url("/"))
    assert crawler.get_extension(SitemapExporter) is None
    assert crawler.get_spider_middleware(SitemapSpiderMiddleware) is None
    assert crawler.get_item_pipeline(SitemapItemPipeline) is None
    assert not (tmp_path / "out").exists()
    assert not any(k.startswith("sitemapgen/") for k in crawler.stats.get_stats())


@deferred_f_from_coro_f
async def test_components_by_hand_without_addon(site, crawl, tmp_path: Path) -> None:
    settings = {
        "ADDONS": {},
        "SPIDER_MIDDLEWARES": {SitemapSpiderMiddleware: 950},
        "ITEM_PIPELINES": {SitemapItemPipeline: 900},
        "EXTENSIONS": {SitemapExporter: 500},
    }
    await crawl(settings, start_url=site.a.url("/"))
    assert lastmods(tmp_path / "out") == site.expected()


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("SITEMAPGEN_MAX_URLS", 0, "from 1 to 50,000"),
        ("SITEMAPGEN_MAX_BYTES", 60_000_000, "from 4,096 to 52,428,800"),
        ("SITEMAPGEN_BASE_URL", "not a url", "absolute"),
    ],
)
@deferred_f_from_coro_f
async def test_bad_setting_stops_the_crawl_before_it_starts(
    site, crawl, name, value, fragment
) -> None:
    with pytest.raises(ValueError, match=name) as info:
        await crawl({name: value}, start_url=site.a.url("/"))
    assert repr(value) in str(info.value)
    assert fragment in str(info.value)


@deferred_f_from_coro_f
async def test_split_at_max_urls_in_url_order(site, crawl, tmp_path: Path) -> None:
    """P7 with a low SITEMAPGEN_MAX_URLS: 9 URLs -> 3 + 3 + 3, in code-point order of loc."""
    await crawl({"SITEMAPGEN_MAX_URLS": 3, "SITEMAPGEN_GZIP": False}, start_url=site.a.url("/"))
    out = tmp_path / "out" / site.a.origin.name
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml",
        "sitemap-2.xml",
        "sitemap-3.xml",
        "sitemap.xml",
    ]
    expected = sorted(site.expected()[site.a.origin.name])
    from xml.etree import ElementTree

    listed = []
    for n in (1, 2, 3):
        root = ElementTree.fromstring(assert_valid(out / f"sitemap-{n}.xml"))
        listed.append([e.text for e in root.iter(f"{NS}loc")])
    assert listed == [expected[0:3], expected[3:6], expected[6:9]]
    index = ElementTree.fromstring(assert_valid(out / "sitemap.xml"))
    assert [e.text for e in index.iter(f"{NS}loc")] == [
        site.a.url(f"/sitemap-{n}.xml") for n in (1, 2, 3)
    ]


@deferred_f_from_coro_f
async def test_base_url_template_moves_file_locs(site, crawl, tmp_path: Path) -> None:
    """P13: files published on another host; the robots line still goes to each origin."""
    await crawl(
        {"SITEMAPGEN_BASE_URL": "https://cdn.example.com/sitemaps/%(origin)s"},
        start_url=site.a.url("/"),
    )
    a = site.a.origin.name
    robots = (tmp_path / "out" / a / "robots.txt").read_text()
    assert robots == f"Sitemap: https://cdn.example.com/sitemaps/{a}/sitemap.xml\n"
    index = (tmp_path / "out" / a / "sitemap.xml").read_text()
    assert f"<loc>https://cdn.example.com/sitemaps/{a}/sitemap-1.xml.gz</loc>" in index
