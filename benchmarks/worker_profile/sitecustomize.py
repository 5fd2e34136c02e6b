"""Profiles a build's worker processes, for ``profile-build --workers N`` (N > 1).

This folder is put first on ``PYTHONPATH`` by :func:`benchmarks.profiles.profile_build`,
with :data:`ENV` naming a folder: every process that multiprocessing spawns then runs
under cProfile, one profiler per thread (the compression thread is one), and writes them
merged to ``<folder>/worker-<pid>.prof`` when it exits. The package knows nothing of it:
the environment variable is the benchmark's.
"""

from __future__ import annotations

import atexit
import cProfile
import os
import pstats
import sys
import threading

ENV = "BENCHMARKS_PROFILE_WORKERS"


class ThreadProfiles:
    """Every thread started after :meth:`install` runs under a cProfile of its own;
    :meth:`merged` adds them to a main profile's stats. Also used by
    :func:`benchmarks.profiles.profile_build` for the build's own process: this module
    imports nothing of the benchmarks, as it runs in worker processes too."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []

    def install(self) -> None:
        profiles = self.profiles
        run = threading.Thread.run

        def profiled_run(thread: threading.Thread) -> None:
            profile = cProfile.Profile()
            profiles.append(profile)
            profile.enable()
            try:
                run(thread)
            finally:
                profile.disable()

        threading.Thread.run = profiled_run  # type: ignore[method-assign]

    def merged(self, main: cProfile.Profile) -> pstats.Stats:
        stats = pstats.Stats(main)
        for profile in self.profiles:
            stats.add(profile)
        return stats


def _profile_this_process(folder: str) -> None:
    threads = ThreadProfiles()
    threads.install()
    main = cProfile.Profile()

    def dump() -> None:
        main.disable()
        threads.merged(main).dump_stats(os.path.join(folder, f"worker-{os.getpid()}.prof"))

    atexit.register(dump)
    main.enable()


# Only the pool's workers: multiprocessing's resource tracker is spawned too, without
# this flag.
if os.environ.get(ENV) and "--multiprocessing-fork" in sys.orig_argv:
    _profile_this_process(os.environ[ENV])
