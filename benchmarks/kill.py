"""Kill and resume: a JOBDIR crawl killed with SIGKILL at random moments, then resumed to
completion, must publish exactly the site's listable URL set.

    python -m benchmarks kill --pages 2000 --trials 10 --kills 2 --seed 1
    python -m benchmarks kill --pages 2000 --trials 10 --pauses 1 --kills 2 --seed 1

The site is :mod:`tests.generated_site`'s, each page answered ``--delay`` seconds late. Each
trial starts from an empty JOBDIR and output, pauses the crawl ``--pauses`` times with
SIGINT (Ctrl-C: a clean close that keeps Scrapy's queue, as a user pauses a JOBDIR crawl),
kills it ``--kills`` times with SIGKILL, each at a random moment (seeded), then runs it
again until it finishes. After every trial the published sitemaps must list every listable
page once and nothing else, and no temporary file may be left in the output. A trial is
:mod:`tests.kill_trial`'s, which ``tests/test_killresume.py`` runs in short. Each trial also counts the requests the extension sent again
after the kills: requests Scrapy's JOBDIR alone would have dropped (in requests.seen, never
fetched). ``--baseline`` turns that off (``SITEMAPGEN_RESUME_REQUESTS=False``).
"""

from __future__ import annotations

import random
import statistics
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests import generated_site
from tests.kill_trial import run_trial

if TYPE_CHECKING:
    import argparse

    from .results import Record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--pauses", type=int, default=0, help="SIGINT pauses per trial, before the kills"
    )
    parser.add_argument("--kills", type=int, default=2, help="SIGKILLs per trial before the resume")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-delay", type=float, default=3.0, help="latest kill, seconds after start"
    )
    parser.add_argument("--delay", type=float, default=0.002, help="server delay per page, seconds")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="SITEMAPGEN_RESUME_REQUESTS=False: what Scrapy's JOBDIR alone gives",
    )


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``trials``, one per trial, as :class:`tests.kill_trial.Trial` (``ok`` added).
    ``summary``: ``passed``, ``failed``, ``reissued`` (min, median, max), ``lost`` (the
    missing URLs of the failed trials)."""
    record["parameters"] = {
        name: getattr(args, name)
        for name in ("pages", "trials", "pauses", "kills", "seed", "max_delay", "delay", "baseline")
    }
    trials: list[dict[str, Any]] = []
    record["measurements"] = {"trials": trials}
    rng = random.Random(args.seed)
    site = generated_site.Site(args.pages, args.delay)
    try:
        record["parameters"]["listable"] = len(site.expected())
        print(
            f"site: {args.pages} pages, {len(site.expected())} listable; seed {args.seed}"
            f"{'; BASELINE: no resume of in-flight requests' if args.baseline else ''}"
        )
        for number in range(1, args.trials + 1):
            with tempfile.TemporaryDirectory(prefix="kill-", dir=work) as folder:
                trial = run_trial(
                    site,
                    rng,
                    args.kills,
                    Path(folder),
                    args.max_delay,
                    resume=not args.baseline,
                    pauses=args.pauses,
                )
            trials.append({**asdict(trial), "ok": trial.ok})
            print(
                f"trial {number}: "
                f"{f'paused at {trial.paused_at} s, ' if trial.paused_at else ''}"
                f"killed at {trial.killed_at} s, {trial.runs} resume run(s), "
                f"{trial.reissued} request(s) sent again, missing {trial.missing}, extra "
                f"{trial.extra}, duplicates {trial.duplicates}, leftovers {trial.leftovers}, "
                f"broken queue files removed {trial.queues_removed}, "
                f"{trial.seconds} s -> {'ok' if trial.ok else 'FAILED'}",
                flush=True,
            )
    finally:
        site.close()
    record["summary"] = summary(trials)
    print(f"{record['summary']['passed']} passed, {record['summary']['failed']} failed")
    return 1 if record["summary"]["failed"] else 0


def summary(trials: list[dict[str, Any]]) -> dict[str, Any]:
    reissued = sorted(int(t["reissued"]) for t in trials)
    failed = [t for t in trials if not t["ok"]]
    return {
        "passed": len(trials) - len(failed),
        "failed": len(failed),
        "reissued": {"min": reissued[0], "median": statistics.median(reissued), "max": reissued[-1]}
        if reissued
        else None,
        "lost": sorted(int(t["missing"]) for t in failed),
        "queues_removed": sum(int(t["queues_removed"]) for t in trials),
    }
