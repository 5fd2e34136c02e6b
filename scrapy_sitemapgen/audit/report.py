"""One origin's audit: its findings computed from the store's verdicts and the live
sitemaps' entries, and the four files of its report folder."""

from __future__ import annotations

import csv
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..sitemaps.sections import DEFAULT_SECTION, section_of
from ..sitemaps.verdicts import FINDINGS, LISTED, Finding, Verdict, audit_findings, counts
from ..stats import audit_findings as audit_findings_key
from .html import lastmod_age, render

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from scrapy.statscollectors import StatsCollector

    from ..sitemaps.sections import Section
    from ..sitemaps.urls import Origin
    from ..store.verdict_log import VerdictLog
    from .live import LiveRead

__all__ = ["OriginReport", "build_report", "report_origins", "summary", "write_report"]

URLS_COLUMNS = ("url", "verdict", "status", "detail", "lastmod", "source", "images")
AUDIT_COLUMNS = ("url", "finding", "detail")
_ORDER = {name: at for at, name in enumerate(FINDINGS)}


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
            "invalid_sitemap_not_kept": self.invalid_dropped,
            "sitemaps": self.sitemaps,
            "verdicts": self.verdicts,
            "lastmod_ages": self.lastmod_ages,
            **({} if self.sections is None else {"sections": self.sections}),
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
) -> OriginReport:
    """The findings of ``origin`` (``sitemaps``: the live files read; ``invalid``: their
    violations as (file, finding)), sorted by kind (report order), URL and detail; with
    ``sections``, counted per section too; ``missing``: False when the live sitemaps could
    not be read (no ``missing_from_sitemap`` findings)."""
    now = now or datetime.now(timezone.utc)
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

    found = sorted(
        audit_findings(listed, log.get, crawled(), invalid, missing=missing),
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


def write_report(report: OriginReport, log: VerdictLog, folder: Path) -> None:
    """``urls.csv``, ``audit.csv``, ``audit.json`` and ``report.html`` in ``folder``
    (created), each written beside its final name and moved over it, so a reader never
    sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    with _replacing(folder / "urls.csv") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(URLS_COLUMNS)
        for v in log.verdicts(report.origin):
            writer.writerow(
                (
                    v.url,
                    v.verdict,
                    v.status or "",
                    v.detail or "",
                    v.lastmod or "",
                    v.source,
                    v.images,
                )
            )
    with _replacing(folder / "audit.csv") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(AUDIT_COLUMNS)
        for finding in report.findings:
            writer.writerow((finding.url, finding.finding, finding.detail))
    with _replacing(folder / "audit.json") as out:
        json.dump(report.as_json(), out, indent=2)
        out.write("\n")
    with _replacing(folder / "report.html") as out:
        out.write(render(report))


@contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """A text file written as ``<name>.tmp`` and renamed over ``path`` when complete."""
    temp = path.with_name(path.name + ".tmp")
    try:
        with temp.open("w", encoding="utf-8", newline="") as file:
            yield file
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    os.replace(temp, path)


def summary(report: OriginReport) -> str:
    """The close log's line for one origin: every finding kind present, with its count."""
    present = [f"{name} {count:,}" for name, count in report.counts.items() if count]
    total = sum(report.counts.values())
    what = ", ".join(present) if present else "nothing to report"
    return (
        f"{report.origin.root}: {total:,} findings ({what}) over {report.urls_listed:,} "
        f"listed and {report.urls_judged:,} judged URLs, {len(report.sitemaps):,} sitemap files"
    )


def report_origins(
    log: VerdictLog,
    reads: Mapping[Origin, LiveRead],
    report_dir: Path,
    stats: StatsCollector | None = None,
    sections: tuple[Section, ...] = (),
) -> list[OriginReport]:
    """The report of every origin with a verdict, a listed URL or a live read, each in
    ``report_dir/<origin folder>`` (the output's folder names); the findings counted in
    ``stats`` when given."""
    origins = set(reads) | set(log.origins())
    reports = []
    for origin in sorted(origins):
        read = reads.get(origin)
        report = build_report(
            log,
            origin,
            read.sitemaps if read is not None else (),
            read.invalid if read is not None else (),
            invalid_dropped=read.invalid_dropped if read is not None else 0,
            sections=sections,
            missing=read is None or not read.unreadable,
        )
        report.folder = report_dir / origin.name
        write_report(report, log, report.folder)
        if stats is not None:
            for name, count in report.counts.items():
                if count:
                    stats.inc_value(audit_findings_key(name), count)
        reports.append(report)
    return reports
