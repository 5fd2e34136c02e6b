"""scrapy-sitemapgen: sitemaps.org sitemaps written from what a Scrapy crawl saw.

The components are imported on first use (PEP 562): the offline build's worker processes
import only the pure modules they run, not Scrapy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .addon import Addon
    from .crawl.exporter import SitemapExporter
    from .crawl.feed import SitemapItemExporter
    from .crawl.fetch_failures import SitemapFetchFailureMiddleware
    from .crawl.middleware import SitemapSpiderMiddleware
    from .crawl.pipeline import SitemapItemPipeline
    from .crawl.resume import SitemapResumeMiddleware
    from .items import SitemapItem

__all__ = [
    "Addon",
    "SitemapExporter",
    "SitemapFetchFailureMiddleware",
    "SitemapItem",
    "SitemapItemExporter",
    "SitemapItemPipeline",
    "SitemapResumeMiddleware",
    "SitemapSpiderMiddleware",
]
__version__ = "0.1.0"

_HOMES = {
    "Addon": "addon",
    "SitemapExporter": "crawl.exporter",
    "SitemapFetchFailureMiddleware": "crawl.fetch_failures",
    "SitemapItem": "items",
    "SitemapItemExporter": "crawl.feed",
    "SitemapItemPipeline": "crawl.pipeline",
    "SitemapResumeMiddleware": "crawl.resume",
    "SitemapSpiderMiddleware": "crawl.middleware",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
