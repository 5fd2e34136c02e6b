"""scrapy-sitemapgen: sitemaps.org sitemaps written from what a Scrapy crawl saw."""

from __future__ import annotations

from .addon import Addon
from .exporter import SitemapExporter
from .items import SitemapItem
from .middleware import SitemapSpiderMiddleware
from .pipeline import SitemapItemPipeline
from .resume import SitemapResumeMiddleware

__all__ = [
    "Addon",
    "SitemapExporter",
    "SitemapItem",
    "SitemapItemPipeline",
    "SitemapResumeMiddleware",
    "SitemapSpiderMiddleware",
]
__version__ = "0.1.0"
