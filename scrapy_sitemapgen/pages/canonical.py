"""The canonical URLs a page declares: ``<link rel="canonical">`` and ``Link`` headers with
``rel=canonical``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .elements import nodes_of
from .hrefs import absolute
from .links import header_links

if TYPE_CHECKING:
    from parsel import Selector

    from .elements import PageNodes

__all__ = ["canonical_urls"]


def canonical_urls(
    selector: Selector | PageNodes, link_headers: list[str], base: str, url: str
) -> list[str]:
    """Every canonical URL the page declares: the hrefs of ``<link rel="canonical">`` in
    document order, resolved against ``base``, then the ``rel=canonical`` targets of
    ``Link`` headers, resolved against ``url``, the response's (final) URL: RFC 8288 3.1
    resolves a header's target against the request's URL, and a ``<base href>`` in the body
    does not apply to headers.

    All are returned, duplicates included, so the caller can tell one consistent canonical
    from conflicting ones (which search engines then ignore). Empty hrefs are dropped.
    """
    found: list[str] = []
    for link in nodes_of(selector).links_with_rel("canonical"):
        target = absolute(base, link.get("href", ""))
        if target is not None:
            found.append(target)
    if link_headers:
        for uri, _params in header_links(link_headers, "canonical"):
            target = absolute(url, uri)
            if target is not None:
                found.append(target)
    return found
