"""URLs as a page writes them (hrefs, srcs, contents) made absolute against the page's base,
and media URLs without the schemes that name no fetchable resource."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from ..sitemaps.urls import join_prefix
from .elements import ASCII_LOWER

__all__ = [
    "UNFETCHABLE_SCHEMES",
    "absolute",
    "media_url",
]

# URLs that name no fetchable resource: inline data, script, in-memory objects.
UNFETCHABLE_SCHEMES = frozenset({"data", "javascript", "blob", "about"})

# URLs urljoin() gives back unchanged, or (rooted) after the base's "scheme://netloc": no
# character the URL parser strips (C0, space, tab, newline), no ";" path parameters, no
# empty query, no fragment; a rooted path also holds no dot segment (checked apart).
_PLAIN_ABSOLUTE_RE = re.compile(
    r"https?://[^\x00-\x20\x7f\\/?#]+(?:/[^\x00-\x20\x7f\\;?#]*)?(?:\?[^\x00-\x20\x7f\\#]+)?"
)
_PLAIN_ROOTED_RE = re.compile(r"/(?![/\\])[^\x00-\x20\x7f\\;?#]*(?:\?[^\x00-\x20\x7f\\#]+)?")


def absolute(base: str, value: str) -> str | None:
    """``urljoin(base, value.strip())``; ``None`` for an empty value. A value the URL parser
    rejects (such as an unclosed IPv6 bracket) comes back as written, so the caller's URL
    check refuses it and counts it rather than it vanishing unseen.

    The two shapes most page URLs have skip urljoin's parse and rebuild (same result): an
    absolute http(s) URL that rebuilding leaves unchanged (urljoin returns those as they
    are), and a path from the root of an http(s) base."""
    value = value.strip()
    if not value:
        return None
    if value[0] == "/":
        if _PLAIN_ROOTED_RE.fullmatch(value) is not None and "/." not in value:
            prefix = join_prefix(base)
            if prefix is not None:
                return prefix + value
    elif _PLAIN_ABSOLUTE_RE.fullmatch(value) is not None:
        return value
    try:
        return urljoin(base, value)
    except ValueError:
        return value


def media_url(base: str, value: str) -> str | None:
    """:func:`absolute`, minus URLs of no fetchable resource. The scheme is checked after
    joining, because the URL parser drops tabs and newlines, so ``da\\tta:`` means
    ``data:``."""
    url = absolute(base, value)
    if url is None:
        return None
    if url.startswith(("http://", "https://")):
        return url
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        return url  # unparsable: the caller refuses and counts it
    return None if scheme.translate(ASCII_LOWER) in UNFETCHABLE_SCHEMES else url
