"""Response -> :class:`UrlFacts`: which responses are pages to list, and the richest true
facts about each.

The listing rules are applied here in our own code, not left to middleware order: a 404 can
reach spider middlewares with an errback's output, and a 3xx when redirects are turned off.
The HTML is read through Scrapy's cached ``response.selector`` (one parse per page, shared
with the spider), and a switched-off feature costs nothing. Reading (:func:`page_evidence`,
here) and judging (evidence.py) are apart, so the judging can run in the recorder process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parsel import Selector
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from . import page
from .evidence import PageEvidence, facts_from_evidence
from .urls import UrlRejected

if TYPE_CHECKING:
    from datetime import datetime

    from scrapy.http import Response

    from .facts import UrlFacts
    from .settings import Config
    from .stats import Reporter

__all__ = ["media_type", "page_evidence", "page_facts"]

# What non-HTML responses (a PDF opted in through SITEMAPGEN_CONTENT_TYPES) "contain".
_NO_HTML = Selector(text="<html></html>")


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


class _Reading:
    """One response being read: the parsed parts are computed once, on first use."""

    def __init__(self, response: Response, reporter: Reporter, loc: str) -> None:
        self.response = response
        self.reporter = reporter
        self.loc = loc
        # Computed on first use (plain attributes: functools.cached_property takes a lock).
        self._nodes: page.PageNodes | None = None
        self._base: str | None = None

    @property
    def nodes(self) -> page.PageNodes:
        """The elements every reader looks at, gathered in one walk of the tree of Scrapy's
        cached selector (built on first use here or in the spider, never twice)."""
        if self._nodes is None:
            response = self.response
            if not isinstance(response, HtmlResponse):
                selector = _NO_HTML
            else:
                try:
                    selector = response.selector
                except ValueError:
                    # Scrapy builds its selector with get_base_url(), which raises on a
                    # <base href> the URL parser rejects ("http://[::1/x"). The spider
                    # meets the same error; the page is read here without Scrapy's cache.
                    self.base  # noqa: B018  # counts the broken <base href>
                    selector = Selector(text=response.text, type="html")
            self._nodes = page.PageNodes(selector)
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


def page_evidence(response: Response, config: Config, reporter: Reporter) -> PageEvidence | None:
    """What the page says, read for the readers the settings switch on, or ``None`` when
    it is no page to list (the reason counted and logged): the half of recording a page
    that needs the response; ``evidence.facts_from_evidence`` is the other.

    ``loc`` is the final URL after redirects (Scrapy resolves them before spider
    middlewares), normalised by the crawl's URL policy.
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
    reading = _Reading(response, reporter, loc)
    html = isinstance(response, HtmlResponse)
    links = _header_values(response, b"Link")
    sources = config.lastmod_sources
    images, videos = config.images and html, config.videos and html
    refresh = config.respect_meta_refresh and html
    # Read only for the readers switched on: with none, not even the tree is built.
    base = response.url
    if config.respect_canonical or refresh or images or videos or config.alternates:
        base = reading.base
    ld: list[object] = []
    bad_json_ld = 0
    if "page" in sources or videos:
        ld, bad_json_ld = page.json_ld(reading.nodes)
    directives: frozenset[str] = frozenset()
    if config.respect_noindex:
        x_robots = _header_values(response, b"X-Robots-Tag")
        directives = page.robots_directives(reading.nodes, x_robots, config.robots_user_agents)
    return PageEvidence(
        loc=loc,
        html=html,
        base=base,
        encoding=getattr(response, "encoding", None) or "utf-8",
        directives=directives,
        canonicals=page.canonical_urls(reading.nodes, links, base) if config.respect_canonical else [],
        refresh=page.refresh_url(reading.nodes, base) if refresh else None,
        last_modified=_header(response, b"Last-Modified") if "header" in sources else None,
        dates=page.page_dates(reading.nodes, ld) if "page" in sources else [],
        bad_json_ld=bad_json_ld,
        images=page.image_sources(reading.nodes) if images else [],
        videos=page.videos(reading.nodes, ld, base) if videos else [],
        alternates=page.alternate_sources(reading.nodes, links) if config.alternates else [],
    )


def page_facts(
    response: Response, config: Config, reporter: Reporter, now: datetime | None = None
) -> UrlFacts | None:
    """The facts of a page to list, or ``None`` (the reason counted and logged): both
    halves, :func:`page_evidence` then ``evidence.facts_from_evidence``, in this process.

    ``lastmod`` comes only from the sources the settings name (P4): when none gives a
    valid date the tag is omitted, never filled with the crawl time unless ``crawl_time``
    is named.
    """
    evidence = page_evidence(response, config, reporter)
    if evidence is None:
        return None
    return facts_from_evidence(evidence, config, reporter, now)
