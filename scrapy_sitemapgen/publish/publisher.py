"""One publish: every origin's set staged from a source, delivered, remembered in the
state, and reported, a group of origins at a time."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from scrapy.utils.asyncio import run_in_thread

from .. import clock
from .. import stats as keys
from ..build.source import first_origins
from ..failures import failure_of
from ..features.hreflang_clusters import ClusterIndex, build_clusters
from ..plural import noun
from ..sitemaps.lastmod import observes
from ..sitemaps.urls import origin_folder
from ..state.statefile import PublishState
from ..store.base import StoreError
from .close_report import CloseReport, count_clusters, log_broken_links, log_clusters
from .delivery import Stagings, publish_feeds, publish_local, publish_remote
from .recurring import RecurringSource
from .staging import GROUP_ORIGINS, stage_origins
from .submissions import NotifyLog, notify

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Generator, Iterable

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from ..sitemaps.verdicts import Verdict
    from ..stats import Reporter
    from ..store.base import FactSource
    from ..store.verdict_log import VerdictLog
    from .delivery import FeedStorages
    from .staging import OriginSet
    from .submissions import Fetch

__all__ = ["FeedTargets", "PublishOutcome", "failure_of_publish", "kept_after", "publish"]

logger = logging.getLogger(__name__)


class FeedTargets(Protocol):
    """The feeds of the ``sitemap`` format a publish also writes (``crawl.feed``)."""

    async def closed(self) -> list[str]:
        """The feed URIs, once Scrapy's FeedExporter has stored every feed."""
        ...


@dataclass
class PublishOutcome:
    """How far a publish got, counted as it goes, so that a publish that raised part-way
    can still say how many origins it published."""

    #: Origins delivered completely and remembered in the state file.
    published: int = 0
    #: Origins staged whose delivery was incomplete (a remote upload failed): each keeps
    #: what its storage had before, or part of the new files and the old index.
    incomplete: int = 0
    #: The hreflang clusters checked, kept for the audit's report when the caller asked
    #: (``keep_clusters``); the caller closes it.
    clusters: ClusterIndex | None = None
    #: Origins not published because the run would have removed too many of their URLs
    #: (SITEMAPGEN_MAX_REMOVED_SHARE).
    refused: int = 0

    @property
    def failed(self) -> bool:
        """Whether some origin was not published (a publish that raised failed too)."""
        return self.incomplete > 0 or self.refused > 0


class _Stagings:
    """The staging folders of a publish not yet removed: those of the group just
    delivered, and those the workers are writing into."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.stagings = Stagings(config)
        self.open: set[str] = set()

    def staging_of(self, origin: Origin) -> str:
        staging = self.stagings.new(origin_folder(self.config.uri, origin))
        self.open.add(staging)
        return staging

    def remove(self, stagings: Iterable[str], gone: Container[str] = ()) -> None:
        """Remove ``stagings``, but for those in ``gone``: renamed into place by the
        delivery, no longer there (a broad crawl's every new origin's)."""
        for staging in stagings:
            self.open.discard(staging)
            if staging not in gone:
                shutil.rmtree(staging, ignore_errors=True)


async def publish(
    store: FactSource,
    config: Config,
    reporter: Reporter,
    storages: FeedStorages | None = None,
    feeds: FeedTargets | None = None,
    *,
    fetch: Fetch | None = None,
    empty_reason: str | None = None,
    outcome: PublishOutcome | None = None,
    keep_clusters: bool = False,
    settled: Callable[[str, str | None], None] | None = None,
    cut: str | None = None,
) -> PublishOutcome:
    """Stage every origin's set from ``store``, deliver it, remember what was published,
    and log and count the result. Staging runs in a thread: a million URLs take seconds.
    No crawler is needed: ``reporter`` holds the stats it counts into, ``storages`` builds
    the feed storages of a remote output and of ``feeds`` (None: local output only),
    ``fetch`` sends IndexNow's submissions (None: none sent), and the caller decides the
    exit status from the outcome (``outcome.failed``). ``feeds`` also get the one-origin sitemap, from the staged files (a local delivery
    moves them away), before the output does. ``empty_reason`` is logged if there was
    nothing to publish. Returns ``outcome`` (a new one if None), which counts the origins
    as they are published, also when the publish raises part-way.

    The origins go in groups (:func:`staging.stage_origins`): each group is staged,
    delivered, remembered in the state file and counted before the next is staged, so
    that neither the staged sets nor their folders add up over a broad crawl's origins.
    Each origin's files change together or not at all (the delivery's renames); a
    publish that stops part-way leaves the groups before it published and remembered,
    the others as the previous run left them. With feeds of the ``sitemap`` format,
    which take one origin's set, every origin is one group.

    Before the first origin is staged, the hreflang clusters of every origin are checked
    on disk when SITEMAPGEN_ALTERNATES_CHECK asks for it (:mod:`..features.hreflang_clusters`): counted
    here, logged at the end, and with ``keep_clusters`` left open in
    ``outcome.clusters`` for the audit's report.

    ``settled`` is told (loc, lastmod) of each URL whose lastmod the state's content
    notes changed from the one the store holds (:func:`staging.stage_origin`): the
    audit's verdicts then hold the lastmod published (``VerdictLog.published_lastmod``).

    A crawl's store (any source but a feed's, which states the whole site) is published
    as a recurring run: joined with what the previous run published and this run's
    verdicts (:mod:`.recurring`), so that only evidence removes a page; an origin that
    would lose more than SITEMAPGEN_MAX_REMOVED_SHARE of its URLs is not published
    (:func:`..sitemaps.evidence.refused`). ``cut``: why the crawl stopped before it reached
    every page (its close reason), for the close log's word on unreached pages."""
    outcome = PublishOutcome() if outcome is None else outcome
    stagings = _Stagings(config)
    state = await run_in_thread(PublishState, config.state_path)
    now = clock.now()
    recurring: RecurringSource | None = None
    crawled = store
    if getattr(store, "has_content", True):
        recurring = await run_in_thread(RecurringSource, store, config, state, int(now.timestamp()))
        store = recurring
    if state.migrated:
        logger.info(
            "Sitemap: the state file %(path)s was written by an earlier version, which kept "
            "no page contents: this run records them, and lastmods follow the content from "
            "the next run on",
            {"path": config.state_path},
        )
    # Only where lastmods follow the fingerprints across runs does the upgrade matter.
    if state.fingerprint_upgraded and (
        config.lastmod_follows_content or observes(config.lastmod_sources)
    ):
        logger.warning(
            "Sitemap: the state file %(path)s holds content fingerprints of the text "
            "alone, and a change now also counts in the structured data, the canonical "
            "URL and the main content's links: this run compares the text alone, so no "
            "lastmod moves because of the upgrade, and the next run compares all of it; "
            "nothing to do (docs/lastmod.rst, 'From the text-only fingerprint')",
            {"path": config.state_path},
        )
    groups: Generator[list[OriginSet], None, None] | None = None
    clusters: ClusterIndex | None = None
    try:
        clusters = await run_in_thread(build_clusters, store, config, _verdict_lookup(store))
        if clusters is not None:
            await run_in_thread(count_clusters, clusters, reporter)
        # The origins whose lines are shown: the first few, not a list of every origin.
        shown = await run_in_thread(first_origins, store, config.log_origins)
        closing = CloseReport(reporter, shown, config.log_origins, cut)
        notify_log = NotifyLog(shown, config.log_origins)
        groups = stage_origins(
            store,
            config,
            now,
            state,
            reporter,
            stagings.staging_of,
            group=None if feeds is not None and storages is not None else GROUP_ORIGINS,
            clusters=None if clusters is None else clusters.path,
            settled=settled,
            recurring=recurring is not None,
        )
        while (sets := await run_in_thread(next, groups, None)) is not None:
            moved: set[str] = set()
            publishing = []
            for origin_set in sets:
                if recurring is not None:
                    origin_set.evidence = recurring.evidence.pop(origin_set.origin, None)
                if closing.refuses(origin_set, config.max_removed_share):
                    outcome.refused += 1
                else:
                    publishing.append(origin_set)
            try:
                if publishing:
                    moved = await _deliver(
                        publishing,
                        state,
                        config,
                        reporter,
                        storages,
                        fetch,
                        feeds,
                        closing,
                        notify_log,
                        outcome,
                    )
            finally:
                await run_in_thread(stagings.remove, [s.staging for s in sets], moved)
        if recurring is not None:
            # The origins left with nothing to write: refused when the run removed what
            # they had, or listed none of the pages it crawled there.
            await run_in_thread(recurring.judged_only)
            for origin, evidence in sorted(recurring.evidence.items()):
                if closing.refuses_empty(origin, evidence, config.max_removed_share):
                    outcome.refused += 1
        closing.finish(empty_reason)
        if clusters is not None:
            await run_in_thread(log_clusters, clusters, config.log_origins)
        # The broken links with their sources: read from the crawl's store (a feed's
        # source has none), with or without the audit.
        broken = getattr(crawled, "broken_links", None)
        if broken is not None:
            await run_in_thread(
                log_broken_links, broken(), reporter, config.log_origins, config.audit
            )
        if config.indexnow_key:
            notify_log.finish()
    finally:
        if groups is not None:
            await run_in_thread(groups.close)  # a generator stopped part-way: its scratch
        state.close()
        stagings.remove(list(stagings.open))
        if clusters is not None:
            if keep_clusters:
                outcome.clusters = clusters
            else:
                clusters.close()
    return outcome


def failure_of_publish(exc: Exception, config: Config) -> object:
    """The cause and path of a publish's exception, for its caller's ERROR line: the
    store's own errors are the store's, a database's error the state file's (the store's
    were found while recording), an error of a file the output's."""
    if isinstance(exc, StoreError):
        return exc
    if type(exc).__module__.split(".", 1)[0] == "redis":
        return failure_of(exc, config.store, what="store")
    if isinstance(exc, sqlite3.Error):
        return failure_of(exc, config.state_path)
    return failure_of(exc, config.output_dir or config.uri)


async def kept_after(source: FactSource, outcome: PublishOutcome) -> str:
    """What a publish that raised kept: the origins it published, and the others'
    earlier sets."""
    try:
        count = len(await run_in_thread(source.origins))
    except Exception:  # the store may be what failed
        count = 0
    # A store that failed may have lost what it had not committed: no total then.
    total = f" of {count:,}" if count >= max(outcome.published, 1) else ""
    return (
        "each origin not published keeps the files it had before "
        f"({outcome.published:,}{total} {noun(count if total else outcome.published, 'origin')} "
        "published)"
    )


def _verdict_lookup(store: FactSource) -> Callable[[str], Verdict | None]:
    """The crawl's verdict of a URL, from a store that keeps verdicts (the SQLite store's
    ``VerdictLog``); a store that keeps none (Redis, a build's run store) knows none."""
    verdicts = getattr(store, "verdicts", None)
    log: VerdictLog | None = verdicts() if callable(verdicts) else None
    if log is None:
        return lambda url: None
    return log.get


async def _deliver(
    sets: list[OriginSet],
    state: PublishState,
    config: Config,
    reporter: Reporter,
    storages: FeedStorages | None,
    fetch: Fetch | None,
    feeds: FeedTargets | None,
    closing: CloseReport,
    notify_log: NotifyLog,
    outcome: PublishOutcome,
) -> set[str]:
    """One group of staged sets: delivered, remembered, counted, submitted to IndexNow.
    Returns the staging folders the delivery renamed into place."""
    moved: set[str] = set()
    if feeds is not None and storages is not None:
        await publish_feeds(sets, await feeds.closed(), config, storages, reporter)
    stamps = None
    if config.local:
        # The files' sizes and times on disk as last recorded, for the delivery's quick
        # check of the unchanged files; replaced by those it leaves, recorded below.
        names = [s.origin.name for s in sets]
        stamps = await run_in_thread(state.file_stamps, config.state_key, names)
        moved = await run_in_thread(publish_local, sets, reporter, stamps)
        delivered = {s.origin for s in sets}
    else:
        if storages is None:
            raise ValueError(f"delivering to {config.uri} needs Scrapy's feed storages")
        delivered = set(await publish_remote(sets, storages, reporter))
    # IndexNow: the origins no previous run left fingerprints for, before the commit.
    first_runs = (
        {s.origin for s in sets if not state.has_fingerprints(config.state_key, s.origin.name)}
        if config.indexnow_key
        else set()
    )
    await run_in_thread(
        state.commit_all,
        config.state_key,
        [(s.origin.name, s.records) for s in sets if s.origin in delivered],
        stamps,
    )
    outcome.published += len(delivered)
    outcome.incomplete += len(sets) - len(delivered)
    closing.add(sets, delivered)
    if config.indexnow_key:
        try:
            await notify(sets, delivered, first_runs, state, config, fetch, reporter, notify_log)
        except Exception as exc:  # the sitemaps are published: this must not undo that
            reporter.stats.inc_value(keys.INDEXNOW_FAILED)
            logger.error(
                "Sitemap: IndexNow: the submission failed: %(cause)s; the published sitemaps stand",
                {"cause": failure_of(exc)},
            )
            logger.debug("Sitemap: IndexNow: the submission's failure", exc_info=True)
    return moved
