"""One urlset or index as the checker walks it, one child of the root at a time: what
the file has shown so far (:class:`FileState`), the text between the children, each
``<url>``'s own limits and namespaces, and what only the whole file shows, at its close."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information

from ..sitemaps.limits import (
    IMAGE_NS,
    MAX_IMAGES_PER_URL,
    MAX_NEWS_PER_SITEMAP,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
    NEWS_NS,
)
from ._violations import Violation

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._scope import _Scope, _Target

__all__ = ["FileState", "close_root", "free_previous", "url_extras"]

_IMAGE = f"{{{IMAGE_NS}}}image"
_NEWS = f"{{{NEWS_NS}}}news"


@dataclass(slots=True)
class FileState:
    """What one urlset or index has shown so far."""

    target: _Target
    is_index: bool
    scope: _Scope
    declared: frozenset[str]
    entries: int = 0
    first_over: int = 0  # line of the first entry past the count limit
    news: int = 0
    first_news_over: int = 0
    undeclared: set[str] = field(default_factory=set)


def url_extras(state: FileState, element: Any, line: int, news: int) -> Iterator[Violation]:
    """G7 (images in one ``<url>``, news entries in one file) and P14 (namespaces declared on
    the root) for one ``<url>``, whose ``<news:news>`` children number ``news``."""
    display = state.target.display

    images = sum(1 for _ in element.iterchildren(_IMAGE))
    if images > MAX_IMAGES_PER_URL:
        yield Violation(
            display,
            line,
            "G7",
            f"{images:,} <image:image> in one <url>; at most {MAX_IMAGES_PER_URL:,}",
        )
    state.news += news
    if news and not state.first_news_over and state.news > MAX_NEWS_PER_SITEMAP:
        state.first_news_over = line
    for child in element.iter(etree.Element):
        namespace = etree.QName(child).namespace
        if namespace and namespace not in state.declared and namespace not in state.undeclared:
            state.undeclared.add(namespace)
            yield Violation(
                display,
                child.sourceline,
                "P14",
                f"the namespace {namespace} is declared on an inner element; declare it on the root",
            )


def close_root(state: FileState, root: Any) -> Iterator[Violation]:
    """What only the whole file shows: text between the children (P2, P8), no entry at
    all, and the first entry past each count limit (P7, P8, G7)."""
    display = state.target.display
    if state.is_index:
        name, noun, limit, rule, count_rule = (
            "sitemapindex",
            "<sitemap>",
            MAX_SITEMAPS_PER_INDEX,
            "P8",
            "P8",
        )
    else:
        name, noun, limit, rule, count_rule = (
            "urlset",
            "<url>",
            MAX_URLS_PER_SITEMAP,
            "P2",
            "P7",
        )
    children = list(root)
    yield from _stray_text(
        state, root.text, root.sourceline, children[0].sourceline if children else None
    )
    for child in children:
        yield from _stray_text(state, child.tail, child.sourceline, None)
    if state.entries == 0:
        yield Violation(
            display,
            root.sourceline,
            rule,
            f"<{name}> holds no {noun}; at least one is required",
        )
    if state.first_over:
        yield Violation(
            display,
            state.first_over,
            count_rule,
            f"{state.entries:,} {noun} entries; at most {limit:,} in one file (this is the "
            f"first one past the limit): split it and list the parts in an index",
        )
    if state.first_news_over:
        yield Violation(
            display,
            state.first_news_over,
            "G7",
            f"{state.news:,} <news:news> entries; at most {MAX_NEWS_PER_SITEMAP:,} in one news "
            "sitemap (this is the first one past the limit)",
        )


def _stray_text(
    state: FileState, text: str | None, before: int, after: int | None
) -> Iterator[Violation]:
    """P2/P8 for text between the root's children; ``before`` and ``after`` are the lines of
    the elements around it (``after`` when known is exact, as an element may span lines)."""
    if text and text.strip():
        name = "sitemapindex" if state.is_index else "urlset"
        if after is not None:
            line = after - text[len(text.rstrip()) :].count("\n")
        else:
            line = before + text[: len(text) - len(text.lstrip())].count("\n")
        yield Violation(
            state.target.display,
            line,
            "P8" if state.is_index else "P2",
            f"text {text.strip()[:40]!r} directly inside <{name}>",
        )


def free_previous(state: FileState, element: Any) -> Iterator[Violation]:
    """Drop what is checked, so memory holds one entry whatever the file's size."""
    element.clear(keep_tail=True)
    parent = element.getparent()
    while (previous := element.getprevious()) is not None:
        yield from _stray_text(state, previous.tail, previous.sourceline, element.sourceline)
        parent.remove(previous)
