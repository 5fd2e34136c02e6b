"""What the live sitemaps of one origin list, as the validator reads them: the entries a
reader would take (none from a file it refuses whole), and each violation as an
``invalid_sitemap`` finding. Shared by the crawl's audit and ``sitemapgen-audit``. Also
where the crawl's audit may send its requests (:class:`FetchScope`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.urls import UrlRejected, normalize_loc, origin_key, origin_of
from ..sitemaps.verdicts import Listed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..sitemaps.urls import Origin, UrlPolicy
    from ..store.verdict_log import VerdictLog
    from ..validate import Violation

__all__ = ["MAX_INVALID", "REFUSED_WHOLE", "FetchScope", "LiveRead", "key_of", "named_refusal"]

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


class FetchScope:
    """Where the audit of one origin may send a request: that origin only, and the crawl
    prefixes SITEMAPGEN_ORIGIN_MAP maps to it (where the crawl itself fetched its pages).

    The protocol keeps what a sitemap names on the site that published it (an index's
    sitemaps, P9; a sitemap's URLs, P12; a cross-submitted file, P13, is trusted only
    through the robots.txt of the site it lists). The audit reads sites it need not
    trust, in CI too, so it requests nothing else: a file or URL named off the origin, and
    a redirect off it, are reported and never fetched, so that a sitemap cannot send the
    audit to another host (an internal address). The one rule for every request the audit
    makes; the origins themselves are the user's choice: the crawl's, and those of
    ``chosen``, the URLs of SITEMAPGEN_AUDIT_SITEMAPS filed under ``origin`` (naming a
    file is consent to read it where it is)."""

    __slots__ = ("origin", "roots")

    def __init__(self, origin: Origin, policy: UrlPolicy, chosen: Iterable[str] = ()) -> None:
        self.origin = origin
        roots = {origin.root}
        for crawl, production in policy.origin_map:
            if origin_key(production) == origin.root:
                roots.add(origin_key(crawl))
        for url in chosen:
            try:
                roots.add(origin_key(normalize_loc(url)))
            except UrlRejected:  # not fetchable anyway: the downloader says why
                pass
        #: The origins (roots, ``scheme://host[:port]/``) requests may go to.
        self.roots = frozenset(roots)

    def refusal(self, url: str) -> str | None:
        """None when the audit may request ``url``; else why not, for a finding."""
        try:
            root: str | None = origin_key(normalize_loc(url))
        except (UrlRejected, ValueError):
            root = None
        if root in self.roots:
            return None
        where = f"on {root}" if root is not None else "no http(s) URL"
        return (
            f"{where}, outside {self.origin.root} (the origin audited; the audit requests "
            "nothing outside it: P9, P12, P13)"
        )


def named_refusal(named_by: str, url: str, policy: UrlPolicy) -> str | None:
    """:meth:`FetchScope.refusal` of ``url``, a file ``named_by`` (a file's URL) names or
    redirects to, in the scope of ``named_by``'s origin: the rule of a reader that starts
    from files the user gave, whatever their origins (``sitemapgen-audit``)."""
    try:
        origin = origin_of(normalize_loc(named_by))
    except UrlRejected:
        return None  # a local file: the files it names are read beside it, not fetched
    return FetchScope(origin, policy).refusal(url)


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
