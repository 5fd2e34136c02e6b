"""RobotsRules: each origin's ``robots.txt``, fetched once through the engine and kept for
the listing rules (SITEMAPGEN_RESPECT_ROBOTS_TXT), whatever ``ROBOTSTXT_OBEY`` says.

Scrapy's RobotsTxtMiddleware refuses requests; this refuses none. It fetches the file the
way that middleware does (``engine.download_async``, so proxies, headers, retries and
redirects apply; ``dont_obey_robotstxt``, one fetch per origin, the others waiting for
it) and keeps what it means for the engines (``sitemaps/robots_txt.py``). Its parser
cannot be shared: the ``robots_parsed`` signal carries no status, and a 5xx or a timeout
is exactly what changes the answer (Google then disallows everything), so with
``ROBOTSTXT_OBEY`` on each origin's file is requested twice.

Fetched only for the origins of pages answered 200, of the images they list and of the
items recorded, and only while the crawl runs: the engine's other requests (the audit's,
IndexNow's) never wait for it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from .. import stats as keys
from ..sitemaps.limits import DEFAULT_PORTS
from ..sitemaps.robots_txt import (
    ALLOW_ALL,
    DISALLOW_ALL,
    RobotsTxt,
    page_agents,
    robots_txt_of,
)
from ..sitemaps.urls import origin_key

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..stats import Reporter

__all__ = ["RobotsRules"]

logger = logging.getLogger(__name__)

_DEFAULT_PORT_SUFFIX = {scheme: f":{port}" for scheme, port in DEFAULT_PORTS.items()}
#: As Scrapy's RobotsTxtMiddleware: ahead of the pages waiting for it.
_PRIORITY = 1000
_NONE_READ: Mapping[str, RobotsTxt] = MappingProxyType({})
#: The files kept at once. A parsed robots.txt takes some 5 kB (400 kB for one of 300
#: wildcard rules), and a broad crawl meets 100,000 origins: past this many, the file read
#: first is dropped, and read again if its origin comes back.
KEPT_ORIGINS = 10_000


def response_root(response: Response) -> str:
    """``scheme://host[:port]/`` of the URL a response came from (its credentials and a
    default port left out, as in :func:`origin_key` of a ``<loc>``): the origin whose
    robots.txt governs it."""
    parts = urlparse_cached(response)
    netloc = parts.netloc.rpartition("@")[2]
    default = _DEFAULT_PORT_SUFFIX.get(parts.scheme)
    if default is not None and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    return f"{parts.scheme}://{netloc}/"


class RobotsRules:
    """The robots.txt of the origins the crawl met, by root (``scheme://host[:port]/``):
    each read once, and kept for the crawl up to :data:`KEPT_ORIGINS` origins."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.page_agents = page_agents(config.robots_user_agents)
        self.image_agents = config.robots_image_user_agents
        # A loc or an image in production terms -> the URL the crawl fetched: the crawled
        # server's robots.txt is the one read, and its rules are about that URL's path
        # (SITEMAPGEN_ORIGIN_MAP; without a map, the URL itself).
        self._page_url = config.url_policy.crawl_url
        self._image_url = config.image_policy.crawl_url
        #: In the order read (the first is dropped first: :data:`KEPT_ORIGINS`).
        self._read: OrderedDict[str, RobotsTxt] = OrderedDict()
        #: Roots being fetched -> the callers waiting for that fetch.
        self._waiting: dict[str, list[Deferred[None]]] = {}
        self._absent_logged = False

    async def of_response(self, response: Response) -> RobotsTxt:
        """The robots.txt of the origin ``response`` came from, fetched through the proxy
        its request named (``meta["proxy"]``), if any."""
        request = response.request
        proxy = request.meta.get("proxy") if request is not None else None
        return await self.of_root(response_root(response), proxy)

    async def of_root(self, root: str, proxy: str | None = None) -> RobotsTxt:
        """The robots.txt of an origin, fetched on first use; callers that ask while it is
        fetched wait for that one fetch. Outside a running crawl (no engine to fetch
        through) nothing is read and nothing forbidden."""
        rules = self._read.get(root)
        if rules is not None:
            return rules
        waiting = self._waiting.get(root)
        if waiting is not None:
            waiter: Deferred[None] = Deferred()
            waiting.append(waiter)
            await maybe_deferred_to_future(waiter)
            # Not there only when the fetch itself was cancelled (the crawl stopping).
            return self._read.get(root, DISALLOW_ALL)
        if not self.crawler.crawling:
            return ALLOW_ALL
        self._waiting[root] = []
        try:
            rules = self._read[root] = await self._fetch(root, proxy)
            if len(self._read) > KEPT_ORIGINS:
                self._read.popitem(last=False)
        finally:
            for waiter in self._waiting.pop(root):
                waiter.callback(None)
        return rules

    async def _fetch(self, root: str, proxy: str | None) -> RobotsTxt:
        meta: dict[str, object] = {"dont_obey_robotstxt": True, "allow_offsite": True}
        if proxy:
            meta["proxy"] = proxy
        request = Request(
            f"{root}robots.txt",
            priority=_PRIORITY,
            meta=meta,
            callback=NO_CALLBACK,
            dont_filter=True,
        )
        self.stats.inc_value(keys.ROBOTS_TXT_REQUESTS)
        engine = self.crawler.engine
        assert engine is not None
        try:
            response = await engine.download_async(request)
        except IgnoreRequest as exc:
            # A downloader middleware would not fetch it (too many redirects, an offline
            # cache): no robots.txt was read, as after a 4xx.
            rules, why = ALLOW_ALL, f"not fetched: {exc or type(exc).__name__}"
        except Exception as exc:  # no answer: a timeout, a refused connection, DNS
            rules, why = DISALLOW_ALL, f"no answer: {exc or type(exc).__name__}"
        else:
            rules = robots_txt_of(response.status, response.body)
            why = f"HTTP {response.status}"
        self._report(root, rules, why)
        return rules

    def _report(self, root: str, rules: RobotsTxt, why: str) -> None:
        if rules is DISALLOW_ALL:
            self.stats.inc_value(keys.ROBOTS_TXT_UNREACHABLE)
            logger.warning(
                "Sitemap: the robots.txt of %(root)s could not be read (%(why)s); as Google "
                "does, every page and image of that origin is taken as disallowed and left "
                "out this run; check that the server answers %(root)srobots.txt",
                {"root": root, "why": why},
            )
        elif rules is ALLOW_ALL:
            self.stats.inc_value(keys.ROBOTS_TXT_ABSENT)
            first = not self._absent_logged
            self._absent_logged = True
            logger.log(
                logging.INFO if first else logging.DEBUG,
                "Sitemap: %(root)s has no robots.txt (%(why)s); as Google does, every URL of "
                "that origin is taken as allowed%(more)s",
                {
                    "root": root,
                    "why": why,
                    "more": "; further origins without one are logged at DEBUG" if first else "",
                },
            )

    async def allowed_images(self, facts: UrlFacts, reporter: Reporter) -> UrlFacts:
        """``facts`` without the images that an agent of SITEMAPGEN_ROBOTS_IMAGE_USER_AGENTS
        may not fetch, each checked with the robots.txt of its own origin (a CDN has its
        own), read first when it is not yet; each image left out is counted and logged.
        The page stays listed."""
        read: dict[str, RobotsTxt] = {}
        if self.image_agents and facts.images:
            unread = self._image_roots(facts) - self._read.keys()
            if unread:
                read = await self.read(unread)
        return self._images_allowed(facts, reporter, read)

    def unread(self, facts: UrlFacts) -> set[str]:
        """The origins of an item's ``loc`` and images whose robots.txt is not read yet."""
        roots = self._image_roots(facts) if self.image_agents else set()
        roots.add(origin_key(self._page_url(facts.loc)))
        return roots - self._read.keys()

    async def read(self, roots: set[str]) -> dict[str, RobotsTxt]:
        """The robots.txt of each origin, read in order (so the log's order is the same
        each run); given back, since a broad crawl may drop one it read before it is
        used (:data:`KEPT_ORIGINS`)."""
        return {root: await self.of_root(root) for root in sorted(roots)}

    def item_facts(
        self, facts: UrlFacts, reporter: Reporter, read: Mapping[str, RobotsTxt] = _NONE_READ
    ) -> UrlFacts | None:
        """An item's facts under the files already read (and ``read``): None when an agent
        of SITEMAPGEN_ROBOTS_USER_AGENTS may not fetch its ``loc`` (left out as a page is),
        else without the images an image agent may not fetch. An origin whose file is not
        read (no crawl running to fetch it) is not checked."""
        url = self._page_url(facts.loc)
        root = origin_key(url)
        rules = self._read.get(root) or read.get(root)
        if rules is not None:
            agent = rules.forbidding(url, self.page_agents)
            if agent is not None:
                why = rules.explain(url, self.page_agents)
                reporter.exclude(keys.robots_txt_reason(agent), facts.loc, why)
                return None
        return self._images_allowed(facts, reporter, read)

    def _image_roots(self, facts: UrlFacts) -> set[str]:
        crawled = self._image_url
        return {origin_key(crawled(url)) for url in facts.images}

    def _images_allowed(
        self, facts: UrlFacts, reporter: Reporter, read: Mapping[str, RobotsTxt]
    ) -> UrlFacts:
        agents = self.image_agents
        if not agents or not facts.images:
            return facts
        kept: list[str] = []
        crawled = self._image_url
        for url in facts.images:
            fetched = crawled(url)
            root = origin_key(fetched)
            rules = self._read.get(root) or read.get(root)
            if rules is None or rules.forbidding(fetched, agents) is None:
                kept.append(url)
            else:
                reporter.skip(keys.IMAGE_ROBOTS_TXT, facts.loc, detail=url)
        if len(kept) == len(facts.images):
            return facts
        return replace(facts, images=tuple(kept))
