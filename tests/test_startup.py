"""Failing at the start: a bad setting, or an output that cannot take the files, stops the
crawl before its first request with one ERROR line, and ``scrapy crawl`` exits with 1;
a ``SITEMAPGEN_*`` name that is no setting is warned of once."""

from __future__ import annotations

import importlib.util
import logging
import socket
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_sitemapgen import SitemapExporter

from .helpers import crawl_site, log_messages, write_project

if TYPE_CHECKING:
    from pathlib import Path

    from .helpers import SiteServer

NOT_STARTED = "Sitemap: the crawl was not started: "


def _google_cloud_storage() -> bool:
    try:
        return importlib.util.find_spec("google.cloud.storage") is not None
    except ImportError:
        return False


def assert_refused_in_one_line(stderr: str, reason: str) -> None:
    assert log_messages(stderr, "ERROR") == [NOT_STARTED + reason], stderr[-3000:]
    assert "[scrapy_sitemapgen.crawl.startup] ERROR: " in stderr
    assert "Traceback" not in stderr
    assert "Task exception was never retrieved" not in stderr


def our_records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == level and r.name.startswith("scrapy_sitemapgen")
    ]


# --- scrapy crawl: the exit status and the one line ------------------------------------------


def test_bad_setting_exits_1_with_one_line_and_no_request(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    before = len(small_site.requested)
    result = crawl_site(
        project,
        small_site,
        "-s",
        "SITEMAPGEN_MAX_URLS=0",
    )
    assert result.returncode == 1
    assert_refused_in_one_line(
        result.stderr,
        "SITEMAPGEN_MAX_URLS='0' is invalid: it must be an integer from 1 to 50,000 (P7).",
    )
    assert small_site.requested[before:] == []


def test_unwritable_output_exits_1_before_the_first_request(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the output folder's parent should be")
    uri = str(blocker / "sitemaps")
    before = len(small_site.requested)
    result = crawl_site(
        project,
        small_site,
        "-s",
        f"SITEMAPGEN_URI={uri}",
    )
    assert result.returncode == 1
    assert_refused_in_one_line(
        result.stderr,
        f"SITEMAPGEN_URI={uri!r} cannot be written: {blocker} is a file, not a folder.",
    )
    assert small_site.requested[before:] == []


# --- the output check, in process ------------------------------------------------------------


def test_local_check_removes_what_it_made(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    for uri in (tmp_path / "new" / "deeper" / "out", kept):
        crawler = get_crawler(
            settings_dict={"EXTENSIONS": {SitemapExporter: 500}, "SITEMAPGEN_URI": str(uri)}
        )
        assert crawler.get_extension(SitemapExporter) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("tail", ["%(origin)s", "site-%(host)s/sitemaps"])
@deferred_f_from_coro_f
async def test_placeholder_path_checks_the_part_before_it(
    small_site: SiteServer, crawl, tmp_path: Path, caplog, tail: str
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    uri = f"{blocker}/{tail}"
    reason = f"SITEMAPGEN_URI={uri!r} cannot be written: {blocker} is a file, not a folder."
    before = len(small_site.requested)
    with caplog.at_level(logging.INFO), pytest.raises(ValueError) as info:
        await crawl({"SITEMAPGEN_URI": uri}, start_url=small_site.url("/"))
    assert str(info.value) == reason
    assert our_records(caplog, logging.ERROR) == [NOT_STARTED + reason]
    assert small_site.requested[before:] == []


@pytest.mark.parametrize(
    ("uri", "settings", "problem"),
    [
        (
            "ftp:///sitemaps",
            {},
            "FTPFeedStorage refused it (ValueError: Got a storage URI without a hostname: "
            "ftp:///sitemaps/https_www.example.com_443/sitemap.xml)",
        ),
        ("s3:///sitemaps", {}, "S3FeedStorage needs a host in the URI (the bucket or server)"),
        (
            "sftp://files.example.com/sitemaps",
            {"FEED_STORAGES": {"sftp": "nowhere.SftpFeedStorage"}},
            "its feed storage cannot be loaded (ModuleNotFoundError: No module named 'nowhere')",
        ),
        pytest.param(
            "gs://bucket/sitemaps",
            {},
            "its feed storage needs the google-cloud-storage library, which is not installed",
            marks=pytest.mark.skipif(_google_cloud_storage(), reason="google-cloud-storage"),
        ),
    ],
)
@deferred_f_from_coro_f
async def test_remote_output_is_checked_at_start(
    small_site: SiteServer, crawl, caplog, uri: str, settings: dict[str, object], problem: str
) -> None:
    reason = f"SITEMAPGEN_URI={uri!r} cannot be written: {problem}."
    before = len(small_site.requested)
    with caplog.at_level(logging.INFO), pytest.raises(ValueError) as info:
        await crawl({"SITEMAPGEN_URI": uri, **settings}, start_url=small_site.url("/"))
    assert str(info.value) == reason
    assert our_records(caplog, logging.ERROR) == [NOT_STARTED + reason]
    assert small_site.requested[before:] == []


@deferred_f_from_coro_f
async def test_bad_enabled_flag_is_refused_by_the_addon_in_one_line(
    small_site: SiteServer, crawl, caplog
) -> None:
    reason = "SITEMAPGEN_ENABLED='maybe' is invalid: use True or False (or 1/0, 'true'/'false')."
    with caplog.at_level(logging.INFO), pytest.raises(ValueError) as info:
        await crawl({"SITEMAPGEN_ENABLED": "maybe"}, start_url=small_site.url("/"))
    assert str(info.value) == reason
    assert our_records(caplog, logging.ERROR) == [NOT_STARTED + reason]


# --- unknown SITEMAPGEN_* names ----------------------------------------------------------------


@deferred_f_from_coro_f
async def test_unknown_names_are_warned_of_once_each(small_site: SiteServer, crawl, caplog) -> None:
    settings = {"SITEMAPGEN_MAXURLS": 3, "SITEMAPGEN_GZIP_LEVL": 9, "SITEMAPGEN_COLOUR": "red"}
    with caplog.at_level(logging.INFO):
        crawler = await crawl(settings, start_url=small_site.url("/"))
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert our_records(caplog, logging.WARNING) == [
        "Sitemap: SITEMAPGEN_COLOUR is not a scrapy-sitemapgen setting, so it has no effect "
        "(the README lists the settings).",
        "Sitemap: SITEMAPGEN_GZIP_LEVL is not a scrapy-sitemapgen setting; "
        "did you mean SITEMAPGEN_GZIP_LEVEL?",
        "Sitemap: SITEMAPGEN_MAXURLS is not a scrapy-sitemapgen setting; "
        "did you mean SITEMAPGEN_MAX_URLS?",
    ]


def test_known_names_give_no_warning() -> None:
    from scrapy.settings import Settings

    from scrapy_sitemapgen.settings import DEFAULTS, Config

    assert Config.from_settings(Settings(dict(DEFAULTS))).warnings == ()


# --- the store: opened once before the crawl starts ------------------------------------------


def test_store_that_cannot_be_opened_exits_1_before_the_first_request(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the store's folder should be")
    store = str(blocker / "store.sqlite3")
    before = len(small_site.requested)
    result = crawl_site(project, small_site, "-s", f"SITEMAPGEN_STORE={store}")
    assert result.returncode == 1
    assert_refused_in_one_line(
        result.stderr,
        f"SITEMAPGEN_STORE={store!r}: the sitemap store cannot be opened: file exists: {blocker}",
    )
    assert small_site.requested[before:] == []


def test_store_of_another_kind_and_an_unreachable_redis_refuse_the_start(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "project")
    not_a_store = tmp_path / "notes.sqlite3"
    not_a_store.write_bytes(b"these are notes, not a SQLite file\n" * 100)
    result = crawl_site(project, small_site, "-s", f"SITEMAPGEN_STORE={not_a_store}")
    assert result.returncode == 1
    [line] = log_messages(result.stderr, "ERROR")
    assert line.startswith(
        f"{NOT_STARTED}SITEMAPGEN_STORE={str(not_a_store)!r}: the sitemap store cannot be opened: "
    )
    assert "not a database" in line
    assert not_a_store.read_bytes().startswith(b"these are notes")

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    redis_url = f"redis://127.0.0.1:{port}/0"
    before = len(small_site.requested)
    result = crawl_site(project, small_site, "-s", f"SITEMAPGEN_STORE={redis_url}")
    assert result.returncode == 1
    [line] = log_messages(result.stderr, "ERROR")
    assert line.startswith(
        f"{NOT_STARTED}SITEMAPGEN_STORE={redis_url!r}: the sitemap store cannot be opened: "
        f"cannot reach the Redis store {redis_url}: "
    )
    assert "Traceback" not in result.stderr
    assert small_site.requested[before:] == []


def test_store_in_use_by_another_crawl_refuses_the_start(
    small_site: SiteServer, tmp_path: Path
) -> None:
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    project = write_project(tmp_path / "project")
    jobdir = tmp_path / "job"
    held = SqliteFactStore(jobdir / "sitemapgen" / "store.sqlite3")
    try:
        result = crawl_site(project, small_site, "-s", f"JOBDIR={jobdir}")
    finally:
        held.close()
    assert result.returncode == 1
    [line] = log_messages(result.stderr, "ERROR")
    assert line.startswith(
        f"{NOT_STARTED}JOBDIR={str(jobdir)!r}: the sitemap store cannot be opened: "
    )
    assert "is in use by process" in line
    # Once the other crawl is gone, the same command crawls.
    result = crawl_site(project, small_site, "-s", f"JOBDIR={jobdir}")
    assert result.returncode == 0, result.stderr[-2000:]
