"""Which duplicate by content is listed (issue 40, item 5): a URL that a page's
``rel=canonical`` names wins over shorter ones. Three pages with the same text (/a, /bb,
/longest-of-them) and a fourth copy, left out as ``canonical_elsewhere``, whose canonical
link names the longest of them: real crawls into the SQLite store, a store file of the
previous schema, and the Redis store. The expected files are written by hand from
docs/lastmod.rst ("One URL per page of content")."""

from __future__ import annotations

import csv
import gzip
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.store.base import StoreError
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

from .helpers import URLSET_HEAD, URLSET_TAIL, Route, SiteServer, assert_valid, html, read_urls

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from typing_extensions import Self

    from scrapy_sitemapgen.settings import Config

    from .conftest import CrawlFn
    from .helpers import RedisServer

SAME = "<h1>Opening hours</h1><p>Monday to Friday, nine to five.</p>"
PAGES = ["/a", "/bb", "/longest-of-them", "/copy"]
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    u = server.url
    links = "".join(f"<a href='{p}'>{p}</a>" for p in PAGES)
    server.routes = {
        "/": Route(body=html("<title>Home</title>", f"<h1>Welcome</h1>{links}")),
        "/a": Route(body=html("<title>Hours</title>", SAME)),
        "/bb": Route(body=html("<title>Hours</title>", SAME)),
        "/longest-of-them": Route(body=html("<title>Hours</title>", SAME)),
        # a copy that names the longest as its canonical URL: left out itself, it makes
        # the URL it names the one listed among the duplicates
        "/copy": Route(
            body=html(
                f"<title>Hours</title><link rel=canonical href='{u('/longest-of-them')}'>", SAME
            )
        ),
    }
    yield server
    server.close()


def _expected_urlset(server: SiteServer) -> bytes:
    """Written by hand: the home page and the named duplicate, in loc order, no lastmod
    (the pages state none, and ``observed`` never guesses on first sight)."""
    return (
        URLSET_HEAD
        + f"<url><loc>{server.url('/')}</loc></url>\n".encode()
        + f"<url><loc>{server.url('/longest-of-them')}</loc></url>\n".encode()
        + URLSET_TAIL
    )


def _assert_published(out: Path, server: SiteServer) -> None:
    folder = out / server.origin.name
    urlsets = sorted(folder.glob("sitemap-*.xml*"))
    assert [p.name for p in urlsets] == ["sitemap-1.xml.gz"]
    data = assert_valid(urlsets[0])  # schema-validated (P14)
    assert data == _expected_urlset(server)
    # Scrapy's own sitemap parser reads the same two URLs back.
    sitemap = Sitemap(gzip.decompress(urlsets[0].read_bytes()))
    assert sitemap.type == "urlset"
    assert [entry["loc"] for entry in sitemap] == [
        server.url("/"),
        server.url("/longest-of-them"),
    ]
    assert set(read_urls(out)[server.origin.name]) == {
        server.url("/"),
        server.url("/longest-of-them"),
    }


def _assert_counted(crawler: Any) -> None:
    stats = crawler.stats.get_value
    assert stats("sitemapgen/excluded/duplicate_content") == 2  # /a and /bb
    assert stats("sitemapgen/excluded/canonical_elsewhere") == 1  # /copy
    assert stats("sitemapgen/skipped/store_error") is None


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


@deferred_f_from_coro_f
async def test_the_named_duplicate_is_listed(
    site: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """/longest-of-them is listed though /a is shorter: /copy's canonical names it. The
    audit's verdicts say which URL is listed instead of each left-out duplicate, and a
    live sitemap that lists /a too gets ``listed_duplicate`` of /longest-of-them."""
    u = site.url
    site.routes["/sitemap.xml"] = Route(
        body=(
            f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">'
            f"<url><loc>{u('/')}</loc></url><url><loc>{u('/a')}</loc></url>"
            f"<url><loc>{u('/longest-of-them')}</loc></url></urlset>"
        ),
        content_type="application/xml",
    )
    report_dir = tmp_path / "report"
    crawler = await crawl(
        {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)}, start_url=u("/")
    )
    _assert_published(tmp_path / "out", site)
    _assert_counted(crawler)
    folder = report_dir / site.origin.name
    judged = {r["url"]: (r["verdict"], r["detail"]) for r in read_csv(folder / "urls.csv")}
    assert judged == {
        u("/"): ("listed", ""),
        u("/a"): ("excluded/duplicate_content", u("/longest-of-them")),
        u("/bb"): ("excluded/duplicate_content", u("/longest-of-them")),
        u("/longest-of-them"): ("listed", ""),
        u("/copy"): ("excluded/canonical_elsewhere", u("/longest-of-them")),
    }
    rows = [(r["url"], r["finding"], r["detail"]) for r in read_csv(folder / "audit.csv")]
    assert rows == [(u("/a"), "listed_duplicate", u("/longest-of-them"))]


@deferred_f_from_coro_f
async def test_without_the_naming_page_the_shortest_wins(
    site: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """Take /copy away and nothing names any of the three: the shortest, /a, is listed,
    as before."""
    del site.routes["/copy"]
    crawler = await crawl(start_url=site.url("/"))
    got = set(read_urls(tmp_path / "out")[site.origin.name])
    assert got == {site.url("/"), site.url("/a")}
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 2


@deferred_f_from_coro_f
async def test_a_store_of_the_previous_schema_opens(
    site: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    """A SQLite store written before the canonical targets were kept (no such table, nor
    the later verdicts of a run and the run of each row) opens as it was, gets the table,
    and the crawl on it makes the same choice."""
    path = tmp_path / "store.sqlite3"
    SqliteFactStore(path).close()
    db = sqlite3.connect(path)
    for table in ("canonical_targets", "judged", "runs", "links"):  # later than that version
        db.execute(f"DROP TABLE {table}")
    db.execute("ALTER TABLE urls DROP COLUMN run")
    db.commit()
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert tables == {"urls", "requests", "verdicts", "listed"}
    crawler = await crawl({"SITEMAPGEN_STORE": str(path)}, start_url=site.url("/"))
    _assert_published(tmp_path / "out", site)
    _assert_counted(crawler)
    db = sqlite3.connect(path)
    assert db.execute("SELECT loc FROM canonical_targets").fetchall() == [
        (site.url("/longest-of-them"),)
    ]
    db.close()


@deferred_f_from_coro_f
async def test_the_redis_store_makes_the_same_choice(
    site: SiteServer, crawl: CrawlFn, redis_server: RedisServer, tmp_path: Path
) -> None:
    """One worker on the shared store: the target is kept in the origin's sorted set, and
    the publish from Redis lists what the SQLite store's did."""
    import redis

    settings = {"SITEMAPGEN_STORE": redis_server.url, "SITEMAPGEN_SHARED_WRITE": "always"}
    crawler = await crawl(settings, start_url=site.url("/"))
    _assert_published(tmp_path / "out", site)
    _assert_counted(crawler)
    client = redis.Redis.from_url(redis_server.url)
    key = f"sitemapgen:canonical:http {site.origin.host} {site.origin.port}"
    assert client.zrange(key, 0, -1) == [site.url("/longest-of-them").encode()]
    client.close()


class _NoTargetsStore(SqliteFactStore):
    """A SQLite store (at ``path``) whose disk refuses to keep canonical targets."""

    path_for_test: Path

    @classmethod
    def from_config(cls, config: Config, location: str) -> Self:
        return cls(cls.path_for_test)

    def record_canonical(self, target: str) -> None:
        raise StoreError(f"the disk refused {target}")

    def journal(self) -> None:  # type: ignore[override]
        """No resume: its location is no path for the close marker."""
        return None


@deferred_f_from_coro_f
async def test_a_store_that_cannot_keep_a_target(
    site: SiteServer, crawl: CrawlFn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As a fact that cannot be recorded: one ERROR line naming the URL, counted in
    ``sitemapgen/skipped/store_error``, the crawl goes on and publishes (the choice
    without the name: the shortest)."""
    _NoTargetsStore.path_for_test = tmp_path / "store.sqlite3"
    crawler = await crawl(
        {
            "SITEMAPGEN_STORE": "refusing://store",
            "SITEMAPGEN_STORE_BACKENDS": {"refusing": f"{__name__}._NoTargetsStore"},
        },
        start_url=site.url("/"),
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert crawler.stats.get_value("sitemapgen/skipped/store_error") == 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1
    assert f"cannot record {site.url('/longest-of-them')}: the disk refused" in errors[0]
    got = set(read_urls(tmp_path / "out")[site.origin.name])
    assert got == {site.url("/"), site.url("/a")}
