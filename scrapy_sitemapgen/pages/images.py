"""The images a page shows: one per ``<img>`` or ``<picture>`` (the largest of its ``src``
and ``srcset`` candidates) and ``og:image`` metas.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from .elements import ASCII_LOWER, HTML_INTEGER_RE, match_end, nodes_of
from .hrefs import UNFETCHABLE_SCHEMES, media_url

if TYPE_CHECKING:
    from collections.abc import Sequence

    from parsel import Selector

    from .elements import PageNodes

__all__ = [
    "ImageSources",
    "image_sources",
    "image_urls",
    "largest_candidate",
    "parse_srcset",
    "srcset_candidates",
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
_PLAIN_SRCSET_CANDIDATE_RE = re.compile(
    r"(?:^|,)[\t\n\f\r ]*([^\t\n\f\r ,]+)(?:[\t\n\f\r ]+([^\t\n\f\r ,]+))?"
)
_HTML_FLOAT_RE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")


def parse_srcset(value: str) -> list[str]:
    """The URLs of a ``srcset`` attribute, parsed as the HTML standard's "parse a srcset
    attribute" does: :func:`srcset_candidates` without their descriptors."""
    return [url for url, _ in srcset_candidates(value)]


def srcset_candidates(value: str) -> list[tuple[str, str]]:
    """The candidates of a ``srcset`` attribute, parsed as the HTML standard's "parse a
    srcset attribute" does: (URL, descriptor) pairs, the descriptor ``"300w"``, ``"1.5x"``
    or ``""`` (none: 1x).

    A URL runs to the next whitespace, and trailing commas end it, so image-CDN URLs with
    commas (``/w_100,h_100/x.jpg``) stay whole. Like the browser, a candidate with invalid
    descriptors (``2x 3x``, ``0w``) is dropped, because no browser would load its image; a
    height (``100w 50h``) is dropped from the descriptor, since only the width ranks.
    """
    if _PLAIN_SRCSET_RE.fullmatch(value) is not None:
        return _PLAIN_SRCSET_CANDIDATE_RE.findall(value)
    candidates: list[tuple[str, str]] = []
    end = len(value)
    pos = 0
    while True:
        pos = match_end(_SRCSET_GAP_RE, value, pos)
        if pos >= end:
            return candidates
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
            kept = [d for d in descriptors if d[-1] != "h"]
            candidates.append((url, kept[0] if kept else ""))


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


class ImageSources(NamedTuple):
    """The image values of a page, as written: what :func:`image_urls` reads."""

    #: One value per image the page shows, in document order, repeats included.
    shown: list[str]
    #: The candidates passed over for a larger one of the same image, repeats included.
    smaller: list[str]


def largest_candidate(
    srcsets: Sequence[str], src: str | None = None, width: str | None = None
) -> tuple[str | None, list[str]]:
    """Of one image's candidates, the one with the most detail for an image search, and
    the other candidates (distinct, in order, without the chosen URL).

    ``srcsets``: the ``srcset`` values in the order a browser reads them (a ``<picture>``'s
    ``<source>``\\ s, then its ``<img>``'s); ``src`` and ``width``: the ``<img>``'s
    attributes. The greatest width wins: a ``w`` descriptor is a width in pixels, and with
    a ``width`` attribute (a plain integer) a density ``x`` (none: 1x; ``src`` is 1x, as
    the HTML standard reads it) is that many times the width. Without a ``width``
    attribute a density names no width, so it ranks below every known width, and the
    densities compare among themselves. A tie goes to the candidate read first (``src``
    last), as a browser prefers it too. Empty values and ``data:``, ``javascript:``,
    ``blob:`` and ``about:`` URLs are no candidates: a lazy-loading placeholder never
    wins over the image itself. ``None`` when no candidate is left.
    """
    layout = _html_width(width)
    candidates = [pair for srcset in srcsets for pair in srcset_candidates(srcset)]
    if src is not None:
        candidates.append((src, ""))
    urls: dict[str, None] = {}  # the candidates' URLs, each once, in order
    best: str | None = None
    best_rank = (-1, 0.0)
    for url, descriptor in candidates:
        if not url.strip(_HTML_SPACE) or _unfetchable(url):
            continue
        urls[url] = None
        if descriptor.endswith("w"):
            rank = (1, float(descriptor[:-1]))
        else:
            density = float(descriptor[:-1]) if descriptor else 1.0
            rank = (0, density) if layout is None else (1, density * layout)
        if rank > best_rank:
            best, best_rank = url, rank
    if best is not None:
        del urls[best]
    return best, list(urls)


def image_urls(selector: Selector | PageNodes, base: str) -> list[str]:
    """Absolute URLs of the page's images, in document order, each once (first wins).

    Reads one image per ``<img>`` and per ``<picture>``: the largest of the ``<img src>``,
    the ``<img srcset>`` candidates and, inside ``<picture>``, the ``<source srcset>``
    candidates (:func:`largest_candidate`); and the ``content`` of ``og:image``,
    ``og:image:url`` and ``og:image:secure_url`` metas. Empty values and ``data:``,
    ``javascript:``, ``blob:`` and ``about:`` URLs are skipped, since none of them is an
    image a crawler can fetch. No cap is applied; the caller applies the 1,000-per-URL
    limit.
    """
    found: dict[str, None] = {}  # insertion-ordered; a repeat keeps its first place
    for raw in image_sources(selector).shown:
        url = media_url(base, raw)
        if url is not None:
            found[url] = None
    return list(found)


def image_sources(selector: Selector | PageNodes) -> ImageSources:
    """The values :func:`image_urls` reads, as written and in document order, repeats
    included: ``image_urls`` is ``media_url(base, value)`` of each shown, deduplicated. For
    a caller that can turn the common shapes into final URLs faster than joining them,
    and that counts the smaller candidates left out."""
    shown: list[str | None] = []
    smaller: list[str] = []
    # A <picture>'s image, chosen once all its elements are read: its place in ``shown``,
    # its srcsets, and its <img>'s src and width (libxml2 may nest the <img> in a <source>).
    pictures: dict[Any, tuple[int, list[str], list[str | None]]] = {}
    for element in nodes_of(selector).images:
        get = element.get
        tag = element.tag
        if tag == "meta":
            if get("property").strip().translate(ASCII_LOWER) in _OG_IMAGE_PROPERTIES:
                shown.append(get("content"))
            continue
        srcset = get("srcset")
        # An <img> looks for a <picture> only once the page has had a <source> in one: a
        # <picture> with its <img> alone is that <img>.
        picture = (
            next(element.iterancestors("picture"), None) if tag == "source" or pictures else None
        )
        if picture is None:
            src = get("src")
            if not srcset:
                if src is not None:
                    shown.append(src)
                continue
            best, others = largest_candidate((srcset,), src, get("width"))
            shown.append(best)
            smaller += others
            continue
        group = pictures.get(picture)
        if group is None:
            group = pictures[picture] = (len(shown), [], [None, None])
            shown.append(None)
        if srcset:
            group[1].append(srcset)
        if tag == "img":
            group[2][:] = [get("src"), get("width")]
    for place, srcsets, (src, width) in pictures.values():
        best, others = largest_candidate(srcsets, src, width)
        shown[place] = best
        smaller += others
    return ImageSources([value for value in shown if value is not None], smaller)


def _html_width(value: str | None) -> float | None:
    """An ``<img width>`` as a number of pixels, or ``None`` when it is none or not a plain
    integer (``100%``, ``auto``: no width a density can be multiplied by)."""
    if value is None:
        return None
    value = value.strip(_HTML_SPACE)
    return float(value) if HTML_INTEGER_RE.match(value) else None


def _unfetchable(value: str) -> bool:
    """Whether ``value`` names no fetchable resource (:func:`.hrefs.media_url`'s schemes),
    read as the URL parser does: padding stripped, tabs and newlines removed."""
    scheme, colon, _ = value.partition(":")
    if not colon:
        return False
    scheme = scheme.strip(_URL_PADDING).replace("\t", "").replace("\n", "").replace("\r", "")
    return scheme.translate(ASCII_LOWER) in UNFETCHABLE_SCHEMES


_HTML_SPACE = "\t\n\f\r "
# What the URL parser strips from both ends: C0 controls and space.
_URL_PADDING = "".join(map(chr, range(0x21)))
_OG_IMAGE_PROPERTIES = frozenset({"og:image", "og:image:url", "og:image:secure_url"})
