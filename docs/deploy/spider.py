"""The crawl of a static build served on loopback: a stock ``CrawlSpider`` that follows
every link of the build (docs/deploy.rst)."""

import os

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class BuildSpider(CrawlSpider):
    name = "build"
    allowed_domains = ["127.0.0.1"]
    start_urls = [f"http://127.0.0.1:{os.environ.get('PORT', '8765')}/"]
    rules = [Rule(LinkExtractor(), follow=True)]
