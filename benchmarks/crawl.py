"""Crawl overhead: the same local crawl with the add-on on and with
``SITEMAPGEN_ENABLED=False``, in alternating pairs.

    python -m benchmarks crawl --pages 2000 --pairs 5

``scrapy runspider`` of :mod:`tests.generated_site` over its site on 127.0.0.1. A warm-up
crawl first, not counted, whose files are validated; then ``--pairs`` pairs, the order
flipped every pair. Responses/s from the crawl's stats (``response_received_count`` over
``elapsed_time_seconds``, which ends before the sitemaps are written at close), the store's
ingestion rate (``sitemapgen/pages/recorded`` over the same), and what the spider counts
with ``-a cpu_stats=1``: the crawl's process time from the first request to the last
response parsed and, add-on on, the part of it spent in the extension's code. That part
is the steady figure; responses/s drifts with the machine, so a change is judged on both.
"""

from __future__ import annotations

import itertools
import shutil
import statistics
from typing import TYPE_CHECKING, Any

from tests import generated_site

from . import checks, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from .results import Record

_numbers = itertools.count(1)


def benchmark_command(
    site: generated_site.Site, run: Path, *settings: str, cpu_stats: str = "1"
) -> list[str]:
    """The benchmark crawl of ``site``: its sitemaps to ``run / "sitemaps"``, its state in
    ``run``, 16 requests at a time to the one host; ``cpu_stats`` as the spider takes it."""
    return generated_site.crawl_command(
        site,
        run / "sitemaps",
        f"SITEMAPGEN_STATE={run / 'state.sqlite3'}",
        "CONCURRENT_REQUESTS_PER_DOMAIN=16",
        *settings,
        cpu_stats=cpu_stats,
    )


def crawl(site: generated_site.Site, on: bool, work: Path, validate_output: bool) -> dict[str, Any]:
    """One measured crawl, its output checked: the Measure fields, and ``elapsed``,
    ``responses``, ``recorded``, ``crawl_cpu``, ``extension_cpu`` from its stats."""
    run = work / f"crawl-{next(_numbers)}"
    run.mkdir()
    out = run / "sitemaps"
    command = benchmark_command(site, run, *([] if on else ["SITEMAPGEN_ENABLED=False"]))
    log = run / "crawl.log"
    measured = measure.measured(command, run, log)
    stats = generated_site.crawl_stats(log.read_text(errors="replace"))
    if measured.code or stats.get("finish_reason") != "'finished'":
        raise CheckFailed(f"crawl (add-on {'on' if on else 'off'}) failed:\n{measure.tail(log)}")
    responses = int(stats["response_received_count"])
    if responses < site.pages:
        raise CheckFailed(
            f"the crawl saw {responses} responses, fewer than the site's {site.pages} pages"
        )
    if on:
        checks.require_url_set("the crawl", out, site.expected())
        if validate_output:
            checks.validate(sorted(out.glob("*/sitemap.xml")))
        if not float(stats["bench/extension_cpu"]):
            raise CheckFailed(
                "the crawl counted no time in the extension: was its middleware found?"
            )
    elif out.exists():
        raise CheckFailed(f"SITEMAPGEN_ENABLED=False wrote {out}")
    result = {
        "on": on,
        **measured.as_dict(),
        "elapsed": float(stats["elapsed_time_seconds"]),
        "responses": responses,
        "recorded": int(stats.get("sitemapgen/pages/recorded", "0")),
        "crawl_cpu": float(stats["bench/crawl_cpu"]),
        "extension_cpu": float(stats["bench/extension_cpu"]),
    }
    shutil.rmtree(run, ignore_errors=True)
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pages", type=int, default=2000, help="pages of the site (at least 2000)")
    parser.add_argument("--pairs", type=int, default=5, help="alternating pairs (at least 5)")


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``warmup`` (the first crawl, add-on on, not counted) and ``pairs``
    (``{"on": crawl, "off": crawl, "order": "on,off" or "off,on"}``; a crawl as
    :func:`crawl` returns it). ``summary``: medians and per-pair ratios."""
    if (args.pairs < 5 or args.pages < 2000) and not args.smoke:
        raise SystemExit("--pairs must be at least 5 and --pages at least 2000 (or --smoke)")
    record["parameters"] = {"pages": args.pages, "pairs": args.pairs}
    pairs: list[dict[str, Any]] = []
    record["measurements"] = {"warmup": None, "pairs": pairs}
    site = generated_site.Site(args.pages)
    try:
        record["parameters"]["listable"] = len(site.expected())
        print(
            f"crawl: {args.pages} pages at {site.root}, {len(site.expected())} listable; "
            "warm-up run",
            flush=True,
        )
        # Not counted: warms the caches, and its files are validated.
        record["measurements"]["warmup"] = crawl(site, True, work, validate_output=True)
        for number in range(args.pairs):
            order = (True, False) if number % 2 == 0 else (False, True)
            done = {on: crawl(site, on, work, validate_output=False) for on in order}
            pairs.append(
                {"on": done[True], "off": done[False], "order": "on,off" if order[0] else "off,on"}
            )
            print(
                f"  pair {number + 1}: on {done[True]['responses'] / done[True]['elapsed']:6.1f} "
                f"responses/s, off {done[False]['responses'] / done[False]['elapsed']:6.1f}",
                flush=True,
            )
    finally:
        site.close()
    record["measurements"]["rss_floor"] = measure.rss_floor
    record["summary"] = summary(pairs)
    return 0


def summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    def rate(c: dict[str, Any]) -> float:
        return float(c["responses"]) / c["elapsed"]

    def per_response(c: dict[str, Any]) -> float:
        return float(c["crawl_cpu"]) / c["responses"]

    ons = [p["on"] for p in pairs]
    offs = [p["off"] for p in pairs]
    ratios = [rate(p["on"]) / rate(p["off"]) for p in pairs]
    cpu_ratios = [per_response(p["on"]) / per_response(p["off"]) for p in pairs]
    return {
        "responses": ons[0]["responses"],
        "responses_per_s": {
            "on": statistics.median(map(rate, ons)),
            "off": statistics.median(map(rate, offs)),
        },
        "responses_per_s_ratio": statistics.median(ratios),
        "responses_per_s_ratios": ratios,
        "cpu": {
            "on": statistics.median(c["cpu"] for c in ons),
            "off": statistics.median(c["cpu"] for c in offs),
        },
        "rss": {
            "on": statistics.median(c["rss"] for c in ons),
            "off": statistics.median(c["rss"] for c in offs),
        },
        "recorded_per_s": statistics.median(c["recorded"] / c["elapsed"] for c in ons),
        "extension_cpu_per_response": statistics.median(
            c["extension_cpu"] / c["responses"] for c in ons
        ),
        "extension_share": statistics.median(c["extension_cpu"] / c["crawl_cpu"] for c in ons),
        "crawl_cpu_per_response": {
            "on": statistics.median(map(per_response, ons)),
            "off": statistics.median(map(per_response, offs)),
        },
        "crawl_cpu_per_response_ratios": cpu_ratios,
        "crawl_cpu_per_response_ratio": statistics.median(cpu_ratios),
    }
