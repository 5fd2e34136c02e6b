"""What a page's content says across runs: the ``observed`` lastmod, lastmods that follow
the content (SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT), and which one of several pages with the
same content is listed (SITEMAPGEN_DEDUPE_CONTENT). The rules are in docs/lastmod.rst.

Pure. The state file keeps what was seen of each page (:class:`Seen`) across runs
(:mod:`..state.content_notes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .facts import UrlFacts

__all__ = ["UNKNOWN_FINGERPRINT", "Seen", "duplicate_choice", "settle"]

#: The fingerprint of a note rebuilt from the published set (``state.repair``), which shows
#: each page's lastmod but not its content: the next sight counts as unchanged content, so
#: the lastmod published is kept, and the note then takes the real fingerprint.
UNKNOWN_FINGERPRINT = "?"


@dataclass(frozen=True, slots=True)
class Seen:
    """What the state remembers of one URL's content: its fingerprint, when a run last
    found it changed (``None``: never, since its first sight), and the lastmod published
    with it."""

    fingerprint: str
    observed: str | None
    lastmod: str | None


def settle(
    facts: UrlFacts, seen: Seen | None, *, observed: bool, follows_content: bool
) -> tuple[str | None, Seen | None]:
    """The lastmod to publish for ``facts`` (whose ``lastmod`` is what the stated sources
    gave, or an item), and what to remember of it, given what was remembered (``seen``).

    - No fingerprint now (no HTML, no text, a record from a feed): the content was not
      seen, which is no change; the stated lastmod is published and ``seen`` kept.
    - First sight: ``observed`` gives nothing (never a guess).
    - Changed since ``seen``: ``observed`` gives the time this run fetched the page.
    - Unchanged (or ``seen`` rebuilt, its fingerprint :data:`UNKNOWN_FINGERPRINT`):
      ``observed`` gives the time it was last found changed; and with
      ``follows_content`` the lastmod published before is kept, whatever the sources now
      say, so a rebuilt site whose text did not change keeps its lastmods.
    """
    content = facts.content
    if content is None:
        return facts.lastmod, seen
    fingerprint = content.fingerprint
    if seen is None:
        when = None
    elif seen.fingerprint != fingerprint and seen.fingerprint != UNKNOWN_FINGERPRINT:
        when = content.fetched
    else:
        when = seen.observed
        if follows_content and seen.lastmod is not None:
            if seen.fingerprint != fingerprint:  # a rebuilt note takes the real one
                seen = Seen(fingerprint, when, seen.lastmod)
            return seen.lastmod, seen
    lastmod = facts.lastmod
    if lastmod is None and observed:
        lastmod = when
    return lastmod, Seen(fingerprint, when, lastmod)


def _rank(facts: UrlFacts) -> tuple[bool, int, str]:
    """The preferred of duplicates sorts first: a page that names itself canonical, then
    the shortest URL, then the first in code-point order."""
    content = facts.content
    return (not (content is not None and content.canonical), len(facts.loc), facts.loc)


def duplicate_choice(entries: Iterable[UrlFacts]) -> dict[str, str]:
    """Fingerprint -> the ``loc`` listed of the pages that share it (every fingerprint of
    ``entries``, each with its preferred URL). The choice depends only on the set of
    pages, never on the order they were crawled or recorded in."""
    best: dict[str, tuple[bool, int, str]] = {}
    for facts in entries:
        content = facts.content
        if content is None:
            continue
        rank = _rank(facts)
        known = best.get(content.fingerprint)
        if known is None or rank < known:
            best[content.fingerprint] = rank
    return {fingerprint: rank[2] for fingerprint, rank in best.items()}
