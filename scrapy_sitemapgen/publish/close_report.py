"""The close report of a publish: the ``sitemapgen/`` counts and one log line per origin."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .. import stats as keys
from ..plural import counted
from ..sitemaps.broken_links import relative
from ..sitemaps.evidence import UNREACHED, refused
from ..sitemaps.exclusions import governed_by
from ..sitemaps.sections import section_counts
from ..sitemaps.urls import origin_of
from ..sitemaps.verdicts import FINDINGS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..features.hreflang_clusters import ClusterIndex
    from ..sitemaps.broken_links import BrokenLink
    from ..sitemaps.evidence import OriginEvidence
    from ..sitemaps.urls import Origin
    from ..stats import Reporter
    from .staging import OriginSet

__all__ = ["BROKEN_SHOWN", "CloseReport", "count_clusters", "log_broken_links", "log_clusters"]

logger = logging.getLogger(__name__)

#: Broken links named in full on an origin's close line, the most linked first (each
#: of them at DEBUG too).
BROKEN_SHOWN = 5
_SITEMAP_KINDS = frozenset({"urlset", "news", "text", "index"})
_FINDING_ORDER = {name: at for at, name in enumerate(FINDINGS)}


class CloseReport:
    """Counts and logs what was published, group by group as the publish delivers them
    (:meth:`add`), and sums up at the end (:meth:`finish`).

    The first ``log_origins`` origins (in origin order: ``origins``, the publish's list)
    get an INFO line and per-origin stats each, logged at the end in that order; the
    others' lines go to DEBUG as their group is added, and one INFO line sums them up, so
    a broad crawl's close log (and Scrapy's stats dump) stays readable, its size does not
    grow with the origin count, and nothing here holds more than the shown origins' sets.
    """

    def __init__(
        self,
        reporter: Reporter,
        origins: list[Origin],
        log_origins: int = 20,
        cut: str | None = None,
    ) -> None:
        self.reporter = reporter
        self.log_origins = log_origins
        #: Why the crawl stopped before it could reach every page (its close reason).
        self.cut = cut
        self._shown = {origin: n for n, origin in enumerate(origins[:log_origins])}
        self._held: dict[int, tuple[OriginSet, bool]] = {}
        self.origins = self.urls = self.written = self.unchanged = 0
        self.rest = {"origins": 0, "urls": 0, "files": 0, "changed": 0, "incomplete": 0}
        self._debug = _written(logger, logging.DEBUG)
        #: URLs listed, for the origins whose exclusions are counted one by one.
        self._listed: dict[str, int] = {}

    def add(self, sets: list[OriginSet], delivered: set[Origin]) -> None:
        excluded = self.reporter.by_origin
        for origin_set in sets:
            self.origins += 1
            self.urls += origin_set.url_count
            if excluded is not None and origin_set.origin.root in excluded.counts:
                self._listed[origin_set.origin.root] = origin_set.url_count
            number = self._shown.get(origin_set.origin)
            if number is not None:
                self._held[number] = (origin_set, origin_set.origin in delivered)
            else:
                self._count(origin_set, origin_set.origin in delivered, shown=False)

    def _count(self, origin_set: OriginSet, delivered: bool, *, shown: bool) -> None:
        # Sitemap files (urlsets, news, text, indexes) whose bytes changed, so they were
        # written and delivered, and those an incremental run kept as they were (P10).
        sitemaps = [r for r in origin_set.records if r.kind in _SITEMAP_KINDS]
        urlsets = origin_set.files("urlset")
        urls = origin_set.listed
        evidence = origin_set.evidence
        if evidence is not None:
            for reason, count in evidence.kept.items():
                self.reporter.stats.inc_value(keys.kept(reason), count)
            for reason, count in _removed_by(origin_set).items():
                self.reporter.stats.inc_value(keys.removed(reason), count)
        changed_files = sum(1 for r in sitemaps if r.changed)
        self.written += changed_files
        self.unchanged += len(sitemaps) - changed_files
        _report_sections(origin_set, self.reporter, shown)
        if origin_set.duplicates:
            logger.log(
                logging.INFO if shown else logging.DEBUG,
                "Sitemap: %(root)s: %(count)s left out as duplicates by content "
                "(%(key)s): %(first)s%(more)s",
                {
                    "root": origin_set.origin.root,
                    "count": counted(origin_set.duplicates, "page"),
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
        if origin_set.chrome:
            _report_chrome(origin_set, self.reporter, shown)
        if origin_set.feed_entries is not None:
            self.reporter.stats.inc_value(keys.CHANGES_FEED_ENTRIES, origin_set.feed_entries)
        if shown:
            stats = self.reporter.stats
            name = origin_set.origin.name
            stats.set_value(keys.urls_written_for(name), urls)
            stats.set_value(keys.files_written_for(name), changed_files)
            stats.set_value(keys.files_unchanged_for(name), len(sitemaps) - changed_files)
        else:
            rest = self.rest
            rest["origins"] += 1
            rest["urls"] += urls
            rest["files"] += len(urlsets)
            rest["changed"] += changed_files
            rest["incomplete"] += not delivered
            if not self._debug:
                return
        changed = origin_set.changed
        news, texts = (len(origin_set.files(kind)) for kind in ("news", "text"))
        logger.log(
            logging.INFO if shown else logging.DEBUG,
            "Sitemap: %(root)s: %(urls)s (%(added)+d, -%(removed)d since the previous "
            "run%(why)s)%(kept)s in %(files)s%(news)s%(texts)s at %(folder)s"
            "%(failed)s; changed: %(changed)s; add to its robots.txt: %(robots)s",
            {
                "root": origin_set.origin.root,
                "urls": counted(urls, "URL"),
                "added": origin_set.added,
                "removed": origin_set.removed,
                "why": _counted_reasons(_removed_by(origin_set), ": "),
                "kept": self._kept_words(evidence),
                "files": counted(len(urlsets), "sitemap file"),
                "news": f", {counted(news, 'news sitemap')}" if news else "",
                "texts": f", {counted(texts, 'text sitemap')}" if texts else "",
                "folder": origin_set.folder,
                "failed": "" if delivered else " (DELIVERY INCOMPLETE)",
                "changed": ", ".join(changed) if changed else "nothing",
                "robots": origin_set.robots_lines.strip().replace("\n", " | "),
            },
        )

    def _kept_words(self, evidence: OriginEvidence | None) -> str:
        """What the close line says of the pages kept without evidence: ``; kept 99 from
        the previous run (503 ×76, 500 ×23), 3 unreached after a cut crawl``."""
        if evidence is None or not evidence.kept:
            return ""
        unreached = evidence.kept.get(UNREACHED, 0)
        failed = {r: n for r, n in evidence.kept.items() if r != UNREACHED}
        parts = []
        if failed:
            reasons = ", ".join(f"{r} ×{n}" for r, n in _ranked(failed))
            parts.append(f"kept {sum(failed.values())} from the previous run ({reasons})")
        if unreached:
            after = f" after a cut crawl ({self.cut})" if self.cut else ""
            parts.append(f"{'' if failed else 'kept '}{unreached} unreached{after}")
        return "; " + ", ".join(parts)

    def refuses(self, origin_set: OriginSet, share: float | None) -> bool:
        """The guard on shrinking (SITEMAPGEN_MAX_REMOVED_SHARE) for a staged origin:
        whether it must not be published; if so, one ERROR line and its count."""
        listed, previous = origin_set.listed, origin_set.previous
        evidence = origin_set.evidence
        alarming = 0 if evidence is None else evidence.alarming
        if not refused(previous, origin_set.removed, listed, alarming, share):
            return False
        # A feed's build has no evidence: its URLs left because the feed no longer has them.
        reasons = _removed_by(origin_set) or {"not in the input": origin_set.removed}
        self._refused(origin_set.origin, previous, origin_set.removed, reasons, share)
        return True

    def refuses_empty(self, origin: Origin, evidence: OriginEvidence, share: float | None) -> bool:
        """The guard for an origin this run left nothing to write for."""
        removed = evidence.removed_count
        if not refused(evidence.previous, removed, 0, evidence.alarming, share):
            return False
        reasons = dict(evidence.removed)
        if not evidence.previous:  # a first run: what the listing rules left out
            excluded = self.reporter.by_origin
            reasons = dict(excluded.counts.get(origin.root, {})) if excluded is not None else {}
            removed = evidence.alarming
        self._refused(origin, evidence.previous, removed, reasons, share)
        return True

    def _refused(
        self,
        origin: Origin,
        previous: int,
        removed: int,
        reasons: dict[str, int],
        share: float | None,
    ) -> None:
        self.reporter.stats.inc_value(keys.OUTPUT_REFUSED)
        what = (
            f"this run would remove {removed} of the {counted(previous, 'URL')} it published"
            if previous
            else f"none of the {counted(removed, 'page')} this run crawled there is listed"
        )
        logger.error(
            "Sitemap: %(root)s was not published: %(what)s (%(reasons)s), more than "
            "SITEMAPGEN_MAX_REMOVED_SHARE = %(share)s allows; its published files stay as "
            "they were and nothing was submitted. If the site did lose these pages, run "
            "again with a higher SITEMAPGEN_MAX_REMOVED_SHARE (None: no guard)",
            {
                "root": origin.root,
                "what": what,
                "reasons": _counted_reasons(reasons, "") or "no reason recorded",
                "share": share,
            },
        )

    def finish(self, empty_reason: str | None = None) -> None:
        """The shown origins' lines, in origin order, the sum of the others, the totals;
        ``empty_reason`` says why nothing was recorded, when the caller knows (a build
        whose feed held no usable record)."""
        stats = self.reporter.stats
        stats.set_value(keys.ORIGINS, self.origins)
        stats.set_value(keys.URLS_WRITTEN, self.urls)
        for number in sorted(self._held):
            self._count(*self._held.pop(number), shown=True)
        rest = self.rest
        if rest["origins"]:
            logger.info(
                "Sitemap: and %(origins)s: %(urls)s in %(files)s, %(changed)s "
                "changed%(failed)s (one line each at DEBUG; SITEMAPGEN_LOG_ORIGINS=%(limit)d)",
                {
                    "origins": counted(rest["origins"], "more origin"),
                    "urls": counted(rest["urls"], "URL"),
                    "files": counted(rest["files"], "sitemap file"),
                    "changed": counted(rest["changed"], "file"),
                    "failed": f", DELIVERY INCOMPLETE for {rest['incomplete']}"
                    if rest["incomplete"]
                    else "",
                    "limit": self.log_origins,
                },
            )
        stats.set_value(keys.FILES_WRITTEN, self.written)
        stats.set_value(keys.FILES_UNCHANGED, self.unchanged)
        explained = self._report_exclusions()
        if not self.origins:
            if not empty_reason and explained:
                empty_reason = "every page was left out (why: the lines above)"
            elif not empty_reason and self.reporter.skipped_any:
                empty_reason = "no page could be written (why: the warnings above)"
            logger.info(
                "Sitemap: no page was recorded, so no sitemap was written%(why)s",
                {"why": f": {empty_reason}" if empty_reason else ""},
            )

    def _report_exclusions(self) -> bool:
        """One INFO line for each origin (of the first SITEMAPGEN_LOG_ORIGINS that had pages
        left out) that left out more pages than it listed, and one for the other origins
        together: the counts by reason, the hosts a ``canonical_elsewhere`` page's
        canonical names, and what decides the top reason. True if any line was logged."""
        excluded = self.reporter.by_origin
        if excluded is None:
            return False
        logged = False
        for root, counts in excluded.counts.items():
            listed = self._listed.get(root, 0)
            if sum(counts.values()) > listed:
                _log_exclusions(root, counts, listed, excluded.hosts.get(root, []))
                logged = True
        rest_listed = self.urls - sum(self._listed.values())
        if sum(excluded.rest.values()) > rest_listed:
            _log_exclusions(
                f"the other origins (SITEMAPGEN_LOG_ORIGINS={self.log_origins})",
                excluded.rest,
                rest_listed,
                [],
            )
            logged = True
        return logged


def _log_exclusions(where: str, counts: dict[str, int], listed: int, hosts: list[str]) -> None:
    left_out = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    top = ranked[0][0]
    logger.info(
        "Sitemap: %(where)s: %(crawled)s crawled, %(listed)s: %(reasons)s; what decides "
        "%(top)s: %(governed)s",
        {
            "where": where,
            "crawled": counted(left_out + listed, "page"),
            "listed": f"{listed} listed, {left_out} left out" if listed else "none listed",
            "reasons": ", ".join(
                f"{reason} {count}"
                + (
                    f" (canonicals name {', '.join(hosts)})"
                    if reason == "canonical_elsewhere" and hosts
                    else ""
                )
                for reason, count in ranked
            ),
            "top": top,
            "governed": governed_by(top),
        },
    )


def _written(log: logging.Logger, level: int) -> bool:
    """Whether a record of ``level`` from ``log`` would reach a handler that takes it.
    Scrapy leaves its loggers at every level and sets ``LOG_LEVEL`` on its handler, so
    ``isEnabledFor(DEBUG)`` says yes to lines no handler writes, and the close report
    would make a record for each of a broad crawl's origins for nothing."""
    if not log.isEnabledFor(level):
        return False
    current: logging.Logger | None = log
    handlers = 0
    while current is not None:
        for handler in current.handlers:
            handlers += 1
            if level >= handler.level:
                return True
        current = current.parent if current.propagate else None
    return not handlers and logging.lastResort is not None and level >= logging.lastResort.level


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
                f"{section} {counted(urls, 'URL')} in {counted(files, 'file')}"
                for section, (files, urls) in counts.items()
            ),
        },
    )


def _report_chrome(origin_set: OriginSet, reporter: Reporter, shown: bool) -> None:
    """SITEMAPGEN_IMAGE_CHROME_SHARE: the image entries left out as the site's chrome,
    counted, and the most-used few named on one line per origin (at DEBUG past
    SITEMAPGEN_LOG_ORIGINS)."""
    reporter.stats.inc_value(keys.SKIPPED_IMAGE_CHROME, origin_set.chrome)
    logger.log(
        logging.INFO if shown else logging.DEBUG,
        "Sitemap: %(root)s: %(images)s on more pages than SITEMAPGEN_IMAGE_CHROME_SHARE "
        "allows left out of every page's images as the site's chrome, %(count)d in all "
        "(%(key)s): %(first)s%(more)s",
        {
            "root": origin_set.origin.root,
            "images": counted(origin_set.chrome_images, "image"),
            "count": origin_set.chrome,
            "key": keys.SKIPPED_IMAGE_CHROME,
            "first": ", ".join(
                f"{image} (on {counted(pages, 'page')})" for image, pages in origin_set.first_chrome
            ),
            "more": ", ..." if origin_set.chrome_images > len(origin_set.first_chrome) else "",
        },
    )


def count_clusters(clusters: ClusterIndex, reporter: Reporter) -> None:
    """The hreflang clusters' counts: each alternate not written by its reason
    (``sitemapgen/skipped/alternate/<reason>``), those written unverified."""
    stats = reporter.stats
    for outcome, count in clusters.counts().items():
        if outcome == "unverified":
            stats.inc_value(keys.ALTERNATES_UNVERIFIED, count)
        elif outcome != "kept":
            stats.inc_value(keys.skipped_alternate(outcome), count)


def log_clusters(clusters: ClusterIndex, log_origins: int) -> None:
    """One line per origin with a broken hreflang cluster: its findings counted and the
    first few (INFO for the first ``log_origins`` such origins, DEBUG past them, with one
    INFO line summing those up)."""
    rest: dict[str, int] = {}
    rest_origins = 0
    debug = _written(logger, logging.DEBUG)
    for number, origin in enumerate(clusters.by_origin()):
        shown = number < log_origins
        if not shown:
            rest_origins += 1
            for name, count in origin.counts.items():
                rest[name] = rest.get(name, 0) + count
            if not debug:
                continue
        logger.log(
            logging.INFO if shown else logging.DEBUG,
            "Sitemap: %(root)s: broken hreflang clusters: %(counts)s; first: %(first)s; the "
            "sitemap writes only the pairs that name each other and the page itself (G6): "
            "fix these pages' hreflang links",
            {
                "root": origin.root,
                "counts": _counted(origin.counts),
                "first": ", ".join(
                    f"{f.url} {f.finding}{f' {f.detail}' if f.detail else ''}"
                    for f in origin.examples
                ),
            },
        )
    if rest_origins:
        logger.info(
            "Sitemap: and %(origins)s with broken hreflang clusters: %(counts)s "
            "(one line each at DEBUG; SITEMAPGEN_LOG_ORIGINS=%(limit)d)",
            {
                "origins": counted(rest_origins, "more origin"),
                "counts": _counted(rest),
                "limit": log_origins,
            },
        )


def log_broken_links(
    broken: Iterable[BrokenLink], reporter: Reporter, log_origins: int, audited: bool
) -> None:
    """One INFO line per origin with broken links (``broken``: in origin, then URL
    order), naming the :data:`BROKEN_SHOWN` most linked with their status and their
    first sources, each on a DEBUG line of its own; past the first
    ``log_origins`` such origins, their lines at DEBUG and one INFO line summing them
    up. Counted in ``sitemapgen/broken_links`` (and ``…/<origin>`` for the shown ones);
    ``audited``: the audit's ``urls.csv`` holds them too."""
    debug = _written(logger, logging.DEBUG)
    stats = reporter.stats
    total = rest = rest_origins = origins = 0
    current: Origin | None = None
    first: list[BrokenLink] = []
    count = 0

    def finish() -> None:
        nonlocal rest, rest_origins
        if current is None:
            return
        shown = origins <= log_origins
        if shown:
            stats.set_value(keys.broken_links_for(current.name), count)
        else:
            rest += count
            rest_origins += 1
        if shown or debug:
            _log_broken(current, first, count, shown, audited)

    for link in broken:
        origin = origin_of(link.url)
        if origin != current:
            finish()
            current, first, count = origin, [], 0
            origins += 1
        count += 1
        total += 1
        # The most linked first (those an SEO engineer fixes first), then URL order.
        first.append(link)
        if len(first) > BROKEN_SHOWN:
            first.remove(min(reversed(first), key=lambda kept: kept.inlinks))
        if debug:
            logger.debug(
                "Sitemap: %(root)s: broken link %(link)s",
                {"root": origin.root, "link": _broken_words(link, origin.root)},
            )
    finish()
    if not total:
        return
    stats.set_value(keys.BROKEN_LINKS, total)
    if rest_origins:
        logger.info(
            "Sitemap: and %(origins)s with broken links: %(links)s (one line each at DEBUG; "
            "SITEMAPGEN_LOG_ORIGINS=%(limit)d)",
            {
                "origins": counted(rest_origins, "more origin", grouped=True),
                "links": counted(rest, "broken link", grouped=True),
                "limit": log_origins,
            },
        )


def _log_broken(
    origin: Origin, first: list[BrokenLink], count: int, shown: bool, audited: bool
) -> None:
    more = count - len(first)
    where = "at DEBUG, and in the audit's urls.csv" if audited else "at DEBUG"
    logger.log(
        logging.INFO if shown else logging.DEBUG,
        "Sitemap: %(root)s: %(count)s: %(first)s%(more)s",
        {
            "root": origin.root,
            "count": counted(count, "broken link", grouped=True),
            "first": ", ".join(
                _broken_words(link, origin.root)
                for link in sorted(first, key=lambda kept: (-kept.inlinks, kept.url))
            ),
            "more": f", ... ({more:,} more, all {where})" if more > 0 else "",
        },
    )


def _broken_words(link: BrokenLink, root: str) -> str:
    """``/a (404, from /x, /y and 3 more pages)``."""
    sources = ", ".join(relative(source, root) for source in link.sources)
    unnamed = link.inlinks - len(link.sources)
    if unnamed > 0:
        sources += f" and {counted(unnamed, 'more page', grouped=True)}"
    return f"{relative(link.url, root)} ({link.why}, from {sources})"


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(
        f"{name} {counts[name]}"
        for name in sorted(counts, key=lambda name: _FINDING_ORDER.get(name, 0))
    )


def _ranked(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))


def _counted_reasons(counts: dict[str, int], lead: str) -> str:
    """``status/404 14, noindex 2`` after ``lead``; "" for no counts."""
    if not counts:
        return ""
    return lead + ", ".join(f"{reason} {count}" for reason, count in _ranked(counts))


def _removed_by(origin_set: OriginSet) -> dict[str, int]:
    """The origin's URLs removed since the previous run, by reason: the evidence the join
    saw, and what the publish left out after it (duplicates by content) as the rest."""
    evidence = origin_set.evidence
    if evidence is None:
        return {}
    reasons = dict(evidence.removed)
    rest = origin_set.removed - evidence.removed_count
    if rest > 0:
        reason = "duplicate_content" if origin_set.duplicates else "other"
        reasons[reason] = reasons.get(reason, 0) + rest
    return reasons
