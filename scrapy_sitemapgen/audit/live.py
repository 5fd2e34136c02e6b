"""What the live sitemaps of one origin list, as the validator reads them: the entries a
reader would take (none from a file it refuses whole), and each violation as an
``invalid_sitemap`` finding. Shared by the crawl's audit and ``sitemapgen-audit``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.urls import UrlRejected
from ..sitemaps.verdicts import Listed

if TYPE_CHECKING:
    from ..sitemaps.urls import Origin, UrlPolicy
    from ..store.verdict_log import VerdictLog
    from ..validate import Violation

__all__ = ["MAX_INVALID", "REFUSED_WHOLE", "LiveRead", "key_of"]

#: The rules whose violation makes a reader refuse the whole file: no well-formed UTF-8
#: XML (P1), more bytes than the limit (G2).
REFUSED_WHOLE = frozenset({"P1", "G2"})
#: ``invalid_sitemap`` findings kept per origin; the rest are counted.
MAX_INVALID = 10_000


def key_of(url: str, policy: UrlPolicy) -> str:
    """The ``<loc>`` a URL stands for in the store (the URL itself when it has none)."""
    try:
        return policy.loc(url)
    except UrlRejected:
        return url


class LiveRead:
    """The live sitemaps read for one origin (``origin`` None: the files a command was
    given, whatever origins they list)."""

    def __init__(self, origin: Origin | None, policy: UrlPolicy) -> None:
        self.origin = origin
        self.policy = policy
        #: The files read, in reading order.
        self.sitemaps: list[str] = []
        #: (file, the validator's finding), at most :data:`MAX_INVALID`.
        self.invalid: list[tuple[str, str]] = []
        self.invalid_dropped = 0
        self.listed = 0
        self._entries: list[Listed] = []
        self._refused: set[str] = set()
        #: "file: why" for each file that could not be fetched or was refused whole.
        self.unread: list[str] = []

    def entry(self, loc: str, lastmod: str | None, sitemap: str) -> None:
        """The validator's ``on_entry``: a URL a file lists within its scope."""
        self._entries.append(Listed(loc, key_of(loc, self.policy), lastmod, sitemap))

    def violation(self, violation: Violation) -> None:
        if violation.rule in REFUSED_WHOLE:
            self._refused.add(violation.source)
            self.not_read(violation.source, f"{violation.rule}: {violation.message}")
        where = f"line {violation.line}: " if violation.line else ""
        self.add_invalid(violation.source, f"{where}{violation.rule}: {violation.message}")

    def not_read(self, sitemap: str, why: str) -> None:
        """``sitemap`` (or the robots.txt) could not be fetched or read."""
        if len(self.unread) < MAX_INVALID:
            self.unread.append(f"{sitemap}: {why}")

    @property
    def unreadable(self) -> bool:
        """Whether the live sitemaps could not be read: a file could not be fetched or was
        refused whole, and no sitemap was read whole. What they list is then unknown, not
        empty, so no page can be said to be missing from them."""
        return bool(self.unread) and all(s in self._refused for s in self.sitemaps)

    def add_invalid(self, sitemap: str, finding: str) -> None:
        if len(self.invalid) < MAX_INVALID:
            self.invalid.append((sitemap, finding))
        else:
            self.invalid_dropped += 1

    def keep(self, log: VerdictLog) -> int:
        """Store the entries read since the last call, but those of refused files; how
        many were stored."""
        kept = 0
        for listed in self._entries:
            if listed.sitemap not in self._refused:
                log.add_listed(listed)
                kept += 1
        self._entries.clear()
        self.listed += kept
        return kept
