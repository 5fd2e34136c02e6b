"""What the offline build's run store can do beyond a crawl's store: worker processes
that read it, a part of it for each staging task, its origins sized for sharing out the
work, and the URLs counted in those workers. The publisher asks for these abilities with
:func:`isinstance` (:class:`PooledSource` is runtime-checkable): a crawl's store has none
of them, and its backends implement only :class:`~..store.base.FactSource`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..store.base import FactSource

if TYPE_CHECKING:
    from collections.abc import Iterator
    from concurrent.futures import Executor

    from ..sitemaps.urls import Origin

__all__ = ["PooledSource", "first_origins"]


@runtime_checkable
class PooledSource(FactSource, Protocol):
    """A :class:`~..store.base.FactSource` whose origins can be staged in worker
    processes (:mod:`.pool`): only the run store (:class:`.run_store.RunStore`)."""

    def __bool__(self) -> bool:
        """A source is true, however many URLs it holds: without this, ``if source`` or
        ``source or other`` would call :meth:`__len__`, which a run store answers by
        merging all its runs."""
        return True

    def pool(self) -> Executor | None:
        """Worker processes that can read this source (the origins are then written in
        them at once), or None: this process only."""
        ...

    def part(self, origins: list[Origin]) -> PooledSource:
        """What a pool worker needs to read ``origins`` (sent to it with each task): a
        smaller source that holds only those origins."""
        ...

    def sized_origins(self, smallest: int = 0) -> Iterator[tuple[Origin, int]]:
        """Every origin with an estimate of its entries of at least ``smallest``, for
        sharing out work among the pool, in an order of the source's own; each call reads
        them again (a run store holds none of them: a broad crawl has hundreds of
        thousands)."""
        ...

    def first_origins(self, count: int) -> list[Origin]:
        """The first ``count`` of :meth:`origins`, without listing every origin."""
        ...

    def counts(self, origins: list[Origin]) -> list[int | None]:
        """Distinct URLs of each of ``origins``, learned while their entries were read (in
        a pool worker), None where not known. Numbers in the order of ``origins``, which
        the parent knows: sent back with every task, a key with each would be an object
        the parent keeps for every origin."""
        ...

    def add_counts(self, origins: list[Origin], counts: list[int | None]) -> None:
        """Take in what :meth:`counts` gave for ``origins`` in a pool worker."""
        ...


def first_origins(source: FactSource, count: int) -> list[Origin]:
    """The first ``count`` of ``source``'s origins (the close report's lines): a run
    store finds them without sorting every origin, a crawl's store lists them."""
    if isinstance(source, PooledSource):
        return source.first_origins(count)
    return source.origins()[:count]
