"""robots.txt as each engine reads it (issue 40, item 1): a local site whose robots.txt has
different groups for Googlebot, Bingbot, Googlebot-Image and ``*``, and a second origin
(a CDN) with its own, crawled with ``ROBOTSTXT_OBEY`` on and off by a crawler whose
User-Agent no group names. What is listed, which images, and why, are written by hand
from the groups below and Google's rules (docs/listing.rst, "robots.txt, as each engine
reads it"); every file is schema-validated and read back by Scrapy's Sitemap parser."""

from __future__ import annotations

import csv
import logging
import socket
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.audit.rules import audit_findings
from scrapy_sitemapgen.crawl import robots_rules
from scrapy_sitemapgen.sitemaps.robots_txt import (
    ALLOW_ALL,
    DISALLOW_ALL,
    decision_parts,
    page_agents,
    robots_txt_of,
)
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.sitemaps.verdicts import (
    FINDINGS,
    Finding,
    Listed,
    Verdict,
)

from .helpers import NASTY, PlainSpider, Route, SiteServer, html, read_bytes, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import CrawlFn

#: The site's groups: each engine has its own, so none of them reads ``*``'s rule.
SITE_ROBOTS = """\
User-agent: Googlebot
Disallow: /private-g/
Disallow: /both/

User-agent: Bingbot
Disallow: /private-b/
Disallow: /both/

User-agent: Googlebot-Image
Disallow: /img/secret/

User-agent: *
Disallow: /nothing-for-star/
"""
#: The CDN's: only Googlebot-Image is kept out of one folder.
CDN_ROBOTS = """\
User-agent: Googlebot-Image
Disallow: /cdn/blocked/

User-agent: *
Allow: /
"""
#: Matches none of the groups above: with ROBOTSTXT_OBEY, Scrapy applies ``*``.
CRAWLER_UA = "SitemapgenTest/1.0 (+https://example.invalid/about)"
PAGES = ["/open", "/private-g/page", "/private-b/page", "/both/page", "/nothing-for-star/page"]


def closed_port() -> int:
    """A loopback port nothing listens on (a connection to it is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def engines_site() -> Iterator[tuple[SiteServer, SiteServer, int]]:
    site, cdn = SiteServer(), SiteServer()
    dead = closed_port()
    images = [
        "/img/a.jpg",
        "/img/secret/s.jpg",  # Googlebot-Image's own group disallows it
        "/private-g/p.jpg",  # Googlebot's rule: not Googlebot-Image's, which is more specific
        "/nothing-for-star/n.jpg",  # "*"'s rule: Googlebot-Image has a group of its own
        cdn.url("/cdn/x.jpg"),
        cdn.url("/cdn/blocked/y.jpg"),  # the CDN's robots.txt disallows it
        f"http://127.0.0.1:{dead}/z.jpg",  # no answer for its robots.txt: disallowed
    ]
    site.routes.update(
        {
            "/robots.txt": Route(body=SITE_ROBOTS, content_type="text/plain"),
            "/": Route(body=html(body="".join(f"<a href='{p}'>{p}</a>" for p in PAGES))),
            "/open": Route(body=html(body="".join(f"<img src='{i}'>" for i in images))),
            **{path: Route(body=html(body=f"<p>{path}</p>")) for path in PAGES[1:]},
        }
    )
    cdn.routes["/robots.txt"] = Route(body=CDN_ROBOTS, content_type="text/plain")
    yield site, cdn, dead
    site.close()
    cdn.close()


def listed(out: Path, origin: Origin) -> dict[str, list[object]]:
    """{loc: its images} of one origin's published set: every file schema-validated (and
    the index checked by the package's validator), then each urlset read back by Scrapy's
    own Sitemap parser, which must find the same locs."""
    entries = read_entries(out, origin.name)
    folder = out / origin.name
    scrapy_locs = [
        entry["loc"]
        for path in sorted(folder.glob("sitemap-*.xml*"))
        for entry in Sitemap(read_bytes(path))
    ]
    assert sorted(scrapy_locs) == sorted(entries)
    return {loc: list(entry["images"]) for loc, entry in entries.items()}  # type: ignore[call-overload]


@pytest.mark.parametrize("obey", [True, False], ids=["ROBOTSTXT_OBEY", "not_obeyed"])
@deferred_f_from_coro_f
async def test_each_engine_reads_its_own_group(
    engines_site: tuple[SiteServer, SiteServer, int],
    crawl: CrawlFn,
    tmp_path: Path,
    obey: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    site, cdn, dead = engines_site
    u = site.url
    site_before, cdn_before = len(site.requested), len(cdn.requested)
    crawler = await crawl(
        {"ROBOTSTXT_OBEY": obey, "USER_AGENT": CRAWLER_UA, "SITEMAPGEN_AUDIT": False},
        PlainSpider,
        start_url=u("/"),
    )
    # /private-g/ only Googlebot may not fetch, /private-b/ only Bingbot, /both/ both (the
    # reason names the first agent in sorted order); /nothing-for-star/ is "*"'s alone, so
    # both engines may fetch it: listed when the crawler fetched it, which with
    # ROBOTSTXT_OBEY it does not (its User-Agent falls to "*").
    expected_pages = {u("/"), u("/open")} | (set() if obey else {u("/nothing-for-star/page")})
    got = listed(tmp_path / "out", site.origin)
    assert set(got) == expected_pages
    assert got[u("/open")] == [
        u("/img/a.jpg"),
        u("/private-g/p.jpg"),
        u("/nothing-for-star/n.jpg"),
        cdn.url("/cdn/x.jpg"),
    ]
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/excluded/robots_txt/googlebot"] == 1
    assert stats["sitemapgen/excluded/robots_txt/bingbot"] == 2
    assert stats["sitemapgen/skipped/image/robots_txt"] == 3
    # One robots.txt per origin: the site's, the CDN's and the dead one's.
    assert stats["sitemapgen/robots_txt/requests"] == 3
    assert stats["sitemapgen/robots_txt/unreachable"] == 1
    assert "sitemapgen/robots_txt/absent" not in stats
    assert stats.get("robotstxt/forbidden", 0) == (1 if obey else 0)
    # Scrapy's own middleware fetches the site's file too when it obeys it; the images
    # themselves are never fetched, only their origin's robots.txt.
    assert site.requested[site_before:].count("/robots.txt") == (2 if obey else 1)
    assert cdn.requested[cdn_before:] == ["/robots.txt"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    dead_root = f"http://127.0.0.1:{dead}/"
    [line] = [w for w in warnings if "robots.txt of" in w]
    assert line.startswith(f"Sitemap: the robots.txt of {dead_root} could not be read (no answer: ")
    assert "every page and image of that origin is taken as disallowed" in line


@pytest.mark.parametrize(
    ("route", "expected", "counter"),
    [
        (Route(503, "busy"), set(), "unreachable"),
        (Route(429, "slow down"), set(), "unreachable"),
        # Answered after DOWNLOAD_TIMEOUT (1 s): no answer, as a 5xx.
        (Route(200, "User-agent: *\nAllow: /\n", delay=2.5), set(), "unreachable"),
        (Route(404, "no such file"), {"/", "/a", "/b"}, "absent"),
        (Route(403, "forbidden"), {"/", "/a", "/b"}, "absent"),
    ],
    ids=["503", "429", "timeout", "404", "403"],
)
@deferred_f_from_coro_f
async def test_an_unreadable_robots_txt_follows_google(
    crawl: CrawlFn,
    tmp_path: Path,
    route: Route,
    expected: set[str],
    counter: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 5xx (and 429) disallows everything, a 4xx allows everything."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    with SiteServer() as server:
        server.routes.update(
            {
                "/robots.txt": route,
                "/": Route(body=html(body="<a href='/a'>a</a><a href='/b'>b</a>")),
                "/a": Route(body=html(body="<p>a</p><img src='/a.png'>")),
                "/b": Route(body=html(body="<p>b</p>")),
            }
        )
        crawler = await crawl({"DOWNLOAD_TIMEOUT": 1}, PlainSpider, start_url=server.url("/"))
    stats = crawler.stats.get_stats()
    assert stats[f"sitemapgen/robots_txt/{counter}"] == 1
    assert stats["sitemapgen/robots_txt/requests"] == 1
    root = server.url("/")
    messages = [r.getMessage() for r in caplog.records if root + " " in r.getMessage()]
    if expected:
        assert listed(tmp_path / "out", server.origin) == {
            server.url("/"): [],
            server.url("/a"): [server.url("/a.png")],
            server.url("/b"): [],
        }
        [line] = messages
        assert line.startswith(f"Sitemap: {root} has no robots.txt (HTTP {route.status}); ")
        assert "every URL of that origin is taken as allowed" in line
        assert "sitemapgen/excluded/robots_txt/bingbot" not in stats
    else:
        # Every page out, under the first agent's reason; nothing published for it.
        assert stats["sitemapgen/excluded/robots_txt/bingbot"] == 3
        assert stats["sitemapgen/urls/written"] == 0
        assert not (tmp_path / "out" / server.origin.name / "sitemap.xml").exists()
        # The close log says why, and what decides it.
        assert (
            f"Sitemap: {root}: 3 pages crawled, none listed: robots_txt/bingbot 3; what "
            "decides robots_txt/bingbot: the origin's robots.txt (SITEMAPGEN_RESPECT_ROBOTS_TXT, "
            "SITEMAPGEN_ROBOTS_USER_AGENTS)"
        ) in [r.getMessage() for r in caplog.records]
        [warning] = [
            r.getMessage()
            for r in caplog.records
            if r.levelno == logging.WARNING and "robots.txt of" in r.getMessage()
        ]
        why = "no answer: " if route.delay else f"HTTP {route.status}); "
        assert warning.startswith(f"Sitemap: the robots.txt of {root} could not be read ({why}")


@pytest.mark.parametrize(
    ("target", "listed_paths", "counter"),
    [
        ("/robots-real.txt", {"/"}, None),  # followed: its rules apply
        ("/robots.txt", {"/", "/x/page"}, "absent"),  # a loop: nothing read, as a 4xx
    ],
    ids=["followed", "loop"],
)
@deferred_f_from_coro_f
async def test_a_redirected_robots_txt(
    crawl: CrawlFn,
    tmp_path: Path,
    target: str,
    listed_paths: set[str],
    counter: str | None,
) -> None:
    with SiteServer() as server:
        server.routes.update(
            {
                "/robots.txt": Route(301, headers={"Location": target}),
                "/robots-real.txt": Route(
                    body="User-agent: *\nDisallow: /x/\n", content_type="text/plain"
                ),
                "/": Route(body=html(body="<a href='/x/page'>x</a>")),
                "/x/page": Route(body=html(body="<p>a page under /x/</p>")),
            }
        )
        crawler = await crawl({"REDIRECT_MAX_TIMES": 3}, PlainSpider, start_url=server.url("/"))
    assert set(listed(tmp_path / "out", server.origin)) == {server.url(p) for p in listed_paths}
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/robots_txt/requests"] == 1
    assert stats.get("sitemapgen/excluded/robots_txt/bingbot", 0) == (0 if counter else 1)
    assert stats.get("sitemapgen/robots_txt/absent", 0) == (1 if counter else 0)


@deferred_f_from_coro_f
async def test_switched_off_lists_as_before_and_fetches_nothing(
    engines_site: tuple[SiteServer, SiteServer, int], crawl: CrawlFn, tmp_path: Path
) -> None:
    site, cdn, _ = engines_site
    u = site.url
    site_before, cdn_before = len(site.requested), len(cdn.requested)
    crawler = await crawl({"SITEMAPGEN_RESPECT_ROBOTS_TXT": False}, PlainSpider, start_url=u("/"))
    got = listed(tmp_path / "out", site.origin)
    assert set(got) == {u("/"), *(u(p) for p in PAGES)}
    assert len(got[u("/open")]) == 7  # every image, wherever it is
    assert "/robots.txt" not in site.requested[site_before:]
    assert cdn.requested[cdn_before:] == []
    assert not [k for k in crawler.stats.get_stats() if "robots_txt" in k]


@deferred_f_from_coro_f
async def test_the_audit_names_listed_disallowed_urls(crawl: CrawlFn, tmp_path: Path) -> None:
    """A live sitemap listing a page Googlebot may not fetch: one the crawl reached and
    one only the sitemap names (fetched by the audit): both ``listed_disallowed``, with
    the agent; the allowed page is no finding."""
    with SiteServer() as server:
        u = server.url
        sitemap = "".join(
            f"<url><loc>{u(p)}</loc></url>" for p in ("/", "/private-g/a", "/private-g/orphan")
        )
        server.routes.update(
            {
                "/robots.txt": Route(
                    body=f"User-agent: Googlebot\nDisallow: /private-g/\nSitemap: {u('/live.xml')}\n",
                    content_type="text/plain",
                ),
                "/live.xml": Route(
                    body='<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.'
                    f'sitemaps.org/schemas/sitemap/0.9">{sitemap}</urlset>',
                    content_type="application/xml",
                ),
                "/": Route(body=html(body="<a href='/private-g/a'>a</a>")),
                "/private-g/a": Route(body=html(body="<p>a</p>")),
                "/private-g/orphan": Route(body=html(body="<p>orphan</p>")),
            }
        )
        report = tmp_path / "report"
        crawler = await crawl(
            {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report)},
            PlainSpider,
            start_url=u("/"),
        )
    with (report / server.origin.name / "audit.csv").open(newline="", encoding="utf-8") as file:
        rows = [(r["url"], r["finding"], r["detail"]) for r in csv.DictReader(file)]
    # The agent, then the rule that decides, its group, and which engines it blocks.
    why = "Disallow: /private-g/ (group User-agent: Googlebot); blocks googlebot; not bingbot"
    assert rows == [
        (u("/private-g/a"), "listed_disallowed", f"googlebot: {why}"),
        (u("/private-g/orphan"), "listed_disallowed", f"googlebot: {why}"),
    ]
    with (report / server.origin.name / "urls.csv").open(newline="", encoding="utf-8") as file:
        verdicts = {r["url"]: (r["verdict"], r["source"]) for r in csv.DictReader(file)}
    assert verdicts[u("/private-g/orphan")] == ("excluded/robots_txt/googlebot", "sitemap")
    with (report / server.origin.name / "urls.csv").open(newline="", encoding="utf-8") as file:
        details = {r["url"]: r["detail"] for r in csv.DictReader(file)}
    assert details[u("/private-g/a")] == details[u("/private-g/orphan")] == why
    assert crawler.stats.get_value("sitemapgen/audit/findings/listed_disallowed") == 2


class ItemSpider(scrapy.Spider):
    """Yields the sitemap items it is given from its start page, and follows nothing."""

    name = "items"
    start_url: str
    items: list[dict[str, Any]]

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        yield from self.items


@deferred_f_from_coro_f
async def test_items_are_judged_as_pages_are(
    engines_site: tuple[SiteServer, SiteServer, int], crawl: CrawlFn, tmp_path: Path
) -> None:
    """An item's loc on an origin the crawl never fetched a page of: its robots.txt is
    read before the item is recorded; its images are checked with their own origins'."""
    site, cdn, _ = engines_site
    with SiteServer() as shop:
        shop.routes["/robots.txt"] = Route(
            body="User-agent: Bingbot\nDisallow: /hidden/\n", content_type="text/plain"
        )
        items = [
            {
                "loc": shop.url("/shown"),
                "images": [shop.url("/img/ok.png"), cdn.url("/cdn/blocked/i.png")],
            },
            {"loc": shop.url("/hidden/x")},
            {"loc": site.url("/both/item")},  # an origin already read: judged at once
        ]
        crawler = await crawl({}, ItemSpider, start_url=site.url("/"), items=items)
        assert shop.requested == ["/robots.txt"]
    assert listed(tmp_path / "out", shop.origin) == {shop.url("/shown"): [shop.url("/img/ok.png")]}
    assert set(listed(tmp_path / "out", site.origin)) == {site.url("/")}
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/excluded/robots_txt/bingbot"] == 2
    assert stats["sitemapgen/skipped/image/robots_txt"] == 1
    assert stats["sitemapgen/items/recorded"] == 1


class ProxySpider(scrapy.Spider):
    """Sends the requests for port 80 (where nothing listens) through ``proxy``."""

    name = "proxied"
    start_url: str
    proxy: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, meta={"proxy": self.proxy})


@deferred_f_from_coro_f
async def test_robots_txt_goes_through_the_pages_proxy(crawl: CrawlFn, tmp_path: Path) -> None:
    with SiteServer() as server:
        # Answered by the server, as a proxy; the robots.txt is asked for without the
        # default port, as the origin's <loc>s are written.
        far = "http://127.0.0.1:80"
        server.routes.update(
            {
                "/": Route(
                    body=html(body=f"<a href='{far}/shown'>s</a><a href='{far}/hid/x'>h</a>")
                ),
                "http://127.0.0.1/robots.txt": Route(
                    body="User-agent: *\nDisallow: /hid/\n", content_type="text/plain"
                ),
                f"{far}/shown": Route(body=html(body="<p>shown</p>")),
                f"{far}/hid/x": Route(body=html(body="<p>hidden</p>")),
            }
        )
        crawler = await crawl({}, ProxySpider, start_url=server.url("/"), proxy=server.url(""))
        assert "http://127.0.0.1/robots.txt" in server.requested
    far_origin = Origin("http", "127.0.0.1", 80)
    assert set(listed(tmp_path / "out", far_origin)) == {"http://127.0.0.1/shown"}
    assert crawler.stats.get_value("sitemapgen/excluded/robots_txt/bingbot") == 1


@deferred_f_from_coro_f
async def test_a_broad_crawl_keeps_a_bounded_number_of_files(
    crawl: CrawlFn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for one file, each origin met again after another is read again; what
    is listed does not change. The site is a chain, / -> /p1 -> /p2, so one page is
    judged at a time (the middleware records a page before its links are followed)."""
    monkeypatch.setattr(robots_rules, "KEPT_ORIGINS", 1)
    with SiteServer() as site, SiteServer() as cdn:
        image = cdn.url("/cdn/blocked/i.png")
        site.routes.update(
            {
                "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
                "/": Route(body=html(body="<a href='/p1'>1</a>")),
                "/p1": Route(body=html(body=f"<a href='/p2'>2</a><img src='{image}'>")),
                "/p2": Route(body=html(body=f"<p>the second page</p><img src='{image}'>")),
            }
        )
        cdn.routes["/robots.txt"] = Route(body=CDN_ROBOTS, content_type="text/plain")
        crawler = await crawl({}, PlainSpider, start_url=site.url("/"))
        # / reads the site's; /p1 the CDN's (the site's dropped); /p2 both again.
        assert site.requested.count("/robots.txt") == 2
        assert cdn.requested.count("/robots.txt") == 2
    assert listed(tmp_path / "out", site.origin) == {
        site.url("/"): [],
        site.url("/p1"): [],
        site.url("/p2"): [],
    }
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/robots_txt/requests"] == 4
    assert stats["sitemapgen/skipped/image/robots_txt"] == 2


# --- the pure decision, with Protego ------------------------------------------------------------

PAGE = "https://example.com"


def test_groups_are_matched_as_google_matches_them() -> None:
    rules = robots_txt_of(200, SITE_ROBOTS.encode())
    image = ("googlebot-image",)
    # The most specific group wins, and only it: Googlebot-Image's own group.
    assert rules.forbidding(f"{PAGE}/img/secret/s.jpg", image) == "googlebot-image"
    assert rules.forbidding(f"{PAGE}/private-g/p.jpg", image) is None
    assert rules.forbidding(f"{PAGE}/nothing-for-star/x", ("googlebot", "bingbot")) is None
    assert rules.forbidding(f"{PAGE}/nothing-for-star/x", ("yandex",)) == "yandex"  # "*"
    # Without a group of its own, Googlebot-Image reads Googlebot's, then "*".
    fallback = robots_txt_of(200, b"User-agent: googlebot\nDisallow: /g/\n")
    assert fallback.forbidding(f"{PAGE}/g/x.png", image) == "googlebot-image"
    star = robots_txt_of(200, b"User-agent: *\nDisallow: /s/\n")
    assert star.forbidding(f"{PAGE}/s/x.png", image) == "googlebot-image"
    assert star.forbidding(f"{PAGE}/t/x.png", image) is None
    # The agents in the order given: the first that may not fetch is the reason.
    assert rules.forbidding(f"{PAGE}/both/p", ("googlebot", "bingbot")) == "googlebot"
    assert rules.forbidding(f"{PAGE}/both/p", page_agents(frozenset({"googlebot", "bingbot"}))) == (
        "bingbot"
    )
    # Longest match wins, Allow on a tie; patterns with * and $; the query counts.
    mixed = robots_txt_of(
        200,
        b"User-agent: bingbot\nDisallow: /shop/\nAllow: /shop/public\n"
        b"Disallow: /*.pdf$\nDisallow: /*?sort=\n",
    )
    bing = ("bingbot",)
    assert mixed.forbidding(f"{PAGE}/shop/cart", bing) == "bingbot"
    assert mixed.forbidding(f"{PAGE}/shop/public/a", bing) is None
    assert mixed.forbidding(f"{PAGE}/doc.pdf", bing) == "bingbot"
    assert mixed.forbidding(f"{PAGE}/doc.pdf?x=1", bing) is None
    assert mixed.forbidding(f"{PAGE}/list?sort=price", bing) == "bingbot"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (404, ALLOW_ALL),
        (410, ALLOW_ALL),
        (401, ALLOW_ALL),  # Google: every 4xx but 429 means "no robots.txt"
        (403, ALLOW_ALL),
        (301, ALLOW_ALL),  # a redirect the downloader did not follow leads nowhere
        (429, DISALLOW_ALL),
        (500, DISALLOW_ALL),
        (503, DISALLOW_ALL),
    ],
)
def test_statuses_that_give_no_file(status: int, expected: Any) -> None:
    rules = robots_txt_of(status, b"User-agent: *\nDisallow: /\n")
    assert rules is expected
    agents = ("bingbot", "googlebot")
    assert rules.forbidding(f"{PAGE}/x", agents) == (None if expected is ALLOW_ALL else "bingbot")
    assert rules.forbidding(f"{PAGE}/x", ()) is None


def test_a_file_is_read_as_google_reads_it() -> None:
    # Google reads the first 500 KiB (512,000 bytes); a rule after them does not count.
    filler = b"# " + b"x" * 600_000 + b"\n"
    late = robots_txt_of(
        200, b"User-agent: *\nDisallow: /early/\n" + filler + b"Disallow: /late/\n"
    )
    assert late.forbidding(f"{PAGE}/early/a", ("googlebot",)) == "googlebot"
    assert late.forbidding(f"{PAGE}/late/a", ("googlebot",)) is None
    # A byte order mark and bytes that are no UTF-8 do not hide the rules.
    odd = robots_txt_of(200, b"\xef\xbb\xbfUser-agent: *\nDisallow: /caf\xff/\nDisallow: /x/\n")
    assert odd.forbidding(f"{PAGE}/x/1", ("googlebot",)) == "googlebot"
    # A 200 that is no robots.txt (an HTML page) holds no rule.
    assert (
        robots_txt_of(200, b"<html><body>Hello</body></html>").forbidding(
            f"{PAGE}/x", ("googlebot",)
        )
        is None
    )
    # The robots.txt itself is always allowed.
    assert (
        robots_txt_of(200, b"User-agent: *\nDisallow: /\n").forbidding(
            f"{PAGE}/robots.txt", ("googlebot",)
        )
        is None
    )


@pytest.mark.parametrize("text", [*NASTY, "User-agent: *\nDisallow: /%zz%\nAllow: $*$\n"])
def test_hostile_files_are_read_without_failing(text: str) -> None:
    """Whatever a server sends as its robots.txt gives an answer, never an exception."""
    rules = robots_txt_of(
        200, ("User-agent: *\nDisallow: " + text + "\n").encode("utf-8", "replace")
    )
    for url in (f"{PAGE}/", f"{PAGE}/a%20b?c=%25", f"{PAGE}/caf%C3%A9"):
        assert rules.forbidding(url, ("googlebot", "googlebot-image")) in (
            None,
            "googlebot",
            "googlebot-image",
        )
        # Naming the rule that decides never fails either.
        assert "; blocks " in rules.explain(url, ("googlebot", "googlebot-image"))


def test_listed_disallowed_is_the_finding_of_a_disallowed_verdict() -> None:
    """Written from the finding's definition (docs/audit.rst): a live sitemap's URL whose
    verdict is ``excluded/robots_txt/<agent>``; its detail is the agent."""
    assert FINDINGS.index("listed_disallowed") == FINDINGS.index("listed_blocked_by_robots") + 1
    a, b = f"{PAGE}/private/a", f"{PAGE}/open"
    verdicts = {
        a: Verdict(a, "excluded/robots_txt/googlebot", 200),
        b: Verdict(b, "listed", 200),
    }
    listed_entries = [Listed(a, a, None, f"{PAGE}/sitemap.xml"), Listed(b, b, None, "s")]
    found = sorted(audit_findings(listed_entries, verdicts.get, verdicts.values()))
    assert found == [Finding(a, "listed_disallowed", "googlebot")]


def test_the_rule_that_decides_is_named() -> None:
    """Written from the file: the group an engine reads (the most specific product token,
    several User-agent lines sharing one group), its longest Disallow that matches, and
    which of the engines asked it blocks."""
    rules = robots_txt_of(
        200,
        b"User-agent: Googlebot\nUser-agent: Yandex\nDisallow: /both/\nDisallow: /both/deep\n\n"
        b"User-agent: bingbot\nDisallow: /releases/\nDisallow: /*.pdf$\n"
        b"Sitemap: https://example.com/s.xml\nDisallow: /after-sitemap/\n\n"
        b"User-agent: *\nDisallow: /star/\n",
    )
    agents = ("bingbot", "googlebot", "yandex")
    cases = {
        "/releases/1": "Disallow: /releases/ (group User-agent: bingbot); blocks bingbot; "
        "not googlebot, yandex",
        "/both/deep/x": "Disallow: /both/deep (group User-agent: Googlebot, Yandex); "
        "blocks googlebot, yandex; not bingbot",
        "/doc.pdf": "Disallow: /*.pdf$ (group User-agent: bingbot); blocks bingbot; "
        "not googlebot, yandex",
        "/after-sitemap/a": "Disallow: /after-sitemap/ (group User-agent: bingbot); "
        "blocks bingbot; not googlebot, yandex",
    }
    for path, why in cases.items():
        assert rules.forbidding(f"{PAGE}{path}", agents) is not None, path
        assert rules.explain(f"{PAGE}{path}", agents) == why, path
    # "*" is read by an engine without a group of its own only.
    assert rules.explain(f"{PAGE}/star/a", ("applebot", "bingbot")) == (
        "Disallow: /star/ (group User-agent: *); blocks applebot; not bingbot"
    )
    assert DISALLOW_ALL.explain(f"{PAGE}/a", ("bingbot", "googlebot")) == (
        "everything (robots.txt could not be read); blocks bingbot, googlebot"
    )
    assert decision_parts(cases["/both/deep/x"]) == (
        "Disallow: /both/deep (group User-agent: Googlebot, Yandex)",
        "googlebot, yandex",
        "bingbot",
    )
    assert decision_parts("googlebot") == ("googlebot", "", "")
