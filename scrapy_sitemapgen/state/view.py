"""The state as staging reads and writes it: the files the previous run published, and
the notes of each kind (URL set, content, IndexNow's fingerprints, the changes feed, the
published entries) for an origin; the notes of the features' kinds are made by the
features (:mod:`..features`). Two states implement it: the state file itself
(:class:`.statefile.PublishState`), and a staging worker's view of it
(:class:`.worker_notes.WorkerState`). Pure."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, TypeVar

from .changes_feed_notes import CHANGES_FEED
from .content_notes import CONTENTS, Note
from .indexnow_changes import ENTRY_PRINTS
from .published_entries import ENTRIES, PublishedNotes
from .url_notes import URLS, UrlNotes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .indexnow_changes import Changes
    from .notes import NoteKind, Save

__all__ = ["KINDS", "StateView"]

V = TypeVar("V")
W = TypeVar("W")

#: Every kind of note the state file keeps, in the order its tables were made.
KINDS: tuple[NoteKind[Any, Any], ...] = (URLS, CONTENTS, ENTRY_PRINTS, CHANGES_FEED, ENTRIES)


class StateView(ABC):
    """What staging needs of the state. A subclass says where the notes are read from
    and where this run's go; the notes of each kind are made from that alike."""

    @abstractmethod
    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        """name -> (sha256, lastmod) of what the previous run published."""

    @abstractmethod
    def notes(
        self, kind: NoteKind[V, W], output: str, origin: str
    ) -> tuple[Iterator[tuple[str, V]], Save]:
        """The previous run's notes of ``kind`` for ``origin``, and where this run's go
        (anew if the origin is staged again)."""

    @abstractmethod
    def read_again(self, kind: NoteKind[V, W], output: str, origin: str) -> Iterator[tuple[str, V]]:
        """The previous run's notes of ``kind`` for ``origin`` again, for another pass."""

    @abstractmethod
    def changes_to(self, origin: str) -> Callable[[Changes], None]:
        """Where IndexNow's changes of ``origin`` go (anew if it is staged again)."""

    def url_notes(self, output: str, origin: str) -> UrlNotes:
        """Notes for the URLs this run writes for ``origin``."""
        return UrlNotes(*self.notes(URLS, output, origin))

    def published_notes(self, output: str, origin: str, now: int) -> PublishedNotes:
        """Notes of the entries this run publishes for ``origin``, for the next run to
        publish again what it cannot judge (``now``: this run's time)."""
        return PublishedNotes(self.notes(ENTRIES, output, origin)[1], now)

    def content_notes(self, output: str, origin: str) -> tuple[Iterator[Note], Save]:
        """The previous run's content notes of ``origin`` and where this run's go: what
        :class:`.content_notes.ContentNotes` reads and saves."""
        return self.notes(CONTENTS, output, origin)

    def previous_contents(self, output: str, origin: str) -> Iterator[Note]:
        """The previous run's content notes of ``origin`` again, for another pass."""
        return self.read_again(CONTENTS, output, origin)
