"""The pieces every benchmark table is made of: figures as cells, a Markdown table, and the
footer under each section that says which command, machine and commit a result came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import Record

SMOKE = (
    "**Smoke run of the harness** (`--smoke`: sizes too small to measure anything): "
    "not figures to publish."
)


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


def spread(figure: dict[str, float]) -> str:
    """A median of per-pair ratios with its spread (:func:`benchmarks.docsite.pair_spread`)."""
    return (
        f"**{figure['median']:.3f}×** (quartiles {figure['q1']:.3f}–{figure['q3']:.3f}, "
        f"range {figure['min']:.3f}–{figure['max']:.3f})"
    )
