"""A page's content fingerprint: what counts as a change of a page's content, and what
makes two pages the same page (the definition is in docs/lastmod.rst, "Content").

Pure: read from the lxml tree of the parsel selector Scrapy already cached for the
response, so the page is not parsed again. The text is gathered by one compiled XPath
(evaluated in C) rather than a Python walk of the tree, since it runs once per page.
"""

from __future__ import annotations

import unicodedata
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no stubs

if TYPE_CHECKING:
    from parsel import Selector

__all__ = ["FINGERPRINT_LENGTH", "content_fingerprint", "text_fingerprint"]

#: Hex digits of a fingerprint: 64 bits. Two different texts of one origin sharing one is
#: about n²/2⁶⁵ for n pages (under 3 in 100 million for a million pages).
FINGERPRINT_LENGTH = 16

# Elements whose text nobody reads as the page's content: code and styles, fallbacks
# and templates, content the author hid, and the site's chrome (navigation and footers
# are the same on every page, and carry "generated at" times and copyright years).
_NOT_CONTENT = ("script", "style", "noscript", "template", "nav", "footer")
_HIDDEN = "ancestor-or-self::*[@hidden]"
# The text nodes of the title and of the body, outside the elements above. Comments,
# processing instructions and attributes are not text nodes, so never counted.
_VISIBLE_TEXT = etree.XPath(
    "(//title | //body)//text()[not(ancestor::"
    + " or ancestor::".join(_NOT_CONTENT)
    + f" or {_HIDDEN})]",
    smart_strings=False,
)


def text_fingerprint(text: str) -> str | None:
    """The fingerprint of visible text: its characters without any whitespace, in Unicode
    NFC (the same letters typed composed or decomposed look the same), hashed. ``None``
    when no character is left: a page with no text is no page's duplicate."""
    compact = "".join(text.split())
    if not compact:
        return None
    if not compact.isascii() and not unicodedata.is_normalized("NFC", compact):
        compact = unicodedata.normalize("NFC", compact)
    digest = blake2b(compact.encode("utf-8", "surrogatepass"), digest_size=FINGERPRINT_LENGTH // 2)
    return digest.hexdigest()


def content_fingerprint(selector: Selector | Any) -> str | None:
    """The fingerprint of a page's visible text (:func:`text_fingerprint`), read from a
    parsel ``Selector`` or an lxml element of the parsed page; ``None`` for a page without
    text (or a tree the XPath cannot read)."""
    root = getattr(selector, "root", selector)
    if not etree.iselement(root):
        return None
    try:
        nodes = _VISIBLE_TEXT(root)
    except (etree.XPathError, ValueError):
        return None
    return text_fingerprint("".join(nodes))
