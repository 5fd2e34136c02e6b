"""Read-back by real consumers: Scrapy's sitemap parser on every file, and a SitemapSpider
that starts from the generated robots.txt lines, served by the sites themselves (P15)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from .helpers import files, read_bytes

if TYPE_CHECKING:
    from pathlib import Path


class ReadBackSpider(SitemapSpider):
    name = "readback"
    found: list[str]

    def parse(self, response: Any) -> Any:
        self.found.append(response.url)
        return None


@deferred_f_from_coro_f
async def test_scrapy_sitemap_parser_reads_every_file(site, crawl, tmp_path: Path) -> None:
    await crawl(start_url=site.a.url("/"))
    out = tmp_path / "out"
    for origin, expected in site.expected().items():
        index = Sitemap(read_bytes(out / origin / "sitemap.xml"))
        assert index.type == "sitemapindex"
        listed: list[str] = []
        for entry in index:
            assert entry["lastmod"]  # P10: every index entry says when the file changed
            urlset = Sitemap(read_bytes(out / origin / entry["loc"].rsplit("/", 1)[1]))
            assert urlset.type == "urlset"
            listed.extend(url["loc"] for url in urlset)
        assert sorted(listed) == sorted(expected)
        robots = (out / origin / "robots.txt").read_bytes()
        base = f"http://{origin.split('_')[1]}:{origin.rsplit('_', 1)[1]}/"
        assert list(sitemap_urls_from_robots(robots, base_url=base)) == [f"{base}sitemap.xml"]
    assert len(files(out)) == 9  # 2 x (index, urlset, robots.txt, manifest) + the state


@deferred_f_from_coro_f
async def test_sitemap_spider_discovers_exactly_the_crawled_urls(
    site, crawl, tmp_path: Path
) -> None:
    await crawl(start_url=site.a.url("/"))
    out = tmp_path / "out"
    site.a.static, site.b.static = out / site.a.origin.name, out / site.b.origin.name
    try:
        found: list[str] = []
        await crawl(
            {"SITEMAPGEN_ENABLED": False},
            spidercls=ReadBackSpider,
            sitemap_urls=[site.a.url("/robots.txt"), site.b.url("/robots.txt")],
            found=found,
        )
    finally:
        site.a.static = site.b.static = None
    expected = [loc for urls in site.expected().values() for loc in urls]
    assert sorted(found) == sorted(expected)
