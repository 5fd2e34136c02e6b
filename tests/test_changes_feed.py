"""The changes feed (issue 41, item 3): ``changes.atom`` beside each origin's index, the
URLs added or changed in the last changes across runs, newest first, read back by a real
feed parser (feedparser) and checked against RFC 4287's required elements with lxml.

Two real crawls of a local site whose pages change between them. The pages state their
dates (``article:modified_time``), so every ``updated`` below is written by hand from
them; the titles are the pages' ``<title>``. The feed's author is the site, once on the
feed (RFC 4287 4.1.1: a feed has an author unless every entry has one).
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any

import feedparser
import pytest
import scrapy
from lxml import etree
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.features.changes_feed_atom import atom_time, changes_feed_xml
from scrapy_sitemapgen.sitemaps.facts import format_w3c
from scrapy_sitemapgen.state.changes_feed_notes import ChangesFeedEntry

from .helpers import (
    NOT_FOUND,
    IndexNowServer,
    Route,
    SiteServer,
    assert_validator_accepts,
    html,
    run_build,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import Clock, CrawlFn

ATOM = "{http://www.w3.org/2005/Atom}"
# RFC 3339's date-time (section 5.6), as Atom's updated must be (RFC 4287 3.3).
RFC3339_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)\Z")
# A title with the characters that break hand-made XML: markup, entities, ]]>, quotes,
# a character beyond the BMP.
HOSTILE = "Fish & Chips <b>\"bold\"</b> ]]> 'q' \U0001d11e"


def _page(title: str, modified: str, text: str, links: str = "") -> Route:
    head = f'<title>{title}</title><meta property="article:modified_time" content="{modified}">'
    return Route(body=html(head, f"<main><p>{text}</p>{links}</main>"))


def routes(run: int) -> dict[str, Route]:
    """The site on ``run``: in run 2, /a is edited (new date, text, title), /new appears,
    /gone is gone (no link, 404), /b and /c stay as they were."""
    second = run == 2
    pages = ["/a", "/b", "/c", "/new" if second else "/gone"]
    links = "".join(f"<a href={p}>{p}</a> " for p in pages)
    site = {
        "/": _page("Home", "2026-01-01T00:00:00+00:00", "home", links),
        "/a": _page("Page A", "2026-01-02T00:00:00+00:00", "a first"),
        "/b": _page("Page B", "2026-01-03T00:00:00+00:00", "b"),
        "/c": _page("Page C", "2026-01-04T00:00:00+00:00", "c"),
        "/gone": _page("Gone", "2026-01-05T00:00:00+00:00", "soon gone"),
    }
    if second:
        site["/a"] = _page("Page A, revised", "2026-02-02T00:00:00+00:00", "a second")
        site["/new"] = _page("New page", "2026-02-01T00:00:00+00:00", "new")
        site["/gone"] = Route(status=404, body="gone")
    return site


@pytest.fixture
def server() -> Iterator[SiteServer]:
    site = SiteServer()
    yield site
    site.close()


FEED_ON = {"SITEMAPGEN_CHANGES_FEED": True}


def _feed_path(out: Path, server: SiteServer) -> Path:
    return out / server.origin.name / "changes.atom"


def _check_rfc4287(data: bytes) -> etree._Element:
    """The elements RFC 4287 requires (4.1.1, 4.1.2): exactly one id, title and updated
    on the feed and on each entry; an author on the feed (this feed's choice, so entries
    need none); updated in RFC 3339's form; each entry's link to its page."""
    root = etree.fromstring(data)
    assert root.tag == f"{ATOM}feed"
    for element in (root, *root.iterfind(f"{ATOM}entry")):
        for name in ("id", "title", "updated"):
            assert len(element.findall(f"{ATOM}{name}")) == 1, (element.tag, name)
        assert RFC3339_RE.match(element.findtext(f"{ATOM}updated"))
    assert root.find(f"{ATOM}author/{ATOM}name") is not None
    for entry in root.iterfind(f"{ATOM}entry"):
        assert entry.find(f"{ATOM}link").get("href") == entry.findtext(f"{ATOM}id")
    return root


def _read(out: Path, server: SiteServer) -> feedparser.FeedParserDict:
    data = _feed_path(out, server).read_bytes()
    _check_rfc4287(data)
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return parsed


def _entries(parsed: feedparser.FeedParserDict) -> list[tuple[str, str, str]]:
    return [(e.link, e.title, e.updated) for e in parsed.entries]


def _manifest_feed(out: Path, server: SiteServer) -> dict[str, Any]:
    """changes.atom as the origin's manifest.json lists it."""
    document = json.loads((out / server.origin.name / "manifest.json").read_bytes())
    (feed,) = [f for f in document["files"] if f["name"] == "changes.atom"]
    return feed  # type: ignore[no-any-return]


@deferred_f_from_coro_f
async def test_two_crawls_give_the_changes_newest_first(
    server: SiteServer, crawl: CrawlFn, clock: Clock, tmp_path: Path
) -> None:
    """Run 1 (the first: nothing was published before, so nothing changed): a valid feed
    with no entry, as old as the run. Run 2: the edited and the new page, newest first,
    and nothing else (the unchanged pages, the removed one). Titles are the pages'. The
    manifest lists the feed as a kind of its own, with its entries."""
    u = server.url
    out = tmp_path / "out"
    server.routes = routes(1)
    first = await crawl(FEED_ON, start_url=u("/"))
    parsed = _read(out, server)
    assert parsed.entries == []
    assert first.stats.get_value("sitemapgen/changes_feed/entries") == 0
    feed = parsed.feed
    assert feed.updated == format_w3c(clock.now)  # no entry: when the feed was published
    assert feed.id == u("/changes.atom")
    assert [link.href for link in feed.links if link.rel == "self"] == [u("/changes.atom")]
    assert _manifest_feed(out, server)["kind"] == "changes_feed"
    assert _manifest_feed(out, server)["entries"] == 0

    clock.advance(60)
    server.routes = routes(2)
    second = await crawl(FEED_ON, start_url=u("/"))
    parsed = _read(out, server)
    assert _entries(parsed) == [
        (u("/a"), "Page A, revised", "2026-02-02T00:00:00+00:00"),
        (u("/new"), "New page", "2026-02-01T00:00:00+00:00"),
    ]
    assert parsed.feed.updated == "2026-02-02T00:00:00+00:00"  # the newest entry's
    assert second.stats.get_value("sitemapgen/changes_feed/entries") == 2
    # The feed is one of the origin's files: in its manifest, and not in robots.txt.
    folder = out / server.origin.name
    listed = _manifest_feed(out, server)
    assert (listed["kind"], listed["entries"]) == ("changes_feed", 2)
    assert listed["bytes"] == len(_feed_path(out, server).read_bytes())
    assert "changes.atom" not in (folder / "robots.txt").read_text()


@deferred_f_from_coro_f
async def test_a_third_run_without_changes_keeps_the_feed(
    server: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """The feed's memory is in the state file: a run that changes nothing publishes the
    same bytes (so the file is not stamped or delivered anew, P10), its entries those
    the run before found."""
    u = server.url
    out = tmp_path / "out"
    server.routes = routes(1)
    await crawl(FEED_ON, start_url=u("/"))
    server.routes = routes(2)
    await crawl(FEED_ON, start_url=u("/"))
    before = _feed_path(out, server).read_bytes()
    assert [e.link for e in _read(out, server).entries] == [u("/a"), u("/new")]
    await crawl(FEED_ON, start_url=u("/"))
    assert _feed_path(out, server).read_bytes() == before
    db = sqlite3.connect(out / ".sitemapgen-state.sqlite3")
    try:
        (blocks,) = db.execute("SELECT COUNT(*) FROM feed_blocks").fetchone()
    finally:
        db.close()
    assert blocks == 1


@deferred_f_from_coro_f
async def test_off_by_default(server: SiteServer, crawl: CrawlFn, tmp_path: Path) -> None:
    """Without SITEMAPGEN_CHANGES_FEED there is no feed and no stat."""
    server.routes = routes(1)
    crawler = await crawl(start_url=server.url("/"))
    assert not _feed_path(tmp_path / "out", server).exists()
    assert (tmp_path / "out" / server.origin.name / "sitemap.xml").exists()
    assert crawler.stats.get_value("sitemapgen/changes_feed/entries") is None


@deferred_f_from_coro_f
async def test_the_entries_cap(server: SiteServer, crawl: CrawlFn, tmp_path: Path) -> None:
    """SITEMAPGEN_CHANGES_FEED_ENTRIES=1: the newest change, on each run."""
    u = server.url
    out = tmp_path / "out"
    settings = {**FEED_ON, "SITEMAPGEN_CHANGES_FEED_ENTRIES": 1}
    server.routes = routes(1)
    await crawl(settings, start_url=u("/"))
    assert _read(out, server).entries == []
    server.routes = routes(2)
    await crawl(settings, start_url=u("/"))
    assert [e.link for e in _read(out, server).entries] == [u("/a")]  # /new is older
    # Back to run 1's site: /gone (2026-01-05) is added again, /a (2026-01-02) changed.
    server.routes = routes(1)
    await crawl(settings, start_url=u("/"))
    assert [e.link for e in _read(out, server).entries] == [u("/gone")]


@deferred_f_from_coro_f
async def test_named_in_robots_only_when_asked_and_validated(
    server: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """SITEMAPGEN_CHANGES_FEED_IN_ROBOTS adds a ``Sitemap:`` line for the feed (G1: Google
    reads an Atom feed there), after the index's; the package's validator reads the set
    through that robots.txt and accepts the feed instead of calling it a bad urlset."""
    u = server.url
    out = tmp_path / "out"
    server.routes = routes(1)
    await crawl({**FEED_ON, "SITEMAPGEN_CHANGES_FEED_IN_ROBOTS": True}, start_url=u("/"))
    folder = out / server.origin.name
    assert (folder / "robots.txt").read_text() == (
        f"Sitemap: {u('/sitemap.xml')}\nSitemap: {u('/changes.atom')}\n"
    )
    assert_validator_accepts(folder)


@deferred_f_from_coro_f
async def test_a_hostile_title_stays_well_formed(
    server: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """A page title with markup, ``]]>``, quotes, entities and a character beyond the BMP
    comes back from the feed as the page's text (P1: escaped, not altered)."""
    u = server.url
    escaped = HOSTILE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # The page appears on run 2 (run 1 is a first run: no entries); the home page is the
    # same on both.
    home = Route(body=html("<title>Home</title>", '<p>home</p><a href="/fish">f</a>'))
    server.routes = {"/": home}
    await crawl(FEED_ON, start_url=u("/"))
    server.routes = {"/": home, "/fish": Route(body=html(f"<title>{escaped}</title>", "<p>f</p>"))}
    await crawl(FEED_ON, start_url=u("/"))
    parsed = _read(tmp_path / "out", server)
    # feedparser sanitises a title it takes for HTML; lxml reads the text as written.
    root = etree.fromstring(_feed_path(tmp_path / "out", server).read_bytes())
    assert root.findtext(f"{ATOM}entry/{ATOM}title") == HOSTILE
    assert len(parsed.entries) == 1


def test_feed_xml_removes_what_xml_forbids() -> None:
    """Control characters and a lone surrogate cannot be in an XML 1.0 file (P1): the
    title keeps the rest; a URL with no known title is its own title."""
    data = changes_feed_xml(
        [
            ChangesFeedEntry(
                "https://a.example/x", "2026-01-01T00:00:00+00:00", "A\x00B\x1f]]>\ud800C"
            ),
            ChangesFeedEntry("https://a.example/y?a=1&b=2", "2026-01-01T00:00:00+00:00"),
        ],
        feed_url="https://a.example/changes.atom",
        site="https://a.example/",
        fallback_updated="2026-03-01T00:00:00+00:00",
    )
    root = _check_rfc4287(data)
    titles = [e.findtext(f"{ATOM}title") for e in root.iterfind(f"{ATOM}entry")]
    assert titles == ["AB]]>C", "https://a.example/y?a=1&b=2"]
    assert feedparser.parse(data).bozo == 0


@pytest.mark.parametrize(
    ("lastmod", "expected"),
    [
        ("2026-01-02", "2026-01-02T00:00:00+00:00"),
        ("2026-01-02T10:00:00+02:00", "2026-01-02T08:00:00+00:00"),
        ("2026-01-02T10:00Z", "2026-01-02T10:00:00+00:00"),
        (None, "2026-03-01T00:00:00+00:00"),
        ("no date", "2026-03-01T00:00:00+00:00"),
    ],
)
def test_atom_time(lastmod: str | None, expected: str) -> None:
    """A lastmod (P4's W3C forms) as RFC 3339 with seconds and zone; the run's time when
    there is none."""
    assert atom_time(lastmod, "2026-03-01T00:00:00+00:00") == expected


def test_the_offline_build_writes_the_feed_without_titles(tmp_path: Path) -> None:
    """``scrapy sitemapgen-build`` writes the feed too, across builds (its worker
    processes note the feed in side files the state takes in); a feed's records carry no
    page title, so each entry's title is its URL (docs/changes-feed.rst)."""
    feed = tmp_path / "feed.jsonl"
    out = tmp_path / "out"
    one, two, three, four = (f"https://a.example/{n}" for n in ("one", "two", "three", "four"))

    def build(*records: tuple[str, str]) -> feedparser.FeedParserDict:
        # A second origin: a build stages two or more origins in its worker processes.
        other = ("https://b.example/", "2026-01-01")
        lines = [f'{{"loc": "{loc}", "lastmod": "{day}"}}\n' for loc, day in (*records, other)]
        feed.write_text("".join(lines))
        result = run_build(
            tmp_path,
            "--input",
            str(feed),
            "--workers",
            "2",
            "-s",
            f"SITEMAPGEN_URI={out}",
            "-s",
            "SITEMAPGEN_CHANGES_FEED=True",
        )
        assert result.returncode == 0, result.stderr[-3000:]
        data = (out / "https_a.example_443" / "changes.atom").read_bytes()
        _check_rfc4287(data)
        parsed = feedparser.parse(data)
        assert parsed.bozo == 0
        return parsed

    first = build((one, "2026-01-01"), (two, "2026-01-03"), (four, "2026-01-02"))
    assert _entries(first) == []  # a first build: nothing changed since a previous one
    # /one changed, /three is new, /two is gone, /four stays as it was.
    second = build((one, "2026-01-05"), (three, "2026-01-04"), (four, "2026-01-02"))
    assert _entries(second) == [
        (one, one, "2026-01-05T00:00:00+00:00"),
        (three, three, "2026-01-04T00:00:00+00:00"),
    ]
    # /four changed: first, then the second build's entries, the feed's memory.
    third = build((one, "2026-01-05"), (three, "2026-01-04"), (four, "2026-01-06"))
    assert _entries(third) == [
        (four, four, "2026-01-06T00:00:00+00:00"),
        (one, one, "2026-01-05T00:00:00+00:00"),
        (three, three, "2026-01-04T00:00:00+00:00"),
    ]


class TitledSpider(scrapy.Spider):
    """Yields an item with a ``title`` for /b: the item's title beats the page's."""

    name = "titled"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        if response.url.endswith("/b"):
            yield {"loc": response.url, "title": "  B, as the\nspider names it "}
        yield from response.follow_all(css="a")


@deferred_f_from_coro_f
async def test_an_items_title_beats_the_pages(
    server: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """docs/item-fields.rst: an item's ``title`` (whitespace collapsed) is the entry's."""
    u = server.url
    # Run 1 has the home page alone (the same entry as run 2's): the others are added.
    server.routes = {"/": routes(1)["/"], "/a": NOT_FOUND, "/b": NOT_FOUND, "/c": NOT_FOUND}
    await crawl(FEED_ON, spidercls=TitledSpider, start_url=u("/"))
    server.routes = routes(1)
    await crawl(FEED_ON, spidercls=TitledSpider, start_url=u("/"))
    titles = {e.link: e.title for e in _read(tmp_path / "out", server).entries}
    assert titles[u("/b")] == "B, as the spider names it"
    assert titles[u("/c")] == "Page C"


@deferred_f_from_coro_f
async def test_with_indexnow_on_both_see_the_same_changes(
    server: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """The feed is made of IndexNow's findings, one pass for both: with a key, run 2
    submits the added, changed and removed URLs, and the feed is the same as without."""
    u = server.url
    out = tmp_path / "out"
    server.static = out / server.origin.name  # the endpoint fetches the key file
    endpoint = IndexNowServer()
    try:
        settings = {
            **FEED_ON,
            "SITEMAPGEN_INDEXNOW_KEY": "a1b2c3d4e5f60718293a4b5c6d7e8f90",
            "SITEMAPGEN_INDEXNOW_ENDPOINT": endpoint.url,
        }
        server.routes = routes(1)
        await crawl(settings, start_url=u("/"))
        server.routes = routes(2)
        second = await crawl(settings, start_url=u("/"))
        # Run 2, in loc order: /a changed, /gone removed, /new added (/ links other pages
        # now, but its entry, its stated date included, is the same).
        assert endpoint.url_lists == [[u("/a"), u("/gone"), u("/new")]]
    finally:
        endpoint.close()
    stats = second.stats
    assert [stats.get_value(f"sitemapgen/indexnow/urls/{k}") for k in ("added", "changed")] == [
        1,
        1,
    ]
    assert [e.link for e in _read(out, server).entries] == [u("/a"), u("/new")]


@deferred_f_from_coro_f
async def test_a_feed_with_no_changes_yet_keeps_its_bytes(
    server: SiteServer, crawl: CrawlFn, clock: Clock, tmp_path: Path
) -> None:
    """IndexNow's fingerprints from before the feed was turned on: the feed's first run
    finds no change, so the feed has no entry; its ``updated`` (RFC 4287 requires one)
    stays what it was on the next run without changes, so the file is not stamped anew."""
    u = server.url
    out = tmp_path / "out"
    server.routes = routes(1)
    # No submission happens (a first run submits nothing, later runs change nothing).
    indexnow = {
        "SITEMAPGEN_INDEXNOW_KEY": "a1b2c3d4e5f60718293a4b5c6d7e8f90",
        "SITEMAPGEN_INDEXNOW_ENDPOINT": u("/indexnow"),
    }
    await crawl(indexnow, start_url=u("/"))
    assert not _feed_path(out, server).exists()
    await crawl({**indexnow, **FEED_ON}, start_url=u("/"))
    parsed = _read(out, server)
    assert parsed.entries == []
    first = _feed_path(out, server).read_bytes()
    clock.advance(1)  # a run's time is to the second: the next one is another
    await crawl({**indexnow, **FEED_ON}, start_url=u("/"))
    assert _feed_path(out, server).read_bytes() == first
