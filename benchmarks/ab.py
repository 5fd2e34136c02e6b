"""The working tree's package against another revision's, side by side: whole builds or
whole crawls, alternating, each in its own process, with the ratio of every pair.

    python -m benchmarks ab build --base HEAD~1 --records 1000000 --pairs 6
    python -m benchmarks ab build --base HEAD~1 --records 1000000 --origins 100000 --pairs 4
    python -m benchmarks ab crawl --base HEAD~1 --pages 2000 --pairs 10
    python -m benchmarks ab crawl --base HEAD --set SITEMAPGEN_IMAGES=False --pairs 16
    python -m benchmarks ab profile-docs --base HEAD~1 --docs debian-handbook --pairs 4

``--set NAME=VALUE`` (repeatable) gives the new side's runs a Scrapy setting: with
``--base HEAD`` and a clean tree, one setting against the same code.

A change to the code is judged here, on the whole run, not by the time of the part it
changed: a change can make the extension's own code cheaper and the whole crawl slower.
One pair on a shared machine can be off either way by more than the change being
measured, so take the median of many pairs, and the count of pairs that went each way.

The base is ``git archive <rev> scrapy_sitemapgen`` put first on ``PYTHONPATH``, the new
side the working tree; each child process is checked to import the package it should. ``build`` runs
``scrapy sitemapgen-build --input`` on the benchmark feed (:mod:`benchmarks.feed`) and
records wall and CPU (the process and the workers it waited for), and whether the two wrote
the same urlsets; ``crawl`` runs the benchmark crawl (``crawl``'s, add-on on) and records
responses/s and the crawl's process time per response (``-a cpu_stats=crawl``). Both run
through :func:`benchmarks.measure.measured`, as the other benchmarks' runs do.
``profile-docs`` runs ``profile-crawl --docs PACKAGE`` (a real site's pages, the
extension's process time a page outside a crawl) with each side's package first on the
path, and records its figures a page: the steadiest way to see a change to the per-page
work, which a whole crawl's noise can hide. The first pair warms the caches and is not
counted.
"""

from __future__ import annotations

import configparser
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests import generated_site

from . import checks, feed, measure
from .build import ours_command
from .crawl import benchmark_command
from .results import REPO

if TYPE_CHECKING:
    import argparse

    from .results import Record

PACKAGE = "scrapy_sitemapgen"


class Failed(checks.CheckFailed):
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
    _entry_points(revision, into)
    return into


def _entry_points(revision: str, into: Path) -> None:
    """A ``dist-info`` in ``into`` with the ``scrapy.commands`` of ``revision``'s
    setup.cfg: Scrapy loads every command the installed metadata names, and one the
    revision does not have yet (its module missing) would stop every ``scrapy`` command
    of the base side. First on the path, it shadows the installed metadata."""
    setup = subprocess.run(
        ["git", "show", f"{revision}:setup.cfg"], cwd=REPO, capture_output=True, check=True
    )
    config = configparser.ConfigParser()
    config.read_string(setup.stdout.decode())
    commands = config["options.entry_points"]["scrapy.commands"].strip()
    info = into / "scrapy_sitemapgen-0.0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: scrapy-sitemapgen\nVersion: 0.0.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[scrapy.commands]\n{commands}\n", encoding="utf-8")


def environment(pythonpath: Path) -> dict[str, str]:
    """This process's environment with ``pythonpath`` as the whole ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": str(pythonpath)}


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


Run = Callable[[str, Path], dict[str, Any]]


def measured(command: list[str], work: Path, env: dict[str, str]) -> measure.Measure:
    log = work / "run.log"
    result = measure.measured(command, work, log, env)
    if result.code:
        raise Failed(f"{' '.join(command[:3])} ... failed:\n{measure.tail(log)}")
    return result


def settings_of(version: str, extra: list[str]) -> list[str]:
    """The ``-s`` options of a version's runs: ``--set`` is the new side's."""
    return [option for setting in extra for option in ("-s", setting)] if version == "new" else []


def build_runner(info: feed.FeedInfo, envs: dict[str, dict[str, str]], extra: list[str]) -> Run:
    def run(version: str, work: Path) -> dict[str, Any]:
        command = ours_command(Path(info.path), work) + settings_of(version, extra)
        result = measured(command, work, envs[version])
        out = work / "sitemaps"
        result.urls, result.bytes = checks.count_locs(out)
        if version == "new":  # the base may normalise differently: its count is its own
            checks.require_count("the new build", result.urls, info.distinct_locs)
        return {"wall s": result.wall, "CPU s": result.cpu, "output": checks.urlset_digest(out)}

    return run


def crawl_runner(
    site: generated_site.Site, envs: dict[str, dict[str, str]], extra: list[str]
) -> Run:
    def run(version: str, work: Path) -> dict[str, Any]:
        command = benchmark_command(site, work, cpu_stats="crawl") + settings_of(version, extra)
        result = measured(command, work, envs[version])
        stats = generated_site.crawl_stats((work / "run.log").read_text(errors="replace"))
        try:
            responses = float(stats["response_received_count"])
            return {
                "responses/s": responses / float(stats["elapsed_time_seconds"]),
                "crawl CPU ms a response": float(stats["bench/crawl_cpu"]) / responses * 1e3,
                "CPU s": result.cpu,
                "output": checks.urlset_digest(work / "sitemaps"),
            }
        except KeyError as exc:
            raise Failed(
                f"the crawl's stats lack {exc}:\n{measure.tail(work / 'run.log')}"
            ) from None

    return run


def profile_docs_runner(package: str, repeat: int, paths: dict[str, Path], extra: list[str]) -> Run:
    """``profile-crawl --docs`` in a child process whose path puts the side's package
    before the harness's checkout (``paths``: each side's folder of the package)."""
    if extra:
        raise SystemExit("ab profile-docs takes no --set")

    def run(version: str, work: Path) -> dict[str, Any]:
        result_file = work / "profile.json"
        code = (
            f"import sys; sys.path[:0] = [{str(paths[version])!r}, {str(REPO)!r}]; "
            "from benchmarks.cli import main; "
            f"sys.exit(main(['profile-crawl', '--docs', {package!r}, '--repeat', "
            f"'{repeat}', '--results', {str(result_file)!r}, '--no-tables']))"
        )
        measured([sys.executable, "-c", code], work, dict(os.environ))
        summary = json.loads(result_file.read_text())["summary"]
        return {
            "ours µs a page": summary["ours_us_per_page"],
            "baseline µs a page": summary["baseline_us_per_page"],
            "ours / baseline": summary["ours_vs_baseline"],
            "output": None,
        }

    return run


def compare(run: Run, pairs: int, scratch: Path, results: list[dict[str, Any]]) -> None:
    """``pairs`` counted pairs, after one that is not, appended to ``results``."""
    for number in range(pairs + 1):
        order = ("new", "base") if number % 2 == 0 else ("base", "new")
        pair: dict[str, Any] = {}
        for version in order:
            work = scratch / f"{number}-{version}"
            work.mkdir()
            pair[version] = run(version, work)
            shutil.rmtree(work, ignore_errors=True)
        if number:
            results.append({**pair, "order": ",".join(order)})
            shown = ", ".join(
                f"{key} {pair['new'][key]:.3f} / {pair['base'][key]:.3f}"
                for key in pair["new"]
                if key != "output"
            )
            print(f"  pair {number}: {shown} (new / base)", flush=True)


def summary(results: list[dict[str, Any]], higher_is_better: set[str]) -> dict[str, Any]:
    """For each figure: the median of new/base over the pairs, every pair's ratio, how many
    pairs the new side won, and each side's median; and how many pairs published the same
    urlsets."""
    figures: dict[str, Any] = {}
    same = sum(pair["new"]["output"] == pair["base"]["output"] for pair in results)
    for key in results[0]["new"]:
        if key == "output":
            continue
        ratios = [float(pair["new"][key]) / float(pair["base"][key]) for pair in results]
        figures[key] = {
            "ratio": statistics.median(ratios),
            "ratios": ratios,
            "new_better": sum((r > 1) if key in higher_is_better else (r < 1) for r in ratios),
            "higher_is_better": key in higher_is_better,
            "new": statistics.median(float(p["new"][key]) for p in results),
            "base": statistics.median(float(p["base"][key]) for p in results),
        }
    return {"figures": figures, "same_output": same, "pairs": len(results)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=("build", "crawl", "profile-docs"))
    parser.add_argument("--base", required=True, help="the git revision to compare with")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--records", type=int, default=300_000, help="build: feed size")
    feed.add_shape_arguments(parser)  # build: the feed's --shape and --origins
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", type=int, default=2000, help="crawl: site size")
    parser.add_argument(
        "--docs",
        default="debian-handbook",
        metavar="PACKAGE",
        help="profile-docs: the Debian documentation package whose pages are read",
    )
    parser.add_argument("--repeat", type=int, default=3, help="profile-docs: rounds a run")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for the new side's runs (repeatable)",
    )


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``parameters`` hold ``base`` and its ``base_commit``; ``measurements``: ``pairs``,
    one ``{"new": figures, "base": figures, "order"}`` per counted pair (figures: ``wall s``
    and ``CPU s``, or ``responses/s``, ``crawl CPU ms a response`` and ``CPU s``, and the
    ``output`` digest). ``summary``: :func:`summary`."""
    if any("=" not in setting for setting in args.set):
        raise SystemExit("--set takes NAME=VALUE")
    if args.pairs < 1:
        raise SystemExit("--pairs must be at least 1")
    site = None
    try:
        base = export_base(args.base, work / "base")
        # The working tree first on the path too, not whatever the environment has
        # installed (an editable install of another checkout would win otherwise).
        envs = {"new": environment(REPO), "base": environment(base)}
        for version, expected in (("new", REPO / PACKAGE), ("base", base / PACKAGE)):
            found = imported_from(envs[version], work)
            if found.resolve() != expected.resolve():
                raise Failed(f"the {version} run would import {found}, not {expected}")
        commit = subprocess.run(
            ["git", "rev-parse", args.base], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        record["code"]["base"] = {"revision": args.base, "commit": commit, "short": commit[:7]}
        record["parameters"] = {
            "what": args.what,
            "base": args.base,
            "base_commit": commit,
            "pairs": args.pairs,
            "set": args.set,
        }
        with_settings = f" with {', '.join(args.set)}" if args.set else ""
        print(
            f"{args.what}: the working tree (new){with_settings} against {args.base} = "
            f"{commit[:7]} (base), {args.pairs} pairs",
            flush=True,
        )
        if args.what == "build":
            info = feed.build(args.records, args.seed, shape=args.shape, origins=args.origins)
            record["parameters"].update(
                records=args.records, seed=args.seed, shape=args.shape, origins=args.origins
            )
            runner = build_runner(info, envs, args.set)
            higher: set[str] = set()
        elif args.what == "profile-docs":
            record["parameters"].update(docs=args.docs, repeat=args.repeat)
            runner = profile_docs_runner(
                args.docs, args.repeat, {"new": REPO, "base": base}, args.set
            )
            higher = set()
        else:
            site = generated_site.Site(args.pages)
            record["parameters"]["pages"] = args.pages
            runner = crawl_runner(site, envs, args.set)
            higher = {"responses/s"}
        pairs: list[dict[str, Any]] = []
        record["measurements"] = {"pairs": pairs}
        compare(runner, args.pairs, work, pairs)
        record["summary"] = summary(pairs, higher)
    finally:
        if site is not None:
            site.close()
    return 0
