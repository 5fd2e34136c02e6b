"""The spider the harnesses crawl with: every link on the start URL's host, nothing else.

Run by ``scrapy runspider`` in a subprocess, so a harness can kill it like a real crawl.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"
    url = ""

    async def start(self) -> Any:
        yield scrapy.Request(self.url)

    def parse(self, response: Any) -> Any:
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        host = urlsplit(self.url).hostname
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).hostname == host:
                yield scrapy.Request(url)
