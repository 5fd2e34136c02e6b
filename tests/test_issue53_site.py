"""Issue 53's "done when", on one site: broken internal links, a robots.txt rule that
blocks a section for one engine, responsive images and a page missing its hreflang self
entry, crawled twice with the audit and the changes feed. The close log names the broken
links with their sources; the report groups the robots.txt findings under their rule and
engines, filters by severity, says when the crawl ran, counts each live file and what
changed since the previous audit; each image is listed once; ``hreflang_missing_self`` is
reported; the first run's feed holds no page entry. (The getting-started spider and
``sitemapgen-crawl`` on a 500-page site: tests/test_crawl_command.py.)

Every expected value is written by hand from the site below."""

from __future__ import annotations

import asyncio
import csv
import json
import logging
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import CHROMIUM_ARGS, PlainSpider, Route, SiteServer, html, live_urlset, read_entries

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from .conftest import Clock, CrawlFn

ATOM = "{http://www.w3.org/2005/Atom}"
ROBOTS = "User-agent: bingbot\nDisallow: /releases/\n\nUser-agent: *\nAllow: /\n"
RULE = "Disallow: /releases/ (group User-agent: bingbot)"
#: WordPress's markup for one photo: four sizes of one image.
CAFE = (
    '<img width="1024" height="768" src="/img/cafe-1024x768.jpg" '
    'srcset="/img/cafe-1024x768.jpg 1024w, /img/cafe-300x225.jpg 300w, '
    '/img/cafe-768x576.jpg 768w, /img/cafe.jpg 2048w" '
    'sizes="(max-width: 1024px) 100vw, 1024px">'
)


def plant(site: SiteServer) -> None:
    u = site.url

    def page(title: str, body: str = "", head: str = "", lang: str = "en") -> Route:
        return Route(
            body=f'<!DOCTYPE html><html lang="{lang}"><head><title>{title}</title>{head}'
            f"</head><body><p>{title}</p>{body}</body></html>"
        )

    def links(*paths: str) -> str:
        return "".join(f"<a href='{p}'>{p}</a>" for p in paths)

    site.routes.update(
        {
            "/robots.txt": Route(
                body=f"{ROBOTS}Sitemap: {u('/live.xml')}\n", content_type="text/plain"
            ),
            # The live sitemap: the home page, the blog post, the releases Bingbot may
            # not fetch, and the English page.
            "/live.xml": live_urlset(
                u("/"), u("/blog/cafe"), u("/releases/1"), u("/releases/2"), u("/en/page")
            ),
            "/": page(
                "home", links("/blog/cafe", "/releases/1", "/releases/2", "/en/page", "/missing")
            ),
            "/blog/cafe": page("cafe", CAFE + links("/missing", "/broken")),
            "/releases/1": page("release 1"),
            "/releases/2": page("release 2"),
            # The English page names its German version and not itself; the German page
            # names both, so the sitemap knows the English page's language.
            "/en/page": page(
                "page",
                links("/de/page"),
                f'<link rel="alternate" hreflang="de" href="{u("/de/page")}">',
            ),
            "/de/page": page(
                "Seite",
                head=f'<link rel="alternate" hreflang="de" href="{u("/de/page")}">'
                f'<link rel="alternate" hreflang="en" href="{u("/en/page")}">',
                lang="de",
            ),
            "/broken": Route(500, body=html()),
            # /missing: no route, so 404.
        }
    )


def seen(report: Path, chromium: str) -> dict[str, Any]:
    """What a reader of report.html sees: the findings' rows before and after unticking
    "high", the robots.txt group, the run, the live files and the changes."""
    from playwright.sync_api import sync_playwright

    def visible(page: Any) -> list[str]:
        return page.eval_on_selector_all(
            "#findings tbody tr",
            "rs => rs.filter(r => r.offsetParent !== null).map(r => r.cells[1].textContent)",
        )

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page()
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.as_uri())
            result: dict[str, Any] = {"all": sorted(visible(page))}
            page.locator("#severity-filter input[value=high]").click()
            result["no_high"] = sorted(visible(page))
            result["disallowed"] = page.eval_on_selector_all(
                "#groups-listed_disallowed tbody tr",
                "rs => rs.map(r => Array.from(r.cells).map(c => c.innerText))",
            )
            result["run"] = page.locator("#run-time").inner_text()
            result["files"] = page.eval_on_selector_all(
                "#sitemap-files tbody tr",
                "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent))",
            )
            result["changes"] = page.locator("#changes-summary").inner_text()
            result["broken"] = page.eval_on_selector_all(
                "#broken-links tbody tr",
                "rs => rs.map(r => Array.from(r.cells).map(c => c.innerText))",
            )
            result["requests"] = requests
        finally:
            browser.close()
    return result


@deferred_f_from_coro_f
async def test_the_issue_53_site(
    crawl: CrawlFn,
    tmp_path: Path,
    clock: Clock,
    chromium_executable: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    report_dir, out = tmp_path / "report", tmp_path / "out"
    settings = {
        "SITEMAPGEN_AUDIT": True,
        "SITEMAPGEN_REPORT_DIR": str(report_dir),
        "SITEMAPGEN_CHANGES_FEED": True,
        "SITEMAPGEN_STATE": str(tmp_path / "state.sqlite3"),
    }
    first = clock.now
    with SiteServer() as site:
        plant(site)
        u = site.url
        await crawl(settings, PlainSpider, start_url=u("/"))
        folder = report_dir / site.origin.name
        first_feed = ElementTree.parse(out / site.origin.name / "changes.atom").getroot()
        first_csv = (folder / "audit.csv").read_text(encoding="utf-8")
        first_log = [r.getMessage() for r in caplog.records]
        # Between the crawls the site fixes its 500 and its sitemap lists the 404.
        site.routes["/broken"] = Route(body=html())
        site.routes["/live.xml"] = live_urlset(
            u("/"),
            u("/blog/cafe"),
            u("/releases/1"),
            u("/releases/2"),
            u("/en/page"),
            u("/missing"),
        )
        later = clock.advance(3600)
        caplog.clear()
        await crawl(settings, PlainSpider, start_url=u("/"))
        entries = read_entries(out, site.origin.name)

    # The close log names the broken links with the pages that link to them, the most
    # linked first.
    assert (
        f"Sitemap: {site.origin.root}: 2 broken links: /missing (404, from /, /blog/cafe), "
        "/broken (500, from /blog/cafe)"
    ) in first_log, [m for m in first_log if "broken" in m]

    # A first run's changes feed holds no page entry.
    assert first_feed.tag == f"{ATOM}feed"
    assert first_feed.findall(f"{ATOM}entry") == []

    # One entry per image: the largest of the four sizes.
    assert entries[u("/blog/cafe")]["images"] == [u("/img/cafe.jpg")]

    # hreflang_missing_self, a notice, saying the sitemap supplies the English entry.
    with (folder / "audit.csv").open(newline="", encoding="utf-8") as file:
        rows = {
            (r["url"], r["finding"]): (r["detail"], r["severity"]) for r in csv.DictReader(file)
        }
    assert rows[(u("/en/page"), "hreflang_missing_self")] == (
        'the sitemap supplies it as hreflang="en"',
        "notice",
    )
    assert "hreflang_missing_self" in first_csv
    assert (u("/en/page"), "en") in [
        (href, lang) for lang, href in entries[u("/en/page")]["alternates"]
    ]
    why = f"bingbot: {RULE}; blocks bingbot; not googlebot"
    assert rows[(u("/releases/1"), "listed_disallowed")] == (why, "high")
    assert rows[(u("/missing"), "listed_not_found")] == ("HTTP 404", "high")

    report = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    # New since the first audit: the 404 now listed, and the fixed page no sitemap lists.
    assert rows[(u("/broken"), "missing_from_sitemap")] == ("", "notice")
    assert (report["changes"]["new"], report["changes"]["fixed"]) == (2, 0)
    assert report["crawl"]["started"] == later.isoformat(timespec="seconds")

    page = await asyncio.to_thread(seen, folder / "report.html", chromium_executable)
    # Grouped under the rule, with the engine it blocks and the one it does not.
    assert page["disallowed"] == [[RULE, "2", "bingbot", "googlebot", page["disallowed"][0][4]]]
    assert u("/releases/1") in page["disallowed"][0][4]
    # The severity filter hides the high rows.
    assert "listed_disallowed" in page["all"]
    assert "listed_disallowed" not in page["no_high"]
    assert "listed_not_found" not in page["no_high"]
    assert "hreflang_missing_self" in page["no_high"]
    # The crawl's time, the live file's counts, what changed.
    stamp = later.isoformat(timespec="seconds")
    assert page["run"] == f"{stamp} to {stamp} (UTC)"
    assert [row[:2] for row in page["files"]] == [[u("/live.xml"), "6"]]
    assert page["changes"] == (
        f"Since the previous audit ({first.isoformat(timespec='seconds')}): 2 new, 0 fixed."
    )
    assert [row[0] for row in page["broken"]] == ["/missing"]
    # The page loads nothing but itself.
    assert page["requests"] == [(folder / "report.html").as_uri()]
