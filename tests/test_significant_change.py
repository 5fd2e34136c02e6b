"""What counts as a change, crawled for real (issue 40, item 4): across runs, a page's
JSON-LD price and a body link's target move its lastmod, a footer's year does not; and a
state file written with the text-only fingerprint is re-baselined on the first run with the
new one, by the crawl and by the build command, with one WARNING.

The pages state no date, so their ``<lastmod>`` (P4) is ``observed``: the time a run
found the page changed. The expectations are written by hand from docs/lastmod.rst; the text-only
fingerprints of the old state are the hand-written visible texts of the pages, hashed.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.pages.fingerprint import text_fingerprint
from scrapy_sitemapgen.sitemaps.lastmod import Seen
from scrapy_sitemapgen.state.content_notes import VERSION_LINE, decode_contents
from scrapy_sitemapgen.state.notes import pack, unpack

from .helpers import Route, SiteServer, html, lastmods, log_messages, read_bytes, run_scrapy

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import Clock, CrawlFn

PAGES = ["/price", "/links", "/footer", "/still", "/edited"]
# What the upgrade WARNING says, in part.
UPGRADE = "holds content fingerprints of the text alone"


def _offer(price: str) -> str:
    return (
        '<script type="application/ld+json">{"@context": "https://schema.org", '
        f'"@type": "Product", "name": "Cone", "offers": {{"@type": "Offer", "price": "{price}", '
        '"priceCurrency": "EUR"}}</script>'
    )


def _page(name: str, edition: str, *, head: str = "", main: str = "", year: str = "2024") -> str:
    return html(
        f"<title>{name}</title>{head}",
        "<header><nav><a href=/>Home</a></nav></header>"
        f"<main><p>{name}: {edition} edition.</p>{main}</main>"
        f"<footer><a href=/legal>Legal</a> (c) {year} Shop</footer>",
    )


def routes(run: int, *, edited: bool = False) -> dict[str, Route]:
    """The site on ``run``: every page's text changes from run 1 to run 2 (so each has an
    observed lastmod); in run 3 the price, a body link's target and the footer's year
    change, and (``edited``) /edited's text."""
    edition = "first" if run == 1 else "second"
    third = run >= 3
    links = "".join(f"<li><a href={path}>{path[1:]}</a></li>" for path in PAGES)
    return {
        "/": Route(body=html("<title>Home</title>", f"<main><ul>{links}</ul></main>")),
        "/price": Route(body=_page("Price", edition, head=_offer("12.00" if third else "10.00"))),
        "/links": Route(
            body=_page(
                "Links",
                edition,
                main=f"<p>See <a href={'/footer' if third else '/still'}>the other page</a>.</p>",
            )
        ),
        "/footer": Route(body=_page("Footer", edition, year="2025" if third else "2024")),
        "/still": Route(body=_page("Still", edition)),
        "/edited": Route(body=_page("Edited", "third" if edited else edition)),
        "/legal": Route(status=404, body="gone"),
    }


def _visible(path: str, run: int) -> str:
    """The text a reader sees on ``path`` in ``run`` (title, then the main content; the
    navigation and the footer are chrome), written out by hand."""
    if path == "/":
        return "Home" + "".join(p[1:] for p in PAGES)
    name = path[1:].capitalize()
    edition = "first" if run == 1 else "second"
    extra = "See the other page." if path == "/links" else ""
    return f"{name}{name}: {edition} edition.{extra}"


@pytest.fixture
def shop() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


def _now(clock: Clock) -> str:
    """The clock's time as an observed lastmod is written."""
    return clock.now.isoformat()


def _read_back(out: Path, origin: str) -> dict[str, str | None]:
    """{loc: lastmod} as Scrapy's own sitemap parser reads the published urlsets (the
    helpers' reading validates them against the schemas and the package's validator)."""
    got: dict[str, str | None] = {}
    for path in sorted((out / origin).glob("sitemap-*.xml*")):
        for entry in Sitemap(read_bytes(path)):
            got[entry["loc"]] = entry.get("lastmod")
    return got


def _listed(server: SiteServer, out: Path) -> dict[str, str | None]:
    origin = server.origin.name
    got = lastmods(out)[origin]
    assert _read_back(out, origin) == got
    return got


def _expected(server: SiteServer, lastmod: str, **moved: str) -> dict[str, str | None]:
    """{loc: lastmod} of the site: the home page without one (never changed), each other
    page with ``lastmod`` unless ``moved`` names it (by its path without the slash)."""
    return {server.url("/"): None, **{server.url(p): moved.get(p[1:], lastmod) for p in PAGES}}


async def _two_runs(server: SiteServer, crawl: CrawlFn, clock: Clock, out: Path) -> str:
    """Runs 1 and 2: every page but the home page gets an observed lastmod, returned."""
    u = server.url
    server.routes = routes(1)
    await crawl(start_url=u("/"))
    assert _listed(server, out) == {u(p): None for p in ["/", *PAGES]}  # first sight
    server.routes = routes(2)
    clock.advance(1)  # a later run: its pages observed in another second
    before = _now(clock)
    await crawl(start_url=u("/"))
    after = _now(clock)
    got = _listed(server, out)
    observed = got[u("/price")]
    assert observed is not None and before <= observed <= after
    assert got == _expected(server, observed)
    return observed


@deferred_f_from_coro_f
async def test_what_moves_a_lastmod(
    shop: SiteServer, crawl: CrawlFn, clock: Clock, tmp_path: Path, caplog
) -> None:
    """Run 3: the JSON-LD price and the body link's target are changes (the time run 3
    fetched them); the footer's year is not, nor is a page left alone."""
    server = shop
    u = server.url
    out = tmp_path / "out"
    second = await _two_runs(server, crawl, clock, out)
    server.routes = routes(3)
    clock.advance(1)  # a later run: its pages observed in another second
    before = _now(clock)
    with caplog.at_level(logging.WARNING):
        await crawl(start_url=u("/"))
    after = _now(clock)
    got = _listed(server, out)
    third = got[u("/price")]
    assert third is not None and before <= third <= after and third > second
    # the price in its JSON-LD and a body link's target; the footer's year is no change
    assert got == _expected(server, second, price=third, links=third)
    assert not [r for r in caplog.records if UPGRADE in r.getMessage()]  # no upgrade here


def _write_text_only_state(server: SiteServer, state: Path, run: int) -> int:
    """Turn the state file's content notes into what the text-only fingerprint wrote:
    each page's fingerprint the hash of its visible text (as of ``run``), the blocks
    without the version line, and no version noted. Returns the notes rewritten."""
    db = sqlite3.connect(state)
    rows = db.execute("SELECT output, origin, seq, data FROM content_blocks").fetchall()
    assert rows
    rewritten = 0
    for output, origin, seq, data in rows:
        assert unpack(data).startswith(VERSION_LINE + "\n")  # written by this version
        lines = []
        for loc, seen in decode_contents(data):
            assert loc.startswith(server.url("/"))
            path = urlsplit(loc).path
            old = Seen(text_fingerprint(_visible(path, run)), seen.observed, seen.lastmod)
            lines.append(f"{loc}\t{old.fingerprint}\t{old.observed or ''}\t{old.lastmod or ''}")
            rewritten += 1
        db.execute(
            "UPDATE content_blocks SET data = ? WHERE output = ? AND origin = ? AND seq = ?",
            (pack("\n".join(lines)), output, origin, seq),
        )
    db.execute("DROP TABLE meta")  # the text-only version kept none
    db.commit()
    db.close()
    return rewritten


@deferred_f_from_coro_f
async def test_state_of_the_text_only_fingerprint(
    shop: SiteServer, crawl: CrawlFn, clock: Clock, tmp_path: Path, caplog
) -> None:
    """The first run on a state written with the text-only fingerprint moves no lastmod
    for what the old fingerprint did not cover (the price, the link, the footer), still
    moves one whose text changed, and says so in one WARNING; the run after it counts
    every change again, silently."""
    server = shop
    u = server.url
    out = tmp_path / "out"
    second = await _two_runs(server, crawl, clock, out)
    assert _write_text_only_state(server, out / ".sitemapgen-state.sqlite3", 2) == 6
    server.routes = routes(3, edited=True)
    clock.advance(1)  # a later run: its pages observed in another second
    before = _now(clock)
    with caplog.at_level(logging.WARNING):
        await crawl(start_url=u("/"))
    after = _now(clock)
    said = [r for r in caplog.records if UPGRADE in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert "lastmod" in said[0].getMessage()
    got = _listed(server, out)
    edited = got[u("/edited")]
    assert edited is not None and before <= edited <= after and edited > second
    # /edited's text changed: the text is compared across the upgrade
    assert got == _expected(server, second, edited=edited)
    # The next run compares the new fingerprints: the price changes again, and counts.
    caplog.clear()
    server.routes = {
        **routes(3, edited=True),
        "/price": Route(body=_page("Price", "second", head=_offer("14.00"))),
    }
    clock.advance(1)  # a later run: its pages observed in another second
    before = _now(clock)
    with caplog.at_level(logging.WARNING):
        await crawl(start_url=u("/"))
    after = _now(clock)
    assert not [r for r in caplog.records if UPGRADE in r.getMessage()]
    got = _listed(server, out)
    fourth = got[u("/price")]
    assert fourth is not None and before <= fourth <= after and fourth > edited
    assert got == _expected(server, second, price=fourth, edited=edited)


@deferred_f_from_coro_f
async def test_build_on_a_state_of_the_text_only_fingerprint(
    shop: SiteServer, crawl: CrawlFn, clock: Clock, tmp_path: Path
) -> None:
    """``sitemapgen-build --store`` reads the same notes: on a text-only state it moves no
    lastmod for the price, the link or the footer, and warns once."""
    server = shop
    u = server.url
    out = tmp_path / "out"
    second = await _two_runs(server, crawl, clock, out)
    _write_text_only_state(server, out / ".sitemapgen-state.sqlite3", 2)
    server.routes = routes(3)
    clock.advance(1)  # a lastmod the build moved would show this run's time
    store = tmp_path / "store.sqlite3"
    await crawl(
        {"SITEMAPGEN_STORE": str(store), "SITEMAPGEN_URI": str(tmp_path / "elsewhere")},
        start_url=u("/"),
    )
    result = run_scrapy(
        tmp_path, "sitemapgen-build", "--store", str(store), "-s", f"SITEMAPGEN_URI={out}"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [m for m in log_messages(result.stderr, "WARNING") if UPGRADE in m]
    assert len(warnings) == 1
    assert _listed(server, out) == _expected(server, second)
