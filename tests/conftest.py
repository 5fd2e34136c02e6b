"""A real two-origin test site on 127.0.0.1 (random ports) and a real-crawl helper."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_sitemapgen.sitemaps.urls import Origin

HTML = "text/html; charset=utf-8"


@dataclass
class Route:
    status: int = 200
    body: str = ""
    content_type: str = HTML
    headers: dict[str, str] = field(default_factory=dict)
    latin1: bool = False  # body holds raw bytes as latin-1 text (gzip files)


class SiteServer:
    """One origin: a stdlib HTTP server whose routes can point at the other origin."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        #: A folder whose files are served for paths no route names (published sitemaps).
        self.static: Path | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                route = server.routes.get(self.path) or server.static_route(self.path)
                data = route.body.encode("latin-1" if route.latin1 else "utf-8")
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.origin = Origin("http", "127.0.0.1", self.port)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def static_route(self, path: str) -> Route:
        name = path.lstrip("/")
        if self.static is None or "/" in name or not (self.static / name).is_file():
            return Route(404, "<p>not found</p>")
        types = {".gz": "application/gzip", ".xml": "application/xml", ".txt": "text/plain"}
        data = (self.static / name).read_bytes().decode("latin-1")
        return Route(body=data, content_type=types[Path(name).suffix], latin1=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _links(*hrefs: str) -> str:
    return "".join(f"<a href='{h}'>link</a>\n" for h in hrefs)


LM_HOME = "Wed, 21 Oct 2015 07:28:00 GMT"
LM_PAGE3 = "Thu, 01 Jan 2015 00:00:00 GMT"
LM_B1 = "Sunday, 06-Nov-94 08:49:37 GMT"  # RFC 850 form


def long_path(server: SiteServer, length: int) -> str:
    """A path that makes the full URL exactly ``length`` characters long (P3 boundary)."""
    base = server.url("/long/")
    return "/long/" + "x" * (length - len(base))


@dataclass
class Site:
    """Origin ``a`` and origin ``b``, and what a correct sitemap of them lists."""

    a: SiteServer
    b: SiteServer

    def expected(self) -> dict[str, dict[str, str | None]]:
        """origin folder name -> {loc: lastmod} of every indexable page (written by hand)."""
        a, b = self.a.url, self.b.url
        return {
            self.a.origin.name: {
                a("/"): "2015-10-21T07:28:00+00:00",
                a("/page1"): None,  # broken Last-Modified: omitted, never faked
                a("/page2"): None,  # only a Date header: not a lastmod
                a("/page3"): "2015-01-01T00:00:00+00:00",  # reached through /redirect-me
                a("/caf%C3%A9"): None,
                a("/sp%20ace"): None,
                a("/q?a=1&b=%22x%22"): None,
                a("/xhtml"): None,
                a(long_path(self.a, 2047)): None,  # P3: fewer than 2,048 characters
            },
            self.b.origin.name: {
                b("/"): None,
                b("/b1"): "1994-11-06T08:49:37+00:00",
                b("/b2"): None,
            },
        }


def build_site(a: SiteServer, b: SiteServer) -> Site:
    a.routes.update(
        {
            "/": Route(
                body=_links(
                    "/page1",
                    "/page2",
                    "/redirect-me",
                    "/missing",
                    "/file.pdf",
                    "/data.json",
                    "/café",
                    "/sp ace",
                    '/q?a=1&amp;b="x"',
                    "/xhtml",
                    "/private",
                    "/error",
                    long_path(a, 2047),
                    long_path(a, 2048),
                    b.url("/"),
                ),
                headers={"Last-Modified": LM_HOME},
            ),
            "/page1": Route(body=_links("/", "/page2"), headers={"Last-Modified": "not a date"}),
            "/page2": Route(
                body=_links("/page1"), headers={"Date": "Mon, 01 Jan 2024 00:00:00 GMT"}
            ),
            "/redirect-me": Route(301, headers={"Location": "/page3"}),
            "/page3": Route(body="<p>moved here</p>", headers={"Last-Modified": LM_PAGE3}),
            "/missing": Route(404, "<p>gone</p>"),
            "/error": Route(500, "<p>oops</p>"),
            "/file.pdf": Route(body="%PDF-1.4", content_type="application/pdf"),
            "/data.json": Route(body="{}", content_type="application/json"),
            "/caf%C3%A9": Route(body="<p>café</p>"),
            "/sp%20ace": Route(body="<p>space</p>"),
            "/q?a=1&b=%22x%22": Route(body="<p>query</p>"),
            "/xhtml": Route(body="<html/>", content_type="application/xhtml+xml"),
            "/private": Route(body="<p>private</p>"),
            long_path(a, 2047): Route(body="<p>2,047 characters</p>"),
            long_path(a, 2048): Route(body="<p>2,048 characters</p>"),
        }
    )
    b.routes.update(
        {
            "/": Route(body=_links("/b1", "/b2", a.url("/"))),
            "/b1": Route(body=_links("/b2"), headers={"Last-Modified": LM_B1}),
            "/b2": Route(body=_links("/")),
        }
    )
    return Site(a, b)


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    a, b = SiteServer(), SiteServer()
    yield build_site(a, b)
    a.close()
    b.close()


class SiteSpider(scrapy.Spider):
    """Follows every link on the start URL's host (any port). Links with ``private`` in them
    are requested with ``dont_sitemap``; /page2 yields a sitemap item, every page a plain one."""

    name = "site"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        yield {"title": response.url}
        if response.url.endswith("/page2"):
            yield {"loc": response.url, "changefreq": "daily", "priority": "0.8"}
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        for href in response.css("a::attr(href)").getall():
            meta = {"dont_sitemap": True} if "private" in href else {}
            yield response.follow(href, meta=meta, errback=self.on_error)

    def on_error(self, failure: Any) -> None:
        """An errback makes a 404 response flow through process_spider_output
        (SCRAPY_NOTES fact 4), which the middleware must still leave out."""


BASE_SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "RETRY_ENABLED": False,
    "ADDONS": {"scrapy_sitemapgen.Addon": 500},
}


CrawlFn = Callable[..., Any]


@pytest.fixture
def crawl(tmp_path: Path) -> CrawlFn:
    """``await crawl(settings, spidercls=SiteSpider, **spider_kwargs)`` -> the finished Crawler.

    Output goes to ``tmp_path / "out"`` unless the settings say otherwise."""

    async def run(
        settings: dict[str, Any] | None = None, spidercls: type = SiteSpider, **kwargs: Any
    ) -> Crawler:
        merged = {**BASE_SETTINGS, "SITEMAPGEN_URI": str(tmp_path / "out"), **(settings or {})}
        runner = CrawlerRunner(merged)
        crawler = runner.create_crawler(spidercls)
        await maybe_deferred_to_future(runner.crawl(crawler, **kwargs))
        return crawler

    return run
