"""The working tree's package against another revision's, side by side: whole builds or
whole crawls, alternating, each in its own process, with the ratio of every pair.

    python -m benchmarks.ab build --base HEAD~1 --records 1000000 --pairs 6
    python -m benchmarks.ab crawl --base HEAD~1 --pages 2000 --pairs 10
    python -m benchmarks.ab crawl --base HEAD --set SITEMAPGEN_IMAGES=False --pairs 16

``--set NAME=VALUE`` (repeatable) gives the new side's runs a Scrapy setting: with
``--base HEAD`` and a clean tree, one setting against the same code.

A change to the code is judged here, not by the time of the part it changed: reading
pages in batches made the extension's own code a third cheaper and the whole crawl slower
(README, "Performance"). On this shared machine a single pair can be off by 10 to 25 %,
so take the median of many pairs, and the count of pairs that went each way.

The base is ``git archive <rev> scrapy_sitemapgen`` put first on ``PYTHONPATH``; each
child process is checked to import the package it should. ``build`` runs
``scrapy sitemapgen-build --input`` on the benchmark feed (``benchmarks.feed``) and reports
wall and CPU (the process and the workers it waited for), and whether the two wrote the
same urlsets; ``crawl`` runs the benchmark crawl (``bench.crawl_command``, add-on on) and
reports responses/s and the crawl's process time per response (``-a cpu_stats=crawl``).
Both run through ``bench.measured``, as the benchmark's own runs do.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import bench, crawlsite, feed

REPO = bench.REPO
PACKAGE = "scrapy_sitemapgen"


class Failed(Exception):
    pass


def export_base(revision: str, into: Path) -> Path:
    """The package as of ``revision``, extracted under ``into``; the folder to put on
    PYTHONPATH."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, PACKAGE],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    if archive.returncode:
        raise Failed(f"git archive {revision}: {archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:  # Python before 3.10.12 / 3.11.4: no filters (our own archive)
            tar.extractall(into)
    return into


def environment(pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def imported_from(env: dict[str, str], cwd: Path) -> Path:
    found = subprocess.run(
        [sys.executable, "-c", f"import {PACKAGE}; print({PACKAGE}.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip()).parent


def digest(out: Path) -> str:
    """One hash of the urlsets (the indexes and the manifest hold the run's time; gzip
    members hold none, so equal URLs give equal bytes)."""
    total = hashlib.sha256()
    for path in bench.urlsets(out):
        total.update(path.name.encode())
        total.update(path.read_bytes())
    return total.hexdigest()


Run = Callable[[str, Path], dict[str, float | str]]


def measured(command: list[str], work: Path, env: dict[str, str]) -> bench.Measure:
    log = work / "run.log"
    measure = bench.measured(command, work, log, env)
    if measure.code:
        raise Failed(f"{' '.join(command[:3])} ... failed:\n{bench.tail(log)}")
    return measure


def settings_of(version: str, extra: list[str]) -> list[str]:
    """The ``-s`` options of a version's runs: ``--set`` is the new side's."""
    return [option for setting in extra for option in ("-s", setting)] if version == "new" else []


def build_runner(records: int, seed: int, envs: dict[str, dict[str, str]], extra: list[str]) -> Run:
    info = feed.build(records, seed)

    def run(version: str, work: Path) -> dict[str, float | str]:
        command = bench.ours_command(Path(info.path), work) + settings_of(version, extra)
        measure = measured(command, work, envs[version])
        return {"wall s": measure.wall, "CPU s": measure.cpu, "output": digest(work / "sitemaps")}

    return run


def crawl_runner(site: crawlsite.Site, envs: dict[str, dict[str, str]], extra: list[str]) -> Run:
    def run(version: str, work: Path) -> dict[str, float | str]:
        command = bench.crawl_command(site, work, cpu_stats="crawl") + settings_of(version, extra)
        measure = measured(command, work, envs[version])
        stats = bench.crawl_stats(work / "run.log")
        try:
            responses = float(stats["response_received_count"])
            return {
                "responses/s": responses / float(stats["elapsed_time_seconds"]),
                "crawl CPU ms a response": float(stats["bench/crawl_cpu"]) / responses * 1e3,
                "CPU s": measure.cpu,
                "output": digest(work / "sitemaps"),
            }
        except KeyError as exc:
            raise Failed(f"the crawl's stats lack {exc}:\n{bench.tail(work / 'run.log')}") from None

    return run


def compare(run: Run, pairs: int, scratch: Path) -> list[dict[str, dict[str, float | str]]]:
    results = []
    for number in range(pairs + 1):  # the first pair warms the caches and is not counted
        order = ("new", "base") if number % 2 == 0 else ("base", "new")
        pair = {}
        for version in order:
            work = scratch / f"{number}-{version}"
            work.mkdir()
            pair[version] = run(version, work)
            shutil.rmtree(work, ignore_errors=True)
        if number:
            results.append(pair)
            shown = ", ".join(
                f"{key} {pair['new'][key]:.3f} / {pair['base'][key]:.3f}"
                for key in pair["new"]
                if key != "output"
            )
            print(f"  pair {number}: {shown} (new / base)", flush=True)
    return results


def report(
    results: list[dict[str, dict[str, float | str]]], higher_is_better: set[str]
) -> list[str]:
    lines = []
    for key in results[0]["new"]:
        if key == "output":
            same = sum(pair["new"]["output"] == pair["base"]["output"] for pair in results)
            lines.append(f"- the two published the same files in {same} of {len(results)} pairs")
            continue
        ratios = [float(pair["new"][key]) / float(pair["base"][key]) for pair in results]
        better = sum((r > 1) if key in higher_is_better else (r < 1) for r in ratios)
        lines.append(
            f"- {key}: new/base median **{statistics.median(ratios):.3f}** "
            f"(new better in {better} of {len(ratios)} pairs; ratios {', '.join(f'{r:.3f}' for r in ratios)}); "
            f"medians {statistics.median(float(p['new'][key]) for p in results):.3f} new, "
            f"{statistics.median(float(p['base'][key]) for p in results):.3f} base"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=("build", "crawl"))
    parser.add_argument("--base", required=True, help="the git revision to compare with")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--records", type=int, default=300_000, help="build: feed size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", type=int, default=2000, help="crawl: site size")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for the new side's runs (repeatable)",
    )
    args = parser.parse_args(argv)
    if any("=" not in setting for setting in args.set):
        parser.error("--set takes NAME=VALUE")
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    scratch = Path(tempfile.mkdtemp(prefix="sitemapgen-ab-"))
    site = None
    try:
        base = export_base(args.base, scratch / "base")
        envs = {"new": environment(None), "base": environment(base)}
        for version, expected in (("new", REPO / PACKAGE), ("base", base / PACKAGE)):
            found = imported_from(envs[version], scratch)
            if found.resolve() != expected.resolve():
                raise Failed(f"the {version} run would import {found}, not {expected}")
        revision = subprocess.run(
            ["git", "rev-parse", "--short", args.base],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        with_settings = f" with {', '.join(args.set)}" if args.set else ""
        print(
            f"{args.what}: the working tree (new){with_settings} against {args.base} = {revision} "
            f"(base), {args.pairs} pairs",
            flush=True,
        )
        if args.what == "build":
            run = build_runner(args.records, args.seed, envs, args.set)
            higher: set[str] = set()
        else:
            site = crawlsite.Site(args.pages)
            run = crawl_runner(site, envs, args.set)
            higher = {"responses/s"}
        results = compare(run, args.pairs, scratch)
        print("\n".join(report(results, higher)))
    except Failed as exc:
        print(f"FAILED: {exc}", flush=True)
        return 1
    finally:
        if site is not None:
            site.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
