"""The tables of the crawl's benchmarks: ``crawl`` (add-on on against off, the extension's
own time), ``crawl-docs`` (a real site, the add-on against none), ``kill`` (one row per run,
as the README's Reliability table) and ``profile-crawl``, and several ``crawl`` or ``kill``
results side by side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markdown import count, footer, mib, ratios, run_label, seconds, spread, table

if TYPE_CHECKING:
    from .results import Record


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
