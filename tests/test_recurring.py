"""Recurring crawls lose nothing: only evidence removes a page (issue 51).

Real crawls into one output folder, against a local site told between runs which pages
answer 503, 500, 429, 404 or 410, which time out, which lose every link to them, which
say ``noindex``; IndexNow through a local endpoint that records what it received; the
changes feed read by feedparser. Each expected set below is written by hand from what the
server was told (docs/recurring.rst states the rules).
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import feedparser
import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TCPTimedOutError
from twisted.internet.error import TimeoutError as TwistedTimeoutError

from scrapy_sitemapgen.crawl.fetch_failures import failure_kind
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.evidence import (
    OriginEvidence,
    kept_reason,
    published_set,
    refused,
    removes,
)
from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.state.published_entries import ENTRIES
from scrapy_sitemapgen.store.redis import RedisFactStore
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

from .helpers import (
    IndexNowServer,
    PausingSpider,
    RedisServer,
    Route,
    SiteServer,
    SiteSpider,
    html,
    read_entries,
    run_build,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import CrawlFn

KEY = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
PAGES = [f"/p{n:02d}" for n in range(1, 13)]


def _modified(day: int) -> dict[str, str]:
    return {"Last-Modified": f"Wed, {day:02d} Jan 2025 10:00:00 GMT"}


def _lastmod(day: int) -> str:
    return f"2025-01-{day:02d}T10:00:00+00:00"


def _links(paths: list[str]) -> str:
    return "".join(f"<a href='{p}'>{p}</a>" for p in paths)


def _page(number: int, *, head: str = "") -> Route:
    """/pNN: its own text and image, and a Last-Modified of day NN (its <lastmod>)."""
    body = f"<p>page {number}</p><img src='/img/p{number:02d}.png'>"
    return Route(body=html(head, body), headers=_modified(number))


def _home(paths: list[str]) -> Route:
    return Route(body=html(body=_links(paths)), headers=_modified(28))


@pytest.fixture
def manual(tmp_path: Path) -> Iterator[SiteServer]:
    """/ links to /p01 .. /p12; the published output is served too (IndexNow's key file)."""
    server = SiteServer()
    server.routes["/"] = _home(PAGES)
    for number, path in enumerate(PAGES, start=1):
        server.routes[path] = _page(number)
    server.static = tmp_path / "out" / server.origin.name
    yield server
    server.close()


def _settings(endpoint: IndexNowServer | None = None, **more: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {"SITEMAPGEN_CHANGES_FEED": True, **more}
    if endpoint is not None:
        settings["SITEMAPGEN_INDEXNOW_KEY"] = KEY
        settings["SITEMAPGEN_INDEXNOW_ENDPOINT"] = endpoint.url
    return settings


def _close_line(messages: list[str], root: str) -> str:
    lines = [m for m in messages if m.startswith(f"Sitemap: {root}: ") and " URLs (" in m]
    assert len(lines) == 1, lines
    return lines[0]


def _feed(out: Path, origin: str) -> list[tuple[str, str]]:
    """(link, updated) of each entry of the origin's changes feed, as feedparser reads it."""
    parsed = feedparser.parse((out / origin / "changes.atom").read_bytes())
    assert parsed.bozo == 0, parsed.bozo_exception
    return [(entry.link, entry.updated) for entry in parsed.entries]


@deferred_f_from_coro_f
async def test_a_bad_minute_then_a_cut_crawl_lose_nothing(
    manual: SiteServer, endpoint: IndexNowServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    out = tmp_path / "out"
    origin = manual.origin.name
    every = {u("/"), *(u(p) for p in PAGES)}

    # Run 1: every page answers 200.
    await crawl(_settings(endpoint), start_url=u("/"))
    first = read_entries(out, origin)
    assert set(first) == every
    assert first[u("/p03")]["lastmod"] == _lastmod(3)
    assert first[u("/p03")]["images"] == [u("/img/p03.png")]
    assert endpoint.received == []  # a first run submits nothing
    feed_1 = _feed(out, origin)
    assert feed_1 == []  # a first run: nothing changed since a previous one

    # Run 2: a backend's bad minute, after Scrapy's retries (one each).
    manual.routes["/p01"] = Route(503, "busy")
    manual.routes["/p02"] = Route(503, "busy")
    manual.routes["/p03"] = Route(500, "oops")
    manual.routes["/p04"] = Route(429, "slow down")
    manual.routes["/p05"] = Route(404, "gone")
    manual.routes["/p06"] = Route(410, "gone for good")
    manual.routes["/p07"] = Route(body=html(body="late"), delay=3.0)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        second = await crawl(
            _settings(endpoint, RETRY_ENABLED=True, RETRY_TIMES=1, DOWNLOAD_TIMEOUT=1.5),
            start_url=u("/"),
        )
    entries = read_entries(out, origin)
    # Only the 404 and the 410 go; the others keep the entry they were published with.
    assert set(entries) == every - {u("/p05"), u("/p06")}
    for path in ("/p01", "/p02", "/p03", "/p04", "/p07"):
        assert entries[u(path)] == first[u(path)], path
    stats = second.stats.get_stats()
    assert stats["sitemapgen/kept/503"] == 2
    assert stats["sitemapgen/kept/500"] == 1
    assert stats["sitemapgen/kept/429"] == 1
    assert stats["sitemapgen/kept/timeout"] == 1
    assert stats["sitemapgen/removed/status/404"] == 1
    assert stats["sitemapgen/removed/status/410"] == 1
    assert "sitemapgen/output/failed" not in stats
    line = _close_line(caplog.messages, manual.origin.root)
    assert line.startswith(
        f"Sitemap: {manual.origin.root}: 11 URLs (+0, -2 since the previous run: status/404 1, "
        "status/410 1); kept 5 from the previous run (503 ×2, 429 ×1, 500 ×1, timeout ×1) in "
    ), line
    # IndexNow hears of the two pages that left, and of nothing kept.
    assert endpoint.url_lists == [[u("/p05"), u("/p06")]]
    feed_2 = _feed(out, origin)
    assert feed_2 == []  # no entry for a kept page, nor for a removed one

    # Run 3: the server is well again but for the two gone pages, and the crawl is capped
    # (a nightly job's CLOSESPIDER_PAGECOUNT): what it did not reach keeps its entry.
    for number, path in enumerate(PAGES[:4], start=1):
        manual.routes[path] = _page(number)
    manual.routes["/p07"] = _page(7)
    requested_before = len(manual.requested)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        third = await crawl(
            _settings(endpoint, CLOSESPIDER_PAGECOUNT=3, CONCURRENT_REQUESTS=1),
            start_url=u("/"),
        )
    assert third.stats.get_value("finish_reason") == "closespider_pagecount"
    assert read_entries(out, origin) == entries
    unreached = third.stats.get_value("sitemapgen/kept/unreached")
    assert unreached is not None and unreached >= 11 - 4
    assert "sitemapgen/rechecked" not in third.stats.get_stats()  # a cut crawl asks no more
    assert len(manual.requested) - requested_before <= 5
    line = _close_line(caplog.messages, manual.origin.root)
    assert f"kept {unreached} unreached after a cut crawl (closespider_pagecount)" in line
    assert "(+0, -0 since the previous run)" in line
    assert endpoint.url_lists == [[u("/p05"), u("/p06")]]  # nothing more submitted
    assert _feed(out, origin) == feed_2


@deferred_f_from_coro_f
async def test_unreached_pages_are_requested_once_orphans_stay_deleted_go(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    out = tmp_path / "out"
    await crawl(_settings(), start_url=u("/"))
    # Run 2: the menu lost /p11 and /p12; /p11 is still there (an orphan), /p12 was
    # deleted with its link.
    manual.routes["/"] = _home(PAGES[:10])
    manual.routes["/p12"] = Route(404, "gone")
    caplog.clear()
    with caplog.at_level(logging.INFO):
        crawler = await crawl(_settings(), start_url=u("/"))
    entries = read_entries(out, manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES[:11])}
    assert entries[u("/p11")]["lastmod"] == _lastmod(11)  # listed as this run saw it
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/rechecked"] == 2
    assert stats["sitemapgen/orphans"] == 1
    assert stats["sitemapgen/removed/status/404"] == 1
    assert "sitemapgen/kept/unreached" not in stats
    # Each was requested once more, after the crawl, and its links were not followed.
    assert manual.requested.count("/p11") == 2
    assert manual.requested.count("/p12") == 2
    orphans = [m for m in caplog.messages if m.startswith("Sitemap:") and "orphans" in m]
    assert orphans == [
        f"Sitemap: {manual.origin.root}: 1 page published before is linked from no page "
        "this crawl reached and still answers 200, so it stays listed (orphans: a sitemap is "
        f"how search engines find them): {u('/p11')}"
    ]


@deferred_f_from_coro_f
async def test_without_the_recheck_unreached_pages_are_kept(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    u = manual.url
    await crawl(_settings(), start_url=u("/"))
    manual.routes["/"] = _home(PAGES[:10])
    manual.routes["/p12"] = Route(404, "gone")
    crawler = await crawl(_settings(SITEMAPGEN_RECHECK_UNREACHED=False), start_url=u("/"))
    entries = read_entries(tmp_path / "out", manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES)}
    assert crawler.stats.get_value("sitemapgen/kept/unreached") == 2
    assert manual.requested.count("/p12") == 1


@deferred_f_from_coro_f
async def test_a_crawl_cut_by_its_timeout_keeps_what_it_did_not_reach(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    await crawl(_settings(), start_url=u("/"))
    # Run 2: each page takes 0.3 s, one at a time, and the crawl stops after 1 s.
    for number, path in enumerate(PAGES, start=1):
        route = _page(number)
        route.delay = 0.3
        manual.routes[path] = route
    requested = len(manual.requested)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        crawler = await crawl(
            _settings(CLOSESPIDER_TIMEOUT=1, CONCURRENT_REQUESTS=1), start_url=u("/")
        )
    assert crawler.stats.get_value("finish_reason") == "closespider_timeout"
    assert set(read_entries(tmp_path / "out", manual.origin.name)) == {
        u("/"),
        *(u(p) for p in PAGES),
    }
    unreached = crawler.stats.get_value("sitemapgen/kept/unreached")
    assert unreached is not None and unreached >= 6
    # robots.txt and the pages it reached, one of them perhaps answered after the cut
    assert len(manual.requested) - requested <= 1 + (13 - unreached) + 1
    assert "sitemapgen/rechecked" not in crawler.stats.get_stats()
    line = _close_line(caplog.messages, manual.origin.root)
    assert f"kept {unreached} unreached after a cut crawl (closespider_timeout)" in line


@deferred_f_from_coro_f
async def test_a_crawl_that_reached_its_depth_limit_requests_nothing_more(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    manual.routes["/p12"] = Route(
        body=html(body="<a href='/deep'>deeper</a>"), headers=_modified(12)
    )
    manual.routes["/deep"] = _page(13)
    await crawl(_settings(), start_url=u("/"))
    assert u("/deep") in read_entries(tmp_path / "out", manual.origin.name)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        crawler = await crawl(_settings(DEPTH_LIMIT=1), start_url=u("/"))
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert u("/deep") in read_entries(tmp_path / "out", manual.origin.name)
    assert crawler.stats.get_value("sitemapgen/kept/unreached") == 1
    assert manual.requested.count("/deep") == 1  # run 1's request only
    line = _close_line(caplog.messages, manual.origin.root)
    assert "kept 1 unreached after a cut crawl (DEPTH_LIMIT)" in line


@deferred_f_from_coro_f
async def test_a_crawl_resumed_from_jobdir_is_one_crawl(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """The verdicts given before a pause decide after the resume: Scrapy's LIFO queue
    fetches /p12 (now 404) and /p11 (503) first, the pause comes after two more pages,
    and the resumed process does not fetch them again."""
    u = manual.url
    await crawl(_settings(), start_url=u("/"))
    manual.routes["/p12"] = Route(404, "gone")
    manual.routes["/p11"] = Route(503, "busy")
    job = {
        "JOBDIR": str(tmp_path / "job"),
        "CONCURRENT_REQUESTS": 1,
        # Only the verdicts kept across the pause can tell about /p12 then.
        "SITEMAPGEN_RECHECK_UNREACHED": False,
    }
    paused = await crawl(_settings(**job), spidercls=PausingSpider, start_url=u("/"), pause_after=3)
    assert paused.stats.get_value("finish_reason") == "shutdown"
    requested = len(manual.requested)
    resumed = await crawl(_settings(**job), spidercls=PausingSpider, start_url=u("/"))
    assert resumed.stats.get_value("finish_reason") == "finished"
    assert "/p12" not in manual.requested[requested:] and "/p11" not in manual.requested[requested:]
    entries = read_entries(tmp_path / "out", manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES)} - {u("/p12")}
    assert resumed.stats.get_value("sitemapgen/removed/status/404") == 1
    assert resumed.stats.get_value("sitemapgen/kept/503") == 1


class NewsSpider(SiteSpider):
    """Every page is a fresh news article (an item with its news facts)."""

    def parse(self, response: Any) -> Any:
        yield from super().parse(response)
        now = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        news = {
            "publication_name": "The Manual",
            "publication_language": "en",
            "publication_date": now,
            "title": f"News of {response.url}",
        }
        yield {"loc": response.url, "news": news}


@deferred_f_from_coro_f
async def test_a_kept_page_keeps_its_news_entry(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    u = manual.url
    out = tmp_path / "out"
    await crawl(_settings(), spidercls=NewsSpider, start_url=u("/"))
    news = read_entries(out, manual.origin.name, "sitemap-news-")
    assert set(news) == {u("/"), *(u(p) for p in PAGES)}
    manual.routes["/p04"] = Route(503, "busy")
    manual.routes["/p05"] = Route(404, "gone")
    crawler = await crawl(_settings(), spidercls=NewsSpider, start_url=u("/"))
    assert crawler.stats.get_value("sitemapgen/kept/503") == 1
    again = read_entries(out, manual.origin.name, "sitemap-news-")
    assert set(again) == set(news) - {u("/p05")}
    assert again[u("/p04")] == news[u("/p04")]  # as it was published


@deferred_f_from_coro_f
async def test_a_kept_store_publishes_this_crawls_verdicts(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """SITEMAPGEN_STORE kept between crawls (docs/deploy.rst's layout): a page that now
    answers 404 or says noindex leaves the set, whatever the store's older rows say."""
    u = manual.url
    store = str(tmp_path / "facts.sqlite3")
    await crawl(_settings(SITEMAPGEN_STORE=store), start_url=u("/"))
    manual.routes["/p02"] = Route(404, "deleted")
    manual.routes["/p03"] = _page(3, head="<meta name='robots' content='noindex'>")
    crawler = await crawl(_settings(SITEMAPGEN_STORE=store), start_url=u("/"))
    entries = read_entries(tmp_path / "out", manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES)} - {u("/p02"), u("/p03")}
    assert crawler.stats.get_value("sitemapgen/removed/status/404") == 1
    assert crawler.stats.get_value("sitemapgen/removed/noindex") == 1
    # And once more with only the store to remember: the state file is gone.
    (tmp_path / "out" / ".sitemapgen-state.sqlite3").unlink()
    await crawl(_settings(SITEMAPGEN_STORE=store), start_url=u("/"))
    again = read_entries(tmp_path / "out", manual.origin.name)
    assert set(again) == set(entries)


@deferred_f_from_coro_f
async def test_the_guard_refuses_an_origin_that_would_shrink(
    manual: SiteServer, endpoint: IndexNowServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    out = tmp_path / "out"
    folder = out / manual.origin.name
    await crawl(_settings(endpoint), start_url=u("/"))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    # A deploy that put noindex on 8 of the 12 pages: 8 of 13 URLs would go (> 0.5).
    for number, path in enumerate(PAGES[:8], start=1):
        manual.routes[path] = _page(number, head="<meta name='robots' content='noindex'>")
    caplog.clear()
    with caplog.at_level(logging.INFO):
        crawler = await crawl(_settings(endpoint), start_url=u("/"))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert endpoint.received == []
    assert crawler.stats.get_value("sitemapgen/output/refused") == 1
    assert crawler.stats.get_value("sitemapgen/output/failed") == 1
    assert crawler.spider is None  # scrapy crawl exits with 1 (crawl/exitstatus.py)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [
        f"Sitemap: {manual.origin.root} was not published: this run would remove 8 of the 13 "
        "URLs it published (noindex 8), more than SITEMAPGEN_MAX_REMOVED_SHARE = 0.5 allows; "
        "its published files stay as they were and nothing was submitted. If the site did "
        "lose these pages, run again with a higher SITEMAPGEN_MAX_REMOVED_SHARE (None: no guard)"
    ]
    # The same run with the guard raised publishes, and submits the 8 removals.
    raised = await crawl(_settings(endpoint, SITEMAPGEN_MAX_REMOVED_SHARE=0.9), start_url=u("/"))
    assert set(read_entries(out, manual.origin.name)) == {u("/"), *(u(p) for p in PAGES[8:])}
    assert raised.stats.get_value("sitemapgen/output/refused") is None
    assert endpoint.url_lists == [[u(p) for p in PAGES[:8]]]


@deferred_f_from_coro_f
async def test_the_guard_refuses_a_first_run_that_lists_nothing(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    u = manual.url
    noindex = "<meta name='robots' content='noindex'>"
    manual.routes["/"] = Route(body=html(noindex, _links(PAGES)))
    for number, path in enumerate(PAGES, start=1):
        manual.routes[path] = _page(number, head=noindex)
    with caplog.at_level(logging.ERROR):
        crawler = await crawl(_settings(), start_url=u("/"))
    assert not (tmp_path / "out" / manual.origin.name).exists()
    assert crawler.stats.get_value("sitemapgen/output/refused") == 1
    assert crawler.spider is None
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        f"Sitemap: {manual.origin.root} was not published: none of the 13 pages this run "
        "crawled there is listed (noindex 13), more than SITEMAPGEN_MAX_REMOVED_SHARE = 0.5 "
        "allows; its published files stay as they were and nothing was submitted. If the "
        "site did lose these pages, run again with a higher SITEMAPGEN_MAX_REMOVED_SHARE "
        "(None: no guard)"
    ]
    # With the guard off, that crawl is no error (and has nothing to write).
    off = await crawl(_settings(SITEMAPGEN_MAX_REMOVED_SHARE=None), start_url=u("/"))
    assert off.stats.get_value("sitemapgen/output/refused") is None
    assert off.spider is not None


def _age(state: Path, seconds: int) -> None:
    """Move every published entry's confirmation ``seconds`` into the past, as if the
    previous run had been that long ago (the state's own codec, no other change)."""
    db = sqlite3.connect(state)
    with db:
        rows = db.execute("SELECT rowid, data FROM entry_blocks").fetchall()
        for rowid, data in rows:
            notes = [
                (loc, confirmed - seconds, text) for loc, (confirmed, text) in ENTRIES.decode(data)
            ]
            db.execute(
                "UPDATE entry_blocks SET data = ? WHERE rowid = ?", (ENTRIES.encode(notes), rowid)
            )
    db.close()


@deferred_f_from_coro_f
async def test_a_page_kept_too_long_without_evidence_is_removed(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    u = manual.url
    state = tmp_path / "out" / ".sitemapgen-state.sqlite3"
    await crawl(_settings(), start_url=u("/"))
    manual.routes["/p01"] = Route(503, "busy")
    manual.routes["/p02"] = Route(503, "busy")
    # Run 2, a day later: kept (a day is within the default 30 days).
    _age(state, 24 * 3600)
    second = await crawl(_settings(), start_url=u("/"))
    assert second.stats.get_value("sitemapgen/kept/503") == 2
    # Run 3, 31 days after run 1 confirmed them: the 503 pages go, the others stay.
    _age(state, 30 * 24 * 3600)
    manual.routes["/p02"] = _page(2)
    third = await crawl(_settings(), start_url=u("/"))
    entries = read_entries(tmp_path / "out", manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES)} - {u("/p01")}
    assert third.stats.get_value("sitemapgen/removed/unconfirmed") == 1
    assert "sitemapgen/kept/503" not in third.stats.get_stats()


# --- the rules, pure ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "evidence", "kept_as"),
    [
        ("excluded/status/404", True, "404"),
        ("excluded/status/410", True, "410"),
        ("excluded/status/403", True, "403"),
        ("excluded/status/301", True, "301"),
        ("excluded/status/500", False, "500"),
        ("excluded/status/503", False, "503"),
        ("excluded/status/429", False, "429"),
        ("excluded/status/408", False, "408"),
        ("excluded/noindex", True, "excluded/noindex"),
        ("excluded/canonical_elsewhere", True, "excluded/canonical_elsewhere"),
        ("excluded/robots_txt/googlebot", True, "excluded/robots_txt/googlebot"),
        ("excluded/dont_sitemap", True, "excluded/dont_sitemap"),
        ("excluded/duplicate_content", True, "excluded/duplicate_content"),
        ("redirected", True, "redirected"),
        ("skipped/bad_url", True, "skipped/bad_url"),
        ("failed/timeout", False, "timeout"),
        ("failed/dns", False, "dns"),
        ("blocked_by_robots", False, "blocked_by_robots"),
        ("fetch_failed", False, "fetch_failed"),
    ],
)
def test_which_verdicts_are_evidence(verdict: str, evidence: bool, kept_as: str) -> None:
    assert removes(verdict) is evidence
    assert kept_reason(verdict) == kept_as


def _join(
    fresh: list[str],
    previous: list[tuple[str, int | None]],
    judged: list[tuple[str, str]],
    *,
    earlier: tuple[str, ...] = (),
    now: int = 1_000_000,
    keep_for: float = 100,
) -> tuple[list[tuple[str, int | None]], OriginEvidence]:
    tally = OriginEvidence()
    entries = published_set(
        iter([UrlFacts(loc, lastmod="fresh") for loc in fresh]),
        iter(earlier),
        iter([(loc, (confirmed, None)) for loc, confirmed in previous]),
        iter(judged),
        now=now,
        keep_for=keep_for,
        entry_of=lambda loc, _: UrlFacts(loc, lastmod="kept"),
        tally=tally,
    )
    return [(e.loc, e.confirmed) for e in entries], tally


def test_the_join_keeps_what_no_evidence_removes() -> None:
    published, tally = _join(
        fresh=["a", "c", "f"],
        previous=[("a", 1), ("b", 999_950), ("c", 2), ("d", 999_990), ("e", 999_999), ("g", 1)],
        judged=[("b", "excluded/status/503"), ("d", "excluded/status/404"), ("h", "redirected")],
    )
    # a, c, f listed now; b kept (503), d removed (404), e kept (unreached), g unconfirmed
    # for 999,999 s > 100 s, h never published.
    assert published == [("a", None), ("b", 999_950), ("c", None), ("e", 999_999), ("f", None)]
    assert tally.previous == 6
    assert tally.listed == 3
    assert tally.kept == {"503": 1, "unreached": 1}
    assert tally.removed == {"status/404": 1, "unconfirmed": 1}
    assert tally.alarming == 1  # the 404; a redirect is no alarm


def test_an_earlier_crawls_row_is_kept_not_listed() -> None:
    published, tally = _join(
        fresh=["a", "b"], previous=[], judged=[], earlier=("b",), now=50, keep_for=10
    )
    assert published == [("a", None), ("b", 50)]
    assert tally.kept == {"unreached": 1}


@pytest.mark.parametrize(
    ("previous", "removed", "listed", "alarming", "share", "refuse"),
    [
        (100, 50, 50, 50, 0.5, False),  # half is not more than half
        (100, 51, 49, 51, 0.5, True),
        (100, 51, 49, 51, None, False),
        (0, 0, 0, 13, 0.5, True),  # a first run that lists nothing
        (0, 0, 0, 0, 0.5, False),  # nothing answered: nothing to say
        (0, 0, 3, 10, 0.5, False),  # a first run that lists some
    ],
)
def test_the_guard(
    previous: int, removed: int, listed: int, alarming: int, share: float | None, refuse: bool
) -> None:
    assert refused(previous, removed, listed, alarming, share) is refuse


@pytest.mark.parametrize(
    ("exception", "kind"),
    [
        (TwistedTimeoutError(), "timeout"),
        (TCPTimedOutError(), "timeout"),
        (DNSLookupError(), "dns"),
        (ConnectionRefusedError(), "connection"),
        (ValueError("odd"), "error"),
    ],
)
def test_failure_kinds(exception: Exception, kind: str) -> None:
    assert failure_kind(exception) == kind


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("SITEMAPGEN_KEEP_UNCONFIRMED", -1, "number of seconds from 0.0"),
        ("SITEMAPGEN_KEEP_UNCONFIRMED", "a month", "number of seconds from 0.0"),
        ("SITEMAPGEN_MAX_REMOVED_SHARE", 1.5, "share of an origin's published URLs"),
        ("SITEMAPGEN_MAX_REMOVED_SHARE", "half", "or None to turn the guard off"),
        ("SITEMAPGEN_RECHECK_UNREACHED", "maybe", "SITEMAPGEN_RECHECK_UNREACHED"),
    ],
)
def test_bad_settings_are_refused_in_one_line(name: str, value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=name) as caught:
        Config.from_settings(Settings({name: value}))
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message


def test_the_defaults() -> None:
    config = Config.from_settings(Settings())
    assert config.keep_unconfirmed == 30 * 24 * 3600
    assert config.max_removed_share == 0.5
    assert config.recheck_unreached is True


# --- many workers, and the offline build ------------------------------------------------------


@deferred_f_from_coro_f
async def test_a_shared_redis_store_follows_the_same_rules(
    manual: SiteServer, crawl: CrawlFn, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A Redis store shared by the workers of each run, written by the one that closes
    (SITEMAPGEN_SHARED_WRITE): a run's 503s keep their entries, its 404 goes, and the
    store's rows of an earlier run are no evidence of this one."""
    u = manual.url
    shared = {"SITEMAPGEN_STORE": redis_server.url, "SITEMAPGEN_SHARED_WRITE": "always"}
    await crawl(_settings(**shared), start_url=u("/"))
    manual.routes["/p01"] = Route(503, "busy")
    manual.routes["/p02"] = Route(404, "gone")
    # Run 2 lost the link to /p12 too, whose recheck times out: kept as a failure.
    manual.routes["/"] = _home(PAGES[:11])
    manual.routes["/p12"] = Route(body=html(body="late"), delay=3.0)
    second = await crawl(_settings(DOWNLOAD_TIMEOUT=1.5, **shared), start_url=u("/"))
    entries = read_entries(tmp_path / "out", manual.origin.name)
    assert set(entries) == {u("/"), *(u(p) for p in PAGES)} - {u("/p02")}
    stats = second.stats.get_stats()
    assert stats["sitemapgen/kept/503"] == 1
    assert stats["sitemapgen/kept/timeout"] == 1
    assert stats["sitemapgen/removed/status/404"] == 1
    store = RedisFactStore(redis_server.url)
    try:
        origin = manual.origin
        assert u("/p02") not in {facts.loc for facts in store.entries(origin)}
        assert dict(store.judged(origin)) == {
            u("/p01"): "excluded/status/503",
            u("/p02"): "excluded/status/404",
            u("/p12"): "failed/timeout",
        }
    finally:
        store.close()


def test_redis_workers_join_the_run_the_first_started(redis_server: RedisServer) -> None:
    first, second = RedisFactStore(redis_server.url), RedisFactStore(redis_server.url)
    try:
        loc = "https://www.example.com/a"
        origin = Origin("https", "www.example.com", 443)
        first.start_run(resumed=False)
        first.record(UrlFacts(loc))
        first.judge("https://www.example.com/b", "failed/dns")
        first.flush()
        second.start_run(resumed=False)  # a worker of the same run: nothing earlier
        assert list(second.earlier(origin)) == []
        assert list(second.judged(origin)) == [("https://www.example.com/b", "failed/dns")]
        second.finish_run()  # published: the next worker to start starts a run
        later = RedisFactStore(redis_server.url)
        try:
            later.start_run(resumed=False)
            assert list(later.earlier(origin)) == [loc]
            assert list(later.judged(origin)) == []
            later.record(UrlFacts(loc))
            assert list(later.earlier(origin)) == []
        finally:
            later.close()
    finally:
        first.close()
        second.close()


@deferred_f_from_coro_f
async def test_a_build_from_the_store_follows_the_same_rules(
    manual: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """``sitemapgen-build --store`` publishes the store's crawl with that crawl's verdicts:
    run 2 is crawled into a store without writing sitemaps (a paused crawl's JOBDIR would
    do the same), and the build publishes it into the output run 1 published."""
    u = manual.url
    out = tmp_path / "out"
    await crawl(_settings(), start_url=u("/"))
    first = read_entries(out, manual.origin.name)
    manual.routes["/p01"] = Route(503, "busy")
    manual.routes["/p02"] = Route(410, "gone")
    store = tmp_path / "run2.sqlite3"
    await crawl(
        _settings(SITEMAPGEN_STORE=str(store), SITEMAPGEN_URI=str(tmp_path / "scratch")),
        start_url=u("/"),
    )
    requested = len(manual.requested)
    result = run_build(tmp_path, "--store", str(store), "-s", f"SITEMAPGEN_URI={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(manual.requested) == requested  # a build requests nothing
    entries = read_entries(out, manual.origin.name)
    assert set(entries) == set(first) - {u("/p02")}
    assert entries[u("/p01")] == first[u("/p01")]
    assert "'sitemapgen/kept/503': 1" in result.stderr
    assert "'sitemapgen/removed/status/410': 1" in result.stderr


def test_the_sqlite_store_applies_verdicts_and_records_in_their_order(tmp_path: Path) -> None:
    """A removal verdict drops the URL's row recorded before it, and a record made after
    it lists the URL again, whether or not the two wait in one batch."""
    store = SqliteFactStore(tmp_path / "store.sqlite3")
    origin = Origin("https", "www.example.com", 443)
    a, b, c = (f"https://www.example.com/{name}" for name in "abc")
    try:
        store.start_run(resumed=False)
        store.record(UrlFacts(a))
        store.record(UrlFacts(b))
        store.judge(a, "excluded/status/404")  # after its record: a goes
        store.judge(c, "excluded/noindex")
        store.record(UrlFacts(c))  # after its verdict: c is listed
        store.judge(b, "excluded/status/503")  # no evidence: b stays
        assert [facts.loc for facts in store.entries(origin)] == [b, c]
        assert list(store.judged(origin)) == [
            (a, "excluded/status/404"),
            (b, "excluded/status/503"),
            (c, "excluded/noindex"),
        ]
        store.flush()
        store.record(UrlFacts(a))
        assert [facts.loc for facts in store.entries(origin)] == [a, b, c]
    finally:
        store.close()
