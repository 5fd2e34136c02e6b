"""The spider the harnesses crawl with: every link on the start URL's host, nothing else.

Run by ``scrapy runspider`` in a subprocess, so a harness can kill it like a real crawl.
With ``-a cpu_stats=1`` (the benchmark's crawl overhead) it also counts, into the stats,
the process time of the crawl and the part of it spent in the sitemap extension's code;
with ``-a cpu_stats=crawl`` (``benchmarks.ab``, two versions of the code side by side),
the crawl's alone, touching none of the extension's internals.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy

if TYPE_CHECKING:
    from collections.abc import Callable


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

        assert self.crawler.engine is not None and exporter.store is not None
        for middleware in self.crawler.engine.scraper.spidermw.middlewares:
            if isinstance(middleware, SitemapSpiderMiddleware):
                middleware._record = timed(middleware._record, parse_first=True)  # type: ignore[method-assign]
        exporter.store.flush = timed(exporter.store.flush)  # type: ignore[method-assign]

    def closed(self, reason: str) -> None:
        if self.cpu_stats:
            stats = self.crawler.stats
            assert stats is not None
            stats.set_value("bench/crawl_cpu", round(self._last_cpu - self._started_cpu, 4))
            stats.set_value("bench/extension_cpu", round(self._extension_cpu, 4))
