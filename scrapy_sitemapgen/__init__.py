"""scrapy-sitemapgen: sitemaps.org sitemaps written from what a Scrapy crawl saw."""

from __future__ import annotations

from .addon import Addon
from .exporter import SitemapExporter
from .items import SitemapItem
from .middleware import SitemapSpiderMiddleware
from .pipeline import SitemapItemPipeline

__all__ = [
    "Addon",
    "SitemapExporter",
    "SitemapItem",
    "SitemapItemPipeline",
    "SitemapSpiderMiddleware",
]
__version__ = "0.1.0"
