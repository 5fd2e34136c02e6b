"""Safety of what is written: crawled host names never choose where a file lands, files
get the process umask, and a second crawl on a store in use fails fast."""

from __future__ import annotations

import logging
import os
import stat
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.publish.delivery import local_folder
from scrapy_sitemapgen.sitemaps.urls import UrlRejected, normalize_loc, origin_folder, origin_of
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

if TYPE_CHECKING:
    from pathlib import Path

HOSTILE_URLS = [
    "http://../x",
    "http://./x",
    "http://a/../../etc/x",
    "http://%2e%2e/x",
    "http://%2F%2Fetc/x",
    "http://a%2fb/x",
    "http://a\\b/x",
    "http://c:/x",
    "http://con/x",
    "http://nul.com./x",
    "http://" + "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 60 + "/x",
    "http://bücher.example/x",
    "http://[::1]:8080/x",
    "http://example.com./x",
    "http://EXAMPLE.com:0080/x",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
@pytest.mark.parametrize(
    "template",
    ["out", "out/%(host)s", "out/%(origin)s/sitemaps", "out/%(scheme)s-%(port)s/%(host)s"],
)
def test_a_crawled_host_never_leaves_the_output_folder(
    url: str, template: str, tmp_path: Path
) -> None:
    """The folder comes from the host: it must stay one path below the output, never
    climb out of it, name a device, or be absolute (an IDN host is punycode)."""
    try:
        origin = origin_of(normalize_loc(url))
    except UrlRejected:
        return  # refused as a loc: it never becomes a folder
    root = tmp_path / "out"
    folder = local_folder(str(tmp_path / origin_folder(template, origin)))
    assert folder.is_relative_to(root), folder
    relative = folder.relative_to(root).parts
    assert relative and all(part not in ("", ".", "..") for part in relative)
    assert all("/" not in part and "\\" not in part and "\0" not in part for part in relative)
    assert all(len(part.encode()) <= 255 for part in relative)
    assert all(part.isascii() for part in relative)
    if "%(host)s" not in template:  # the origin's folder name starts with its scheme
        assert all(
            part.split(".")[0].lower() not in {"con", "nul", "prn", "aux"} for part in relative
        )


@deferred_f_from_coro_f
async def test_files_get_the_process_umask(site, crawl, tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        await crawl(start_url=site.a.url("/"))
    finally:
        os.umask(previous)
    folder = tmp_path / "out" / site.a.origin.name
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path


@deferred_f_from_coro_f
async def test_a_second_crawl_on_a_store_in_use_fails_fast(
    site, crawl, tmp_path: Path, caplog
) -> None:
    jobdir = tmp_path / "job"
    running = SqliteFactStore(jobdir / "sitemapgen" / "store.sqlite3")  # the other crawl
    before = len(site.a.requested)
    try:
        with caplog.at_level(logging.ERROR), pytest.raises(ValueError) as info:
            await crawl({"JOBDIR": str(jobdir)}, start_url=site.a.url("/"))
    finally:
        running.close()
    # Refused when the crawler is built (crawl.startup), before any request.
    assert str(info.value).startswith(
        f"JOBDIR={str(jobdir)!r}: the sitemap store cannot be opened: "
    )
    assert f"is in use by process {os.getpid()}" in str(info.value)
    assert site.a.requested[before:] == []
    assert not (tmp_path / "out").exists()
