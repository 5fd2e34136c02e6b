"""The lastmod decision (P4), once: which source's date a page's ``<lastmod>`` takes, which
of several records of one URL wins, and what the content seen across runs makes of it. The
rules for users are docs/lastmod.rst; the stores that apply them in their own language
(the SQLite store's SQL, the Redis store's Lua) are held to these functions by property
tests (tests/test_lastmod_decision.py).

1. **Sources** (:func:`first_stated`): the first valid date of the sources
   SITEMAPGEN_LASTMOD_SOURCES names, in its order; ``crawl_time`` only when named.
2. **Newest wins** (:func:`newest`): of several records from one source (the page's
   responses, or the spider's items), the latest lastmod.
3. **Precedence** (:func:`published`): an item's lastmod beats the page's.
4. **Observed** and **follows content** (:func:`settle`): at publish, against what the
   previous run saw of the page's content; ``observed`` is therefore the last source.

Pure: the values are W3C Datetime strings already validated (``facts.parse_lastmod``,
``facts.lastmod_from_http``); the dates in UTC compare as strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .facts import UrlFacts

__all__ = [
    "FINGERPRINT_VERSION",
    "OBSERVED",
    "TEXT_ONLY",
    "UNKNOWN_FINGERPRINT",
    "Seen",
    "first_stated",
    "newest",
    "observes",
    "published",
    "settle",
]

#: The source settled at publish, against the previous runs, so it can only come last.
OBSERVED = "observed"

#: The fingerprint of a note rebuilt from the published set (``state.repair``), which shows
#: each page's lastmod but not its content: the next sight counts as unchanged content, so
#: the lastmod published is kept, and the note then takes the real fingerprint.
UNKNOWN_FINGERPRINT = "?"

#: What the content fingerprint covers (:mod:`..pages.fingerprint`), as a number: a note
#: written under another one is no comparison with this run's fingerprint, so the state
#: keeps it with the notes, and an upgrade moves no lastmod (docs/lastmod.rst). Version 1
#: covered the text alone; version 2 adds the structured data, the canonical URL and the
#: main content's links.
FINGERPRINT_VERSION = 2

#: Before a fingerprint, a note of version 1, which is the fingerprint of the text alone:
#: compared with this run's text fingerprint (:attr:`.facts.Content.duplicate_key`), so a
#: text that changed across the upgrade still counts, and nothing else does yet.
TEXT_ONLY = "~"


def first_stated(
    sources: Iterable[str], dates: Callable[[str], Iterable[str | None]]
) -> str | None:
    """The lastmod the crawl states for a page: the first valid date of the first source
    in ``sources`` (the settings' order) that gives one, or ``None`` (the tag omitted,
    never a guess). ``dates(source)`` gives a source's candidates in its own order (the
    page's dates in docs/lastmod.rst's order), ``None`` for one found invalid (counted by
    the caller), which passes to the next; it is read only as far as needed, so a source
    after the one that gives a date costs nothing. :data:`OBSERVED` states nothing here."""
    for source in sources:
        if source == OBSERVED:
            continue
        for lastmod in dates(source):
            if lastmod is not None:
                return lastmod
    return None


def observes(sources: Iterable[str]) -> bool:
    """Whether the settings' sources name :data:`OBSERVED` (settled at publish)."""
    return OBSERVED in sources


def newest(old: str | None, new: str | None) -> str | None:
    """The later of two lastmods of one source, either may be missing."""
    return old if new is None or (old is not None and old > new) else new


def published(page_lastmod: str | None, item_lastmod: str | None) -> str | None:
    """The lastmod a URL's merged record publishes: the item's beats the page's."""
    return page_lastmod if item_lastmod is None else item_lastmod


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
    - Unchanged (or ``seen`` rebuilt, its fingerprint :data:`UNKNOWN_FINGERPRINT`, or
      written by the text-only fingerprint, :data:`TEXT_ONLY`, and the text unchanged):
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
    elif (
        seen.fingerprint != fingerprint
        and seen.fingerprint != UNKNOWN_FINGERPRINT
        and not _same_text(seen.fingerprint, content.duplicate_key)
    ):
        when = content.fetched
    else:
        when = seen.observed
        if follows_content and seen.lastmod is not None:
            if seen.fingerprint != fingerprint:  # a rebuilt or older note takes this one
                seen = Seen(fingerprint, when, seen.lastmod)
            return seen.lastmod, seen
    lastmod = facts.lastmod
    if lastmod is None and observed:
        lastmod = when
    return lastmod, Seen(fingerprint, when, lastmod)


def _same_text(noted: str, text: str) -> bool:
    """Whether a note of the text-only fingerprint (:data:`TEXT_ONLY`) found ``text``."""
    return noted[:1] == TEXT_ONLY and noted[1:] == text
