"""A crawl's store as a recurring run publishes it: each origin's entries joined with what
the previous run published and with this run's verdicts, so that only evidence removes a
page (:mod:`..sitemaps.evidence`).

The join happens in every pass staging makes over an origin (duplicates, the urlsets, the
sections, the text sitemaps, the news), each reading the state's notes again in loc order:
nothing of an origin is held in memory. What the join did to an origin
(:class:`~..sitemaps.evidence.OriginEvidence`) is kept from the last pass that read it to
its end; every pass decides alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sitemaps.codec import published_entry
from ..sitemaps.evidence import OriginEvidence, published_set

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from ..state.statefile import PublishState
    from ..store.base import FactSource

__all__ = ["RecurringSource"]


class RecurringSource:
    """``store`` (a :class:`~..store.base.FactSource`) whose entries are joined with the
    previous run's published entries in ``state``; ``now``: this run's time, in seconds
    since the epoch."""

    def __init__(self, store: FactSource, config: Config, state: PublishState, now: int) -> None:
        self.store = store
        self.config = config
        self.state = state
        self.now = now
        self.has_content = getattr(store, "has_content", True)
        #: Origins the previous runs published, and those with verdicts of this run.
        self._published = state.published_origins(config.state_key)
        self._judged = set(store.judged_origins())
        #: Whether some origin has an earlier crawl's entries (a store kept across crawls).
        self._earlier = any(True for o in store.origins() for _ in store.earlier(o))
        #: What the join did to each origin it read to the end, until the publish takes
        #: it with the origin's staged set: what is left is the origins staged to nothing.
        self.evidence: dict[Origin, OriginEvidence] = {}

    def origins(self) -> list[Origin]:
        """The store's origins, and those of this run's verdicts that were published
        before: an origin whose every page this run left out is staged too (its published
        pages may be kept, or the guard stops it)."""
        published = {o for o in self._judged if o.name in self._published}
        return sorted(set(self.store.origins()) | published)

    def judged_only(self) -> None:
        """What the join makes of each origin this run judged and never published, with
        nothing recorded: none of its pages is listed, and :attr:`evidence` says how many
        answered (the guard's "a crawl that listed nothing"). Nothing is staged for them."""
        staged = set(self.origins())
        for origin in sorted(self._judged - staged):
            for _ in self.join(origin):
                pass

    def _joined(self, origin: Origin) -> bool:
        return self._earlier or origin in self._judged or origin.name in self._published

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        # An origin with nothing to join (a first run's, a broad crawl's new host) is the
        # store's as it is, and has no evidence to tell.
        if not self._joined(origin):
            return self.store.entries(origin)
        return self.join(origin)

    def join(
        self, origin: Origin, on_kept: Callable[[str, str], None] | None = None
    ) -> Iterator[UrlFacts]:
        """The origin's entries to publish; ``on_kept`` is told (loc, reason) of each page
        kept without evidence."""
        tally = OriginEvidence()
        yield from published_set(
            self.store.entries(origin),
            self.store.earlier(origin),
            self.state.previous_published(self.config.state_key, origin.name),
            self.store.judged(origin),
            now=self.now,
            keep_for=self.config.keep_unconfirmed,
            entry_of=published_entry,
            tally=tally,
            on_kept=on_kept,
        )
        self.evidence[origin] = tally

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        if not self._joined(origin):
            return self.store.news_entries(origin)
        return self._news(origin)

    def _news(self, origin: Origin) -> Iterator[UrlFacts]:
        """The news entries of a joined origin: the store's own when the join, made by
        the passes that wrote the urlsets before (the writer writes the news last), kept
        no page with news and an earlier crawl left no row; else from a join of their
        own. Decided when the first is asked for."""
        evidence = self.evidence.get(origin)
        if evidence is not None and not evidence.kept_news and not self._earlier:
            yield from self.store.news_entries(origin)
        else:
            yield from (facts for facts in self.join(origin) if facts.news is not None)

    def most_entries(self, origin: Origin) -> int | None:
        return None if self._joined(origin) else self.store.most_entries(origin)

    def canonical_targets(self, origin: Origin) -> Iterator[str]:
        return self.store.canonical_targets(origin)

    def judged(self, origin: Origin) -> Iterator[tuple[str, str]]:
        return self.store.judged(origin)

    def judged_origins(self) -> list[Origin]:
        return sorted(self._judged)

    def earlier(self, origin: Origin) -> Iterator[str]:
        return self.store.earlier(origin)

    def __len__(self) -> int:
        return len(self.store)

    def close(self) -> None:
        """The store is the crawl's to close."""

    def __getattr__(self, name: str) -> Any:
        # The abilities a store may have beyond a source, which the publish looks for.
        if name in _FORWARDED:
            return getattr(self.store, name)
        raise AttributeError(name)


#: A store's optional abilities the publish asks for with getattr: whether some page
#: declares alternates (the clusters' check), and its verdict log (the audit's lookups).
_FORWARDED = frozenset({"has_alternates", "verdicts"})
