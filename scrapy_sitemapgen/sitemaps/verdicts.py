"""Verdicts and audit findings: why each URL is in or out of the sitemap, and what a
published sitemap gets wrong against what the crawl saw.

Pure: the crawl records :class:`Verdict` values, the audit reads :class:`Listed` entries
from the live sitemaps, and :func:`..audit.rules.audit_findings` compares the two. The names here are
part of the interface (the columns of ``urls.csv`` and ``audit.csv``, the keys of
``audit.json``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FINDINGS",
    "LISTED",
    "Finding",
    "Listed",
    "Verdict",
]

#: The verdict of a page that goes into the sitemap.
LISTED = "listed"
#: A URL that answered with a redirect; ``detail`` is where it led.
REDIRECTED = "redirected"
#: A URL that robots.txt forbids (the downloader refused to fetch it).
BLOCKED_BY_ROBOTS = "blocked_by_robots"
#: A URL that got no answer at all (connection refused, timeout); ``detail`` says why.
FETCH_FAILED = "fetch_failed"
#: A page left out at publish time because another URL of its origin has the same
#: content (SITEMAPGEN_DEDUPE_CONTENT); ``detail`` is the URL listed for it.
DUPLICATE_CONTENT = "excluded/duplicate_content"
#: Where a verdict came from: the crawl's own requests, or the audit's fetch of a URL
#: that only a live sitemap names.
SOURCE_CRAWL = "crawl"
SOURCE_SITEMAP = "sitemap"
#: Longest ``detail`` kept: a canonical or redirect target is a URL (P3: < 2,048).
MAX_DETAIL = 2048

#: Every finding of ``audit.csv``, in report order.
FINDINGS = (
    "listed_not_found",
    "listed_redirected",
    "listed_noindex",
    "listed_canonicalised",
    "listed_blocked_by_robots",
    "listed_disallowed",
    "listed_not_html",
    "listed_duplicate",
    "listed_unreachable",
    "missing_from_sitemap",
    "lastmod_mismatch",
    "hreflang_no_return",
    "hreflang_target_not_listed",
    "hreflang_missing_self",
    "invalid_sitemap",
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the crawl decided about one URL (``url``: its ``<loc>`` key).

    ``verdict`` is :data:`LISTED`, ``excluded/<reason>`` or ``skipped/<reason>`` (the
    reasons of the ``sitemapgen/excluded/...`` and ``sitemapgen/skipped/...`` stats),
    :data:`REDIRECTED`, :data:`BLOCKED_BY_ROBOTS` or :data:`FETCH_FAILED`. ``status`` is
    the HTTP status when there was an answer; ``detail`` the redirect target, the
    canonical or refresh target, or why a fetch failed; ``lastmod`` and ``images`` what a
    listed page publishes (``lastmod`` as the crawl read it, until the publish settles
    another one against the state's content notes, a kept or an observed lastmod, and
    writes that one: ``VerdictLog.published_lastmod``); ``source`` :data:`SOURCE_CRAWL`
    or :data:`SOURCE_SITEMAP`.
    """

    url: str
    verdict: str
    status: int | None = None
    detail: str | None = None
    lastmod: str | None = None
    source: str = SOURCE_CRAWL
    images: int = 0


@dataclass(frozen=True, slots=True)
class Listed:
    """One URL a live sitemap lists: as written (``url``), its key (the crawl's ``<loc>``
    of it), its ``<lastmod>`` as written, and the sitemap that lists it."""

    url: str
    key: str
    lastmod: str | None
    sitemap: str


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One row of ``audit.csv``."""

    url: str
    finding: str
    detail: str = ""
