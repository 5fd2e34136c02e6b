"""Where the files go: a staging folder beside the output, then atomic moves into place.

Every origin's set is written completely before anything is moved, so a failure (disk
full, a bug, a kill) leaves the previously published set as it was. The moves put urlsets
first and the index last, so an index that a search engine fetches at any moment names only
files that exist.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .facts import format_w3c
from .urls import Origin, base_url_for
from .writer import OriginOutput, WriterOptions, write_origin

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .facts import UrlFacts
    from .settings import Config, Rule
    from .stats import Reporter
    from .store import FactStore

__all__ = ["OriginReport", "ROBOTS_NAME", "write_sitemaps"]

logger = logging.getLogger(__name__)

#: The file beside each index with the ``Sitemap:`` lines for that origin's robots.txt (P15).
ROBOTS_NAME = "robots.txt"
# Files this package owns in an origin folder: stale ones are removed after a publish; any
# other file a user keeps there is left alone.
_OWNED_RE = re.compile(
    r"^(?:sitemap(?:-news)?(?:-\d+)?\.xml(?:\.gz)?|sitemap-index-\d+\.xml|robots\.txt)$"
)


@dataclass(frozen=True, slots=True)
class OriginReport:
    """What was published for one origin, for the close summary and the stats."""

    origin: Origin
    folder: Path
    output: OriginOutput
    index_urls: tuple[str, ...]

    @property
    def robots_lines(self) -> str:
        return "".join(f"Sitemap: {url}\n" for url in self.index_urls)


def _move_into_place(source: Path, target: Path) -> None:
    """``os.replace``, which is atomic on one file system; across file systems the copy goes
    to a hidden name in the target folder first, so the final step is still a rename."""
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        temporary = target.with_name(f".{target.name}.part")
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)


def _prepare(target: Path, report: OriginReport) -> None:
    """Create the origin folder and check every destination can take a file, for all
    origins before any is moved, so a blocked destination changes nothing at all."""
    target.mkdir(parents=True, exist_ok=True)
    for name in _publish_order(report):
        if (target / name).is_dir():
            raise IsADirectoryError(errno.EISDIR, "a folder stands where a sitemap goes", str(target / name))


def _publish_order(report: OriginReport) -> list[str]:
    names = [f.name for f in report.output.files]  # the indexes last: P10 readers start there
    names.insert(-len(report.output.indexes), ROBOTS_NAME)
    return names


def _publish(staged: Path, target: Path, report: OriginReport) -> None:
    names = _publish_order(report)
    for name in names:
        _move_into_place(staged / name, target / name)
    keep = set(names)
    for stale in target.iterdir():
        if stale.name not in keep and _OWNED_RE.match(stale.name):
            stale.unlink()


def _first_match(rules: tuple[Rule, ...], loc: str) -> str | None:
    return next((value for pattern, value in rules if pattern.search(loc)), None)


def with_rules(entries: Iterable[UrlFacts], config: Config) -> Iterator[UrlFacts]:
    """SITEMAPGEN_CHANGEFREQ / SITEMAPGEN_PRIORITY for entries that have no value of their
    own (an item's value wins); first matching rule wins, no match writes nothing."""
    if not config.changefreq_rules and not config.priority_rules:
        yield from entries
        return
    for facts in entries:
        changefreq = facts.changefreq or _first_match(config.changefreq_rules, facts.loc)
        priority = facts.priority or _first_match(config.priority_rules, facts.loc)
        if changefreq != facts.changefreq or priority != facts.priority:
            facts = dataclasses.replace(facts, changefreq=changefreq, priority=priority)
        yield facts


def fresh_news(
    entries: Iterable[UrlFacts], now: datetime, max_age: int, reporter: Reporter
) -> Iterator[UrlFacts]:
    """News entries published within ``max_age`` seconds of ``now`` (Google News wants the
    last two days); older ones stay in the urlsets, out of the news sitemap."""
    cutoff = now - timedelta(seconds=max_age)
    for facts in entries:
        assert facts.news is not None
        published = datetime.fromisoformat(facts.news.publication_date)
        if published.tzinfo is None:
            published = published.replace(tzinfo=timezone.utc)
        if published >= cutoff:
            yield facts
        else:
            reporter.exclude("news_too_old", facts.loc)


def write_sitemaps(
    store: FactStore, config: Config, now: datetime, reporter: Reporter
) -> list[OriginReport]:
    """Write every origin's set from ``store`` and publish it under ``config.output_dir``.

    ``now`` is the time of this run: each sitemap's index ``<lastmod>`` (P10) and the
    reference for news freshness. Raises on any failure before the moves, leaving the
    published output untouched.
    """
    output_dir = config.output_dir.resolve()
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.tmp-", dir=output_dir.parent))
    options = WriterOptions(max_urls=config.max_urls, max_bytes=config.max_bytes, gzip=config.gzip)
    reports: list[OriginReport] = []
    try:
        for origin in store.origins():
            folder = staging / origin.name
            folder.mkdir()

            def open_sink(name: str, folder: Path = folder) -> BinaryIO:
                return (folder / name).open("wb")

            base_url = base_url_for(config.base_url, origin)
            output = write_origin(
                with_rules(store.entries(origin), config),
                news=fresh_news(store.news_entries(origin), now, config.news_max_age, reporter),
                scope=origin.root,
                base_url=base_url,
                lastmod=format_w3c(now),
                open_sink=open_sink,
                options=options,
                on_skip=lambda reason, loc: reporter.skip(reason, loc),
            )
            if not output.sitemaps:
                continue
            report = OriginReport(
                origin=origin,
                folder=output_dir / origin.name,
                output=output,
                index_urls=tuple(f"{base_url}{f.name}" for f in output.indexes),
            )
            (folder / ROBOTS_NAME).write_text(report.robots_lines, encoding="utf-8")
            reports.append(report)
        for report in reports:
            _prepare(report.folder, report)
        for report in reports:
            _publish(staging / report.origin.name, report.folder, report)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
    return reports
