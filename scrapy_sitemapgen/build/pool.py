"""The offline build's worker processes: the pool that reads the feed's ranges, merges
runs and stages origins, the staging tasks it is given (origins grouped by size), and the
loop that sends them and takes their results in. For one worker, the pool is this process.

The per-origin staging is the publisher's (``publish.staging.stage_origin``, which a
crawl's exporter runs in its own process): it is handed in as a function, so that this
package, below the publisher, imports nothing of it, and the workers run the very
function the crawl runs. Nothing here imports Scrapy.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import os
import shutil
import sys
import tempfile
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..state.worker_notes import WorkerState
from ..stats import Tally
from .run_files import BLOCK_ROWS
from .source import PooledSource

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from datetime import datetime

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from ..state.statefile import PublishState
    from ..stats import Reporter
    from ..store.base import FactSource

__all__ = [
    "TASK_ORIGINS",
    "TASK_ROWS",
    "StagingTasks",
    "Unfinished",
    "executor",
    "finished",
    "main_script_hidden",
    "stage_task",
    "staging_tasks",
    "tasks",
]


class _Inline(Executor):
    """Runs each task at once in this process: a one-worker build spawns nothing."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered by result(), as a pool would
            future.set_exception(exc)
        return future


@contextlib.contextmanager
def main_script_hidden() -> Iterator[None]:
    """While worker processes are spawned, the main script's path is hidden from
    multiprocessing, which otherwise has each worker run that script again (as
    ``__mp_main__``) before its first task. The ``scrapy`` command is such a script: all
    of Scrapy, imports in every worker that no task needs, since the workers only run
    this package's functions. (``python -m scrapy`` runs a package's ``__main__``, which
    multiprocessing already leaves alone.)"""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None:
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _worker_started() -> None:
    """A worker runs this package's tasks and nothing else: its collector is paused for
    its whole life (:func:`collector_paused`)."""
    gc.disable()


@contextlib.contextmanager
def collector_paused() -> Generator[None, None, None]:
    """The cyclic garbage collector paused in the build's own processes: the
    ``sitemapgen-build`` command's (which runs no spider) while it builds, and each
    worker's (:func:`_worker_started`). The only place the package changes the collector;
    the process of a ``scrapy crawl`` keeps its collector as it is.

    Why it pays: the build holds a great many long-lived objects (the run store's
    per-origin entries, each staged set until its group is delivered, the rows of a
    task), and makes them faster than anything is freed, so the collector walks them
    again and again and finds nothing: the build's loops make no reference cycles
    (tests/test_bulk.py checks it on hostile records), and reference counting frees what
    they let go of."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def executor(workers: int) -> Executor:
    if workers <= 1:
        return _Inline()
    # spawn, not fork: the build runs inside Scrapy's reactor, whose threads a fork would copy.
    return ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_started
    )


#: A staging task in a worker takes origins, the largest first, until it holds this many
#: rows or this many origins: one task per origin cost, for a broad crawl's many small
#: origins, more in passing each task its inputs and opening its files than in staging.
TASK_ROWS = 50_000
TASK_ORIGINS = 500

#: Origins of fewer rows than this are grouped with their neighbours in root order: the
#: run files' block, below which an origin's rows of a spill are a shared segment.
_SMALL_ROWS = BLOCK_ROWS


def tasks(source: PooledSource) -> Iterator[list[Origin]]:
    """The source's origins in groups for the workers: the largest first, so that the last
    task to finish is a small one; an origin of ``TASK_ROWS`` rows or more alone. The
    small ones (a broad crawl's many) come last, in the order the source gives them (a
    run store: of their roots, the order it lays such origins out in its files, so that a
    task reads its origins' rows in a few large reads, not one per origin and file: see
    :func:`.run_store.read_stretches`). Made as they are taken, in two passes over the
    source's origins: only the large ones are held."""
    large = sorted(
        ((size, origin) for origin, size in source.sized_origins(_SMALL_ROWS)),
        key=lambda sized: (-sized[0], sized[1]),
    )
    small = ((size, origin) for origin, size in source.sized_origins() if size < _SMALL_ROWS)
    task: list[Origin] = []
    rows = 0
    for size, origin in itertools.chain(large, small):
        if task and (rows + size > TASK_ROWS or len(task) >= TASK_ORIGINS):
            yield task
            task = []
            rows = 0
        task.append(origin)
        rows += size
    if task:
        yield task


class Unfinished:
    """What staging gives for an origin whose files need more tasks than its own: a large
    origin written in windows (:mod:`..publish.split`). Its :meth:`tasks` are run in the
    workers (all at once: each reads its own part of the origin), then :meth:`finish`,
    here, makes the staged set of their results."""

    def tasks(self) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
        """The functions to run and their arguments, in order."""
        raise NotImplementedError

    def finish(self, results: list[Any], reporter: Reporter | Tally) -> Any:
        """The staged set (None: nothing was writable) of the tasks' results, in order;
        what they skipped reported to ``reporter``."""
        raise NotImplementedError


def finished(staged: Any, reporter: Reporter | Tally, pool: Executor | None = None) -> Any:
    """``staged`` as it is, or, when :class:`Unfinished`, finished: its tasks run in
    ``pool`` (None: in this process), their results taken in order."""
    if not isinstance(staged, Unfinished):
        return staged
    if pool is None:
        return staged.finish([fn(*args) for fn, args in staged.tasks()], reporter)
    futures = [pool.submit(fn, *args) for fn, args in staged.tasks()]
    try:
        return staged.finish([future.result() for future in futures], reporter)
    finally:
        for future in futures:
            future.cancel()


class _Staged(Protocol):
    """What staging one origin gives (``publish.staging.OriginSet``), as far as the pool
    loop reads it."""

    @property
    def origin(self) -> Origin: ...


_S = TypeVar("_S", bound=_Staged)

if TYPE_CHECKING:
    #: Staging one origin (``publish.staging.stage_origin``): ``(source, origin, config,
    #: now, state, reporter, staging folder)`` to its staged set (or one to finish with
    #: more tasks: :class:`Unfinished`), or None when nothing was writable.
    StageOrigin = Callable[
        [FactSource, Origin, Config, datetime, WorkerState, Tally, str], _S | Unfinished | None
    ]

#: A task's result: each origin's set and tally, the scratch file of its notes, and the
#: URLs counted of each origin.
_TaskResult = tuple[list[tuple[Any, Tally | None]], Path, list[int | None]]


def stage_task(
    stage: StageOrigin[_S],
    source: PooledSource,
    task: list[tuple[Origin, dict[str, tuple[str, str]], str]],
    config: Config,
    now: datetime,
    state_path: Path,
    notes: Path,
) -> tuple[list[tuple[_S | Unfinished | None, Tally | None]], Path, list[int | None]]:
    """In a worker, one task's origins, each with the files its previous run published
    and its staging folder: their sets and tallies (None for one that met nothing to
    report, as most do: a tally is several objects to send back and hold), in the task's
    order, the scratch file their notes were saved into, and their URLs counted."""
    results: list[tuple[_S | Unfinished | None, Tally | None]] = []
    state = WorkerState(state_path, notes, config.state_key, [origin.name for origin, _, _ in task])
    try:
        for origin, previous, staging in task:
            tally = Tally()
            state.previous = previous
            origin_set = stage(source, origin, config, now, state, tally, staging)
            if origin_set is None:
                state.forget(origin.name)
            results.append((origin_set, tally if tally.counts else None))
    finally:
        state.close()
    return results, notes, source.counts([origin for origin, _, _ in task])


@dataclass
class StagingTasks:
    """A source's origins as staging tasks for its worker processes (see :func:`tasks`)."""

    source: PooledSource
    pool: Executor
    tasks: Iterator[list[Origin]]

    def staged(
        self,
        stage: StageOrigin[_S],
        config: Config,
        now: datetime,
        state: PublishState,
        reporter: Reporter,
        staging_of: Callable[[Origin], str],
        *,
        group: int | None,
    ) -> Generator[list[_S], None, None]:
        """``stage`` for every origin, in the workers, a task at a time: each task's
        origins are a group, yielded in the order the tasks were made (``group=None``:
        all in one group, in origin order). Each task gets only its own origins' part of
        the source, writes their files, compares their URLs with the previous run's
        (reading the state file) and saves them into one scratch SQLite file that
        ``state`` then takes in, and reports into a tally per origin replayed here, so the
        result and the log are the same as in one process. Only a few tasks more than
        there are workers are in flight, so that staged sets do not pile up here while
        the caller delivers."""
        source, pool = self.source, self.pool
        scratch = Path(tempfile.mkdtemp(prefix="sitemapgen-notes-"))
        futures: dict[int, tuple[list[Origin], Future[_TaskResult]]] = {}
        try:
            # Tasks in flight: every worker busy. Made as they are sent (tasks()): the
            # tasks of a broad crawl, all made at once, were a list of every origin.
            window = max(8, 2 * (os.cpu_count() or 1))
            ahead = enumerate(self.tasks)

            def submit() -> bool:
                taken = next(ahead, None)
                if taken is None:
                    return False
                n, task = taken
                names = [origin.name for origin in task]
                previous = state.previous_files_of(config.state_key, names)
                futures[n] = (
                    task,
                    pool.submit(
                        stage_task,
                        stage,
                        source.part(task),
                        [
                            (origin, previous.get(origin.name, {}), staging_of(origin))
                            for origin in task
                        ],
                        config,
                        now,
                        state.path,
                        scratch / f"notes-{n}.sqlite3",
                    ),
                )
                return True

            everything: list[_S] = []
            while len(futures) < window and submit():
                pass
            n = 0
            while n in futures:
                task, future = futures.pop(n)
                results, notes, counted = future.result()
                submit()
                n += 1
                source.add_counts(task, counted)
                state.take_notes(notes)
                sets: list[_S] = []
                for staged, tally in results:
                    if tally is not None:
                        tally.replay(reporter)
                    origin_set = finished(staged, reporter, pool)
                    if origin_set is not None:
                        sets.append(origin_set)
                if group is None:
                    everything.extend(sets)
                elif sets:
                    yield sets
            if group is None and everything:
                yield sorted(everything, key=lambda s: s.origin)
        finally:
            for _, waiting in futures.values():
                waiting.cancel()
            shutil.rmtree(scratch, ignore_errors=True)


def staging_tasks(source: FactSource) -> StagingTasks | None:
    """``source``'s origins as tasks for its worker processes, or None: a source without
    workers (a crawl's store, a build in one process), or one of a single origin (staged
    in this process rather than sent)."""
    if not isinstance(source, PooledSource):
        return None
    pool = source.pool()
    if pool is None:
        return None
    made = tasks(source)
    first = list(itertools.islice(made, 2))
    if sum(len(task) for task in first) < 2:
        return None
    return StagingTasks(source, pool, itertools.chain(first, made))
