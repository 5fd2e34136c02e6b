"""The fixtures: the two-origin test site on 127.0.0.1 (random ports) and a real crawl.
What they are built from is in helpers.py."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_sitemapgen import clock as package_clock

from .helpers import (
    BASE_SETTINGS,
    IndexNowServer,
    RedisServer,
    Site,
    SiteServer,
    SiteSpider,
    build_site,
    build_small_site,
)

CrawlFn = Callable[..., Any]


@pytest.fixture(autouse=True, scope="session")
def quick_idle_look() -> Iterator[None]:
    """Scrapy's engine looks at an idle spider after each answer and, besides, every 5 s
    (its heartbeat): a spider that the audit keeps open (``DontCloseSpider``) while it
    fetches through ``engine.download_async`` closes at the next look, up to 5 s after
    the audit is done. The in-process crawls look every 0.05 s; only the wait changes."""
    engine = ExecutionEngine
    interval = engine._SLOT_HEARTBEAT_INTERVAL
    engine._SLOT_HEARTBEAT_INTERVAL = 0.05
    yield
    engine._SLOT_HEARTBEAT_INTERVAL = interval


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    a, b = SiteServer(), SiteServer()
    yield build_site(a, b)
    a.close()
    b.close()


@pytest.fixture(scope="session")
def small_site() -> Iterator[SiteServer]:
    """One origin, three pages (/, /a, /b): what a single sitemap file can hold."""
    server = build_small_site(SiteServer())
    yield server
    server.close()


@pytest.fixture
def crawl(tmp_path: Path) -> CrawlFn:
    """``await crawl(settings, spidercls=SiteSpider, **spider_kwargs)`` -> the finished Crawler.

    Output goes to ``tmp_path / "out"`` unless the settings say otherwise."""

    async def run(
        settings: dict[str, Any] | None = None, spidercls: type = SiteSpider, **kwargs: Any
    ) -> Crawler:
        merged = {**BASE_SETTINGS, "SITEMAPGEN_URI": str(tmp_path / "out"), **(settings or {})}
        runner = CrawlerRunner(merged)
        crawler = runner.create_crawler(spidercls)
        await maybe_deferred_to_future(runner.crawl(crawler, **kwargs))
        return crawler

    return run


class Clock:
    """The package's clock (:mod:`scrapy_sitemapgen.clock`) stopped at :attr:`now`, in this
    process and in the child processes a test starts (``SITEMAPGEN_TEST_NOW``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
        self._monkeypatch = monkeypatch
        self.now = moment
        self.set(moment)

    def set(self, moment: datetime) -> None:
        """Stop the clock at ``moment`` (aware)."""
        self.now = moment
        package_clock.stop_at(moment)
        self._monkeypatch.setenv(package_clock.TEST_NOW_ENV, moment.isoformat())

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` on, as a later run would find it; the new time."""
        self.set(self.now + timedelta(seconds=seconds))
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """The package's clock stopped at the current second, for the test to move (``advance``)
    instead of sleeping for a second to pass; running in real time again after it."""
    stopped = Clock(monkeypatch, datetime.now(timezone.utc).replace(microsecond=0))
    try:
        yield stopped
    finally:
        package_clock.stop_at(None)


@pytest.fixture
def endpoint() -> Iterator[IndexNowServer]:
    """A local IndexNow endpoint that records what it received."""
    server = IndexNowServer()
    yield server
    server.close()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def ftp_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with warnings.catch_warnings():  # pyftpdlib still imports asyncore on Python < 3.12
        warnings.simplefilter("ignore", DeprecationWarning)
        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import FTPHandler
        from pyftpdlib.servers import ThreadedFTPServer

    home = tmp_path / "ftp-home"
    home.mkdir()
    authorizer = DummyAuthorizer()
    authorizer.add_user("crawler", "s3cret", str(home), perm="elradfmwMT")
    handler = type("Handler", (FTPHandler,), {"authorizer": authorizer, "banner": "test"})
    server = ThreadedFTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.1}, daemon=True)
    thread.start()
    port = server.address[1]
    yield f"ftp://crawler:s3cret@127.0.0.1:{port}", home
    server.close_all()
    thread.join(timeout=5)


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """The Chromium that the browser tests drive: ``SITEMAPGEN_TEST_CHROMIUM`` (``make
    browser`` sets it), else the wrapper ``make browser`` leaves in the venv, else
    ``chromium`` on PATH. None of them is a failure, not a skip: the tests are part of
    the suite."""
    candidates = [
        os.environ.get("SITEMAPGEN_TEST_CHROMIUM"),
        str(Path(sys.prefix, "browser", "chromium")),
        shutil.which("chromium"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no Chromium for the browser tests: run `make browser` (see the Makefile)")
