"""Addon: one line in ``ADDONS`` turns on the middleware, the pipeline, the exporter and the
resume middleware."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from .crawl.exporter import SitemapExporter
from .crawl.middleware import SitemapSpiderMiddleware
from .crawl.pipeline import SitemapItemPipeline
from .crawl.resume import SitemapResumeMiddleware
from .settings import is_enabled

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]


class Addon:
    """Adds the four components at their default orders, never overriding an order the
    user already set. With ``SITEMAPGEN_ENABLED = False`` it adds nothing at all."""

    #: After the built-in spider middlewares, so the recorded response is the one the
    #: spider gets; the checks that matter (status, type) are ours anyway.
    middleware_order = 950
    #: Late, so an item another pipeline drops never amends the sitemap.
    pipeline_order = 900
    exporter_order = 500
    #: Next to the downloader, so it sees exactly what goes out and every raw answer.
    resume_order = 950

    def update_settings(self, settings: BaseSettings) -> None:
        if not is_enabled(settings):
            raise NotConfigured
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", SitemapSpiderMiddleware, self.middleware_order
        )
        settings.setdefault_in_component_priority_dict(
            "ITEM_PIPELINES", SitemapItemPipeline, self.pipeline_order
        )
        settings.setdefault_in_component_priority_dict(
            "EXTENSIONS", SitemapExporter, self.exporter_order
        )
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", SitemapResumeMiddleware, self.resume_order
        )
