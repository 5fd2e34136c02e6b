"""The tables of the offline build's benchmarks: ``build`` (against the bare loop, the
contenders' throughput, gzip levels), ``memory``, ``origins``, ``profile-build`` and
``levels``, and several ``build`` results side by side (wall against the bare loop, by run).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from . import build_phases
from .markdown import count, footer, mib, ratios, seconds, size, table

if TYPE_CHECKING:
    from .results import Record


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
    out += ["", f"The whole profile: `{m['profile']}`.", ""]
    if "phases" in m:
        out += _phase_table(m["phases"], m.get("workers_phases"))
    out += [footer(record), ""]
    return out


def _phase_table(parent: dict[str, float], workers: dict[str, float] | None) -> list[str]:
    """The profile's own time by phase (:mod:`benchmarks.build_phases`): this process's,
    the workers', and the share of all of it."""
    waiting = build_phases.WAITING
    total = sum(v for k, v in parent.items() if k != waiting) + sum(
        v for k, v in (workers or {}).items() if k != waiting
    )
    rows = []
    for phase in build_phases.PHASES:
        mine, theirs = parent.get(phase, 0.0), (workers or {}).get(phase, 0.0)
        cells = [phase, f"{mine:.2f}"]
        if workers is not None:
            cells.append(f"{theirs:.2f}")
        share = (mine + theirs) / total if total and phase != waiting else None
        cells.append("-" if share is None else f"{share:.1%}")
        rows.append(cells)
    heads = ["phase", "this process, own s"]
    if workers is not None:
        heads.append("the workers, own s")
    heads.append("share")
    out = ["By phase (own time under cProfile; read the shares, of the time not waiting):", ""]
    out += table(heads, "l" + "r" * (len(heads) - 1), rows)
    return [*out, ""]


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
