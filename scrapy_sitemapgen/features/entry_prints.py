"""IndexNow's entry fingerprints (SITEMAPGEN_INDEXNOW_KEY): a fingerprint of each URL's
``<url>`` entry, compared with the previous run's, finds the URLs added, changed and
removed, which the submission (:mod:`..publish.submissions`) sends and the changes feed
(:mod:`.changes_feed`) is made of; and IndexNow's key file, published with the sitemaps.

The fingerprints are kept in the state file (:data:`..state.indexnow_changes.ENTRY_PRINTS`)
when either feature is on. The protocol itself (key, endpoint, batches) is
:mod:`..sitemaps.indexnow`. Pure.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..sitemaps.indexnow import ADDED, CHANGED, REMOVED, key_file_name
from ..sitemaps.writer import url_entry
from ..state.indexnow_changes import ENTRY_PRINTS
from ..state.notes import Notes
from .origin_watch import ExtraFile, OriginWatch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from ..publish.staging import OriginSet
    from ..sitemaps.facts import UrlFacts
    from ..state.indexnow_changes import Changes
    from ..state.notes import Save
    from .origin_watch import OriginStart

__all__ = ["EntryPrints", "IndexNowWatch", "entry_prints", "fingerprint"]


def fingerprint(entry: bytes) -> str:
    """A short fingerprint of a ``<url>`` entry's bytes: equal entries, equal prints."""
    return hashlib.blake2b(entry, digest_size=8).hexdigest()


class EntryPrints(Notes[str, tuple[str, str]]):
    """One origin's (loc, fingerprint) pairs as this run writes them, in loc order,
    compared on the fly with the previous run's: each URL added, changed (its entry's
    fingerprint differs) or removed goes to ``on_changes`` as ``(kind, loc)`` pairs, a
    block at a time; the pairs are kept as blocks for the next run through ``save``."""

    def __init__(
        self,
        previous: Iterator[tuple[str, str]],
        save: Save,
        on_changes: Callable[[Changes], None],
    ) -> None:
        super().__init__(ENTRY_PRINTS, previous, save)
        #: No previous run left fingerprints for the origin: every URL is added.
        self.first_run = self._head is None
        self._last: str | None = None
        self._on_changes = on_changes
        self._changes: Changes = []
        self.counts = {ADDED: 0, CHANGED: 0, REMOVED: 0}

    def note_all(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Note each (loc, fingerprint) of ``pairs``, in loc order, after those before."""
        changes: Changes = []
        self._changes = changes  # where _passed puts the removed, in loc order
        last, match, size = self._last, self._match, self._size
        kept = self._block
        for loc, print_ in pairs:
            if last is not None and loc <= last:
                if loc == last:
                    continue
                raise ValueError(f"URLs must be noted in loc order: {loc!r} came after {last!r}")
            last = loc
            previous = match(loc)
            if previous is None:
                changes.append((ADDED, loc))
            elif previous[1] != print_:
                changes.append((CHANGED, loc))
            kept.append((loc, print_))
            if len(kept) >= size:
                self._flush()
                kept = self._block
        self._last = last
        self._report(changes)

    def _passed(self, note: tuple[str, str]) -> None:
        self._changes.append((REMOVED, note[0]))

    def _report(self, changes: Changes) -> None:
        for kind, _ in changes:
            self.counts[kind] += 1
        if changes:
            self._on_changes(changes)

    def finish(self) -> dict[str, int]:
        """The counts by kind, once every URL was noted (what is left was removed)."""
        self._flush()
        changes: Changes = []
        self._changes = changes
        self._drain()
        self._report(changes)
        return dict(self.counts)


def entry_prints(start: OriginStart) -> IndexNowWatch | None:
    """The watch of an origin when IndexNow or the changes feed is on (the feed is made
    of what the fingerprints find)."""
    config = start.config
    if not config.indexnow_key and not config.changes_feed:
        return None
    return IndexNowWatch(start)


class IndexNowWatch(OriginWatch):
    """Fingerprints each block of written entries and notes them (:class:`EntryPrints`);
    what changed goes to the submission's table (when IndexNow is on) and to the
    :attr:`OriginStart.change_watches`. Adds the counts and the key file to the set."""

    def __init__(self, start: OriginStart) -> None:
        config = start.config
        state = start.state
        name = start.origin.name
        previous, save = state.notes(ENTRY_PRINTS, config.state_key, name)
        self._key = config.indexnow_key
        self._key_file = bool(config.indexnow_key) and not config.indexnow_key_location
        # The watches are read as changes come: a feature started after this one counts.
        self._watches = start.change_watches
        submit = state.changes_to(name) if config.indexnow_key else None
        self._prints = EntryPrints(previous, save, self._on_changes(submit))
        # A first run finds no change since a previous run, only URLs never noted: the
        # watches are told nothing (the changes feed lists no page), while IndexNow's
        # submission still sees them (SITEMAPGEN_INDEXNOW_INITIAL decides).
        if self._prints.first_run:
            self._watches = []

    def _on_changes(self, submit: Callable[[Changes], None] | None) -> Callable[[Changes], None]:
        def on_changes(changes: Changes) -> None:
            if submit is not None:
                submit(changes)
            for watch in self._watches:
                watch.changed(changes)

        return on_changes

    def block(self, entries: list[UrlFacts]) -> None:
        for watch in self._watches:
            watch.seen(entries)
        self._prints.note_all([(facts.loc, fingerprint(url_entry(facts))) for facts in entries])

    def finish(self, origin_set: OriginSet) -> list[ExtraFile]:
        counts = self._prints.finish()
        origin_set.indexnow = counts if self._key else None
        if not self._key_file:
            return []
        # The key file IndexNow fetches to check the key, published with the sitemaps.
        key = self._key
        return [ExtraFile(key_file_name(key), "indexnow-key", key.encode())]
