"""The built-in spider of ``scrapy sitemapgen-crawl``: every link on the start URLs' hosts.

It is the spider getting-started gives (a ``CrawlSpider`` with one ``Rule(LinkExtractor(),
follow=True)`` and ``allowed_domains`` set to the site's host), so that the one-command
crawl and a project's first crawl list the same pages. Nothing in it is about sitemaps:
the add-on records what the crawl visits.

- **Same site.** ``allowed_domains`` holds the start URLs' hosts (any port, and their
  subdomains, as Scrapy's offsite filter reads it). The whole host is crawled, not only
  the part under a start URL's path: a sitemap set covers an origin, and a page under
  another path is still a page of the site.
- **A start URL that redirects to another host** (``example.com`` to ``www.example.com``
  is covered already, as a subdomain; ``www.example.com`` to ``example.com`` is not) has
  that host allowed too, with one INFO line: the site's own address is where it sends
  its visitors.
- Links to other hosts, ``mailto:`` and the like, and files (PDFs, images: the
  extractor's ``deny_extensions``) are not followed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scrapy.http import Response

__all__ = ["SiteSpider", "start_hosts"]

logger = logging.getLogger(__name__)

#: What a start URL must look like, for the line that refuses one.
_EXPECTED = "an absolute http(s) URL with a host, such as https://www.example.com/"


def start_hosts(urls: Iterable[str]) -> list[str]:
    """The hosts of the start URLs ``urls``, in order, each once; ValueError naming the
    first URL that is not an absolute http(s) URL with a host (and a valid port)."""
    hosts: list[str] = []
    for url in urls:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - a port that is no number raises here
        except ValueError:
            parts = None
        host = parts.hostname if parts else None
        if (
            parts is None
            or parts.scheme not in ("http", "https")
            or not host
            or any(char.isspace() for char in url)
        ):
            raise ValueError(f"{url!r} is not a URL to crawl: give {_EXPECTED}")
        if host not in hosts:
            hosts.append(host)
    if not hosts:
        raise ValueError(f"name the site to crawl: {_EXPECTED}")
    return hosts


def _within(host: str, domains: Iterable[str]) -> bool:
    """Whether the offsite filter lets ``host`` through: one of ``domains`` or a subdomain."""
    return any(host == domain or host.endswith(f".{domain}") for domain in domains)


class SiteSpider(CrawlSpider):
    """Starts at ``urls`` and follows every link on their hosts (see the module)."""

    name = "sitemapgen-crawl"
    rules = (Rule(LinkExtractor(), follow=True),)

    def __init__(self, urls: Sequence[str] = (), *args: Any, **kwargs: Any) -> None:
        hosts = start_hosts(urls)
        super().__init__(*args, **kwargs)
        self.start_urls = list(urls)
        #: Read again by the offsite filter when it changes (a start URL's redirect).
        self.allowed_domains = hosts

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterable[Any]:
        # Runs before the start page's links are followed, so they pass the filter.
        host = urlsplit(response.url).hostname
        if host and not _within(host, self.allowed_domains):
            redirects = response.meta.get("redirect_urls") or [response.url]
            logger.info(
                "Sitemap crawl: the start URL %(start)s redirected to %(url)s, so the host "
                "%(host)s is crawled too",
                {"start": redirects[0], "url": response.url, "host": host},
            )
            self.allowed_domains = [*self.allowed_domains, host]
        return ()
