"""Page facts end to end: one page per case (indexability, images, videos, hreflang, page
lastmod, session ids, host aliases, news), crawled for real, every entry checked exactly."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from .helpers import Route, SiteServer, html, read_bytes, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CDN = "https://cdn.example.net"
NOW = datetime.now(timezone.utc).replace(microsecond=0)
FRESH = (NOW - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
STALE = (NOW - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def build(server: SiteServer) -> None:
    u = server.url
    video_ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebPage", "name": "page"},
            {
                "@type": "VideoObject",
                "name": "Planting & pruning <tips>",
                "description": "How to prune roses, in 90 seconds.",
                "thumbnailUrl": [f"{CDN}/thumbs/roses.jpg", f"{CDN}/thumbs/roses-2x.jpg"],
                "contentUrl": f"{CDN}/video/roses.mp4",
                "embedUrl": u("/player?v=roses"),
                "duration": "PT1M30S",
                "uploadDate": "2024-02-03T04:05:06+01:00",
            },
        ],
    }
    many = "".join(f'<img src="/many/{i}.png">' for i in range(1200))
    pages: dict[str, Route] = {
        "/noindex-meta": Route(body=html('<meta name="ROBOTS" content="follow, NOINDEX">')),
        "/noindex-header": Route(body=html(), headers={"X-Robots-Tag": "noarchive, noindex"}),
        "/noindex-googlebot": Route(body=html(), headers={"X-Robots-Tag": "googlebot: noindex"}),
        "/noindex-otherbot": Route(body=html(), headers={"X-Robots-Tag": "otherbot: noindex"}),
        "/googlebot-none": Route(body=html('<meta name="googlebot" content="none">')),
        "/canonical-elsewhere": Route(body=html('<link rel="canonical" href="/canonical-self">')),
        "/canonical-self": Route(
            body=html(f'<link rel="Canonical" href="{u("/canonical-self")}#top">')
        ),
        "/canonical-header": Route(
            body=html(), headers={"Link": f'<{u("/canonical-self")}>; rel="canonical"'}
        ),
        "/refresh": Route(
            body=html('<meta http-equiv="Refresh" content="300; url=/canonical-self">')
        ),
        "/refresh-self": Route(body=html('<meta http-equiv="refresh" content="600">')),
        "/session?sid=abc123&page=2": Route(body=html()),
        "/jsession;jsessionid=XYZ": Route(body=html()),
        "/images": Route(
            body=html(
                '<base href="/assets/"><meta property="og:image" content="https://cdn.example.net/og.jpg">',
                '<img src="a.png"> <img src=" ../b.png "> <img src="data:image/png;base64,AAAA">'
                '<img src="javascript:alert(1)"> <img src="//cdn.example.net/c.png">'
                '<img src="x.png" srcset="https://cdn.example.net/w_100,h_100/d.jpg 2x, e.jpg 1x">'
                '<picture><source srcset="f.webp 300w, g.webp 600w"><img src="a.png"></picture>'
                '<img src="/private-area/secret.png">',
            )
        ),
        "/many-images": Route(body=html(body=many)),
        "/video-complete": Route(
            body=html(
                '<meta property="og:title" content="Garden tour">'
                '<meta property="og:description" content="A walk through the garden.">',
                '<video src="/media/tour.mp4" poster="/media/tour.jpg"></video>',
            )
        ),
        "/video-incomplete": Route(body=html(body='<video src="/media/untitled.mp4"></video>')),
        "/video-jsonld": Route(
            body=html(
                f'<script type="application/ld+json">{json.dumps(video_ld)}</script>'
                '<script type="application/ld+json">{not json</script>'
            )
        ),
        "/hreflang": Route(
            body=html(
                '<link rel="alternate" hreflang="en" href="/hreflang">'
                '<link rel="alternate" hreflang="de-DE" href="/de/hreflang">'
                '<link rel="alternate" hreflang="x-default" href="/hreflang">'
                '<link rel="alternate" hreflang="english!!" href="/bad">'
            ),
            headers={"Link": f'<{u("/fr/hreflang")}>; rel="alternate"; hreflang="fr"'},
        ),
        "/future-lm": Route(
            body=html(), headers={"Last-Modified": "Sat, 01 Jan 2300 00:00:00 GMT"}
        ),
        "/page-modified": Route(
            body=html('<meta property="article:modified_time" content="2024-03-01T10:00:00+01:00">')
        ),
        "/header-and-page": Route(
            body=html('<meta property="og:updated_time" content="2024-03-01T10:00:00Z">'),
            headers={"Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"},
        ),
        "/alias": Route(body=html()),
        "/private-area/x": Route(body=html()),
        "/news-new": Route(body=html()),
        "/news-old": Route(body=html()),
    }
    links = "".join(f"<a href='{path}'>x</a>" for path in pages)
    links += f"<a href='http://localhost:{server.port}/alias'>alias</a>"
    server.routes.update(pages)
    server.routes["/"] = Route(body=html(body=links))


@pytest.fixture(scope="module")
def facts_site() -> Iterator[SiteServer]:
    server = SiteServer()
    build(server)
    yield server
    server.close()


class FactsSpider(scrapy.Spider):
    name = "facts"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: Any) -> Any:
        path = response.url.split("/", 3)[3]
        if path.startswith("news-"):
            yield {
                "loc": response.url,
                "news": {
                    "publication_name": "The Example Times",
                    "publication_language": "en",
                    "publication_date": FRESH if path == "news-new" else STALE,
                    "title": f"Headline & {path}",
                },
            }
        if path == "":
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)


SETTINGS = {
    "SITEMAPGEN_DENY": [r"/private-area/"],
    "SITEMAPGEN_HOST_ALIASES": {"localhost": "127.0.0.1"},
    "SITEMAPGEN_CHANGEFREQ": [[r"/news-", "hourly"], [r"/video", "weekly"]],
    "SITEMAPGEN_PRIORITY": [[r"/$", 1.0]],
    # The images on cdn.example.net are under test as a page writes them; that host does
    # not exist, and its robots.txt, unreadable, would drop them (test_robots_engines.py).
    "SITEMAPGEN_RESPECT_ROBOTS_TXT": False,
}


def expected(server: SiteServer) -> dict[str, dict[str, object]]:
    """Every entry, written by hand from the pages above."""
    u = server.url

    def entry(**facts: object) -> dict[str, object]:
        base: dict[str, object] = {
            "lastmod": None,
            "changefreq": None,
            "priority": None,
            "images": [],
            "videos": [],
            "alternates": [],
            "news": None,
        }
        return {**base, **facts}

    return {
        u("/"): entry(priority="1.0"),
        u("/noindex-otherbot"): entry(),
        u("/canonical-self"): entry(),
        u("/refresh-self"): entry(),
        u("/session?page=2"): entry(),  # G4: the session id is stripped
        u("/jsession"): entry(),
        u("/alias"): entry(),  # G3: crawled as localhost, listed as 127.0.0.1
        u("/images"): entry(
            images=[
                f"{CDN}/og.jpg",  # document order: og:image is in the head
                u("/assets/a.png"),  # <base href> honoured
                u("/b.png"),  # padded, relative with ..
                "http://cdn.example.net/c.png",  # protocol-relative: the page's scheme
                # One per image, its largest candidate: the 2x (a URL with commas), then
                # the <picture>'s 600w (x.png, e.jpg and f.webp are smaller candidates).
                f"{CDN}/w_100,h_100/d.jpg",
                u("/assets/g.webp"),
                u("/private-area/secret.png"),  # SITEMAPGEN_DENY is for pages, not images
            ]
        ),
        u("/many-images"): entry(images=[u(f"/many/{i}.png") for i in range(1000)]),
        u("/video-complete"): entry(
            changefreq="weekly",
            videos=[
                {
                    "thumbnail_loc": u("/media/tour.jpg"),
                    "title": "Garden tour",
                    "description": "A walk through the garden.",
                    "content_loc": u("/media/tour.mp4"),
                }
            ],
        ),
        u("/video-incomplete"): entry(changefreq="weekly"),
        u("/video-jsonld"): entry(
            changefreq="weekly",
            videos=[
                {
                    "thumbnail_loc": f"{CDN}/thumbs/roses.jpg",
                    "title": "Planting & pruning <tips>",
                    "description": "How to prune roses, in 90 seconds.",
                    "content_loc": f"{CDN}/video/roses.mp4",
                    "player_loc": u("/player?v=roses"),
                    "duration": "90",
                    "publication_date": "2024-02-03T03:05:06+00:00",
                }
            ],
        ),
        u("/hreflang"): entry(
            alternates=[
                ("en", u("/hreflang")),
                ("de-DE", u("/de/hreflang")),
                ("x-default", u("/hreflang")),
                ("fr", u("/fr/hreflang")),
            ]
        ),
        u("/future-lm"): entry(),  # a Last-Modified in 2300 is no lastmod
        u("/page-modified"): entry(lastmod="2024-03-01T09:00:00+00:00"),
        # The page first (the default order since issue 21): its og:updated_time.
        u("/header-and-page"): entry(lastmod="2024-03-01T10:00:00+00:00"),
        u("/news-new"): entry(changefreq="hourly"),
        u("/news-old"): entry(changefreq="hourly"),
    }


@deferred_f_from_coro_f
async def test_every_case_gives_its_exact_entry(facts_site, crawl, tmp_path: Path) -> None:
    crawler = await crawl(SETTINGS, spidercls=FactsSpider, start_url=facts_site.url("/"))
    out = tmp_path / "out"
    origin = facts_site.origin.name
    # the alias made no origin of its own
    assert sorted(p.name for p in out.iterdir()) == [".sitemapgen-state.sqlite3", origin]
    got = read_entries(out, origin)
    want = expected(facts_site)
    assert sorted(got) == sorted(want)
    for loc, entry in want.items():
        assert got[loc] == entry, loc
    news = read_entries(out, origin, kind="sitemap-news-")
    assert news == {
        facts_site.url("/news-new"): {
            "lastmod": None,
            "changefreq": None,
            "priority": None,
            "images": [],
            "videos": [],
            "alternates": [],
            "news": {
                "name": "The Example Times",
                "language": "en",
                "publication_date": FRESH,
                "title": "Headline & news-new",
            },
        }
    }
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/excluded/noindex"] == 4
    assert stats["sitemapgen/excluded/canonical_elsewhere"] == 2
    assert stats["sitemapgen/excluded/meta_refresh"] == 1
    assert stats["sitemapgen/excluded/denied"] == 1
    assert stats["sitemapgen/excluded/news_too_old"] == 1
    assert stats["sitemapgen/skipped/lastmod_future"] == 1
    assert stats["sitemapgen/skipped/video_incomplete"] == 1
    assert stats["sitemapgen/skipped/bad_hreflang"] == 1
    assert stats["sitemapgen/skipped/images_over_limit"] == 1
    # /images: x.png, e.jpg and f.webp; the <picture>'s a.png is an <img> of its own there.
    assert stats["sitemapgen/skipped/image/smaller_candidate"] == 3
    assert stats["sitemapgen/skipped/bad_json_ld"] == 1


@deferred_f_from_coro_f
async def test_scrapy_parser_reads_extension_files(facts_site, crawl, tmp_path: Path) -> None:
    await crawl(SETTINGS, spidercls=FactsSpider, start_url=facts_site.url("/"))
    folder = tmp_path / "out" / facts_site.origin.name
    locs = []
    for path in sorted(folder.glob("sitemap-*.xml.gz")):
        sitemap = Sitemap(read_bytes(path))
        assert sitemap.type == "urlset"
        locs.extend(entry["loc"] for entry in sitemap)
    assert sorted(locs) == sorted([*expected(facts_site), facts_site.url("/news-new")])


@deferred_f_from_coro_f
async def test_rules_switched_off_list_everything(facts_site, crawl, tmp_path: Path) -> None:
    settings = {
        "SITEMAPGEN_RESPECT_NOINDEX": False,
        "SITEMAPGEN_RESPECT_CANONICAL": False,
        "SITEMAPGEN_RESPECT_META_REFRESH": False,
        "SITEMAPGEN_STRIP_PARAMS": [],
        "SITEMAPGEN_IMAGES": False,
        "SITEMAPGEN_VIDEOS": False,
        "SITEMAPGEN_ALTERNATES": False,
        "SITEMAPGEN_LASTMOD_SOURCES": [],
    }
    await crawl(settings, spidercls=FactsSpider, start_url=facts_site.url("/"))
    got = read_entries(tmp_path / "out", facts_site.origin.name)
    u = facts_site.url
    for loc in ("/noindex-meta", "/canonical-elsewhere", "/refresh", "/session?sid=abc123&page=2"):
        assert u(loc) in got
    assert u("/private-area/x") in got
    assert all(not e["images"] and not e["videos"] and not e["alternates"] for e in got.values())
    assert all(e["lastmod"] is None for e in got.values())
