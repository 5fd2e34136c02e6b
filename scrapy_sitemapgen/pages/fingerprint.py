"""A page's content fingerprints: what counts as a change of a page's content (the
text, the structured data, the canonical link and the links of the main content), and
what makes two pages the same page to a reader (the text alone). The definition is in
docs/lastmod.rst, "Content".

Pure: read from the lxml tree of the parsel selector Scrapy already cached for the
response, so the page is not parsed again, and never changed. It runs once per page, so
the text is serialised by libxml2 (``tostring(method="text")``) a subtree at a time:
Python only walks down to the few elements left out (scripts, navigation, footers).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from hashlib import blake2b
from itertools import islice
from typing import TYPE_CHECKING, Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no stubs

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from parsel import Selector

__all__ = [
    "FINGERPRINT_LENGTH",
    "MAX_PROPERTIES",
    "MAX_PROPERTY_TEXT",
    "NOT_CONTENT",
    "change_fingerprint",
    "content_fingerprint",
    "main_text",
    "microdata_values",
    "structured_data",
    "text_fingerprint",
    "visible_text",
]

#: Hex digits of a fingerprint: 64 bits. Two different texts of one origin sharing one is
#: about n²/2⁶⁵ for n pages (under 3 in 100 million for a million pages).
FINGERPRINT_LENGTH = 16

#: Elements whose text nobody reads as the page's content: code and styles, fallbacks
#: and templates, and the site's chrome (navigation and footers are the same on every
#: page, and carry "generated at" times and copyright years).
NOT_CONTENT = ("script", "style", "noscript", "template", "nav", "footer")

# What str.split() takes for whitespace among ASCII characters: the fast path removes
# exactly these, so both paths give the same text.
_ASCII_SPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
#: The last character str.split() takes for whitespace (U+3000 IDEOGRAPHIC SPACE).
LAST_SPACE = 0x3000
# Every other character str.split() takes for whitespace (NBSP, U+2000 to U+200A, ...), in
# UTF-8: removed from the bytes libxml2 serialises, so that a text that is not ASCII is not
# split into words and joined again. In UTF-8 a character's bytes never start inside
# another's, so no match falls across two characters.
_OTHER_SPACE_RE = re.compile(
    b"|".join(
        re.escape(chr(code).encode()) for code in range(0x80, LAST_SPACE + 1) if chr(code).isspace()
    )
)


def text_fingerprint(text: str) -> str | None:
    """The fingerprint of visible text: its characters without any whitespace, in Unicode
    NFC (the same letters typed composed or decomposed look the same), hashed. ``None``
    when no character is left: a page with no text is no page's duplicate."""
    return _fingerprint(text.encode("utf-8", "surrogatepass"))


def _fingerprint(data: bytes) -> str | None:
    """:func:`text_fingerprint` of the UTF-8 ``data`` (what libxml2 serialises): the bytes
    of ``"".join(text.split())`` in NFC, without making the words."""
    data = data.translate(None, _ASCII_SPACE)
    if not data.isascii():
        data = _OTHER_SPACE_RE.sub(b"", data)
        text = data.decode("utf-8", "surrogatepass")
        if not unicodedata.is_normalized("NFC", text):
            data = unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")
    if not data:
        return None
    return blake2b(data, digest_size=FINGERPRINT_LENGTH // 2).hexdigest()


def _text(element: Any) -> bytes:
    return etree.tostring(element, method="text", encoding="utf-8", with_tail=False)  # type: ignore[no-any-return]


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _text_without(element: Any, skip: _Skip, parts: list[bytes]) -> None:
    """The text of ``element`` into ``parts`` without the subtrees ``skip`` leaves out
    (their tails are outside them, so kept).

    A site's chrome mostly sits at the ends of its parent (a navigation first; a footer
    and scripts last): left-out children at the two ends are cut out of the element's
    text serialised in one call, by their lengths, and the children between them are not
    visited at all. Only when a left-out element, or one with such an element below, sits
    between kept children are the children read one by one."""
    whole = _text(element)
    start = len(_encoded(element.text)) if element.text else 0
    end = len(whole)
    count = len(element)
    first, last = 0, count
    head: list[bytes] = []
    tail_parts: list[bytes] = []
    consumed = 0
    while first < last:  # the left-out children at the start
        child = element[first]
        if child not in skip.left_out:
            break
        size, tail = skip.sizes(child)
        start += size
        if tail:
            head.append(tail)
            start += len(tail)
        first += 1
        consumed += 1
    while last > first:  # and at the end
        child = element[last - 1]
        if child not in skip.left_out:
            break
        size, tail = skip.sizes(child)
        end -= size
        if tail:
            tail_parts.append(tail)
            end -= len(tail)
        last -= 1
        consumed += 1
    if element.text:
        parts.append(_encoded(element.text))
    parts.extend(head)
    if consumed == skip.special.get(element, 0):  # nothing else left out in between
        parts.append(whole[start:end])
    else:
        for index in range(first, last):
            child = element[index]
            if child in skip.above:
                _text_without(child, skip, parts)
            elif child not in skip.left_out:
                parts.append(etree.tostring(child, method="text", encoding="utf-8", with_tail=True))
                continue
            if child.tail:
                parts.append(_encoded(child.tail))
    parts.extend(reversed(tail_parts))


class _Skip:
    """What one page's walk leaves out: ``outermost`` (the outermost :data:`NOT_CONTENT`
    elements, in document order), ``left_out`` (those, and the comments and processing
    instructions beside the walk, which serialise as their own text when serialised
    alone), ``above`` (the elements with a left-out one below), and ``special``: how many
    children of each element on the walk are either."""

    __slots__ = ("above", "left_out", "outermost", "special")

    def __init__(self, body: Any, found: list[Any]) -> None:
        left_out = set(found)
        above: set[Any] = {body}
        outermost = []
        for element in found:
            ancestors = []
            for ancestor in element.iterancestors():
                if ancestor is body:
                    break
                ancestors.append(ancestor)
            if left_out.isdisjoint(ancestors):  # the others go with it
                outermost.append(element)
                above.update(ancestors)
        self.outermost = outermost
        self.left_out = set(outermost)
        for element in above:
            self.left_out.update(element.iterchildren(etree.Comment, etree.ProcessingInstruction))
        self.above = above
        special: dict[Any, int] = {}
        for element in (*self.left_out, *above):
            if element is not body:
                parent = element.getparent()
                special[parent] = special.get(parent, 0) + 1
        self.special = special

    @staticmethod
    def sizes(child: Any) -> tuple[int, bytes]:
        """The bytes a left-out child's own text takes in its parent's serialisation (none
        for a comment: only an element's text is serialised), and its tail."""
        size = len(_text(child)) if isinstance(child.tag, str) else 0
        return size, _encoded(child.tail) if child.tail else b""


def _title_and_body(root: Any) -> tuple[Any, Any]:
    """The page's ``<title>`` and ``<body>`` (either may be None). libxml2 puts them in
    their places (``html/head/title``, ``html/body``), so they are looked for there first,
    and anywhere only on a tree without them (a fragment, markup after ``</html>``)."""
    title = body = None
    for child in root:
        tag = child.tag
        if tag == "head":
            for element in child:
                if element.tag == "title":
                    title = element
                    break
        elif tag == "body":
            body = child
    if title is None:
        title = next(root.iter("title"), None)
    if body is None:
        body = next(root.iter("body"), None)
    return title, body


def visible_text(root: Any) -> str:
    """The page's title, then the text of its body outside :data:`NOT_CONTENT`, as the
    text nodes join (comments, attributes and markup are not text)."""
    return _visible(root)[0].decode("utf-8", "surrogatepass")


def _visible(root: Any) -> tuple[bytes, list[Any]]:
    """:func:`visible_text` in UTF-8, as libxml2 serialises it (no decoding), and the
    outermost elements of the body it left out."""
    title, body = _title_and_body(root)
    # A title holds only text (HTML parses it as RCDATA): no serialiser needed.
    parts = [] if title is None or not title.text else [_encoded(title.text)]
    if body is None:
        return b"".join(parts), []
    found = list(body.iter(*NOT_CONTENT))
    if not found:  # no Python walk at all
        parts.append(_text(body))
        return b"".join(parts), []
    skip = _Skip(body, found)
    _text_without(body, skip, parts)
    return b"".join(parts), skip.outermost


def _root(selector: Selector | Any) -> Any:
    """The root element of the page of a parsel ``Selector`` or lxml element; None for
    anything else."""
    root: Any = getattr(selector, "root", selector)
    if not etree.iselement(root):
        return None
    if root.getparent() is not None:
        root = root.getroottree().getroot()
    return root


def content_fingerprint(selector: Selector | Any) -> str | None:
    """The fingerprint of a page's visible text (:func:`text_fingerprint` of
    :func:`visible_text`), read from a parsel ``Selector`` or an lxml element of the
    parsed page; ``None`` for a page without text. It is what makes two pages the same
    page to a reader (the duplicate key), and the first part of
    :func:`change_fingerprint`."""
    root = _root(selector)
    return None if root is None else _fingerprint(_visible(root)[0])


#: Every ``href`` of an ``<a>`` below an element, and in the whole document: strings
#: straight from libxml2, with no element object made for each link.
_HREFS_BELOW = etree.XPath(".//a/@href", smart_strings=False)
_HREFS = etree.XPath("//a/@href", smart_strings=False)


def main_text(selector: Selector | Any) -> tuple[str | None, list[str]]:
    """:func:`content_fingerprint`, and the ``href`` of each ``<a>`` of the page's main
    content: outside the elements the text leaves out (a site's navigation and footer
    links are on every page, and change with the site, not the page). Each distinct one
    once, in the order of its first appearance in the document: a set, as
    :func:`change_fingerprint` reads the links. An href both in the chrome and in the main
    content is in the main content."""
    root = _root(selector)
    if root is None:
        return None, []
    text, outermost = _visible(root)
    fingerprint = _fingerprint(text)
    if fingerprint is None:
        return None, []
    hrefs: list[str] = _HREFS(root)
    if not outermost or not hrefs:
        return fingerprint, list(dict.fromkeys(hrefs))
    chrome = Counter(href for element in outermost for href in _HREFS_BELOW(element))
    counts = Counter(hrefs)
    return fingerprint, [href for href in counts if counts[href] > chrome[href]]


# The canonical form of a JSON-LD block: keys sorted, no whitespace, characters as they are.
# The standard library's, always: another encoder (orjson writes some numbers otherwise)
# would change the fingerprints of a site with the extra installed or not.
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode

# Elements whose microdata property value is an attribute (WHATWG HTML, "Values"); any
# other element's value is its text (a <time> without datetime too).
_VALUE_ATTRIBUTES = {
    "meta": "content",
    "audio": "src",
    "embed": "src",
    "iframe": "src",
    "img": "src",
    "source": "src",
    "track": "src",
    "video": "src",
    "a": "href",
    "area": "href",
    "link": "href",
    "object": "data",
    "data": "value",
    "meter": "value",
    "time": "datetime",
}


#: Microdata properties read of a page, and characters of a property's text: a page of a
#: million properties, or of nested ones each holding the text of all below it, costs no
#: more than this. The text a reader sees is in the text fingerprint anyway.
MAX_PROPERTIES = 1000
MAX_PROPERTY_TEXT = 1000


def microdata_values(root: Any) -> list[str]:
    """Each microdata property of the page, in document order: its names, a tab, its value
    as microdata defines it (an attribute for the elements of ``_VALUE_ATTRIBUTES``, the
    text for the others, whitespace collapsed; an item's properties are values of their
    own, so an ``itemscope`` is none). One walk of the whole tree, by libxml2: the caller
    asks only for a page that has the attribute at all. At most :data:`MAX_PROPERTIES`,
    each text cut at :data:`MAX_PROPERTY_TEXT` characters."""
    values = []
    found = root.xpath("//*[@itemprop]", smart_strings=False)
    for element in islice(found, MAX_PROPERTIES):
        names = " ".join(element.get("itemprop").split())
        if element.get("itemscope") is not None:
            values.append(f"{names}\t")
            continue
        attribute = _VALUE_ATTRIBUTES.get(element.tag)
        value = None if attribute is None else element.get(attribute)
        if value is None:
            value = "" if attribute is not None and element.tag != "time" else _itemtext(element)
        values.append(f"{names}\t{' '.join(value.split())}")
    return values


def _itemtext(element: Any) -> str:
    """The element's text, its first :data:`MAX_PROPERTY_TEXT` characters."""
    parts = []
    size = 0
    for text in element.itertext():
        parts.append(text)
        size += len(text)
        if size >= MAX_PROPERTY_TEXT:
            break
    return "".join(parts)[:MAX_PROPERTY_TEXT]


def structured_data(
    blocks: Iterable[Any], unparsed: Iterable[str], microdata: Iterable[str]
) -> list[str]:
    """The page's structured data, each piece as text that changes only when its data
    does: each parsed JSON-LD block in canonical JSON (key order and whitespace do not
    count), then each block that did not parse as its text with whitespace collapsed,
    then the :func:`microdata_values`."""
    found = []
    for block in blocks:
        try:
            found.append(_canonical_json(block))
        except (ValueError, RecursionError):  # nested past what the encoder walks
            found.append("\0nested")
    found.extend(" ".join(text.split()) for text in unparsed)
    found.extend(microdata)
    return found


def change_fingerprint(
    text: str, structured: Sequence[str], canonical: str | None, links: Iterable[str]
) -> str:
    """The fingerprint of what counts as a change of a page's content: its text's
    fingerprint (``text``: :func:`content_fingerprint`), its ``structured`` data
    (:func:`structured_data`), its ``canonical`` URL, and the targets of the links in its
    main content (resolved and normalised by the caller) as a set: their order and
    repeats are no change, as a menu reordered or a link repeated leads nowhere new.

    A page with none of the three has the fingerprint of its text, so that adding the
    first one is a change and a page of text alone keeps the fingerprint it had."""
    targets = sorted(set(links))
    if not structured and canonical is None and not targets:
        return text
    # One piece a line: none holds a line feed (canonical JSON escapes it, the rest is
    # whitespace-collapsed or a URL, which the URL parser strips of it), and a NUL line
    # opens each part, so no piece can pass for two, nor one part for another.
    data = "\n".join([text, "\0S", *structured, "\0C", canonical or "", "\0L", *targets]).encode(
        "utf-8", "surrogatepass"
    )
    return blake2b(data, digest_size=FINGERPRINT_LENGTH // 2).hexdigest()
