"""``scrapy sitemapgen-crawl URL [URL ...] [-o DIR]``: the sitemaps of a site in one
command, without a Scrapy project, as ``scrapy runspider`` runs a spider without one.

The crawl is a plain Scrapy crawl of the built-in spider (:mod:`..crawl.site_spider`)
with the add-on on, so the files, the close log, the stats and the exit status are those
of ``scrapy crawl``. What the command adds is its defaults, each overridable with
``-s NAME=VALUE``: robots.txt obeyed, AutoThrottle on, a user agent naming the package,
INFO logging (the close log's per-origin lines, not every request), no telnet console
nor remote control.
Inside a project folder the project's settings apply over these defaults, as they do for
``runspider``; the add-on is enabled all the same."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from .. import __version__
from .. import stats as keys
from ..plural import counted

if TYPE_CHECKING:
    import argparse

__all__ = ["CrawlCommand"]

#: Names the crawler to the sites it visits (and to their robots.txt rules).
USER_AGENT = f"scrapy-sitemapgen/{__version__} (sitemap crawler; Scrapy/{scrapy.__version__})"


class CrawlCommand(ScrapyCommand):
    """Crawls the sites of the URLs given with :class:`~..crawl.site_spider.SiteSpider`
    and writes their sitemaps into ``-o DIR`` (SITEMAPGEN_URI); prints where they went."""

    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {
        "ADDONS": {"scrapy_sitemapgen.Addon": 500},
        "ROBOTSTXT_OBEY": True,
        # Paces the crawl by the site's own answers: a crawl of someone's live site must
        # not load it; -s AUTOTHROTTLE_ENABLED=False for a local build.
        "AUTOTHROTTLE_ENABLED": True,
        "USER_AGENT": USER_AGENT,
        # The close log's per-origin lines and the stats, not a line per request.
        "LOG_LEVEL": "INFO",
        # Nothing listens on a port: a one-command crawl has no one to connect to it.
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        # No project's spiders are looked for (as runspider).
        "SPIDER_LOADER_CLASS": "scrapy.spiderloader.DummySpiderLoader",
    }

    def syntax(self) -> str:
        return "[options] <url> [<url> ...]"

    def short_desc(self) -> str:
        return "Crawl a site from its URL and write its sitemaps, no project required"

    def long_desc(self) -> str:
        return (
            "Crawl every page linked from each URL on that URL's host (robots.txt obeyed, "
            "AutoThrottle on) with the scrapy-sitemapgen add-on on, and write the sitemaps "
            "of each origin into DIR (-o, else SITEMAPGEN_URI, else ./sitemaps). Any "
            "setting, the add-on's included, can be set with -s NAME=VALUE. Exit status 1 "
            "when the crawl failed or wrote no sitemap, or the sitemaps could not all be "
            "written; 2 on a usage error."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # Not Scrapy's -o FILE of crawl and runspider (a feed of items): this spider
        # yields no items, and what a user wants out of this command is the sitemaps.
        parser.add_argument(
            "-o",
            "--output",
            metavar="DIR",
            help="where the sitemaps go, a folder or any SITEMAPGEN_URI such as "
            "s3://bucket/sitemaps/ (by default SITEMAPGEN_URI, else sitemaps)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        # Imported here, not at the top: Scrapy imports every command's module for every
        # ``scrapy`` command line, and the crawl side is the whole add-on.
        from ..addon import Addon
        from ..crawl.site_spider import start_hosts

        super().process_options(args, opts)
        settings = self.settings
        assert settings is not None
        try:
            start_hosts(args)
        except ValueError as exc:
            raise UsageError(str(exc), print_help=False) from None
        if opts.output:
            if any(pair.split("=", 1)[0].strip() == "SITEMAPGEN_URI" for pair in opts.set):
                raise UsageError(
                    "name the output once: -o DIR or -s SITEMAPGEN_URI=..., not both",
                    print_help=False,
                )
            settings.set("SITEMAPGEN_URI", opts.output, priority="cmdline")
        # A project's ``ADDONS = {}`` (startproject writes one) replaces the command's.
        settings.setdefault_in_component_priority_dict("ADDONS", Addon, 500)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from ..crawl.exporter import SitemapExporter
        from ..crawl.site_spider import SiteSpider

        process = self.crawler_process
        assert process is not None
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler, urls=args)
        process.start()
        if process.bootstrap_failed:  # refused at start, or a publish that failed
            self.exitcode = 1
        try:
            exporter = crawler.get_extension(SitemapExporter)
        except RuntimeError:  # refused before its extensions were built: one ERROR line said why
            return
        origins = crawler.stats.get_value(keys.ORIGINS)
        if exporter is None or not origins:
            # Nothing was published (no page reached, the crawl stopped): the log said why.
            # As sitemapgen-build does, no sitemap is a failure of the command.
            print(
                "sitemapgen-crawl: no sitemap was written; the log above says why", file=sys.stderr
            )
            self.exitcode = 1
            return
        written = crawler.stats.get_value(keys.URLS_WRITTEN, 0)
        config = exporter.config
        where = config.output_dir.resolve() if config.output_dir else config.uri
        print(
            f"sitemapgen-crawl: {counted(written, 'URL', grouped=True)} of "
            f"{counted(origins, 'origin', grouped=True)} "
            f"in the sitemaps at {where}"
            f"{'' if self.exitcode == 0 else ' (the publish failed in part: see the log)'}",
            file=sys.stdout,
        )
