"""The close report of a publish: the ``sitemapgen/`` counts and one log line per origin."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .. import stats as keys
from ..sitemaps.sections import section_counts

if TYPE_CHECKING:
    from ..sitemaps.urls import Origin
    from ..stats import Reporter
    from .staging import OriginSet

__all__ = ["report"]

logger = logging.getLogger(__name__)

_SITEMAP_KINDS = frozenset({"urlset", "news", "text", "index"})


def report(
    sets: list[OriginSet],
    delivered: set[Origin],
    reporter: Reporter,
    empty_reason: str | None = None,
    *,
    log_origins: int = 20,
) -> None:
    """Count and log what was published; ``empty_reason`` says why nothing was recorded,
    when the caller knows (a build whose feed held no usable record).

    The first ``log_origins`` origins (in origin order) get an INFO line and per-origin
    stats each; the others' lines go to DEBUG and one INFO line sums them up, so a broad
    crawl's close log (and Scrapy's stats dump) stays readable, and its size does not grow
    with the origin count."""
    stats = reporter.stats
    stats.set_value(keys.ORIGINS, len(sets))
    stats.set_value(keys.URLS_WRITTEN, sum(s.output.url_count for s in sets))
    written = unchanged = 0
    rest = {"origins": 0, "urls": 0, "files": 0, "changed": 0, "incomplete": 0}
    for number, origin_set in enumerate(sets):
        output = origin_set.output
        name = origin_set.origin.name
        urls = output.url_count or sum(f.entries for f in output.texts)
        # Sitemap files (urlsets, news, text, indexes) whose bytes changed, so they were
        # written and delivered, and those an incremental run kept as they were (P10).
        sitemaps = [r for r in origin_set.records if r.kind in _SITEMAP_KINDS]
        changed_files = sum(1 for r in sitemaps if r.changed)
        written += changed_files
        unchanged += len(sitemaps) - changed_files
        shown = number < log_origins
        _report_sections(origin_set, reporter, shown)
        if origin_set.duplicates:
            logger.log(
                logging.INFO if shown else logging.DEBUG,
                "Sitemap: %(root)s: %(count)d page(s) left out as duplicates by content "
                "(%(key)s): %(first)s%(more)s",
                {
                    "root": origin_set.origin.root,
                    "count": origin_set.duplicates,
                    "key": keys.EXCLUDED_DUPLICATE_CONTENT,
                    "first": ", ".join(
                        f"{left} (same as {listed})" for left, listed in origin_set.first_duplicates
                    ),
                    "more": (
                        ", ... (all at DEBUG)"
                        if origin_set.duplicates > len(origin_set.first_duplicates)
                        else ""
                    ),
                },
            )
        if shown:
            stats.set_value(keys.urls_written_for(name), urls)
            stats.set_value(keys.files_written_for(name), changed_files)
            stats.set_value(keys.files_unchanged_for(name), len(sitemaps) - changed_files)
        else:
            rest["origins"] += 1
            rest["urls"] += urls
            rest["files"] += len(output.sitemaps)
            rest["changed"] += changed_files
            rest["incomplete"] += origin_set.origin not in delivered
            if not logger.isEnabledFor(logging.DEBUG):
                continue
        changed = origin_set.changed
        logger.log(
            logging.INFO if shown else logging.DEBUG,
            "Sitemap: %(root)s: %(urls)d URLs (%(added)+d, -%(removed)d since the previous run) "
            "in %(files)d sitemap file(s)%(news)s%(texts)s at %(folder)s%(failed)s; changed: "
            "%(changed)s; add to its robots.txt: %(robots)s",
            {
                "root": origin_set.origin.root,
                "urls": urls,
                "added": origin_set.added,
                "removed": origin_set.removed,
                "files": len(output.sitemaps),
                "news": f", {len(output.news)} news sitemap(s)" if output.news else "",
                "texts": f", {len(output.texts)} text sitemap(s)" if output.texts else "",
                "folder": origin_set.folder,
                "failed": "" if origin_set.origin in delivered else " (DELIVERY INCOMPLETE)",
                "changed": ", ".join(changed) if changed else "nothing",
                "robots": origin_set.robots_lines.strip().replace("\n", " | "),
            },
        )
    if rest["origins"]:
        logger.info(
            "Sitemap: and %(origins)d more origin(s): %(urls)d URLs in %(files)d sitemap "
            "file(s), %(changed)d file(s) changed%(failed)s (one line each at DEBUG; "
            "SITEMAPGEN_LOG_ORIGINS=%(limit)d)",
            {
                **rest,
                "failed": f", DELIVERY INCOMPLETE for {rest['incomplete']}"
                if rest["incomplete"]
                else "",
                "limit": log_origins,
            },
        )
    stats.set_value(keys.FILES_WRITTEN, written)
    stats.set_value(keys.FILES_UNCHANGED, unchanged)
    if not sets:
        logger.info(
            "Sitemap: no page was recorded, so no sitemap was written%(why)s",
            {"why": f": {empty_reason}" if empty_reason else ""},
        )


def _report_sections(origin_set: OriginSet, reporter: Reporter, shown: bool) -> None:
    """SITEMAPGEN_SECTIONS: each section's urlset files and URLs, counted over every
    origin and logged on one line per origin (at DEBUG past SITEMAPGEN_LOG_ORIGINS)."""
    if not origin_set.sectioned:
        return
    counts = section_counts((r.name, r.entries) for r in origin_set.records if r.kind == "urlset")
    for section, (files, urls) in counts.items():
        reporter.stats.inc_value(keys.section_files(section), files)
        reporter.stats.inc_value(keys.section_urls(section), urls)
    logger.log(
        logging.INFO if shown else logging.DEBUG,
        "Sitemap: %(root)s by section: %(sections)s",
        {
            "root": origin_set.origin.root,
            "sections": ", ".join(
                f"{section} {urls} URLs in {files} file(s)"
                for section, (files, urls) in counts.items()
            ),
        },
    )
