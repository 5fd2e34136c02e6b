"""Refusing to start: a bad setting or an unusable output stops the crawl before its first
request, with one ERROR line and a non-zero exit status of ``scrapy crawl``.

Scrapy 2.19 has one road from a component to that exit status: an exception raised while
the crawler is built (an add-on's ``update_settings``, a component's ``from_crawler``).
``AsyncCrawlerRunner`` then marks the crawl ``bootstrap_failed`` (``scrapy crawl`` exits
with 1) and re-raises, so asyncio logs ``Task exception was never retrieved`` and the whole
traceback when the task is collected. The reason is already in our one line, so the crawl's
task hands its exception over here, and only that exception. (``CloseSpider`` from
``spider_opened`` stops the crawl too, but ``scrapy crawl`` then exits with 0.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, NoReturn

from ..settings import Config

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["StartupError", "checked_config", "refuse_start"]

logger = logging.getLogger(__name__)


class StartupError(ValueError):
    """The crawl was not started; the reason (a setting, its value and what is wrong) is
    the message, logged already. A ``ValueError``, as a bad setting is."""


def refuse_start(reason: str) -> NoReturn:
    """Log ``reason`` on one ERROR line and stop the crawl before its first request."""
    logger.error("Sitemap: the crawl was not started: %(reason)s", {"reason": reason})
    error = StartupError(reason)
    _hand_over(error)
    raise error from None  # the reason says it all; a setting's ValueError adds nothing


def checked_config(settings: BaseSettings) -> Config:
    """:meth:`Config.from_settings`, a bad value refusing the start (see the module)."""
    try:
        return Config.from_settings(settings)
    except ValueError as exc:
        refuse_start(str(exc))


def _hand_over(error: StartupError) -> None:
    """Take ``error`` off the running task once it ends with it, so asyncio does not log
    it again with a traceback; any other exception it ends with is reported as asyncio
    would. Outside a running loop (the Deferred-based ``CrawlerProcess``) nothing can be
    done: Twisted reports the failed Deferred itself."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop
        return
    if task is None:
        return

    def retrieve(done: asyncio.Task[object]) -> None:
        if done.cancelled():
            return
        exception = done.exception()  # marks it retrieved
        if exception is not None and exception is not error:
            done.get_loop().call_exception_handler(
                {
                    "message": "Task exception was never retrieved",
                    "exception": exception,
                    "future": done,
                }
            )

    task.add_done_callback(retrieve)
