"""One origin's audit written: the four files of its report folder, from its findings
(:mod:`.findings`), its summary line, and every origin of a store reported at once."""

from __future__ import annotations

import csv
import json
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from ..plural import counted
from ..stats import audit_findings as audit_findings_key
from .changes import compare, read_previous
from .findings import CrawlRun, OriginReport, build_report
from .html import render
from .legend import LEGEND

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path

    from scrapy.statscollectors import StatsCollector

    from ..sitemaps.sections import Section
    from ..sitemaps.urls import Origin
    from ..sitemaps.verdicts import Finding
    from ..store.verdict_log import VerdictLog
    from .live import LiveRead

__all__ = ["report_origins", "summary", "write_report"]

URLS_COLUMNS = (
    "url",
    "verdict",
    "status",
    "detail",
    "lastmod",
    "source",
    "images",
    # issue 53: how many crawled pages link to the URL, and the first of them
    "inlinks",
    "linked_from",
)
#: The columns are an interface: a new one goes at the end.
AUDIT_COLUMNS = ("url", "finding", "detail", "severity")


def write_report(report: OriginReport, log: VerdictLog, folder: Path) -> None:
    """``urls.csv``, ``audit.csv``, ``audit.json`` and ``report.html`` in ``folder``
    (created), each written beside its final name and moved over it, so a reader never
    sees half a file; the findings are first compared with those of the report they
    replace (:attr:`OriginReport.changes`)."""
    report.changes = compare(read_previous(folder), report.findings)
    folder.mkdir(parents=True, exist_ok=True)
    with _replacing(folder / "urls.csv") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(URLS_COLUMNS)
        for v, inlinks, sources in log.linked(report.origin):
            writer.writerow(
                (
                    v.url,
                    v.verdict,
                    v.status or "",
                    v.detail or "",
                    v.lastmod or "",
                    v.source,
                    v.images,
                    inlinks,
                    " ".join(sources),
                )
            )
    with _replacing(folder / "audit.csv") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(AUDIT_COLUMNS)
        for finding in report.findings:
            severity = LEGEND[finding.finding].severity
            writer.writerow((finding.url, finding.finding, finding.detail, severity))
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
        f"{report.origin.root}: {counted(total, 'finding', grouped=True)} ({what}) over "
        f"{report.urls_listed:,} listed and "
        f"{counted(report.urls_judged, 'judged URL', grouped=True)}, "
        f"{counted(len(report.sitemaps), 'sitemap file', grouped=True)}"
    )


def report_origins(
    log: VerdictLog,
    reads: Mapping[Origin, LiveRead],
    report_dir: Path,
    stats: StatsCollector | None = None,
    sections: tuple[Section, ...] = (),
    clusters: Callable[[Origin], Iterable[Finding]] | None = None,
    crawl: CrawlRun | None = None,
) -> list[OriginReport]:
    """The report of every origin with a verdict, a listed URL or a live read, each in
    ``report_dir/<origin folder>`` (the output's folder names); the findings counted in
    ``stats`` when given; ``clusters``: an origin's broken hreflang clusters' findings;
    ``crawl``: when and how the crawl ran (None: a stored crawl, not known)."""
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
            clusters=() if clusters is None else clusters(origin),
            crawl=crawl,
        )
        report.folder = report_dir / origin.name
        write_report(report, log, report.folder)
        if stats is not None:
            for name, count in report.counts.items():
                if count:
                    stats.inc_value(audit_findings_key(name), count)
        reports.append(report)
    return reports
