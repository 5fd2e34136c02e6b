"""Atomic output: the set is staged beside the target and moved in only when complete."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import files, read_urls

if TYPE_CHECKING:
    from pathlib import Path


def snapshot(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in files(out)}


@deferred_f_from_coro_f
async def test_failed_write_leaves_previous_set_and_other_outputs(
    site, crawl, tmp_path: Path, caplog
) -> None:
    out = tmp_path / "out"
    await crawl(start_url=site.a.url("/"))
    # Block one destination of origin b: a folder where its index must go.
    a, b = site.a.origin.name, site.b.origin.name
    (out / b / "sitemap.xml").unlink()
    (out / b / "sitemap.xml").mkdir()
    (out / b / "sitemap.xml" / "keep").write_text("x")
    before = snapshot(out)
    feed = tmp_path / "items.jsonl"
    with caplog.at_level(logging.ERROR):
        crawler = await crawl(
            {"SITEMAPGEN_MAX_URLS": 2, "FEEDS": {str(feed): {"format": "jsonlines"}}},
            start_url=site.a.url("/"),
        )
    assert snapshot(out) == before  # neither origin changed: nothing was moved
    errors = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith("scrapy_sitemapgen")
    ]
    assert len(errors) == 1
    assert str(out) in errors[0].getMessage()
    message = errors[0].getMessage()
    # The blocked destination is named, with the cause in words, on the one line.
    assert f"a folder stands where a sitemap goes: {out / b / 'sitemap.xml'};" in message
    assert errors[0].exc_info is None  # the traceback is at DEBUG
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/output/failed"] == 1
    assert "sitemapgen/urls/written" not in stats
    assert stats["finish_reason"] == "finished"
    assert len(feed.read_text().splitlines()) == stats["item_scraped_count"] == 17  # feed intact
    assert json.loads(feed.read_text().splitlines()[0])
    assert not list(tmp_path.rglob("*.tmp-*"))  # the staging folders are cleaned up
    assert a in {p.name for p in out.iterdir()}


@deferred_f_from_coro_f
async def test_rewrite_replaces_and_prunes_own_files_only(site, crawl, tmp_path: Path) -> None:
    out = tmp_path / "out"
    await crawl({"SITEMAPGEN_MAX_URLS": 2}, start_url=site.a.url("/"))
    a = site.a.origin.name
    assert (out / a / "sitemap-5.xml.gz").is_file()  # 9 URLs / 2 per file
    (out / a / "notes.txt").write_text("mine")
    await crawl(start_url=site.a.url("/"))
    assert sorted(p.name for p in (out / a).iterdir()) == [
        "manifest.json",
        "notes.txt",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap.xml",
    ]
    assert read_urls(out)[a].keys() == site.expected()[a].keys()


@deferred_f_from_coro_f
async def test_a_planted_symlink_is_never_followed(site, crawl, tmp_path: Path, caplog) -> None:
    """An origin folder replaced by a link to elsewhere: nothing is written through it."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / site.a.origin.name).symlink_to(elsewhere, target_is_directory=True)
    with caplog.at_level(logging.ERROR):
        crawler = await crawl(start_url=site.a.url("/"))
    assert list(elsewhere.iterdir()) == []
    assert crawler.stats.get_value("sitemapgen/output/failed") == 1
    assert any(
        "a symbolic link stands where an origin folder goes" in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.ERROR
    )


@deferred_f_from_coro_f
async def test_staging_debris_of_a_killed_write_is_removed(site, crawl, tmp_path: Path) -> None:
    out = tmp_path / "out"
    debris = out / f".{site.a.origin.name}.tmp-killed"
    debris.mkdir(parents=True)
    (debris / "sitemap-1.xml.gz").write_bytes(b"half a file")
    await crawl(start_url=site.a.url("/"))
    assert not debris.exists()
    assert not list(out.rglob("*.tmp-*"))
