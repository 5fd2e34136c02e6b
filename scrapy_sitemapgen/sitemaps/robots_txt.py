"""An origin's ``robots.txt`` as the search engines read it: what its answer means (Google's
rules for a file that cannot be read), and which agent, if any, it forbids a URL to.

Pure: the crawl fetches the file (``crawl/robots_rules.py``) and hands the status and
the body here. Protego, which Scrapy ships, parses the body; it matches a group by the
agent's product token as Google does (the most specific group: ``googlebot-image`` falls
back to ``googlebot``, then ``*``). Google's rules: "How Google interprets the robots.txt
specification", https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt
(docs/listing.rst, :ref:`listing-robots-txt`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from protego import Protego

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ALLOW_ALL",
    "DISALLOW_ALL",
    "MAX_ROBOTS_TXT_BYTES",
    "RobotsTxt",
    "page_agents",
    "robots_txt_of",
]

#: Google reads the first 500 KiB of a robots.txt and ignores the rest.
MAX_ROBOTS_TXT_BYTES = 500 * 1024
#: 429 is read as a server error, not as the client errors that mean "no robots.txt".
_TOO_MANY_REQUESTS = 429


class RobotsTxt:
    """One origin's robots.txt: its parsed groups, or one of the two outcomes of a file that
    could not be read (:data:`ALLOW_ALL`, :data:`DISALLOW_ALL`). ``outcome`` names which,
    for the log: ``parsed``, ``allow_all`` or ``disallow_all``."""

    __slots__ = ("_parser", "outcome")

    def __init__(self, parser: Protego | None, outcome: str) -> None:
        self._parser = parser
        self.outcome = outcome

    def forbidding(self, url: str, agents: Iterable[str]) -> str | None:
        """The first of ``agents`` (lower-case product tokens, in the order given) that
        may not fetch ``url``, or None when all may. Only the URL's path and query count:
        the caller gives each URL with the robots.txt of its own origin."""
        parser = self._parser
        if parser is None:
            if self.outcome == "allow_all":
                return None
            return next(iter(agents), None)
        for agent in agents:
            if not parser.can_fetch(url, agent):
                return agent
        return None


#: A robots.txt that is not there (a 4xx but 429, or a redirect that ends nowhere): Google
#: crawls as if there were no restrictions.
ALLOW_ALL = RobotsTxt(None, "allow_all")
#: A robots.txt that the server could not give (a 5xx, 429, a timeout, no connection):
#: Google takes the whole site as disallowed until it can read the file.
DISALLOW_ALL = RobotsTxt(None, "disallow_all")


def robots_txt_of(status: int, body: bytes) -> RobotsTxt:
    """What an answer to ``GET /robots.txt`` (after the redirects the downloader followed)
    means. A 2xx is parsed (its first :data:`MAX_ROBOTS_TXT_BYTES`, as UTF-8, invalid
    bytes and a byte order mark left out); a 5xx or 429 disallows everything; any other
    status (a 4xx, or a 3xx not followed) allows everything."""
    if 200 <= status < 300:
        text = body[:MAX_ROBOTS_TXT_BYTES].decode("utf-8", "ignore").lstrip("\ufeff")
        return RobotsTxt(Protego.parse(text), "parsed")
    if status >= 500 or status == _TOO_MANY_REQUESTS:
        return DISALLOW_ALL
    return ALLOW_ALL


@lru_cache(maxsize=8)
def page_agents(agents: frozenset[str]) -> tuple[str, ...]:
    """SITEMAPGEN_ROBOTS_USER_AGENTS in the order pages are checked against them: sorted,
    so that a page two agents may not fetch always gets the same reason."""
    return tuple(sorted(agents))
