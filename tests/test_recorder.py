"""SITEMAPGEN_RECORDER = "process": the judging and the store in a child process.

The hostile site's whole suite runs in both modes (test_hostile.py's fixture); here, the
two-origin site's crawl gives the same files and stats either way, item facts included,
the settings it cannot go with are refused up front, and a recorder that dies mid-crawl
is reported without ending the crawl or writing anything invalid.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_sitemapgen import SitemapExporter
from scrapy_sitemapgen.settings import Config

from .conftest import SiteSpider
from .output import lastmods, read_urls


def _published(out: Path) -> dict[str, bytes]:
    """Every published file's bytes by path: gzip opened (its header holds a time), and
    an index's lastmods of its sitemaps (the time each was written) taken out."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file() and not path.name.startswith(".") and path.name != "manifest.json":
            data = path.read_bytes()
            data = gzip.decompress(data) if path.suffix == ".gz" else data
            found[str(path.relative_to(out))] = re.sub(rb"<lastmod>[^<]*</lastmod></sitemap>", b"</sitemap>", data)
    return found


def _ours(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if k.startswith("sitemapgen/")}


@deferred_f_from_coro_f
async def test_process_writes_what_inline_writes(site, crawl, tmp_path: Path) -> None:
    inline = await crawl({"SITEMAPGEN_URI": str(tmp_path / "inline")}, start_url=site.a.url("/"))
    process = await crawl(
        {"SITEMAPGEN_URI": str(tmp_path / "process"), "SITEMAPGEN_RECORDER": "process"},
        start_url=site.a.url("/"),
    )
    assert process.stats.get_value("finish_reason") == "finished"
    # The expected URLs and lastmods, written by hand for the site (conftest.build_site).
    got = lastmods(tmp_path / "process")
    for name, urls in site.expected().items():
        assert got[name] == urls, sorted(set(got[name]) ^ set(urls))
    # The /page2 item's facts, sent after its page's evidence, merged as inline.
    urls = read_urls(tmp_path / "process")[site.a.origin.name]
    assert urls[site.a.url("/page2")] == {"lastmod": None, "changefreq": "daily", "priority": "0.8"}
    assert _published(tmp_path / "process") == _published(tmp_path / "inline")
    assert _ours(process.stats.get_stats()) == _ours(inline.stats.get_stats())
    assert process.stats.get_value("sitemapgen/pages/recorded") == 12
    assert process.stats.get_value("sitemapgen/items/recorded") == 1


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ({"SITEMAPGEN_STORE": "redis://127.0.0.1:6379/0"}, "SQLite store only"),
        ({"JOBDIR": "/tmp/job"}, "SITEMAPGEN_RESUME_REQUESTS = False"),
        ({"SITEMAPGEN_STORE": "/tmp/kept.sqlite3"}, "SITEMAPGEN_RESUME_REQUESTS = False"),
        ({"SITEMAPGEN_RECORDER": "thread"}, "SITEMAPGEN_RECORDER"),
    ],
)
def test_refused_with_what_it_cannot_serve(settings: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match="SITEMAPGEN_RECORDER") as info:
        Config.from_settings(
            Settings({"SITEMAPGEN_URI": "out", "SITEMAPGEN_RECORDER": "process", **settings})
        )
    assert fragment in str(info.value)


def test_allowed_without_request_tracking() -> None:
    config = Config.from_settings(Settings({
        "SITEMAPGEN_URI": "out", "SITEMAPGEN_RECORDER": "process",
        "JOBDIR": "/tmp/job", "SITEMAPGEN_RESUME_REQUESTS": False,
    }))
    assert config.recorder == "process"
    assert Config.from_settings(Settings({"SITEMAPGEN_URI": "out"})).recorder == "inline"


class KillingSpider(SiteSpider):
    """Kills the recorder process with SIGKILL when the first page arrives."""

    killed: list[int]

    def parse(self, response: scrapy.http.Response) -> Any:
        exporter = self.crawler.get_extension(SitemapExporter)
        assert exporter is not None
        if not self.killed and exporter.recorder is not None:
            self.killed.append(exporter.recorder.pid)
            os.kill(exporter.recorder.pid, signal.SIGKILL)
        yield from super().parse(response)


class KilledAtStartSpider(SiteSpider):
    """Kills the recorder process before the first request, then waits for the exporter's
    periodic check (SITEMAPGEN_COMMIT_SECONDS) to see it gone."""

    killed: list[int]

    async def start(self) -> Any:
        exporter = self.crawler.get_extension(SitemapExporter)
        assert exporter is not None and exporter.recorder is not None
        self.killed.append(exporter.recorder.pid)
        os.kill(exporter.recorder.pid, signal.SIGKILL)
        await maybe_deferred_to_future(deferLater(reactor, 0.5, lambda: None))
        async for request in super().start():
            yield request


async def crawl_and_kill(
    crawl: Any, site: Any, caplog: pytest.LogCaptureFixture, spidercls: type, **settings: Any
) -> dict[str, Any]:
    """The crawl with a recorder process that the spider kills: it finishes all the same,
    without an exception, the death counted; its stats."""
    killed: list[int] = []
    with caplog.at_level(logging.ERROR, logger="scrapy_sitemapgen"):
        crawler = await crawl(
            {"SITEMAPGEN_RECORDER": "process", **settings}, spidercls=spidercls,
            start_url=site.a.url("/"), killed=killed,
        )
    stats: dict[str, Any] = crawler.stats.get_stats()
    assert killed
    assert stats["finish_reason"] == "finished"
    assert not [key for key in stats if key.startswith("spider_exceptions")]
    assert stats["sitemapgen/recorder/failed"] == 1
    return stats


@deferred_f_from_coro_f
async def test_the_crawl_records_itself_once_the_recorder_is_gone(
    site, crawl, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stats = await crawl_and_kill(crawl, site, caplog, KilledAtStartSpider, SITEMAPGEN_COMMIT_SECONDS=0.05)
    assert [r for r in caplog.records if "recording goes on in the crawl's process" in r.getMessage()]
    # It died before any page: every page was recorded by the crawl's process instead.
    got = lastmods(tmp_path / "out")
    for name, urls in site.expected().items():
        assert got[name] == urls, sorted(set(got[name]) ^ set(urls))
    assert stats["sitemapgen/pages/recorded"] == 12


@deferred_f_from_coro_f
async def test_a_dead_recorder_is_reported_and_the_crawl_goes_on(
    site, crawl, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await crawl_and_kill(crawl, site, caplog, KillingSpider)
    assert [r for r in caplog.records if "recorder process ended" in r.getMessage()]
    # Whatever was published is valid (read_urls validates every file against the schemas)
    # and is a part of the site, never a URL it does not have.
    out = tmp_path / "out"
    if out.exists():
        for name, urls in read_urls(out).items():
            assert set(urls) <= set(site.expected()[name])
