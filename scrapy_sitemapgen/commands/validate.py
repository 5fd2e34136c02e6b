"""``scrapy sitemapgen-validate``: check sitemaps, indexes and robots.txt files against the
protocol, locally or over HTTP; a thin shell around :mod:`scrapy_sitemapgen.validate`."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ..plural import counted
from ..sitemaps.limits import MAX_BYTES_PER_SITEMAP, URL_SCHEMES
from ..validate import DEFAULT_MAX_FILES, DEFAULT_TIMEOUT, SourceError, Validator, source_path

if TYPE_CHECKING:
    import argparse

    from ..validate import InputError

__all__ = ["ValidateCommand"]


class ValidateCommand(ScrapyCommand):
    """Prints one ``path:line: RULE: message`` line per violation, then a summary, and one
    ``source: cause`` line on stderr per input that could not be checked; exit status 0
    when all is valid, 1 on a violation, 2 on a usage or input error."""

    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[options] <path_or_url> [<path_or_url> ...]"

    def short_desc(self) -> str:
        return "Check sitemaps, sitemap indexes and robots.txt files against the sitemap protocol"

    def long_desc(self) -> str:
        return (
            "Check each PATH_OR_URL (a local file, a file:// URI or an http(s) URL of a urlset, "
            "a sitemap index, a robots.txt or a text sitemap, gzipped or not) and every sitemap "
            "it lists. A local folder stands for its robots.txt and sitemap*.xml, .xml.gz, "
            ".txt and .txt.gz files, in every folder below it. Prints one "
            "'path:line: RULE: message' line per violation, then 'N files, M URLs, K "
            "violations'. An input that cannot be checked at all (a missing or unreadable "
            "local source, a refused connection, an unknown host, a timeout) gets one "
            "'source: cause' line on stderr instead; an HTTP error status is a violation. "
            "An Atom feed (a source, or named in a robots.txt: the changes feed) is no "
            "sitemap: it gets one 'path: an Atom feed, not a sitemap' line and is only read "
            "as XML (not well-formed is a P1 violation). "
            "Exit status: 0 all valid; 1 rule violations; 2 a usage error, or an input "
            "that could not be checked."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="Validation Options")
        group.add_argument(
            "--max-bytes",
            type=int,
            default=MAX_BYTES_PER_SITEMAP,
            metavar="N",
            help=f"uncompressed size limit per file (default {MAX_BYTES_PER_SITEMAP}, G2; "
            "10485760 for the 2008 protocol text)",
        )
        group.add_argument(
            "--max-files",
            type=int,
            default=DEFAULT_MAX_FILES,
            metavar="N",
            help=f"open at most N files, listed ones included (default {DEFAULT_MAX_FILES})",
        )
        group.add_argument(
            "--base-url",
            metavar="URL",
            help="where local files are published: a folder URL ending in / (or, for one "
            "file, its URL); without it, P12 only checks that each file lists one origin",
        )
        group.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=f"time limit of one HTTP fetch (default {DEFAULT_TIMEOUT:g})",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("name at least one sitemap, index or robots.txt (path or URL)")
        for arg in args:
            _check_source(arg)
        if not 1 <= opts.max_bytes <= MAX_BYTES_PER_SITEMAP:
            raise UsageError(
                f"--max-bytes must be from 1 to {MAX_BYTES_PER_SITEMAP}, not {opts.max_bytes}"
            )
        if opts.max_files < 1:
            raise UsageError(f"--max-files must be at least 1, not {opts.max_files}")
        if opts.timeout <= 0:
            raise UsageError(f"--timeout must be positive, not {opts.timeout}")
        base_url = opts.base_url
        if base_url is not None:
            parts = urlsplit(base_url)
            if parts.scheme.lower() not in URL_SCHEMES or not parts.hostname:
                raise UsageError(f"--base-url must be an absolute http(s) URL, not {base_url!r}")
            if not base_url.endswith("/") and len(args) > 1:
                raise UsageError("with several files, --base-url must be a folder URL ending in /")
            if not base_url.endswith("/") and any(_is_folder(arg) for arg in args):
                raise UsageError("with a folder, --base-url must be a folder URL ending in /")
        validator = Validator(
            base_url=base_url,
            max_bytes=opts.max_bytes,
            max_files=opts.max_files,
            timeout=opts.timeout,
        )
        errors = validator.input_errors
        violations = reported = feeds = 0
        try:
            for violation in validator.check(args):
                reported = _report(errors, reported)
                feeds = _report_feeds(validator.feeds, feeds)
                print(violation, flush=True)
                violations += 1
            _report(errors, reported)
            _report_feeds(validator.feeds, feeds)
            summary = ", ".join(
                (
                    counted(validator.files, "file"),
                    counted(validator.urls, "URL"),
                    counted(violations, "violation"),
                )
            )
            if errors:
                summary += f", {counted(len(errors), 'input error')}"
            print(summary)
        except BrokenPipeError:  # piped into head: stop quietly, as other tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            violations += 1
        self.exitcode = 2 if errors else 1 if violations else 0


def _check_source(arg: str) -> None:
    """Refuse what cannot be a source before reading anything (exit status 2). What the
    validator itself refuses keeps its words (:func:`..validate.source_path`); a local
    source that is missing is the validator's input error, reported with the others."""
    if arg.startswith("-"):
        raise UsageError(f"unknown option {arg}")
    try:
        path = source_path(arg)
    except SourceError as exc:
        raise UsageError(str(exc)) from None
    if path is None and not urlsplit(arg).hostname:  # an http(s) URL
        raise UsageError(f"{arg}: no host in the URL")


def _is_folder(arg: str) -> bool:
    path = source_path(arg)
    return path is not None and path.is_dir()


def _report_feeds(feeds: list[str], reported: int) -> int:
    """Print the Atom feeds read and not named yet, one line each; how many are."""
    for name in feeds[reported:]:
        print(
            f"{name}: an Atom feed, not a sitemap: read as XML only, "
            "not checked against the sitemap rules",
            flush=True,
        )
    return len(feeds)


def _report(errors: list[InputError], reported: int) -> int:
    """Print the input errors not printed yet on stderr, one line each; how many are."""
    for error in errors[reported:]:
        print(error, file=sys.stderr, flush=True)
    return len(errors)
