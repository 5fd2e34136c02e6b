"""The report an SEO engineer acts on (issue 53, rows 2 and 3): findings grouped by their
cause (a robots.txt rule with its group and the engines it blocks; a folder), the grade of
each row and a filter by grade, when and how the crawl ran, the counts of each live
sitemap file, and what changed since the previous audit of the same output. A real site
whose robots.txt disallows a section for Bingbot only, audited twice (the site fixed one
page and broke another in between); the files read as written and the page in headless
Chromium. Every expected value is written by hand from the site below."""

from __future__ import annotations

import asyncio
import csv
import json
from typing import TYPE_CHECKING, Any

from lxml import html as lxml_html
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.audit.changes import Previous, compare, read_previous
from scrapy_sitemapgen.audit.groups import group_findings, path_prefix
from scrapy_sitemapgen.sitemaps.verdicts import Finding

from .helpers import CHROMIUM_ARGS, PlainSpider, Route, SiteServer, html, live_urlset

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Clock, CrawlFn

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Bingbot's own group keeps it out of /releases/; Googlebot reads "*", which allows all.
ROBOTS = """\
User-agent: bingbot
Disallow: /releases/

User-agent: *
Allow: /
"""
RULE = "Disallow: /releases/ (group User-agent: bingbot)"


def plant(site: SiteServer) -> None:
    """An index of two files: pages.xml lists two 404s under /docs/, releases.xml three
    pages Bingbot may not fetch; the home page links to a page no sitemap lists."""
    u = site.url
    index = "".join(
        f"<sitemap><loc>{u(name)}</loc></sitemap>" for name in ("/pages.xml", "/releases.xml")
    )
    links = "".join(f"<a href='{p}'>{p}</a>" for p in ("/ok", "/docs/a", "/releases/1", "/new"))
    site.routes.update(
        {
            "/robots.txt": Route(
                body=f"{ROBOTS}Sitemap: {u('/index.xml')}\n", content_type="text/plain"
            ),
            "/index.xml": Route(
                body=f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{SITEMAP_NS}">'
                f"{index}</sitemapindex>",
                content_type="application/xml",
            ),
            "/pages.xml": live_urlset(u("/"), u("/ok"), u("/docs/a"), u("/docs/b"), u("/docs/c")),
            "/releases.xml": live_urlset(u("/releases/1"), u("/releases/2"), u("/releases/3")),
            "/": Route(body=html("<title>home</title>", links)),
            **{
                path: Route(body=html(f"<title>{path}</title>", f"<p>{path}</p>"))
                for path in ("/ok", "/docs/a", "/new", "/releases/1", "/releases/2", "/releases/3")
            },
            # /docs/b and /docs/c: no route, so 404.
        }
    )


def seen(page_path: Path, chromium: str) -> dict[str, Any]:
    """What a reader sees: the findings table's visible rows before and after unticking
    "high", then with only "notice" ticked; the page's sections; every request made."""
    from playwright.sync_api import sync_playwright

    def visible(page: Any) -> list[list[str]]:
        return page.eval_on_selector_all(
            "#findings tbody tr",
            "rs => rs.filter(r => r.offsetParent !== null)"
            ".map(r => [r.cells[1].textContent, r.cells[3].textContent])",
        )

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page()
            requests: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_path.as_uri())
            result: dict[str, Any] = {"all": visible(page)}
            page.locator("#severity-filter input[value=high]").click()
            result["no_high"] = visible(page)
            for grade in ("critical", "medium"):
                page.locator(f"#severity-filter input[value={grade}]").click()
            result["notice_only"] = visible(page)
            result["run"] = page.locator("#run-time").inner_text()
            result["changes"] = page.locator("#changes-summary").inner_text()
            result["new"] = page.eval_on_selector_all(
                "#changes-new li", "ls => ls.map(l => l.innerText)"
            )
            result["fixed"] = page.eval_on_selector_all(
                "#changes-fixed li", "ls => ls.map(l => l.innerText)"
            )
            result["disallowed"] = page.eval_on_selector_all(
                "#groups-listed_disallowed tbody tr",
                "rs => rs.map(r => Array.from(r.cells).map(c => c.innerText))",
            )
            result["files"] = page.eval_on_selector_all(
                "#sitemap-files tbody tr",
                "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent))",
            )
            result["requests"], result["errors"] = requests, errors
        finally:
            browser.close()
    return result


@deferred_f_from_coro_f
async def test_a_second_audit_groups_grades_counts_and_compares(
    crawl: CrawlFn, tmp_path: Path, clock: Clock, chromium_executable: str
) -> None:
    report_dir = tmp_path / "report"
    settings = {
        "SITEMAPGEN_AUDIT": True,
        "SITEMAPGEN_REPORT_DIR": str(report_dir),
        "CLOSESPIDER_PAGECOUNT": 1000,
    }
    first_time = clock.now
    with SiteServer() as site:
        plant(site)
        u = site.url
        await crawl(settings, PlainSpider, start_url=u("/"))
        folder = report_dir / site.origin.name
        first = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
        first_page = lxml_html.parse(str(folder / "report.html")).getroot()
        # Between the audits the site restores /docs/b and its sitemap lists a new 404.
        site.routes["/docs/b"] = Route(body=html("<title>b</title>", "<p>b</p>"))
        site.routes["/pages.xml"] = live_urlset(
            u("/"), u("/ok"), u("/docs/a"), u("/docs/b"), u("/docs/c"), u("/docs/d")
        )
        second_time = clock.advance(3600)
        await crawl(settings, PlainSpider, start_url=u("/"))

    stamp = first_time.isoformat(timespec="seconds")
    assert first["audited"] == stamp
    assert first["changes"] == {"previous": None, "new": None, "fixed": None}
    assert first["counts"]["listed_not_found"] == 2
    assert first_page.get_element_by_id("changes-summary").text_content() == (
        "The first audit of this output: there is no previous audit to compare with."
    )

    report = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    later = second_time.isoformat(timespec="seconds")
    why = "bingbot: " + RULE + "; blocks bingbot; not googlebot"

    with (folder / "audit.csv").open(newline="", encoding="utf-8") as file:
        rows = [(r["url"], r["finding"], r["detail"], r["severity"]) for r in csv.DictReader(file)]
    assert rows == [
        (u("/docs/c"), "listed_not_found", "HTTP 404", "high"),
        (u("/docs/d"), "listed_not_found", "HTTP 404", "high"),
        (u("/releases/1"), "listed_disallowed", why, "high"),
        (u("/releases/2"), "listed_disallowed", why, "high"),
        (u("/releases/3"), "listed_disallowed", why, "high"),
        # Restored, but no page links to it.
        (u("/docs/b"), "listed_unreachable", "", "notice"),
        (u("/new"), "missing_from_sitemap", "", "notice"),
    ]

    # Row 1: by cause. The robots.txt rule with its group and the engines it does and
    # does not block; the 404s by their folder; the page no sitemap lists at the top level.
    assert report["groups"] == {
        "listed_not_found": {
            "groups": [
                {"cause": "/docs/", "count": 2, "urls": [u("/docs/c"), u("/docs/d")]},
            ],
            "more_groups": 0,
            "more_findings": 0,
        },
        "listed_disallowed": {
            "groups": [
                {
                    "cause": RULE,
                    "count": 3,
                    "urls": [u("/releases/1"), u("/releases/2"), u("/releases/3")],
                    "blocks": "bingbot",
                    "allows": "googlebot",
                }
            ],
            "more_groups": 0,
            "more_findings": 0,
        },
        "listed_unreachable": {
            "groups": [{"cause": "/docs/", "count": 1, "urls": [u("/docs/b")]}],
            "more_groups": 0,
            "more_findings": 0,
        },
        "missing_from_sitemap": {
            "groups": [{"cause": "/", "count": 1, "urls": [u("/new")]}],
            "more_groups": 0,
            "more_findings": 0,
        },
    }

    # Row 3: when and how the crawl ran (the clock stood still during each crawl). The
    # crawl itself judged /, /ok, /docs/a, /releases/1 and /new (the audit fetched the rest).
    crawl_run = report["crawl"]
    assert crawl_run["started"] == crawl_run["finished"] == report["audited"] == later
    assert crawl_run["pages"] == 5
    listing = crawl_run["settings"]
    assert listing["SITEMAPGEN_ROBOTS_USER_AGENTS"] == ["bingbot", "googlebot"]
    assert listing["SITEMAPGEN_RESPECT_ROBOTS_TXT"] is True
    assert listing["ROBOTSTXT_OBEY"] is False
    assert listing["CLOSESPIDER_PAGECOUNT"] == 1000
    assert "CLOSESPIDER_TIMEOUT" not in listing  # not set

    # Row 4: each live file, its URLs and the grades of their findings.
    zero = {"critical": 0, "high": 0, "medium": 0, "notice": 0}
    assert report["sitemap_files"] == [
        {"file": u("/index.xml"), "urls": 0, "findings": zero},
        {"file": u("/pages.xml"), "urls": 6, "findings": {**zero, "high": 2, "notice": 1}},
        {"file": u("/releases.xml"), "urls": 3, "findings": {**zero, "high": 3}},
    ]

    # Row 5: since the first audit, /docs/d's 404 is new and /docs/b's is fixed (and
    # /docs/b, unlinked, is now listed_unreachable).
    assert report["changes"] == {"previous": stamp, "new": 2, "fixed": 1}

    # Row 2 and the rest, as a reader sees them: the filter hides the unticked grades.
    shown = await asyncio.to_thread(seen, folder / "report.html", chromium_executable)
    assert len(shown["all"]) == 7
    notices = [["listed_unreachable", "notice"], ["missing_from_sitemap", "notice"]]
    assert shown["no_high"] == notices
    assert shown["notice_only"] == notices
    assert shown["run"] == f"{later} to {later} (UTC)"
    assert shown["changes"] == f"Since the previous audit ({stamp}): 2 new, 1 fixed."
    assert shown["new"] == [
        f"{u('/docs/b')} listed_unreachable",
        f"{u('/docs/d')} listed_not_found",
    ]
    assert shown["fixed"] == [f"{u('/docs/b')} listed_not_found"]
    assert shown["disallowed"] == [
        [RULE, "3", "bingbot", "googlebot", "\n".join(u(f"/releases/{n}") for n in (1, 2, 3))]
    ]
    assert shown["files"] == [
        [u("/index.xml"), "0", "0", "0", "0", "0"],
        [u("/pages.xml"), "6", "0", "2", "0", "1"],
        [u("/releases.xml"), "3", "0", "3", "0", "0"],
    ]
    assert shown["requests"] == [(folder / "report.html").as_uri()]  # loads nothing
    assert shown["errors"] == []


# --- the pure parts ------------------------------------------------------------------------


def test_path_prefixes() -> None:
    assert path_prefix("https://e.com/releases/1.0/notes") == "/releases/"
    assert path_prefix("https://e.com/releases/") == "/releases/"
    assert path_prefix("https://e.com/about") == "/"
    assert path_prefix("https://e.com/") == "/"
    assert path_prefix("https://e.com") == "/"


def test_groups_keep_the_largest_and_count_the_rest() -> None:
    found = [
        Finding(f"https://e.com/s{n}/p{m}", "listed_noindex")
        for n in range(60)
        for m in range(n % 3 + 1)
    ]
    (groups,) = group_findings(found).values()
    assert len(groups.groups) == 50
    # 20 folders of 3, 20 of 2, 20 of 1: the 3s first, then the 2s, by name.
    assert [g.count for g in groups.groups] == [3] * 20 + [2] * 20 + [1] * 10
    assert groups.groups[0].cause == "/s11/" and groups.groups[0].urls[0] == "https://e.com/s11/p0"
    assert (groups.more_groups, groups.more_findings) == (10, 10)
    # A disallowed finding kept before the rule was recorded still has a group.
    (old,) = group_findings([Finding("https://e.com/x", "listed_disallowed", "googlebot")])[
        "listed_disallowed"
    ].groups
    assert (old.cause, old.count) == ("rule not recorded (googlebot)", 1)


def test_changes_compare_url_and_finding(tmp_path: Path) -> None:
    assert read_previous(tmp_path) is None
    assert compare(None, [Finding("a", "listed_noindex")]).as_json()["previous"] is None
    (tmp_path / "audit.csv").write_text(
        "url,finding,detail,severity\na,listed_noindex,,high\nb,listed_not_found,HTTP 404,high\n",
        encoding="utf-8",
    )
    (tmp_path / "audit.json").write_text('{"audited": "2026-01-02T03:04:05+00:00"}\n')
    previous = read_previous(tmp_path)
    assert previous == Previous(
        {("a", "listed_noindex"), ("b", "listed_not_found")}, "2026-01-02T03:04:05+00:00"
    )
    changes = compare(
        previous,
        [Finding("a", "listed_noindex", "other detail"), Finding("b", "listed_redirected")],
    )
    assert changes.new == [("b", "listed_redirected")]
    assert changes.fixed == [("b", "listed_not_found")]
    assert changes.as_json() == {"previous": "2026-01-02T03:04:05+00:00", "new": 1, "fixed": 1}
    # A file that is no audit.csv is no previous audit (and is logged).
    (tmp_path / "audit.csv").write_bytes(b"\xff\xfe garbage")
    assert read_previous(tmp_path) is None


def test_the_previous_time_is_optional(tmp_path: Path) -> None:
    (tmp_path / "audit.csv").write_text("url,finding\n", encoding="utf-8")
    previous = read_previous(tmp_path)
    assert previous is not None and previous.time is None and previous.findings == set()
