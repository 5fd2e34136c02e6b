"""The offline build alone at growing feed sizes (``memory``): peak RSS, and the phases of
each run read from its log.

    python -m benchmarks memory --sizes 100000,1000000,5000000

Ours (``scrapy sitemapgen-build --input``, :func:`benchmarks.build.ours_command`) once at
each ``--sizes`` size of the seeded feed (:mod:`benchmarks.feed`), its ``<loc>`` count
checked (:mod:`benchmarks.checks`), with the phases of the run from its log: start-up,
ingestion of the feed into the store, writing and publishing.
"""

from __future__ import annotations

import re
import shutil
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import checks, feed, measure
from .build import ours_command
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse

    from .results import Record

_LOG_FORMAT = "%(asctime)s.%(msecs)03d [%(name)s] %(levelname)s: %(message)s"
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[([^\]]+)\] (\w+): (.*)$")


def phases(log: Path, started: float, ended: float) -> dict[str, float] | None:
    """Start-up (to "Sitemap: reading ..."), ingestion (to "Sitemap: ... read, ..."),
    writing and publishing (to the close report's first per-origin "Sitemap: ..." line),
    the rest (stats, exit)."""
    marks: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = _LOG_LINE.match(line)
        if not match:
            continue
        when = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        message = match[4]
        ours = match[2].startswith("scrapy_sitemapgen.")
        if ours and message.startswith("Sitemap: reading "):
            marks.setdefault("opened", when)
        elif ours and message.startswith("Sitemap: ") and " read, " in message:
            marks.setdefault("closing", when)
        elif ours and message.startswith("Sitemap: ") and " URLs (" in message:  # close report
            marks.setdefault("written", when)
    if len(marks) < 3:
        return None
    return {
        "startup": marks["opened"] - started,
        "ingest": marks["closing"] - marks["opened"],
        "write": marks["written"] - marks["closing"],
        "rest": ended - marks["written"],
    }


def memory_run(
    size: int, seed: int, work: Path, shape: str = "ours", origins: int = 0
) -> dict[str, Any]:
    info = feed.build(size, seed, shape=shape, origins=origins)
    run = work / f"memory-{size}"
    run.mkdir()
    log = run / "run.log"
    command = ours_command(Path(info.path), run, "LOG_LEVEL=INFO", f"LOG_FORMAT={_LOG_FORMAT}")
    started = time.time()
    measured = measure.measured(command, run, log)
    ended = time.time()
    if measured.code:
        raise CheckFailed(
            f"ours at {size:,} records: exit status {measured.code}:\n{measure.tail(log)}"
        )
    measured.urls, measured.bytes = checks.count_locs(run / "sitemaps")
    checks.require_count(f"ours at {size:,} records", measured.urls, info.distinct_locs)
    split = phases(log, started, ended)
    shutil.rmtree(run, ignore_errors=True)
    return {
        "records": size,
        "distinct_locs": info.distinct_locs,
        **measured.as_dict(),
        "phases": split,
    }


def add_memory_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        default="100000,1000000,5000000",
        help="comma-separated feed sizes, one run each",
    )
    parser.add_argument("--seed", type=int, default=1)
    feed.add_shape_arguments(parser)


def run_memory(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``runs``, one per size: ``records``, ``distinct_locs``, the
    Measure fields, ``phases`` (``startup``, ``ingest``, ``write``, ``rest`` seconds, or
    null when the log lacked a mark). ``summary``: ``tree_rss_growth`` (KiB, the largest
    size's all-processes peak over the smallest's), ``ingest_records_per_s`` by size."""
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--sizes: comma-separated record counts, not {args.sizes!r}") from None
    record["parameters"] = {
        "sizes": sizes,
        "seed": args.seed,
        "shape": args.shape,
        "origins": args.origins or len(feed.ORIGINS),
    }
    runs: list[dict[str, Any]] = []
    record["measurements"] = {"runs": runs}
    print(f"memory: ours at {', '.join(f'{n:,}' for n in sizes)} records", flush=True)
    for size in sizes:
        result = memory_run(size, args.seed, work, args.shape, args.origins)
        runs.append(result)
        print(
            f"  {size:>10,} records: {result['wall']:.1f} s, {result['rss'] / 1024:.0f} MiB, "
            f"all processes {result['tree_rss'] / 1024:.0f} MiB",
            flush=True,
        )
    record["measurements"]["rss_floor"] = measure.rss_floor
    record["summary"] = {
        "tree_rss_growth": runs[-1]["tree_rss"] - runs[0]["tree_rss"],
        "rss_growth": runs[-1]["rss"] - runs[0]["rss"],
        "ingest_records_per_s": {
            str(r["records"]): r["records"] / r["phases"]["ingest"]
            for r in runs
            if r["phases"] and r["phases"]["ingest"] > 0
        },
    }
    return 0
