"""Response -> :class:`UrlFacts`: which responses are pages to list, and the richest true
facts about each.

The listing rules are applied here in our own code, not left to middleware order: a 404 can
reach spider middlewares with an errback's output, and a 3xx when redirects are turned off.
The HTML is read through Scrapy's cached ``response.selector`` (one parse per page, shared
with the spider), and a switched-off feature costs nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from parsel import Selector
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from .. import clock
from ..features.hreflang_rules import html_language
from ..pages.canonical import canonical_urls
from ..pages.dates import page_dates
from ..pages.elements import PageNodes
from ..pages.fingerprint import (
    change_fingerprint,
    main_text,
    microdata_values,
    structured_data,
)
from ..pages.hreflang import alternate_sources, header_alternate_sources
from ..pages.hrefs import absolute, media_url
from ..pages.images import image_sources
from ..pages.jsonld import json_ld_blocks
from ..pages.refresh import refresh_url
from ..pages.robots import robots_directives
from ..pages.videos import videos
from ..sitemaps.facts import (
    Alternate,
    Content,
    FactRejected,
    UrlFacts,
    Video,
    clean_title,
    format_w3c,
    lastmod_from_http,
    make_video,
    parse_hreflang,
    parse_lastmod,
)
from ..sitemaps.lastmod import first_stated
from ..sitemaps.limits import MAX_IMAGES_PER_URL
from ..sitemaps.robots_txt import page_agents
from ..sitemaps.urls import (
    UrlRejected,
    joined_loc,
    loc_prefix,
    normal_directory,
    normalize_loc,
)
from ..stats import CANONICAL_NOT_HTTP, SKIPPED_IMAGE_SMALLER, robots_txt_reason

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

    from scrapy.http import Response

    from ..settings import Config
    from ..sitemaps.robots_txt import RobotsTxt
    from ..stats import Reporter

__all__ = ["media_type", "page_facts"]

_NOINDEX = frozenset({"noindex", "none"})
# What non-HTML responses (a PDF opted in through SITEMAPGEN_CONTENT_TYPES) "contain".
_NO_HTML = Selector(text="<html></html>")
_HTTP_SCHEMES = frozenset({"http", "https"})
#: ``_Page._canonical`` before the page's canonicals are read (None: it has none).
_UNREAD = "\0unread"


def media_type(response: Response) -> str:
    """The lower-case media type of the response, without parameters (``text/html``)."""
    raw = _header(response, b"Content-Type") or b""
    return raw.split(b";", 1)[0].strip().decode("latin-1").lower()


def _header(response: Response, name: bytes) -> bytes | None:
    """``response.headers.get(name)``, the last value, without the exception Scrapy's
    ``get`` raises and catches for a header that is missing (most Last-Modified)."""
    headers = response.headers
    if name not in headers:
        return None
    values = headers.getlist(name)
    return values[-1] if values else None


def _header_values(response: Response, name: bytes) -> list[str]:
    headers = response.headers
    if name not in headers:  # the usual case: getlist() would raise and catch a KeyError
        return []
    return [value.decode("latin-1") for value in headers.getlist(name)]


def _is_http(url: str) -> bool:
    return url.partition(":")[0].lower() in _HTTP_SCHEMES


@lru_cache(maxsize=256)
def _hreflang(lang: str) -> str:
    """``parse_hreflang``, once per value: a site names the same few languages on every
    page (a rejected value is not remembered, and raises each time)."""
    return parse_hreflang(lang)


class _Page:
    """One response being read: the parsed parts are computed once, on first use."""

    def __init__(self, response: Response, config: Config, reporter: Reporter, loc: str) -> None:
        self.response = response
        self.config = config
        self.reporter = reporter
        self.loc = loc
        self.html = isinstance(response, HtmlResponse)
        self.links = _header_values(response, b"Link")
        self._ld: list[Any] | None = None
        self._ld_unparsed: list[str] = []
        # Computed on first use (plain attributes: functools.cached_property takes a lock).
        self._nodes: PageNodes | None = None
        self._selector: Selector | None = None
        # Whether the page's one canonical names the page itself (set by exclusion()).
        self._self_canonical: bool | None = None
        self._base: str | None = None
        self._prefix: str | None = None
        self._directory: str | None = None
        self._encoding: str | None = None
        self._locs: dict[str, str] = {}
        #: Where an excluded page points instead (its canonical, its refresh target).
        self.elsewhere: str | None = None
        self._canonical: str | None = _UNREAD

    @property
    def encoding(self) -> str:
        """The page's encoding: queries of URLs in the page are encoded in it, as browsers
        (and Scrapy's own requests) do; paths always in UTF-8. Scrapy works it out again
        on each read, and URLs in shape never need it."""
        if self._encoding is None:
            self._encoding = getattr(self.response, "encoding", None) or "utf-8"
        return self._encoding

    @property
    def selector(self) -> Selector:
        """Scrapy's cached selector of the page (built on first use here or in the spider,
        never twice)."""
        if self._selector is None:
            response = self.response
            if not isinstance(response, HtmlResponse):
                self._selector = _NO_HTML
            else:
                try:
                    self._selector = response.selector
                except ValueError:
                    # Scrapy builds its selector with get_base_url(), which raises on a
                    # <base href> the URL parser rejects ("http://[::1/x"). The spider
                    # meets the same error; the page is read here without Scrapy's cache.
                    self.base  # noqa: B018  # counts the broken <base href>
                    self._selector = Selector(text=response.text, type="html")
        return self._selector

    @property
    def nodes(self) -> PageNodes:
        """The elements every reader looks at, gathered in one walk of the tree of the
        selector."""
        if self._nodes is None:
            self._nodes = PageNodes(self.selector)
        return self._nodes

    @property
    def base(self) -> str:
        """What relative URLs resolve against: ``<base href>`` or the page URL. A
        ``<base href>`` the URL parser rejects is counted and passed over for the page
        URL, as a browser falls back to the document's URL (HTML, "frozen base URL")."""
        if self._base is None:
            response = self.response
            self._base = response.url
            if isinstance(response, HtmlResponse):
                try:
                    self._base = get_base_url(response)
                except ValueError:
                    self.reporter.skip("bad_base_url", self.loc)
        return self._base

    @property
    def prefix(self) -> str:
        """``loc_prefix(base)``: what rooted paths in shape are put after."""
        if self._prefix is None:
            self._prefix = loc_prefix(self.base)
        return self._prefix

    @property
    def directory(self) -> str:
        """``normal_directory(base)``: what relative paths in shape are joined to."""
        if self._directory is None:
            self._directory = normal_directory(self.base)
        return self._directory

    @property
    def ld(self) -> list[Any]:
        if self._ld is None:
            self._ld, self._ld_unparsed = json_ld_blocks(self.nodes)
            for _ in self._ld_unparsed:
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
            directives = robots_directives(self.nodes, x_robots, config.robots_user_agents)
            if directives & _NOINDEX:
                return "noindex"
        if config.respect_canonical:
            canonical = self.canonical()
            self._self_canonical = None if canonical is None else self.same_page(canonical)
            if canonical is not None and self._self_canonical is False:
                self.elsewhere = self.policy_loc(canonical)
                return "canonical_elsewhere"
        if config.respect_meta_refresh and self.html:
            target = refresh_url(self.nodes, self.base)
            if target is not None and not self.same_page(target):
                self.elsewhere = self.policy_loc(target)
                return "meta_refresh"
        return None

    def canonical(self) -> str | None:
        """The page's canonical URL; None when it names none, or several different ones
        (which contradict each other: Google then ignores them). A canonical that is no
        http(s) URL (``file:``, ``javascript:``) names no page a crawler can fetch: it is
        counted and passed over, as if the page did not declare it."""
        if self._canonical is _UNREAD:
            canonicals = canonical_urls(self.nodes, self.links, self.base, self.response.url)
            fetchable = [url for url in canonicals if _is_http(url)]
            if len(fetchable) < len(canonicals):
                dropped = next(url for url in canonicals if not _is_http(url))
                self.reporter.skip(CANONICAL_NOT_HTTP, self.loc, detail=dropped)
            self._canonical = fetchable[0] if len(set(fetchable)) == 1 else None
        return self._canonical

    def self_canonical(self) -> bool | None:
        """Whether the page's canonical URL is the page itself; None without one."""
        canonical = self.canonical()
        return None if canonical is None else self.same_page(canonical)

    def content(self, now: datetime) -> Content | None:
        """The page's content fingerprints (what counts as a change, and its text's), fetch
        time and whether it is its own canonical; None for a page without text (or no
        HTML)."""
        if not self.html:
            return None
        text, hrefs = main_text(self.selector)
        if text is None:
            return None
        canonical = self._self_canonical
        if canonical is None and not self.config.respect_canonical:
            canonical = self.self_canonical()
        # The attribute's name in the page's text, before a walk of every element for it.
        microdata = microdata_values(self.selector.root) if "itemprop" in self.response.text else []
        target = self.canonical()
        changes = change_fingerprint(
            text,
            structured_data(self.ld, self._ld_unparsed, microdata),
            None if target is None else self._target(target),
            self._targets(hrefs),
        )
        return Content(
            changes, format_w3c(now), canonical is True, None if changes == text else text
        )

    def _targets(self, hrefs: list[str]) -> list[str]:
        """The targets of ``hrefs`` (the main content's distinct links): each resolved
        against the base and normalised as a ``<loc>`` (:meth:`_target`); the rooted and
        relative paths most links are take the URL layer's shortcut
        (:func:`~..sitemaps.urls.joined_loc`), and a ``#part`` names the base itself."""
        base, prefix, directory = self.base, self.prefix, self.directory
        policy = self.config.url_policy.loc_from_normalized
        targets = []
        here: str | None = None  # the target of "#part": the page's base, a normal URL
        for value in hrefs:
            # The fragment dropped first, as normalising drops it ("page.html#part").
            path = value.partition("#")[0]
            if not path and value and directory:
                if here is None:
                    try:
                        here = self.policy_loc(base)
                    except UrlRejected:
                        here = ""
                if here:
                    targets.append(here)
                    continue
            loc = joined_loc(path or value, prefix, base, directory)
            if loc is not None:
                targets.append(policy(loc))
                continue
            url = absolute(base, value)
            if url is not None:
                targets.append(self._target(url))
        return targets

    def _target(self, url: str) -> str:
        """``url`` (absolute) through the crawl's URL policy, as a ``<loc>`` is (a session
        id in a link is no change: G4); as it is when it names no page a ``<loc>`` can
        (``mailto:``), since a changed address is a change of the page all the same, on
        one line (the change fingerprint's pieces are lines)."""
        try:
            return self.policy_loc(url)
        except UrlRejected:
            return url.replace("\n", " ")

    def lastmod(self, now: datetime) -> str | None:
        """The lastmod the page's sources state (:func:`.lastmod.first_stated`)."""
        return first_stated(self.config.lastmod_sources, lambda source: self._dates(source, now))

    def _dates(self, source: str, now: datetime) -> Iterator[str | None]:
        """One source's dates, in its order, validated (P4); ``None`` for one rejected,
        which is counted. Read lazily, so a page's dates are parsed only when needed."""
        if source == "header":
            header = _header(self.response, b"Last-Modified")
            if header is not None:
                try:
                    yield lastmod_from_http(header, now)
                except FactRejected as exc:
                    self.reporter.skip(exc.reason, self.loc, detail=header.decode("latin-1"))
                    yield None
        elif source == "page":
            for raw in page_dates(self.nodes, self.ld):
                try:
                    yield parse_lastmod(raw, now)
                except FactRejected as exc:
                    self.reporter.skip(exc.reason, self.loc, detail=raw)
                    yield None
        elif source == "crawl_time":
            yield format_w3c(now)

    def images(self) -> tuple[str, ...]:
        """``pages.images.image_urls``, normalised. Values in shape go straight to their
        URL; the rest are joined and normalised, and a rejected one counted once, as
        ``image_urls`` would give it once. The smaller candidates of an image that no other
        element shows are counted (SKIPPED_IMAGE_SMALLER), one per URL as written."""
        found: dict[str, None] = {}
        policy = self.config.image_policy
        filtered = bool(policy.allow or policy.deny)  # without patterns, nothing is refused
        mapped = policy.mapped if policy.origin_map else None  # SITEMAPGEN_ORIGIN_MAP
        base, prefix, directory = self.base, self.prefix, self.directory
        tried: set[str] = set()
        sources = image_sources(self.nodes)
        if sources.smaller:
            smaller = set(sources.smaller).difference(sources.shown)
            if smaller:
                self.reporter.count(SKIPPED_IMAGE_SMALLER, len(smaller))
        for value in sources.shown:
            url = joined_loc(value, prefix, base, directory)
            if url is None:
                raw = media_url(base, value)
                if raw is None or raw in tried:
                    continue
                tried.add(raw)
                try:
                    url = normalize_loc(raw, self.encoding)
                except UrlRejected as exc:
                    self.reporter.skip(f"image_{exc.reason}", self.loc, detail=raw)
                    continue
            if mapped is not None:
                try:
                    url = mapped(url)
                except UrlRejected as exc:
                    self.reporter.skip(f"image_{exc.reason}", self.loc, detail=url)
                    continue
            if not filtered or policy.refusal(url) is None:
                found[url] = None
        if len(found) > MAX_IMAGES_PER_URL:
            self.reporter.skip("images_over_limit", self.loc, detail=len(found))
        return tuple(found)[:MAX_IMAGES_PER_URL]

    def videos(self, now: datetime) -> tuple[Video, ...]:
        found = []
        for raw in videos(self.nodes, self.ld, self.base):
            try:
                found.append(make_video(raw, self._normalize, self._issue, now))
            except FactRejected as exc:
                self.reporter.skip(exc.reason, self.loc, detail=exc.value)
        return tuple(found)

    def alternates(self) -> tuple[Alternate, ...]:
        """``pages.hreflang.alternates``, each checked and put through the URL policy (hrefs
        in shape without normalising them again), a rejected pair counted once. The page's
        ``<link>`` hrefs resolve against its base, ``Link`` header targets against the
        response URL (RFC 8288 3.1)."""
        found: dict[tuple[str, str], Alternate] = {}  # by a plain tuple: its hash is C's
        seen: set[tuple[str, str]] = set()
        loc_from_normalized = self.config.url_policy.loc_from_normalized
        url = self.response.url
        sources = [(alternate_sources(self.nodes), self.base, self.prefix)]
        if self.links:
            header_prefix = self.prefix if url == self.base else loc_prefix(url)
            sources.append((header_alternate_sources(self.links), url, header_prefix))
        for values, base, prefix in sources:
            for hreflang, value in values:
                lang = hreflang.strip()
                loc = joined_loc(value, prefix, base)
                href = loc or absolute(base, value)
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
        """A video's URL (content, thumbnail, player) as a ``<loc>``, mapped when it lies
        on a mapped origin."""
        return self.config.image_policy.media_loc(url, self.encoding)

    def _issue(self, reason: str, value: object) -> None:
        self.reporter.skip(reason, self.loc, detail=value)


def _reported(url: str, config: Config) -> str:
    """A URL left out before its ``loc`` is made, as the close report counts it: under the
    origin its listed pages have, in production terms with SITEMAPGEN_ORIGIN_MAP (the URL
    as crawled when it cannot be a loc at all)."""
    policy = config.url_policy
    if not policy.origin_map:
        return url
    try:
        return policy.loc(url)
    except UrlRejected:
        return url


def page_facts(
    response: Response,
    config: Config,
    reporter: Reporter,
    now: datetime | None = None,
    robots: RobotsTxt | None = None,
    *,
    named: Callable[[str], None] | None = None,
) -> UrlFacts | None:
    """The facts of a page to list, or ``None`` (the reason counted and logged).

    ``loc`` is the final URL after redirects (Scrapy resolves them before spider
    middlewares), normalised by the crawl's URL policy. ``lastmod`` comes only from the
    sources the settings name (P4): when none gives a valid date the tag is omitted, never
    filled with the crawl time unless ``crawl_time`` is named. ``robots``: the robots.txt
    of the origin the response came from (SITEMAPGEN_RESPECT_ROBOTS_TXT), or None to
    check none. ``named`` is given the target of a page left out as
    ``canonical_elsewhere`` (a ``loc``), which wins among duplicates by content.
    """
    request = response.request
    if request is not None and request.meta.get("dont_sitemap"):
        reporter.exclude("dont_sitemap", _reported(response.url, config))
        return None
    if response.status != 200:
        reporter.exclude(f"status/{response.status}", _reported(response.url, config))
        return None
    if media_type(response) not in config.content_types:
        reporter.exclude("content_type", _reported(response.url, config))
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
    if robots is not None:
        # An engine that may not fetch the page never sees its noindex or canonical, so
        # this rule comes before those (P16: exclusion is robots.txt's job).
        # The crawled server's robots.txt, asked about the URL crawled (not the production
        # URL SITEMAPGEN_ORIGIN_MAP made of it).
        crawled, agents = config.url_policy.crawl_url(loc), page_agents(config.robots_user_agents)
        agent = robots.forbidding(crawled, agents)
        if agent is not None:
            # The rule that decides, for the audit's listed_disallowed (its verdict's detail).
            reporter.exclude(robots_txt_reason(agent), loc, robots.explain(crawled, agents))
            return None
    page = _Page(response, config, reporter, loc)
    exclusion = page.exclusion()
    if exclusion is not None:
        reporter.exclude(exclusion, loc, page.elsewhere)
        if named is not None and exclusion == "canonical_elsewhere" and page.elsewhere:
            named(page.elsewhere)
        return None
    now = now or clock.now()
    html = page.html
    alternates = page.alternates() if config.alternates else ()
    return UrlFacts(
        loc,
        page.lastmod(now),
        images=page.images() if config.images and html else (),
        videos=page.videos(now) if config.videos and html else (),
        alternates=alternates,
        content=page.content(now) if config.fingerprints else None,
        # The self entry's last resort (features.hreflang_rules.self_language): read only for a
        # page whose cluster is checked.
        language=html_language(page.nodes.html_lang)
        if alternates and html and config.checks_clusters
        else None,
        # The changes feed's entry title (SITEMAPGEN_CHANGES_FEED), from the same walk.
        title=clean_title(page.nodes.title) if config.changes_feed and html else None,
    )
