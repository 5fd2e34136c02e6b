"""Addon: one line in ``ADDONS`` turns on the middleware, the pipeline, the exporter, the
resume middleware and the fetch failures' middleware."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.settings import SETTINGS_PRIORITIES

from .crawl.exporter import SitemapExporter
from .crawl.feed import SitemapItemExporter
from .crawl.fetch_failures import SitemapFetchFailureMiddleware
from .crawl.middleware import SitemapSpiderMiddleware
from .crawl.pipeline import SitemapItemPipeline
from .crawl.resume import SitemapResumeMiddleware
from .crawl.startup import refuse_start
from .locations import SITEMAP_FEED_FORMAT
from .settings import is_enabled

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]


class Addon:
    """Adds the five components at their default orders, never overriding an order the
    user already set, and the ``sitemap`` feed format (unless the user named a class for
    it). With ``SITEMAPGEN_ENABLED = False`` it adds nothing at all."""

    #: After the built-in spider middlewares, so the recorded response is the one the
    #: spider gets; the checks that matter (status, type) are ours anyway.
    middleware_order = 950
    #: Late, so an item another pipeline drops never amends the sitemap.
    pipeline_order = 900
    exporter_order = 500
    #: Next to the downloader, so it sees exactly what goes out and every raw answer.
    resume_order = 950
    #: Just before RetryMiddleware (550) on the engine's side: a failure reaches it only
    #: once the retries are spent.
    fetch_failure_order = 540

    def update_settings(self, settings: BaseSettings) -> None:
        try:
            enabled = is_enabled(settings)
        except ValueError as exc:
            refuse_start(str(exc))
        if not enabled:
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
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", SitemapFetchFailureMiddleware, self.fetch_failure_order
        )
        self._add_feed_format(settings)

    @staticmethod
    def _add_feed_format(settings: BaseSettings) -> None:
        """``FEEDS`` format ``sitemap``, at the add-on's priority (or the setting's own, when
        higher, as ``setdefault_in_component_priority_dict`` keeps it). ``-O …:sitemap`` on
        the command line is checked before add-ons load: there the project's own
        ``FEED_EXPORTERS`` must name it too (README, Commands)."""
        exporters = settings.getdict("FEED_EXPORTERS")
        if SITEMAP_FEED_FORMAT in exporters:
            return
        exporters[SITEMAP_FEED_FORMAT] = SitemapItemExporter
        priority = max(settings.getpriority("FEED_EXPORTERS") or 0, SETTINGS_PRIORITIES["addon"])
        settings.set("FEED_EXPORTERS", exporters, priority)
