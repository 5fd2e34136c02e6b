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
    "decision_parts",
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

    __slots__ = ("_explainer", "_parser", "_text", "outcome")

    def __init__(self, parser: Protego | None, outcome: str, text: str = "") -> None:
        self._parser = parser
        self.outcome = outcome
        # Kept for :meth:`explain` only, read again on its first call: most crawls never
        # explain a refusal, and those that do explain few.
        self._text = text
        self._explainer: _Explainer | None = None

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

    def explain(self, url: str, agents: Iterable[str]) -> str:
        """Why ``url`` is refused (asked only once :meth:`forbidding` named an agent, so
        the check of an allowed URL costs nothing more): the rule line that decides for the
        first agent refused and the ``User-agent`` lines of its group, then which of
        ``agents`` it blocks and which it does not, as
        ``Disallow: /releases/ (group User-agent: bingbot); blocks bingbot; not googlebot``
        (:func:`decision_parts` reads it back). Protego decides; this only names its rule."""
        agents = tuple(agents)
        blocked = [a for a in agents if self.forbidding(url, (a,)) is not None]
        allowed = [a for a in agents if a not in blocked]
        if self._parser is None:
            cause = "everything (robots.txt could not be read)"
        else:
            if self._explainer is None:
                self._explainer = _Explainer(self._text)
            cause = self._explainer.rule(url, blocked[0]) if blocked else "no rule"
        tail = f"; not {', '.join(allowed)}" if allowed else ""
        return f"{cause}; blocks {', '.join(blocked) or 'none'}{tail}"


def decision_parts(detail: str) -> tuple[str, str, str]:
    """(the rule and its group, the agents blocked, the agents not blocked) of an
    :meth:`RobotsTxt.explain` text; a detail of another form is all rule."""
    cause, sep, rest = detail.rpartition("; blocks ")
    if not sep:
        return detail, "", ""
    blocked, _, allowed = rest.partition("; not ")
    return cause, blocked, allowed


class _Explainer:
    """A robots.txt's groups as written (their ``User-agent`` lines and ``Disallow`` rules),
    to name the rule Protego applied: the group of the most specific matching product
    token (Protego's own scoring), then its longest ``Disallow`` pattern that matches the
    URL (each matched by Protego itself, as a one-rule file)."""

    def __init__(self, text: str) -> None:
        #: product token -> (its groups' User-agent values as written, their Disallow patterns)
        self.groups: dict[str, tuple[list[str], list[str]]] = {}
        self._matchers: dict[str, Protego] = {}
        current: list[str] = []  # the product tokens of the group being read
        names: list[str] = []  # its User-agent values as written
        in_agents = False
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            field, colon, value = line.partition(":")
            if not colon:
                continue
            field, value = field.strip().lower().replace("_", "-"), value.strip()
            if field in ("user-agent", "useragent"):
                if not in_agents:
                    current, names = [], []
                in_agents = True
                if value:
                    current.append(value.lower())
                    names.append(value)
                continue
            if field in ("sitemap", "host"):  # site-wide: they end no group
                continue
            if in_agents:  # the group's first rule: its User-agent lines are all read
                in_agents = False
                for token in current:
                    self.groups.setdefault(token, ([], []))[0].extend(names)
            if field == "disallow" and value:
                for token in current:
                    self.groups[token][1].append(value)

    def rule(self, url: str, agent: str) -> str:
        token = max(self.groups, key=lambda t: _score(t, agent), default=None)
        if token is None or not _score(token, agent):
            return "no rule"
        names, patterns = self.groups[token]
        matching = [p for p in patterns if not self._matcher(p).can_fetch(url, "x")]
        group = f"(group User-agent: {', '.join(dict.fromkeys(names))})"
        if not matching:
            return f"no rule {group}"
        return f"Disallow: {max(matching, key=len)} {group}"

    def _matcher(self, pattern: str) -> Protego:
        matcher = self._matchers.get(pattern)
        if matcher is None:
            matcher = self._matchers[pattern] = Protego.parse(
                f"User-agent: *\nDisallow: {pattern}\n"
            )
        return matcher


def _score(token: str, agent: str) -> int:
    """How well a group's product token names ``agent`` (Protego's ``applies_to``: ``*``
    scores 1, a token found at a word boundary its length, else 0)."""
    if token == "*":
        return 1
    at = agent.find(token)
    while at != -1:
        if at == 0 or not (agent[at - 1].isalnum() or agent[at - 1] in "-_"):
            return len(token)
        at = agent.find(token, at + 1)
    return 0


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
        return RobotsTxt(Protego.parse(text), "parsed", text)
    if status >= 500 or status == _TOO_MANY_REQUESTS:
        return DISALLOW_ALL
    return ALLOW_ALL


@lru_cache(maxsize=8)
def page_agents(agents: frozenset[str]) -> tuple[str, ...]:
    """SITEMAPGEN_ROBOTS_USER_AGENTS in the order pages are checked against them: sorted,
    so that a page two agents may not fetch always gets the same reason."""
    return tuple(sorted(agents))
