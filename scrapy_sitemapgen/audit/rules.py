"""The audit's rules: which finding a URL the live sitemaps list gets from the crawl's
verdict of it, when a listed ``<lastmod>`` disagrees with the crawl's, and the pages the
crawl lists that the live sitemaps miss. The vocabulary (verdicts, findings) is
:mod:`..sitemaps.verdicts`'; one origin's findings put together are :mod:`.findings`'.
Pure.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import TYPE_CHECKING

from ..sitemaps.verdicts import (
    BLOCKED_BY_ROBOTS,
    DUPLICATE_CONTENT,
    FETCH_FAILED,
    FINDINGS,
    LISTED,
    REDIRECTED,
    SOURCE_CRAWL,
    SOURCE_SITEMAP,
    Finding,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from ..sitemaps.verdicts import Listed, Verdict

__all__ = ["audit_findings", "counts", "lastmod_mismatch"]

#: The verdicts of pages an engine's robots.txt group disallows: ``excluded/robots_txt/<agent>``
#: (SITEMAPGEN_RESPECT_ROBOTS_TXT); their finding is ``listed_disallowed``.
DISALLOWED_PREFIX = "excluded/robots_txt/"

#: Verdicts (exclusion reasons of the listing rules) -> the finding of a listed URL.
_EXCLUSION_FINDINGS = {
    "excluded/noindex": "listed_noindex",
    "excluded/canonical_elsewhere": "listed_canonicalised",
    "excluded/meta_refresh": "listed_redirected",
    "excluded/content_type": "listed_not_html",
    REDIRECTED: "listed_redirected",
    BLOCKED_BY_ROBOTS: "listed_blocked_by_robots",
    FETCH_FAILED: "listed_not_found",
    DUPLICATE_CONTENT: "listed_duplicate",
}


def _moment(value: str) -> datetime | date | None:
    """A W3C Datetime (P4) as a date (date only) or an aware datetime; None if it is none."""
    text = value.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def lastmod_mismatch(listed: str, crawled: str) -> bool:
    """Whether a listed ``<lastmod>`` disagrees with the crawl's (the verdict's: what the
    crawl's sitemap publishes for the page): compared as days when either is a date only,
    else to the second (P4 allows both precisions). A listed value that is no W3C
    Datetime at all disagrees."""
    a, b = _moment(listed), _moment(crawled)
    if b is None:
        return False
    if a is None:
        return True
    if not isinstance(a, datetime) or not isinstance(b, datetime):
        day_a = a.astimezone(timezone.utc).date() if isinstance(a, datetime) else a
        day_b = b.astimezone(timezone.utc).date() if isinstance(b, datetime) else b
        return day_a != day_b
    return a.replace(microsecond=0) != b.replace(microsecond=0)


def _listed_finding(verdict: Verdict) -> str | None:
    """The finding of a listed URL whose key got ``verdict`` (None: nothing wrong)."""
    if verdict.verdict == LISTED:
        return "listed_unreachable" if verdict.source == SOURCE_SITEMAP else None
    found = _EXCLUSION_FINDINGS.get(verdict.verdict)
    if found is not None:
        return found
    if verdict.verdict.startswith(DISALLOWED_PREFIX):
        return "listed_disallowed"
    if verdict.verdict.startswith("excluded/status/"):
        status = verdict.status or 0
        return "listed_redirected" if 300 <= status < 400 else "listed_not_found"
    return None


def _listed_detail(finding: str, verdict: Verdict) -> str:
    if finding == "listed_disallowed":  # the agent whose group disallows it, and the rule
        agent = verdict.verdict.removeprefix(DISALLOWED_PREFIX)
        return f"{agent}: {verdict.detail}" if verdict.detail else agent
    if finding == "listed_duplicate":
        return verdict.detail or ""
    if finding in ("listed_redirected", "listed_canonicalised", "listed_not_found"):
        if verdict.detail:
            return verdict.detail
        return f"HTTP {verdict.status}" if verdict.status else ""
    return ""


def audit_findings(
    listed: Iterable[Listed],
    verdict_of: Callable[[str], Verdict | None],
    crawled: Iterable[Verdict],
    invalid: Iterable[tuple[str, str]] = (),
    *,
    missing: bool = True,
) -> Iterator[Finding]:
    """The findings of one origin, in no particular order.

    ``listed``: what its live sitemaps list; ``verdict_of``: the verdict of a key, or
    None; ``crawled``: every listed verdict of the crawl (for ``missing_from_sitemap``);
    ``invalid``: (sitemap, the validator's finding) for each broken rule. A URL listed
    twice under one key is a ``listed_duplicate`` of the first listing of it (the one
    written as the key when there is one); the other findings are given once per key.
    ``missing``: False when the live sitemaps could not be read, so that what they list is
    unknown and no ``missing_from_sitemap`` is given.
    """
    for sitemap, message in invalid:
        yield Finding(sitemap, "invalid_sitemap", message)
    by_key: dict[str, list[Listed]] = {}
    for entry in listed:
        by_key.setdefault(entry.key, []).append(entry)
    for key, entries in by_key.items():
        kept = next((e for e in entries if e.url == key), entries[0])
        for entry in entries:
            if entry is not kept:  # the same URL twice too (the validator also says P2)
                yield Finding(entry.url, "listed_duplicate", kept.url)
        verdict = verdict_of(key)
        if verdict is None:
            continue
        finding = _listed_finding(verdict)
        if finding is not None:
            yield Finding(kept.url, finding, _listed_detail(finding, verdict))
        if (
            verdict.verdict == LISTED
            and kept.lastmod
            and verdict.lastmod
            and lastmod_mismatch(kept.lastmod, verdict.lastmod)
        ):
            yield Finding(
                kept.url, "lastmod_mismatch", f"listed {kept.lastmod}, crawled {verdict.lastmod}"
            )
    for verdict in crawled:  # read through either way: the caller counts what it reads
        if (
            missing
            and verdict.verdict == LISTED
            and verdict.source == SOURCE_CRAWL
            and verdict.url not in by_key
        ):
            yield Finding(verdict.url, "missing_from_sitemap")


def counts(findings: Iterable[Finding]) -> Mapping[str, int]:
    """How many findings of each kind, every kind present (0 when none), in report order."""
    tally = dict.fromkeys(FINDINGS, 0)
    for finding in findings:
        tally[finding.finding] += 1
    return tally
