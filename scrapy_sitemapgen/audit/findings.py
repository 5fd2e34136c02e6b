"""One origin's findings: computed from the store's verdicts and the live sitemaps'
entries, counted by kind, by section and by the age of the listed pages' lastmods. What the
report's files (:mod:`.report`) and its page (:mod:`.html`) are written from."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .. import clock
from ..sitemaps.sections import DEFAULT_SECTION, section_of
from ..sitemaps.verdicts import FINDINGS, LISTED, SOURCE_CRAWL, Finding, Verdict
from .changes import Changes
from .groups import group_findings
from .legend import LEGEND, SEVERITIES, by_severity, verdict_line
from .rules import audit_findings, counts

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from ..sitemaps.broken_links import BrokenLink
    from ..sitemaps.sections import Section
    from ..sitemaps.urls import Origin
    from ..sitemaps.verdicts import Listed
    from ..store.verdict_log import VerdictLog
    from .groups import Groups

__all__ = [
    "AGE_BUCKETS",
    "MAX_BROKEN_LINKS",
    "NO_LASTMOD",
    "CrawlRun",
    "OriginReport",
    "SitemapFileCounts",
    "build_report",
    "lastmod_age",
]

#: The lastmod age histogram's buckets (days, upper bound), then pages without a lastmod.
AGE_BUCKETS = (
    (1, "under 1 day"),
    (7, "1 to 7 days"),
    (30, "7 to 30 days"),
    (90, "30 to 90 days"),
    (365, "90 to 365 days"),
    (None, "over 1 year"),
)
NO_LASTMOD = "no lastmod"
#: Broken links a report holds (the page shows them; all of them are in urls.csv).
MAX_BROKEN_LINKS = 500
#: A finding kind's place in the report (the order of FINDINGS).
_ORDER = {name: at for at, name in enumerate(FINDINGS)}


def lastmod_age(lastmod: str | None, now: datetime) -> str:
    """The age bucket of a W3C Datetime lastmod (:data:`AGE_BUCKETS`)."""
    if not lastmod:
        return NO_LASTMOD
    try:
        if len(lastmod) == 10:
            moment = datetime.combine(
                date.fromisoformat(lastmod), datetime.min.time(), timezone.utc
            )
        else:
            moment = datetime.fromisoformat(lastmod.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
    except ValueError:
        return NO_LASTMOD
    days = (now - moment).total_seconds() / 86400
    for bound, name in AGE_BUCKETS:
        if bound is None or days < bound:
            return name
    raise AssertionError("unreachable")  # pragma: no cover


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


@dataclass(frozen=True)
class CrawlRun:
    """When and how the crawl that judged the pages ran (``sitemapgen-audit`` reads a
    stored crawl: none of it is known then)."""

    started: datetime | None = None
    finished: datetime | None = None
    #: :attr:`Config.listing_settings` of the crawl.
    settings: Mapping[str, object] | None = None


@dataclass
class SitemapFileCounts:
    """One live sitemap file read: the URLs it lists, and the findings of those URLs (and
    of the file itself) by severity."""

    file: str
    urls: int = 0
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEVERITIES, 0))

    def as_json(self) -> dict[str, object]:
        return {"file": self.file, "urls": self.urls, "findings": self.findings}


@dataclass
class OriginReport:
    """What the report of one origin says (``audit.json`` holds all but the rows)."""

    origin: Origin
    findings: list[Finding]
    counts: dict[str, int]
    sitemaps: list[str]
    urls_judged: int = 0
    urls_listed: int = 0
    not_fetched: int = 0
    invalid_dropped: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    lastmod_ages: dict[str, int] = field(default_factory=dict)
    #: With SITEMAPGEN_SECTIONS: the counts of each section (the section each finding's
    #: URL goes to; the URLs of no section, and the sitemap files, under "default").
    sections: dict[str, dict[str, int]] | None = None
    #: The first :data:`MAX_BROKEN_LINKS` broken links (URL order), and how many there are.
    broken_links: list[BrokenLink] = field(default_factory=list)
    broken_count: int = 0
    #: Where the report was written.
    folder: Path = field(default_factory=Path)
    #: Finding kind -> its findings grouped by cause (:mod:`.groups`).
    groups: dict[str, Groups] = field(default_factory=dict)
    #: The live files read, each with its counts, in reading order.
    sitemap_files: list[SitemapFileCounts] = field(default_factory=list)
    #: The URLs of this origin the crawl itself judged (not those only the audit fetched).
    pages_crawled: int = 0
    crawl: CrawlRun = field(default_factory=CrawlRun)
    #: When the report was written.
    audited: datetime | None = None
    #: Since the previous report in the same folder (set as the report is written).
    changes: Changes = field(default_factory=Changes)

    def as_json(self) -> dict[str, object]:
        return {
            "origin": self.origin.root,
            "counts": self.counts,
            "findings": sum(self.counts.values()),
            "urls_judged": self.urls_judged,
            "urls_listed": self.urls_listed,
            "not_fetched": self.not_fetched,
            "broken_links": self.broken_count,
            "invalid_sitemap_not_kept": self.invalid_dropped,
            "sitemaps": self.sitemaps,
            "verdicts": self.verdicts,
            "lastmod_ages": self.lastmod_ages,
            **({} if self.sections is None else {"sections": self.sections}),
            "verdict": verdict_line(self.origin.root, self.counts, self.urls_listed),
            "severities": {name: LEGEND[name].severity for name in self.counts},
            "severity_counts": by_severity(self.counts),
            "audited": _iso(self.audited),
            "crawl": {
                "started": _iso(self.crawl.started),
                "finished": _iso(self.crawl.finished),
                "pages": self.pages_crawled,
                "settings": None if self.crawl.settings is None else dict(self.crawl.settings),
            },
            "groups": {kind: groups.as_json() for kind, groups in self.groups.items()},
            "sitemap_files": [f.as_json() for f in self.sitemap_files],
            "changes": self.changes.as_json(),
        }


def build_report(
    log: VerdictLog,
    origin: Origin,
    sitemaps: Iterable[str],
    invalid: Iterable[tuple[str, str]],
    *,
    invalid_dropped: int = 0,
    now: datetime | None = None,
    sections: tuple[Section, ...] = (),
    missing: bool = True,
    clusters: Iterable[Finding] = (),
    crawl: CrawlRun | None = None,
) -> OriginReport:
    """The findings of ``origin`` (``sitemaps``: the live files read; ``invalid``: their
    violations as (file, finding)), sorted by kind (report order), URL and detail; with
    ``sections``, counted per section too; ``missing``: False when the live sitemaps could
    not be read (no ``missing_from_sitemap`` findings); ``clusters``: the findings of its
    broken hreflang clusters, which the publish found (``features.hreflang_clusters``);
    ``crawl``: when and how the crawl ran."""
    now = now or clock.now()
    listed = list(log.listed(origin))
    verdicts: dict[str, int] = {}
    ages: dict[str, int] = {}
    judged = pages = 0

    def crawled() -> Iterator[Verdict]:
        nonlocal judged, pages
        for verdict in log.verdicts(origin):
            judged += 1
            pages += verdict.source == SOURCE_CRAWL
            verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
            if verdict.verdict == LISTED:
                age = lastmod_age(verdict.lastmod, now)
                ages[age] = ages.get(age, 0) + 1
            yield verdict

    broken: list[BrokenLink] = []
    broken_count = 0
    for link in log.broken_links(origin):
        broken_count += 1
        if len(broken) < MAX_BROKEN_LINKS:
            broken.append(link)
    found = sorted(
        [*audit_findings(listed, log.get, crawled(), invalid, missing=missing), *clusters],
        key=lambda f: (_ORDER[f.finding], f.url, f.detail),
    )
    sitemaps = list(sitemaps)
    return OriginReport(
        origin,
        found,
        dict(counts(found)),
        sitemaps,
        urls_judged=judged,
        urls_listed=len(listed),
        not_fetched=sum(1 for _ in log.unjudged(origin)),
        broken_links=broken,
        broken_count=broken_count,
        invalid_dropped=invalid_dropped,
        verdicts=dict(sorted(verdicts.items())),
        lastmod_ages=ages,
        sections=_section_counts(found, sections) if sections else None,
        groups=group_findings(found),
        sitemap_files=_file_counts(sitemaps, listed, found),
        pages_crawled=pages,
        crawl=crawl or CrawlRun(),
        audited=now,
    )


def _file_counts(
    sitemaps: list[str], listed: list[Listed], found: Iterable[Finding]
) -> list[SitemapFileCounts]:
    """Each live file (``sitemaps``, then any other that ``listed`` names) with its URLs and
    the findings of its URLs (a URL listed by several files counts for the first; a
    finding of a URL no file lists, as ``missing_from_sitemap``, for none) and its own."""
    files = {name: SitemapFileCounts(name) for name in sitemaps}
    file_of: dict[str, SitemapFileCounts] = {}
    for entry in listed:
        counted = files.get(entry.sitemap)
        if counted is None:
            counted = files[entry.sitemap] = SitemapFileCounts(entry.sitemap)
        counted.urls += 1
        file_of.setdefault(entry.url, counted)
    for finding in found:
        counted = files.get(finding.url) if finding.finding == "invalid_sitemap" else None
        counted = counted or file_of.get(finding.url)
        if counted is not None:
            counted.findings[LEGEND[finding.finding].severity] += 1
    return list(files.values())


def _section_counts(
    found: Iterable[Finding], sections: tuple[Section, ...]
) -> dict[str, dict[str, int]]:
    """Section name -> the counts of its findings (every kind, 0 when none), in the order
    of SITEMAPGEN_SECTIONS, the URLs of no section last."""
    by_section: dict[str, list[Finding]] = {s.name: [] for s in sections}
    by_section[DEFAULT_SECTION] = []
    for finding in found:
        name = "" if finding.finding == "invalid_sitemap" else section_of(finding.url, sections)
        by_section[name or DEFAULT_SECTION].append(finding)
    return {name: dict(counts(rows)) for name, rows in by_section.items()}
