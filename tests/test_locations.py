"""Where things are, decided once: which feed storage a URI gets (``storage_for``, as
Scrapy's FeedExporter picks it) and where a crawl's store is (``store_location``, one
precedence for the crawl and both commands)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import pytest
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

from scrapy_sitemapgen.locations import (
    has_storage,
    jobdir_store,
    storage_for,
    store_location,
)

from .helpers import run_build

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

FILE = "scrapy.extensions.feedexport.FileFeedStorage"
S3 = "scrapy.extensions.feedexport.S3FeedStorage"


@pytest.mark.parametrize(
    ("uri", "storage", "handled"),
    [
        ("sitemaps", FILE, True),
        ("/var/www/sitemaps/%(host)s", FILE, True),
        ("file:///var/www/sitemaps", FILE, True),
        ("C:\\sitemaps", FILE, True),  # a Windows drive is no scheme
        ("s3://bucket/sitemaps", S3, True),
        ("S3://bucket/sitemaps", S3, True),  # schemes are case-insensitive, as in Scrapy
        ("mem://sitemaps", FILE, False),  # FeedExporter's fallback; start-up refuses it
    ],
)
def test_the_storage_of_a_uri_is_the_one_scrapy_picks(
    uri: str, storage: str, handled: bool
) -> None:
    settings = Settings()
    assert storage_for(uri, settings) == storage
    assert has_storage(uri, settings) is handled


def test_a_storage_set_in_feed_storages_is_taken_and_one_set_to_none_is_gone() -> None:
    settings = Settings({"FEED_STORAGES": {"mem": "myproject.MemStorage", "s3": None}})
    assert storage_for("mem://x", settings) == "myproject.MemStorage"
    assert has_storage("mem://x", settings)
    assert not has_storage("s3://bucket/x", settings)


@pytest.mark.parametrize(
    ("given", "named_by", "location"),
    [
        ({}, None, None),
        ({"jobdir_setting": "job"}, "JOBDIR='job'", str(jobdir_store("job"))),
        ({"store_setting": "s.db", "jobdir_setting": "job"}, "SITEMAPGEN_STORE='s.db'", "s.db"),
        (
            {"jobdir_option": "opt", "jobdir_setting": "job"},
            "--jobdir 'opt'",
            str(jobdir_store("opt")),
        ),
        # A store named outright wins over a job folder's, the option's included.
        ({"store_setting": "s.db", "jobdir_option": "opt"}, "SITEMAPGEN_STORE='s.db'", "s.db"),
        (
            {"store_option": "o.db", "store_setting": "s.db", "jobdir_option": "opt"},
            "--store 'o.db'",
            "o.db",
        ),
        ({"store_option": "", "store_setting": None, "jobdir_setting": ""}, None, None),
    ],
)
def test_one_precedence_for_the_store(
    given: dict[str, Any], named_by: str | None, location: str | None
) -> None:
    found = store_location(**given)
    if named_by is None:
        assert found is None
    else:
        assert found == (named_by, location)


def test_the_build_takes_the_projects_store_over_its_jobdir_option(tmp_path: Path) -> None:
    result = run_build(
        tmp_path,
        "--jobdir",
        str(tmp_path / "job"),
        "-s",
        f"SITEMAPGEN_STORE={tmp_path / 'kept.sqlite3'}",
    )
    assert result.returncode == 2
    assert f"no sitemap store at {tmp_path / 'kept.sqlite3'}" in result.stderr


def test_the_audit_names_its_store_by_its_options_not_by_sitemapgen_store(
    tmp_path: Path,
) -> None:
    from scrapy_sitemapgen.commands.audit import AuditCommand

    kept = tmp_path / "kept.sqlite3"
    kept.touch()
    command = AuditCommand()
    command.settings = Settings({"SITEMAPGEN_STORE": str(kept)})
    parser = argparse.ArgumentParser()
    command.add_options(parser)
    opts, args = parser.parse_known_args([str(tmp_path / "sitemap.xml")])
    (tmp_path / "sitemap.xml").touch()
    with pytest.raises(UsageError, match="name the crawl's store: --jobdir DIR or --store FILE"):
        command.run(args, opts)
    command.settings = Settings({"SITEMAPGEN_STORE": str(kept), "JOBDIR": str(tmp_path / "j")})
    with pytest.raises(UsageError, match="no such store file") as info:
        command.run(args, opts)
    assert str(jobdir_store(tmp_path / "j")) in str(info.value)
