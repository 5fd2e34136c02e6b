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
from ..sitemaps.verdicts import FINDINGS, LISTED, Finding, Verdict
from .legend import LEGEND, by_severity, verdict_line
from .rules import audit_findings, counts

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ..sitemaps.broken_links import BrokenLink
    from ..sitemaps.sections import Section
    from ..sitemaps.urls import Origin
    from ..store.verdict_log import VerdictLog

__all__ = [
    "AGE_BUCKETS",
    "MAX_BROKEN_LINKS",
    "NO_LASTMOD",
    "OriginReport",
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
) -> OriginReport:
    """The findings of ``origin`` (``sitemaps``: the live files read; ``invalid``: their
    violations as (file, finding)), sorted by kind (report order), URL and detail; with
    ``sections``, counted per section too; ``missing``: False when the live sitemaps could
    not be read (no ``missing_from_sitemap`` findings); ``clusters``: the findings of its
    broken hreflang clusters, which the publish found (``features.hreflang_clusters``)."""
    now = now or clock.now()
    listed = list(log.listed(origin))
    verdicts: dict[str, int] = {}
    ages: dict[str, int] = {}
    judged = 0

    def crawled() -> Iterator[Verdict]:
        nonlocal judged
        for verdict in log.verdicts(origin):
            judged += 1
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
    return OriginReport(
        origin,
        found,
        dict(counts(found)),
        list(sitemaps),
        urls_judged=judged,
        urls_listed=len(listed),
        not_fetched=sum(1 for _ in log.unjudged(origin)),
        broken_links=broken,
        broken_count=broken_count,
        invalid_dropped=invalid_dropped,
        verdicts=dict(sorted(verdicts.items())),
        lastmod_ages=ages,
        sections=_section_counts(found, sections) if sections else None,
    )


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
