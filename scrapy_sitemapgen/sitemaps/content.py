"""Which one of several pages with the same content is listed
(SITEMAPGEN_DEDUPE_CONTENT). The choice depends only on the set of pages.

Pure. What the state file keeps of each page's content across runs, and the lastmod
settled against it, are :mod:`.lastmod`'s (the decision) and :mod:`..state.content_notes`'s
(the notes). The rules are in docs/lastmod.rst.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .facts import UrlFacts

__all__ = ["duplicate_choice"]


def _rank(facts: UrlFacts) -> tuple[bool, int, str]:
    """The preferred of duplicates sorts first: a page that names itself canonical, then
    the shortest URL, then the first in code-point order."""
    content = facts.content
    return (not (content is not None and content.canonical), len(facts.loc), facts.loc)


def duplicate_choice(entries: Iterable[UrlFacts]) -> dict[str, str]:
    """Duplicate key (:attr:`.facts.Content.duplicate_key`: the text's fingerprint) -> the
    ``loc`` listed of the pages that share it (every key of ``entries``, each with its
    preferred URL). The choice depends only on the set of pages, never on the order they
    were crawled or recorded in."""
    best: dict[str, tuple[bool, int, str]] = {}
    for facts in entries:
        content = facts.content
        if content is None:
            continue
        rank = _rank(facts)
        key = content.duplicate_key
        known = best.get(key)
        if known is None or rank < known:
            best[key] = rank
    return {fingerprint: rank[2] for fingerprint, rank in best.items()}
