"""A hostile-input corpus, crawled end to end: what real sites serve (broken dates, odd URLs,
broken HTML, stray charsets, bad JSON-LD, garbage headers), one page or link per case.

Each case has its outcome written by hand: the exact ``<url>`` entry, or a logged and
counted skip/exclusion, and never a crash or a schema-invalid file (STYLE rule 7). The
expected values come from the docs (docs/listing.rst), ``urls.normalize_loc``'s
contract, RFC 3986 (upper-case hex, dot segments, no ``[ ] < > "`` raw in a path), the
WHATWG URL standard and the HTML standard (tabs and newlines removed from URLs, leading and
trailing spaces stripped, the query of a URL encoded in its document's encoding, the path in
UTF-8), RFC 9110 (HTTP dates) and Scrapy's own documented behaviour. None was copied from
the code under test.

One crawl serves every test: the site and the crawl are module-scoped, and each test below
checks one family of cases against the same output.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pprint import pformat
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.http import HtmlResponse
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import BASE_SETTINGS, Route, SiteServer, html, long_path, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CDN = "http://cdn.example.net"  # protocol-relative images take the page's scheme


# Any path without a route (most URL cases, and what a proxy request names) gets this page.
PLAIN = Route(body="<!DOCTYPE html><html><body><p>plain page</p></body></html>")


def _attr(value: str) -> str:
    """``value`` as a double-quoted HTML attribute (only ``&`` and ``"`` need escaping)."""
    return '"' + value.replace("&", "&amp;").replace('"', "&quot;") + '"'


# --- the site -------------------------------------------------------------------------------


# Hrefs on the start page, as the page's author wrote them (before HTML attribute escaping).
def link_hrefs(server: SiteServer) -> list[str]:
    port = server.port
    return [
        "/with space/a b",
        '/quote"d',
        "/it's",
        "/a<b>c",
        "/amp&path?a=1&b=2",
        "/cdata]]>end",
        "/tab\tbed\nline\r",
        "/ctl\x01x\x7f",
        "/caf%C3%A9",
        "/café",
        "/caf%c3%a9",
        "/bad%zz",
        "/pct%",
        "/frag#top",
        "/frag",
        "  /padded \t",
        "/q?x=\"y\"&z='w'",
        f"HTTP://LOCALHOST:{port}/Upper/Path",
        "http://127.0.0.1:80/port80",  # fetched through the proxy
        f"http://user:pw@127.0.0.1:{port}/userinfo",  # fetched through the proxy
        "http:///empty-host",
        f"http://:{port}/no-host",
        f"http://[::1]:{port}/v6",
        "http://bücher.invalid/idn",
        long_path(server, 2047),
        long_path(server, 2048),
        long_path(server, 10_000),
    ]


LD_VIDEO = {
    "@context": "https://schema.org",
    "@type": "VideoObject",
    # \x0b sits next to a space, so collapsing it as whitespace or removing it agree.
    "name": "Clip\x01 \x0bone\ufffe ]]> <two> & three",
    "description": "Desc\x02ription ]]> with \ufffecontrol & <b>",
    "thumbnailUrl": "/media/thumb.jpg",
    "contentUrl": "/media/clip.mp4",
}

HUGE_FILLER = "<p>" + "lorem ipsum " * 875_000 + "</p>"  # one 10.5 MB text node


def pages(server: SiteServer) -> dict[str, Route]:
    def lm(*values: str) -> Route:
        return Route(body=html(), headers=[("Last-Modified", value) for value in values])

    cp1252 = "text/html; charset=windows-1252"
    return {
        # Last-Modified
        "/lm-malformed": lm("yesterday"),
        "/lm-empty": lm(""),
        # Two different dates: Scrapy's Headers.get() gives the last one, and that is the
        # one used (here the older of the two, so "newest wins" would show).
        "/lm-duplicate": lm("Tue, 02 Jan 2024 00:00:00 GMT", "Mon, 01 Jan 2024 00:00:00 GMT"),
        "/lm-future": lm("Sat, 01 Jan 2300 00:00:00 GMT"),
        "/lm-rfc850": lm("Wednesday, 21-Oct-15 07:28:00 GMT"),
        "/lm-asctime": lm("Sun Nov  6 08:49:37 1994"),
        "/lm-offset": lm("Wed, 21 Oct 2015 09:28:00 +0200"),
        # HTML
        "/broken-html": Route(
            body="<html><head><title>broken</title><body><div><p>unclosed <b>bold <i>"
            "<img src='/img/broken-1.png'></html><p>after a stray end tag"
            "<img src='/img/broken-2.png'><table><tr><td><img src=/img/broken-3.png>"
            "<div <p>>"
        ),
        "/huge": Route(
            body=html(body=HUGE_FILLER + "<img src='/img/huge-1.png'><img src='/img/huge-2.png'>")
        ),
        "/cp1252": Route(
            body=html(
                '<link rel="alternate" hreflang="fr" href="/cp1252-query?q=café">',
                "<img src='/img/café.png'><img src='/img/q.png?name=café'>"
                "<a href='/cp1252-query?q=café'>query</a>",
            ).encode("cp1252"),
            content_type=cp1252,
        ),
        # Reached from /cp1252: Scrapy requests the query in the page's encoding (%E9).
        "/cp1252-query?q=caf%E9": Route(
            body=html('<link rel="canonical" href="/cp1252-query?q=café">', "<p>crème</p>").encode(
                "cp1252"
            ),
            content_type=cp1252,
        ),
        # The header says windows-1252, the <meta> says UTF-8, the bytes are windows-1252.
        "/charset-conflict": Route(
            body=html('<meta charset="utf-8">', "<img src='/img/crème.png'>").encode("cp1252"),
            content_type=cp1252,
        ),
        "/nul-bytes": Route(
            body=b"<html><body><p>before\x00after</p>\x00<img src='/img/after-nul.png'></body></html>"
        ),
        # Images
        "/images/deep/hostile": Route(
            body=html(
                body="<img src='data:image/png;base64,AAAA'>"
                "<img src='javascript:alert(1)'>"
                "<img src=''><img src='   '>"
                "<img src='//cdn.example.net/proto-rel.png'>"
                "<img src='../up.png'>"
                "<img src='../../../../../too-far.png'>"
                "<img src='/a/./b/../dots.png'>"
                "<img src=' \n\t/img/padded.png \n'>"
                "<img src='/img/alt.png' alt='bad\x01\x0b\ufffe alt' title='\x01title\ufffe'>"
                "<img src='/img/ctl\x01.png'>"
                "<img src='http://:80/no-host.png'>"
                "<img src='http://user:pw@cdn.example.net/userinfo.png'>"
                "<img src='ftp://cdn.example.net/ftp.png'>"
                "<img src='http://[broken/ipv6.png'>"
            )
        ),
        # JSON-LD and hreflang
        "/ld-invalid": Route(
            body=html(
                '<script type="application/ld+json">{"@type": "VideoObject", "name": </script>'
            )
        ),
        "/ld-video": Route(
            body=html(f'<script type="application/ld+json">{json.dumps(LD_VIDEO)}</script>')
        ),
        "/hreflang": Route(
            body=html(
                '<link rel="alternate" hreflang="en" href="/hreflang">'
                '<link rel="alternate" hreflang="english" href="/english">'
                '<link rel="alternate" hreflang="en_US" href="/en_US">'
                '<link rel="alternate" hreflang="" href="/empty-hreflang">'
            )
        ),
        # Headers
        "/x-robots-garbage": Route(
            body=html(),
            headers=[
                (
                    "X-Robots-Tag",
                    ",,;; ::: \xff\xfe =, all:, unavailable_after: not a date,"
                    " max-snippet: -x, (((, googlebot:",
                )
            ],
        ),
        "/x-robots-garbage-noindex": Route(
            body=html(), headers=[("X-Robots-Tag", "\xff\xfe;;, NOINDEX , ###")]
        ),
        "/link-malformed": Route(
            body=html(),
            headers=[
                ("Link", 'garbage without brackets; rel="canonical"'),
                ("Link", '<http://[::1/broken>; rel="canonical"'),
                ("Link", "<unterminated; rel=canonical"),
                ("Link", ';;;,,, <>; rel=""'),
                ("Link", '<http://[::1/also-broken>; rel="alternate"; hreflang="de"'),
            ],
        ),
        "/content-type-odd": Route(
            body=html(body="<img src='/img/ünï.png'>"), content_type="TEXT/HTML; Charset=UTF-8"
        ),
        "/content-type-odd-2": Route(
            body=html(), content_type='text/html ; CHARSET="utf-8" ; foo=bar'
        ),
    }


def build(server: SiteServer) -> None:
    routes = pages(server)
    links = [*link_hrefs(server), *(path for path in routes if "?" not in path)]
    body = "".join(f"<a href={_attr(href)}>x</a>\n" for href in links)
    server.routes.update(routes)
    server.routes["/"] = Route(body=html(body=body))


# --- the crawl ------------------------------------------------------------------------------


class HostileSpider(scrapy.Spider):
    """Follows every link. The start page's links are fetched even when Scrapy's dupefilter
    would call them one URL (``/caf%c3%a9`` and ``/caf%C3%A9``), so that deduplication is
    the package's. Links to port 80 (nothing listens there) and links with userinfo
    (Scrapy's HTTP handler takes ``user:pw@127.0.0.1`` for the host name and fails) go
    through ``proxy``, the site's own server, so their pages are served under those URLs.
    Failed requests are recorded, not logged as errors."""

    name = "hostile"
    start_url: str
    proxy: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failed: list[str] = []

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url, errback=self.on_error)

    def parse(self, response: scrapy.http.Response) -> Any:
        if not isinstance(response, HtmlResponse):
            return
        from_start = response.url == self.start_url
        for href in response.css("a::attr(href)").getall():
            request = response.follow(href, errback=self.on_error, dont_filter=from_start)
            netloc = urlsplit(request.url).netloc
            if netloc.endswith(":80") or "@" in netloc:
                request.meta["proxy"] = self.proxy
            yield request

    def on_error(self, failure: Any) -> None:
        self.failed.append(failure.request.url)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Result:
    server: SiteServer
    crawler: Crawler
    spider: HostileSpider
    out: Path
    logs: list[logging.LogRecord]

    @property
    def stats(self) -> dict[str, Any]:
        return self.crawler.stats.get_stats()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Result]:
    server = SiteServer()
    server.default = PLAIN
    build(server)
    out = tmp_path_factory.mktemp("hostile") / "out"
    settings = {
        **BASE_SETTINGS,
        "SITEMAPGEN_URI": str(out),
        "URLLENGTH_LIMIT": 20_000,  # let the 10,000-character URL reach the server
        "DNS_TIMEOUT": 5,
        "DOWNLOAD_TIMEOUT": 20,
        # Most hostile URLs serve one plain page: what is under test is each URL, so
        # they are not left out as duplicates by content (test_content_crawl.py is).
        "SITEMAPGEN_DEDUPE_CONTENT": False,
        # What is under test is each hreflang value and href as the page declares it,
        # so they are written as declared: /hreflang names only itself, and /cp1252's
        # alternate is not named back, which whole clusters leave out
        # (tests/test_hreflang_clusters.py).
        "SITEMAPGEN_ALTERNATES_CHECK": "as_declared",
        # What is under test is each URL as written; the images on cdn.example.net (a host
        # that does not exist, whose robots.txt cannot be read) would otherwise be dropped
        # (test_robots_engines.py).
        "SITEMAPGEN_RESPECT_ROBOTS_TXT": False,
    }
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        runner = CrawlerRunner(settings)
        crawler = runner.create_crawler(HostileSpider)
        pytest_twisted.blockon(
            runner.crawl(crawler, start_url=server.url("/"), proxy=server.url(""))
        )
    finally:
        root.removeHandler(handler)
    assert isinstance(crawler.spider, HostileSpider)
    yield Result(server, crawler, crawler.spider, out, handler.records)
    server.close()


# --- expectations (by hand) -----------------------------------------------------------------


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


Expected = dict[str, dict[str, dict[str, object]]]  # case family -> {loc: entry}

FAMILIES = ["urls", "last_modified", "html", "images", "json_ld_hreflang", "headers"]


def expected(server: SiteServer) -> Expected:
    """Every page that must be listed, by case family; the locs name their origin."""
    u = server.url
    port = server.port
    return {
        "urls": {
            u("/"): entry(),
            # RFC 3986 section 2 / WHATWG path percent-encode set: space, '"', '<', '>', '['
            # and ']' are escaped in a path; "'" and "&" are legal there and kept (then
            # entity-escaped in the file, P1).
            u("/with%20space/a%20b"): entry(),
            u("/quote%22d"): entry(),
            u("/it's"): entry(),
            u("/a%3Cb%3Ec"): entry(),
            u("/amp&path?a=1&b=2"): entry(),
            u("/cdata%5D%5D%3Eend"): entry(),
            u("/tabbedline"): entry(),  # WHATWG: tabs and newlines removed, as browsers do
            u("/ctl%01x%7F"): entry(),  # C0 controls and DEL percent-encoded
            # /caf%C3%A9, /café and /caf%c3%a9 (each fetched) are one entry: UTF-8 path,
            # hex digits upper-cased (RFC 3986 6.2.2.1).
            u("/caf%C3%A9"): entry(),
            u("/bad%25zz"): entry(),  # a stray % becomes %25 (docs, RFC 3986 2.1)
            u("/pct%25"): entry(),
            u("/frag"): entry(),  # the fragment is dropped: /frag#top and /frag are one
            u("/padded"): entry(),  # leading/trailing space and tab stripped (WHATWG)
            u("/q?x=%22y%22&z=%27w%27"): entry(),  # WHATWG special-query set: " and ' escaped
            # Python's urljoin (Scrapy's response.follow) fills an empty authority from the
            # page, so Scrapy fetched /empty-host here; it is listed where it was served.
            u("/empty-host"): entry(),
            u(long_path(server, 2047)): entry(),  # P3: fewer than 2,048 characters
            # Upper-case scheme and host: lower-cased, an origin of its own (P12).
            f"http://localhost:{port}/Upper/Path": entry(),
            # The default port is dropped from the loc (the folder still names port 80).
            "http://127.0.0.1/port80": entry(),
        },
        "last_modified": {
            u("/lm-malformed"): entry(),  # counted bad_lastmod
            u("/lm-empty"): entry(),  # counted bad_lastmod
            # Two headers: the last one (Scrapy's Headers.get), not the newest.
            u("/lm-duplicate"): entry(lastmod="2024-01-01T00:00:00+00:00"),
            u("/lm-future"): entry(),  # counted lastmod_future
            u("/lm-rfc850"): entry(lastmod="2015-10-21T07:28:00+00:00"),
            u("/lm-asctime"): entry(lastmod="1994-11-06T08:49:37+00:00"),  # no zone: GMT
            u("/lm-offset"): entry(lastmod="2015-10-21T07:28:00+00:00"),  # +0200 -> UTC
        },
        "html": {
            u("/broken-html"): entry(
                images=[u("/img/broken-1.png"), u("/img/broken-2.png"), u("/img/broken-3.png")]
            ),
            u("/huge"): entry(images=[u("/img/huge-1.png"), u("/img/huge-2.png")]),
            # A windows-1252 page: a URL's path is UTF-8 whatever the page's encoding
            # (WHATWG URL, RFC 3987), so é is %C3%A9; its query is encoded in the document's
            # encoding (HTML "encoding-parse a URL"; normalize_loc's "encoding for the query
            # as browsers do"), so é is %E9: the URL a browser fetches, and the one Scrapy
            # requested for the same href in <a>.
            u("/cp1252"): entry(
                images=[u("/img/caf%C3%A9.png"), u("/img/q.png?name=caf%E9")],
                alternates=[("fr", u("/cp1252-query?q=caf%E9"))],
            ),
            # Its canonical, "/cp1252-query?q=café" in windows-1252, names the page itself.
            u("/cp1252-query?q=caf%E9"): entry(),
            u("/charset-conflict"): entry(images=[u("/img/cr%C3%A8me.png")]),  # header wins
            u("/nul-bytes"): entry(images=[u("/img/after-nul.png")]),
        },
        "images": {
            u("/images/deep/hostile"): entry(
                images=[
                    f"{CDN}/proto-rel.png",  # protocol-relative: the page's scheme
                    u("/images/up.png"),
                    u("/too-far.png"),  # RFC 3986 5.2.4: ".." above the root stays there
                    u("/a/dots.png"),
                    u("/img/padded.png"),
                    u("/img/alt.png"),  # alt/title are not written (Google deprecated them)
                    u("/img/ctl%01.png"),
                ]
            ),
        },
        "json_ld_hreflang": {
            u("/ld-invalid"): entry(),  # counted bad_json_ld
            u("/ld-video"): entry(
                videos=[
                    {
                        "thumbnail_loc": u("/media/thumb.jpg"),
                        "title": "Clip one ]]> <two> & three",  # forbidden characters removed
                        "description": "Description ]]> with control & <b>",
                        "content_loc": u("/media/clip.mp4"),
                    }
                ]
            ),
            u("/hreflang"): entry(alternates=[("en", u("/hreflang"))]),  # 3 bad_hreflang
        },
        "headers": {
            u("/x-robots-garbage"): entry(),
            u("/link-malformed"): entry(),  # no canonical, no alternate can be read
            u("/content-type-odd"): entry(images=[u("/img/%C3%BCn%C3%AF.png")]),
            u("/content-type-odd-2"): entry(),
        },
    }


#: Every skip and exclusion the corpus must produce, and nothing else.
EXPECTED_COUNTS = {
    "sitemapgen/skipped/bad_lastmod": 2,  # "yesterday", ""
    "sitemapgen/skipped/lastmod_future": 1,  # year 2300
    "sitemapgen/skipped/userinfo": 1,  # http://user:pw@127.0.0.1:PORT/userinfo
    "sitemapgen/skipped/url_too_long": 2,  # 2,048 and 10,000 characters (P3)
    "sitemapgen/skipped/image_bad_host": 1,  # http://:80/no-host.png
    "sitemapgen/skipped/image_userinfo": 1,
    "sitemapgen/skipped/image_bad_scheme": 1,  # ftp:
    "sitemapgen/skipped/image_bad_url": 1,  # http://[broken/ipv6.png: the URL parser fails
    "sitemapgen/skipped/bad_json_ld": 1,
    "sitemapgen/skipped/bad_hreflang": 3,  # "english", "en_US", ""
    "sitemapgen/skipped/alternate_bad_url": 1,  # Link: <http://[::1/also-broken>
    "sitemapgen/excluded/noindex": 1,  # NOINDEX amid garbage in X-Robots-Tag
}


def _all_entries(result: Result) -> dict[str, dict[str, object]]:
    """{loc: entry} over every origin folder; read_entries schema-validates every file."""
    entries: dict[str, dict[str, object]] = {}
    for folder in sorted(p for p in result.out.iterdir() if p.is_dir()):
        entries.update(read_entries(result.out, folder.name))
    return entries


# --- tests ----------------------------------------------------------------------------------


def test_crawl_finishes_without_errors(hostile: Result) -> None:
    stats = hostile.stats
    assert stats["finish_reason"] == "finished"
    assert not [key for key in stats if key.startswith("spider_exceptions")]
    errors = [
        f"{r.name}: {r.getMessage()}"
        for r in hostile.logs
        if r.levelno >= logging.ERROR and r.name.startswith("scrapy_sitemapgen")
    ]
    assert errors == []
    assert "sitemapgen/output/failed" not in stats


def test_one_valid_set_per_origin(hostile: Result) -> None:
    """Upper-case LOCALHOST and the explicit :80 give origins of their own; images on a
    CDN give none. read_entries validates each index and urlset against the schemas."""
    port = hostile.server.port
    folders = sorted(p.name for p in hostile.out.iterdir() if p.is_dir())
    assert folders == sorted(
        [hostile.server.origin.name, f"http_localhost_{port}", "http_127.0.0.1_80"]
    )
    for name in folders:
        assert read_entries(hostile.out, name)


@pytest.mark.parametrize("family", FAMILIES)
def test_exact_entries(hostile: Result, family: str) -> None:
    got = _all_entries(hostile)
    want = expected(hostile.server)[family]
    problems = {
        loc: {"got": got.get(loc, "no entry"), "want": want[loc]}
        for loc in want
        if got.get(loc) != want[loc]
    }
    assert not problems, pformat(problems, width=100)


def test_nothing_else_listed(hostile: Result) -> None:
    """No other entry: the userinfo URL, the 2,048- and 10,000-character URLs, the
    noindex page, and the links that cannot be fetched are all absent."""
    want = {loc for family in expected(hostile.server).values() for loc in family}
    assert sorted(set(_all_entries(hostile)) - want) == []


def test_unreachable_links_fail_quietly(hostile: Result) -> None:
    """An IPv6 literal (the server listens on 127.0.0.1 only), an empty host with a port,
    and an IDN host that cannot resolve: the download fails and the errback sees it."""
    port = hostile.server.port
    assert sorted(hostile.spider.failed) == sorted(
        [
            f"http://[::1]:{port}/v6",
            "http://xn--bcher-kva.invalid/idn",  # Scrapy sends the IDN host as punycode
            f"http://:{port}/no-host",
        ]
    )


def test_server_answered_every_variant(hostile: Result) -> None:
    """The long URLs reached the server (so the P3 check is the package's), and so did each
    spelling of one page (so the deduplication is the package's, not Scrapy's dupefilter)."""
    server = hostile.server
    requested = server.requested
    for length in (2047, 2048, 10_000):
        assert long_path(server, length) in requested
    userinfo = f"http://user:pw@127.0.0.1:{server.port}/userinfo"  # through the proxy
    for path in ("/caf%C3%A9", "/caf%c3%a9", "http://127.0.0.1:80/port80", userinfo):
        assert path in requested, path
    assert requested.count("/caf%C3%A9") == 2  # written escaped and as raw é
    assert requested.count("/frag") == 2  # /frag#top and /frag


def _counts(result: Result) -> dict[str, Any]:
    return {
        key: value
        for key, value in result.stats.items()
        if key.startswith(("sitemapgen/skipped/", "sitemapgen/excluded/"))
    }


@pytest.mark.parametrize("key", list(EXPECTED_COUNTS))
def test_counted(hostile: Result, key: str) -> None:
    assert _counts(hostile).get(key) == EXPECTED_COUNTS[key]


def test_nothing_else_counted(hostile: Result) -> None:
    assert sorted(set(_counts(hostile)) - set(EXPECTED_COUNTS)) == []


@pytest.mark.parametrize(
    "reason", [key.rsplit("/", 1)[1] for key in EXPECTED_COUNTS if "/skipped/" in key]
)
def test_skip_logged_with_a_warning(hostile: Result, reason: str) -> None:
    warned = [
        r.getMessage()
        for r in hostile.logs
        if r.levelno == logging.WARNING and r.name.startswith("scrapy_sitemapgen")
    ]
    assert [message for message in warned if f"({reason})" in message]


# --- a <base href> Scrapy cannot parse ------------------------------------------------------


class BrokenBaseSpider(HostileSpider):
    """Reads its page without Scrapy's selector (which raises on this page) and yields an
    item, so that what the spider makes of the page can be seen to survive; keeps each
    failure's error."""

    name = "broken_base"

    def parse(self, response: scrapy.http.Response) -> Any:
        yield {"url": response.url, "bytes": len(response.body)}

    def on_error(self, failure: Any) -> None:
        self.failed.append(repr(failure.value))


BROKEN_BASE = html(
    '<base href="http://[::1/x/"><link rel="alternate" hreflang="de" href="de">',
    "<img src='img.png'><img src='/img/rooted.png'>",
)


@deferred_f_from_coro_f
async def test_broken_base_href(crawl: Any, tmp_path: Path) -> None:
    """``<base href="http://[::1/x/">``: Scrapy's ``response.selector`` (through its
    ``get_base_url``) raises ValueError on it. The page is read without that cache, the
    base is passed over for the page URL as in a browser (HTML, "frozen base URL": the
    fallback base URL), the skip is counted, and the spider's item is not lost."""
    server = SiteServer()
    server.routes["/page"] = Route(body=BROKEN_BASE)
    try:
        # Scrapy's MetaRefreshMiddleware reads every page's base URL too and fails the
        # request first; with it off (the extension reads meta refresh itself), the page
        # reaches the spider.
        crawler = await crawl(
            {"METAREFRESH_ENABLED": False}, BrokenBaseSpider, start_url=server.url("/page")
        )
        default = await crawl(
            {"SITEMAPGEN_URI": str(tmp_path / "default")},
            BrokenBaseSpider,
            start_url=server.url("/page"),
        )
    finally:
        server.close()
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert not [key for key in stats if key.startswith("spider_exceptions")]
    assert stats["item_scraped_count"] == 1
    assert stats["sitemapgen/skipped/bad_base_url"] == 1
    u = server.url
    assert read_entries(tmp_path / "out", server.origin.name) == {
        u("/page"): entry(
            images=[u("/img.png"), u("/img/rooted.png")], alternates=[("de", u("/de"))]
        )
    }
    # Scrapy's own default: the request fails in its downloader middleware, before any
    # spider middleware; nothing of the extension's is involved, and nothing breaks.
    assert default.spider.failed and "Invalid IPv6 URL" in default.spider.failed[0]
    default_stats = default.stats.get_stats()
    assert default_stats["finish_reason"] == "finished"
    assert "sitemapgen/output/failed" not in default_stats
    assert not (tmp_path / "default" / server.origin.name).exists()
