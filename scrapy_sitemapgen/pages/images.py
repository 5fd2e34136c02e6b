"""The images a page shows: ``<img src>``, ``srcset`` candidates (``<img>``, and ``<source>``
inside ``<picture>``) and ``og:image`` metas.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .elements import ASCII_LOWER, HTML_INTEGER_RE, match_end, nodes_of
from .hrefs import media_url

if TYPE_CHECKING:
    from parsel import Selector

    from .elements import PageNodes

__all__ = [
    "image_sources",
    "image_urls",
    "parse_srcset",
]

# HTML "parse a srcset attribute": the pieces of the candidate tokenizer.
_SRCSET_GAP_RE = re.compile(r"[\t\n\f\r ,]*")
_SRCSET_SPACE_RE = re.compile(r"[\t\n\f\r ]*")
_SRCSET_URL_RE = re.compile(r"[^\t\n\f\r ]+")
# One descriptor: runs to whitespace or a comma, except inside parentheses.
_SRCSET_DESCRIPTOR_RE = re.compile(r"(?:[^\t\n\f\r ,(]+|\([^)]*\)?)+")
# The common shape, read without the tokenizer (same result): candidates of a URL without
# commas and at most one plainly valid descriptor ("480w", "1.5x"), each comma after
# whitespace or a descriptor (a comma right after the URL belongs to it, or ends it).
_PLAIN_SRCSET_RE = re.compile(
    r"[\t\n\f\r ]*(?:[^\t\n\f\r ,]+(?:"
    r"[\t\n\f\r ]+(?:(?:[1-9][0-9]*w|(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)x)[\t\n\f\r ]*)?"
    r",[\t\n\f\r ]*(?=[^\t\n\f\r ,])"
    r"|(?:[\t\n\f\r ]+(?:(?:[1-9][0-9]*w|(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)x)[\t\n\f\r ]*)?)?\Z))*"
)
_PLAIN_SRCSET_URL_RE = re.compile(r"(?:^|,)[\t\n\f\r ]*([^\t\n\f\r ,]+)")
_HTML_FLOAT_RE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")


def parse_srcset(value: str) -> list[str]:
    """The URLs of a ``srcset`` attribute, parsed as the HTML standard's "parse a srcset
    attribute" does.

    A URL runs to the next whitespace, and trailing commas end it, so image-CDN URLs with
    commas (``/w_100,h_100/x.jpg``) stay whole. Descriptors (``1x``, ``300w``, ``1.5x``)
    are skipped. Like the browser, a candidate with invalid descriptors (``2x 3x``,
    ``0w``) is dropped, because no browser would load its image.
    """
    if _PLAIN_SRCSET_RE.fullmatch(value) is not None:
        return _PLAIN_SRCSET_URL_RE.findall(value)
    urls: list[str] = []
    end = len(value)
    pos = 0
    while True:
        pos = match_end(_SRCSET_GAP_RE, value, pos)
        if pos >= end:
            return urls
        url_match = _SRCSET_URL_RE.match(value, pos)
        assert url_match is not None  # value[pos] is not whitespace
        url, pos = url_match.group(), url_match.end()
        descriptors: list[str] = []
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            while True:
                pos = match_end(_SRCSET_SPACE_RE, value, pos)
                if pos >= end:
                    break
                if value[pos] == ",":
                    pos += 1
                    break
                descriptor = _SRCSET_DESCRIPTOR_RE.match(value, pos)
                assert descriptor is not None  # value[pos] is neither whitespace nor a comma
                descriptors.append(descriptor.group())
                pos = descriptor.end()
        if _valid_descriptors(descriptors):
            urls.append(url)


def _valid_descriptors(descriptors: list[str]) -> bool:
    """The HTML standard's srcset descriptor parser: at most one of ``<n>w`` and ``<f>x``,
    ``<n>h`` (future-compat) only beside ``w``, integers positive, densities non-negative."""
    width = density = height = False
    for descriptor in descriptors:
        number, kind = descriptor[:-1], descriptor[-1]
        if kind in ("w", "h"):
            if not HTML_INTEGER_RE.match(number) or not number.strip("0"):
                return False
            if density or (width if kind == "w" else height):
                return False
            if kind == "w":
                width = True
            else:
                height = True
        elif kind == "x":
            if width or density or height or not _HTML_FLOAT_RE.match(number):
                return False
            if float(number) < 0:
                return False
            density = True
        else:
            return False
    return width or not height


def image_urls(selector: Selector | PageNodes, base: str) -> list[str]:
    """Absolute URLs of the page's images, in document order, each once (first wins).

    Reads ``<img src>``, the ``<img srcset>`` candidates, the ``srcset`` candidates of
    ``<source>`` inside ``<picture>``, and the ``content`` of ``og:image``, ``og:image:url``
    and ``og:image:secure_url`` metas. Empty values and ``data:``, ``javascript:``,
    ``blob:`` and ``about:`` URLs are skipped, since none of them is an image a crawler can
    fetch. No cap is applied; the caller applies the 1,000-per-URL limit.
    """
    found: dict[str, None] = {}  # insertion-ordered; a repeat keeps its first place
    for raw in image_sources(selector):
        url = media_url(base, raw)
        if url is not None:
            found[url] = None
    return list(found)


def image_sources(selector: Selector | PageNodes) -> list[str]:
    """The values :func:`image_urls` reads, as written and in document order, repeats
    included: ``image_urls`` is ``media_url(base, value)`` of each, deduplicated. For a
    caller that can turn the common shapes into final URLs faster than joining them."""
    values: list[str] = []
    for element in nodes_of(selector).images:
        get = element.get
        tag = element.tag
        if tag == "meta":
            if get("property").strip().translate(ASCII_LOWER) in _OG_IMAGE_PROPERTIES:
                values.append(get("content"))
            continue
        if tag == "img":
            src = get("src")
            if src is not None:
                values.append(src)
        srcset = get("srcset")
        if srcset:
            values += parse_srcset(srcset)
    return values


_OG_IMAGE_PROPERTIES = frozenset({"og:image", "og:image:url", "og:image:secure_url"})
