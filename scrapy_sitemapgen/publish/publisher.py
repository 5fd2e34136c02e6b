"""One publish: every origin's set staged from a source, delivered, remembered in the
state, and reported."""

from __future__ import annotations

import logging
import shutil
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Protocol

from scrapy.utils.asyncio import run_in_thread

from .. import stats as keys
from ..sitemaps.manifest import PublishState
from ..sitemaps.urls import origin_folder
from .delivery import Stagings, publish_feeds, publish_local, publish_remote
from .indexnow import notify
from .report import report
from .staging import stage_origins

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from ..stats import Reporter
    from ..store.base import FactSource
    from .staging import OriginSet

__all__ = ["FeedTargets", "publish"]

logger = logging.getLogger(__name__)


class FeedTargets(Protocol):
    """The feeds of the ``sitemap`` format a publish also writes (``crawl.feed``)."""

    async def closed(self) -> list[str]:
        """The feed URIs, once Scrapy's FeedExporter has stored every feed."""
        ...


def _stage(
    store: FactSource, config: Config, reporter: Reporter, state: PublishState, staged: list[Path]
) -> list[OriginSet]:
    stagings = Stagings(config)

    def staging_of(origin: Origin) -> Path:
        staging = stagings.new(origin_folder(config.uri, origin))
        staged.append(staging)
        return staging

    return stage_origins(store, config, datetime.now(timezone.utc), state, reporter, staging_of)


async def publish(
    store: FactSource,
    config: Config,
    reporter: Reporter,
    crawler: Crawler | None,
    feeds: FeedTargets | None = None,
    *,
    empty_reason: str | None = None,
) -> list[OriginSet]:
    """Stage every origin's set from ``store``, deliver it, remember what was published,
    and log and count the result. Staging runs in a thread: a million URLs take seconds.
    ``crawler`` builds the feed storages of a remote output (None: local output only).
    ``feeds`` also get the one-origin sitemap, from the staged files (a local delivery
    moves them away), before the output does. ``empty_reason`` is logged if there was
    nothing to publish."""
    staged: list[Path] = []
    state = await run_in_thread(PublishState, config.state_path)
    if state.migrated:
        logger.info(
            "Sitemap: the state file %(path)s was written by an earlier version, which kept "
            "no page contents: this run records them, and lastmods follow the content from "
            "the next run on",
            {"path": config.state_path},
        )
    try:
        sets = await run_in_thread(_stage, store, config, reporter, state, staged)
        if feeds is not None and crawler is not None:
            await publish_feeds(sets, await feeds.closed(), config, crawler, reporter)
        if config.local:
            await run_in_thread(publish_local, sets)
            delivered = {s.origin for s in sets}
        else:
            if crawler is None:
                raise ValueError(f"delivering to {config.uri} needs a crawler for its feed storage")
            delivered = set(await publish_remote(sets, crawler, reporter))
        # IndexNow: the origins no previous run left fingerprints for, before the commit.
        first_runs = {
            s.origin for s in sets if not state.has_fingerprints(config.uri, s.origin.name)
        }
        state.commit_all(
            config.uri,
            ((s.origin.name, s.records) for s in sets if s.origin in delivered),
        )
        report(sets, delivered, reporter, empty_reason, log_origins=config.log_origins)
        if config.indexnow_key:
            try:
                await notify(sets, delivered, first_runs, state, config, crawler, reporter)
            except Exception:  # the sitemaps are published: this must not undo that
                reporter.stats.inc_value(keys.INDEXNOW_FAILED)
                logger.error(
                    "Sitemap: IndexNow: the submission failed; the published sitemaps stand",
                    exc_info=True,
                )
        return sets
    finally:
        state.close()
        for staging in staged:
            shutil.rmtree(staging, ignore_errors=True)
