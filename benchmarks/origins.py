"""The build over many origins against the same records over three, in alternating pairs:

    python -m benchmarks origins --records 1000000 --origins 100000 --pairs 3

A broad crawl has many origins of a few pages each. The two feeds are the same generator's
(:mod:`benchmarks.feed`, ``--origins``), with the same records but their origin: three
(``ours``) or ``--origins`` drawn at random per record. Each pair runs the two builds one
after the other, in turns (three first, then many; then many first), and the ratio of
many to three is taken within the pair, so load that changes over the run weighs on both.
Before a run's time counts its output is checked: every origin folder is there, the
``<loc>`` count of all urlsets is the feed's distinct URLs, and the package's checker finds
no violation in a sample of origins (all of them up to 2,000; above, every fiftieth).
Issue 20's target: at most 3x the wall of the three-origin build, memory flat.

Each pair also runs the file system's floor (:mod:`benchmarks.file_floor`): as many origin
folders as the many-origins build published, each made, given the files of one of that
build's origins and renamed into place, in as many processes as the build stages in, and
nothing else. What the many-origins build costs over the three-origin one, less that floor,
is the package's own cost per origin.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import build, checks, feed, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse

    from .results import Record

#: Up to this many origins each is validated; above, every fiftieth (in folder order).
_VALIDATE_ALL = 2000
FLOOR = Path(__file__).with_name("file_floor.py")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=1_000_000, help="feed size")
    parser.add_argument("--origins", type=int, default=100_000, help="the many-origins feed's")
    parser.add_argument("--pairs", type=int, default=3, help="alternating pairs (at least 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shape", choices=feed.SHAPES, default="ours")


def _check(info: feed.FeedInfo, measured: measure.Measure, out: Path, log: Path) -> str:
    if measured.code:
        raise CheckFailed(f"exit status {measured.code}:\n{measure.tail(log)}")
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    if info.distinct_origins and len(folders) != info.distinct_origins:
        raise CheckFailed(f"{len(folders):,} origin folders, {info.distinct_origins:,} expected")
    measured.urls, measured.bytes = checks.count_locs(out)
    checks.require_count(f"{info.origins:,} origins", measured.urls, info.distinct_locs)
    step = 1 if len(folders) <= _VALIDATE_ALL else 50
    sample = folders[::step]
    # In chunks: the checker stops at 1,000 files a call (an index and its urlset each).
    for start in range(0, len(sample), 400):
        checks.validate(p / "sitemap.xml" for p in sample[start : start + 400])
    return f"{len(sample):,} of {len(folders):,} origins"


def _floor(work: Path, info: feed.FeedInfo, number: int) -> dict[str, Any]:
    """The file system's floor for ``info``'s origins (see the module's text), checked."""
    run_dir = work / f"floor-{number}"
    run_dir.mkdir()
    log = run_dir / "run.log"
    origins = info.distinct_origins or info.origins
    processes = os.cpu_count() or 1  # the build's default --workers
    command = [sys.executable, str(FLOOR), str(run_dir / "out"), str(work / "sample")]
    measured = measure.measured([*command, str(origins), str(processes)], run_dir, log)
    made = sum(1 for p in (run_dir / "out").iterdir() if p.is_dir())
    if measured.code or made != origins:
        raise CheckFailed(f"the floor made {made:,} of {origins:,} folders:\n{measure.tail(log)}")
    print(
        f"  pair {number + 1} floor {measured.wall:8.2f} s wall {measured.cpu:8.2f} s CPU "
        f"({origins:,} folders, {processes} processes)",
        flush=True,
    )
    shutil.rmtree(run_dir, ignore_errors=True)
    return measured.as_dict()


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``pairs`` (a list of ``{"three": Measure, "many": Measure,
    "first": which ran first}``). ``summary``: ``wall_ratio`` and ``cpu_ratio`` (many over
    three: the median of the pairs and each pair's), ``rss_mib`` and ``tree_rss_mib``
    (the medians, per feed), ``validated`` (what the checker saw)."""
    if args.pairs < 3 and not args.smoke:
        raise SystemExit("--pairs must be at least 3 (or --smoke, to try the harness)")
    if args.origins < 4:
        raise SystemExit("--origins: more than the three origins it is compared with")
    feeds = {
        "three": feed.build(args.records, args.seed, shape=args.shape),
        "many": feed.build(args.records, args.seed, shape=args.shape, origins=args.origins),
    }
    record["parameters"] = {
        "records": args.records,
        "origins": args.origins,
        "pairs": args.pairs,
        "seed": args.seed,
        "shape": args.shape,
        "feeds": {key: asdict(info) for key, info in feeds.items()},
    }
    pairs: list[dict[str, Any]] = []
    record["measurements"] = {"pairs": pairs}
    validated: dict[str, str] = {}
    env = measure.pydeps_env()
    print(f"origins: {args.records:,} records over 3 and {args.origins:,} origins", flush=True)
    for number in range(args.pairs):
        order = ("three", "many") if number % 2 == 0 else ("many", "three")
        pair: dict[str, Any] = {"first": order[0]}
        for key in order:
            run_dir = work / f"{key}-{number}"
            run_dir.mkdir()
            log = run_dir / "run.log"
            out = run_dir / "sitemaps"
            measured = measure.measured(
                build.ours_command(Path(feeds[key].path), run_dir),
                run_dir,
                log,
                env,
            )
            validated[key] = _check(feeds[key], measured, out, log)
            pair[key] = measured.as_dict()
            if key == "many" and not (work / "sample").exists():
                # One published origin's files (the first folder's): the floor's bytes.
                shutil.copytree(min(p for p in out.iterdir() if p.is_dir()), work / "sample")
            print(
                f"  pair {number + 1} {key:5} {measured.wall:8.2f} s wall {measured.cpu:8.2f} s "
                f"CPU {measured.rss / 1024:7.1f} MiB, all processes "
                f"{measured.tree_rss / 1024:7.1f} MiB  {measured.urls:>10,} URLs",
                flush=True,
            )
            shutil.rmtree(run_dir, ignore_errors=True)
        pair["floor"] = _floor(work, feeds["many"], number)
        pairs.append(pair)
    record["summary"] = summary(record)
    record["summary"]["validated"] = validated
    record["notes"] = [
        f"`validate` found no violation in {what} ({key} feed)." for key, what in validated.items()
    ]
    return 0


def summary(record: Record) -> dict[str, Any]:
    pairs = record["measurements"]["pairs"]
    result: dict[str, Any] = {}
    for name in ("wall", "cpu"):
        ratios = [p["many"][name] / p["three"][name] for p in pairs]
        result[f"{name}_ratio"] = {"median": statistics.median(ratios), "pairs": ratios}
    keys = ("three", "many", "floor") if all("floor" in p for p in pairs) else ("three", "many")
    for name in ("wall", "cpu", "rss", "tree_rss"):
        result[name] = {key: statistics.median(p[key][name] for p in pairs) for key in keys}
    if "floor" in keys:
        origins = record["parameters"]["origins"]
        for name in ("wall", "cpu"):
            # Per origin, within each pair: what many origins cost over three, and that
            # less the file system's floor (the package's own cost per origin).
            extra = [(p["many"][name] - p["three"][name]) / origins * 1e6 for p in pairs]
            own = [e - p["floor"][name] / origins * 1e6 for e, p in zip(extra, pairs)]
            result[f"{name}_per_origin_us"] = {
                "extra": statistics.median(extra),
                "floor": statistics.median(p["floor"][name] / origins * 1e6 for p in pairs),
                "own": statistics.median(own),
            }
        # The ratio if the package cost nothing per origin beyond the file system.
        bound = [(p["three"]["wall"] + p["floor"]["wall"]) / p["three"]["wall"] for p in pairs]
        result["wall_ratio_floor_only"] = statistics.median(bound)
    return result
