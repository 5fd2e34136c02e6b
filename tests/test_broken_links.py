"""Broken links with their sources (issue 53): a local site whose pages link to a 404, a
500 and a URL whose connection fails, crawled for real; the close log's line per origin,
the stats, ``urls.csv``'s ``inlinks`` and ``linked_from``, ``audit.json``'s count and
``report.html``'s section read in headless Chromium; the sources survive a JOBDIR pause
and come the same from the Redis store; a bad SITEMAPGEN_LINK_SOURCES is refused at
start in one line."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import (
    CHROMIUM_ARGS,
    PausingSpider,
    Route,
    SiteServer,
    _free_port,
    crawl_site,
    html,
    read_csv,
    write_project,
)
from .test_startup import assert_refused_in_one_line

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: The pages that link to /missing (p1 twice): more than the five sources kept by default.
LINKERS = [f"/p{n}" for n in range(1, 8)]


def _links(*hrefs: str) -> str:
    return html(body="".join(f"<a href='{href}'>x</a>" for href in hrefs))


class Broken:
    """The site, and the port nothing listens on (its URL's connection fails)."""

    def __init__(self) -> None:
        self.server = SiteServer()
        self.dead = f"http://127.0.0.1:{_free_port()}"
        u = self.server.url
        routes = {
            "/": Route(body=_links(*LINKERS, "/b500", "/ok")),
            "/ok": Route(body=_links("/")),
            "/b500": Route(500, "<p>oops</p>"),
            # /missing: no route, so 404.
        }
        for path in LINKERS:
            extra = {
                "/p1": ["/missing", u("/missing#again")],  # twice: counts once
                "/p2": ["/b500"],
                "/p3": [f"{self.dead}/gone"],
            }.get(path, [])
            routes[path] = Route(body=_links("/", "/missing", *extra))
        self.server.routes.update(routes)
        self.root = self.server.origin.root

    def url(self, path: str) -> str:
        return self.server.url(path)


@pytest.fixture(scope="module")
def broken() -> Iterator[Broken]:
    site = Broken()
    yield site
    site.server.close()


def _lines(caplog: pytest.LogCaptureFixture, needle: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO
        and r.name.startswith("scrapy_sitemapgen")
        and needle in r.getMessage()
    ]


def _parse_line(line: str, root: str) -> tuple[int, dict[str, tuple[str, list[str], int]]]:
    """The close line read back: (count, {path: (why, sources, more pages)})."""
    match = re.fullmatch(rf"Sitemap: {re.escape(root)}: (\d+) broken links?: (.*)", line)
    assert match, line
    found = {}
    for url, why, sources in re.findall(r"(\S+) \(([^,]+), from ([^)]*)\)", match.group(2)):
        more = 0
        tail = re.search(r" and (\d+) more pages?$", sources)
        if tail:
            more = int(tail.group(1))
            sources = sources[: tail.start()]
        found[url] = (why, sources.split(", "), more)
    return int(match.group(1)), found


def _assert_links(found: dict[str, tuple[str, list[str], int]], kept: int) -> None:
    """What the site's links give, whatever order the crawl reached its pages in."""
    assert set(found) == {"/b500", "/missing"}
    why, sources, more = found["/missing"]
    assert why == "404"
    assert len(sources) == kept and set(sources) <= set(LINKERS)
    assert len(set(sources)) == kept and more == len(LINKERS) - kept
    why, sources, more = found["/b500"]
    assert (why, sorted(sources), more) == ("500", ["/", "/p2"], 0)


@deferred_f_from_coro_f
async def test_a_crawl_names_its_broken_links_with_their_sources_in_the_close_log_and_report(
    broken: Broken,
    crawl: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    chromium_executable: str,
) -> None:
    caplog.set_level(logging.INFO)
    report_dir = tmp_path / "report"
    crawler = await crawl(
        {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)},
        start_url=broken.url("/"),
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    stats = crawler.stats.get_stats()

    # The close log: one line per origin with broken links.
    (line,) = _lines(caplog, f"Sitemap: {broken.root}: 2 broken links")
    count, found = _parse_line(line, broken.root)
    assert count == 2
    _assert_links(found, 5)
    dead_root = broken.dead + "/"
    assert _lines(caplog, f"Sitemap: {dead_root}:") == [
        f"Sitemap: {dead_root}: 1 broken link: /gone (connection failed, from {broken.url('/p3')})"
    ]
    assert stats["sitemapgen/broken_links"] == 3
    assert stats[f"sitemapgen/broken_links/{broken.server.origin.name}"] == 2

    # urls.csv: the two columns at the end, for every URL the crawl judged.
    folder = report_dir / broken.server.origin.name
    rows = read_csv(folder / "urls.csv")
    assert list(rows[0])[-2:] == ["inlinks", "linked_from"]
    by_url = {row["url"]: row for row in rows}
    missing = by_url[broken.url("/missing")]
    assert missing["status"] == "404" and missing["inlinks"] == "7"
    sources = missing["linked_from"].split(" ")
    assert len(sources) == len(set(sources)) == 5
    assert set(sources) <= {broken.url(p) for p in LINKERS}
    assert by_url[broken.url("/b500")]["inlinks"] == "2"
    assert sorted(by_url[broken.url("/b500")]["linked_from"].split(" ")) == [
        broken.url("/"),
        broken.url("/p2"),
    ]
    # A listed page's links are counted too; / links to itself from no other page but /ok
    # and the seven /pN (each once, however often).
    assert by_url[broken.url("/ok")]["inlinks"] == "1"
    assert by_url[broken.url("/ok")]["linked_from"] == broken.url("/")
    assert by_url[broken.url("/")]["inlinks"] == "8"

    report = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    assert report["broken_links"] == 2

    for script in (True, False):
        seen = await asyncio.to_thread(_seen, folder / "report.html", chromium_executable, script)
        assert seen["errors"] == [] and seen["requests"] == [(folder / "report.html").as_uri()]
        assert seen["visible"]
        assert seen["note"].startswith("2 URLs that crawled pages link to")
        (b500, miss) = seen["rows"]
        assert b500[:3] == ["/b500", "500", "2"]
        assert sorted(b500[3].split(", ")) == ["/", "/p2"]
        assert miss[:3] == ["/missing", "404", "7"]
        assert miss[3].endswith(" and 2 more")
        assert set(miss[3].removesuffix(" and 2 more").split(", ")) <= set(LINKERS)
        # Each URL shown is a link to the page itself, to open and fix.
        assert set(seen["hrefs"]) >= {
            broken.url("/missing"),
            broken.url("/b500"),
            broken.url("/p2"),
        }


def _seen(path: Path, chromium: str, script: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_context(java_script_enabled=script).new_page()
            requests: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            section = page.locator("#broken")
            return {
                "visible": section.is_visible(),
                "note": section.locator("p.note").inner_text(),
                "rows": page.eval_on_selector_all(
                    "#broken-links tbody tr",
                    "rs => rs.map(r => Array.from(r.cells).map(c => c.innerText))",
                ),
                "hrefs": page.eval_on_selector_all(
                    "#broken-links a", "as => as.map(a => a.getAttribute('href'))"
                ),
                "requests": requests,
                "errors": errors,
            }
        finally:
            browser.close()


@deferred_f_from_coro_f
async def test_the_sources_survive_a_jobdir_pause(
    broken: Broken, crawl: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    settings = {"JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS": 1}
    first = await crawl(settings, spidercls=PausingSpider, start_url=broken.url("/"), pause_after=4)
    assert first.stats.get_value("finish_reason") == "shutdown"
    assert not _lines(caplog, "broken link")  # nothing published yet
    before = first.stats.get_value("sitemapgen/pages/recorded")
    caplog.clear()
    second = await crawl(settings, spidercls=PausingSpider, start_url=broken.url("/"))
    assert second.stats.get_value("finish_reason") == "finished"
    # The pages from before the pause were not fetched again...
    assert before + second.stats.get_value("sitemapgen/pages/recorded") == 9
    # ...and their links still count: every linking page, before the pause and after.
    (line,) = _lines(caplog, f"Sitemap: {broken.root}: 2 broken links")
    _assert_links(_parse_line(line, broken.root)[1], 5)
    assert second.stats.get_value("sitemapgen/broken_links") == 3


@deferred_f_from_coro_f
async def test_the_redis_store_gives_the_same_bounded_sources(
    broken: Broken, crawl: Any, redis_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    crawler = await crawl(
        {
            "SITEMAPGEN_STORE": redis_server.url,
            "SITEMAPGEN_SHARED_WRITE": "last",  # the one worker writes at its close
            "SITEMAPGEN_LINK_SOURCES": 2,
        },
        start_url=broken.url("/"),
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    (line,) = _lines(caplog, f"Sitemap: {broken.root}: 2 broken links")
    # Two sources kept for /missing, the five others counted.
    _assert_links(_parse_line(line, broken.root)[1], 2)
    assert crawler.stats.get_value("sitemapgen/broken_links") == 3


@deferred_f_from_coro_f
async def test_no_link_is_recorded_with_zero_sources(
    broken: Broken, crawl: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    report_dir = tmp_path / "report"
    crawler = await crawl(
        {
            "SITEMAPGEN_LINK_SOURCES": 0,
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_REPORT_DIR": str(report_dir),
        },
        start_url=broken.url("/"),
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert not _lines(caplog, "broken link")
    assert crawler.stats.get_value("sitemapgen/broken_links") is None
    rows = read_csv(report_dir / broken.server.origin.name / "urls.csv")
    assert {(row["inlinks"], row["linked_from"]) for row in rows} == {("0", "")}


def test_a_bad_link_sources_value_is_refused_at_start_in_one_line(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    before = len(small_site.requested)
    result = crawl_site(project, small_site, "-s", "SITEMAPGEN_LINK_SOURCES=many")
    assert result.returncode == 1
    assert_refused_in_one_line(
        result.stderr,
        "SITEMAPGEN_LINK_SOURCES='many' is invalid: it must be an integer from 0 to 100 "
        "(pages kept per URL linked to, for the broken links; 0 records none).",
    )
    assert small_site.requested[before:] == []


# --- the stores: bounded across batches, an older store still opens ---------------------------


def _fill(store: Any, root: str) -> None:
    """Nine pages link to /gone over three commits, two of them twice (a page fetched
    again after a resume): 9 pages, the first three kept."""
    for batch in ([1, 2], [2, 3, 4], [1, 5, 6, 7, 8, 9]):
        for n in batch:
            store.record_links(f"{root}p{n}", [f"{root}gone", f"{root}ok"])
        store.flush()
    store.judge(f"{root}gone", "excluded/status/410")
    store.judge(f"{root}ok", "excluded/noindex")  # left out, not broken


def _broken(store: Any) -> list[tuple[str, str, int, tuple[str, ...]]]:
    return [(b.url, b.why, b.inlinks, b.sources) for b in store.broken_links()]


ROOT = "https://example.com/"
EXPECTED = [(f"{ROOT}gone", "410", 9, (f"{ROOT}p1", f"{ROOT}p2", f"{ROOT}p3"))]


def test_the_sqlite_store_keeps_the_first_sources_and_counts_each_page_once(
    tmp_path: Path,
) -> None:
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    path = tmp_path / "store.sqlite3"
    store = SqliteFactStore(path, link_sources=3)
    store.start_run(resumed=False)
    _fill(store, ROOT)
    assert _broken(store) == EXPECTED
    store.close()
    # Reopened (a resumed crawl): kept; a new crawl on the store starts without them.
    store = SqliteFactStore(path, link_sources=3)
    store.start_run(resumed=True)
    assert _broken(store) == EXPECTED
    store.start_run(resumed=False)
    _fill(store, ROOT)
    assert _broken(store) == EXPECTED
    store.close()


def test_a_store_written_before_links_were_kept_still_opens(tmp_path: Path) -> None:
    import sqlite3

    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    path = tmp_path / "store.sqlite3"
    SqliteFactStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE links")
    db.close()
    store = SqliteFactStore(path, link_sources=3)
    assert list(store.broken_links()) == []
    _fill(store, ROOT)
    assert _broken(store) == EXPECTED
    store.close()


def test_the_redis_store_merges_as_the_sqlite_store_does(redis_server: Any) -> None:
    from scrapy_sitemapgen.store.redis import RedisFactStore

    store = RedisFactStore(redis_server.url, prefix="links", link_sources=3)
    store.start_run(resumed=False)
    _fill(store, ROOT)
    assert _broken(store) == EXPECTED
    # Another worker's process sees the same rows; a new crawl starts without them.
    other = RedisFactStore(redis_server.url, prefix="links", link_sources=3)
    assert _broken(other) == EXPECTED
    other.finish_run()
    other.start_run(resumed=False)
    assert list(other.broken_links()) == []
    other.close()
    store.close()


# --- the close log's cut-offs ------------------------------------------------------------------


def test_the_close_log_names_five_and_sums_up_the_origins_past_the_shown_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from scrapy_sitemapgen.publish.close_report import log_broken_links
    from scrapy_sitemapgen.sitemaps.broken_links import BrokenLink
    from scrapy_sitemapgen.stats import Reporter

    caplog.set_level(logging.INFO)
    stats = MemoryStatsCollector(get_crawler())
    links = [
        BrokenLink(f"https://a.example/{n}", "excluded/status/404", 1, ("https://a.example/",))
        for n in range(7)
    ] + [
        BrokenLink("https://b.example/x", "failed/timeout", 3, ("https://a.example/",)),
        BrokenLink("https://c.example/y", "excluded/status/503", 1, ("https://a.example/",)),
    ]
    log_broken_links(links, Reporter(stats, logging.getLogger("test")), 1, audited=True)
    assert [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and r.name.startswith("scrapy_sitemapgen")
    ] == [
        "Sitemap: https://a.example/: 7 broken links: /0 (404, from /), /1 (404, from /), "
        "/2 (404, from /), /3 (404, from /), /4 (404, from /), ... (2 more, all at DEBUG, "
        "and in the audit's urls.csv)",
        "Sitemap: and 2 more origins with broken links: 2 broken links (one line each at "
        "DEBUG; SITEMAPGEN_LOG_ORIGINS=1)",
    ]
    assert stats.get_value("sitemapgen/broken_links") == 9
    assert stats.get_value("sitemapgen/broken_links/https_a.example_443") == 7
    assert stats.get_value("sitemapgen/broken_links/https_b.example_443") is None
