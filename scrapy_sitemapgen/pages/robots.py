"""The robots directives a page declares: ``<meta name="robots">`` (and per crawler) and the
``X-Robots-Tag`` header.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .elements import ASCII_LOWER, nodes_of

if TYPE_CHECKING:
    from collections.abc import Collection

    from parsel import Selector

    from .elements import PageNodes

__all__ = ["robots_directives"]

# Robots directives that carry a value after a colon, which must not be read as a
# user-agent prefix ("max-snippet: 20" is not a rule for a crawler named max-snippet).
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_DIRECTIVE_NAME_RE = re.compile(r"[a-z][a-z0-9_-]*\Z")
# "<user agent>: <rest>" at the start of an X-Robots-Tag list item. Crawler names hold no
# spaces, so the "25-Jun-10 15:00:00" half of a comma-split date never matches.
_UA_PREFIX_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*)[\t ]*:(.*)\Z", re.DOTALL)


def robots_directives(
    selector: Selector | PageNodes, x_robots_tag: list[str], user_agents: Collection[str]
) -> frozenset[str]:
    """The lower-case robots directives that apply to a generic crawler or to one of the
    named ``user_agents`` (lower-case names such as ``{"googlebot"}``).

    Reads ``<meta name="robots">``, ``<meta name="<ua>">`` for each named agent (names
    matched case-insensitively) and every ``X-Robots-Tag`` value. A header value is a comma
    list; an item prefixed ``<ua>:`` applies, with the items after it, only when that agent
    is named. ``unavailable_after``, ``max-snippet``, ``max-image-preview`` and
    ``max-video-preview`` carry values after a colon and are no prefixes. For a valued
    directive only the name is kept. ``none`` is returned as written, not expanded. Items
    that are not directive names (such as the second half of a date split at its comma) are
    dropped.
    """
    named = {agent.translate(ASCII_LOWER) for agent in user_agents}
    directives: set[str] = set()
    for element in nodes_of(selector).metas:
        name, content = element.get("name"), element.get("content")
        if name is None or content is None:
            continue
        name = name.strip().translate(ASCII_LOWER)
        if name == "robots" or name in named:
            for item in content.split(","):
                directive = _directive_name(item)
                if directive is not None:
                    directives.add(directive)
    for value in x_robots_tag:
        agent: str | None = None  # None: the items so far apply to every crawler
        for item in value.split(","):
            prefix = _user_agent_prefix(item)
            if prefix is not None:
                agent, item = prefix
            if agent is not None and agent not in named:
                continue
            directive = _directive_name(item)
            if directive is not None:
                directives.add(directive)
    return frozenset(directives)


def _directive_name(item: str) -> str | None:
    name = item.split(":", 1)[0].strip().translate(ASCII_LOWER)
    return name if _DIRECTIVE_NAME_RE.match(name) else None


def _user_agent_prefix(item: str) -> tuple[str, str] | None:
    """``(agent, rest)`` when ``item`` starts with a user-agent prefix. A known valued
    directive is no prefix; neither is a name followed by something that is no directive
    (``max-foo: 5``), which is more likely an unknown valued directive."""
    match = _UA_PREFIX_RE.match(item.strip()) if ":" in item else None
    if match is None:
        return None
    agent = match.group(1).translate(ASCII_LOWER)
    rest = match.group(2)
    if agent in _VALUED_DIRECTIVES:
        return None
    if rest.strip() and _directive_name(rest) is None:
        return None
    return agent, rest
