"""
A whole-site crawler: start at one URL and follow every link on its host.

The add-on records the pages by itself, so the spider does not need to know
about sitemaps. It only yields items for blog pages, to show how a spider can
hand the add-on its own ``changefreq``/``priority`` for a URL.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import HtmlResponse

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response

logger = logging.getLogger(__name__)


class SiteSpider(scrapy.Spider):
    """Crawl every page on the start URL's host, on any port.

    Usage: ``scrapy crawl site -a url=http://127.0.0.1:8000/``.

    The filter compares the hostname, not the netloc: the demo's two origins
    share 127.0.0.1 and differ only by port, and both should be crawled (and
    get separate sitemaps). ``allowed_domains`` is not used because Scrapy's
    offsite check is about domains; a host-only rule is clearer here.
    """

    name = "site"

    def __init__(self, url: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not url:
            msg = "the site spider needs a start URL: scrapy crawl site -a url=http://HOST:PORT/"
            raise ValueError(msg)
        hostname = urlsplit(url).hostname
        if urlsplit(url).scheme not in {"http", "https"} or not hostname:
            msg = f"start URL must be an absolute http(s) URL, got {url!r}"
            raise ValueError(msg)
        self.start_url: str = url
        self.allowed_hostname: str = hostname

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.start_url, callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request | dict[str, Any]]:
        # Images, text files and other downloads reached through <a href> end
        # here too; they have no links to follow.
        if not isinstance(response, HtmlResponse):
            return
        if urlsplit(response.url).path.startswith("/blog/"):
            # The add-on's item pipeline reads `loc`, `lastmod`, `changefreq`
            # and `priority` from items; no `lastmod` here, so the page's own
            # data (e.g. its Last-Modified header) is left to decide it.
            yield {"loc": response.url, "changefreq": "weekly", "priority": 0.6}
        # Filter before building requests: Request() raises ValueError for
        # `mailto:` and `tel:` links, which would end the callback early.
        urls = [response.urljoin(href.strip()) for href in response.css("a::attr(href)").getall()]
        on_host = [url for url in urls if urlsplit(url).hostname == self.allowed_hostname]
        if len(on_host) < len(urls):
            logger.debug(
                "%s: not following %d %s off %s",
                response.url,
                len(urls) - len(on_host),
                "link" if len(urls) - len(on_host) == 1 else "links",
                self.allowed_hostname,
            )
        yield from response.follow_all(urls=on_host)
