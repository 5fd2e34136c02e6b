"""The changes feed (SITEMAPGEN_CHANGES_FEED): ``changes.atom`` beside each origin's
sitemaps, the URLs added or changed lately, newest first, over several runs (the last
entries are kept in the state file, :data:`..state.changes_feed_notes.CHANGES_FEED`). What changed
is what IndexNow's entry fingerprints find (:mod:`.entry_prints`: a URL whose ``<url>`` entry
is new or differs), handed here a block at a time; the Atom is
:mod:`.changes_feed_atom`'s. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.facts import clean_title
from ..sitemaps.indexnow import ADDED, CHANGED
from ..sitemaps.naming import CHANGES_FEED_NAME
from ..state.changes_feed_notes import CHANGES_FEED, ChangesFeedEntry, encode_entries
from ..state.notes import BLOCK
from .changes_feed_atom import atom_time, changes_feed_xml
from .origin_watch import ExtraFile, OriginWatch

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..publish.staging import OriginSet
    from ..sitemaps.facts import UrlFacts
    from ..state.indexnow_changes import Changes
    from ..state.notes import Save
    from .origin_watch import OriginStart

__all__ = ["CHANGES_FEED_KIND", "ChangesFeedNotes", "ChangesFeedWatch", "changes_feed"]

#: The feed's ``kind`` in the manifest: an Atom feed, neither a sitemap nor another feed.
CHANGES_FEED_KIND = "changes_feed"


def changes_feed(start: OriginStart) -> ChangesFeedWatch | None:
    """The watch of an origin when SITEMAPGEN_CHANGES_FEED is on."""
    return ChangesFeedWatch(start) if start.config.changes_feed else None


class ChangesFeedWatch(OriginWatch):
    """Takes IndexNow's findings (as a :class:`.origin_watch.ChangeWatch`) into the origin's
    :class:`ChangesFeedNotes`, and at the finish stages the feed (G1), counts its entries, and
    names it in the robots.txt lines when asked (SITEMAPGEN_CHANGES_FEED_IN_ROBOTS:
    Google reads a feed named in a ``Sitemap:`` line)."""

    def __init__(self, start: OriginStart) -> None:
        config = start.config
        previous, save = start.state.notes(CHANGES_FEED, config.state_key, start.origin.name)
        self.notes = ChangesFeedNotes(previous, save, config.changes_feed_entries, start.stamp)
        self._url = f"{start.base_url}{CHANGES_FEED_NAME}"
        self._site = start.origin.root
        self._in_robots = config.changes_feed_in_robots
        # A feed of no entries is as old as the feed file published before: the same bytes
        # from run to run, not a new stamp each time.
        self._since = start.previous_files.get(CHANGES_FEED_NAME, ("", ""))[1] or start.stamp
        start.change_watches.append(self.notes)

    def finish(self, origin_set: OriginSet) -> list[ExtraFile]:
        entries = self.notes.finish()
        data = changes_feed_xml(
            entries, feed_url=self._url, site=self._site, fallback_updated=self._since
        )
        origin_set.feed_entries = len(entries)
        if self._in_robots:
            origin_set.index_urls = (*origin_set.index_urls, self._url)
        return [ExtraFile(CHANGES_FEED_NAME, CHANGES_FEED_KIND, data, len(entries))]


class ChangesFeedNotes:
    """One origin's feed for this run: the previous run's entries (``previous``, in the
    feed's order), this run's changes (:meth:`seen` each block of URLs written,
    :meth:`changed` with what IndexNow's notes found in it), and
    :meth:`finish`, which gives the feed and saves it through ``save`` for the next run.

    A URL appears once, with its newest change; a URL no longer written (removed) is
    dropped; at most ``limit`` entries are kept, this run's first (the newest lastmod
    first, then by loc), then the previous ones in their order. Memory: the previous
    feed, one block of this run's URLs and at most twice ``limit`` of its changes."""

    def __init__(
        self, previous: Iterable[tuple[str, ChangesFeedEntry]], save: Save, limit: int, stamp: str
    ) -> None:
        self._previous = [entry for _, entry in previous][:limit]
        self._locs = {entry.loc for entry in self._previous}
        self._save = save
        self._limit = limit
        self._stamp = stamp  # the run's time: the updated of an entry with no lastmod
        #: The previous entries whose URL this run writes (the others were removed).
        self._present: set[str] = set()
        #: The previous entries whose URL changed again: this run's entry replaces them.
        self._superseded: set[str] = set()
        self._block: dict[str, UrlFacts] = {}
        self._fresh: list[ChangesFeedEntry] = []

    def seen(self, entries: list[UrlFacts]) -> None:
        """A block of the URLs this run writes, about to be noted (the block before is
        not needed any more)."""
        self._block = {facts.loc: facts for facts in entries}
        locs = self._locs
        if locs:
            self._present.update(facts.loc for facts in entries if facts.loc in locs)

    def changed(self, changes: Changes) -> None:
        """What IndexNow's notes found in the block: the added and changed become entries."""
        for kind, loc in changes:
            if kind != ADDED and kind != CHANGED:
                continue
            facts = self._block.get(loc)
            if facts is None:  # noted by an earlier block (cannot be: loc order)
                continue
            self._fresh.append(
                ChangesFeedEntry(
                    loc, atom_time(facts.lastmod, self._stamp), clean_title(facts.title)
                )
            )
            if loc in self._locs:
                self._superseded.add(loc)
        if len(self._fresh) >= 2 * self._limit:
            self._fresh = self._newest(self._fresh)

    def _newest(self, entries: list[ChangesFeedEntry]) -> list[ChangesFeedEntry]:
        entries.sort(key=lambda e: e.loc)
        entries.sort(key=lambda e: e.updated, reverse=True)  # stable: by loc within a time
        return entries[: self._limit]

    def finish(self) -> list[ChangesFeedEntry]:
        """The feed's entries, newest first, saved for the next run."""
        fresh = self._newest(self._fresh)
        gone = self._superseded
        present = self._present
        kept = [e for e in self._previous if e.loc in present and e.loc not in gone]
        feed = (fresh + kept)[: self._limit]
        for seq, start in enumerate(range(0, len(feed), BLOCK)):
            self._save(seq, encode_entries(feed[start : start + BLOCK]))
        return feed
