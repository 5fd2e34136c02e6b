"""The ``sitemap`` feed format: ``scrapy crawl site -O sitemap.xml:sitemap``.

A sitemap lists the pages a crawl saw, not the items it scraped, and it is complete only
once the spider has closed, so the item exporter writes nothing. Scrapy's FeedExporter
closes and stores its feeds in its own ``spider_closed`` handler, concurrently with the
exporter's; the exporter extension learns each such feed's URI from ``feed_slot_closed``,
waits for ``feed_exporter_closed``, and then writes the crawl's one-origin sitemap there
(``publish.delivery.publish_feeds``), over the empty file the feed left.
"""

from __future__ import annotations

import logging
from typing import IO, TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exporters import BaseItemExporter
from scrapy.extensions.feedexport import FeedExporter
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.extensions.feedexport import FeedSlot

__all__ = ["SitemapFeeds", "SitemapItemExporter"]

logger = logging.getLogger(__name__)


class SitemapItemExporter(BaseItemExporter):
    """``FEED_EXPORTERS["sitemap"]``: writes nothing per item (see the module)."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        # FeedExporter passes fields, encoding and indent, which mean nothing here.
        super().__init__(dont_fail=True, **kwargs)
        self.file = file

    def export_item(self, item: Any) -> None:
        """Nothing: the sitemap is written from the pages when the spider closes."""


class SitemapFeeds:
    """The crawl's feeds of the ``sitemap`` format, as FeedExporter stores them: their
    URIs (placeholders filled) from ``feed_slot_closed``, complete at
    ``feed_exporter_closed``, which FeedExporter sends once every feed is stored."""

    def __init__(self, crawler: Crawler, configured: tuple[str, ...]) -> None:
        self.crawler = crawler
        #: FEEDS keys of the sitemap format (``Config.sitemap_feeds``).
        self.configured = configured
        self.uris: list[str] = []
        self._all_stored: Deferred[None] = Deferred()
        crawler.signals.connect(self.feed_slot_closed, signal=signals.feed_slot_closed)
        crawler.signals.connect(self.feed_exporter_closed, signal=signals.feed_exporter_closed)

    @property
    def active(self) -> bool:
        """Whether there are sitemap feeds to wait for: FEEDS names some, and FeedExporter
        runs (it does not when FEEDS is wrong, and it has logged why). Asked from
        ``spider_opened`` on, once the extensions exist."""
        return bool(self.configured) and self.crawler.get_extension(FeedExporter) is not None

    def feed_slot_closed(self, slot: FeedSlot) -> None:
        if isinstance(slot.exporter, SitemapItemExporter):
            self.uris.append(slot.uri)

    def feed_exporter_closed(self) -> None:
        if not self._all_stored.called:
            self._all_stored.callback(None)

    async def closed(self) -> list[str]:
        """The URIs of the sitemap feeds FeedExporter stored, once it stored all feeds
        (writing ours before would have the feed's own empty file replace it)."""
        await maybe_deferred_to_future(self._all_stored)
        if not self.uris:
            logger.warning(
                "Sitemap: FEEDS names the sitemap feed %(feeds)s, but FeedExporter stored "
                "none (with FEED_STORE_EMPTY = False it stores a feed only once an item was "
                "scraped), so no sitemap was written there",
                {"feeds": ", ".join(self.configured)},
            )
        return list(self.uris)
