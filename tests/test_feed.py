"""The ``sitemap`` feed format: ``scrapy crawl site -O sitemap.xml:sitemap`` leaves the
crawl's one-origin sitemap in that file; Scrapy's own ``xml`` format under a sitemap's name
is warned of."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlparse
from xml.etree import ElementTree

import pytest
from scrapy.extensions.feedexport import BlockingFeedStorage
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen import Addon, SitemapItemExporter

from .helpers import (
    NS,
    assert_valid,
    crawl_site,
    log_messages,
    read_bytes,
    write_project,
)

if TYPE_CHECKING:
    from .helpers import Site, SiteServer

#: What a project's settings need for ``-O FILE:sitemap`` on the command line: Scrapy checks
#: -o/-O formats before it loads add-ons.
CLI_FORMAT = 'FEED_EXPORTERS = {"sitemap": "scrapy_sitemapgen.SitemapItemExporter"}\n'


def small_site_urls(server: SiteServer) -> list[str]:
    return [server.url("/"), server.url("/a"), server.url("/b")]


def assert_urlset_of(data: bytes, expected: list[str]) -> None:
    """A schema-valid urlset listing exactly ``expected``, as Scrapy's parser reads it."""
    assert_valid(data)
    root = ElementTree.fromstring(data)
    assert root.tag == f"{NS}urlset"
    assert [e.text for e in root.iter(f"{NS}loc")] == expected
    sitemap = Sitemap(data)
    assert sitemap.type == "urlset"
    assert [entry["loc"] for entry in sitemap] == expected


def our_records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == level and r.name.startswith("scrapy_sitemapgen")
    ]


# --- scrapy crawl -O ---------------------------------------------------------------------------


def test_dash_O_sitemap_writes_the_urlset(small_site: SiteServer, tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "project", CLI_FORMAT + f"SITEMAPGEN_URI = {str(tmp_path / 'out')!r}\n"
    )
    result = crawl_site(
        project,
        small_site,
        "-O",
        "sitemap.xml:sitemap",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert log_messages(result.stderr, "ERROR") == []
    assert log_messages(result.stderr, "WARNING") == []
    assert_urlset_of((project / "sitemap.xml").read_bytes(), small_site_urls(small_site))
    # The add-on's own output is written as always.
    assert (tmp_path / "out" / small_site.origin.name / "sitemap.xml").is_file()


def test_dash_O_sitemap_needs_the_format_in_the_project(
    small_site: SiteServer, tmp_path: Path
) -> None:
    """Why the README asks for CLI_FORMAT: Scrapy refuses the -O format before it loads
    add-ons, so the add-on's FEED_EXPORTERS entry comes too late for the command line."""
    project = write_project(tmp_path / "project")
    result = crawl_site(
        project,
        small_site,
        "-O",
        "sitemap.xml:sitemap",
    )
    assert result.returncode == 2
    assert "Unrecognized output format 'xml:sitemap'" in result.stderr


# --- FEEDS, through the add-on alone ---------------------------------------------------------


@pytest.mark.parametrize("name", ["sitemap.xml", "sitemap.xml.gz"])
@deferred_f_from_coro_f
async def test_sitemap_feed_holds_the_urlset(
    small_site: SiteServer, crawl, tmp_path: Path, caplog, name: str
) -> None:
    feed = tmp_path / "feeds" / name
    with caplog.at_level(logging.INFO):
        crawler = await crawl(
            {"FEEDS": {str(feed): {"format": "sitemap"}}}, start_url=small_site.url("/")
        )
    assert (feed.read_bytes()[:2] == b"\x1f\x8b") is name.endswith(".gz")
    assert_urlset_of(read_bytes(feed), small_site_urls(small_site))
    assert sorted(p.name for p in feed.parent.iterdir()) == [name]
    assert crawler.stats.get_value("item_scraped_count") == 3  # items reached the feed too
    assert (
        f"Sitemap: the feed {feed} holds the sitemap of {small_site.url('/')}, 3 URLs: its urlset"
        in our_records(caplog, logging.INFO)
    )


class SlowFeedStorage(BlockingFeedStorage):
    """``slow:///path``: a storage that uploads (copies its temporary file to ``path``)
    only after a while, as a remote one does, and replaces what is there."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        self.path = Path(urlparse(uri).path)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        time.sleep(0.5)
        file.seek(0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("wb") as target:
            shutil.copyfileobj(file, target)
        file.close()


@deferred_f_from_coro_f
async def test_sitemap_feed_is_written_after_a_slow_feed_storage_stored_it(
    small_site: SiteServer, crawl, tmp_path: Path
) -> None:
    """FeedExporter stores the feed's own (empty) file in its spider_closed handler, which
    runs beside the exporter's: the sitemap must go there after it, not before."""
    feed = tmp_path / "slow" / "sitemap.xml"
    crawler = await crawl(
        {
            "FEEDS": {f"slow://{feed}": {"format": "sitemap"}},
            "FEED_STORAGES": {"slow": SlowFeedStorage},
        },
        start_url=small_site.url("/"),
    )
    assert_urlset_of(feed.read_bytes(), small_site_urls(small_site))
    assert crawler.stats.get_value("feedexport/success_count/SlowFeedStorage") == 1
    assert crawler.stats.get_value("sitemapgen/delivery/stored/SlowFeedStorage") == 1


@deferred_f_from_coro_f
async def test_split_sitemap_feed_holds_the_index_and_its_files_beside(
    small_site: SiteServer, crawl, tmp_path: Path
) -> None:
    feed = tmp_path / "feeds" / "sitemap.xml"
    await crawl(
        {"FEEDS": {str(feed): {"format": "sitemap"}}, "SITEMAPGEN_MAX_URLS": 2},
        start_url=small_site.url("/"),
    )
    index = ElementTree.fromstring(assert_valid(feed))
    assert index.tag == f"{NS}sitemapindex"
    names = ["sitemap-1.xml.gz", "sitemap-2.xml.gz"]
    assert [e.text for e in index.iter(f"{NS}loc")] == [small_site.url(f"/{n}") for n in names]
    assert sorted(p.name for p in feed.parent.iterdir()) == sorted([*names, "sitemap.xml"])
    listed = [
        e.text
        for n in names
        for e in ElementTree.fromstring(assert_valid(feed.parent / n)).iter(f"{NS}loc")
    ]
    assert listed == small_site_urls(small_site)


@deferred_f_from_coro_f
async def test_sitemap_feed_of_two_origins_gets_one_error(
    site: Site, crawl, tmp_path: Path, caplog
) -> None:
    feed = tmp_path / "sitemap.xml"
    out = str(tmp_path / "out")
    with caplog.at_level(logging.INFO):
        await crawl({"FEEDS": {str(feed): {"format": "sitemap"}}}, start_url=site.a.url("/"))
    assert our_records(caplog, logging.ERROR) == [
        f"Sitemap: nothing was written to the sitemap feed {feed}: a sitemap file holds the "
        f"URLs of one origin, and this crawl has 2 origins with a sitemap; use SITEMAPGEN_URI "
        f"(a folder, now {out!r}), which gets one set per origin"
    ]
    assert feed.read_bytes() == b""  # what the feed stored: no item is written
    assert len(list((tmp_path / "out").glob("*/sitemap.xml"))) == 2


@deferred_f_from_coro_f
async def test_xml_feed_named_like_a_sitemap_is_warned_of(
    small_site: SiteServer, crawl, tmp_path: Path, caplog
) -> None:
    feed = tmp_path / "sitemap.xml"
    out = str(tmp_path / "out")
    with caplog.at_level(logging.INFO):
        await crawl({"FEEDS": {str(feed): {"format": "xml"}}}, start_url=small_site.url("/"))
    assert our_records(caplog, logging.WARNING) == [
        f"Sitemap: the feed {feed} is written in Scrapy's xml format, which holds the scraped "
        f"items (<items><item>...), not a sitemap; for a sitemap in that file use "
        f"-O {feed}:sitemap (FEEDS format 'sitemap'), or take the sitemaps from "
        f"SITEMAPGEN_URI={out!r}."
    ]
    assert ElementTree.fromstring(feed.read_bytes()).tag == "items"  # Scrapy's, untouched


# --- the add-on's FEED_EXPORTERS entry ---------------------------------------------------------


def test_addon_adds_the_feed_format_at_addon_priority() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    assert settings.getdict("FEED_EXPORTERS") == {"sitemap": SitemapItemExporter}
    assert settings.getpriority("FEED_EXPORTERS") == 15  # "addon": a project value wins


def test_addon_keeps_a_sitemap_format_the_user_named() -> None:
    settings = Settings({"FEED_EXPORTERS": {"sitemap": "my.Exporter", "csv2": "my.Csv"}})
    Addon().update_settings(settings)
    assert settings.getdict("FEED_EXPORTERS") == {"sitemap": "my.Exporter", "csv2": "my.Csv"}
