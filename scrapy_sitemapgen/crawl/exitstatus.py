"""A failed publish makes ``scrapy crawl`` exit non-zero, though the crawl itself finished.

Scrapy 2.19 gives a component no public way to set the exit status, and ``finish_reason``
is Scrapy's (it says how the crawl ended, not how our publish did). ``scrapy crawl`` exits
with 1 when its process has ``bootstrap_failed`` set (``scrapy/commands/crawl.py``), and
both process classes set it when a crawl ends with no spider on its crawler:
``CrawlerProcess._crawl``'s ``finally`` and ``AsyncCrawlerProcess._done`` do
``bootstrap_failed |= not getattr(crawler, "spider", None)``, after the crawl's Deferred or
task completed. So the least private road is the public attribute ``Crawler.spider``, set
to None once nothing needs it any more: at ``engine_stopped``, the last signal before the
crawl completes, after the spider closed and the stats were dumped. The other roads are
closed or worse: an exception from a signal handler is caught and logged by Scrapy; one
from the crawl itself (``crawl_async``) would need a private hook and gets a traceback
from asyncio; ``sys.exit`` would cut short the other crawls of the process and their
close. ``crawl.startup`` takes the one road that exists before the first request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["exit_non_zero"]


def exit_non_zero(crawler: Crawler) -> None:
    """Have ``scrapy crawl`` (and any command run by ``CrawlerProcess`` or
    ``AsyncCrawlerProcess``) exit with 1 when ``crawler``'s crawl completes; see the
    module. Call it before ``engine_stopped``, from ``spider_closed`` at the latest: the
    handler connected then runs after every component's own, which still see the spider."""

    def forget_spider() -> None:
        crawler.spider = None

    # A strong reference: the closure has no other owner to keep it alive.
    crawler.signals.connect(forget_spider, signal=signals.engine_stopped, weak=False)
