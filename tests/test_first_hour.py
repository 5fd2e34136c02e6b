"""What a new user sees in the first hour (issue 38): the close log that explains a crawl
whose pages were (almost) all left out, status exclusions counted with any spider,
canonicals that are no http(s) URL, and the getting-started spider, run as the page
gives it, on a site with mailto:, tel: and javascript: links."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import (
    PlainSpider,
    Route,
    SiteServer,
    crawl_site,
    html,
    log_messages,
    write_project,
)

if TYPE_CHECKING:
    import scrapy

DOCS = Path(__file__).parents[1] / "docs"


class ErrbackSpider(PlainSpider):
    """Sends every response with an errback: a 404 reaches ``process_spider_output``."""

    def parse(self, response: scrapy.http.Response) -> Any:
        yield from response.follow_all(css="a", errback=self.failed)

    def failed(self, failure: Any) -> None:
        pass


class HandlesNotFound(PlainSpider):
    """Takes 404s in its callback (``handle_httpstatus_list``)."""

    handle_httpstatus_list: ClassVar[list[int]] = [404]


def info_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and r.name.startswith("scrapy_sitemapgen")
    ]


def links(*hrefs: str) -> str:
    return html(body="".join(f"<a href='{href}'>x</a>" for href in hrefs))


@pytest.fixture
def canonicalised() -> Any:
    """Every page names a page of another host as its canonical (a mirror of a site)."""
    server = SiteServer()
    for path in ("/", "/a", "/b", "/c"):
        head = f"<link rel='canonical' href='https://docs.example.org{path}'>"
        body = "".join(f"<a href='{p}'>x</a>" for p in ("/a", "/b", "/c"))
        server.routes[path] = Route(body=html(head, body))
    yield server
    server.close()


@pytest.fixture
def broken_links() -> Any:
    """Two good pages, three links that answer 404, one noindex page."""
    server = SiteServer()
    server.routes["/"] = Route(body=links("/a", "/gone1", "/gone2", "/gone3", "/hidden"))
    server.routes["/a"] = Route(body=links("/"))
    server.routes["/hidden"] = Route(body=html("<meta name='robots' content='noindex'>"))
    yield server
    server.close()


@deferred_f_from_coro_f
async def test_a_crawl_whose_every_page_is_canonicalised_elsewhere_says_why(
    canonicalised: SiteServer, crawl, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    crawler = await crawl({}, spidercls=PlainSpider, start_url=canonicalised.url("/"))
    assert crawler.stats.get_value("sitemapgen/excluded/canonical_elsewhere") == 4
    lines = info_lines(caplog)
    assert lines[-2:] == [
        f"Sitemap: {canonicalised.root}/: 4 pages crawled, none listed: canonical_elsewhere 4 "
        "(canonicals name docs.example.org); what decides canonical_elsewhere: "
        "SITEMAPGEN_RESPECT_CANONICAL, SITEMAPGEN_HOST_ALIASES, SITEMAPGEN_ORIGIN_MAP",
        "Sitemap: no page was recorded, so no sitemap was written: every page was left out "
        "(why: the lines above)",
    ]


@deferred_f_from_coro_f
async def test_a_crawl_that_leaves_most_pages_out_says_why(
    broken_links: SiteServer, crawl, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    crawler = await crawl({}, spidercls=PlainSpider, start_url=broken_links.url("/"))
    assert crawler.stats.get_value("sitemapgen/excluded/status/404") == 3
    assert crawler.stats.get_value("sitemapgen/excluded/noindex") == 1
    explained = [line for line in info_lines(caplog) if "pages crawled" in line]
    assert explained == [
        f"Sitemap: {broken_links.root}/: 6 pages crawled, 2 listed, 4 left out: status/404 3, "
        "noindex 1; what decides status/404: no setting (fix the links, or the pages they "
        "point to)"
    ]


@deferred_f_from_coro_f
async def test_a_crawl_that_lists_most_pages_gets_no_such_line(crawl, caplog) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    with SiteServer() as server:
        server.routes["/"] = Route(body=links("/a", "/gone"))
        server.routes["/a"] = Route(body=links("/"))
        crawler = await crawl({}, spidercls=PlainSpider, start_url=server.url("/"))
    assert crawler.stats.get_value("sitemapgen/excluded/status/404") == 1
    assert crawler.stats.get_value("sitemapgen/urls/written") == 2
    assert not [line for line in info_lines(caplog) if "pages crawled" in line]


@pytest.mark.parametrize(
    ("spidercls", "settings"),
    [
        (PlainSpider, {}),
        (PlainSpider, {"SITEMAPGEN_AUDIT": True}),
        (ErrbackSpider, {}),
        (ErrbackSpider, {"SITEMAPGEN_AUDIT": True}),
        (HandlesNotFound, {}),
    ],
    ids=["plain", "plain-audit", "errback", "errback-audit", "handle_httpstatus_list"],
)
@deferred_f_from_coro_f
async def test_each_404_is_counted_once_whatever_the_spider(
    spidercls: type, settings: dict[str, Any], crawl, tmp_path: Path
) -> None:
    with SiteServer() as server:
        server.routes["/"] = Route(body=links("/a", "/gone", "/moved"))
        server.routes["/a"] = Route(body=links("/"))
        server.routes["/moved"] = Route(301, headers={"Location": "/gone2"})
        settings = {**settings, "SITEMAPGEN_REPORT_DIR": str(tmp_path / "report")}
        crawler = await crawl(settings, spidercls=spidercls, start_url=server.url("/"))
    stats = crawler.stats.get_stats()
    # /gone, and /gone2 that /moved redirects to (the redirect is no exclusion of its own).
    assert stats["sitemapgen/excluded/status/404"] == 2
    assert not [key for key in stats if key.startswith("sitemapgen/excluded/status/3")]
    assert stats["sitemapgen/urls/written"] == 2


@pytest.mark.parametrize(
    "canonical", ["file:///srv/docs/index.html", "javascript:void(0)", "ftp://example.org/x"]
)
@deferred_f_from_coro_f
async def test_a_canonical_that_is_no_http_url_is_counted_and_passed_over(
    canonical: str, crawl, tmp_path: Path
) -> None:
    from .helpers import read_urls

    with SiteServer() as server:
        server.routes["/"] = Route(body=html(f"<link rel='canonical' href='{canonical}'>"))
        crawler = await crawl({}, spidercls=PlainSpider, start_url=server.url("/"))
    assert crawler.stats.get_value("sitemapgen/skipped/canonical_not_http") == 1
    assert crawler.stats.get_value("sitemapgen/excluded/canonical_elsewhere") is None
    assert set(read_urls(tmp_path / "out")[server.origin.name]) == {server.url("/")}


@deferred_f_from_coro_f
async def test_an_http_canonical_beside_a_file_one_still_decides(crawl, tmp_path: Path) -> None:
    with SiteServer() as server:
        head = (
            "<link rel='canonical' href='file:///x.html'>"
            "<link rel='canonical' href='https://docs.example.org/'>"
        )
        server.routes["/"] = Route(body=html(head))
        crawler = await crawl({}, spidercls=PlainSpider, start_url=server.url("/"))
    assert crawler.stats.get_value("sitemapgen/skipped/canonical_not_http") == 1
    assert crawler.stats.get_value("sitemapgen/excluded/canonical_elsewhere") == 1


def test_exclusions_per_origin_are_bounded() -> None:
    from scrapy_sitemapgen.sitemaps.exclusions import OriginExclusions

    counts = OriginExclusions(limit=2)
    for n in range(5):
        for _ in range(n + 1):
            counts.add("noindex", f"https://h{n}.example/p")
    counts.add("canonical_elsewhere", "https://h0.example/q", "https://mirror.example/q")
    counts.add("news_too_old", "https://h0.example/q")  # the page stays listed
    assert counts.counts == {
        "https://h0.example/": {"noindex": 1, "canonical_elsewhere": 1},
        "https://h1.example/": {"noindex": 2},
    }
    assert counts.rest == {"noindex": 3 + 4 + 5}
    assert counts.hosts == {"https://h0.example/": ["mirror.example"]}


def test_a_build_tally_keeps_its_exclusions_per_origin() -> None:
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from scrapy_sitemapgen.sitemaps.exclusions import OriginExclusions
    from scrapy_sitemapgen.stats import Reporter, Tally

    first, second = Tally(), Tally()
    first.exclude("denied", "https://a.example/1")
    second.exclude("denied", "https://a.example/2")
    second.exclude("not_allowed", "https://b.example/1")
    first.update(second)
    reporter = Reporter(MemoryStatsCollector(get_crawler()), logging.getLogger("test"))
    reporter.by_origin = OriginExclusions(limit=20)
    first.replay(reporter)
    assert reporter.by_origin.counts == {
        "https://a.example/": {"denied": 2},
        "https://b.example/": {"not_allowed": 1},
    }
    assert reporter.stats.get_value("sitemapgen/excluded/denied") == 2


def test_every_exclusion_reason_says_what_decides_it() -> None:
    """The reasons docs/stats.rst lists, each with a line in the one table."""
    from scrapy_sitemapgen.sitemaps.exclusions import GOVERNED_BY

    text = (DOCS / "stats.rst").read_text()
    table = text.split("Pages not listed:", 1)[1].split(".. stat::", 1)[0]
    reasons = set(re.findall(r"^   \* - ``([a-z_/<>]+)``", table, re.MULTILINE))
    assert "canonical_elsewhere" in reasons and "status/<code>" in reasons
    assert reasons == set(GOVERNED_BY)


# --- the getting-started spider, as the page gives it -----------------------------------------


def getting_started_spider() -> str:
    """The python block under "Write a spider that visits the site"."""
    text = (DOCS / "getting-started.rst").read_text()
    section = text.split("Write a spider that visits the site", 1)[1]
    block = section.split(".. code-block:: python\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line[4:])
    return "\n".join(lines).strip() + "\n"


def test_the_getting_started_spider_survives_a_real_site(tmp_path: Path) -> None:
    code = getting_started_spider()
    assert "CrawlSpider" in code  # the block found is the spider
    with SiteServer() as server:
        server.routes["/"] = Route(
            body=links(
                "/a",
                "mailto:someone@example.com",
                "javascript:void(0)",
                "tel:+15550100",
                "/missing",
                "/b",
            )
        )
        server.routes["/a"] = Route(body=links("mailto:x@example.com", "/c", "tel:123"))
        server.routes["/b"] = Route(body=links("javascript:alert(1)", "/"))
        server.routes["/c"] = Route(body=links("/"))
        # The page's address, replaced by this site's, as the page says to.
        code = code.replace("https://www.example.com/", server.url("/")).replace(
            "www.example.com", "127.0.0.1"
        )
        project = write_project(tmp_path / "project")
        (project / "proj" / "spiders" / "site.py").write_text(code)
        out = tmp_path / "out"
        done = crawl_site(project, server, "-s", f"SITEMAPGEN_URI={out}")
    log = done.stderr
    assert done.returncode == 0, log
    assert "Traceback" not in log
    assert log_messages(log, "ERROR") == []
    assert {"/", "/a", "/b", "/c", "/missing"} <= set(server.requested)
    urls = (out / server.origin.name).glob("sitemap-*.xml*")
    import gzip

    listed = b"".join(gzip.decompress(p.read_bytes()) for p in urls)
    for path in ("/", "/a", "/b", "/c"):
        assert f"<loc>{server.url(path)}</loc>".encode() in listed
    assert b"/missing" not in listed
    assert "'sitemapgen/excluded/status/404': 1" in log
