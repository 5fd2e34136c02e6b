"""Response -> :class:`UrlFacts`: which responses are pages to list, and what they say.

The rules are applied here in our own code, not left to middleware order: a 404 can reach
spider middlewares with an errback's output, and a 3xx when redirects are turned off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facts import FactRejected, UrlFacts, lastmod_from_http
from .urls import UrlRejected, normalize_loc

if TYPE_CHECKING:
    from scrapy.http import Response

    from .settings import Config
    from .stats import Reporter

__all__ = ["media_type", "page_facts"]


def media_type(response: Response) -> str:
    """The lower-case media type of the response, without parameters (``text/html``)."""
    raw = response.headers.get(b"Content-Type") or b""
    return raw.split(b";", 1)[0].strip().decode("latin-1").lower()


def page_facts(response: Response, config: Config, reporter: Reporter) -> UrlFacts | None:
    """The facts of a page to list, or ``None`` (the reason counted and logged).

    ``loc`` is the final URL, after redirects (Scrapy resolves them before spider
    middlewares). ``lastmod`` comes from ``Last-Modified`` only (P4): when that header is
    missing or broken the tag is omitted, never filled with the crawl time or ``Date``.
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
        loc = normalize_loc(response.url)
    except UrlRejected as exc:
        reporter.skip(exc.reason, response.url)
        return None
    lastmod = None
    header = response.headers.get(b"Last-Modified")
    if header is not None:
        try:
            lastmod = lastmod_from_http(header)
        except FactRejected as exc:
            reporter.skip(exc.reason, loc, detail=header.decode("latin-1"))
    return UrlFacts(loc, lastmod)
