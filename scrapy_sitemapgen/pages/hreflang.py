"""The language versions a page declares (G6): ``<link rel="alternate" hreflang>`` and
``Link`` headers with ``rel=alternate`` and ``hreflang``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .elements import nodes_of
from .hrefs import absolute
from .links import header_links

if TYPE_CHECKING:
    from parsel import Selector

    from .elements import PageNodes

__all__ = [
    "alternate_sources",
    "alternates",
    "header_alternate_sources",
]


def alternates(
    selector: Selector | PageNodes, link_headers: list[str], base: str, url: str
) -> list[tuple[str, str]]:
    """``(hreflang, absolute href)`` pairs for the page's language versions (G6).

    Sources are ``<link rel="alternate" hreflang href>`` (rel token matched
    case-insensitively), resolved against ``base``, then ``Link`` headers with
    ``rel="alternate"`` and a ``hreflang`` parameter, resolved against ``url`` (RFC 8288
    3.1, as in :func:`.canonical.canonical_urls`). First occurrence wins for duplicates. ``hreflang``
    is stripped but otherwise returned as written (``x-default``, ``en-GB``), since
    validating it is the caller's job, and so is counting an empty one. Pairs without an
    href are dropped.
    """
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    sources = [(alternate_sources(selector), base), (header_alternate_sources(link_headers), url)]
    for found, against in sources:
        for hreflang, href in found:
            lang = hreflang.strip()
            target = absolute(against, href)
            if target is not None and (lang, target) not in seen:
                seen.add((lang, target))
                pairs.append((lang, target))
    return pairs


def alternate_sources(selector: Selector | PageNodes) -> list[tuple[str, str]]:
    """The ``(hreflang, href)`` values of the page's ``<link rel="alternate" hreflang>``
    elements, as written, repeats included: what :func:`alternates` resolves against the
    base."""
    return [  # no hreflang attribute at all: another kind of alternate (a feed, a print view)
        (hreflang, link.get("href", ""))
        for link in nodes_of(selector).links_with_rel("alternate")
        if (hreflang := link.get("hreflang")) is not None
    ]


def header_alternate_sources(link_headers: list[str]) -> list[tuple[str, str]]:
    """The ``(hreflang, target)`` values of ``Link: <target>; rel=alternate; hreflang=…``
    headers, as written, repeats included: what :func:`alternates` resolves against the
    response URL."""
    if not link_headers:
        return []
    return [
        (params["hreflang"], uri)
        for uri, params in header_links(link_headers, "alternate")
        if "hreflang" in params
    ]
