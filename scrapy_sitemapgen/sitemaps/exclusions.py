"""Pages left out, per origin: the counts by reason the close report explains, and what
governs each reason.

The reasons are those of the listing rules (docs/listing.rst); the counts are kept for the
first few origins only, and summed for the rest, so a broad crawl's 100,000 origins cost
no more memory than its first ``limit``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .urls import origin_of

__all__ = ["GOVERNED_BY", "OriginExclusions", "governed_by"]

#: Each exclusion reason and the settings that decide it, or what to do when no setting
#: does. ``status/<code>`` stands for every status.
GOVERNED_BY: dict[str, str] = {
    "dont_sitemap": "no setting (the spider's requests set meta={'dont_sitemap': True})",
    "status/<code>": "no setting (fix the links, or the pages they point to)",
    "content_type": "SITEMAPGEN_CONTENT_TYPES",
    "robots_txt/<agent>": "the origin's robots.txt (SITEMAPGEN_RESPECT_ROBOTS_TXT, "
    "SITEMAPGEN_ROBOTS_USER_AGENTS)",
    "denied": "SITEMAPGEN_DENY",
    "not_allowed": "SITEMAPGEN_ALLOW",
    "noindex": "SITEMAPGEN_RESPECT_NOINDEX, SITEMAPGEN_ROBOTS_USER_AGENTS",
    "canonical_elsewhere": "SITEMAPGEN_RESPECT_CANONICAL, SITEMAPGEN_HOST_ALIASES, "
    "SITEMAPGEN_ORIGIN_MAP",
    "meta_refresh": "SITEMAPGEN_RESPECT_META_REFRESH",
    "duplicate_content": "SITEMAPGEN_DEDUPE_CONTENT",
    "news_too_old": "SITEMAPGEN_NEWS_MAX_AGE",
}

#: Reasons that leave a page listed (only its news entry goes): not counted per origin.
_STILL_LISTED = frozenset({"news_too_old"})
#: The hosts named by an origin's canonicals kept for its line.
_HOSTS_KEPT = 3
#: The key of pages whose URL names no origin (never a root, which ends in "/").
_NO_ORIGIN = "(no origin)"


def governed_by(reason: str) -> str:
    """What :data:`GOVERNED_BY` says of ``reason`` (``status/404`` as ``status/<code>``)."""
    if reason.startswith("status/"):
        reason = "status/<code>"
    elif reason.startswith("robots_txt/"):
        reason = "robots_txt/<agent>"
    return GOVERNED_BY.get(reason, "no setting")


class OriginExclusions:
    """Reason -> count for each of the first ``limit`` origins that had a page left out
    (by root), and for the pages of all the others together; for ``canonical_elsewhere``,
    the first few hosts the canonicals name."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.counts: dict[str, dict[str, int]] = {}
        self.hosts: dict[str, list[str]] = {}
        self.rest: dict[str, int] = {}

    def add(self, reason: str, url: str, detail: str | None = None, count: int = 1) -> None:
        """``count`` pages of ``url``'s origin left out for ``reason``; ``detail``: where a
        ``canonical_elsewhere`` page points."""
        if reason in _STILL_LISTED:
            return
        root = _root(url)
        counts = self.counts.get(root)
        if counts is None:
            if len(self.counts) >= self.limit:
                self.rest[reason] = self.rest.get(reason, 0) + count
                return
            counts = self.counts[root] = {}
        counts[reason] = counts.get(reason, 0) + count
        if reason == "canonical_elsewhere" and detail:
            self.add_host(root, urlsplit(detail).hostname or "")

    def add_host(self, root: str, host: str) -> None:
        hosts = self.hosts.setdefault(root, [])
        if host and host not in hosts and len(hosts) < _HOSTS_KEPT:
            hosts.append(host)

    def update(self, other: OriginExclusions) -> None:
        """Add ``other``'s counts (a build worker's) to these."""
        for root, counts in other.counts.items():
            mine = self.counts.get(root)
            if mine is None and len(self.counts) < self.limit:
                mine = self.counts[root] = {}
            for reason, count in counts.items():
                target = self.rest if mine is None else mine
                target[reason] = target.get(reason, 0) + count
            if mine is not None:
                for host in other.hosts.get(root, ()):
                    self.add_host(root, host)
        for reason, count in other.rest.items():
            self.rest[reason] = self.rest.get(reason, 0) + count


def _root(url: str) -> str:
    try:
        return origin_of(url).root
    except (ValueError, KeyError):  # no http(s) URL: a port out of range, another scheme
        return _NO_ORIGIN
