"""SitemapFetchFailureMiddleware: the requests that got no answer at all, kept as this
run's verdicts (``failed/timeout``, ``failed/dns``, ``failed/connection``,
``failed/error``).

A timeout, a DNS failure or a refused connection never reaches a spider middleware: the
request's errback gets it, or Scrapy logs it. Such a URL is no evidence that a published
page is gone (:mod:`..sitemaps.evidence`), and the close log says why each kept page was
kept. The middleware sits just before RetryMiddleware on the engine's side (order 540 <
550), so it sees a failure only once the retries are spent: a failure RetryMiddleware
answers with a retry stops there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from ..audit.live import key_of
from ..sitemaps.evidence import failed
from .exporter import SitemapExporter
from .live_audit import AUDIT_META

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from .recorder import Recorder

__all__ = ["SitemapFetchFailureMiddleware", "failure_kind"]

#: Words in the names of an exception's classes, and the kind of failure they mean: the
#: names of Twisted's, Scrapy's and the HTTP clients' own errors (asyncio's, aiohttp's,
#: httpx's: a reactorless crawl's), read without importing any of them.
_KINDS = (
    ("timeout", "timeout"),
    ("timedout", "timeout"),
    ("dns", "dns"),
    ("connect", "connection"),
    ("responsenever", "connection"),
    ("responsefailed", "connection"),
    ("tunnel", "connection"),
    ("ssl", "connection"),
    ("tls", "connection"),
    ("protocol", "connection"),
)


def failure_kind(exception: BaseException) -> str:
    """``timeout``, ``dns``, ``connection`` or ``error``: what kind of failure an
    exception of a download is, by its classes' names."""
    for cls in type(exception).__mro__:
        name = cls.__name__.lower()
        for word, kind in _KINDS:
            if word in name:
                return kind
    return "error"


class SitemapFetchFailureMiddleware:
    """Downloader middleware (order 540): each request that failed for good, as this
    run's verdict on its URL. Requests Scrapy refused (``IgnoreRequest``: robots.txt, the
    offsite filter) and the robots.txt and audit fetches of the add-on are no pages."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapExporter.required_by(crawler, cls.__name__).recorder)

    def process_exception(self, request: Request, exception: Exception) -> None:
        if isinstance(exception, IgnoreRequest) or self.recorder.store is None:
            return
        if request.meta.get(AUDIT_META) or request.url.endswith("/robots.txt"):
            return
        policy = self.recorder.config.url_policy
        self.recorder.judge(key_of(request.url, policy), failed(failure_kind(exception)))
