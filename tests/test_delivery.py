"""Delivery and incremental output: unchanged files keep their index lastmod and are not
delivered again (P10), the manifest, text sitemaps (P11), robots.txt merging (P15), feed
storages with one failing file, and FTP to a real server."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

import pytest
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import NS, assert_valid, read_bytes, read_urls

if TYPE_CHECKING:
    from collections.abc import Iterator

OLD = "2001-02-03T04:05:06+00:00"


def index_lastmods(folder: Path) -> dict[str, str]:
    root = ElementTree.fromstring(assert_valid(folder / "sitemap.xml"))
    return {
        e.findtext(f"{NS}loc").rsplit("/", 1)[1]: e.findtext(f"{NS}lastmod")
        for e in root.iter(f"{NS}sitemap")
    }


def age_state(state: Path) -> None:
    """Make every recorded publication look old, as if the previous run was in 2001."""
    db = sqlite3.connect(state)
    with db:
        db.execute("UPDATE files SET lastmod = ?", (OLD,))
    db.close()


@deferred_f_from_coro_f
async def test_unchanged_files_keep_lastmod_and_are_not_rewritten(
    site, crawl, tmp_path: Path, caplog
) -> None:
    out = tmp_path / "out"
    a = site.a.origin.name
    await crawl({"SITEMAPGEN_MAX_URLS": 4}, start_url=site.a.url("/"))
    first = {p.name: (p.stat().st_ino, p.read_bytes()) for p in (out / a).iterdir()}

    # Same site, same facts: every file keeps its bytes, its index lastmod (P10) and its
    # inode (no rename happened, nothing was delivered again).
    with caplog.at_level(logging.INFO):
        again = await crawl({"SITEMAPGEN_MAX_URLS": 4}, start_url=site.a.url("/"))
    # Nothing was written: every sitemap file (urlsets and the index) was kept.
    sitemap_files = sum(1 for name in first if name.startswith("sitemap"))
    assert sitemap_files >= 3
    assert again.stats.get_value(f"sitemapgen/files/written/{a}") == 0
    assert again.stats.get_value(f"sitemapgen/files/unchanged/{a}") == sitemap_files
    for name, (inode, data) in first.items():
        assert (out / a / name).stat().st_ino == inode, name
        assert (out / a / name).read_bytes() == data, name
    assert any(
        "(+0, -0 since the previous run)" in r.getMessage() and "changed: nothing" in r.getMessage()
        for r in caplog.records
    )

    # One page fewer, and the previous run made to look as if it was in 2001: the files
    # whose bytes did not change keep 2001; the others get this run's time.
    age_state(out / ".sitemapgen-state.sqlite3")
    caplog.clear()
    with caplog.at_level(logging.INFO):
        await crawl(
            {"SITEMAPGEN_MAX_URLS": 4, "SITEMAPGEN_DENY": [r"/page3$"]}, start_url=site.a.url("/")
        )
    lastmods = index_lastmods(out / a)
    # 9 URLs sorted: /, /caf%C3%A9, /long/..., /page1 | /page2, /page3, /q?.., /sp%20ace | /xhtml
    # Without /page3, 8 URLs: the first file is the same, the second changes, no third.
    assert sorted(lastmods) == ["sitemap-1.xml.gz", "sitemap-2.xml.gz"]
    assert lastmods["sitemap-1.xml.gz"] == OLD
    assert lastmods["sitemap-2.xml.gz"] != OLD
    assert not (out / a / "sitemap-3.xml.gz").exists()  # pruned: no index names it
    assert (out / a / "sitemap-1.xml.gz").stat().st_ino == first["sitemap-1.xml.gz"][0]
    assert (out / a / "sitemap-2.xml.gz").stat().st_ino != first["sitemap-2.xml.gz"][0]
    manifest = json.loads((out / a / "manifest.json").read_text())
    assert {f["name"]: f["lastmod"] for f in manifest["files"]}["sitemap-1.xml.gz"] == OLD
    assert any(
        "(+0, -1 since the previous run: denied 1)" in r.getMessage()
        and "changed: sitemap-2.xml.gz, manifest.json, sitemap.xml" in r.getMessage()
        for r in caplog.records
    )


@deferred_f_from_coro_f
async def test_manifest_lists_every_file_with_its_facts(site, crawl, tmp_path: Path) -> None:
    await crawl({"SITEMAPGEN_FORMATS": ["xml", "txt"]}, start_url=site.a.url("/"))
    folder = tmp_path / "out" / site.b.origin.name
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["origin"] == site.b.url("/")
    listed = {f["name"]: f for f in manifest["files"]}
    assert set(listed) == {"sitemap-1.xml.gz", "sitemap-1.txt.gz", "robots.txt", "sitemap.xml"}
    for name, facts in listed.items():
        data = read_bytes(folder / name)
        assert facts["bytes"] == len(data)
        assert facts["sha256"] == hashlib.sha256(data).hexdigest()
    assert listed["sitemap-1.xml.gz"]["entries"] == listed["sitemap-1.txt.gz"]["entries"] == 3
    assert listed["sitemap-1.xml.gz"]["kind"] == "urlset"
    assert listed["sitemap-1.txt.gz"]["kind"] == "text"


@deferred_f_from_coro_f
async def test_text_sitemaps_one_url_per_line_not_in_the_index(site, crawl, tmp_path: Path) -> None:
    """P11: UTF-8, one absolute URL per line, nothing else; split at the same limits."""
    await crawl(
        {"SITEMAPGEN_FORMATS": ["xml", "txt"], "SITEMAPGEN_MAX_URLS": 5}, start_url=site.a.url("/")
    )
    folder = tmp_path / "out" / site.a.origin.name
    lines = [
        gzip.decompress((folder / f"sitemap-{n}.txt.gz").read_bytes()).decode("utf-8").splitlines()
        for n in (1, 2)
    ]
    assert [len(part) for part in lines] == [5, 4]
    assert lines[0] + lines[1] == sorted(site.expected()[site.a.origin.name])
    assert all(name.endswith(".xml.gz") for name in index_lastmods(folder))


@deferred_f_from_coro_f
async def test_text_only(site, crawl, tmp_path: Path) -> None:
    await crawl(
        {"SITEMAPGEN_FORMATS": ["txt"], "SITEMAPGEN_GZIP": False}, start_url=site.a.url("/")
    )
    folder = tmp_path / "out" / site.b.origin.name
    assert sorted(p.name for p in folder.iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.txt",
    ]
    assert (folder / "sitemap-1.txt").read_text() == "".join(
        f"{loc}\n" for loc in sorted(site.expected()[site.b.origin.name])
    )
    assert (folder / "robots.txt").read_text() == f"Sitemap: {site.b.url('/sitemap-1.txt')}\n"


@deferred_f_from_coro_f
async def test_robots_txt_lines_are_merged_without_duplicates(site, crawl, tmp_path: Path) -> None:
    """P15: the existing robots.txt keeps its rules; a Sitemap: line already there (in any
    case) is not repeated."""
    existing = tmp_path / "robots.txt"
    existing.write_text(
        "User-agent: *\nDisallow: /private\n"
        f"sitemap: {site.a.url('/sitemap.xml')}"  # no final newline, lower-case field
    )
    await crawl({"SITEMAPGEN_ROBOTS_TXT": str(existing)}, start_url=site.a.url("/"))
    out = tmp_path / "out"
    assert (out / site.a.origin.name / "robots.txt").read_text() == existing.read_text()
    assert (out / site.b.origin.name / "robots.txt").read_text() == (
        existing.read_text() + f"\nSitemap: {site.b.url('/sitemap.xml')}\n"
    )
    assert existing.read_text().startswith("User-agent")  # the user's own file is not edited


class FlakyStorage(FileFeedStorage):
    """A real local storage whose upload of one file fails, like an upload that times out:
    the file never arrives."""

    fail_on = ""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        super().__init__("file" + uri.removeprefix("flaky"), feed_options=feed_options)

    def store(self, file: Any) -> None:
        file.close()
        if self.path.endswith(self.fail_on):
            Path(self.path).unlink()
            raise OSError(f"upload of {self.path} timed out")


@deferred_f_from_coro_f
async def test_failed_upload_counts_keeps_going_and_holds_back_the_index(
    site, crawl, tmp_path: Path, caplog
) -> None:
    remote = tmp_path / "remote"
    settings = {
        "FEED_STORAGES": {"flaky": FlakyStorage},
        "SITEMAPGEN_URI": f"flaky://{remote}/%(origin)s",
        "SITEMAPGEN_STATE": str(tmp_path / "state.sqlite3"),
        "SITEMAPGEN_MAX_URLS": 2,
    }
    a, b = remote / site.a.origin.name, remote / site.b.origin.name
    FlakyStorage.fail_on = f"{a.name}/sitemap-2.xml.gz"
    with caplog.at_level(logging.ERROR):
        crawler = await crawl(settings, start_url=site.a.url("/"))
    # Origin a: every file but the failed one and the index, which must not name it.
    assert sorted(p.name for p in a.iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap-3.xml.gz",
        "sitemap-4.xml.gz",
        "sitemap-5.xml.gz",
    ]
    # Origin b is complete, and its urlsets are what a local run writes.
    assert sorted(p.name for p in b.iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap-2.xml.gz",
        "sitemap.xml",
    ]
    assert_valid(b / "sitemap.xml")
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/delivery/failed/FlakyStorage"] == 1
    assert stats["sitemapgen/delivery/stored/FlakyStorage"] == 6 + 5
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("sitemap-2.xml.gz" in m and a.name in m for m in errors)
    assert any("not uploading" in m and "sitemap.xml" in m for m in errors)

    # The next run retries origin a in full (its state was not committed); b is unchanged.
    caplog.clear()
    crawler = await crawl(settings, start_url=site.a.url("/"))
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/delivery/failed/FlakyStorage"] == 1
    assert stats["sitemapgen/delivery/stored/FlakyStorage"] == 6  # a again; nothing of b


@deferred_f_from_coro_f
async def test_ftp_delivery_to_a_real_server(site, crawl, tmp_path: Path, ftp_server) -> None:
    base, home = ftp_server
    local = tmp_path / "local"
    await crawl({"SITEMAPGEN_URI": str(local)}, start_url=site.a.url("/"))
    crawler = await crawl(
        {
            "SITEMAPGEN_URI": f"{base}/sitemaps/%(origin)s",
            "SITEMAPGEN_STATE": str(tmp_path / "ftp-state.sqlite3"),
            "FEED_STORAGE_FTP_ACTIVE": False,
        },
        start_url=site.a.url("/"),
    )
    arrived = home / "sitemaps"
    for origin in (site.a.origin.name, site.b.origin.name):
        assert sorted(p.name for p in (arrived / origin).iterdir()) == [
            "manifest.json",
            "robots.txt",
            "sitemap-1.xml.gz",
            "sitemap.xml",
        ]
        # The bytes that arrived are the bytes a local run writes (gzip is deterministic).
        assert (arrived / origin / "sitemap-1.xml.gz").read_bytes() == (
            local / origin / "sitemap-1.xml.gz"
        ).read_bytes()
    assert read_urls(arrived) == read_urls(local)
    assert crawler.stats.get_value("sitemapgen/delivery/stored/FTPFeedStorage") == 8


@deferred_f_from_coro_f
async def test_sitemap_feed_on_ftp_is_written_after_the_feed_is_stored(
    small_site, crawl, ftp_server
) -> None:
    """FeedExporter uploads the sitemap feed's own (empty) file when it closes the feed,
    concurrently with the exporter's close: the sitemap goes up after it, not under it."""
    base, home = ftp_server
    crawler = await crawl(
        {"FEEDS": {f"{base}/feeds/sitemap.xml": {"format": "sitemap"}}},
        start_url=small_site.url("/"),
    )
    root = ElementTree.fromstring(assert_valid((home / "feeds" / "sitemap.xml").read_bytes()))
    assert root.tag == f"{NS}urlset"
    assert [e.text for e in root.iter(f"{NS}loc")] == [small_site.url(p) for p in ("/", "/a", "/b")]
    assert crawler.stats.get_value("feedexport/success_count/FTPFeedStorage") == 1
    assert crawler.stats.get_value("sitemapgen/delivery/stored/FTPFeedStorage") == 1


@pytest.fixture
def s3_server() -> Iterator[tuple[str, Any]]:
    """A real S3-compatible server (moto's) on a random loopback port, and a client."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://{}:{}".format(*server.get_host_and_port())
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket="sitemaps")
    yield endpoint, client
    server.stop()


@deferred_f_from_coro_f
async def test_s3_delivery_to_an_s3_compatible_server(
    site, crawl, tmp_path: Path, s3_server
) -> None:
    endpoint, client = s3_server
    local = tmp_path / "local"
    await crawl({"SITEMAPGEN_URI": str(local)}, start_url=site.a.url("/"))
    settings = {
        "SITEMAPGEN_URI": "s3://sitemaps/published/%(origin)s",
        "SITEMAPGEN_STATE": str(tmp_path / "s3-state.sqlite3"),
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_REGION_NAME": "us-east-1",
    }
    crawler = await crawl(settings, start_url=site.a.url("/"))
    keys = sorted(o["Key"] for o in client.list_objects_v2(Bucket="sitemaps")["Contents"])
    names = ["manifest.json", "robots.txt", "sitemap-1.xml.gz", "sitemap.xml"]
    assert keys == sorted(
        f"published/{origin}/{name}"
        for origin in (site.a.origin.name, site.b.origin.name)
        for name in names
    )
    for key in keys:
        origin, name = key.split("/")[1:]
        body = client.get_object(Bucket="sitemaps", Key=key)["Body"].read()
        if name.endswith(".gz"):  # the bytes that arrived are what a local run writes
            assert body == (local / origin / name).read_bytes()
        if name.startswith("sitemap"):
            assert_valid(gzip.decompress(body) if name.endswith(".gz") else body)
    assert crawler.stats.get_value("sitemapgen/delivery/stored/S3FeedStorage") == 8
    # Nothing changed: the second run uploads nothing at all.
    crawler = await crawl(settings, start_url=site.a.url("/"))
    assert crawler.stats.get_value("sitemapgen/delivery/stored/S3FeedStorage") is None
    assert crawler.stats.get_value("sitemapgen/delivery/failed/S3FeedStorage") is None
