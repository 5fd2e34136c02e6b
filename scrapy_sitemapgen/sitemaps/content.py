"""What a page's content says across runs: which one of several pages with the same
content is listed (SITEMAPGEN_DEDUPE_CONTENT), and each entry's lastmod settled against
the previous run's notes (the decision, ``observed`` and following the content, is
:func:`.lastmod.settle`'s). The rules are in docs/lastmod.rst.

Pure. An origin's entries come in ``loc`` order, as every store gives them, and so do the
previous run's notes in the state file: following them is one merge pass, with one block
of notes in memory, as the URL sets are compared (:class:`manifest.UrlNotes`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .lastmod import UNKNOWN_FINGERPRINT, Seen, settle

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from .facts import UrlFacts

# Seen, settle and UNKNOWN_FINGERPRINT are the lastmod decision's (.lastmod); named here
# too because the state's notes and their readers import them from this module.
__all__ = ["UNKNOWN_FINGERPRINT", "ContentNotes", "Seen", "duplicate_choice", "settle"]


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


#: The notes of one URL as the state keeps them: (loc, what was seen).
Note = tuple[str, Seen]


class ContentNotes:
    """One origin's entries as this run publishes them, in ``loc`` order, each with the
    lastmod :func:`settle` gives against the previous run's notes (read in the same
    order), and the notes for the next run handed to ``save`` in blocks of ``block``
    (``save=None``: another pass over the same entries, which keeps nothing). A URL the
    run did not publish keeps no note: when it comes back, it is new."""

    def __init__(
        self,
        previous: Iterator[Note],
        save: Callable[[list[Note]], None] | None,
        *,
        observed: bool,
        follows_content: bool,
        block: int,
    ) -> None:
        self._previous = previous
        self._head = next(previous, None)
        self._save = save
        self._observed = observed
        self._follows = follows_content
        self._block_size = block
        self._block: list[Note] = []

    def follow(self, entries: Iterable[UrlFacts]) -> Iterator[UrlFacts]:
        """``entries`` with their lastmod settled."""
        save = self._save
        for facts in entries:
            loc = facts.loc
            head = self._head
            seen = None
            if head is not None:  # a first run, and a feed's build, has no notes to follow
                while head is not None and head[0] < loc:
                    head = next(self._previous, None)
                if head is not None and head[0] == loc:
                    seen = head[1]
                    head = next(self._previous, None)
                self._head = head
            if facts.content is None:
                # settle's first rule, without its call: a feed's every record (no
                # fingerprint) keeps its lastmod and what was seen of it.
                if seen is not None and save is not None:
                    self._note((loc, seen))
                yield facts
                continue
            lastmod, note = settle(
                facts, seen, observed=self._observed, follows_content=self._follows
            )
            if note is not None and self._save is not None:
                self._note((loc, note))
            if lastmod != facts.lastmod:
                facts = dataclasses.replace(facts, lastmod=lastmod)
            yield facts

    def _note(self, note: Note) -> None:
        self._block.append(note)
        if len(self._block) >= self._block_size and self._save is not None:
            self._save(self._block)
            self._block = []

    def finish(self) -> None:
        """Save the last block, once every entry was followed."""
        if self._block and self._save is not None:
            self._save(self._block)
            self._block = []
