"""Response -> :class:`UrlFacts`: which responses are pages to list, and the richest true
facts about each.

The listing rules are applied here in our own code, not left to middleware order: a 404 can
reach spider middlewares with an errback's output, and a 3xx when redirects are turned off.
The HTML is read through Scrapy's cached ``response.selector`` (one parse per page, shared
with the spider), and a switched-off feature costs nothing.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from parsel import Selector
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

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
from .limits import MAX_IMAGES_PER_URL
from .urls import UrlRejected, normalize_loc

if TYPE_CHECKING:
    from scrapy.http import Response

    from .settings import Config
    from .stats import Reporter

__all__ = ["media_type", "page_facts"]

_NOINDEX = frozenset({"noindex", "none"})
# What non-HTML responses (a PDF opted in through SITEMAPGEN_CONTENT_TYPES) "contain".
_NO_HTML = Selector(text="<html></html>")


def media_type(response: Response) -> str:
    """The lower-case media type of the response, without parameters (``text/html``)."""
    raw = response.headers.get(b"Content-Type") or b""
    return raw.split(b";", 1)[0].strip().decode("latin-1").lower()


def _header_values(response: Response, name: bytes) -> list[str]:
    return [value.decode("latin-1") for value in response.headers.getlist(name)]


class _Page:
    """One response being read: the parsed parts are computed once, on first use."""

    def __init__(self, response: Response, config: Config, reporter: Reporter, loc: str) -> None:
        self.response = response
        self.config = config
        self.reporter = reporter
        self.loc = loc
        self.html = isinstance(response, HtmlResponse)
        self.links = _header_values(response, b"Link")
        #: Queries of URLs in the page are encoded in the page's encoding, as browsers
        #: (and Scrapy's own requests) do; paths always in UTF-8.
        self.encoding: str = getattr(response, "encoding", None) or "utf-8"
        self._ld: list[Any] | None = None
        # Computed on first use (plain attributes: functools.cached_property takes a lock).
        self._nodes: page.PageNodes | None = None
        self._base: str | None = None
        self._locs: dict[str, str] = {}

    @property
    def nodes(self) -> page.PageNodes:
        """The elements every reader looks at, gathered in one walk of the tree of Scrapy's
        cached selector (built on first use here or in the spider, never twice)."""
        if self._nodes is None:
            response = self.response
            selector = response.selector if isinstance(response, HtmlResponse) else _NO_HTML
            self._nodes = page.PageNodes(selector)
        return self._nodes

    @property
    def base(self) -> str:
        """What relative URLs resolve against: ``<base href>`` or the page URL."""
        if self._base is None:
            response = self.response
            if isinstance(response, HtmlResponse):
                self._base = get_base_url(response)
            else:
                self._base = response.url
        return self._base

    @property
    def ld(self) -> list[Any]:
        if self._ld is None:
            self._ld, invalid = page.json_ld(self.nodes)
            for _ in range(invalid):
                self.reporter.skip("bad_json_ld", self.loc)
        return self._ld

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
            loc = self._locs[url] = self.config.url_policy.loc(url, self.encoding)
        return loc

    def exclusion(self) -> str | None:
        config = self.config
        if config.respect_noindex:
            x_robots = _header_values(self.response, b"X-Robots-Tag")
            directives = page.robots_directives(self.nodes, x_robots, config.robots_user_agents)
            if directives & _NOINDEX:
                return "noindex"
        if config.respect_canonical:
            canonicals = page.canonical_urls(self.nodes, self.links, self.base)
            # Several different canonicals contradict each other; Google then ignores them.
            if len(set(canonicals)) == 1 and not self.same_page(canonicals[0]):
                return "canonical_elsewhere"
        if config.respect_meta_refresh and self.html:
            target = page.refresh_url(self.nodes, self.base)
            if target is not None and not self.same_page(target):
                return "meta_refresh"
        return None

    def lastmod(self, now: datetime) -> str | None:
        """The first valid lastmod among SITEMAPGEN_LASTMOD_SOURCES, in their order."""
        for source in self.config.lastmod_sources:
            if source == "header":
                header = self.response.headers.get(b"Last-Modified")
                if header is not None:
                    try:
                        return lastmod_from_http(header, now)
                    except FactRejected as exc:
                        self.reporter.skip(exc.reason, self.loc, detail=header.decode("latin-1"))
            elif source == "page":
                for raw in page.page_dates(self.nodes, self.ld):
                    try:
                        return parse_lastmod(raw, now)
                    except FactRejected as exc:
                        self.reporter.skip(exc.reason, self.loc, detail=raw)
            elif source == "crawl_time":
                return format_w3c(now)
        return None

    def images(self) -> tuple[str, ...]:
        found: dict[str, None] = {}
        policy = self.config.image_policy
        filtered = bool(policy.allow or policy.deny)  # without patterns, nothing is refused
        encoding = self.encoding
        for raw in page.image_urls(self.nodes, self.base):
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
        videos = []
        for raw in page.videos(self.nodes, self.ld, self.base):
            try:
                videos.append(make_video(raw, self._normalize, self._issue, now))
            except FactRejected as exc:
                self.reporter.skip(exc.reason, self.loc, detail=exc.value)
        return tuple(videos)

    def alternates(self) -> tuple[Alternate, ...]:
        found: dict[Alternate, None] = {}
        for hreflang, href in page.alternates(self.nodes, self.links, self.base):
            try:
                found[Alternate(parse_hreflang(hreflang), self.policy_loc(href))] = None
            except FactRejected as exc:
                self.reporter.skip(exc.reason, self.loc, detail=hreflang)
            except UrlRejected as exc:
                self.reporter.skip(f"alternate_{exc.reason}", self.loc, detail=href)
        return tuple(found)

    def _normalize(self, url: str) -> str:
        return normalize_loc(url, self.encoding)

    def _issue(self, reason: str, value: object) -> None:
        self.reporter.skip(reason, self.loc, detail=value)


def page_facts(
    response: Response, config: Config, reporter: Reporter, now: datetime | None = None
) -> UrlFacts | None:
    """The facts of a page to list, or ``None`` (the reason counted and logged).

    ``loc`` is the final URL after redirects (Scrapy resolves them before spider
    middlewares), normalised by the crawl's URL policy. ``lastmod`` comes only from the
    sources the settings name (P4): when none gives a valid date the tag is omitted, never
    filled with the crawl time unless ``crawl_time`` is named.
    """
    request = response.request
    if request is not None and request.meta.get("dont_sitemap"):
        reporter.exclude("dont_sitemap", response.url)
        return None
    if response.status != 200:
        reporter.exclude(f"status/{response.status}", response.url)
        return None
    if media_type(response) not in config.content_types:
        reporter.exclude("content_type", response.url)
        return None
    try:
        loc = config.url_policy.loc(response.url)
    except UrlRejected as exc:
        reporter.skip(exc.reason, response.url)
        return None
    refusal = config.url_policy.refusal(loc)
    if refusal is not None:
        reporter.exclude(refusal, loc)
        return None
    facts = _Page(response, config, reporter, loc)
    exclusion = facts.exclusion()
    if exclusion is not None:
        reporter.exclude(exclusion, loc)
        return None
    now = now or datetime.now(timezone.utc)
    html = facts.html
    return UrlFacts(
        loc,
        facts.lastmod(now),
        images=facts.images() if config.images and html else (),
        videos=facts.videos(now) if config.videos and html else (),
        alternates=facts.alternates() if config.alternates else (),
    )
