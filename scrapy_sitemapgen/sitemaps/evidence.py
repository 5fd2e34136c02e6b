"""Only evidence removes a page: which verdicts of this run take a URL out of the published
set, and the join of an origin's entries against what the previous run published.

A sitemap is a promise to the search engines about what a site holds, and a recurring crawl
renews it. A page leaves it only on evidence this run saw: a 404 or 410, a redirect,
``noindex``, a canonical naming another URL, an engine's robots.txt rule, a duplicate,
``dont_sitemap``, or any other verdict the listing rules give on a response. A 5xx, a 429,
a timeout, a DNS or connection failure, or a URL the crawl did not reach is no evidence:
the page keeps the entry it was published with, until it has gone unconfirmed for longer
than ``SITEMAPGEN_KEEP_UNCONFIRMED``. This is how Google treats the same answers: a 5xx or
a 429 slows its crawl and keeps the URL indexed for a while, any other 4xx drops it
(docs/recurring.rst). Pure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .facts import UrlFacts

__all__ = [
    "FAILED_PREFIX",
    "KEEP_UNCONFIRMED_SECONDS",
    "MAX_KEEP_UNCONFIRMED_SECONDS",
    "UNCONFIRMED",
    "UNREACHED",
    "OriginEvidence",
    "Previous",
    "alarms",
    "failed",
    "kept_reason",
    "published_set",
    "refused",
    "removed_reason",
    "removes",
]

#: How long a published page stays listed without fresh evidence, by default: 30 days,
#: the time Google keeps using the last copy of a robots.txt it can no longer fetch, and
#: longer than any outage or capped crawl a nightly job should ride out.
KEEP_UNCONFIRMED_SECONDS = 30 * 24 * 3600
#: The longest SITEMAPGEN_KEEP_UNCONFIRMED may be: a year.
MAX_KEEP_UNCONFIRMED_SECONDS = 365 * 24 * 3600
#: The verdicts of requests that got no answer to judge: ``failed/<kind>`` (timeout, dns,
#: connection, error), recorded by the crawl's downloader middleware.
FAILED_PREFIX = "failed/"
#: The reason a published page is kept when this run gave it no verdict at all.
UNREACHED = "unreached"
#: The reason a page kept without evidence for too long is removed.
UNCONFIRMED = "unconfirmed"

_EXCLUDED = "excluded/"
_STATUS = "excluded/status/"
#: Verdicts of an answer that is no evidence: the audit's names for a fetch that failed
#: and for one Scrapy's own ROBOTSTXT_OBEY refused (the crawler's user agent, not an
#: engine's: the listing rules never judged the page).
_NO_ANSWER = frozenset({"fetch_failed", "blocked_by_robots"})
#: Statuses that say "not now" rather than "not here": every 5xx, 429 Too Many Requests
#: and 408 Request Timeout (both retried by Scrapy's RetryMiddleware, as the 5xx are).
_TRANSIENT_4XX = frozenset({408, 429})
#: Removal reasons that are no alarm when they cover a whole origin that was never
#: published: a redirect (the http:// or www. origin of a site), a file that is no page,
#: and the user's own choices.
_QUIET = frozenset({"redirected", "meta_refresh", "content_type", "dont_sitemap", "denied"})
_QUIET_PREFIXES = ("status/3", "skipped/", "not_allowed")


def failed(kind: str) -> str:
    """The verdict of a request that got no answer (``timeout``, ``dns``, ...)."""
    return f"{FAILED_PREFIX}{kind}"


def _status(verdict: str) -> int | None:
    if not verdict.startswith(_STATUS):
        return None
    try:
        return int(verdict[len(_STATUS) :])
    except ValueError:
        return None


def removes(verdict: str) -> bool:
    """Whether ``verdict`` (the names of :class:`.verdicts.Verdict`: ``listed``,
    ``excluded/<reason>``, ``skipped/<reason>``, ``redirected``, ``failed/<kind>``) is
    evidence that the URL is no page to list."""
    if verdict.startswith(FAILED_PREFIX) or verdict in _NO_ANSWER or verdict == "listed":
        return False
    status = _status(verdict)
    return status is None or not (status >= 500 or status in _TRANSIENT_4XX)


def removed_reason(verdict: str) -> str:
    """How a removal is named in the stats and the close log: the exclusion reason
    (``status/404``, ``noindex``, ``robots_txt/googlebot``), ``redirected``, ``skipped/...``."""
    return verdict.removeprefix(_EXCLUDED)


def kept_reason(verdict: str | None) -> str:
    """How a page kept without evidence is named: the status (``503``), the failure
    (``timeout``), or :data:`UNREACHED` when this run gave it no verdict."""
    if verdict is None:
        return UNREACHED
    status = _status(verdict)
    if status is not None:
        return str(status)
    return verdict.removeprefix(FAILED_PREFIX)


def alarms(verdict: str) -> bool:
    """Whether a removal on ``verdict`` counts toward "every page crawled and none
    listed", which the guard refuses even on an origin's first run: a page that answered
    (4xx, noindex, canonicalised, disallowed, a duplicate), not a redirect, a file that is
    no page, or a page the user's own settings or requests leave out."""
    if not removes(verdict):
        return False
    reason = removed_reason(verdict)
    return reason not in _QUIET and not reason.startswith(_QUIET_PREFIXES)


@dataclass
class OriginEvidence:
    """What this run's evidence did to one origin's published set."""

    #: URLs the previous run published (whatever happened to them now).
    previous: int = 0
    #: URLs this run listed afresh.
    listed: int = 0
    #: Published URLs kept without evidence, by :func:`kept_reason`.
    kept: dict[str, int] = field(default_factory=dict)
    #: Published URLs removed, by :func:`removed_reason` (:data:`UNCONFIRMED`: kept for too
    #: long without evidence).
    removed: dict[str, int] = field(default_factory=dict)
    #: This run's removals of pages that answered (:func:`alarms`), published before or not.
    alarming: int = 0
    #: Pages kept that carry news facts (none: the news are the store's news entries).
    kept_news: int = 0

    @property
    def removed_count(self) -> int:
        return sum(self.removed.values())

    @property
    def kept_count(self) -> int:
        return sum(self.kept.values())


#: The previous run's note of a published URL: when evidence last confirmed it (seconds
#: since the epoch; None: not known, a state from before the notes), and its entry as
#: published, encoded (None: the loc alone is known).
Previous = tuple["int | None", "str | None"]


def _count(counts: dict[str, int], reason: str) -> None:
    counts[reason] = counts.get(reason, 0) + 1


#: Sorts after every loc: a loc is ASCII (normalised, percent-encoded, punycode hosts).
_END = "\U0010ffff"


def published_set(
    fresh: Iterator[UrlFacts],
    earlier: Iterator[str],
    previous: Iterator[tuple[str, Previous]],
    judged: Iterator[tuple[str, str]],
    *,
    now: int,
    keep_for: float,
    entry_of: Callable[[str, str | None], UrlFacts],
    tally: OriginEvidence,
    on_kept: Callable[[str, str], None] | None = None,
) -> Iterator[UrlFacts]:
    """One origin's entries to publish, in loc order, from four streams in loc order: the
    store's entries (``fresh``), the locs of those among them an earlier crawl recorded
    into a store kept across crawls (``earlier``), what the previous run published
    (``previous``, decoded by ``entry_of``), and this run's verdicts of URLs it did not
    list (``judged``). ``now`` is this run's time, in seconds since the epoch.

    - An entry this run recorded is published as this run saw it.
    - Otherwise a verdict that :func:`removes` takes the URL out.
    - Otherwise a URL published before (or an earlier crawl's row) keeps its entry, with
      ``confirmed`` set to when evidence last confirmed it, unless that was more than
      ``keep_for`` seconds ago: then it is removed as :data:`UNCONFIRMED`.

    ``tally`` counts what happened, for the close log, the stats and the guard;
    ``on_kept`` is told (loc, :func:`kept_reason`) of each URL kept without evidence."""
    fact = next(fresh, None)
    fact_loc = _END if fact is None else fact.loc
    old = next(earlier, _END)
    note = next(previous, None)
    note_loc = _END if note is None else note[0]
    verdict = next(judged, None)
    verdict_loc = _END if verdict is None else verdict[0]
    while True:
        loc = min(fact_loc, note_loc, verdict_loc)
        if loc == _END:
            return
        entry = None
        if fact_loc == loc:
            entry = fact
            fact = next(fresh, None)
            fact_loc = _END if fact is None else fact.loc
        published = None
        if note_loc == loc:
            assert note is not None
            published = note[1]
            note = next(previous, None)
            note_loc = _END if note is None else note[0]
            tally.previous += 1
        said = None
        if verdict_loc == loc:
            assert verdict is not None
            said = verdict[1]
            verdict = next(judged, None)
            verdict_loc = _END if verdict is None else verdict[0]
        while old < loc:
            old = next(earlier, _END)
        if entry is not None and old != loc:
            tally.listed += 1
            yield entry
            continue
        if said is not None and removes(said):
            if published is not None:
                _count(tally.removed, removed_reason(said))
            if alarms(said):
                tally.alarming += 1
            continue
        if published is None and entry is None:
            continue  # no evidence on a URL never published: nothing to keep
        confirmed = now if published is None or published[0] is None else published[0]
        if now - confirmed > keep_for:
            if published is not None:
                _count(tally.removed, UNCONFIRMED)
            continue
        if published is not None:
            entry = entry_of(loc, published[1])
        assert entry is not None
        reason = kept_reason(said)
        _count(tally.kept, reason)
        if entry.news is not None:
            tally.kept_news += 1
        if on_kept is not None:
            on_kept(loc, reason)
        yield dataclasses.replace(entry, confirmed=confirmed)


def refused(previous: int, removed: int, listed: int, alarming: int, share: float | None) -> bool:
    """The guard on shrinking: whether an origin must not be published because this run
    would remove more than ``share`` of the ``previous`` URLs it published (None: no
    guard). An origin published before by no run counts as all removed when this run
    listed none of its pages and some answered (``alarming``): a deploy that put
    ``noindex`` everywhere, or a crawl that listed nothing."""
    if share is None:
        return False
    if previous:
        return removed > share * previous
    return not listed and alarming > 0
