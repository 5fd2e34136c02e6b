"""``scrapy sitemapgen-audit``: the audit's report from a stored crawl (``--jobdir``,
``--store``) and a list of sitemap URLs or files, without crawling again; exit status 1
when a finding of a kind named in ``--fail-on`` is present, so that it can gate a deploy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ..audit.live import LiveRead, named_refusal
from ..audit.report import report_origins, summary
from ..locations import store_location
from ..settings import Config
from ..sitemaps.limits import MAX_BYTES_PER_SITEMAP
from ..sitemaps.verdicts import FINDINGS
from ..store.base import StoreError
from ..store.sqlite import SqliteFactStore
from ..validate import DEFAULT_MAX_FILES, DEFAULT_TIMEOUT, SourceError, Validator, source_path
from . import add_store_options

if TYPE_CHECKING:
    import argparse

__all__ = ["AuditCommand"]


class AuditCommand(ScrapyCommand):
    """Reads the sitemaps given with the validator (files or http(s) URLs, indexes and
    robots.txt files followed), compares them with the verdicts the crawl kept in its store
    (a crawl with ``SITEMAPGEN_AUDIT = True``), and writes the report of each origin into
    ``--output`` (default ``SITEMAPGEN_REPORT_DIR``). Prints one line per origin. Exit
    status: 0, or 1 when a finding of a ``--fail-on`` kind is present, 2 on a usage error,
    a store without verdicts, or live sitemaps that could not be read (a source that
    cannot be fetched, or no sitemap read whole: nothing is compared then, as every
    crawled page would seem missing from them)."""

    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "(--jobdir DIR | --store FILE) [options] <sitemap_path_or_url> [...]"

    def short_desc(self) -> str:
        return "Audit live sitemaps against the verdicts of a stored crawl, without crawling"

    def long_desc(self) -> str:
        return (
            "Read each SITEMAP_PATH_OR_URL (a urlset, an index, a robots.txt or a text "
            "sitemap, gzipped or not, local or over http(s); what it lists is followed) with "
            "the validator's bounded reading, compare what it lists with the verdicts that a "
            "crawl with SITEMAPGEN_AUDIT = True kept in its store, and write audit.csv, "
            "urls.csv, audit.json and report.html per origin. Listed URLs the crawl never "
            "judged are counted as not_fetched (nothing is fetched but the sitemaps). Exit "
            f"status 1 when --fail-on names a finding kind present ({', '.join(FINDINGS)}, "
            "or 'any'); 2 on a usage error, or when the sitemaps could not be fetched or read "
            "(no report is written then)."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="Audit Options")
        add_store_options(group)
        group.add_argument(
            "--output",
            metavar="DIR",
            help="the report folder (default: SITEMAPGEN_REPORT_DIR, sitemapgen-report)",
        )
        group.add_argument(
            "--fail-on",
            metavar="KINDS",
            default="",
            help="comma-separated finding kinds (or 'any') that make the exit status 1",
        )
        group.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=f"time limit of one HTTP fetch (default {DEFAULT_TIMEOUT:g})",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        if not args:
            raise UsageError("name at least one sitemap, index or robots.txt (path or URL)")
        for arg in args:
            try:
                source_path(arg)
            except SourceError as exc:
                raise UsageError(str(exc)) from None
        fail_on = _kinds(opts.fail_on)
        if opts.timeout <= 0:
            raise UsageError(f"--timeout must be positive, not {opts.timeout}")
        store_path = _store_path(opts, self.settings.get("JOBDIR"))
        try:
            config = Config.from_settings(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        report_dir = Path(opts.output) if opts.output else config.report_dir
        try:
            store = SqliteFactStore(store_path)
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        try:
            log = store.verdicts()
            if not any(True for _ in log.origins()):
                print(
                    f"{store_path}: the store holds no verdicts; crawl with "
                    "SITEMAPGEN_AUDIT = True (and a JOBDIR or SITEMAPGEN_STORE) first",
                    file=sys.stderr,
                )
                self.exitcode = 2
                return
            read = LiveRead(None, config.url_policy)
            validator = Validator(
                max_bytes=config.max_bytes or MAX_BYTES_PER_SITEMAP,
                max_files=DEFAULT_MAX_FILES,
                timeout=opts.timeout,
                on_entry=read.entry,
                # As the crawl's audit: nothing off the origin of the file naming it.
                fetch_rule=lambda named_by, url: named_refusal(named_by, url, config.url_policy),
            )
            log.clear_listed()
            for violation in validator.check(args):
                read.violation(violation)
            for error in validator.input_errors:
                read.not_read(error.source, error.message)
            for file, why in validator.missing:
                read.not_read(file, why)
            read.sitemaps = [f for f in validator.read_files if not f.endswith("robots.txt")]
            if validator.input_errors or read.unreadable:
                # What the live sitemaps list is unknown: every crawled page would be
                # reported missing from them. Exit 2, as sitemapgen-validate does.
                more = len(read.unread) - 1
                print(
                    f"{read.unread[0]}{f' (and {more} more)' if more else ''}: the live "
                    "sitemaps could not be read, so nothing was compared and no report written",
                    file=sys.stderr,
                )
                self.exitcode = 2
                return
            read.keep(log)
            store.flush()
            reads = {origin: read for origin in log.origins()}
            reports = report_origins(log, reads, report_dir, sections=config.sections)
        finally:
            store.close()
        failed = False
        for report in reports:
            print(f"{summary(report)}; report in {report.folder}")
            failed = failed or any(report.counts[kind] for kind in fail_on)
        self.exitcode = 1 if failed else 0


def _kinds(value: str) -> tuple[str, ...]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    if "any" in names:
        return FINDINGS
    unknown = [name for name in names if name not in FINDINGS]
    if unknown:
        raise UsageError(
            f"--fail-on: unknown finding kind {', '.join(unknown)}; the kinds are "
            f"{', '.join(FINDINGS)}, or any"
        )
    return tuple(names)


def _store_path(opts: argparse.Namespace, jobdir: str | None) -> Path:
    if opts.store and opts.jobdir:
        raise UsageError("name the store with --jobdir or --store, not both")
    # No store_setting: the command reads the SQLite file its options name (or JOBDIR's);
    # a project's SITEMAPGEN_STORE is not taken for that choice (docs/audit.rst).
    named = store_location(
        store_option=opts.store, jobdir_option=opts.jobdir, jobdir_setting=jobdir
    )
    if named is None:
        raise UsageError("name the crawl's store: --jobdir DIR or --store FILE")
    path = Path(named.location)
    if not path.is_file():
        raise UsageError(f"{path}: no such store file")
    return path
