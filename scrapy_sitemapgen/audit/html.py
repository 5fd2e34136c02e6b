"""``report.html``: one self-contained page a person reads. No network and no external
file: the charts are inline SVG, the styles and the few lines of script that sort the
tables are in the page itself."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..sitemaps.verdicts import LISTED
from .findings import AGE_BUCKETS, NO_LASTMOD

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .findings import OriginReport

__all__ = ["MAX_ROWS", "render"]

#: Rows of the findings table in the page (all of them are in audit.csv).
MAX_ROWS = 5_000

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;word-break:break-all}
th{cursor:pointer;background:#f3f3f3;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
svg text{font:12px system-ui,sans-serif}.note{color:#666}
"""
# Sorts a table by the clicked column: numbers as numbers, the rest in code-point order
# (as audit.csv is sorted; a locale's collation would ignore a URL's punctuation).
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = a.cells[column].textContent, y = b.cells[column].textContent;
        var nx = Number(x), ny = Number(y);
        var numbers = x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny);
        var c = numbers ? nx - ny : x < y ? -1 : x > y ? 1 : 0;  // URLs: code-point order
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _bars(title: str, values: Mapping[str, int], ident: str) -> str:
    """A horizontal bar chart as inline SVG, one bar per (label, count)."""
    if not values:
        return f'<p class="note" id="{ident}">{escape(title)}: nothing to show.</p>'
    top = max(values.values()) or 1
    row, label_width, bar_width = 22, 220, 420
    height = row * len(values) + 10
    parts = [
        f'<svg id="{ident}" role="img" aria-label="{escape(title)}" width="{label_width + bar_width + 80}"'
        f' height="{height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for at, (label, count) in enumerate(values.items()):
        y = at * row + 5
        width = round(bar_width * count / top) if count else 0
        parts.append(
            f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{label_width}" y="{y + 2}" width="{width}" height="{row - 6}" fill="#4a7bb7">'
            f"<title>{escape(label)}: {count}</title></rect>"
            f'<text x="{label_width + width + 6}" y="{y + 14}">{count:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(ident: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f'<table id="{ident}" class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def render(report: OriginReport) -> str:
    """The page of one origin's report."""
    origin = escape(report.origin.root)
    ages = {name: report.lastmod_ages.get(name, 0) for _, name in AGE_BUCKETS}
    ages[NO_LASTMOD] = report.lastmod_ages.get(NO_LASTMOD, 0)
    exclusions = {name: n for name, n in report.verdicts.items() if name != LISTED}
    rows = [(f.url, f.finding, f.detail) for f in report.findings[:MAX_ROWS]]
    more = len(report.findings) - len(rows)
    note = (
        f'<p class="note">The first {MAX_ROWS:,} of {len(report.findings):,} findings; '
        "audit.csv holds them all.</p>"
        if more > 0
        else ""
    )
    sitemaps = "".join(f"<li>{escape(s)}</li>" for s in report.sitemaps) or "<li>none found</li>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Sitemap audit of {origin}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Sitemap audit of {origin}</h1>"
        f'<p id="summary">{sum(report.counts.values()):,} findings; {report.urls_listed:,} URLs '
        f"listed by the live sitemaps, {report.urls_judged:,} URLs judged by the crawl"
        f"{f', {report.not_fetched:,} listed URLs not fetched' if report.not_fetched else ''}.</p>"
        f"<h2>Findings</h2>{_bars('Findings by kind', report.counts, 'chart-findings')}"
        f"<h2>Lastmod ages of the listed pages</h2>{_bars('Lastmod ages', ages, 'chart-ages')}"
        f"<h2>Why pages are not listed</h2>"
        f"{_bars('Exclusion reasons', exclusions, 'chart-exclusions')}"
        f"<h2>The findings</h2>{note}{_table('findings', ('url', 'finding', 'detail'), rows)}"
        f"<h2>Live sitemaps read</h2><ul>{sitemaps}</ul>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
