"""A page's content fingerprint: what counts as a change of a page's content, and what
makes two pages the same page (the definition is in docs/lastmod.rst, "Content").

Pure: read from the lxml tree of the parsel selector Scrapy already cached for the
response, so the page is not parsed again, and never changed. It runs once per page, so
the text is serialised by libxml2 (``tostring(method="text")``) a subtree at a time:
Python only walks down to the few elements left out (scripts, navigation, footers).
"""

from __future__ import annotations

import unicodedata
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no stubs

if TYPE_CHECKING:
    from parsel import Selector

__all__ = [
    "FINGERPRINT_LENGTH",
    "NOT_CONTENT",
    "content_fingerprint",
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


def text_fingerprint(text: str) -> str | None:
    """The fingerprint of visible text: its characters without any whitespace, in Unicode
    NFC (the same letters typed composed or decomposed look the same), hashed. ``None``
    when no character is left: a page with no text is no page's duplicate."""
    return _fingerprint(text.encode("utf-8", "surrogatepass"))


def _fingerprint(data: bytes) -> str | None:
    """:func:`text_fingerprint` of the UTF-8 ``data`` (what libxml2 serialises)."""
    if data.isascii():
        data = data.translate(None, _ASCII_SPACE)
    else:
        compact = "".join(data.decode("utf-8", "surrogatepass").split())
        if not unicodedata.is_normalized("NFC", compact):
            compact = unicodedata.normalize("NFC", compact)
        data = compact.encode("utf-8", "surrogatepass")
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
    """What one page's walk leaves out: ``left_out`` (the outermost :data:`NOT_CONTENT`
    elements, and the comments and processing instructions beside the walk, which
    serialise as their own text when serialised alone), ``above`` (the elements with a
    left-out one below), and ``special``: how many children of each element on the walk
    are either."""

    __slots__ = ("above", "left_out", "special")

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
    return _visible(root).decode("utf-8", "surrogatepass")


def _visible(root: Any) -> bytes:
    """:func:`visible_text` in UTF-8, as libxml2 serialises it (no decoding)."""
    title, body = _title_and_body(root)
    # A title holds only text (HTML parses it as RCDATA): no serialiser needed.
    parts = [] if title is None or not title.text else [_encoded(title.text)]
    if body is None:
        return b"".join(parts)
    found = list(body.iter(*NOT_CONTENT))
    if not found:  # no Python walk at all
        parts.append(_text(body))
        return b"".join(parts)
    _text_without(body, _Skip(body, found), parts)
    return b"".join(parts)


def content_fingerprint(selector: Selector | Any) -> str | None:
    """The fingerprint of a page's visible text (:func:`text_fingerprint` of
    :func:`visible_text`), read from a parsel ``Selector`` or an lxml element of the
    parsed page; ``None`` for a page without text."""
    root: Any = getattr(selector, "root", selector)
    if not etree.iselement(root):
        return None
    if root.getparent() is not None:
        root = root.getroottree().getroot()
    return _fingerprint(_visible(root))
