"""Where the time of ``scrapy sitemapgen-build --input`` goes: the build runs in this process
under cProfile with one profiler per thread, merged into one report. The feed is recorded
into the store in the main thread, and the sitemaps are staged in a worker thread, which a
plain ``python -m cProfile`` does not see.

    python -m benchmarks.profile_build --records 100000 --seed 1 --top 15

The feed is the one ``benchmarks.bench`` uses (``benchmarks.feed``, cached). The merged
profile is also saved (``--out``, default ``benchmarks/out/build-n<N>.prof``) for
``python -m pstats`` or snakeviz.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import feed


def profile_build(
    feed_path: Path, work: Path, settings: list[str], workers: int = 1
) -> tuple[pstats.Stats, float, int]:
    """Run the build in this process; the merged stats, the wall time and the exit code."""
    profiles: list[cProfile.Profile] = []
    run = threading.Thread.run

    def profiled_run(thread: threading.Thread) -> None:
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.enable()
        try:
            run(thread)
        finally:
            profile.disable()

    threading.Thread.run = profiled_run  # type: ignore[method-assign,assignment]
    from scrapy.cmdline import execute

    argv = ["scrapy", "sitemapgen-build", "--input", str(feed_path), "--workers", str(workers)]
    for setting in settings:
        argv += ["-s", setting]
    os.chdir(work)  # no scrapy.cfg above: the settings are Scrapy's defaults plus ours
    main = cProfile.Profile()
    code = 0
    started = time.perf_counter()
    main.enable()
    try:
        execute(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        main.disable()
    wall = time.perf_counter() - started
    stats = pstats.Stats(main)
    for profile in profiles:
        stats.add(profile)
    return stats, wall, code


def report(stats: pstats.Stats, key: str, top: int, *restrictions: str) -> str:
    """The ``print_stats`` table, paths shortened to the package or the library."""
    buffer = io.StringIO()
    stats.stream = buffer  # type: ignore[attr-defined]
    stats.sort_stats(key).print_stats(*restrictions, top)
    lines = buffer.getvalue().splitlines()
    start = next((n for n, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    prefixes = sorted(
        {*sys.path, str(Path(__file__).resolve().parent.parent)}, key=len, reverse=True
    )
    text = "\n".join(lines[start:]).rstrip()
    for prefix in prefixes:
        if prefix.startswith("/"):
            text = text.replace(prefix.rstrip("/") + "/", "")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="the build's --workers; the default 1 keeps the feed's reading in this process, profiled",
    )
    parser.add_argument("--out", type=Path, help="where to save the merged profile")
    args = parser.parse_args(argv)
    info = feed.build(args.records, args.seed)
    out = (args.out or feed.OUT / f"build-n{args.records}.prof").resolve()
    work = Path(tempfile.mkdtemp(prefix="profile-build-"))
    settings = [
        f"SITEMAPGEN_URI={work / 'sitemaps'}",
        f"SITEMAPGEN_STATE={work / 'state.sqlite3'}",
        "LOG_LEVEL=WARNING",
    ]
    try:
        stats, wall, code = profile_build(Path(info.path), work, settings, args.workers)
    finally:
        os.chdir(feed.OUT)
        shutil.rmtree(work, ignore_errors=True)
    stats.dump_stats(str(out))
    print(
        f"sitemapgen-build --input ({info.records:,} records) under cProfile: {wall:.1f} s wall, exit {code}"
    )
    print(f"profile saved to {out}\n")
    print(f"top {args.top} by cumulative time, all threads:")
    print(report(stats, "cumulative", args.top))
    print(f"\ntop {args.top} by cumulative time, the package's functions:")
    print(report(stats, "cumulative", args.top, "scrapy_sitemapgen/"))
    print(f"\ntop {args.top} by own time, all threads:")
    print(report(stats, "tottime", args.top))
    sys.stdout.flush()
    # The worker threads of the asyncio executor are still parked, profiled; leave without
    # waiting for them at interpreter exit.
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
