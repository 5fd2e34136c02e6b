"""Three crawls of one site whose pages change between runs (issue 21's "Done when"):
exact lastmods and the exact listed set each run, and a third run, with nothing changed,
that publishes byte-identical files. The expectations are written by hand from the rules
in docs/lastmod.rst."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import (
    PausingSpider,
    RedisServer,
    Route,
    SiteServer,
    html,
    lastmods,
    run_scrapy,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import CrawlFn

T1 = "Mon, 01 Apr 2024 10:00:00 GMT"
T2 = "Wed, 01 May 2024 10:00:00 GMT"
T3 = "Sat, 01 Jun 2024 10:00:00 GMT"
W1, W2 = "2024-04-01T10:00:00+00:00", "2024-05-01T10:00:00+00:00"
AUTHOR = "2023-12-24T18:00:00+00:00"  # the date the page's author wrote

PATHS = [
    "/",
    "/index.html",
    "/dynamic",
    "/rebuilt",
    "/edited",
    "/tokens",
    "/article",
    "/guide",
    "/guide/print",
    "/shop?id=1",
    "/product-one",
    "/tours-lyon",
    "/tours-nice",
]


def _home() -> str:
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in PATHS)
    return html("<title>Home</title>", f"<h1>Welcome</h1><ul>{links}</ul>")


def _tokens(run: int) -> str:
    """Volatile bits only: a CSRF token, a script nonce, a footer time, markup."""
    return html(
        f"<title>Contact</title><script nonce='n{run}x'>var t = {run};</script>",
        f"<main class='v{run}'><h1>Contact us</h1><form><input type=hidden name=csrf "
        f"value='tok{run * 7919}'><p>Write to us.</p></form></main>"
        f"<footer>Generated 2024-0{run}-01 12:0{run}</footer>",
    )


def _guide(print_version: bool) -> str:
    if print_version:  # other markup, the same words, no navigation
        return html("<title>Guide</title>", "<div class=print><h2>Guide</h2><p>Step one.</p></div>")
    return html(
        "<title>Guide</title><link rel=stylesheet href=/s.css>",
        "<nav><a href='/'>Home</a></nav><article><h1>Guide</h1><p>Step <b>one</b>.</p></article>",
    )


def routes(server: SiteServer, run: int) -> dict[str, Route]:
    """The site as it is on ``run`` (1, 2, 3); run 3 serves what run 2 served."""
    second = run >= 2
    product = html("<title>Product one</title>", "<h1>Product one</h1><p>A fine thing.</p>")
    home = _home()
    return {
        "/": Route(body=home),
        # the same bytes under two URLs
        "/index.html": Route(body=home),
        # no Last-Modified, no date in the page: its text changes once, in run 2
        "/dynamic": Route(
            body=html("", f"<p>Today's offer: {'pears' if second else 'apples'}.</p>")
        ),
        # a rebuilt static site: Last-Modified moves every run, the text never
        "/rebuilt": Route(
            body=html("<title>About</title>", "<p>We sell fruit.</p>"),
            headers={"Last-Modified": (T1, T2, T3)[run - 1]},
        ),
        # edited in run 2 (and the server says so), untouched but re-stamped in run 3
        "/edited": Route(
            body=html("", f"<p>Opening hours: {'9 to 5' if second else '8 to 4'}.</p>"),
            headers={"Last-Modified": (T1, T2, T3)[run - 1]},
        ),
        "/tokens": Route(body=_tokens(run)),
        # the author's date beats the server's mtime (the default order), then stays
        "/article": Route(
            body=html(
                f"<meta property='article:modified_time' content='{AUTHOR}'>",
                "<h1>Winter</h1><p>Snow fell.</p>",
            ),
            headers={"Last-Modified": (T1, T2, T3)[run - 1]},
        ),
        # the same text in other markup: the shorter URL is listed
        "/guide": Route(body=_guide(False)),
        "/guide/print": Route(body=_guide(True)),
        # the same text, one page names itself canonical: it is listed, though longer
        "/shop?id=1": Route(body=product),
        "/product-one": Route(
            body=product.replace(
                "<head>", f"<head><link rel=canonical href='{server.url('/product-one')}'>"
            )
        ),
        # one word apart: two pages
        "/tours-lyon": Route(body=html("", "<p>Tours in Paris and Lyon.</p>")),
        "/tours-nice": Route(body=html("", "<p>Tours in Paris and Nice.</p>")),
    }


@pytest.fixture
def changing_site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


LEFT_OUT = ["/guide/print", "/index.html", "/shop?id=1"]


def _published(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".sitemapgen-state")
    }


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@deferred_f_from_coro_f
async def test_three_runs(
    changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    server = changing_site
    u = server.url
    out = tmp_path / "out"
    origin = server.origin.name

    def expected(dynamic: str | None, edited: str) -> dict[str, str | None]:
        return {
            u("/"): None,
            u("/dynamic"): dynamic,
            u("/rebuilt"): W1,
            u("/edited"): edited,
            u("/tokens"): None,
            u("/article"): AUTHOR,
            u("/guide"): None,
            u("/product-one"): None,
            u("/tours-lyon"): None,
            u("/tours-nice"): None,
        }

    # Run 1: first sight of everything. "observed" gives nothing; the duplicates are out.
    server.routes = routes(server, 1)
    with caplog.at_level(logging.DEBUG, logger="scrapy_sitemapgen"):
        crawler = await crawl(start_url=u("/"))
    assert lastmods(out)[origin] == expected(None, W1)
    debug = {r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG}
    for left in LEFT_OUT:  # each one at DEBUG
        assert f"Sitemap: not listing {u(left)} (duplicate_content)" in debug
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 3
    summary = [r.getMessage() for r in caplog.records if "duplicates by content" in r.getMessage()]
    assert len(summary) == 1
    for left in LEFT_OUT:
        assert u(left) in summary[0]
    assert f"{u('/index.html')} (same as {u('/')})" in summary[0]
    assert f"{u('/shop?id=1')} (same as {u('/product-one')})" in summary[0]
    first = _published(out)

    # Run 2: /dynamic's text changed (its lastmod is when run 2 fetched it), /edited's too
    # (the server's new date); /rebuilt and /article were only re-stamped: kept.
    server.routes = routes(server, 2)
    before = _now()
    crawler = await crawl(start_url=u("/"))
    after = _now()
    second_lastmods = lastmods(out)[origin]
    observed = second_lastmods[u("/dynamic")]
    assert observed is not None and before <= observed <= after
    assert second_lastmods == expected(observed, W2)
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 3
    second = _published(out)
    assert second != first

    # Run 3: nothing changed but the servers' dates and the tokens: the same bytes.
    server.routes = routes(server, 3)
    crawler = await crawl(start_url=u("/"))
    assert lastmods(out)[origin] == expected(observed, W2)
    assert _published(out) == second
    assert crawler.stats.get_value(f"sitemapgen/files/written/{origin}") == 0


@deferred_f_from_coro_f
async def test_switched_off(changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path) -> None:
    """Without the two switches and the source, the stated dates rule as before."""
    server = changing_site
    u = server.url
    off = {
        "SITEMAPGEN_LASTMOD_SOURCES": ["page", "header"],
        "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": False,
        "SITEMAPGEN_DEDUPE_CONTENT": False,
    }
    server.routes = routes(server, 1)
    await crawl(off, start_url=u("/"))
    server.routes = routes(server, 2)
    crawler = await crawl(off, start_url=u("/"))
    got = lastmods(tmp_path / "out")[server.origin.name]
    assert set(got) == {u(p) for p in PATHS}  # every page listed
    assert got[u("/dynamic")] is None
    assert got[u("/rebuilt")] == W2
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") is None


@deferred_f_from_coro_f
async def test_state_of_the_previous_version(
    changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog
) -> None:
    """A first run on an output of the previous version (its state file has no content
    notes) works and says so once; the run after it follows the content."""
    server = changing_site
    u = server.url
    out = tmp_path / "out"
    server.routes = routes(server, 1)
    await crawl(start_url=u("/"))
    db = sqlite3.connect(out / ".sitemapgen-state.sqlite3")
    db.execute("DROP TABLE content_blocks")  # what 0.1.0 wrote
    db.commit()
    db.close()
    server.routes = routes(server, 2)
    with caplog.at_level(logging.INFO):
        await crawl(start_url=u("/"))
    said = [r.getMessage() for r in caplog.records if "earlier version" in r.getMessage()]
    assert len(said) == 1 and "kept no page contents" in said[0]
    got = lastmods(out)[server.origin.name]
    assert got[u("/dynamic")] is None  # first sight again: never a guess
    assert got[u("/rebuilt")] == W2  # nothing published with a fingerprint to keep
    caplog.clear()
    server.routes = routes(server, 3)
    with caplog.at_level(logging.INFO):
        await crawl(start_url=u("/"))
    assert not [r for r in caplog.records if "earlier version" in r.getMessage()]
    assert lastmods(out)[server.origin.name][u("/rebuilt")] == W2  # kept from now on


# --- it holds everywhere the facts go ---------------------------------------------------


def _expected(server: SiteServer, dynamic: str | None, edited: str) -> dict[str, str | None]:
    """{loc: lastmod} of what is listed, the duplicates left out (as in test_three_runs)."""
    u = server.url
    return {
        u("/"): None,
        u("/dynamic"): dynamic,
        u("/rebuilt"): W1,
        u("/edited"): edited,
        u("/tokens"): None,
        u("/article"): AUTHOR,
        u("/guide"): None,
        u("/product-one"): None,
        u("/tours-lyon"): None,
        u("/tours-nice"): None,
    }


def _observed_in(got: dict[str, str | None], server: SiteServer, before: str, after: str) -> str:
    observed = got[server.url("/dynamic")]
    assert observed is not None and before <= observed <= after, (before, observed, after)
    return observed


@deferred_f_from_coro_f
async def test_jobdir_resume(changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path) -> None:
    """A second run paused and resumed publishes what an uninterrupted one would: the
    pages fetched before the pause keep their fingerprints and fetch times in the JOBDIR
    store."""
    server = changing_site
    out = tmp_path / "out"
    server.routes = routes(server, 1)
    await crawl(start_url=server.url("/"))
    server.routes = routes(server, 2)
    settings = {"JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS": 1}
    before = _now()
    paused = await crawl(
        settings, spidercls=PausingSpider, start_url=server.url("/"), pause_after=6
    )
    assert paused.stats.get_value("finish_reason") == "shutdown"
    resumed = await crawl(settings, spidercls=PausingSpider, start_url=server.url("/"))
    after = _now()
    assert resumed.stats.get_value("finish_reason") == "finished"
    recorded = [c.stats.get_value("sitemapgen/pages/recorded") for c in (paused, resumed)]
    assert all(recorded) and sum(recorded) == len(PATHS)  # both halves fetched pages
    got = lastmods(out)[server.origin.name]
    assert got == _expected(server, _observed_in(got, server, before, after), W2)
    assert resumed.stats.get_value("sitemapgen/excluded/duplicate_content") == 3


@deferred_f_from_coro_f
async def test_build_from_a_store(
    changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """``sitemapgen-build --store`` into the output of run 1 applies the same rules as the
    crawl: fingerprints and fetch times come from the store."""
    server = changing_site
    out = tmp_path / "out"
    server.routes = routes(server, 1)
    await crawl(start_url=server.url("/"))
    server.routes = routes(server, 2)
    store = tmp_path / "store.sqlite3"
    before = _now()
    await crawl(
        {"SITEMAPGEN_STORE": str(store), "SITEMAPGEN_URI": str(tmp_path / "elsewhere")},
        start_url=server.url("/"),
    )
    after = _now()
    result = run_scrapy(
        tmp_path, "sitemapgen-build", "--store", str(store), "-s", f"SITEMAPGEN_URI={out}"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'sitemapgen/excluded/duplicate_content': 3" in result.stderr
    got = lastmods(out)[server.origin.name]
    assert got == _expected(server, _observed_in(got, server, before, after), W2)


# scrapy-redis still calls what Scrapy deprecated (``spider`` arguments to the stats,
# ``Spider.log``): in this process, unlike test_redis.py's worker processes, those
# warnings would be errors.
@pytest.mark.filterwarnings("ignore::scrapy.exceptions.ScrapyDeprecationWarning")
@deferred_f_from_coro_f
async def test_redis_workers(
    changing_site: SiteServer, crawl: CrawlFn, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Two workers share one Redis store and one request queue (scrapy-redis), each
    fetching part of the site; the last to close publishes the set one process would."""
    server = changing_site
    shared = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "REDIS_URL": redis_server.url,
        "SITEMAPGEN_STORE": redis_server.url,
        "SITEMAPGEN_SHARED_WRITE": "last",
        "CONCURRENT_REQUESTS": 1,
    }

    async def workers() -> list[Any]:
        seen = len(server.requested)
        first = asyncio.ensure_future(crawl(shared, start_url=server.url("/")))
        # The second joins a crawl under way, its queue filled: the first asked for a page
        # that the home page links to.
        deadline = time.monotonic() + 60
        while not set(server.requested[seen:]) - {"/", "/robots.txt"}:
            assert not first.done() and time.monotonic() < deadline, "the first did not start"
            await asyncio.sleep(0.05)
        second = await crawl(shared, start_url=server.url("/"))
        return [await first, second]

    server.routes = {path: _slow(route) for path, route in routes(server, 1).items()}
    first = await workers()
    assert sum(w.stats.get_value("sitemapgen/origins") is not None for w in first) == 1
    server.routes = {path: _slow(route) for path, route in routes(server, 2).items()}
    before = _now()
    second = await workers()
    after = _now()
    assert all(w.stats.get_value("sitemapgen/pages/recorded") for w in second)  # both worked
    got = lastmods(tmp_path / "out")[server.origin.name]
    assert got == _expected(server, _observed_in(got, server, before, after), W2)
    assert [
        w.stats.get_value("sitemapgen/excluded/duplicate_content")
        for w in second
        if w.stats.get_value("sitemapgen/origins")
    ] == [3]


def _slow(route: Route) -> Route:
    """The route answered after a pause, so that both workers take requests."""
    return dataclasses.replace(route, delay=0.2)


@deferred_f_from_coro_f
async def test_remote_output_with_state_in_the_scrapy_folder(
    changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path, ftp_server, monkeypatch
) -> None:
    """An FTP output: the state lives in ``.scrapy/`` and the rules hold across runs; the
    unchanged third run uploads nothing."""
    base, home = ftp_server
    monkeypatch.chdir(tmp_path)  # outside a project: .scrapy/ in the working folder
    server = changing_site
    settings = {"SITEMAPGEN_URI": f"{base}/sitemaps/%(origin)s", "FEED_STORAGE_FTP_ACTIVE": False}
    server.routes = routes(server, 1)
    await crawl(settings, start_url=server.url("/"))
    assert (tmp_path / ".scrapy" / "sitemapgen-state.sqlite3").is_file()
    server.routes = routes(server, 2)
    before = _now()
    await crawl(settings, start_url=server.url("/"))
    after = _now()
    arrived = home / "sitemaps"
    got = lastmods(arrived)[server.origin.name]
    assert got == _expected(server, _observed_in(got, server, before, after), W2)
    uploaded = _published(arrived)
    server.routes = routes(server, 3)
    third = await crawl(settings, start_url=server.url("/"))
    assert _published(arrived) == uploaded
    assert third.stats.get_value("sitemapgen/delivery/stored/FTPFeedStorage") is None


@deferred_f_from_coro_f
async def test_sections(changing_site: SiteServer, crawl: CrawlFn, tmp_path: Path) -> None:
    """With SITEMAPGEN_SECTIONS each section is written from a pass of its own: its
    lastmods are settled as the other URLs' are, and its duplicates left out."""
    server = changing_site
    settings = {"SITEMAPGEN_SECTIONS": [["changing", "^[^?]*/(dynamic|edited|rebuilt)$"]]}
    server.routes = routes(server, 1)
    await crawl(settings, start_url=server.url("/"))
    server.routes = routes(server, 2)
    before = _now()
    crawler = await crawl(settings, start_url=server.url("/"))
    after = _now()
    folder = tmp_path / "out" / server.origin.name
    assert (folder / "sitemap-changing-1.xml.gz").is_file()
    got = lastmods(tmp_path / "out")[server.origin.name]
    assert got == _expected(server, _observed_in(got, server, before, after), W2)
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 3
