"""Markdown tables from benchmark result files, each with its command, machine, commit and
date under it.

    python -m benchmarks tables benchmarks/results/*.json --output benchmarks/RESULTS.md

One section per result, in the order given, by the renderer of its benchmark: the offline
build's (:mod:`benchmarks.build_tables`: build, memory, origins, profile-build, levels), the
crawl's (:mod:`benchmarks.crawl_tables`: crawl, crawl-docs, kill, profile-crawl), and here
ab (two revisions side by side, builds, crawls or a real site's pages) and the stores' sizes
(redis-memory, state-size). Several results of one benchmark also get a table side by side
(build: wall against the bare loop by run; crawl: the ratios by run; kill: one row per
run). A smoke run (``--smoke``) is labelled as one wherever its figures appear. Nothing here
measures: every figure comes from the files (:mod:`benchmarks.results`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from . import results
from .build_tables import (
    build_tables,
    builds_side_by_side,
    levels_tables,
    memory_tables,
    origins_tables,
    profile_build_tables,
)
from .crawl_tables import (
    crawl_docs_tables,
    crawl_tables,
    crawls_side_by_side,
    kill_tables,
    kills_side_by_side,
    profile_crawl_tables,
)
from .markdown import SMOKE, count, footer, ratios, table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from .results import Record


def ab_tables(record: Record) -> list[str]:
    p, s = record["parameters"], record["summary"]
    settings = f", the new side with {', '.join(f'`{x}`' for x in p['set'])}" if p["set"] else ""
    if p["what"] == "profile-docs":
        what = (
            f"the extension's work a page on the pages of `{p['docs']}` (`profile-crawl "
            f"--docs`, least of {p['repeat']} rounds a run)"
        )
    else:
        sizes = f"{p['records']:,} records" if p["what"] == "build" else f"{p['pages']:,} pages"
        what = f"whole {p['what']}s ({sizes})"
    out = [
        f"### A/B, {what}: the working tree against `{p['base']}`"
        f"{settings}, {count(s['pairs'], 'alternating pair')}",
        "",
    ]
    rows = [
        [
            key,
            f"**{f['ratio']:.3f}**",
            f"{f['new_better']} of {len(f['ratios'])}",
            ratios(f["ratios"], 3, ""),
            f"{f['new']:.3f}",
            f"{f['base']:.3f}",
        ]
        for key, f in s["figures"].items()
    ]
    out += table(
        ["figure", "new/base, median", "pairs the new side won", "per pair", "new", "base"],
        "lrrlrr",
        rows,
    )
    same = (
        []
        if p["what"] == "profile-docs"
        else [f"The two published the same urlsets in {s['same_output']} of {s['pairs']} pairs."]
    )
    out += ["", *same, "", footer(record), ""]
    return out


def redis_memory_tables(record: Record) -> list[str]:
    m, s = record["measurements"], record["summary"]
    out = ["### Redis memory of the shared store", ""]
    out += table(
        ["entries", "used_memory growth", "bytes per entry", "recorded a second (one client)"],
        "rrrr",
        [
            [
                f"{m['entries']:,}",
                f"{s['growth_mib']:,.1f} MiB",
                f"{s['bytes_per_entry']:,.0f}",
                f"{s['records_per_s']:,.0f}",
            ]
        ],
    )
    out += ["", footer(record), ""]
    return out


def state_size_tables(record: Record) -> list[str]:
    p, s = record["parameters"], record["summary"]
    out = [f"### The state file's bytes a URL ({p['urls']:,} URLs of one origin)", ""]
    out += table(
        ["URLs", "content notes", "URL set", "state file (vacuumed)"],
        "lrrr",
        [
            [
                label,
                f"{v['content_per_url']:.1f}",
                f"{v['url_per_url']:.1f}",
                f"{v['file_per_url']:.1f}",
            ]
            for label, v in s["state"].items()
        ],
    )
    out += [
        "",
        f"The duplicate choice holds {s['duplicate_choice_peak_per_url']:.0f} bytes a page at "
        f"its peak ({s['duplicate_choice_held_per_url']:.0f} after).",
        "",
        footer(record),
        "",
    ]
    return out


RENDERERS: dict[str, Callable[[Record], list[str]]] = {
    "build": build_tables,
    "origins": origins_tables,
    "memory": memory_tables,
    "crawl": crawl_tables,
    "crawl-docs": crawl_docs_tables,
    "kill": kill_tables,
    "ab": ab_tables,
    "profile-build": profile_build_tables,
    "profile-crawl": profile_crawl_tables,
    "levels": levels_tables,
    "redis-memory": redis_memory_tables,
    "state-size": state_size_tables,
}

SIDE_BY_SIDE: dict[str, Callable[[list[Record]], list[str]]] = {
    "build": builds_side_by_side,
    "crawl": crawls_side_by_side,
    "kill": kills_side_by_side,
}


def render(records: list[Record]) -> str:
    """The sections of ``records``, in order, then the side-by-side tables."""
    out: list[str] = []
    for record in records:
        if record["status"] != "ok":
            out += [
                f"### {record['benchmark']}: FAILED ({record['error']})",
                "",
                footer(record),
                "",
            ]
            continue
        out += RENDERERS[record["benchmark"]](record)
        notes = [n for n in record["notes"] if n]
        if notes:
            out += [*(f"- {note}" for note in notes), ""]
    for benchmark, side_by_side in SIDE_BY_SIDE.items():
        same = [r for r in records if r["benchmark"] == benchmark and r["status"] == "ok"]
        if len(same) > 1:
            out += side_by_side(same)
    return "\n".join(out).rstrip() + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", type=Path, metavar="RESULT", help="result files (or folders of them)"
    )
    parser.add_argument("--output", type=Path, help="the Markdown file to write (default: print)")
    parser.add_argument("--title", default="Benchmark results", help="the document's heading")


def main(args: argparse.Namespace) -> int:
    paths: list[Path] = []
    for path in args.files:
        paths += sorted(path.glob("*.json")) if path.is_dir() else [path]
    records = [results.load(path) for path in paths]
    smoke = any(r["smoke"] for r in records)
    names = shlex.join(
        ["python", "-m", "benchmarks", "tables", *(str(p) for p in args.files)]
        + (["--output", str(args.output)] if args.output else [])
    )
    head = [
        f"# {args.title}",
        "",
        f"Generated by `{names}` from {len(records)} result file(s); do not edit by hand.",
        "",
    ]
    if smoke:
        head += [f"> {SMOKE}", ""]
    text = "\n".join(head) + "\n" + render(records)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"{len(records)} result(s) rendered to {args.output}")
    else:
        print(text, end="")
    return 0
