"""The interface through which a feature watches one origin's entries as staging writes
them (:func:`..publish.staging.stage_origin`), as Scrapy's extensions watch signals: told
the origin starts, shown the entries, asked at the finish what it adds to the origin's set.

Staging is the core loop (entries in, rules, duplicates, files out); a feature that
watches entries is one module of this package with a factory listed in
:data:`.FEATURES`, which gives a watch when its setting is on. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime

    from ..publish.staging import OriginSet
    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from ..state.indexnow_changes import Changes
    from ..state.view import StateView
    from ..store.base import FactSource

__all__ = ["ChangeWatch", "ExtraFile", "OriginStart", "OriginWatch", "overridden"]


class ChangeWatch(Protocol):
    """A watch that wants what IndexNow's entry fingerprints find (:mod:`.entry_prints`),
    a block of written entries at a time: the block, then the URLs of it that were added
    or changed (and, at the finish, those removed). On an origin's first run (no
    fingerprints noted before) it is told nothing: nothing changed since a previous run."""

    def seen(self, entries: list[UrlFacts]) -> None: ...

    def changed(self, changes: Changes) -> None: ...


@dataclass(slots=True)
class OriginStart:
    """What a feature is told as the staging of one origin starts."""

    origin: Origin
    config: Config
    state: StateView
    source: FactSource
    now: datetime
    #: ``now`` as the W3C datetime the files' lastmods carry.
    stamp: str
    #: Where the origin's files are published (``SITEMAPGEN_BASE_URL`` filled in).
    base_url: str
    #: name -> (sha256, lastmod) of what the previous run published.
    previous_files: dict[str, tuple[str, str]]
    #: Whether staging makes its pass for duplicates by content (:meth:`OriginWatch.survey`).
    dedupe: bool
    #: The hreflang clusters' index file, when the alternates written are those it checked.
    clusters: str | None = None
    #: Where the lastmods the content notes settle go (the crawl's verdict log), if anywhere.
    settled: Callable[[str, str | None], None] | None = None
    #: The watches that want IndexNow's findings: a feature adds its own as it starts.
    change_watches: list[ChangeWatch] = field(default_factory=list)


class ExtraFile(NamedTuple):
    """A file a feature publishes beside the sitemaps, staged before robots.txt."""

    name: str
    kind: str
    data: bytes
    #: The entries it holds, as the manifest lists them (a feed's; 0 for a key file).
    entries: int = 0


class OriginWatch:
    """One feature's watch over one origin's staging. Each hook does nothing unless a
    subclass overrides it, and staging calls only the overridden ones, in this order:

    - :meth:`survey` wraps the pass over the stored entries that finds duplicates by
      content (made only when there are any to find), and :meth:`surveyed` follows it;
    - :meth:`rewrite` wraps each writing pass whose entries carry lastmods and media
      (``first``: the pass whose counts count), :meth:`rewrite_news` the news pass;
    - :meth:`settled` is told of each lastmod the state's content notes settle to
      another value than the store's, on the pass that notes every URL;
    - :meth:`block` sees the entries written on the pass that notes every URL, a block
      at a time (one call per block, not per entry: a crawl may write millions);
    - :meth:`close`, always, once every pass is over; then, when the origin has files,
      :meth:`finish` with its set, which it may add counts and files to.
    """

    def survey(self, entries: Iterable[UrlFacts]) -> Iterable[UrlFacts]:
        return entries

    def surveyed(self, listed: Callable[[], Iterable[UrlFacts]], contents: int) -> None:
        """``listed`` makes a pass over the entries that will be listed, as stored;
        ``contents``: how many of them carry a content fingerprint (0 without the pass)."""

    def rewrite(self, entries: Iterable[UrlFacts], *, first: bool) -> Iterable[UrlFacts]:
        return entries

    def rewrite_news(self, entries: Iterable[UrlFacts]) -> Iterable[UrlFacts]:
        return entries

    def settled(self, loc: str, lastmod: str | None) -> None:
        """``loc`` is published with ``lastmod``, not the one the store holds."""

    def block(self, entries: list[UrlFacts]) -> None:
        """A block of the entries written, in loc order."""

    def close(self) -> None:
        """Every pass is over (files or none)."""

    def finish(self, origin_set: OriginSet) -> list[ExtraFile]:
        """The origin has files: what the feature adds to them, in publishing order."""
        return []


def overridden(watches: list[OriginWatch], hook: str) -> list[OriginWatch]:
    """The watches whose class overrides ``hook``: the only ones staging calls for it."""
    if not watches:  # the usual origin of a build: no feature on
        return []
    return [watch for watch in watches if hook in _overrides(type(watch))]


def _overrides(cls: type[OriginWatch]) -> frozenset[str]:
    """The hooks ``cls`` overrides, found once per class (staging asks per origin)."""
    hooks = _OVERRIDES.get(cls)
    if hooks is None:
        hooks = _OVERRIDES[cls] = frozenset(
            hook for hook in _HOOKS if getattr(cls, hook) is not getattr(OriginWatch, hook)
        )
    return hooks


_OVERRIDES: dict[type[OriginWatch], frozenset[str]] = {}
_HOOKS = tuple(name for name in vars(OriginWatch) if not name.startswith("_"))
