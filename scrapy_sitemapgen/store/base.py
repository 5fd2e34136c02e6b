"""The store interface: a sink the crawl records into, a source the writer lists from.

A backend is a class that ``SITEMAPGEN_STORE_BACKENDS`` names for the scheme of
``SITEMAPGEN_STORE`` (as Scrapy's ``FEED_STORAGES`` names feed storages), built with
:meth:`FactStore.from_config`. A fourth backend is a new class and a setting, not an edit
of the exporter. Optional abilities are methods with a default here, so a backend states
only what it has: a :class:`~.journal.RequestJournal` for resuming a killed crawl, a
:class:`Coordination` of the processes sharing the store. (What the offline build's run
store adds, worker processes that read it while it is written out, is a protocol of the
build's own: ``build.source.PooledSource``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from typing_extensions import Self

    from ..settings import Config
    from ..sitemaps.broken_links import BrokenLink
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from .journal import RequestJournal
    from .verdict_log import VerdictLog

__all__ = ["Coordination", "FactSink", "FactSource", "FactStore", "StoreError"]


class StoreError(RuntimeError):
    """The store cannot be used (unreadable, another schema, another program's, away)."""


class FactSink(Protocol):
    """Where facts are recorded. Writes are applied in the order they are made, and
    :meth:`flush` makes a prefix of them durable at once."""

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        """Add or merge the facts of one URL (:mod:`~..sitemaps.merge`). Cheap: may be
        buffered until :meth:`flush`."""
        ...

    def record_canonical(self, target: str) -> None:
        """Keep ``target`` (a ``loc``) as a URL that the ``rel=canonical`` of a page left
        out as ``canonical_elsewhere`` names, under the target's own origin, once however
        many pages name it; read back by :meth:`FactSource.canonical_targets`. By
        default a store keeps none, and duplicates by content are chosen without them."""
        return

    def record_links(self, source: str, targets: Iterable[str]) -> None:
        """Keep that the page ``source`` links to each of ``targets`` (``loc`` keys,
        distinct): per target, the count of distinct pages linking to it and the first
        ``SITEMAPGEN_LINK_SOURCES`` of them (:mod:`.links`), read back with the broken
        ones by :meth:`FactSource.broken_links`. Cheap: aggregated until :meth:`flush`.
        By default a store keeps none, and no broken link is reported."""
        return

    def judge(self, loc: str, verdict: str) -> None:
        """Keep this run's verdict on a URL it did not list (``excluded/<reason>``,
        ``skipped/<reason>``, ``redirected``, ``failed/<kind>``: the names of
        :class:`~..sitemaps.verdicts.Verdict`), read back by :meth:`FactSource.judged`; a
        later verdict replaces an earlier one. A verdict that removes the URL
        (:func:`~..sitemaps.evidence.removes`) also drops its recorded entry, so that a
        store kept from an earlier crawl no longer lists it. By default a store keeps
        none: then a page published before that this run left out is kept as if the run
        had not reached it (``docs/recurring.rst``)."""
        return

    def flush(self) -> None:
        """Make every recorded fact durable and visible to readers."""
        ...

    def close(self) -> None:
        """Flush and release the store."""
        ...


class FactSource(Protocol):
    """What the writer lists: origins, and each origin's merged entries in ``loc`` order."""

    #: Whether entries can carry a page's content (``UrlFacts.content``): a source of
    #: item records only (a feed) says no, so no pass is made to find duplicates.
    has_content: bool = True

    def origins(self) -> list[Origin]:
        """Every origin with at least one URL, sorted."""
        ...

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        """The merged entries of one origin in ``loc`` order (code-point order)."""
        ...

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        """The entries of one origin that carry news facts, in ``loc`` order."""
        ...

    def canonical_targets(self, origin: Origin) -> Iterator[str]:
        """The URLs of ``origin`` that pages left out as ``canonical_elsewhere`` name as
        their canonical (:meth:`FactSink.record_canonical`), each once, in ``loc`` order;
        none by default (a feed's records carry no such pages)."""
        return iter(())

    def judged(self, origin: Origin) -> Iterator[tuple[str, str]]:
        """(loc, verdict) of each URL of ``origin`` this run judged and did not list
        (:meth:`FactSink.judge`), in ``loc`` order; none by default."""
        return iter(())

    def judged_origins(self) -> list[Origin]:
        """Every origin with a verdict of this run (:meth:`judged`), sorted."""
        return []

    def broken_links(self, origin: Origin | None = None) -> Iterator[BrokenLink]:
        """The URLs of ``origin`` (None: of every origin, in origin order) that this run
        judged broken (:data:`~..sitemaps.broken_links.BROKEN_PREFIXES`) and that recorded
        pages link to (:meth:`FactSink.record_links`), in ``loc`` order; none by default."""
        return iter(())

    def earlier(self, origin: Origin) -> Iterator[str]:
        """The locs among :meth:`entries` that an earlier crawl recorded and this one did
        not (a store kept across crawls, :meth:`FactStore.start_run`), in ``loc`` order;
        none by default (every entry is this run's)."""
        return iter(())

    def most_entries(self, origin: Origin) -> int | None:
        """At most how many entries ``origin`` has, when known without reading them (a
        pass only a larger origin needs is then not made); None: not known."""
        return None

    def __len__(self) -> int:
        """Distinct URLs recorded."""
        ...

    def close(self) -> None:
        """Release the source."""
        ...


class Coordination(Protocol):
    """The processes of one crawl that share a store (scrapy-redis workers)."""

    def worker_started(self) -> None: ...

    def worker_finished(self) -> bool:
        """True for the last worker to finish that also wins the writer's lock."""
        ...


class FactStore(FactSink, FactSource, Protocol):
    """A store a crawl opens: recorded into while it runs, listed from at close."""

    #: Records the store could not keep (a shared store loses whole batches).
    lost: int = 0

    @classmethod
    def from_config(cls, config: Config, location: str) -> Self:
        """The store at ``location`` (a path, or the URL ``SITEMAPGEN_STORE`` gives)."""
        ...

    def start_run(self, *, resumed: bool) -> None:
        """A crawl starts on this store: unless it ``resumed`` an interrupted one (the
        same ``JOBDIR``), the verdicts kept are an earlier crawl's and go, and the entries
        recorded so far become :meth:`FactSource.earlier`. Nothing by default."""
        return

    def finish_run(self) -> None:
        """The store's crawl was published: a crawl that starts on it later starts a run
        of its own (a store shared by several processes, whose workers join the run the
        first of them started). Nothing by default."""
        return

    def journal(self) -> RequestJournal | None:
        """Requests tracked for resuming a killed crawl, kept in the store's ordered
        stream of writes; None: this store does not resume requests."""
        return None

    def coordination(self) -> Coordination | None:
        """The workers sharing this store, when several processes write into it."""
        return None

    def verdicts(self) -> VerdictLog | None:
        """The verdict of every URL judged and the URLs live sitemaps list, for the
        audit (``SITEMAPGEN_AUDIT``); None: this store keeps no verdicts."""
        return None
