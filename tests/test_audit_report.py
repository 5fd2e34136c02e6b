"""The report explains itself (issue 40, item 6): every finding kind has a grade, a
sentence and a section of docs/audit.rst that the built documentation really has; the
page opens with the origin's verdict, groups the findings worst first and lists the
broken hreflang clusters by the page that declares them; a real audit crawl's report is
read in a headless Chromium, with and without script, loading nothing from the network."""

from __future__ import annotations

import asyncio
import configparser
import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.audit.findings import OriginReport
from scrapy_sitemapgen.audit.html import MAX_CLUSTERS, render
from scrapy_sitemapgen.audit.legend import (
    DOCS_URL,
    LEGEND,
    SEVERITIES,
    SEVERITY_MEANINGS,
    by_severity,
    verdict_line,
)
from scrapy_sitemapgen.audit.rules import counts
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.sitemaps.verdicts import FINDINGS, Finding

from .helpers import CHROMIUM_ARGS, Route, SiteServer, html

ROOT = Path(__file__).resolve().parent.parent
AUDIT_RST = ROOT / "docs" / "audit.rst"
DOCS = "https://scrapy-sitemapgen.readthedocs.io/en/latest/audit.html#"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
LAST_MODIFIED = {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}

#: The grades, as docs/audit.rst ("How findings are graded") gives them and why.
GRADES = {
    "listed_not_found": "high",
    "listed_redirected": "medium",
    "listed_noindex": "high",
    "listed_canonicalised": "medium",
    "listed_blocked_by_robots": "high",
    "listed_disallowed": "high",
    "listed_not_html": "notice",
    "listed_duplicate": "medium",
    "listed_unreachable": "notice",
    "missing_from_sitemap": "notice",
    "lastmod_mismatch": "medium",
    "hreflang_no_return": "high",
    "hreflang_target_not_listed": "medium",
    "hreflang_missing_self": "notice",
    "invalid_sitemap": "critical",
}


# --- the vocabulary and its documentation ----------------------------------------------------


def test_every_finding_has_a_grade_a_sentence_and_a_documented_section() -> None:
    assert list(LEGEND) == list(FINDINGS)
    assert {name: LEGEND[name].severity for name in FINDINGS} == GRADES
    assert SEVERITIES == ("critical", "high", "medium", "notice")
    assert list(SEVERITY_MEANINGS) == list(SEVERITIES)
    text = AUDIT_RST.read_text(encoding="utf-8")
    for name in FINDINGS:
        entry = LEGEND[name]
        # One sentence: what it means, then what to do.
        assert entry.sentence.count(". ") == 0 and entry.sentence.endswith("."), name
        assert ": " in entry.sentence, name
        assert entry.link == f"{DOCS}finding-{name.replace('_', '-')}"
        # Its section: the label, the title naming the kind, the grade first.
        title = f"``{name}``"
        section = f".. _{entry.anchor}:\n\n{title}\n{'-' * len(title)}\n\n**{entry.severity.capitalize()}.**"
        assert section in text, name


def test_the_documentation_base_is_the_one_the_package_metadata_names() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    urls = dict(
        line.split(" = ", 1) for line in config["metadata"]["project_urls"].strip().splitlines()
    )
    assert urls == {"Documentation": DOCS_URL}
    assert DOCS_URL == "https://scrapy-sitemapgen.readthedocs.io/en/latest/"


def test_every_link_of_the_legend_has_its_anchor_in_the_built_docs(tmp_path: Path) -> None:
    built = tmp_path / "html"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(ROOT / "docs"), str(built)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    page = lxml_html.parse(str(built / "audit.html")).getroot()
    ids = set(page.xpath("//@id"))
    for name in FINDINGS:
        anchor = LEGEND[name].link.removeprefix(f"{DOCS_URL}audit.html#")
        assert anchor in ids, name
        # The anchor is the section about that kind, not a stray id.
        (section,) = page.xpath(f"//*[@id='{anchor}']")
        heading = "(descendant::h2 | descendant::h3 | following::h2 | following::h3)[1]"
        assert section.xpath(f"string({heading})").startswith(name), name


@pytest.mark.parametrize(
    ("found", "listed", "line"),
    [
        ({}, 1204, "https://example.com/: no findings; 1,204 URLs listed"),
        ({"listed_noindex": 1}, 1, "https://example.com/: 1 high finding; 1 URL listed"),
        (
            {"listed_not_found": 2, "hreflang_no_return": 1, "lastmod_mismatch": 1},
            1204,
            "https://example.com/: 3 high, 1 medium findings; 1,204 URLs listed",
        ),
        (
            {"invalid_sitemap": 1, "missing_from_sitemap": 1500, "listed_not_found": 0},
            0,
            "https://example.com/: 1 critical, 1,500 notice findings; 0 URLs listed",
        ),
    ],
)
def test_the_verdict_line(found: dict[str, int], listed: int, line: str) -> None:
    assert verdict_line("https://example.com/", found, listed) == line


def test_findings_are_counted_per_grade_worst_first() -> None:
    graded = by_severity({"listed_unreachable": 2, "invalid_sitemap": 1, "listed_redirected": 3})
    assert list(graded.items()) == [("critical", 1), ("high", 0), ("medium", 3), ("notice", 2)]


# --- the page, from a report built as audit/findings.py builds it ----------------------------

A = "https://a.example/"
#: A URL as hostile as the web can send: markup, script, both quotes, an attribute break.
HOSTILE = A + "x?q=<script>window.pwned=1</script>&a=\"'><img src=x onerror=window.pwned=2>"


def hreflang_report() -> OriginReport:
    """One origin's report with every grade, and broken hreflang clusters (the
    producer of those rows is the publish's cluster check; here they are written by hand,
    with the details it gives)."""
    found = [
        Finding(A + "de", "hreflang_no_return", f"en {A}en"),
        Finding(A + "de", "hreflang_target_not_listed", f"fr {A}fr (noindex)"),
        Finding(A + "de", "hreflang_missing_self", 'the sitemap supplies it as hreflang="de"'),
        Finding(HOSTILE, "hreflang_no_return", f"x-default {HOSTILE}&b"),
        Finding(A + "it", "hreflang_target_not_listed", f"es {A}es (status/404)"),
        Finding(A + "gone", "listed_not_found", "HTTP 404"),
        Finding(A + "sitemap.xml", "invalid_sitemap", "line 3: P4: <lastmod> is no W3C Datetime"),
        *(
            Finding(f"{A}p{n}", "lastmod_mismatch", "listed 2020-01-01, crawled 2026-01-01")
            for n in range(6)
        ),
    ]
    order = {name: at for at, name in enumerate(FINDINGS)}
    found.sort(key=lambda f: (order[f.finding], f.url, f.detail))
    return OriginReport(
        Origin("https", "a.example", 443),
        found,
        dict(counts(found)),
        [A + "sitemap.xml"],
        urls_listed=40,
        urls_judged=45,
    )


def _texts(nodes: list[Any]) -> list[str]:
    return [" ".join(node.text_content().split()) for node in nodes]


def test_the_page_opens_with_the_verdict_and_grades_the_findings_worst_first() -> None:
    page = lxml_html.fromstring(render(hreflang_report()))
    body = page.find("body")
    assert [child.tag for child in body][:3] == ["h1", "p", "p"]
    assert body[1].get("id") == "verdict"
    assert _texts([body[1]]) == [
        "https://a.example/: 1 critical, 3 high, 8 medium, 1 notice findings; 40 URLs listed"
    ]
    graded = page.get_element_by_id("graded")
    assert [s.get("id") for s in graded.findall("section")] == [
        "severity-critical",
        "severity-high",
        "severity-medium",
        "severity-notice",
    ]
    assert _texts(graded.xpath("section/h3")) == [
        "critical 1 finding",
        "high 3 findings",
        "medium 8 findings",
        "notice 1 finding",
    ]
    kinds = graded.xpath("section/div[@class='finding']")
    assert [k.get("id") for k in kinds] == [
        "kind-invalid_sitemap",
        "kind-listed_not_found",
        "kind-hreflang_no_return",
        "kind-lastmod_mismatch",
        "kind-hreflang_target_not_listed",
        "kind-hreflang_missing_self",
    ]
    by_id = {k.get("id"): k for k in kinds}
    no_return = by_id["kind-hreflang_no_return"]
    assert _texts(no_return.xpath("h4")) == ["hreflang_no_return 2"]
    assert _texts(no_return.xpath("p[@class='sentence']")) == [
        "A page names another as its language version, which does not name it back: add "
        "the return link, or engines may ignore the pair. More on hreflang_no_return"
    ]
    assert no_return.xpath("p/a/@href") == [DOCS + "finding-hreflang-no-return"]
    # Its examples: URL then detail, as audit.csv's order.
    assert _texts(no_return.xpath("ul/li")) == [
        f"{A}de en {A}en",
        f"{HOSTILE} x-default {HOSTILE}&b",
    ]
    # Five examples, then how many more audit.csv holds.
    lastmods = by_id["kind-lastmod_mismatch"]
    assert len(lastmods.xpath("ul/li")) == 5
    assert _texts(lastmods.xpath("p[@class='note']")) == ["and 1 more in audit.csv"]
    assert by_id["kind-invalid_sitemap"].xpath("p/a/@href") == [DOCS + "finding-invalid-sitemap"]
    # The legend: the four grades, worst first, each with its meaning.
    legend = page.get_element_by_id("legend")
    assert _texts(legend.findall("dt")) == ["critical", "high", "medium", "notice"]
    assert _texts(legend.findall("dd"))[1].startswith("A listed URL that an engine will report")


def test_the_hreflang_section_lists_each_broken_cluster_by_its_page() -> None:
    page = lxml_html.fromstring(render(hreflang_report()))
    section = page.get_element_by_id("hreflang")
    assert _texts(section.xpath("h2")) == ["Broken hreflang clusters"]
    assert _texts(section.xpath("p[@class='note']")) == [
        "3 pages whose language versions engines may ignore: each page, then the links of "
        "its cluster that fail and why."
    ]
    clusters = section.xpath("div[@class='cluster']")
    assert _texts([c.find("h3") for c in clusters]) == [A + "de", A + "it", HOSTILE]
    assert _texts(clusters[0].xpath("ul/li")) == [
        f"en {A}en does not name this page back hreflang_no_return",
        f"fr {A}fr is not listed (noindex) hreflang_target_not_listed",
        "the page's own hreflang links do not name it; the sitemap supplies it as "
        'hreflang="de" hreflang_missing_self',
    ]
    assert clusters[0].xpath("ul/li/a/@href") == [
        DOCS + "finding-hreflang-no-return",
        DOCS + "finding-hreflang-target-not-listed",
        DOCS + "finding-hreflang-missing-self",
    ]
    assert _texts(clusters[1].xpath("ul/li")) == [
        f"es {A}es is not listed (status/404) hreflang_target_not_listed"
    ]
    assert _texts(clusters[2].xpath("ul/li")) == [
        f"x-default {HOSTILE}&b does not name this page back hreflang_no_return"
    ]


def test_the_page_escapes_hostile_urls_and_links_to_nothing_of_the_site() -> None:
    text = render(hreflang_report())
    page = lxml_html.fromstring(text)
    assert text.count("<script") == 1  # the page's own sorting script
    assert len(page.xpath("//script")) == 1
    assert page.xpath("//img | //iframe | //link | //@src | //@onerror") == []
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;&amp;a=&quot;&#x27;&gt;&lt;img" in text
    hrefs = set(page.xpath("//a/@href"))
    assert hrefs == {
        DOCS + "finding-invalid-sitemap",
        DOCS + "finding-listed-not-found",
        DOCS + "finding-lastmod-mismatch",
        DOCS + "finding-hreflang-no-return",
        DOCS + "finding-hreflang-target-not-listed",
        DOCS + "finding-hreflang-missing-self",
    }


def test_the_hreflang_section_shows_the_first_pages_and_says_where_the_rest_are() -> None:
    found = [
        Finding(f"{A}p{n:04}", kind, "")
        for n in range(MAX_CLUSTERS + 2)
        for kind in ("hreflang_no_return", "hreflang_missing_self")
    ]
    order = {name: at for at, name in enumerate(FINDINGS)}
    found.sort(key=lambda f: (order[f.finding], f.url, f.detail))
    report = OriginReport(Origin("https", "a.example", 443), found, dict(counts(found)), [])
    section = lxml_html.fromstring(render(report)).get_element_by_id("hreflang")
    assert _texts(section.xpath("p[@class='note']")) == [
        "502 pages whose language versions engines may ignore: each page, then the links "
        "of its cluster that fail and why. The first 500; audit.csv holds them all."
    ]
    clusters = section.xpath("div[@class='cluster']")
    assert len(clusters) == 500
    # Each page shown has all of its broken links, not only those of the first kind.
    assert all(len(c.xpath("ul/li")) == 2 for c in clusters)
    assert _texts([clusters[-1].find("h3")]) == [f"{A}p0499"]


def test_a_report_without_findings_says_so_and_has_no_hreflang_section() -> None:
    report = OriginReport(Origin("http", "b.example", 80), [], dict(counts([])), [], urls_listed=3)
    page = lxml_html.fromstring(render(report))
    assert _texts([page.get_element_by_id("verdict")]) == [
        "http://b.example/: no findings; 3 URLs listed"
    ]
    assert _texts(page.get_element_by_id("graded").xpath("p")) == ["No findings."]
    assert page.xpath("//*[@id='hreflang']") == []


# --- a real audit crawl, its files and its page in a browser ----------------------------------


def urlset(*entries: tuple[str, str | None]) -> str:
    body = "".join(
        f"<url><loc>{loc}</loc>{f'<lastmod>{lastmod}</lastmod>' if lastmod else ''}</url>"
        for loc, lastmod in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">{body}</urlset>'


def plant(site: SiteServer) -> None:
    """A live sitemap that lists a 404, a redirect, a noindex page and a page with the
    wrong lastmod, beside two good pages."""
    u = site.url
    links = "".join(f"<a href='{p}'>{p}</a>" for p in ("/ok", "/old", "/noindex", "/dated"))
    site.routes.update(
        {
            "/robots.txt": Route(
                body=f"User-agent: *\nAllow: /\nSitemap: {u('/sitemap.xml')}\n",
                content_type="text/plain",
            ),
            "/": Route(body=html("<title>home</title>", links)),
            "/ok": Route(body=html("<title>ok</title>", "<p>ok</p>")),
            "/old": Route(301, headers={"Location": "/new"}),
            "/new": Route(body=html("<title>new</title>", "<p>new</p>")),
            "/noindex": Route(body=html("<meta name='robots' content='noindex'>", "<p>no</p>")),
            "/dated": Route(body=html("<title>dated</title>", "<p>d</p>"), headers=LAST_MODIFIED),
            # /missing: no route, so 404.
            "/sitemap.xml": Route(
                body=urlset(
                    (u("/"), None),
                    (u("/ok"), None),
                    (u("/missing"), None),
                    (u("/old"), None),
                    (u("/noindex"), None),
                    (u("/dated"), "2020-01-01"),
                ),
                content_type="application/xml",
            ),
        }
    )


def seen_in_browser(pages: list[Path], chromium: str, *, script: bool) -> list[dict[str, Any]]:
    """What a reader sees of each page in headless Chromium (with script or without),
    with every request the page made and every console error or page error."""
    from playwright.sync_api import sync_playwright

    seen = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            context = browser.new_context(java_script_enabled=script)
            for path in pages:
                requests: list[str] = []
                errors: list[str] = []
                page = context.new_page()
                page.on("request", lambda r, requests=requests: requests.append(r.url))
                page.on(
                    "console",
                    lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.goto(path.as_uri())
                verdict = page.locator("#verdict")
                seen.append(
                    {
                        "verdict": verdict.inner_text() if verdict.is_visible() else None,
                        "severities": page.eval_on_selector_all(
                            "#graded section", "s => s.map(x => x.id)"
                        ),
                        "kinds": page.eval_on_selector_all(
                            "#graded .finding",
                            "ds => ds.map(d => [d.id.slice(5), d.querySelector('.count')"
                            ".textContent, d.querySelector('a.doc').getAttribute('href')])",
                        ),
                        "visible": page.locator("#graded").is_visible()
                        and page.locator("#legend").is_visible(),
                        "clusters": page.eval_on_selector_all(
                            "#hreflang .cluster",
                            "cs => cs.map(c => [c.querySelector('h3').innerText,"
                            " Array.from(c.querySelectorAll('li')).map(li => li.innerText)])",
                        ),
                        "pwned": page.evaluate("() => window.pwned === undefined ? null : 1")
                        if script
                        else None,
                        "requests": requests,
                        "errors": errors,
                    }
                )
                page.close()
        finally:
            browser.close()
    return seen


@deferred_f_from_coro_f
async def test_a_real_audit_crawl_reports_graded_findings_a_browser_shows(
    crawl: Any, tmp_path: Path, chromium_executable: str
) -> None:
    report_dir = tmp_path / "report"
    with SiteServer() as site:
        plant(site)
        u = site.url
        crawler = await crawl(
            {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)},
            start_url=u("/"),
        )
    assert crawler.stats.get_value("finish_reason") == "finished"
    folder = report_dir / site.origin.name
    root = site.origin.root

    with (folder / "audit.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    # The documented columns first, the grade last; rows in report order, then by URL.
    assert rows == [
        ["url", "finding", "detail", "severity"],
        [u("/missing"), "listed_not_found", "HTTP 404", "high"],
        [u("/old"), "listed_redirected", u("/new"), "medium"],
        [u("/noindex"), "listed_noindex", "", "high"],
        [u("/new"), "missing_from_sitemap", "", "notice"],
        [
            u("/dated"),
            "lastmod_mismatch",
            "listed 2020-01-01, crawled 2015-10-21T07:28:00+00:00",
            "medium",
        ],
    ]

    report = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    verdict = f"{root}: 2 high, 2 medium, 1 notice findings; 6 URLs listed"
    assert report["verdict"] == verdict
    assert report["severity_counts"] == {"critical": 0, "high": 2, "medium": 2, "notice": 1}
    assert report["severities"] == GRADES
    # The keys that were there keep their values.
    assert report["findings"] == 5 and report["urls_listed"] == 6
    assert report["counts"]["listed_noindex"] == 1 and report["counts"]["hreflang_no_return"] == 0

    # The crawl's page, and the page of a report with broken clusters, as a reader sees
    # them: with script, and without (everything but the table's sorting is there).
    other = tmp_path / "clusters.html"
    other.write_text(render(hreflang_report()), encoding="utf-8")
    pages = [folder / "report.html", other]
    for script in (True, False):
        crawled, clustered = await asyncio.to_thread(
            seen_in_browser, pages, chromium_executable, script=script
        )
        assert crawled["verdict"] == verdict
        assert crawled["severities"] == ["severity-high", "severity-medium", "severity-notice"]
        assert crawled["kinds"] == [
            ["listed_not_found", "1", DOCS + "finding-listed-not-found"],
            ["listed_noindex", "1", DOCS + "finding-listed-noindex"],
            ["listed_redirected", "1", DOCS + "finding-listed-redirected"],
            ["lastmod_mismatch", "1", DOCS + "finding-lastmod-mismatch"],
            ["missing_from_sitemap", "1", DOCS + "finding-missing-from-sitemap"],
        ]
        assert crawled["visible"]
        assert crawled["clusters"] == []  # no hreflang findings: no section
        assert clustered["verdict"] == (
            "https://a.example/: 1 critical, 3 high, 8 medium, 1 notice findings; 40 URLs listed"
        )
        assert clustered["severities"] == [
            "severity-critical",
            "severity-high",
            "severity-medium",
            "severity-notice",
        ]
        assert [c[0] for c in clustered["clusters"]] == [A + "de", A + "it", HOSTILE]
        assert clustered["clusters"][0][1] == [
            f"en {A}en does not name this page back hreflang_no_return",
            f"fr {A}fr is not listed (noindex) hreflang_target_not_listed",
            "the page's own hreflang links do not name it; the sitemap supplies it as "
            'hreflang="de" hreflang_missing_self',
        ]
        for shown, path in ((crawled, pages[0]), (clustered, pages[1])):
            assert shown["requests"] == [path.as_uri()]  # nothing from the network
            assert shown["errors"] == []
        assert clustered["pwned"] is None  # the hostile URL's script never ran
