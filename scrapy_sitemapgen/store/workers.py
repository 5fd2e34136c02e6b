"""The offline build's worker processes: a pool that runs this package's pure functions
(reading feed ranges, merging runs, staging origins), or, for one worker, this process."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["executor", "main_script_hidden"]


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
    """A worker runs this package's tasks and nothing else, and their loops make no
    reference cycles (tests/test_bulk.py checks it on hostile records): reference counting
    frees everything they let go of. The cyclic collector would find nothing, yet it walks
    what a task holds (up to RUN_RECORDS rows, a merge's blocks) each time enough objects
    were allocated: a cost in every task for nothing found (benchmarks/RECORD.md). The
    parent, which runs Scrapy and the user's code, keeps its collector, but for the
    moment it builds the run store (see feed.build_store)."""
    gc.disable()


def executor(workers: int) -> Executor:
    if workers <= 1:
        return _Inline()
    # spawn, not fork: the build runs inside Scrapy's reactor, whose threads a fork would copy.
    return ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_started
    )
