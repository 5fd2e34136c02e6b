"""SITEMAPGEN_ORIGIN_MAP on real crawls (issue 41, item 1): a staging server on 127.0.0.1
whose pages' canonicals, hreflang alternates, Open Graph image and a redirect name the
production URLs (``https://docs.example.org/3.11/``), crawled with the map.

The published set names production URLs only (read back with Scrapy's own ``Sitemap``
parser, every file schema-validated and passed by the package's validator), in the
production origin's folder and ``robots.txt`` lines; a page on another server (outside
the map) is listed as it is; the staging server's ``robots.txt`` decides, about the URLs
crawled (``ROBOTSTXT_OBEY`` for the crawler, SITEMAPGEN_RESPECT_ROBOTS_TXT for the
engines, P16); a second crawl of the unchanged site keeps every lastmod although the
server's ``Last-Modified`` dates moved, as a rebuild's do. Every expected URL is written
out by hand below.
"""

from __future__ import annotations

import csv
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.http import HtmlResponse, Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.crawl.judging import response_verdicts
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.verdicts import LISTED, REDIRECTED, Verdict
from scrapy_sitemapgen.validate.checker import validate

from .helpers import Route, SiteServer, html, read_bytes, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scrapy.crawler import Crawler

    from .conftest import CrawlFn

PROD = "https://docs.example.org/3.11/"
PROD_FOLDER = "https_docs.example.org_443"
OLD_DATE = "Mon, 01 Jan 2024 00:00:00 GMT"
NEW_DATE = "Sat, 01 Mar 2025 12:00:00 GMT"

STAGING_ROBOTS = """\
User-agent: *
Disallow: /drafts/

User-agent: Googlebot
Disallow: /private/

User-agent: Googlebot-Image
Disallow: /_images/secret/
"""


def page(canonical: str, body: str = "", head: str = "", lang: str = "en") -> str:
    return html(f'<link rel="canonical" href="{canonical}">{head}', body).replace(
        "<html>", f'<html lang="{lang}">', 1
    )


def hreflang(pairs: dict[str, str]) -> str:
    return "".join(f'<link rel="alternate" hreflang="{k}" href="{v}">' for k, v in pairs.items())


def serve(staging: SiteServer, other: SiteServer, date: str, os_text: str) -> None:
    """The build as served: every page's Last-Modified is ``date`` (a rebuild moves it);
    ``os_text`` is the text of /library/os.html (the page a second build may change)."""
    video = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "VideoObject",
            "name": "Intro",
            "description": "An introduction",
            "contentUrl": "/media/intro.mp4",
            "thumbnailUrl": "/media/intro.jpg",
        }
    )
    links = "".join(
        f'<a href="{href}">{href}</a>'
        for href in (
            "/library/os.html",
            "/en/a.html",
            "/fr/a.html",
            "/old.html",
            "/private/p.html",
            "/drafts/d.html",
            "/copy.html",
            "/item.html",
            other.url("/outside.html"),
        )
    )
    pages = {
        "/": page(PROD, f"<h1>Index</h1><p>The documentation.</p>{links}"),
        "/library/os.html": page(
            PROD + "library/os.html",
            f"<p>{os_text}</p>"
            '<img src="../_images/diagram.png">'
            '<img src="/_images/secret/s.png">'
            f'<img src="{other.url("/cdn/pic.png")}">',
            f'<meta property="og:image" content="{PROD}_images/og.png">'
            f'<script type="application/ld+json">{video}</script>',
        ),
        "/en/a.html": page(
            PROD + "en/a.html",
            "<p>English page</p>",
            hreflang({"en": PROD + "en/a.html", "fr": PROD + "fr/a.html"}),
        ),
        # The French page names itself by its staging URL: mapped as well.
        "/fr/a.html": page(
            PROD + "fr/a.html",
            "<p>Page en français</p>",
            hreflang({"en": PROD + "en/a.html", "fr": staging.url("/fr/a.html")}),
            lang="fr",
        ),
        "/new.html": page(PROD + "new.html", "<p>Where old.html went</p>"),
        "/private/p.html": page(PROD + "private/p.html", "<p>Not for Googlebot</p>"),
        "/drafts/d.html": page(PROD + "drafts/d.html", "<p>Never fetched</p>"),
        # Another page's production URL: left out as canonicalised elsewhere.
        "/copy.html": page(PROD + "library/os.html", f"<p>{os_text}</p>"),
        "/item.html": page(PROD + "item.html", "<p>A page the spider yields an item for</p>"),
    }
    for path, body in pages.items():
        staging.routes[path] = Route(body=body, headers={"Last-Modified": date})
    staging.routes["/old.html"] = Route(301, "", headers={"Location": "/new.html"})
    staging.routes["/robots.txt"] = Route(body=STAGING_ROBOTS, content_type="text/plain")
    other.routes["/outside.html"] = Route(
        body=page(other.url("/outside.html"), "<p>Not mapped</p>"),
        headers={"Last-Modified": date},
    )


class BuildSpider(scrapy.Spider):
    """Follows every link; for /item.html it also yields a sitemap item naming the page
    and an image by their staging URLs (the item pipeline's road)."""

    name = "build"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        if response.url.endswith("/item.html"):
            yield {"loc": response.url, "images": [response.urljoin("/_images/item.png")]}
        yield from response.follow_all(css="a")


@pytest.fixture
def servers() -> Iterator[tuple[SiteServer, SiteServer]]:
    staging, other = SiteServer(), SiteServer()
    yield staging, other
    staging.close()
    other.close()


def published(out: Path, folder: str) -> dict[str, dict[str, object]]:
    """{loc: every fact of its <url>} of one origin folder: each file schema-validated,
    the set passed by the package's validator (read_entries), and the urlsets read back by
    Scrapy's Sitemap parser, which must find the same locs."""
    entries = read_entries(out, folder)
    scrapy_locs = [
        entry["loc"]
        for path in sorted((out / folder).glob("sitemap-*.xml*"))
        for entry in Sitemap(read_bytes(path))
    ]
    assert sorted(scrapy_locs) == sorted(entries)
    return entries


def sitemap_lines(out: Path, folder: str) -> list[str]:
    text = (out / folder / "robots.txt").read_text()
    return [line for line in text.splitlines() if line.lower().startswith("sitemap:")]


SETTINGS = {"ROBOTSTXT_OBEY": True}


def map_of(staging: SiteServer) -> dict[str, Any]:
    return {**SETTINGS, "SITEMAPGEN_ORIGIN_MAP": {staging.url("/"): PROD}}


@deferred_f_from_coro_f
async def test_a_staging_crawl_publishes_production_urls(
    servers: tuple[SiteServer, SiteServer], crawl: CrawlFn, tmp_path: Path
) -> None:
    staging, other = servers
    serve(staging, other, OLD_DATE, "os: operating system interfaces")
    crawler: Crawler = await crawl(map_of(staging), BuildSpider, start_url=staging.url("/"))
    out = tmp_path / "out"
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]

    # Only the production origin and the server outside the map have folders.
    folders = {p.name for p in out.iterdir() if p.is_dir()}
    assert folders == {PROD_FOLDER, other.origin.name}

    entries = published(out, PROD_FOLDER)
    assert sorted(entries) == [
        PROD,
        PROD + "en/a.html",
        PROD + "fr/a.html",
        PROD + "item.html",
        PROD + "library/os.html",
        PROD + "new.html",  # old.html redirected here: listed under its final URL
    ]
    os_entry = entries[PROD + "library/os.html"]
    # Images on the mapped origin mapped (relative, and already in production terms); the
    # one on the other server as it is; /_images/secret/ left out by the staging
    # robots.txt's Googlebot-Image group, asked about the URL crawled.
    assert sorted(os_entry["images"]) == sorted(  # type: ignore[call-overload]
        [PROD + "_images/diagram.png", PROD + "_images/og.png", other.url("/cdn/pic.png")]
    )
    videos = os_entry["videos"]
    assert [(v["content_loc"], v["thumbnail_loc"]) for v in videos] == [  # type: ignore[attr-defined]
        (PROD + "media/intro.mp4", PROD + "media/intro.jpg")
    ]
    # The hreflang cluster, checked against the listed set in production terms (G6).
    cluster = [("en", PROD + "en/a.html"), ("fr", PROD + "fr/a.html")]
    assert sorted(entries[PROD + "en/a.html"]["alternates"]) == cluster  # type: ignore[call-overload]
    assert sorted(entries[PROD + "fr/a.html"]["alternates"]) == cluster  # type: ignore[call-overload]
    # The item's road: its staging loc and image mapped.
    assert entries[PROD + "item.html"]["images"] == [PROD + "_images/item.png"]
    # Every lastmod is the server's Last-Modified (no other source on these pages).
    assert {e["lastmod"] for e in entries.values()} == {"2024-01-01T00:00:00+00:00"}

    # Outside the map: as it is.
    assert sorted(published(out, other.origin.name)) == [other.url("/outside.html")]

    # The index and robots.txt lines name the production origin.
    assert sitemap_lines(out, PROD_FOLDER) == ["Sitemap: https://docs.example.org/sitemap.xml"]
    index = read_bytes(out / PROD_FOLDER / "sitemap.xml").decode()
    assert "127.0.0.1" not in index
    every_file = b"".join(read_bytes(p) for p in (out / PROD_FOLDER).iterdir() if p.is_file())
    assert staging.root.encode() not in every_file

    # Why the others are out: the staging robots.txt (P16), a canonical naming another
    # page's production URL; /drafts/ never fetched (ROBOTSTXT_OBEY, "*" group).
    assert stats["sitemapgen/excluded/robots_txt/googlebot"] == 1
    assert stats["sitemapgen/excluded/canonical_elsewhere"] == 1
    assert stats["sitemapgen/skipped/image/robots_txt"] == 1
    assert "/drafts/d.html" not in staging.requested
    assert "/private/p.html" in staging.requested
    # robots.txt read from the crawled servers only, never from production.
    assert stats["sitemapgen/robots_txt/requests"] == 2


@deferred_f_from_coro_f
async def test_a_rebuild_that_changed_nothing_keeps_the_lastmods(
    servers: tuple[SiteServer, SiteServer], crawl: CrawlFn, tmp_path: Path
) -> None:
    """The second build rewrote every Last-Modified (as a generator rewrites every file),
    and changed one page's text: that page's lastmod moves, every other is kept, because
    the state file knows the pages by their production URLs."""
    staging, other = servers
    serve(staging, other, OLD_DATE, "os: operating system interfaces")
    await crawl(map_of(staging), BuildSpider, start_url=staging.url("/"))
    out = tmp_path / "out"
    first = {loc: e["lastmod"] for loc, e in published(out, PROD_FOLDER).items()}
    assert first[PROD + "library/os.html"] == "2024-01-01T00:00:00+00:00"

    serve(staging, other, NEW_DATE, "os: miscellaneous operating system interfaces")
    await crawl(map_of(staging), BuildSpider, start_url=staging.url("/"))
    second = {loc: e["lastmod"] for loc, e in published(out, PROD_FOLDER).items()}
    assert second == {**first, PROD + "library/os.html": "2025-03-01T12:00:00+00:00"}
    outside = published(out, other.origin.name)
    assert outside[other.url("/outside.html")]["lastmod"] == "2024-01-01T00:00:00+00:00"


@deferred_f_from_coro_f
async def test_without_the_map_every_page_is_canonicalised_elsewhere(
    servers: tuple[SiteServer, SiteServer],
    crawl: CrawlFn,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The issue's first hour: the same build crawled without the map lists none of the
    staging pages, and the close log names SITEMAPGEN_ORIGIN_MAP among what decides it."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    staging, other = servers
    serve(staging, other, OLD_DATE, "os")
    crawler = await crawl(SETTINGS, BuildSpider, start_url=staging.url("/"))
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    # Every staging page fetched but /private/p.html, which robots.txt keeps out first.
    assert stats["sitemapgen/excluded/canonical_elsewhere"] == 7
    assert not (tmp_path / "out" / PROD_FOLDER).exists()
    lines = [r.getMessage() for r in caplog.records if r.levelname == "INFO"]
    # Eight responses and the item (which lists its page), eight responses left out.
    assert (
        f"Sitemap: {staging.root}/: 9 pages crawled, 1 listed, 8 left out: "
        "canonical_elsewhere 7 (canonicals name docs.example.org), robots_txt/googlebot 1; "
        "what decides canonical_elsewhere: SITEMAPGEN_RESPECT_CANONICAL, "
        "SITEMAPGEN_HOST_ALIASES, SITEMAPGEN_ORIGIN_MAP"
    ) in lines


@deferred_f_from_coro_f
async def test_a_bad_map_refuses_the_start(
    crawl: CrawlFn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Checked before any work: the crawl does not start, and the ERROR names the
    setting and each problem."""
    with SiteServer() as staging:
        with pytest.raises(ValueError, match="SITEMAPGEN_ORIGIN_MAP"):
            await crawl(
                {"SITEMAPGEN_ORIGIN_MAP": {staging.root: PROD}},  # no trailing slash
                BuildSpider,
                start_url=staging.url("/"),
            )
        assert staging.requested == []
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any(
        "SITEMAPGEN_ORIGIN_MAP" in e and f"{staging.root!r} does not end in '/'" in e
        for e in errors
    ), errors


# --- redirects judged in production terms (the audit's verdicts) ---------------------------


def test_redirect_verdicts_name_production_urls() -> None:
    """A redirect from a staging URL is kept as its production URL, and names where it
    went in production terms; a 3xx seen unfollowed names its Location mapped."""
    config = Config.from_settings(
        scrapy.settings.Settings({"SITEMAPGEN_ORIGIN_MAP": {"http://127.0.0.1:8765/": PROD}})
    )
    request = Request(
        "http://127.0.0.1:8765/new.html",
        meta={"redirect_urls": ["http://127.0.0.1:8765/old.html"], "redirect_reasons": [301]},
    )
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    facts = UrlFacts(PROD + "new.html", None)
    assert response_verdicts(response, facts, None, config) == [
        Verdict(PROD + "new.html", LISTED, 200),
        Verdict(PROD + "old.html", REDIRECTED, 301, PROD + "new.html"),
    ]
    unfollowed = HtmlResponse(
        "http://127.0.0.1:8765/old.html",
        status=301,
        headers={"Location": "/new.html"},
        request=Request("http://127.0.0.1:8765/old.html"),
    )
    (verdict,) = response_verdicts(unfollowed, None, None, config)
    assert (verdict.url, verdict.detail) == (PROD + "old.html", PROD + "new.html")


# --- the audit in production terms -------------------------------------------------------

HTTP_PROD = "http://docs.example.test/3.11/"


@deferred_f_from_coro_f
async def test_the_audit_reads_production_and_judges_on_staging(
    servers: tuple[SiteServer, SiteServer],
    crawl: CrawlFn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SITEMAPGEN_AUDIT with the map: the live sitemaps are the production origin's (here
    a server reached as an HTTP proxy, so no request leaves the machine); a URL they list
    that the crawl never reached is fetched where the crawl would have fetched it, on the
    staging server, and judged under its production URL."""
    staging, production = servers
    host = "http://docs.example.test/"
    production.routes[host + "robots.txt"] = Route(
        body=f"Sitemap: {host}sitemap.xml\n", content_type="text/plain"
    )
    listed = "".join(
        f"<url><loc>{HTTP_PROD}{path}</loc></url>" for path in ("", "extra.html", "gone.html")
    )
    production.routes[host + "sitemap.xml"] = Route(
        body='<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{listed}</urlset>',
        content_type="application/xml",
    )
    staging.routes["/"] = Route(body=page(HTTP_PROD, '<a href="/new.html">new</a>'))
    staging.routes["/new.html"] = Route(body=page(HTTP_PROD + "new.html", "<p>New</p>"))
    staging.routes["/extra.html"] = Route(body=page(HTTP_PROD + "extra.html", "<p>Extra</p>"))
    monkeypatch.setenv("http_proxy", production.root)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    report_dir = tmp_path / "report"
    await crawl(
        {
            "SITEMAPGEN_ORIGIN_MAP": {staging.url("/"): HTTP_PROD},
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_REPORT_DIR": str(report_dir),
        },
        BuildSpider,
        start_url=staging.url("/"),
    )
    with (report_dir / "http_docs.example.test_80" / "urls.csv").open(encoding="utf-8") as file:
        rows = {r["url"]: (r["verdict"], r["status"], r["source"]) for r in csv.DictReader(file)}
    assert rows == {
        HTTP_PROD: ("listed", "200", "crawl"),
        HTTP_PROD + "new.html": ("listed", "200", "crawl"),
        HTTP_PROD + "extra.html": ("listed", "200", "sitemap"),
        HTTP_PROD + "gone.html": ("excluded/status/404", "404", "sitemap"),
    }
    assert {"/extra.html", "/gone.html"} <= set(staging.requested)
    # Production was asked for its robots.txt and sitemaps only, never for a page.
    assert sorted(set(production.requested)) == [host + "robots.txt", host + "sitemap.xml"]


@deferred_f_from_coro_f
async def test_published_under_the_production_prefix(
    servers: tuple[SiteServer, SiteServer], crawl: CrawlFn, tmp_path: Path
) -> None:
    """SITEMAPGEN_BASE_URL set to the production prefix: the index and the robots.txt line
    name files under /3.11/, and the validator, reading the set as published there, finds
    every listed URL inside the sitemaps' folder (P12)."""
    staging, other = servers
    serve(staging, other, OLD_DATE, "os")
    await crawl(
        {**map_of(staging), "SITEMAPGEN_BASE_URL": PROD},
        BuildSpider,
        start_url=staging.url("/"),
    )
    folder = tmp_path / "out" / PROD_FOLDER
    assert sitemap_lines(tmp_path / "out", PROD_FOLDER) == [f"Sitemap: {PROD}sitemap.xml"]
    index = read_bytes(folder / "sitemap.xml").decode()
    assert f"<loc>{PROD}sitemap-" in index
    assert validate([str(folder / "robots.txt")], base_url=PROD) == []
    # The same six pages as at the origin's root, each file schema-valid.
    assert len(published(tmp_path / "out", PROD_FOLDER)) == 6


@deferred_f_from_coro_f
async def test_pages_left_out_before_their_loc_is_made_count_under_production(
    servers: tuple[SiteServer, SiteServer],
    crawl: CrawlFn,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A response left out before it gets a ``loc`` (not HTML, not 200) is counted in the
    close log under the production origin, with the pages listed: one line for the site,
    none naming the staging server."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    staging, _ = servers
    staging.routes["/"] = Route(
        body=page(PROD, '<a href="/notes.txt">notes</a><a href="/gone.html">gone</a>')
    )
    staging.routes["/notes.txt"] = Route(body="plain text", content_type="text/plain")
    staging.routes["/gone.html"] = Route(404, "not here")
    settings = {**map_of(staging), "HTTPERROR_ALLOWED_CODES": [404]}
    await crawl(settings, BuildSpider, start_url=staging.url("/"))
    lines = [r.getMessage() for r in caplog.records if "pages crawled" in r.getMessage()]
    assert lines == [
        "Sitemap: https://docs.example.org/: 3 pages crawled, 1 listed, 2 left out: "
        "content_type 1, status/404 1; what decides content_type: SITEMAPGEN_CONTENT_TYPES"
    ]
