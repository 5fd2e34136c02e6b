"""The elements of a parsed page that the readers look at, gathered in one walk of the tree
(:class:`PageNodes`), and the small lexical rules of HTML the readers share: ASCII case
folding, ASCII whitespace, whitespace collapsing and matching a pattern at a position.
"""

from __future__ import annotations

import re
import string
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from parsel import Selector

__all__ = [
    "ASCII_LOWER",
    "HTML_INTEGER_RE",
    "HTML_SPACE_RE",
    "PageNodes",
    "collapse",
    "match_end",
    "nodes_of",
]


# HTML compares keywords (rel, http-equiv, type, ...) ASCII case-insensitively. str.lower()
# would also fold non-ASCII letters, so U+212A KELVIN SIGN would read as "k".
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# HTML's "ASCII whitespace" (no NBSP, no vertical tab): what separates rel tokens and
# srcset candidates.
HTML_SPACE_RE = re.compile(r"[\t\n\f\r ]+")
# HTML's "valid non-negative integer" (a srcset width, an og:video:duration in seconds).
HTML_INTEGER_RE = re.compile(r"[0-9]+\Z")


# The only elements the readers look at.
_READ_TAGS = ("link", "meta", "script", "img", "source", "video", "time", "title")


class PageNodes:
    """The elements of one parsed page that the readers look at, in document order, gathered
    in a single walk of the tree instead of one XPath query per reader.

    Each list holds what the XPath named beside it selects, as lxml elements (no parsel
    wrappers, which cost more than the walk itself). Build it once per page and pass it to
    every reader; a reader given a plain selector builds its own. It is a snapshot: a tree
    changed later is not seen.
    """

    __slots__ = (
        "_og",
        "_rels",
        "_root",
        "images",
        "itemprops",
        "links",
        "metas",
        "scripts",
        "title_element",
        "videos",
    )

    def __init__(self, selector: Selector) -> None:
        self._root = selector.root
        #: ``//link[@rel]``, and the lower-case ``rel`` of each
        self.links: list[Any] = []
        self._rels: list[str] = []
        #: ``//meta``
        self.metas: list[Any] = []
        #: ``//script[@type]``
        self.scripts: list[Any] = []
        #: ``//img | //picture//source | //meta[@property][@content]``
        self.images: list[Any] = []
        #: ``//video``
        self.videos: list[Any] = []
        #: ``//meta[@itemprop] | //time[@itemprop]``
        self.itemprops: list[Any] = []
        #: The first ``<title>`` in document order: the document's title, as HTML says
        self.title_element: Any = None
        self._og: dict[str, list[str]] | None = None
        self._root = selector.root
        for element in _document_elements(selector.root):
            tag = element.tag
            get = element.get
            if tag == "meta":
                self.metas.append(element)
                if get("property") is not None and get("content") is not None:
                    self.images.append(element)
                if get("itemprop") is not None:
                    self.itemprops.append(element)
            elif tag == "link":
                rel = get("rel")
                if rel is not None:
                    self.links.append(element)
                    self._rels.append(rel.translate(ASCII_LOWER))
            elif tag == "img":
                self.images.append(element)
            elif tag == "source":
                # libxml2 does not know <source> as a void element, so a run of <source>
                # tags nests: hence any <picture> ancestor, not only the parent.
                if next(element.iterancestors("picture"), None) is not None:
                    self.images.append(element)
            elif tag == "script":
                if get("type") is not None:
                    self.scripts.append(element)
            elif tag == "video":
                self.videos.append(element)
            elif tag == "title":
                if self.title_element is None:
                    self.title_element = element
            elif get("itemprop") is not None:  # <time>
                self.itemprops.append(element)

    @property
    def open_graph(self) -> dict[str, list[str]]:
        """``<meta property content>`` values by lower-case property, in document order."""
        if self._og is None:
            og: dict[str, list[str]] = {}
            for element in self.metas:
                prop, content = element.get("property"), element.get("content")
                if prop is not None and content is not None:
                    og.setdefault(prop.strip().translate(ASCII_LOWER), []).append(content)
            self._og = og
        return self._og

    @property
    def html_lang(self) -> str | None:
        """The ``lang`` attribute of the document's ``<html>`` element, as written; None
        without one. Read only when asked (a page with alternates needs its language)."""
        root = self._root
        if not hasattr(root, "getroottree"):  # a selector of no document (a text body)
            return None
        top = root.getroottree().getroot()
        if top is None or top.tag != "html":
            return None
        lang = top.get("lang")
        return None if lang is None else str(lang)

    @property
    def title(self) -> str | None:
        """The document's title as HTML gives it (the first ``<title>``'s text, its ASCII
        whitespace collapsed); None without one or when it is empty."""
        element = self.title_element
        if element is None:
            return None
        text = HTML_SPACE_RE.sub(" ", "".join(element.itertext())).strip(" ")
        return text or None

    def links_with_rel(self, rel: str) -> Iterator[Any]:
        """Each ``<link>`` element with ``rel`` among its (case-insensitive) rel tokens."""
        for value, element in zip(self._rels, self.links):
            if value == rel or (rel in value and rel in HTML_SPACE_RE.split(value)):
                yield element


def _document_elements(root: Any) -> Iterator[Any]:
    """Every element named in :data:`_READ_TAGS` in the document of ``root``, in document
    order, as ``//tag`` finds them. libxml2 can leave more than one top-level element (markup after
    ``</html>`` gets an ``<html>`` of its own), so the walk covers every one."""
    if root.getparent() is None and root.getprevious() is None and root.getnext() is None:
        return root.iter(*_READ_TAGS)  # type: ignore[no-any-return]  # the usual: one root
    top = root.getroottree().getroot()
    tops = [*reversed(list(top.itersiblings(preceding=True))), top, *top.itersiblings()]
    return chain.from_iterable(element.iter(*_READ_TAGS) for element in tops)


def nodes_of(source: Selector | PageNodes) -> PageNodes:
    """``source`` itself when it is already gathered, else its elements gathered now."""
    return source if isinstance(source, PageNodes) else PageNodes(source)


def match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` matched at ``pos`` ends, or ``pos`` when it does not match there."""
    match = pattern.match(text, pos)
    return pos if match is None else match.end()


def collapse(text: str) -> str:
    """``text`` with its whitespace runs made single spaces, and none at either end."""
    return " ".join(text.split())
