"""Markdown tables from benchmark result files, each with its command, machine, commit and
date under it.

    python -m benchmarks tables benchmarks/results/*.json --output benchmarks/RESULTS.md

One section per result, in the order given: build (against the bare loop, the contenders'
throughput, gzip levels), memory, crawl (add-on on against off, the extension's own time),
crawl-docs (a real site, the add-on against none), kill, ab, profile-build, profile-crawl,
spy-crawl, levels, redis-memory. Several results of
one benchmark also get a table side by side (build: wall against the bare loop by run;
crawl: the ratios by run; kill: one row per run, as the README's Reliability table). A
smoke run (``--smoke``) is labelled as one wherever its figures appear. Nothing here
measures: every figure comes from the files (:mod:`benchmarks.results`).
"""

from __future__ import annotations

import shlex
import statistics
from pathlib import Path
from typing import TYPE_CHECKING

from . import results

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from .results import Record

SMOKE = (
    "**Smoke run of the harness** (`--smoke`: sizes too small to measure anything): "
    "not figures to publish."
)


# --- formatting ----------------------------------------------------------------------------


def count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def mib(kib: float, floor: float = 0) -> str:
    if floor and kib <= floor * 1.05:
        return f"< {floor / 1024:,.0f} MiB"  # the launcher's own floor: see measure._LAUNCHER
    return f"{kib / 1024:,.0f} MiB"


def size(count: float | None) -> str:
    if not count:
        return "-"
    return f"{count / 1e6:,.2f} MB" if count >= 1e5 else f"{count / 1e3:,.1f} kB"


def seconds(value: float) -> str:
    return f"{value:,.2f} s" if value < 100 else f"{value:,.0f} s"


def ratios(values: list[float], digits: int = 2, mark: str = "×") -> str:
    return ", ".join(f"{v:.{digits}f}{mark}" for v in values)


def machine(record: Record) -> str:
    m = record["machine"]
    extra = [f"zlib {m['zlib']}"]
    if m.get("zlib_ng"):
        extra.append(f"zlib-ng {m['zlib_ng']}")
    if m.get("orjson"):
        extra.append(f"orjson {m['orjson']}")
    load = m.get("load_average")
    return (
        f"{m['cores']} cores, Python {m['python']}, Scrapy {m['scrapy']}, {', '.join(extra)}, "
        f"{m['system']} {m['arch']}" + (f", load {load[0]:.2f} at the start" if load else "")
    )


def code(record: Record) -> str:
    c = record["code"]
    text = f"`{c['short']}`" + (" + uncommitted changes in the package" if c["dirty"] else "")
    if c.get("changed_during_run"):
        text += " (the package changed during the run)"
    if "base" in c:
        text += f" against base `{c['base']['revision']}` = `{c['base']['short']}`"
    return text


def footer(record: Record) -> str:
    """What goes under each table: how the figures were made."""
    line = (
        f"<sub>Command: `{record['invocation']}` · machine: {machine(record)} · commit "
        f"{code(record)} · {record['date']}"
        + (f" · status: {record['status']} ({record['error']})" if record["status"] != "ok" else "")
        + "</sub>"
    )
    return f"{SMOKE}\n{line}" if record["smoke"] else line


def table(header: list[str], align: str, rows: list[list[str]]) -> list[str]:
    """A Markdown table; ``align`` has one letter a column: ``l`` or ``r``."""
    marks = ["---" if a == "l" else "---:" for a in align]
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(marks) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def run_label(record: Record) -> str:
    return f"{record['code']['short']}, {record['date'][:10]}" + (
        " (smoke)" if record["smoke"] else ""
    )


# --- one result ----------------------------------------------------------------------------


def build_tables(record: Record) -> list[str]:
    p, s, m = record["parameters"], record["summary"], record["measurements"]
    floor = m.get("rss_floor", 0)
    f = p["feed"]
    out = [
        f"### Writing sitemaps from {p['records']:,} records",
        "",
        f"Input: {f['records']:,} JSON-lines records ({size(f['bytes'])}, seed {f['seed']}): "
        f"{f['distinct_locs']:,} distinct URLs on 3 origins, {f['non_ascii']:,} with non-ASCII "
        f"paths ({f['raw_non_ascii']:,} raw UTF-8), {f['ampersand']:,} with `&`, "
        f"{f['images']:,} images, {f['with_lastmod']:,} lastmods, {f['repeats']:,} repeated "
        f"pages. Median of {count(p['repeat'], 'alternating round')}, each run in its own process.",
        "",
    ]
    rows = []
    for c in s["contenders"].values():
        rows.append(
            [
                c["label"],
                f"**{c['wall_vs_bare']:.2f}×**"
                if c["label"].startswith("ours")
                else f"{c['wall_vs_bare']:.2f}×",
                seconds(c["wall"]),
                seconds(c["cpu"]),
                mib(c["rss"], floor),
                mib(c["tree_rss"], floor),
                size(c["bytes"]),
                f"{c['urls']:,}",
                f"{c['records_per_s']:,.0f}",
            ]
        )
    out += table(
        [
            "contender",
            "wall vs bare loop",
            "wall",
            "CPU (user+sys)",
            "peak RSS",
            "peak RSS, all processes",
            "output",
            "URLs written",
            "records/s",
        ],
        "lrrrrrrrr",
        rows,
    )
    out += [
        "",
        f"Ours against the bare loop within each round: {ratios(s['ours_vs_bare_rounds'])} "
        f"(median {s['ours_vs_bare_rounds_median']:.2f}×).",
        "",
    ]
    if "least_vs_bare_rounds" in s:
        least = s["least_vs_bare_rounds"]
        out += [
            f"The floor (`least`) against the bare loop within each round: {ratios(least)} "
            f"(median {statistics.median(least):.2f}×); ours over the floor: wall "
            f"{ratios(s['ours_vs_least_rounds'])}, CPU {ratios(s['ours_vs_least_cpu_rounds'])}.",
            "",
        ]
    out += [
        footer(record),
        "",
    ]
    if s["throughput_vs"]:
        out += [f"### Throughput of ours against the contenders, {p['records']:,} records", ""]
        rows = [
            [
                s["contenders"][key]["label"],
                f"**{t['median']:.2f}×**",
                f"{min(t['rounds']):.2f}× to {max(t['rounds']):.2f}×",
            ]
            for key, t in s["throughput_vs"].items()
        ]
        out += table(
            ["against", "ours' throughput (its wall / ours, medians)", "round by round"],
            "lrr",
            rows,
        )
        out += ["", footer(record), ""]
    g = s["gzip"]
    default = f"{p['gzip_default']['level']}, {p['gzip_default']['backend']}"
    out += [
        f"### Our urlsets at the default gzip level and at 9, {p['records']:,} records",
        "",
        f"{size(g['raw_bytes'])} of XML uncompressed (the bare loop's: {size(g['bare_raw_bytes'])}).",
        "",
    ]
    out += table(
        ["gzip level", "urlset bytes", "vs the default", "time"],
        "lrrr",
        [
            [
                f"{default} (default)",
                f"{g['default_bytes']:,.0f}",
                "1.000",
                f"{seconds(g['default_wall'])} wall, the whole build",
            ],
            [
                "9 (`-s SITEMAPGEN_GZIP_LEVEL=9`, one run)",
                f"{g['level9_bytes']:,.0f}",
                f"{g['level9_vs_default']:.3f}",
                f"{seconds(g['level9_wall'])} wall, the whole build",
            ],
            [
                "Python's zlib at 9 (recompressed)",
                f"{g['zlib9_bytes']:,.0f}",
                f"{g['zlib9_vs_default']:.3f}",
                f"{seconds(g['zlib9_seconds'])} to recompress",
            ],
        ],
    )
    out += [
        "",
        f"The default writes {g['default_over_smallest_9']:+.1%} against the smaller level 9.",
        "",
        footer(record),
        "",
    ]
    return out


def memory_tables(record: Record) -> list[str]:
    m, s = record["measurements"], record["summary"]
    floor = m.get("rss_floor", 0)
    rows = []
    for r in m["runs"]:
        ph = r["phases"]
        cells = (
            [
                seconds(ph["startup"]),
                seconds(ph["ingest"]),
                f"{r['records'] / ph['ingest']:,.0f} records/s" if ph["ingest"] > 0 else "-",
                seconds(ph["write"]),
            ]
            if ph
            else ["?"] * 4
        )
        rows.append(
            [
                f"{r['records']:,}",
                f"{r['urls']:,}",
                seconds(r["wall"]),
                mib(r["rss"], floor),
                mib(r["tree_rss"], floor),
                *cells,
            ]
        )
    out = ["### Memory and phases of ours (`sitemapgen-build --input`, one run per size)", ""]
    out += table(
        [
            "records",
            "URLs",
            "wall",
            "peak RSS (main process)",
            "peak RSS, all processes",
            "start-up",
            "ingestion into the store",
            "ingestion rate",
            "writing + publishing",
        ],
        "rrrrrrrrr",
        rows,
    )
    runs = m["runs"]
    out += [
        "",
        f"All processes, from {runs[0]['records']:,} to {runs[-1]['records']:,} records: "
        f"{s['tree_rss_growth'] / 1024:+,.0f} MiB (main process {s['rss_growth'] / 1024:+,.0f} MiB).",
        "",
        footer(record),
        "",
    ]
    return out


def crawl_tables(record: Record) -> list[str]:
    p, s, m = record["parameters"], record["summary"], record["measurements"]
    floor = m.get("rss_floor", 0)
    out = [
        f"### Crawl overhead: {p['pages']:,} pages ({s['responses']:,} responses with the 404s), "
        f"{count(p['pairs'], 'alternating pair')}",
        "",
    ]
    out += table(
        ["crawl", "responses/s vs add-on off", "responses/s", "CPU (user+sys)", "peak RSS"],
        "lrrrr",
        [
            [
                "`SITEMAPGEN_ENABLED=False`",
                "1.00×",
                f"{s['responses_per_s']['off']:,.0f}",
                seconds(s["cpu"]["off"]),
                mib(s["rss"]["off"], floor),
            ],
            [
                "add-on on",
                f"**{s['responses_per_s_ratio']:.3f}×** (pairs: "
                f"{ratios(s['responses_per_s_ratios'], 3, '')})",
                f"{s['responses_per_s']['on']:,.0f}",
                seconds(s["cpu"]["on"]),
                mib(s["rss"]["on"], floor),
            ],
        ],
    )
    out += [
        "",
        "responses/s: `response_received_count` over `elapsed_time_seconds`, which ends before "
        "the sitemaps are written at close; medians of the crawls.",
        "",
    ]
    out += table(
        ["the extension in the crawl (medians)", "add-on on", "add-on off"],
        "lrr",
        [
            [
                "its own code a response (middleware and the store's flushes, the shared parse left out)",
                f"{s['extension_cpu_per_response'] * 1e6:,.0f} µs",
                "-",
            ],
            ["its share of the crawl's process time", f"{s['extension_share']:.1%}", "-"],
            [
                "the crawl's process time a response (first request to last response parsed)",
                f"{s['crawl_cpu_per_response']['on'] * 1e3:.2f} ms",
                f"{s['crawl_cpu_per_response']['off'] * 1e3:.2f} ms",
            ],
            [
                "the crawl's process time a response, on over off, per pair",
                f"{s['crawl_cpu_per_response_ratio']:.3f}× ({ratios(s['crawl_cpu_per_response_ratios'], 3, '')})",
                "-",
            ],
            ["pages recorded into the store a second", f"{s['recorded_per_s']:,.0f}", "-"],
        ],
    )
    out += ["", footer(record), ""]
    return out


def spread(figure: dict[str, float]) -> str:
    """A median of per-pair ratios with its spread (:func:`benchmarks.docsite.pair_spread`)."""
    return (
        f"**{figure['median']:.3f}×** (quartiles {figure['q1']:.3f}–{figure['q3']:.3f}, "
        f"range {figure['min']:.3f}–{figure['max']:.3f})"
    )


def crawl_docs_tables(record: Record) -> list[str]:
    p, s, m = record["parameters"], record["summary"], record["measurements"]
    floor = m.get("rss_floor", 0)
    load = s["load"]
    out = [
        f"### Crawl cost on a real site: {p['package']} {p['package_version']} served by "
        f"{p['server']} {p['server_version']} on 127.0.0.1, {count(s['pairs'], 'alternating pair')}",
        "",
        f"{p['pages']:,} HTML pages ({count(len(p['languages']), 'language')} and the root page), "
        f"{p['img_elements']:,} `<img>` elements in them ({p['image_files']:,} image files); the "
        f"add-on listed {s['images_listed']:,} images (distinct per page). Add-on on: "
        "`ADDONS` with the add-on and `SITEMAPGEN_RESPECT_CANONICAL=False`; off: `ADDONS={}`.",
        "",
    ]
    rows = [
        [
            label,
            spread(s[key]),
            f"{s[key]['on_faster']} of {len(s[key]['pairs'])}",
            unit(s[key]["on"]),
            unit(s[key]["off"]),
        ]
        for key, label, unit in (
            ("wall", "wall, the whole process", seconds),
            ("cpu", "CPU (user+sys), the whole process", seconds),
            (
                "time_per_response",
                "time a response (`elapsed_time_seconds` / responses)",
                lambda v: f"{v * 1e3:.2f} ms",
            ),
        )
    ]
    out += table(
        [
            "figure",
            "on over off, median of the pairs",
            "pairs faster with the add-on",
            "add-on on (median)",
            "add-on off (median)",
        ],
        "lrrrr",
        rows,
    )
    out += [
        "",
        f"Per pair, wall: {ratios(s['wall']['pairs'], 3, '')}; CPU: "
        f"{ratios(s['cpu']['pairs'], 3, '')}. Responses/s (medians): "
        f"{s['responses_per_s']['on']:,.0f} on, {s['responses_per_s']['off']:,.0f} off; peak RSS "
        f"{mib(s['rss']['on'], floor)} on, {mib(s['rss']['off'], floor)} off."
        + (
            f" Load average (1 min) before the pairs: {load['min']:.2f} to {load['max']:.2f}."
            if load
            else ""
        ),
        "",
        footer(record),
        "",
    ]
    return out


def kill_row(record: Record) -> list[str]:
    p, s = record["parameters"], record["summary"]
    label = (
        "baseline: `SITEMAPGEN_RESUME_REQUESTS=False` (Scrapy's JOBDIR alone)"
        if p["baseline"]
        else "this extension"
    )
    if p["pauses"]:
        label += f", paused {p['pauses']}× with SIGINT first"
    total = s["passed"] + s["failed"]
    trials = record["measurements"]["trials"]
    lost = (
        f"{min(s['lost']):,}–{max(s['lost']):,} in the {s['failed']} failed trials"
        if s["lost"]
        else f"0 ({sum(t['duplicates'] for t in trials)} duplicates, "
        f"{sum(t['leftovers'] for t in trials)} leftover temporary files)"
    )
    again = (
        f"{s['reissued']['min']:,}–{s['reissued']['max']:,} (median {s['reissued']['median']:,.0f})"
        if s["reissued"] and not p["baseline"]
        else "—"
    )
    return [
        label,
        f"{s['passed']} of {total}",
        lost,
        again,
        f"{s['queues_removed']}",
        f"`{record['code']['short']}`" + (" (smoke)" if record["smoke"] else ""),
    ]


KILL_HEADER = [
    "",
    "trials with the exact URL set",
    "URLs lost, per trial",
    "requests sent again after the kills",
    "broken queue files removed",
    "commit",
]


def kill_tables(record: Record) -> list[str]:
    p = record["parameters"]
    out = [
        f"### Kill and resume: {count(p['trials'], 'trial')} on a {p['pages']:,}-page site "
        f"({p['listable']:,} listable), {count(p['kills'], 'SIGKILL')} each"
        + (f" after {p['pauses']} SIGINT pause(s)" if p["pauses"] else ""),
        "",
    ]
    out += table(KILL_HEADER, "lllllr", [kill_row(record)])
    out += ["", "Trial by trial:", ""]
    rows = [
        [
            str(n),
            ", ".join(f"{t:.2f}" for t in trial["paused_at"]) or "-",
            ", ".join(f"{t:.2f}" for t in trial["killed_at"]) or "-",
            str(trial["runs"]),
            f"{trial['reissued']:,}",
            str(trial["missing"]),
            str(trial["extra"]),
            str(trial["duplicates"]),
            str(trial["leftovers"]),
            f"{trial['seconds']:.1f} s",
            "ok" if trial["ok"] else "**FAILED**",
        ]
        for n, trial in enumerate(record["measurements"]["trials"], 1)
    ]
    out += table(
        [
            "trial",
            "paused at (s)",
            "killed at (s)",
            "resume runs",
            "sent again",
            "missing",
            "extra",
            "duplicates",
            "leftovers",
            "time",
            "result",
        ],
        "rllrrrrrrrl",
        rows,
    )
    out += ["", footer(record), ""]
    return out


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


def profile_build_tables(record: Record) -> list[str]:
    p, m = record["parameters"], record["measurements"]
    out = [
        f"### Where a build's time goes: {p['records']:,} records under cProfile, "
        f"`--workers {p['workers']}` ({seconds(m['wall'])} wall, profiled)",
        "",
    ]
    rows = [
        [f"`{r['function']}`", f"{r['calls']:,}", f"{r['tottime']:.3f}", f"{r['cumtime']:.3f}"]
        for r in m["top"]["package"]
    ]
    out += table(
        ["the package's functions, by cumulative time", "calls", "own s", "cumulative s"],
        "lrrr",
        rows,
    )
    out += ["", f"The whole profile: `{m['profile']}`.", "", footer(record), ""]
    return out


def profile_crawl_tables(record: Record) -> list[str]:
    p, s = record["parameters"], record["summary"]
    pages = f"{p['pages']:,} pages" + (
        f" of `{p['docs']}` {p['docs_version']}" if p.get("docs") else ""
    )
    out = [
        f"### The extension's process time a page, outside a crawl ({pages}, "
        f"least of {p['repeat']} rounds)",
        "",
    ]
    out += table(
        ["", "µs a page"],
        "lr",
        [
            [
                "baseline: the response, its parse, the spider's links",
                f"{s['baseline_us_per_page']:,.0f}",
            ],
            [
                "ours: the page's facts on the shared parse, the store",
                f"{s['ours_us_per_page']:,.0f}",
            ],
            ["ours / baseline", f"{s['ours_vs_baseline']:.3f}"],
        ]
        + (
            [
                [
                    "ours without the content settings (side by side)",
                    f"{s['ours_no_fingerprint_us_per_page']:,.0f}",
                ],
                ["the content fingerprint alone: median", f"{s['fingerprint_us_median']:.1f}"],
                [
                    "the content fingerprint alone: 90th percentile",
                    f"{s['fingerprint_us_p90']:.1f}",
                ],
                [
                    "the content fingerprint, the pages with a nav, a footer, three scripts: "
                    "median",
                    f"{s.get('fingerprint_us_median_with_chrome', float('nan')):.1f}",
                ],
            ]
            if "fingerprint_us_median" in s
            else []
        ),
    )
    out += ["", footer(record), ""]
    return out


def spy_crawl_tables(record: Record) -> list[str]:
    p, s, m = record["parameters"], record["summary"], record["measurements"]
    samples = m["samples"]
    out = [
        f"### The extension's samples inside a {p['pages']:,}-page crawl (py-spy at {p['rate']} Hz)",
        "",
        f"{samples['inside']:,} of {samples['total']:,} samples inside the extension; its own "
        f"time, as the spider counts it: {s['extension_share']:.1%} of the crawl's process time.",
        "",
    ]
    out += table(
        ["reader", "share of the extension's samples"],
        "lr",
        [[name, f"{share:.1%}"] for name, share in s["readers"].items()],
    )
    out += ["", footer(record), ""]
    return out


def levels_tables(record: Record) -> list[str]:
    p, m, s = record["parameters"], record["measurements"], record["summary"]
    labels = [label for label, _, _ in p["settings"]]
    first, base = labels[0], p["time_base"]
    out = [
        f"### Gzip size against {first}"
        + (f", time against {base}" if base else "")
        + ", by URL shape",
        "",
    ]
    rows = []
    for row in m["rows"]:
        smallest = row["cells"][first]["bytes"]
        base_time = row["cells"][base]["seconds"] if base else 0.0
        cells = [
            f"{row['cells'][label]['bytes'] / smallest - 1:+.1%}"
            + (f", {row['cells'][label]['seconds'] / base_time:.2f}×" if base_time else "")
            for label in labels[1:]
        ]
        rows.append(
            [
                row["shape"],
                f"{row['urls']:,}",
                f"{row['raw_bytes'] / row['urls']:.0f}",
                f"{smallest / row['raw_bytes']:.3f}",
                *cells,
            ]
        )
    rows.append(
        [
            f"**the largest over the {len(m['rows'])} urlsets**",
            "",
            "",
            "",
            *(
                f"{s['largest'][label]['over_first']:+.1%} ({s['largest'][label]['shape']})"
                for label in labels[1:]
            ),
        ]
    )
    out += table(
        ["shape", "URLs", "bytes a URL", f"{first} ratio", *labels[1:]],
        "lrrr" + "r" * (len(labels) - 1),
        rows,
    )
    out += ["", footer(record), ""]
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


def origins_tables(record: Record) -> list[str]:
    """The build over many origins against three: medians and the ratios within pairs."""
    p, s = record["parameters"], record["summary"]
    feeds = p["feeds"]
    out = [
        f"### Many origins: {p['records']:,} records over 3 and over {p['origins']:,} origins "
        f"({p['pairs']} alternating pairs, shape `{p.get('shape', 'ours')}`)",
        "",
    ]
    rows = []
    for key, label in (("three", "3 origins"), ("many", f"{p['origins']:,} origins")):
        rows.append(
            [
                label,
                f"{feeds[key]['distinct_locs']:,}",
                f"{s['wall'][key]:.1f} s",
                f"{s['cpu'][key]:.1f} s",
                f"{s['rss'][key] / 1024:.0f} MiB",
                f"{s['tree_rss'][key] / 1024:.0f} MiB",
            ]
        )
    out += table(
        ["feed", "URLs", "wall", "CPU", "peak RSS (largest process)", "peak RSS (all processes)"],
        "lrrrrr",
        rows,
    )
    pairs = ", ".join(f"{r:.2f}x" for r in s["wall_ratio"]["pairs"])
    cpus = ", ".join(f"{r:.2f}x" for r in s["cpu_ratio"]["pairs"])
    out += [
        "",
        f"Many over three, within each pair: wall **{s['wall_ratio']['median']:.2f}x** "
        f"(median; pairs {pairs}), CPU {s['cpu_ratio']['median']:.2f}x ({cpus}).",
        "",
    ]
    if "wall_per_origin_us" in s:
        wall, cpu = s["wall_per_origin_us"], s["cpu_per_origin_us"]
        out += [
            f"The file system's floor (the same {p['origins']:,} folders and files and nothing "
            f"else, `benchmarks/file_floor.py`): {s['wall']['floor']:.1f} s wall, "
            f"{s['cpu']['floor']:.1f} s CPU. Per origin, medians within pairs:",
            "",
            *table(
                ["", "wall", "CPU"],
                "lrr",
                [
                    [label, f"{wall[key]:.0f} µs", f"{cpu[key]:.0f} µs"]
                    for key, label in (
                        ("extra", "many origins over three"),
                        ("floor", "the file system's floor"),
                        ("own", "the package's own (the difference)"),
                    )
                ],
            ),
            "",
            f"With nothing per origin but the floor, the ratio would be "
            f"{s['wall_ratio_floor_only']:.2f}x.",
            "",
        ]
    out += [footer(record), ""]
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
    "spy-crawl": spy_crawl_tables,
    "levels": levels_tables,
    "redis-memory": redis_memory_tables,
    "state-size": state_size_tables,
}


# --- several results -----------------------------------------------------------------------


def builds_side_by_side(records: list[Record]) -> list[str]:
    keys: list[str] = []
    labels: dict[str, str] = {}
    for record in records:
        for key, c in record["summary"]["contenders"].items():
            if key not in keys:
                keys.append(key)
            labels.setdefault(key, c["label"])
    header = ["contender"]
    for n in range(1, len(records) + 1):
        header += [f"run {n}: wall vs bare loop", f"run {n}: wall"]
    rows = []
    for key in keys:
        row = [labels[key]]
        for record in records:
            c = record["summary"]["contenders"].get(key)
            row += [f"{c['wall_vs_bare']:.2f}×", seconds(c["wall"])] if c else ["—", "—"]
        rows.append(row)
    out = ["### Writing sitemaps, run by run", ""]
    out += table(header, "l" + "r" * (len(header) - 1), rows)
    out += [""]
    for n, record in enumerate(records, 1):
        out += [f"- run {n}: {record['parameters']['records']:,} records, {footer(record)}"]
    return [*out, ""]


def crawls_side_by_side(records: list[Record]) -> list[str]:
    rows = []
    for n, record in enumerate(records, 1):
        s = record["summary"]
        rows.append(
            [
                f"run {n} ({run_label(record)})",
                f"{record['parameters']['pairs']}",
                f"{s['responses_per_s_ratio']:.3f}×",
                f"{min(s['responses_per_s_ratios']):.3f} to {max(s['responses_per_s_ratios']):.3f}",
                f"{s['extension_cpu_per_response'] * 1e6:,.0f} µs",
                f"{s['extension_share']:.1%}",
                f"{s['crawl_cpu_per_response_ratio']:.3f}×",
            ]
        )
    out = ["### Crawl overhead, run by run", ""]
    out += table(
        [
            "run",
            "pairs",
            "responses/s, on vs off (median pair)",
            "pairs' range",
            "the extension's own time a response",
            "its share of the crawl's process time",
            "the crawl's process time a response, on vs off",
        ],
        "lrrrrrr",
        rows,
    )
    out += [""]
    for n, record in enumerate(records, 1):
        out += [f"- run {n}: {footer(record)}"]
    return [*out, ""]


def kills_side_by_side(records: list[Record]) -> list[str]:
    out = ["### Kill and resume, run by run", ""]
    out += table(KILL_HEADER, "lllllr", [kill_row(record) for record in records])
    out += [""]
    for n, record in enumerate(records, 1):
        out += [f"- row {n}: {footer(record)}"]
    return [*out, ""]


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
