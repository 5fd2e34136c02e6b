"""The audit's ``lastmod_mismatch`` against the lastmod the crawl publishes (issue 41).

A site whose server sends a new ``Last-Modified`` for every page on each rebuild, whether
its content changed or not (every static-site generator does): the crawl's sitemaps keep
the lastmod of each unchanged page (the state's content notes, P4), so the live sitemap
that the previous run published is right about those pages. The audit must say so, in
the crawl's own report and in ``sitemapgen-audit --store`` alike, and report only the page
whose content changed, whose published lastmod moved. Without content notes, every page
is compared with the date the server sent, as before.

The live sitemaps are the first run's published set, served by the site itself (its
``robots.txt`` names the index), as production serves the set it was last deployed with.
"""

from __future__ import annotations

import asyncio
import shutil
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import PlainSpider, Route, SiteServer, html, lastmods, read_csv, run_audit

if TYPE_CHECKING:
    from pathlib import Path

#: What the server sends for every page at the first build, and at the rebuild.
FIRST = "Wed, 21 Oct 2015 07:28:00 GMT"
REBUILT = "Thu, 22 Oct 2015 09:00:00 GMT"
#: The same dates as a sitemap writes them (W3C Datetime, UTC: P4), written by hand.
FIRST_W3C = "2015-10-21T07:28:00+00:00"
REBUILT_W3C = "2015-10-22T09:00:00+00:00"


def build(site: SiteServer, last_modified: str, edited: str) -> None:
    """The site as one build serves it: every page dated ``last_modified``; only the text
    of /edited is the build's own."""
    dated = {"Last-Modified": last_modified}
    links = "<a href='/same'>A page</a> <a href='/edited'>Another page</a>"
    site.routes.update(
        {
            "/": Route(body=html(body=f"<h1>The docs</h1>{links}"), headers=dated),
            "/same": Route(body=html(body="<p>A page that no build changes.</p>"), headers=dated),
            "/edited": Route(body=html(body=f"<p>{edited}</p>"), headers=dated),
        }
    )


def findings(report: Path, site: SiteServer) -> list[tuple[str, str, str]]:
    rows = read_csv(report / site.origin.name / "audit.csv")
    return [(r["url"], r["finding"], r["detail"]) for r in rows]


@deferred_f_from_coro_f
async def test_a_rebuild_reports_only_the_page_whose_published_lastmod_moved(
    crawl, tmp_path: Path
) -> None:
    """Issue 41: the second run's server moved every page's Last-Modified and changed the
    text of /edited alone. The live sitemap (the first run's set) lists each page with
    the first date; the crawl publishes the first date again for the unchanged pages and
    the rebuild's for /edited. So the one ``lastmod_mismatch`` is /edited's, its detail
    naming the lastmod published, and ``urls.csv`` gives each page the lastmod published.
    ``sitemapgen-audit --store`` reads the same verdicts and reports the same."""
    live = tmp_path / "live"
    out = tmp_path / "out"  # its state file keeps the content notes from run to run
    with SiteServer(static=live) as site:
        u = site.url
        build(site, FIRST, "The first text.")
        await crawl({"SITEMAPGEN_URI": str(out)}, spidercls=PlainSpider, start_url=u("/"))
        first = lastmods(out)[site.origin.name]
        assert first == {u("/"): FIRST_W3C, u("/same"): FIRST_W3C, u("/edited"): FIRST_W3C}
        # Deployed: the site serves the first run's set (robots.txt, index, urlset).
        shutil.copytree(out / site.origin.name, live)

        build(site, REBUILT, "The text of the second build.")
        store = tmp_path / "store.sqlite3"
        report = tmp_path / "report"
        crawler = await crawl(
            {
                "SITEMAPGEN_URI": str(out),
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_STORE": str(store),
                "SITEMAPGEN_REPORT_DIR": str(report),
                # Each verdict's lastmod committed as it is written: while the publish
                # still reads the store's pages, the next ones must come all the same.
                "SITEMAPGEN_COMMIT_WRITES": 1,
            },
            spidercls=PlainSpider,
            start_url=u("/"),
        )
        assert crawler.stats.get_value("finish_reason") == "finished"
        # What the second run published: the unchanged pages keep their lastmod (P4).
        assert lastmods(out)[site.origin.name] == {
            u("/"): FIRST_W3C,
            u("/same"): FIRST_W3C,
            u("/edited"): REBUILT_W3C,
        }
        expected = [
            (u("/edited"), "lastmod_mismatch", f"listed {FIRST_W3C}, crawled {REBUILT_W3C}")
        ]
        assert findings(report, site) == expected
        urls = read_csv(report / site.origin.name / "urls.csv")
        assert {r["url"]: r["lastmod"] for r in urls} == {
            u("/"): FIRST_W3C,
            u("/same"): FIRST_W3C,
            u("/edited"): REBUILT_W3C,
        }

        requested = len(site.requested)
        offline = tmp_path / "offline"
        status, printed = await asyncio.to_thread(
            run_audit, "--store", str(store), "--output", str(offline), "--fail-on",
            "lastmod_mismatch", u("/robots.txt"),
        )  # fmt: skip
        assert status == 1, printed  # /edited's finding, a kind --fail-on names
        assert findings(offline, site) == expected
        # Only the live sitemaps were read again, no page.
        assert site.requested[requested:] == ["/robots.txt", "/sitemap.xml", "/sitemap-1.xml.gz"]


@deferred_f_from_coro_f
async def test_without_content_notes_every_page_is_compared_with_the_crawled_date(
    crawl, tmp_path: Path
) -> None:
    """Without the previous runs' content notes (a state file of its own, new) the crawl
    publishes the dates its server sends, and the audit compares the live lastmods with
    those, as it always did: every page of the rebuild is a ``lastmod_mismatch``."""
    live = tmp_path / "live"
    with SiteServer(static=live) as site:
        u = site.url
        build(site, FIRST, "The first text.")
        await crawl(
            {"SITEMAPGEN_URI": str(tmp_path / "first")}, spidercls=PlainSpider, start_url=u("/")
        )
        shutil.copytree(tmp_path / "first" / site.origin.name, live)

        build(site, REBUILT, "The first text.")  # nothing but the dates changed
        report = tmp_path / "report"
        await crawl(
            {
                "SITEMAPGEN_URI": str(tmp_path / "second"),
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report),
            },
            spidercls=PlainSpider,
            start_url=u("/"),
        )
        detail = f"listed {FIRST_W3C}, crawled {REBUILT_W3C}"
        assert findings(report, site) == [
            (u("/"), "lastmod_mismatch", detail),
            (u("/edited"), "lastmod_mismatch", detail),
            (u("/same"), "lastmod_mismatch", detail),
        ]
