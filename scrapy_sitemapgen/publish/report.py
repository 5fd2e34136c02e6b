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
) -> None:
    """Count and log what was published; ``empty_reason`` says why nothing was recorded,
    when the caller knows (a build whose feed held no usable record)."""
    stats = reporter.stats
    stats.set_value(keys.ORIGINS, len(sets))
    stats.set_value(keys.URLS_WRITTEN, sum(s.output.url_count for s in sets))
    written = unchanged = 0
    for origin_set in sets:
        output = origin_set.output
        name = origin_set.origin.name
        stats.set_value(
            keys.urls_written_for(name), output.url_count or sum(f.entries for f in output.texts)
        )
        # Sitemap files (urlsets, news, text, indexes) whose bytes changed, so they were
        # written and delivered, and those an incremental run kept as they were (P10).
        sitemaps = [r for r in origin_set.records if r.kind in _SITEMAP_KINDS]
        changed_files = sum(1 for r in sitemaps if r.changed)
        stats.set_value(keys.files_written_for(name), changed_files)
        stats.set_value(keys.files_unchanged_for(name), len(sitemaps) - changed_files)
        written += changed_files
        unchanged += len(sitemaps) - changed_files
        changed = origin_set.changed
        logger.info(
            "Sitemap: %(root)s: %(urls)d URLs (%(added)+d, -%(removed)d since the previous run) "
            "in %(files)d sitemap file(s)%(news)s%(texts)s at %(folder)s%(failed)s; changed: "
            "%(changed)s; add to its robots.txt: %(robots)s",
            {
                "root": origin_set.origin.root,
                "urls": output.url_count or sum(f.entries for f in output.texts),
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
        _report_sections(origin_set, reporter)
    stats.set_value(keys.FILES_WRITTEN, written)
    stats.set_value(keys.FILES_UNCHANGED, unchanged)
    if not sets:
        logger.info(
            "Sitemap: no page was recorded, so no sitemap was written%(why)s",
            {"why": f": {empty_reason}" if empty_reason else ""},
        )


def _report_sections(origin_set: OriginSet, reporter: Reporter) -> None:
    """SITEMAPGEN_SECTIONS: each section's urlset files and URLs, counted over every
    origin and logged on one line per origin."""
    if not origin_set.sectioned:
        return
    counts = section_counts((r.name, r.entries) for r in origin_set.records if r.kind == "urlset")
    for section, (files, urls) in counts.items():
        reporter.stats.inc_value(keys.section_files(section), files)
        reporter.stats.inc_value(keys.section_urls(section), urls)
    logger.info(
        "Sitemap: %(root)s by section: %(sections)s",
        {
            "root": origin_set.origin.root,
            "sections": ", ".join(
                f"{section} {urls} URLs in {files} file(s)"
                for section, (files, urls) in counts.items()
            ),
        },
    )
