"""Which one of several pages with the same content is listed
(SITEMAPGEN_DEDUPE_CONTENT). The choice depends only on the set of pages and of the URLs
their canonical links name.

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
    """The preferred of duplicates sorts first: a URL some page's ``rel=canonical`` names
    (here: the page names itself; :func:`duplicate_choice` adds the URLs pages left out
    as ``canonical_elsewhere`` name), then the shortest URL, then the first in code-point
    order."""
    content = facts.content
    return (not (content is not None and content.canonical), len(facts.loc), facts.loc)


def duplicate_choice(entries: Iterable[UrlFacts], named: Iterable[str] = ()) -> dict[str, str]:
    """Duplicate key (:attr:`.facts.Content.duplicate_key`: the text's fingerprint) -> the
    ``loc`` listed of the pages that share it (every key of ``entries``, each with its
    preferred URL). ``named``: the URLs that the canonical
    links of pages left out as ``canonical_elsewhere`` name. The choice depends only on
    the set of pages and the set of named URLs, never on the order they were crawled or
    recorded in.

    With ``named``, both come in ``loc`` order (as a store gives them), and are read
    side by side: only the next named URL is held, not a set of them (a site whose every
    page carries a query string may name as many URLs as it has pages). Without it, the
    entries may come in any order."""
    best: dict[str, tuple[bool, int, str]] = {}
    targets = iter(named)
    target = next(targets, None)
    for facts in entries:
        content = facts.content
        if content is None:
            continue
        rank = _rank(facts)
        if target is not None:  # none named (the usual case): nothing more a page
            loc = facts.loc
            while target is not None and target < loc:
                target = next(targets, None)
            if target == loc:
                rank = (False, rank[1], loc)
        key = content.duplicate_key
        known = best.get(key)
        if known is None or rank < known:
            best[key] = rank
    return {fingerprint: rank[2] for fingerprint, rank in best.items()}
