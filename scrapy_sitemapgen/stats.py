"""The ``sitemapgen/...`` stats vocabulary, and the one helper that counts and logs a skip.

Every key is built here so the README's stats table and the code cannot drift apart.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

__all__ = ["Reporter"]

PREFIX = "sitemapgen"
PAGES_RECORDED = f"{PREFIX}/pages/recorded"
ITEMS_RECORDED = f"{PREFIX}/items/recorded"
URLS_STORED = f"{PREFIX}/urls/stored"
ORIGINS = f"{PREFIX}/origins"
URLS_WRITTEN = f"{PREFIX}/urls/written"
FILES_WRITTEN = f"{PREFIX}/files/written"
OUTPUT_FAILED = f"{PREFIX}/output/failed"
OUTPUT_POSTPONED = f"{PREFIX}/output/postponed"
RESUME_REISSUED = f"{PREFIX}/resume/reissued"
RESUME_QUEUES_REMOVED = f"{PREFIX}/resume/queues_removed"
STORE_LOST = f"{PREFIX}/store/lost"


def excluded(reason: str) -> str:
    """A page left out by a listing rule (not 200, not HTML, ``dont_sitemap``)."""
    return f"{PREFIX}/excluded/{reason}"


def skipped(reason: str) -> str:
    """A value or entry dropped because it was bad data (URL, date, size)."""
    return f"{PREFIX}/skipped/{reason}"


def delivery_failed(storage: str) -> str:
    """A file a feed storage could not store (FeedExporter counts feedexport/failed_count)."""
    return f"{PREFIX}/delivery/failed/{storage}"


def delivery_stored(storage: str) -> str:
    return f"{PREFIX}/delivery/stored/{storage}"


def urls_written_for(origin_name: str) -> str:
    return f"{URLS_WRITTEN}/{origin_name}"


def files_written_for(origin_name: str) -> str:
    return f"{FILES_WRITTEN}/{origin_name}"


class Reporter:
    """Counts skips and exclusions, logging the first of each cause at WARNING (or DEBUG for
    exclusions, which are the rules working) and the rest at DEBUG, so a site with a million
    bad dates shows the problem once without flooding the log."""

    def __init__(self, stats: StatsCollector, logger: logging.Logger) -> None:
        self.stats = stats
        self.logger = logger
        self._warned: set[str] = set()

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        self.stats.inc_value(skipped(reason))
        first = reason not in self._warned
        self._warned.add(reason)
        self.logger.log(
            logging.WARNING if first else logging.DEBUG,
            "Sitemap: left out %(what)s of %(url)s (%(reason)s)%(more)s",
            {
                "what": "the URL" if detail is None else repr(detail)[:200],
                "url": url[:300],
                "reason": reason,
                "more": "; further cases are logged at DEBUG" if first else "",
            },
        )

    def exclude(self, reason: str, url: str) -> None:
        self.stats.inc_value(excluded(reason))
        self.logger.debug(
            "Sitemap: not listing %(url)s (%(reason)s)", {"url": url[:300], "reason": reason}
        )
