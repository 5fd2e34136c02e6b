"""``report.html``: one self-contained page a person reads. It opens with the origin's
verdict, then the findings by severity, each with what it means, what to do and a link to
its documentation (:mod:`.legend`), and the broken hreflang clusters. No network and no
external file: the charts are inline SVG, the styles and the few lines of script that sort
the tables are in the page itself, and everything but the sorting works without script.
Every URL comes from the web and is escaped; none becomes a link but those of the broken
links' section, the broken URLs and the pages linking to them: the reader opens those
pages to fix them, and each is an http(s) URL the crawl requested (:func:`_link`)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..plural import counted
from ..sitemaps.broken_links import relative
from ..sitemaps.verdicts import LISTED
from .changes import MAX_LISTED
from .findings import AGE_BUCKETS, NO_LASTMOD
from .legend import LEGEND, SEVERITIES, SEVERITY_MEANINGS, by_severity, verdict_line

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..sitemaps.verdicts import Finding
    from .findings import OriginReport

__all__ = ["EXAMPLES", "HREFLANG_FINDINGS", "MAX_CLUSTERS", "MAX_ROWS", "render"]

#: Rows of the findings table in the page (all of them are in audit.csv).
MAX_ROWS = 5_000
#: Examples shown under each finding kind.
EXAMPLES = 5
#: Pages whose broken hreflang clusters the page shows (all are in audit.csv).
MAX_CLUSTERS = 500
#: The findings about a page's hreflang cluster, shown again grouped by the page.
HREFLANG_FINDINGS = ("hreflang_no_return", "hreflang_target_not_listed", "hreflang_missing_self")

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;word-break:break-all}
th{cursor:pointer;background:#f3f3f3;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
svg text{font:12px system-ui,sans-serif}.note{color:#666}
#verdict{font-size:1.15em;font-weight:600;padding:.5em .8em;border-left:6px solid #4a7bb7;background:#f5f8fc}
.sev{display:inline-block;min-width:5.5em;padding:1px 6px;border-radius:3px;color:#fff;font-size:.85em;text-align:center}
.sev-critical{background:#7b1010}.sev-high{background:#c0392b}.sev-medium{background:#b9770e}.sev-notice{background:#5d6d7e}
#verdict.sev-critical,#verdict.sev-high{border-left-color:#c0392b}#verdict.sev-medium{border-left-color:#b9770e}
.finding{margin:1em 0;padding-left:.8em;border-left:3px solid #ddd}.finding h4{margin:0 0 .2em}
.url{font-family:ui-monospace,monospace;word-break:break-all}.detail{color:#666}ul.examples{margin:.3em 0}
dl#legend dt{margin-top:.4em}dl#legend dd{margin-left:6.5em;margin-top:-1.35em}
#severity-filter{border:1px solid #ddd;margin:.5em 0}#severity-filter label{margin-right:1em}
dl#run dt{font-weight:600;margin-top:.3em}dl#run dd{margin-left:1.5em}
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

# Shows only the findings table's rows of the grades ticked. Without script the boxes
# would do nothing, so they stay hidden and every row shows.
_FILTER_SCRIPT = """
(function () {
  var filter = document.getElementById("severity-filter");
  if (!filter) { return; }
  filter.hidden = false;
  filter.addEventListener("change", function () {
    var shown = {};
    filter.querySelectorAll("input").forEach(function (box) { shown[box.value] = box.checked; });
    document.querySelectorAll("#findings tbody tr").forEach(function (row) {
      row.hidden = !shown[row.getAttribute("data-severity")];
    });
  });
})();
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


def _graded(report: OriginReport) -> str:
    """The findings present, worst severity first, each kind with its count, what it
    means and what to do, its link and its first examples."""
    examples: dict[str, list[Finding]] = {}
    for finding in report.findings:
        shown = examples.setdefault(finding.finding, [])
        if len(shown) < EXAMPLES:
            shown.append(finding)
    parts = []
    for severity in SEVERITIES:
        kinds = [k for k, n in report.counts.items() if n and LEGEND[k].severity == severity]
        if not kinds:
            continue
        total = sum(report.counts[k] for k in kinds)
        parts.append(
            f'<section class="severity" id="severity-{severity}"><h3>'
            f'<span class="sev sev-{severity}">{severity}</span> '
            f"{counted(total, 'finding', grouped=True)}</h3>"
        )
        for kind in kinds:
            count, legend = report.counts[kind], LEGEND[kind]
            shown = examples.get(kind, [])
            rows = "".join(_example(f) for f in shown)
            more = count - len(shown)
            parts.append(
                f'<div class="finding" id="kind-{kind}" data-severity="{severity}">'
                f'<h4><code>{kind}</code> <span class="count">{count:,}</span></h4>'
                f'<p class="sentence">{escape(legend.sentence)} '
                f'<a class="doc" href="{escape(legend.link)}">More on {kind}</a></p>'
                f'<ul class="examples">{rows}</ul>'
                + (f'<p class="note">and {more:,} more in audit.csv</p>' if more > 0 else "")
                + "</div>"
            )
        parts.append("</section>")
    return "".join(parts) or '<p class="note">No findings.</p>'


def _example(finding: Finding) -> str:
    detail = f' <span class="detail">{escape(finding.detail)}</span>' if finding.detail else ""
    return f'<li><span class="url">{escape(finding.url)}</span>{detail}</li>'


def _findings_table(findings: Sequence[Finding]) -> str:
    """The findings table, a severity column last and each row's grade as
    ``data-severity``, and the filter by grade above it (shown by the script)."""
    boxes = "".join(
        f'<label><input type="checkbox" value="{s}" checked> '
        f'<span class="sev sev-{s}">{s}</span></label>'
        for s in SEVERITIES
    )
    head = "".join(f"<th>{c}</th>" for c in ("url", "finding", "detail", "severity"))
    rows = []
    for finding in findings:
        severity = LEGEND[finding.finding].severity
        rows.append(
            f'<tr data-severity="{severity}"><td>{escape(finding.url)}</td>'
            f"<td>{finding.finding}</td><td>{escape(finding.detail)}</td>"
            f"<td>{severity}</td></tr>"
        )
    return (
        f'<fieldset id="severity-filter" hidden><legend>Show the grades</legend>{boxes}'
        "</fieldset>"
        f'<table id="findings" class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _run(report: OriginReport) -> str:
    """When and how the crawl ran, and when this report was written."""
    crawl = report.crawl
    audited = report.audited.isoformat(timespec="seconds") if report.audited else "unknown"
    if crawl.started is None or crawl.finished is None:
        when = "not known (a report from a stored crawl, by sitemapgen-audit)"
    else:
        when = (
            f"{crawl.started.isoformat(timespec='seconds')} to "
            f"{crawl.finished.isoformat(timespec='seconds')} (UTC)"
        )
    if crawl.settings is None:
        settings = "<li>not known (a report from a stored crawl)</li>"
    else:
        settings = "".join(
            f"<li><code>{escape(name)} = {escape(repr(value))}</code></li>"
            for name, value in crawl.settings.items()
        )
    return (
        '<dl id="run">'
        f'<dt>Crawl</dt><dd id="run-time">{escape(when)}</dd>'
        f'<dt>Pages</dt><dd id="run-pages">{counted(report.pages_crawled, "URL", grouped=True)} '
        "of this origin judged by the crawl</dd>"
        f'<dt>Report written</dt><dd id="run-audited">{escape(audited)} (UTC)</dd>'
        f'<dt>Settings that decide listing</dt><dd><ul id="run-settings">{settings}</ul></dd>'
        "</dl>"
    )


def _changes(report: OriginReport) -> str:
    """New and fixed findings since the previous report of this folder."""
    changes = report.changes
    if changes.previous is None:
        return (
            '<p id="changes-summary">The first audit of this output: there is no previous '
            "audit to compare with.</p>"
        )
    when = changes.previous.time or "time not recorded"
    parts = [
        f'<p id="changes-summary">Since the previous audit ({escape(when)}): '
        f"{changes.new_count:,} new, {changes.fixed_count:,} fixed.</p>"
    ]
    for ident, title, listed, count in (
        ("changes-new", "New", changes.new, changes.new_count),
        ("changes-fixed", "Fixed", changes.fixed, changes.fixed_count),
    ):
        if not count:
            continue
        items = "".join(
            f'<li><span class="url">{escape(url)}</span> <code>{escape(kind)}</code></li>'
            for url, kind in listed
        )
        cut = f" (the first {MAX_LISTED:,})" if count > len(listed) else ""
        parts.append(f'<h3>{title}{cut}</h3><ul id="{ident}">{items}</ul>')
    return "".join(parts)


def _groups(report: OriginReport) -> str:
    """Each finding kind's groups by cause: the rule (with the engines it blocks and those
    it does not), the file, or the path prefix; with counts and first URLs."""
    parts = []
    for kind, groups in report.groups.items():
        disallowed = kind == "listed_disallowed"
        columns = (
            ("cause", "count", "blocks", "does not block") if disallowed else ("cause", "count")
        )
        head = "".join(f"<th>{c}</th>" for c in (*columns, "first URLs"))
        rows = []
        for group in groups.groups:
            engines = (
                f"<td>{escape(group.blocks or '')}</td><td>{escape(group.allows or '')}</td>"
                if disallowed
                else ""
            )
            urls = "<br>".join(f'<span class="url">{escape(u)}</span>' for u in group.urls)
            rows.append(
                f'<tr><td class="cause">{escape(group.cause)}</td><td>{group.count}</td>'
                f"{engines}<td>{urls}</td></tr>"
            )
        more = (
            f'<p class="note">and {counted(groups.more_groups, "more group", grouped=True)} '
            f"({counted(groups.more_findings, 'finding', grouped=True)}) in audit.csv</p>"
            if groups.more_groups
            else ""
        )
        parts.append(
            f'<div class="groups" id="groups-{kind}" data-finding="{kind}"><h3><code>{kind}</code>'
            f'</h3><table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{more}</div>"
        )
    if not parts:
        return '<p class="note">No findings.</p>'
    return (
        '<p class="note">A robots.txt finding by the rule that decides; a broken sitemap by '
        "its file; the others by the first folder of their URL.</p>" + "".join(parts)
    )


def _sitemap_files(report: OriginReport) -> str:
    """The live files read, each with its URLs and its findings by grade."""
    if not report.sitemap_files:
        return '<p id="sitemap-files">none found</p>'
    head = "".join(f"<th>{c}</th>" for c in ("file", "URLs", *SEVERITIES))
    rows = "".join(
        f"<tr><td>{escape(f.file)}</td><td>{f.urls}</td>"
        + "".join(f"<td>{f.findings[s]}</td>" for s in SEVERITIES)
        + "</tr>"
        for f in report.sitemap_files
    )
    return (
        f'<table id="sitemap-files" class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _legend() -> str:
    return (
        '<dl id="legend">'
        + "".join(
            f'<dt><span class="sev sev-{s}">{s}</span></dt><dd>{escape(SEVERITY_MEANINGS[s])}</dd>'
            for s in SEVERITIES
        )
        + "</dl>"
    )


def _problem(kind: str, detail: str) -> tuple[str, str, str]:
    """(hreflang, target, what is wrong) of one hreflang finding's detail
    (``"<hreflang> <target>"``, ``"<hreflang> <target> (<reason>)"``; for a missing self
    entry, what the sitemap does instead)."""
    if kind == "hreflang_missing_self":
        what = "the page's own hreflang links do not name it"
        return "", "", f"{what}; {detail}" if detail else what
    hreflang, _, target = detail.partition(" ")
    if kind == "hreflang_no_return":
        return hreflang, target, "does not name this page back"
    target, _, reason = target.partition(" (")
    problem = f"is not listed ({reason.removesuffix(')')})" if reason else "is not listed"
    return hreflang, target, problem


def _clusters(findings: Sequence[Finding]) -> str:
    """The broken hreflang clusters, grouped by the page that declares each (``findings``:
    a report's, sorted by kind then URL); empty when there are none."""
    by_page: dict[str, list[Finding]] = {}
    pages: set[str] = set()
    for finding in findings:
        if finding.finding not in HREFLANG_FINDINGS:
            continue
        pages.add(finding.url)
        if finding.url in by_page or len(by_page) < MAX_CLUSTERS:
            by_page.setdefault(finding.url, []).append(finding)
    if not by_page:
        return ""
    cut = (
        f" The first {MAX_CLUSTERS:,}; audit.csv holds them all."
        if len(pages) > len(by_page)
        else ""
    )
    parts = [
        '<section id="hreflang"><h2>Broken hreflang clusters</h2>'
        f'<p class="note">{len(pages):,} page{"" if len(pages) == 1 else "s"} whose language '
        f"versions engines may ignore: each page, then the links of its cluster that fail and "
        f"why.{cut}</p>"
    ]
    for page in sorted(by_page):
        items = []
        for finding in by_page[page]:
            hreflang, target, problem = _problem(finding.finding, finding.detail)
            legend = LEGEND[finding.finding]
            link = f' <span class="url">{escape(target)}</span>' if target else ""
            lang = f'<code class="hreflang">{escape(hreflang)}</code>' if hreflang else ""
            items.append(
                f'<li data-finding="{finding.finding}">{lang}{link} {escape(problem)} '
                f'<a class="doc" href="{escape(legend.link)}">{finding.finding}</a></li>'
            )
        parts.append(
            f'<div class="cluster"><h3 class="url">{escape(page)}</h3><ul>{"".join(items)}</ul>'
            "</div>"
        )
    parts.append("</section>")
    return "".join(parts)


def _link(url: str, root: str) -> str:
    """An http(s) URL as a link (shown without ``root`` when on the origin), escaped;
    any other URL as text."""
    shown = f'<span class="url">{escape(relative(url, root))}</span>'
    if not url.startswith(("http://", "https://")):
        return shown
    return f'<a href="{escape(url)}" rel="nofollow noopener noreferrer">{shown}</a>'


def _broken(report: OriginReport) -> str:
    """The broken links: each URL that crawled pages link to and that answered with an
    error or not at all, why, how many pages link to it and the first of them."""
    count = report.broken_count
    if not count:
        return ""
    root = report.origin.root
    shown = report.broken_links
    cut = (
        f" The first {len(shown):,}; urls.csv holds them all (inlinks, linked_from)."
        if count > len(shown)
        else ""
    )
    rows = []
    for link in shown:
        unnamed = link.inlinks - len(link.sources)
        more = f' <span class="note">and {unnamed:,} more</span>' if unnamed > 0 else ""
        sources = ", ".join(_link(source, root) for source in link.sources)
        rows.append(
            f'<tr><td>{_link(link.url, root)}</td><td class="why">{escape(link.why)}</td>'
            f'<td class="inlinks">{link.inlinks}</td><td class="sources">{sources}{more}</td></tr>'
        )
    return (
        f'<section id="broken"><h2>Broken links</h2><p class="note">'
        f"{counted(count, 'URL', grouped=True)} that crawled pages link to answered with an error "
        f"or not at all: fix or remove the links on the pages shown.{cut}</p>"
        '<table id="broken-links" class="sortable"><thead><tr><th>url</th><th>why</th>'
        "<th>inlinks</th><th>linked from</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def render(report: OriginReport) -> str:
    """The page of one origin's report."""
    origin = escape(report.origin.root)
    graded = by_severity(report.counts)
    worst = next((s for s in SEVERITIES if graded[s]), "none")
    verdict = escape(verdict_line(report.origin.root, report.counts, report.urls_listed))
    ages = {name: report.lastmod_ages.get(name, 0) for _, name in AGE_BUCKETS}
    ages[NO_LASTMOD] = report.lastmod_ages.get(NO_LASTMOD, 0)
    exclusions = {name: n for name, n in report.verdicts.items() if name != LISTED}
    shown = report.findings[:MAX_ROWS]
    more = len(report.findings) - len(shown)
    note = (
        f'<p class="note">The first {MAX_ROWS:,} of '
        f"{counted(len(report.findings), 'finding', grouped=True)}; "
        "audit.csv holds them all.</p>"
        if more > 0
        else ""
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Sitemap audit of {origin}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Sitemap audit of {origin}</h1>"
        f'<p id="verdict" class="sev-{worst}">{verdict}</p>'
        f'<p id="summary">{counted(sum(report.counts.values()), "finding", grouped=True)}; '
        f"{counted(report.urls_listed, 'URL', grouped=True)} listed by the live sitemaps, "
        f"{counted(report.urls_judged, 'URL', grouped=True)} judged by the crawl"
        + (
            f", {counted(report.not_fetched, 'listed URL', grouped=True)} not fetched"
            if report.not_fetched
            else ""
        )
        + ".</p>"
        + f"{_run(report)}"
        f"<h2>Since the previous audit</h2>{_changes(report)}"
        f'<h2>Findings by severity</h2><div id="graded">{_graded(report)}</div>'
        f"{_broken(report)}"
        f"<h2>Severities</h2>{_legend()}"
        f"{_clusters(report.findings)}"
        f'<h2>Findings by cause</h2><div id="groups">{_groups(report)}</div>'
        f"<h2>Findings</h2>{_bars('Findings by kind', report.counts, 'chart-findings')}"
        f"<h2>Lastmod ages of the listed pages</h2>{_bars('Lastmod ages', ages, 'chart-ages')}"
        f"<h2>Why pages are not listed</h2>"
        f"{_bars('Exclusion reasons', exclusions, 'chart-exclusions')}"
        f"<h2>The findings</h2>{note}{_findings_table(shown)}"
        f"<h2>Live sitemaps read</h2>{_sitemap_files(report)}"
        f"<script>{_SCRIPT}{_FILTER_SCRIPT}</script></body></html>\n"
    )
