"""The one generated site of the kill-and-resume test and of the harness's crawl, kill and
profile runs, served on 127.0.0.1, and the spider that crawls it.

The site (:class:`Site`): pages ``/p/0`` .. ``/p/N-1`` with images (``src``, ``srcset``,
``og:image``), hreflang alternates, a ``Last-Modified`` header on odd pages and an
``article:modified_time`` on every fifth, about 4 KB of text each, links that reach every
page, every 50th page noindex and (``canonicals=True``) every 97th canonical elsewhere, and
a link to a missing page (404) on every tenth. Every page is rendered once at start-up, so
the server costs little CPU during a crawl; ``delay`` makes each page answer that much
later (the kill trials need a crawl slow enough to be killed in the middle).

    python -m benchmarks serve --pages 2000      # serve it until Ctrl-C

The spider (:class:`SiteSpider`, this very file for ``scrapy runspider``, :data:`SPIDER`):
every link on the start URL's host, nothing else. Run in a subprocess, so a harness can kill
it like a real crawl. With ``-a cpu_stats=1`` it counts, into the stats, the process time
of the crawl and the part of it spent in the sitemap extension's code; with
``-a cpu_stats=crawl`` (A/B of two versions of the code) the crawl's alone, touching none
of the extension's internals.

It lives with the tests, which crawl it; the harness (``benchmarks/``) imports it from
here, and the tests import nothing from the harness. ``scrapy runspider`` imports this file
as a top-level module: it imports nothing from the ``tests`` package.
"""

from __future__ import annotations

import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy

if TYPE_CHECKING:
    from collections.abc import Callable

#: The spider's file, for ``scrapy runspider``.
SPIDER = Path(__file__).resolve()

_TEXT = (
    "Sitemaps are an easy way for webmasters to inform search engines about pages on their "
    "sites that are available for crawling. "
)
_LANGUAGES = ("en", "de", "fr")
_STAT = re.compile(r"^[{ ]'([^']+)': ([0-9.]+|'[^']*')[,}]")


def noindex(i: int) -> bool:
    return i % 50 == 7


def canonical_elsewhere(i: int) -> bool:
    return i % 97 == 3


def page(i: int, pages: int, canonicals: bool = True) -> bytes:
    """Page i links to its tree children, its neighbour and a few random pages: all reachable."""
    rng = random.Random(i)
    links = [2 * i + 1, 2 * i + 2, i + 1, *(rng.randrange(pages) for _ in range(4))]
    hrefs = "".join(f'<li><a href="/p/{j}">Page {j}</a></li>' for j in links if j < pages)
    head = [
        f"<title>Page {i}</title>",
        f'<meta property="og:image" content="https://cdn.example.com/og/{i}.jpg">',
        *(
            f'<link rel="alternate" hreflang="{lang}" href="/{lang}/p/{i}">'
            for lang in _LANGUAGES[1:]
        ),
        f'<link rel="alternate" hreflang="en" href="/p/{i}">',
        f'<link rel="alternate" hreflang="x-default" href="/p/{i}">',
    ]
    if i % 5 == 1:
        head.append('<meta property="article:modified_time" content="2024-03-01T12:00:00+01:00">')
    if noindex(i):
        head.append('<meta name="robots" content="noindex">')
    if canonicals and canonical_elsewhere(i):
        head.append(f'<link rel="canonical" href="/p/{(i + 1) % pages}">')
    images = "".join(
        f'<img src="/img/{i}-{k}.jpg" srcset="/img/{i}-{k}-480.jpg 480w, /img/{i}-{k}-960.jpg 960w" '
        f'alt="image {k}">'
        for k in range(1 + i % 3)
    )
    text = "".join(f"<p>{_TEXT * 3}</p>" for _ in range(10))
    missing = f'<li><a href="/missing/{i}">gone</a></li>' if i % 10 == 0 else ""  # 404s
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{"".join(head)}</head>'
        f"<body><h1>Page {i}</h1>{images}{text}<ul>{hrefs}{missing}</ul></body></html>"
    ).encode()


class Site:
    """The site on 127.0.0.1, on a free port, until :meth:`close`."""

    def __init__(self, pages: int, delay: float = 0.0, canonicals: bool = True) -> None:
        self.pages = pages
        self.canonicals = canonicals
        bodies = [page(i, pages, canonicals) for i in range(pages)]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                parts = self.path.split("/")
                if (
                    len(parts) == 3
                    and parts[1] == "p"
                    and parts[2].isdigit()
                    and int(parts[2]) < pages
                ):
                    if delay:
                        time.sleep(delay)
                    i = int(parts[2])
                    body = bodies[i]
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    if i % 2:
                        self.send_header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
                else:
                    body = b"not found"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def listed(self, i: int) -> bool:
        """Whether page i belongs in the sitemap (the middleware's rules, as the site
        breaks them)."""
        return not noindex(i) and not (self.canonicals and canonical_elsewhere(i))

    def expected(self) -> set[str]:
        return {f"{self.root}/p/{i}" for i in range(self.pages) if self.listed(i)}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def crawl_command(site: Site, out: Path, *settings: str, cpu_stats: str = "") -> list[str]:
    """``scrapy runspider`` of this file over ``site``, the add-on on, its sitemaps to
    ``out``, with the settings every harness crawl shares and then ``settings``
    (``NAME=VALUE``); ``cpu_stats`` as the spider takes it."""
    return start_command(f"{site.root}/p/0", out, *settings, cpu_stats=cpu_stats)


def start_command(url: str, out: Path, *settings: str, cpu_stats: str = "") -> list[str]:
    """:func:`crawl_command` from any start URL (the crawl of a served folder starts at its
    root page)."""
    command = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER)]
    command += ["-a", f"url={url}"]
    if cpu_stats:
        command += ["-a", f"cpu_stats={cpu_stats}"]
    for setting in (
        'ADDONS={"scrapy_sitemapgen.Addon": 500}',
        f"SITEMAPGEN_URI={out}",
        "LOG_LEVEL=INFO",
        "TELNETCONSOLE_ENABLED=False",
        "CONCURRENT_REQUESTS=16",
        "RETRY_ENABLED=False",
        *settings,
    ):
        command += ["-s", setting]
    return command


def crawl_stats(log: str) -> dict[str, str]:
    """The stats Scrapy dumps at close, from a crawl's log text: name to its printed value
    (strings keep their quotes)."""
    return {m[1]: m[2] for line in log.splitlines() if (m := _STAT.match(line))}


class SiteSpider(scrapy.Spider):
    name = "site"
    url = ""
    cpu_stats = ""

    async def start(self) -> Any:
        if self.cpu_stats:
            self._count_cpu()
        yield scrapy.Request(self.url)

    def parse(self, response: Any) -> Any:
        if self.cpu_stats:
            self._last_cpu = time.process_time()
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        host = urlsplit(self.url).hostname
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).hostname == host:
                yield scrapy.Request(url)

    def _count_cpu(self) -> None:
        """Process time from the first request to the last response parsed, and the part
        of it the extension's code took on the way: its spider middleware (the page's facts
        and the store's record; not the HTML parse, which the spider makes anyway, on the
        same cached selector) and the store's periodic flushes. Writing the sitemaps at
        close comes after, and is not counted. The few clock reads are the only cost."""
        self._started_cpu = self._last_cpu = time.process_time()
        self._extension_cpu = 0.0
        from scrapy_sitemapgen import SitemapExporter, SitemapSpiderMiddleware

        exporter = self.crawler.get_extension(SitemapExporter)
        if exporter is None or self.cpu_stats == "crawl":  # the crawl's CPU alone
            return
        inside = [False]  # a flush from within a record is in the record's time already

        def timed(function: Callable[..., Any], parse_first: bool = False) -> Callable[..., Any]:
            def wrapper(*args: Any) -> Any:
                if inside[0]:
                    return function(*args)
                if parse_first and isinstance(args[0], scrapy.http.HtmlResponse):
                    _ = args[0].selector  # the shared parse: the spider's, not the extension's
                inside[0] = True
                started = time.process_time()
                try:
                    return function(*args)
                finally:
                    self._extension_cpu += time.process_time() - started
                    inside[0] = False

            return wrapper

        store = exporter.recorder.store
        assert self.crawler.engine is not None and store is not None
        for middleware in self.crawler.engine.scraper.spidermw.middlewares:
            if isinstance(middleware, SitemapSpiderMiddleware):
                middleware._record = timed(middleware._record, parse_first=True)  # type: ignore[method-assign]
        store.flush = timed(store.flush)  # type: ignore[method-assign]

    def closed(self, reason: str) -> None:
        if self.cpu_stats:
            stats = self.crawler.stats
            assert stats is not None
            stats.set_value("bench/crawl_cpu", round(self._last_cpu - self._started_cpu, 4))
            stats.set_value("bench/extension_cpu", round(self._extension_cpu, 4))


def serve(pages: int, delay: float = 0.0) -> int:
    """Serve the site until Ctrl-C (``python -m benchmarks serve``)."""
    site = Site(pages, delay)
    print(f"serving {pages} pages at {site.root}/p/0 (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        site.close()
    return 0
