"""``scrapy sitemapgen-build``: write the sitemaps from a stored crawl, or from a JSON-lines
feed of records, without crawling: the source is read, then published (:mod:`..publish`).

No spider runs and no engine starts. What the publish needs of Scrapy is built from the
command's settings: the stats collector (STATS_CLASS), the feed storages of a remote
output, and, when IndexNow submissions go out, the downloader with its middlewares.
Scrapy builds each of them from a :class:`~scrapy.crawler.Crawler`, so the command makes
one, which is never crawled."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.commands import ScrapyCommand
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, UsageError
from scrapy.utils.asyncio import run_in_thread
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.log import LogCounterHandler, configure_logging, log_scrapy_info
from scrapy.utils.misc import load_object
from scrapy.utils.reactor import install_reactor, is_reactor_installed

from .. import clock
from .. import stats as keys
from ..build.input_reader import build_store
from ..build.pool import collector_paused
from ..crawl.recorder import Recorder
from ..crawl.startup import StartupError, checked_config, refuse_start
from ..locations import store_location
from ..plural import counted, noun, verb
from ..publish.delivery import DestinationError, FeedStorages, check_destination
from ..publish.publisher import PublishOutcome, failure_of_publish, kept_after, publish
from ..sitemaps.exclusions import OriginExclusions
from ..sitemaps.records import (
    DEFAULT_JSON_PARSER,
    JSON_PARSERS,
    URL_FIELDS,
    RecordReader,
    url_field,
)
from ..state.repair import prepare_state
from ..stats import Reporter, Tally
from ..store.base import StoreError
from . import add_store_options

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Coroutine

    from scrapy import Request
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

    from ..publish.submissions import Fetch
    from ..settings import Config
    from ..store.base import FactSource

__all__ = ["BuildCommand"]


logger = logging.getLogger(__name__)

#: A store the build records a feed into has nothing to lose to a crash (the feed is still
#: there): its writes are committed in big transactions.
_COMMIT_WRITES = 100_000
_COMMIT_SECONDS = 3600.0


class BuildCommand(ScrapyCommand):
    """Reads the source (a stored crawl, a JSON-lines feed, or a feed recorded into a
    store) and publishes it with the crawl's publish: after a crawl was stopped, to
    publish with other output settings, or from records made elsewhere."""

    requires_project = False
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[--jobdir DIR | --store FILE | --input RECORDS.jsonl] [-s SITEMAPGEN_...=VALUE ...]"

    def short_desc(self) -> str:
        return "Write sitemaps from a stored crawl or a JSON-lines feed, without crawling"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_store_options(parser)
        parser.add_argument(
            "--input",
            metavar="RECORDS.jsonl",
            help="a JSON-lines feed: one object per page with loc and the item fields",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=os.cpu_count() or 1,
            metavar="N",
            help="processes that read an --input feed when no store is named "
            "(default: one per CPU; 1: none, all in this process)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        settings = self.settings
        assert settings is not None
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        if opts.workers < 1:
            raise UsageError(f"--workers must be at least 1, not {opts.workers}")
        named = store_location(
            store_option=opts.store,
            store_setting=settings.get("SITEMAPGEN_STORE"),
            jobdir_option=opts.jobdir,
            jobdir_setting=settings.get("JOBDIR"),
        )
        store = named.location if named else None
        if opts.input:
            if not Path(opts.input).is_file():
                raise UsageError(f"no feed at {opts.input}")
        elif not store:
            raise UsageError("name the source: --jobdir DIR, --store FILE or --input RECORDS.jsonl")
        elif "://" not in store and not Path(store).is_file():
            raise UsageError(f"no sitemap store at {store}")
        if store:  # what --store and --jobdir mean: the store the settings name
            settings.set("SITEMAPGEN_STORE", store, priority="cmdline")
        self.build = _Build(Path(opts.input) if opts.input else None, bool(store), opts.workers)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        settings = self.settings
        assert settings is not None
        configure_logging(settings)
        log_scrapy_info(settings)
        # Scrapy builds its stats collector, feed storages and downloader from a crawler:
        # this one is never crawled. Its add-ons apply to its settings as a crawl's would.
        crawler = Crawler(Spider, settings)
        crawler.addons.load_settings(crawler.settings)
        crawler.stats = load_object(crawler.settings["STATS_CLASS"])(crawler)
        counter = LogCounterHandler(crawler, level=crawler.settings.get("LOG_LEVEL"))
        logging.root.addHandler(counter)
        try:
            with collector_paused():
                self.exitcode = _run(crawler.settings, lambda: self.build.run(crawler))
        finally:
            logging.root.removeHandler(counter)


def _run(settings: BaseSettings, main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """``main()`` run to its end in the event loop a crawl of these settings would use
    (TWISTED_REACTOR, ASYNCIO_EVENT_LOOP; no reactor with TWISTED_REACTOR_ENABLED =
    False): Scrapy's feed storages and download handlers need the reactor. 1 when it was
    interrupted (Ctrl-C) before it returned."""
    if not settings.getbool("TWISTED_REACTOR_ENABLED"):
        try:
            return asyncio.run(main())
        except KeyboardInterrupt:
            return _interrupted()
    if not is_reactor_installed():
        reactor_path = settings["TWISTED_REACTOR"]
        if reactor_path:
            install_reactor(reactor_path, settings["ASYNCIO_EVENT_LOOP"])
    from twisted.internet import reactor as installed  # the one installed just above

    reactor: Any = installed  # the module stands for the installed reactor

    results: list[Any] = []

    def start() -> None:
        done = deferred_from_coro(main())
        done.addBoth(results.append)
        done.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(start)
    reactor.run()
    if not results:
        return _interrupted()
    result = results[0]
    if isinstance(result, int):
        return result
    result.raiseException()  # a Failure: main() raised
    return 1


def _interrupted() -> int:
    logger.warning(
        "Sitemap: the build was interrupted; each origin not published keeps the files it "
        "had before"
    )
    return 1


class _Build:
    """One build: the source read (the ``input`` feed, or the store SITEMAPGEN_STORE
    names, the feed's records recorded into it first), then published, and the exit
    status decided."""

    def __init__(self, input_path: Path | None, stored: bool, workers: int) -> None:
        self.input = input_path
        #: Whether a store is named (SITEMAPGEN_STORE): it is the source, or the feed's
        #: records are recorded into it first.
        self.stored = stored
        self.workers = workers

    async def run(self, crawler: Crawler) -> int:
        """The build, with its stats dumped at the end; returns the exit status: 1 when the
        settings or the output refused it, or it did not publish every origin it had, or
        had nothing to publish; 0 otherwise."""
        stats = crawler.stats
        started = datetime.now(timezone.utc)
        stats.set_value("start_time", started)
        status = 1
        try:
            status = await self._build(crawler)
        finally:
            finished = datetime.now(timezone.utc)
            stats.set_value("finish_time", finished)
            stats.set_value("elapsed_time_seconds", (finished - started).total_seconds())
            stats.close_spider(reason="finished" if status == 0 else "failed")
        return status

    async def _build(self, crawler: Crawler) -> int:
        """Check the settings and the output as a crawl's start does, then read and
        publish; the exit status."""
        try:
            config = checked_config(crawler.settings)
        except StartupError:  # its line is logged
            return 1
        if not config.enabled:
            logger.error("Sitemap: SITEMAPGEN_ENABLED is False, so nothing was built")
            return 1
        for warning in config.warnings:
            logger.warning("Sitemap: %(warning)s", {"warning": warning})
        if not config.local or config.indexnow_key:
            # Scrapy's storages and downloader middlewares work for a spider (a blocking
            # storage reads FEED_TEMPDIR through it, the offsite filter asserts one): this
            # one is never opened, it only names the build.
            crawler.spider = Spider.from_crawler(crawler, name="sitemapgen-build")
        storages = None if config.local else FeedStorages(crawler)
        try:
            check_destination(config, storages)
        except DestinationError as exc:
            try:
                refuse_start(str(exc))
            except StartupError:
                return 1
        prepare_state(config.state_path, config.state_key, config.uri, config.output_dir)
        reporter = Reporter(crawler.stats, logger)
        fetch, close_downloads = _downloads(crawler) if config.indexnow_key else (None, None)
        try:
            if not self.stored:
                assert self.input is not None
                return await self._publish_feed(self.input, config, reporter, storages, fetch)
            return await self._publish_store(crawler, config, reporter, storages, fetch)
        finally:
            if close_downloads is not None:
                await close_downloads()

    async def _publish_feed(
        self,
        path: Path,
        config: Config,
        reporter: Reporter,
        storages: FeedStorages | None,
        fetch: Fetch | None,
    ) -> int:
        """A feed read whole into sorted runs by ``workers`` processes, then published:
        nothing needs to outlive the build, and that is much faster than recording each
        record into a store."""
        reporter.by_origin = OriginExclusions(config.log_origins)
        logger.info("Sitemap: reading %(path)s", {"path": path})
        source, tally = await run_in_thread(
            build_store, path, config.url_policy, clock.now(), workers=self.workers
        )
        try:
            stats = reporter.stats
            tally.replay(reporter)
            if tally.records:
                stats.set_value(keys.ITEMS_RECORDED, tally.records)
            if tally.bad_lines:
                logger.warning(
                    "Sitemap: %(path)s: %(count)s not %(objects)s, the first at "
                    "byte %(offset)d; skipped",
                    {
                        "path": path,
                        "count": f"{counted(tally.bad_lines, 'line')} "
                        f"{verb(tally.bad_lines, 'is')}",
                        "objects": noun(tally.bad_lines, "a JSON object", "JSON objects"),
                        "offset": tally.first_bad_offset,
                    },
                )
                stats.set_value(keys.skipped("bad_record"), tally.bad_lines)
            empty_reason = _explain_unusable(path, tally, reporter)
            logger.info(
                "Sitemap: %(path)s read, %(records)s taken; publishing to %(out)s",
                {"path": path, "records": counted(tally.records, "record"), "out": config.uri},
            )
            return await _publish(
                source, config, reporter, storages, fetch, empty_reason=empty_reason
            )
        finally:
            source.close()

    async def _publish_store(
        self,
        crawler: Crawler,
        config: Config,
        reporter: Reporter,
        storages: FeedStorages | None,
        fetch: Fetch | None,
    ) -> int:
        """A stored crawl published with that crawl's verdicts (the feed's records
        recorded into it first, one by one, through the item pipeline's reader)."""
        config = replace(config, commit_writes=_COMMIT_WRITES, commit_seconds=_COMMIT_SECONDS)
        recorder = Recorder(crawler, config, reporter, starts_runs=False)
        try:
            recorder.check()
        except StoreError as exc:
            try:
                refuse_start(str(exc))
            except StartupError:
                return 1
        try:
            recorder.open()
        except CloseSpider:  # its line is logged
            recorder.close()
            return 1
        store = recorder.store
        assert store is not None
        try:
            empty_reason = None
            if self.input is not None:
                empty_reason = _ingest(self.input, recorder, reporter)
            recorder.stop(finished=True)
            coordination = store.coordination()
            if coordination is not None:
                await run_in_thread(store.flush)
            log = recorder.verdicts if recorder.audits else None
            return await _publish(
                store,
                config,
                reporter,
                storages,
                fetch,
                empty_reason=empty_reason,
                settled=None if log is None else log.published_lastmod,
                finish=store.finish_run,
                lost=recorder.count_lost,
            )
        finally:
            recorder.close()


async def _publish(
    source: FactSource,
    config: Config,
    reporter: Reporter,
    storages: FeedStorages | None,
    fetch: Fetch | None,
    *,
    empty_reason: str | None,
    settled: Callable[[str, str | None], None] | None = None,
    finish: Callable[[], None] | None = None,
    lost: Callable[[], None] | None = None,
) -> int:
    """``source`` published as the crawl's exporter publishes its store; the exit status.
    ``finish`` ends the store's run once it is published; ``lost`` counts what a store
    lost when the publish raised."""
    stats = reporter.stats
    outcome = PublishOutcome()
    try:
        try:
            await publish(
                source,
                config,
                reporter,
                storages,
                fetch=fetch,
                empty_reason=empty_reason,
                outcome=outcome,
                settled=settled,
            )
            if outcome.failed:  # each failed file has had its line
                stats.set_value(keys.OUTPUT_FAILED, 1)
                return 1
            if finish is not None:
                await run_in_thread(finish)
        finally:
            # Counted after writing: a build's run store learns its count as it merges.
            stats.set_value(keys.URLS_STORED, await run_in_thread(len, source))
    except Exception as exc:
        stats.set_value(keys.OUTPUT_FAILED, 1)
        if lost is not None:
            lost()
        logger.error(
            "Sitemap: writing to %(out)s failed: %(failure)s; %(kept)s",
            {
                "out": config.uri,
                "failure": failure_of_publish(exc, config),
                "kept": await kept_after(source, outcome),
            },
        )
        logger.debug("Sitemap: the publish's failure", exc_info=True)
        return 1
    return 0 if stats.get_value(keys.ORIGINS) else 1


def _ingest(path: Path, recorder: Recorder, reporter: Reporter) -> str | None:
    """Record the feed's records into the recorder's store, each read as the item
    pipeline reads an item; returns why nothing was usable, if so."""
    stats = reporter.stats
    reader = RecordReader(recorder.config.url_policy, reporter, None)
    tally = Tally()
    passed = offset = recorded = 0
    parse = JSON_PARSERS[DEFAULT_JSON_PARSER]  # the offline build's reader of lines
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            seq, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                record = parse(line)
            except ValueError:  # UnicodeDecodeError included
                record = None
            if type(record) is not dict:
                tally.bad_lines += 1
                if tally.bad_lines == 1:
                    logger.warning("Sitemap: %s:%d is not a JSON object; skipped", path, number)
                continue
            if not record.get("loc"):  # what the reader reads as no loc
                tally.add_no_loc(seq, url_field(record))
                if tally.no_loc == 1:
                    tally.first_no_loc_line = number
                continue
            passed += 1
            facts = reader.facts(record.get, clock.now())
            if facts is not None and recorder.record(facts, from_item=True):
                recorded += 1
    if recorded:
        stats.inc_value(keys.ITEMS_RECORDED, recorded)
    if tally.bad_lines:
        stats.set_value(keys.skipped("bad_record"), tally.bad_lines)
    tally.records = recorded
    tally.refused = passed - tally.records
    return _explain_unusable(path, tally, reporter)


def _explain_unusable(path: Path, tally: Tally, reporter: Reporter) -> str | None:
    """Warn once about the feed's records without loc (the usual cause: a feed of ``url``
    fields); if no record at all was usable, what the close report says why."""
    if tally.no_loc:
        hint = "each record needs loc, the page's absolute URL"
        if tally.no_loc_fields:
            name, count = min(
                tally.no_loc_fields.items(),
                key=lambda item: (-item[1], URL_FIELDS.index(item[0].lower()), item[0]),
            )
            if count == tally.no_loc:
                who = "it has" if count == 1 else "they have"
            else:
                who = f"{count:,} of them {'has' if count == 1 else 'have'}"
            hint = f"{who} {name!r}: name the page's URL loc, or map it (jq '.loc = .{name}')"
        logger.warning(
            "Sitemap: %(path)s: %(count)s no loc field (the first at line %(line)d); %(hint)s",
            {
                "path": path,
                "count": f"{counted(tally.no_loc, 'record')} {verb(tally.no_loc, 'has')}",
                "line": tally.first_no_loc_line,
                "hint": hint,
            },
        )
        reporter.stats.set_value(keys.ITEMS_NO_LOC, tally.no_loc)
    if tally.records:
        return None
    why = []
    if tally.no_loc:
        why.append(
            f"{counted(tally.no_loc, 'record', grouped=True)} {verb(tally.no_loc, 'has')} "
            "no loc field"
        )
    if tally.refused:
        why.append(
            f"the loc of {counted(tally.refused, 'record', grouped=True)} was refused or "
            "excluded (see "
            "sitemapgen/skipped/item_* and sitemapgen/excluded/* in the stats)"
        )
    if tally.bad_lines:
        why.append(
            f"{counted(tally.bad_lines, 'line', grouped=True)} {verb(tally.bad_lines, 'is')} "
            f"not {noun(tally.bad_lines, 'a JSON object', 'JSON objects')}"
        )
    return f"{path}: {', '.join(why)}" if why else f"{path} holds no record"


def _downloads(crawler: Crawler) -> tuple[Fetch, Callable[[], Coroutine[Any, Any, None]]]:
    """IndexNow's road: Scrapy's downloader with its middlewares (proxies, user agent,
    timeouts), as a crawl sends the submissions, and what closes its download handlers
    (the engine's stop, which they wait for in a crawl)."""
    from scrapy.core.downloader import Downloader  # only with IndexNow

    downloader = Downloader(crawler)

    async def fetch(request: Request) -> Response | Request:
        result: Response | Request = await maybe_deferred_to_future(downloader.fetch(request))
        return result

    async def close() -> None:
        downloader.close()
        await crawler.signals.send_catch_log_async(signals.engine_stopped)

    return fetch, close
