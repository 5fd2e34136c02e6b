"""The crawl of a live site on a schedule: a stock ``CrawlSpider`` that follows every link
of the site from its home page (docs/recurring.rst). ``SITE_URL`` names the site."""

import os
from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

SITE_URL = os.environ.get("SITE_URL", "https://www.example.org/")


class SitemapsSpider(CrawlSpider):
    name = "sitemaps"
    allowed_domains = (urlsplit(SITE_URL).hostname,)
    start_urls = (SITE_URL,)
    rules = (Rule(LinkExtractor(), follow=True),)
