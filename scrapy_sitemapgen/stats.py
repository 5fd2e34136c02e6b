"""The ``sitemapgen/...`` stats vocabulary, and the one helper that counts and logs a skip.

Every key is built here so the README's stats table and the code cannot drift apart.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .sitemaps.exclusions import OriginExclusions

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

__all__ = ["Reporter", "Tally"]

PREFIX = "sitemapgen"
PAGES_RECORDED = f"{PREFIX}/pages/recorded"
ITEMS_RECORDED = f"{PREFIX}/items/recorded"
URLS_STORED = f"{PREFIX}/urls/stored"
ORIGINS = f"{PREFIX}/origins"
URLS_WRITTEN = f"{PREFIX}/urls/written"
FILES_WRITTEN = f"{PREFIX}/files/written"
FILES_UNCHANGED = f"{PREFIX}/files/unchanged"
FILES_REPAIRED = f"{PREFIX}/files/repaired"
OUTPUT_FAILED = f"{PREFIX}/output/failed"
OUTPUT_POSTPONED = f"{PREFIX}/output/postponed"
RESUME_REISSUED = f"{PREFIX}/resume/reissued"
RESUME_QUEUES_REMOVED = f"{PREFIX}/resume/queues_removed"
STORE_LOST = f"{PREFIX}/store/lost"
# The audit of the live sitemaps (SITEMAPGEN_AUDIT)
VERDICTS_RECORDED = f"{PREFIX}/verdicts/recorded"
AUDIT_SITEMAPS_READ = f"{PREFIX}/audit/sitemaps_read"
AUDIT_LISTED = f"{PREFIX}/audit/listed"
AUDIT_FETCHED = f"{PREFIX}/audit/fetched"
AUDIT_NOT_FETCHED = f"{PREFIX}/audit/not_fetched"
AUDIT_REPORT_FAILED = f"{PREFIX}/audit/report_failed"


def audit_findings(finding: str) -> str:
    """Findings of one kind over every origin audited (``listed_not_found``, ...)."""
    return f"{PREFIX}/audit/findings/{finding}"


def excluded(reason: str) -> str:
    """A page left out by a listing rule (not 200, not HTML, ``dont_sitemap``)."""
    return f"{PREFIX}/excluded/{reason}"


def skipped(reason: str) -> str:
    """A value or entry dropped because it was bad data (URL, date, size)."""
    return f"{PREFIX}/skipped/{reason}"


#: Records of a build's ``--input`` feed without a ``loc`` field (or with an empty one).
ITEMS_NO_LOC = skipped("item_no_loc")

#: The skip reason of a canonical that is no http(s) URL (``file:``, ``javascript:``),
#: passed over as if the page had none, and its count.
CANONICAL_NOT_HTTP = "canonical_not_http"

#: ``<image:image>`` entries left out as the site's chrome (SITEMAPGEN_IMAGE_CHROME_SHARE):
#: one per image per page it was on, counted when the sitemaps are written.
SKIPPED_IMAGE_CHROME = skipped("image/chrome")

#: Candidates of an image (``srcset`` sizes, ``src``, a ``<picture>``'s sources) left out
#: for its largest: one per URL as written, per page, unless the page shows it elsewhere.
SKIPPED_IMAGE_SMALLER = skipped("image/smaller_candidate")

#: robots.txt as the engines read it (SITEMAPGEN_RESPECT_ROBOTS_TXT): the files requested
#: (one per origin), those that could not be read (a 5xx, 429 or no answer: everything
#: disallowed) and those not there (a 4xx: everything allowed).
ROBOTS_TXT_REQUESTS = f"{PREFIX}/robots_txt/requests"
ROBOTS_TXT_UNREACHABLE = f"{PREFIX}/robots_txt/unreachable"
ROBOTS_TXT_ABSENT = f"{PREFIX}/robots_txt/absent"
#: The skip reason of an image that an agent of SITEMAPGEN_ROBOTS_IMAGE_USER_AGENTS may not
#: fetch (the page stays listed).
IMAGE_ROBOTS_TXT = "image/robots_txt"


def robots_txt_reason(agent: str) -> str:
    """The exclusion reason of a page that ``agent``'s robots.txt group disallows."""
    return f"robots_txt/{agent}"


#: The exclusion reason of a page whose content another URL of its origin also has
#: (SITEMAPGEN_DEDUPE_CONTENT), and its count.
DUPLICATE_CONTENT = "duplicate_content"
EXCLUDED_DUPLICATE_CONTENT = excluded(DUPLICATE_CONTENT)


#: Alternates of a listed page written although the crawl never judged their target
#: (another site, a page not crawled): unknown is not wrong (SITEMAPGEN_ALTERNATES_CHECK).
ALTERNATES_UNVERIFIED = f"{PREFIX}/alternates/unverified"


def skipped_alternate(reason: str) -> str:
    """Declared alternates not written: ``no_return``, ``conflict``, or why their target
    is not listed (``noindex``, ``canonical_elsewhere``, ``redirected``, ...)."""
    return skipped(f"alternate/{reason}")


def delivery_failed(storage: str) -> str:
    """A file a feed storage could not store (FeedExporter counts feedexport/failed_count)."""
    return f"{PREFIX}/delivery/failed/{storage}"


def delivery_stored(storage: str) -> str:
    return f"{PREFIX}/delivery/stored/{storage}"


#: Recurring crawls (docs/recurring.rst): origins not published because the run would
#: have removed more of their URLs than SITEMAPGEN_MAX_REMOVED_SHARE allows; pages the
#: previous run published that this run listed again anyway (after SITEMAPGEN_RECHECK_UNREACHED
#: found them still there while no crawled page links to them).
OUTPUT_REFUSED = f"{PREFIX}/output/refused"
ORPHANS = f"{PREFIX}/orphans"
#: The previously published URLs requested again at the end of a crawl that did not reach them.
RECHECKED = f"{PREFIX}/rechecked"


def kept(reason: str) -> str:
    """A page the previous run published, kept without this run's evidence: ``503``,
    ``429``, ``timeout``, ``dns``, ``connection``, ``unreached``."""
    return f"{PREFIX}/kept/{reason}"


def removed(reason: str) -> str:
    """A page the previous run published, removed on this run's evidence (``status/404``,
    ``noindex``, ``redirected``, ...) or as ``unconfirmed`` for too long."""
    return f"{PREFIX}/removed/{reason}"


#: URLs this run found broken (an HTTP 4xx/5xx, or no answer) that crawled pages link to,
#: over every origin; per origin (``…/<origin>``) for the close log's shown origins.
BROKEN_LINKS = f"{PREFIX}/broken_links"


def broken_links_for(origin_name: str) -> str:
    return f"{BROKEN_LINKS}/{origin_name}"


def urls_written_for(origin_name: str) -> str:
    return f"{URLS_WRITTEN}/{origin_name}"


def files_written_for(origin_name: str) -> str:
    return f"{FILES_WRITTEN}/{origin_name}"


def files_unchanged_for(origin_name: str) -> str:
    return f"{FILES_UNCHANGED}/{origin_name}"


def section_urls(section: str) -> str:
    """URLs written in one section's urlsets (SITEMAPGEN_SECTIONS), over every origin."""
    return f"{PREFIX}/sections/{section}/urls"


def section_files(section: str) -> str:
    """Urlset files of one section, over every origin."""
    return f"{PREFIX}/sections/{section}/files"


#: IndexNow: requests sent (a retry is one more), URLs the endpoint accepted, URLs that
#: could not be submitted (refused, or retried until SITEMAPGEN_INDEXNOW_RETRY_SECONDS).
INDEXNOW_REQUESTS = f"{PREFIX}/indexnow/requests"
INDEXNOW_URLS_SUBMITTED = f"{PREFIX}/indexnow/urls/submitted"
INDEXNOW_URLS_FAILED = f"{PREFIX}/indexnow/urls/failed"
#: URLs of a first run (no previous fingerprints) not submitted (SITEMAPGEN_INDEXNOW_INITIAL).
INDEXNOW_URLS_INITIAL = f"{PREFIX}/indexnow/urls/initial_skipped"
#: URLs outside the folder of the key file, which IndexNow would refuse (422).
INDEXNOW_URLS_OUTSIDE_KEY = f"{PREFIX}/indexnow/urls/outside_key_location"
#: A submission that failed for a reason of its own (logged with its traceback).
INDEXNOW_FAILED = f"{PREFIX}/indexnow/failed"
#: Entries of the changes feeds written (SITEMAPGEN_CHANGES_FEED), over every origin.
CHANGES_FEED_ENTRIES = f"{PREFIX}/changes_feed/entries"


def indexnow_status(status: int) -> str:
    """Answers of the IndexNow endpoint with HTTP status ``status``."""
    return f"{PREFIX}/indexnow/status/{status}"


def indexnow_error(name: str) -> str:
    """Requests that got no answer (a download error, by exception name)."""
    return f"{PREFIX}/indexnow/error/{name}"


def indexnow_changes(kind: str) -> str:
    """URLs added, changed or removed since the previous run, as found for IndexNow."""
    return f"{PREFIX}/indexnow/urls/{kind}"


#: Origins a tally counts exclusions of one by one (a build worker's, merged into the
#: report's SITEMAPGEN_LOG_ORIGINS).
_TALLY_ORIGINS = 1000


class Reporter:
    """Counts skips and exclusions, logging the first of each cause at WARNING (or DEBUG for
    exclusions, which are the rules working) and the rest at DEBUG, so a site with a million
    bad dates shows the problem once without flooding the log."""

    def __init__(self, stats: StatsCollector, logger: logging.Logger) -> None:
        self.stats = stats
        self.logger = logger
        self._warned: set[str] = set()
        #: The last exclusion (reason, detail) and the last skip's reason: what the verdict
        #: of the page being judged says (the audit resets and reads them around a page).
        self.last_exclusion: tuple[str, str | None] | None = None
        self.last_skip: str | None = None
        #: The exclusions per origin the close report explains, once the recorder sets it.
        self.by_origin: OriginExclusions | None = None

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        self.last_skip = reason
        self.stats.inc_value(skipped(reason))
        first = reason not in self._warned
        self._warned.add(reason)
        self.logger.log(
            logging.WARNING if first else logging.DEBUG,
            "Sitemap: left out %(what)s of %(url)s (%(reason)s)%(more)s",
            {
                "what": "the URL" if detail is None else repr(detail)[:200],
                "url": url[:300],
                "reason": reason,
                "more": "; further cases are logged at DEBUG" if first else "",
            },
        )

    @property
    def skipped_any(self) -> bool:
        """Whether anything was left out as bad data (what the close says when nothing
        could be written)."""
        return bool(self._warned)

    def count(self, key: str, count: int = 1) -> None:
        """Adds to a counter of the rules working (an image's smaller candidates), which
        is no bad data and never logged."""
        self.stats.inc_value(key, count)

    def exclude(
        self, reason: str, url: str, detail: str | None = None, *, per_origin: bool = True
    ) -> None:
        """``detail``: where the page points instead (its canonical, its refresh target);
        ``per_origin``: False for a case a tally's own per-origin counts hold."""
        self.last_exclusion = (reason, detail)
        self.stats.inc_value(excluded(reason))
        if per_origin and self.by_origin is not None:
            self.by_origin.add(reason, url, detail)
        self.logger.debug(
            "Sitemap: not listing %(url)s (%(reason)s)", {"url": url[:300], "reason": reason}
        )


def _first(one: int | None, other: int | None) -> int | None:
    """The earlier of two offsets, either of which may be unknown (None)."""
    if one is None:
        return other
    return one if other is None else min(one, other)


@dataclass
class Tally:
    """What a build read: counts by (kind, reason), with the first case of each for the
    log (a million bad dates show as one warning and a count, as in a crawl); and the
    records that could not be read at all: lines that are no JSON object, records without
    ``loc`` (where the first is, and which field that looks like a URL they have instead),
    records whose ``loc`` was refused or excluded."""

    records: int = 0
    bad_lines: int = 0
    #: Where the first line that is no JSON object starts (a byte offset); None: none seen.
    first_bad_offset: int | None = None
    no_loc: int = 0
    #: Where the first record without loc starts (a byte offset); None: none seen.
    first_no_loc_offset: int | None = None
    #: The line of the first record without loc, once known (the parent counts it).
    first_no_loc_line: int = 0
    #: Name -> how many records without loc have that field that looks like a URL.
    no_loc_fields: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    first: dict[tuple[str, str], tuple[str, object]] = field(default_factory=dict)
    #: The exclusions per origin, for the close report (bounded as the crawl's are).
    by_origin: OriginExclusions = field(default_factory=lambda: OriginExclusions(_TALLY_ORIGINS))

    def add_no_loc(self, offset: int, url_field: str | None) -> None:
        """A record without ``loc`` at byte ``offset`` of the feed; ``url_field`` names its
        field that looks like the page's URL, if any."""
        self.no_loc += 1
        if self.first_no_loc_offset is None:
            self.first_no_loc_offset = offset
        if url_field is not None:
            self.no_loc_fields[url_field] = self.no_loc_fields.get(url_field, 0) + 1

    def add(self, kind: str, reason: str, url: str, detail: object = None) -> None:
        key = (kind, reason)
        count = self.counts.get(key, 0)
        self.counts[key] = count + 1
        if not count:
            self.first[key] = (url, detail)  # a JSON value: it crosses processes as it is

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        """:meth:`stats.Reporter.skip`, kept for the parent process to report."""
        self.add("skip", reason, url, detail)

    def exclude(self, reason: str, url: str) -> None:
        """:meth:`stats.Reporter.exclude`, kept for the parent process to report."""
        self.add("exclude", reason, url)
        self.by_origin.add(reason, url)

    def replay(self, reporter: Reporter) -> None:
        """Count and log through ``reporter`` what a worker met: the first case of each
        cause as the crawl would log it, the rest counted."""
        for (kind, reason), count in sorted(self.counts.items()):
            url, detail = self.first[kind, reason]
            if kind == "skip":
                reporter.skip(reason, url, detail)
                reporter.stats.inc_value(skipped(reason), count - 1)
            else:
                reporter.exclude(reason, url, per_origin=False)
                reporter.stats.inc_value(excluded(reason), count - 1)
        if reporter.by_origin is not None:
            reporter.by_origin.update(self.by_origin)

    def update(self, other: Tally) -> None:
        self.records += other.records
        self.bad_lines += other.bad_lines
        self.first_bad_offset = _first(self.first_bad_offset, other.first_bad_offset)
        self.no_loc += other.no_loc
        self.first_no_loc_offset = _first(self.first_no_loc_offset, other.first_no_loc_offset)
        for name, count in other.no_loc_fields.items():
            self.no_loc_fields[name] = self.no_loc_fields.get(name, 0) + count
        self.refused += other.refused
        for key, count in other.counts.items():
            if key not in self.counts:
                self.first[key] = other.first[key]
            self.counts[key] = self.counts.get(key, 0) + count
        self.by_origin.update(other.by_origin)
