"""The target of a page's ``<meta http-equiv="refresh">``, read as browsers read it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from .elements import ASCII_LOWER, match_end, nodes_of

if TYPE_CHECKING:
    from parsel import Selector

    from .elements import PageNodes

__all__ = ["refresh_url"]

# Meta refresh content: the time, and the optional "url =" before the URL (HTML standard,
# shared declarative refresh steps); group 1 is set only when the "=" is there.
_DIGITS_RE = re.compile(r"[0-9]*")
_REFRESH_URL_PREFIX_RE = re.compile(r"[Uu](?:[Rr](?:[Ll][\t\n\f\r ]*(=)?)?)?")


def refresh_url(selector: Selector | PageNodes, base: str) -> str | None:
    """The absolute target of ``<meta http-equiv="refresh" content="5; url=/x">``, or
    ``None`` when the page has no refresh or only a plain reload.

    Parses ``content`` with the HTML standard's "shared declarative refresh steps", so it
    accepts what browsers accept (``0;url=x``, ``0; URL='x'``, ``0, url=x``, ``0;x``,
    ``.5;x``). As in a browser, the first refresh that parses is the one that counts; an
    unparsable one is passed over.
    """
    for element in nodes_of(selector).metas:
        http_equiv, content = element.get("http-equiv"), element.get("content")
        if http_equiv is None or content is None:
            continue
        if http_equiv.strip().translate(ASCII_LOWER) != "refresh":
            continue
        target = _refresh_target(content)
        if target is None:
            continue
        if not target:
            return None  # a reload of the page itself
        try:
            return urljoin(base, target)
        except ValueError:
            continue  # the URL parser fails: the browser ignores this refresh
    return None


def _refresh_target(content: str) -> str | None:
    """The raw URL of a refresh ``content``: ``""`` for a reload, ``None`` when invalid."""
    text = content.lstrip("\t\n\f\r ")
    time_end = match_end(_DIGITS_RE, text, 0)
    if time_end == 0 and not text.startswith("."):
        return None
    rest = text[time_end:].lstrip("0123456789.")
    if rest and rest[0] not in ";,\t\n\f\r ":
        return None
    rest = rest.lstrip("\t\n\f\r ")
    if rest[:1] in (";", ","):
        rest = rest[1:]
    rest = rest.lstrip("\t\n\f\r ")
    url = rest
    prefix = _REFRESH_URL_PREFIX_RE.match(rest)
    if prefix is None or not prefix.group():
        url = _strip_quotes(rest)  # no "url=": straight to "skip quotes"
    elif prefix.group(1):
        url = _strip_quotes(rest[prefix.end() :].lstrip("\t\n\f\r "))
    # else "u", "ur" or "url" without "=": the whole remainder is the URL (the spec's
    # jump to "parse").
    return url.strip()


def _strip_quotes(text: str) -> str:
    if text[:1] in ("'", '"'):
        quote, text = text[0], text[1:]
        text = text.split(quote, 1)[0]
    return text
