"""``scrapy sitemapgen-build``: write the sitemaps from a stored crawl, or from a JSON-lines
feed of records, without crawling."""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.asyncio import run_in_thread
from scrapy.utils.misc import load_object

from .. import clock
from .. import stats as keys
from ..addon import Addon
from ..build.feed_reader import build_store
from ..build.pool import collector_paused
from ..crawl.exporter import SitemapExporter
from ..crawl.pipeline import SitemapItemPipeline
from ..locations import store_location
from ..settings import Config, is_enabled
from ..sitemaps.records import DEFAULT_JSON_PARSER, JSON_PARSERS, URL_FIELDS, url_field
from ..state.repair import prepare_state
from ..stats import Tally
from . import add_store_options

if TYPE_CHECKING:
    import argparse

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from ..build.run_store import RunStore
    from ..sitemaps.urls import UrlPolicy

__all__ = ["BuildCommand"]


logger = logging.getLogger(__name__)


class _NothingToCrawl(scrapy.Spider):
    """Requests nothing: it records the ``input`` feed's records, if any, then closes, and
    the exporter publishes the store.

    Into a store the user named (``--store``, ``--jobdir``), the records are merged one by
    one through the item pipeline, straight into it (not through the engine, which would
    cost more than the record). Otherwise nothing needs to outlive the run, and the feed is
    read by ``workers`` processes into sorted runs (build/feed_reader.py), with the
    pipeline's own validation, much faster than the pipeline's record-at-a-time road."""

    name = "sitemapgen-build"
    #: The exporter starts no crawl on the store: it publishes what the store's crawl
    #: recorded, with that crawl's verdicts (docs/recurring.rst).
    sitemapgen_republishes = True
    input: str | None = None
    bulk = False
    workers = 1
    early: _EarlyRead | None = None

    async def start(self) -> Any:
        if self.input:
            exporter = self.crawler.get_extension(SitemapExporter)
            if self.bulk and exporter is not None and exporter.recorder.store is not None:
                await self._build(Path(self.input), exporter)
            else:
                self._ingest(Path(self.input))
        return
        yield

    async def _build(self, path: Path, exporter: SitemapExporter) -> None:
        early = self.early
        if early is not None and early.policy == exporter.config.url_policy:
            store, tally = await run_in_thread(early.take)
        else:  # the crawler's settings differ from the command's (another add-on changed them)
            if early is not None:
                logger.info(
                    "Sitemap: the crawl's URL rules differ from the command's settings (an "
                    "add-on changed them); reading %(path)s again with the crawl's",
                    {"path": path},
                )
                await run_in_thread(early.discard)
            store, tally = await run_in_thread(
                build_store,
                path,
                exporter.config.url_policy,
                clock.now(),
                workers=self.workers,
            )
        exporter.publish_from(store)
        stats = self.crawler.stats
        tally.replay(exporter.reporter)
        if tally.records:
            stats.set_value(keys.ITEMS_RECORDED, tally.records)
        if tally.bad_lines:
            logger.warning(
                "Sitemap: %(path)s: %(count)d line(s) are not JSON objects, the first at byte "
                "%(offset)d; skipped",
                {"path": path, "count": tally.bad_lines, "offset": tally.first_bad_offset},
            )
            stats.set_value(keys.skipped("bad_record"), tally.bad_lines)
        self._explain_unusable(path, tally, exporter)

    def _ingest(self, path: Path) -> None:
        pipeline = self.crawler.get_item_pipeline(SitemapItemPipeline)
        assert pipeline is not None
        stats = self.crawler.stats
        tally = Tally()
        passed = offset = 0
        recorded_before = stats.get_value(keys.ITEMS_RECORDED, 0)
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
                if not record.get("loc"):  # what the pipeline's reader reads as no loc
                    tally.add_no_loc(seq, url_field(record))
                    if tally.no_loc == 1:
                        tally.first_no_loc_line = number
                    continue
                passed += 1
                pipeline.process_item(record)
        if tally.bad_lines:
            stats.set_value(keys.skipped("bad_record"), tally.bad_lines)
        tally.records = stats.get_value(keys.ITEMS_RECORDED, 0) - recorded_before
        tally.refused = passed - tally.records
        self._explain_unusable(path, tally, self.crawler.get_extension(SitemapExporter))

    def _explain_unusable(self, path: Path, tally: Tally, exporter: SitemapExporter | None) -> None:
        """Warn once about the feed's records without loc (the usual cause: a feed of
        ``url`` fields); if no record at all was usable, have the close report say why."""
        if tally.no_loc:
            hint = "each record needs loc, the page's absolute URL"
            if tally.no_loc_fields:
                name, count = min(
                    tally.no_loc_fields.items(),
                    key=lambda item: (-item[1], URL_FIELDS.index(item[0].lower()), item[0]),
                )
                if count == tally.no_loc:
                    who = "they have"
                else:
                    who = f"{count:,} of them {'has' if count == 1 else 'have'}"
                hint = f"{who} {name!r}: name the page's URL loc, or map it (jq '.loc = .{name}')"
            logger.warning(
                "Sitemap: %(path)s: %(count)d record(s) have no loc field (the first at line "
                "%(line)d); %(hint)s",
                {
                    "path": path,
                    "count": tally.no_loc,
                    "line": tally.first_no_loc_line,
                    "hint": hint,
                },
            )
            self.crawler.stats.set_value(keys.ITEMS_NO_LOC, tally.no_loc)
        if tally.records or exporter is None:
            return
        why = []
        if tally.no_loc:
            why.append(f"{tally.no_loc:,} record(s) have no loc field")
        if tally.refused:
            why.append(
                f"the loc of {tally.refused:,} record(s) was refused or excluded (see "
                "sitemapgen/skipped/item_* and sitemapgen/excluded/* in the stats)"
            )
        if tally.bad_lines:
            why.append(f"{tally.bad_lines:,} line(s) are not JSON objects")
        exporter.empty_reason = f"{path}: {', '.join(why)}" if why else f"{path} holds no record"


def _names_addon(key: object) -> bool:
    """Whether an ``ADDONS`` key (a class or its import path) is this package's add-on."""
    if isinstance(key, str):
        try:
            key = load_object(key)
        except (ImportError, ValueError, NameError, AttributeError):
            return False
    return key is Addon


_SERVERS = (
    "scrapy.extensions.telnet.TelnetConsole",
    "scrapy.extensions.remote_control.RemoteControl",
)


class _EarlyRead:
    """The feed read in a thread from the moment the command runs, while Scrapy builds the
    crawler and opens the spider, so that start-up overlaps the reading instead of preceding
    it; the spider takes the store if its URL policy is the one read with."""

    def __init__(self, path: Path, policy: UrlPolicy, workers: int) -> None:
        self.policy = policy
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sitemapgen-read")
        self._result: Future[tuple[RunStore, Tally]] | None = self._thread.submit(
            build_store, path, policy, clock.now(), workers=workers
        )
        self._thread.shutdown(wait=False)

    @classmethod
    def start(cls, path: Path, settings: BaseSettings, workers: int) -> _EarlyRead | None:
        """None when the settings would not let a build run: the crawler says why."""
        if not is_enabled(settings):
            return None
        try:
            policy = Config.from_settings(settings).url_policy
        except Exception:  # reported by the crawler, where the components check them
            return None
        return cls(path, policy, workers)

    def take(self) -> tuple[RunStore, Tally]:
        result, self._result = self._result, None
        assert result is not None, "taken twice"
        return result.result()

    def discard(self) -> None:
        """Close the store if the spider never took it (the crawl failed to start)."""
        result, self._result = self._result, None
        if result is None:
            return
        try:
            store, _ = result.result()
        except Exception:  # the crawl's own failure is what gets reported
            return
        store.close()


def _prepare_state(settings: BaseSettings) -> None:
    """The state file checked (and healed) before the feed's early read starts; the
    exporter checks it again as the crawler starts, quickly, since it is sound by then."""
    try:
        config = Config.from_settings(settings)
    except Exception:  # reported by the crawler, where the components check them
        return
    if config.enabled:
        prepare_state(config.state_path, config.state_key, config.uri, config.output_dir)


class BuildCommand(ScrapyCommand):
    """Runs a crawl that requests nothing, so the very components of a real crawl (the
    exporter, Scrapy's feed storages, stats, logging) write the set from the stored facts:
    after a crawl was stopped, or to publish with other output settings."""

    requires_project = False

    def syntax(self) -> str:
        return "[--jobdir DIR | --store FILE | --input FEED.jsonl] [-s SITEMAPGEN_...=VALUE ...]"

    def short_desc(self) -> str:
        return "Write sitemaps from a stored crawl or a JSON-lines feed, without crawling"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        add_store_options(parser)
        parser.add_argument(
            "--input",
            metavar="FEED",
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
        self.workers = opts.workers
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
            self.input = opts.input  # recorded into the store given, or read in bulk
            self.bulk = not store
        elif not store:
            raise UsageError("name the source: --jobdir DIR, --store FILE or --input FEED.jsonl")
        elif "://" not in store and not Path(store).is_file():
            raise UsageError(f"no sitemap store at {store}")
        if store:
            settings.set("SITEMAPGEN_STORE", store, priority="cmdline")
        settings.set("JOBDIR", None, priority="cmdline")  # no scheduler state is needed
        # Requests a killed crawl left pending are for that crawl's resume, not for us.
        settings.set("SITEMAPGEN_RESUME_REQUESTS", False, priority="cmdline")
        # Nothing is requested: the pages the store's crawl did not reach stay unreached.
        settings.set("SITEMAPGEN_RECHECK_UNREACHED", False, priority="cmdline")
        # A shared (Redis) store: this run is the one that writes.
        settings.set("SITEMAPGEN_SHARED_WRITE", "always", priority="cmdline")
        # Nothing is fetched: a feed's records are not checked against robots.txt, whichever
        # road they take (docs/listing.rst, "robots.txt, as each engine reads it").
        settings.set("SITEMAPGEN_RESPECT_ROBOTS_TXT", False, priority="cmdline")
        # Nothing to lose to a crash here (the source is still there): big transactions.
        settings.set("SITEMAPGEN_COMMIT_WRITES", 100_000, priority="command")
        settings.set("SITEMAPGEN_COMMIT_SECONDS", 3600, priority="command")
        addons = settings.getdict("ADDONS")
        if not any(_names_addon(key) for key in addons):  # a project's own: not twice
            settings.set("ADDONS", {**addons, Addon: 500}, priority="cmdline")
        # Nothing is crawled: no telnet console or remote-control server to listen on a
        # port, nor any download handler, and none of them imported (aiohttp above all, for
        # remote control; the HTTP handler builds a TLS context), unless the
        # project named one itself. Servers go out of the base dict: the add-on's check for
        # its exporter loads every class EXTENSIONS names (Scrapy's
        # setdefault_in_component_priority_dict), which would import them all the same.
        extensions = settings.getdict("EXTENSIONS_BASE")
        for path in _SERVERS:
            extensions[path] = None  # an order in the project's EXTENSIONS still wins
        settings.set("EXTENSIONS_BASE", extensions, priority="cmdline")
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        # IndexNow's submissions (SITEMAPGEN_INDEXNOW_KEY) are the one download a build makes.
        wanted = ("http", "https") if settings.get("SITEMAPGEN_INDEXNOW_KEY") else ()
        for scheme in settings.getdict("DOWNLOAD_HANDLERS_BASE"):
            if scheme not in wanted:
                handlers.setdefault(scheme, None)
        settings.set("DOWNLOAD_HANDLERS", handlers, priority="cmdline")
        # Nothing to retry: RetryMiddleware would import the HTTP handler for its exceptions.
        settings.set("RETRY_ENABLED", False, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None
        assert self.settings is not None
        bulk = getattr(self, "bulk", False)
        _prepare_state(self.settings)
        with collector_paused():
            crawler = self._crawl(bulk)
        self.exitcode = _exit_status(crawler)

    def _crawl(self, bulk: bool) -> Crawler:
        """The build's crawler, run to its end (it reads the feed and publishes)."""
        assert self.crawler_process is not None
        assert self.settings is not None
        early = _EarlyRead.start(Path(self.input), self.settings, self.workers) if bulk else None
        try:
            crawler = self.crawler_process.create_crawler(_NothingToCrawl)
            self.crawler_process.crawl(
                crawler,
                input=getattr(self, "input", None),
                bulk=bulk,
                workers=self.workers,
                early=early,
            )
            self.crawler_process.start()
        finally:
            if early is not None:
                early.discard()
        return crawler


def _exit_status(crawler: Crawler) -> int:
    """1 when the build did not publish every origin it had (its exporter's outcome), did
    not start, or had nothing to publish; 0 otherwise."""
    try:
        exporter = crawler.get_extension(SitemapExporter)
    except RuntimeError:  # refused before its extensions were built (crawl.startup)
        return 1
    if exporter is None or exporter.failed:
        return 1
    stats = crawler.stats.get_stats() if crawler.stats else {}
    return 0 if stats.get(keys.ORIGINS) else 1
