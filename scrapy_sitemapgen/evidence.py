"""What was read off a page -> :class:`UrlFacts`: the judging half of recording a page.

``extract.page_evidence`` reads a response (the walk of Scrapy's cached tree, the headers,
the base URL) into a :class:`PageEvidence` of plain values, as written on the page; this
module judges them: indexability, URLs joined and normalised, the URL and image policies,
hreflang, dates, videos, the limits. The split lets the judging run where the response is
not: in the recorder process (``SITEMAPGEN_RECORDER = "process"``, recorder.py), which
takes this work off the crawl's core. Nothing here imports Scrapy.

Evidence read but not needed (the images of a page a noindex leaves out) is dropped
without a word: a skip is counted only where a reader that needs the value meets it (the
JSON-LD's too), as when the page was read on demand.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple, Protocol

from . import page
from .facts import (
    Alternate,
    FactRejected,
    UrlFacts,
    Video,
    format_w3c,
    lastmod_from_http,
    make_video,
    parse_hreflang,
    parse_lastmod,
)
from .limits import MAX_IMAGES_PER_URL, MAX_LOC_LENGTH
from .urls import UrlRejected, is_normal, normalize_loc

if TYPE_CHECKING:
    from .settings import Config

__all__ = ["PageEvidence", "facts_from_evidence"]

_NOINDEX = frozenset({"noindex", "none"})


class Reporter(Protocol):
    """What the judging reports through: stats.Reporter, or the recorder's queue of events."""

    def skip(self, reason: str, url: str, detail: object = None) -> None: ...

    def exclude(self, reason: str, url: str) -> None: ...


class PageEvidence(NamedTuple):
    """One page as read, before any judging. A reader switched off leaves its field empty.
    Plain values only: it is pickled to the recorder process."""

    #: The page's <loc>: the response URL through the crawl's URL policy.
    loc: str
    #: Whether the page is HTML (a PDF opted in has headers and no tree).
    html: bool
    #: What relative URLs resolve against: ``<base href>`` or the page URL.
    base: str
    #: The page's encoding, in which the queries of its URLs are encoded.
    encoding: str
    #: page.robots_directives (meta robots and X-Robots-Tag).
    directives: frozenset[str]
    #: page.canonical_urls.
    canonicals: list[str]
    #: page.refresh_url.
    refresh: str | None
    #: The Last-Modified header, as sent.
    last_modified: bytes | None
    #: page.page_dates.
    dates: list[str]
    #: JSON-LD blocks that are not JSON (page.json_ld's count).
    bad_json_ld: int
    #: page.image_sources.
    images: list[str]
    #: page.videos.
    videos: list[dict[str, str]]
    #: page.alternate_sources.
    alternates: list[tuple[str, str]]


# A path from the root that, put after a normal origin (``_normal_prefix``), is already its
# own join and its own <loc>: the characters of both shortcuts (page.absolute's for rooted
# paths, urls.normalize_loc's for URLs in shape), no "%" (its escapes would need checking)
# and, checked apart, no dot segment. Most links and images on a page look like this.
_NORMAL_ROOTED_RE = re.compile(
    r"/(?!/)[A-Za-z0-9\-._~!$&'()*+,=:@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]+)?"
)


def _normal_url(value: str, prefix: str, base: str) -> str | None:
    """``value`` joined to ``base`` and normalised, when it is already a <loc> or a path
    from the root that both steps leave as it is (``prefix``: ``_normal_prefix(base)`` or
    ``""``): the same string ``normalize_loc(page.absolute(base, value))`` gives, without
    either (nor the page's encoding); None for every other value."""
    if value[:1] == "/":
        if (
            prefix
            and _NORMAL_ROOTED_RE.fullmatch(value) is not None
            and "/." not in value
            and ".." not in value
            and len(prefix) + len(value) <= MAX_LOC_LENGTH
        ):
            return prefix + value
    elif is_normal(value) and page.absolute(base, value) == value:
        return value
    return None


@lru_cache(maxsize=256)
def _hreflang(lang: str) -> str:
    """``parse_hreflang``, once per value: a site names the same few languages on every
    page (a rejected value is not remembered, and raises each time)."""
    return parse_hreflang(lang)


def _normal_prefix(base: str) -> str | None:
    """``scheme://host[:port]`` of ``base`` when it is a normal <loc>'s start, so that a
    path matching ``_NORMAL_ROOTED_RE`` after it needs neither joining nor normalising."""
    prefix = page.join_prefix(base)
    return prefix if prefix is not None and _normal_origin(prefix) else None


@lru_cache(maxsize=64)
def _normal_origin(prefix: str) -> bool:
    """Per origin, not per base: each page is a base of its own."""
    return is_normal(prefix + "/")


class _Judge:
    """The facts of one page's evidence; the readers are the old ``_Page``'s, on values."""

    def __init__(self, evidence: PageEvidence, config: Config, reporter: Reporter) -> None:
        self.evidence = evidence
        self.config = config
        self.reporter = reporter
        self.loc = evidence.loc
        self._prefix: str | None = None
        self._locs: dict[str, str] = {}
        self._ld_counted = False

    @property
    def prefix(self) -> str:
        """``_normal_prefix(base)``, or ``""`` when the base has none."""
        if self._prefix is None:
            self._prefix = _normal_prefix(self.evidence.base) or ""
        return self._prefix

    def _count_bad_json_ld(self) -> None:
        """Counted when a reader uses the JSON-LD, as the page would be read on demand."""
        if not self._ld_counted:
            self._ld_counted = True
            for _ in range(self.evidence.bad_json_ld):
                self.reporter.skip("bad_json_ld", self.loc)

    def same_page(self, url: str) -> bool:
        """Whether ``url`` names this page once both are normalised (unparsable: yes,
        since a broken canonical or refresh sends a crawler nowhere)."""
        try:
            return self.policy_loc(url) == self.loc
        except UrlRejected:
            return True

    def policy_loc(self, url: str) -> str:
        """The crawl's URL policy applied to a URL of this page, once per distinct URL (a
        page names itself as the canonical and the "en" and "x-default" alternates)."""
        loc = self._locs.get(url)
        if loc is None:
            loc = self._locs[url] = self.config.url_policy.loc(url, self.evidence.encoding)
        return loc

    def exclusion(self) -> str | None:
        config, evidence = self.config, self.evidence
        if config.respect_noindex and evidence.directives & _NOINDEX:
            return "noindex"
        if config.respect_canonical:
            canonicals = evidence.canonicals
            # Several different canonicals contradict each other; Google then ignores them.
            if len(set(canonicals)) == 1 and not self.same_page(canonicals[0]):
                return "canonical_elsewhere"
        if config.respect_meta_refresh and evidence.html:
            target = evidence.refresh
            if target is not None and not self.same_page(target):
                return "meta_refresh"
        return None

    def lastmod(self, now: datetime) -> str | None:
        """The first valid lastmod among SITEMAPGEN_LASTMOD_SOURCES, in their order."""
        evidence = self.evidence
        for source in self.config.lastmod_sources:
            if source == "header":
                header = evidence.last_modified
                if header is not None:
                    try:
                        return lastmod_from_http(header, now)
                    except FactRejected as exc:
                        self.reporter.skip(exc.reason, self.loc, detail=header.decode("latin-1"))
            elif source == "page":
                self._count_bad_json_ld()
                for raw in evidence.dates:
                    try:
                        return parse_lastmod(raw, now)
                    except FactRejected as exc:
                        self.reporter.skip(exc.reason, self.loc, detail=raw)
            elif source == "crawl_time":
                return format_w3c(now)
        return None

    def images(self) -> tuple[str, ...]:
        """``page.image_urls``, normalised. Values in shape go straight to their URL; the
        rest are joined and normalised, and a rejected one counted once, as
        ``page.image_urls`` would give it once."""
        found: dict[str, None] = {}
        policy = self.config.image_policy
        filtered = bool(policy.allow or policy.deny)  # without patterns, nothing is refused
        base, prefix, encoding = self.evidence.base, self.prefix, self.evidence.encoding
        tried: set[str] = set()
        for value in self.evidence.images:
            url = _normal_url(value, prefix, base)
            if url is None:
                raw = page.media_url(base, value)
                if raw is None or raw in tried:
                    continue
                tried.add(raw)
                try:
                    url = normalize_loc(raw, encoding)
                except UrlRejected as exc:
                    self.reporter.skip(f"image_{exc.reason}", self.loc, detail=raw)
                    continue
            if not filtered or policy.refusal(url) is None:
                found[url] = None
        if len(found) > MAX_IMAGES_PER_URL:
            self.reporter.skip("images_over_limit", self.loc, detail=len(found))
        return tuple(found)[:MAX_IMAGES_PER_URL]

    def videos(self, now: datetime) -> tuple[Video, ...]:
        self._count_bad_json_ld()
        videos = []
        for raw in self.evidence.videos:
            try:
                videos.append(make_video(raw, self._normalize, self._issue, now))
            except FactRejected as exc:
                self.reporter.skip(exc.reason, self.loc, detail=exc.value)
        return tuple(videos)

    def alternates(self) -> tuple[Alternate, ...]:
        """``page.alternates``, each checked and put through the URL policy (hrefs in
        shape without normalising them again), a rejected pair counted once."""
        found: dict[tuple[str, str], Alternate] = {}  # by a plain tuple: its hash is C's
        seen: set[tuple[str, str]] = set()
        loc_from_normalized = self.config.url_policy.loc_from_normalized
        base, prefix = self.evidence.base, self.prefix
        for hreflang, value in self.evidence.alternates:
            lang = hreflang.strip()
            loc = _normal_url(value, prefix, base)
            href = loc or page.absolute(base, value)
            if href is None or (lang, href) in seen:
                continue
            seen.add((lang, href))
            try:
                tag = _hreflang(lang)
                loc = self.policy_loc(href) if loc is None else loc_from_normalized(loc)
            except FactRejected as exc:
                self.reporter.skip(exc.reason, self.loc, detail=lang)
                continue
            except UrlRejected as exc:
                self.reporter.skip(f"alternate_{exc.reason}", self.loc, detail=href)
                continue
            if (tag, loc) not in found:
                found[tag, loc] = Alternate(tag, loc)
        return tuple(found.values())

    def _normalize(self, url: str) -> str:
        return normalize_loc(url, self.evidence.encoding)

    def _issue(self, reason: str, value: object) -> None:
        self.reporter.skip(reason, self.loc, detail=value)


def facts_from_evidence(
    evidence: PageEvidence, config: Config, reporter: Reporter, now: datetime | None = None
) -> UrlFacts | None:
    """The facts of a page read by ``extract.page_evidence``, or ``None`` when a listing
    rule leaves it out (the reason counted and logged). ``lastmod`` comes only from the
    sources the settings name (P4): when none gives a valid date the tag is omitted, never
    filled with the crawl time unless ``crawl_time`` is named."""
    judge = _Judge(evidence, config, reporter)
    exclusion = judge.exclusion()
    if exclusion is not None:
        reporter.exclude(exclusion, evidence.loc)
        return None
    now = now or datetime.now(timezone.utc)
    html = evidence.html
    return UrlFacts(
        evidence.loc,
        judge.lastmod(now),
        images=judge.images() if config.images and html else (),
        videos=judge.videos(now) if config.videos and html else (),
        alternates=judge.alternates() if config.alternates else (),
    )
