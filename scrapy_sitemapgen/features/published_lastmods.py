"""The lastmods the publish settles, for the audit's verdicts (SITEMAPGEN_AUDIT): each
listed URL whose lastmod the state's content notes settled to another value than the
store's (a page whose content did not change keeps the lastmod published before;
``observed``) goes to the verdict log (``store.verdict_log.VerdictLog.published_lastmod``),
where the audit's ``lastmod_mismatch`` finds what the package publishes.

Only in the crawl's own process: the log is the crawl's store, handed to the publish as
the callback ``settled``; a build's source keeps no verdicts. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .origin_watch import OriginWatch

if TYPE_CHECKING:
    from collections.abc import Callable

    from .origin_watch import OriginStart

__all__ = ["PublishedLastmodsWatch", "published_lastmods"]


def published_lastmods(start: OriginStart) -> PublishedLastmodsWatch | None:
    """The watch of an origin when the publish was given where the lastmods go."""
    return None if start.settled is None else PublishedLastmodsWatch(start.settled)


class PublishedLastmodsWatch(OriginWatch):
    """Hands each lastmod the content notes settled on to the verdict log."""

    def __init__(self, log: Callable[[str, str | None], None]) -> None:
        self._log = log

    def settled(self, loc: str, lastmod: str | None) -> None:
        self._log(loc, lastmod)
