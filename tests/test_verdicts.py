"""Verdicts and findings (issue 22), without a crawl: the pure comparison of a live
sitemap's entries with the crawl's verdicts, and the store's verdict table."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

import pytest
from scrapy.settings import Settings

from scrapy_sitemapgen.audit.rules import audit_findings, counts, lastmod_mismatch
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.sitemaps.verdicts import (
    FINDINGS,
    Finding,
    Listed,
    Verdict,
)
from scrapy_sitemapgen.store.base import StoreError
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

if TYPE_CHECKING:
    from pathlib import Path

A = "https://a.example/"


@pytest.mark.parametrize(
    ("listed", "crawled", "mismatch"),
    [
        ("2015-10-21", "2015-10-21T07:28:00+00:00", False),  # P4: a date is the whole day
        ("2015-10-21", "2015-10-22T00:00:00+00:00", True),
        ("2015-10-21T09:28:00+02:00", "2015-10-21T07:28:00+00:00", False),  # the same instant
        ("2015-10-21T07:28:01+00:00", "2015-10-21T07:28:00+00:00", True),
        ("2015-10-21T07:28:00.5+00:00", "2015-10-21T07:28:00+00:00", False),  # to the second
        ("2015-10-21T23:30:00-01:00", "2015-10-22", False),  # 00:30 UTC on the 22nd
        ("yesterday", "2015-10-21", True),  # no W3C Datetime: never the crawl's
        ("2015-10-21", "not a date", False),  # nothing to compare with
    ],
)
def test_lastmod_mismatch(listed: str, crawled: str, mismatch: bool) -> None:
    assert lastmod_mismatch(listed, crawled) is mismatch


def _listed(*urls: str, key: str | None = None) -> list[Listed]:
    return [Listed(url, key or url, None, A + "sitemap.xml") for url in urls]


def test_findings_by_verdict() -> None:
    verdicts = {
        A + "ok": Verdict(A + "ok", "listed", 200),
        A + "301": Verdict(A + "301", "excluded/status/301", 301, A + "there"),
        A + "503": Verdict(A + "503", "excluded/status/503", 503),
        A + "refresh": Verdict(A + "refresh", "excluded/meta_refresh", 200, A + "ok"),
        A + "down": Verdict(
            A + "down", "fetch_failed", None, "Connection refused", source="sitemap"
        ),
        A + "denied": Verdict(A + "denied", "excluded/denied", 200),
        A + "private": Verdict(A + "private", "excluded/dont_sitemap", 200),
    }
    found = sorted(audit_findings(_listed(*verdicts, A + "never"), verdicts.get, ()))
    assert found == [
        Finding(A + "301", "listed_redirected", A + "there"),
        Finding(A + "503", "listed_not_found", "HTTP 503"),
        Finding(A + "down", "listed_not_found", "Connection refused"),
        Finding(A + "refresh", "listed_redirected", A + "ok"),
    ]  # excluded by the user's own rules (deny, dont_sitemap): not the sitemap's fault


def test_duplicates_keep_the_url_written_as_the_key() -> None:
    listed = [
        Listed(A + "p?sid=1", A + "p", None, "s1"),
        Listed(A + "p", A + "p", None, "s1"),
        Listed(A + "p", A + "p", None, "s2"),  # the same URL again, in another file
        Listed(A + "q?sid=1", A + "q", None, "s2"),
        Listed(A + "q?sid=2", A + "q", None, "s2"),
    ]
    found = sorted(audit_findings(listed, lambda key: None, ()))
    assert found == [
        Finding(A + "p", "listed_duplicate", A + "p"),
        Finding(A + "p?sid=1", "listed_duplicate", A + "p"),
        Finding(A + "q?sid=2", "listed_duplicate", A + "q?sid=1"),  # none is the key: first
    ]


def test_missing_from_sitemap_is_the_crawl_own_indexable_pages() -> None:
    crawled = [
        Verdict(A + "in", "listed", 200),
        Verdict(A + "out", "listed", 200),
        Verdict(A + "orphan", "listed", 200, source="sitemap"),  # only the sitemap had it
        Verdict(A + "noindex", "excluded/noindex", 200),
    ]
    found = list(audit_findings(_listed(A + "in"), {v.url: v for v in crawled}.get, crawled))
    assert found == [Finding(A + "out", "missing_from_sitemap")]
    assert counts(found) == {name: int(name == "missing_from_sitemap") for name in FINDINGS}


def test_verdicts_keep_one_row_per_url(tmp_path: Path) -> None:
    """Bounded on disk like the facts: a URL judged again replaces its verdict."""
    store = SqliteFactStore(tmp_path / "store.sqlite3")
    log = store.verdicts()
    for status in range(200, 700):
        log.put(Verdict(A + "p", f"excluded/status/{status}", status))
    log.put(Verdict(A + "q", "listed", 200, source="crawl"))
    # The audit's later fetch of a URL the crawl reached does not make it an orphan.
    log.put(Verdict(A + "q", "listed", 200, lastmod="2020-01-01", source="sitemap"))
    log.put(Verdict(A + "r", "blocked_by_robots", detail="x" * 5000, source="sitemap"))
    store.close()
    rows = sqlite3.connect(tmp_path / "store.sqlite3").execute(
        "SELECT url, verdict, status, source, length(detail) FROM verdicts ORDER BY url"
    )
    assert list(rows) == [
        (A + "p", "excluded/status/699", 699, "crawl", None),
        (A + "q", "listed", 200, "crawl", None),
        (A + "r", "blocked_by_robots", None, "sitemap", 2048),
    ]
    store = SqliteFactStore(tmp_path / "store.sqlite3")
    log = store.verdicts()
    assert log.origins() == [Origin("https", "a.example", 443)]
    assert log.get(A + "q") == Verdict(A + "q", "listed", 200, None, "2020-01-01", "crawl", 0)
    log.add_listed(Listed(A + "q", A + "q", None, "s"))
    log.add_listed(Listed(A + "new?sid=1", A + "new", None, "s"))
    log.add_listed(Listed(A + "new", A + "new", None, "s"))
    assert list(log.unjudged(Origin("https", "a.example", 443))) == [(A + "new", A + "new?sid=1")]
    store.close()


def test_a_store_from_before_the_verdicts_opens_and_another_program_does_not(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old.sqlite3"
    SqliteFactStore(old).close()
    db = sqlite3.connect(old)
    db.execute("DROP TABLE verdicts")
    db.execute("DROP TABLE listed")
    db.commit()
    db.close()
    SqliteFactStore(old).close()  # the verdict tables are added
    db = sqlite3.connect(old)
    db.execute("CREATE TABLE other (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="is not a scrapy-sitemapgen store"):
        SqliteFactStore(old)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"SITEMAPGEN_AUDIT_SITEMAPS": ["/sitemap.xml"]},
            "SITEMAPGEN_AUDIT_SITEMAPS holds '/sitemap.xml', which is no absolute http(s) URL",
        ),
        (
            {"SITEMAPGEN_AUDIT_MAX_FETCH": -1},
            "SITEMAPGEN_AUDIT_MAX_FETCH=-1 is invalid: it must be an integer from 0 to 10,000,000",
        ),
        ({"SITEMAPGEN_AUDIT": "maybe"}, "SITEMAPGEN_AUDIT='maybe' is invalid: use True or False"),
        ({"SITEMAPGEN_REPORT_DIR": ""}, "SITEMAPGEN_REPORT_DIR='' is invalid"),
        (
            {"SITEMAPGEN_URI": "out", "SITEMAPGEN_REPORT_DIR": "out/report"},
            "SITEMAPGEN_REPORT_DIR='out/report' is invalid: the report is kept apart",
        ),
    ],
)
def test_bad_audit_settings_are_one_clear_line(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        Config.from_settings(Settings(settings))


def test_audit_settings_defaults() -> None:
    config = Config.from_settings(Settings())
    assert (config.audit, config.audit_sitemaps, config.audit_max_fetch) == (False, (), 10_000)
    assert str(config.report_dir) == "sitemapgen-report"


@pytest.mark.parametrize(
    ("lastmod", "bucket"),
    [
        ("2026-01-10T11:00:00+00:00", "under 1 day"),
        ("2026-01-09", "1 to 7 days"),  # a date is its midnight, UTC: 1.5 days
        ("2026-01-01T12:00:00Z", "7 to 30 days"),
        ("2025-11-01", "30 to 90 days"),
        ("2025-06-01T00:00:00-05:00", "90 to 365 days"),
        ("2020-01-01", "over 1 year"),
        (None, "no lastmod"),
        ("soon", "no lastmod"),
    ],
)
def test_lastmod_age_buckets(lastmod: str | None, bucket: str) -> None:
    from datetime import datetime, timezone

    from scrapy_sitemapgen.audit.findings import lastmod_age

    assert lastmod_age(lastmod, datetime(2026, 1, 10, 12, tzinfo=timezone.utc)) == bucket


def test_report_page_escapes_what_the_site_wrote() -> None:
    from scrapy_sitemapgen.audit.findings import OriginReport
    from scrapy_sitemapgen.audit.html import render

    hostile = A + "x?q=<script>alert(1)</script>&a=\"'"
    found = [Finding(hostile, "invalid_sitemap", "line 1: P1: <!DOCTYPE x [<!ENTITY a 'b'>]>")]
    report = OriginReport(
        Origin("https", "a.example", 443),
        found,
        dict(counts(found)),
        [hostile],
        verdicts={"excluded/<b>": 1},
    )
    page = render(report)
    assert page.count("<script>") == 1  # the page's own sorting script, nothing the site wrote
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;a=&quot;&#x27;" in page
    assert "&lt;!DOCTYPE x [&lt;!ENTITY a &#x27;b&#x27;&gt;]&gt;" in page
    assert "excluded/&lt;b&gt;" in page
    assert "src=" not in page  # no external resource
    # The one kind of link: the finding's section of the documentation, never a URL of
    # the site.
    assert re.findall(r"href=(\S*?)>", page) == [
        '"https://scrapy-sitemapgen.readthedocs.io/en/latest/audit.html#finding-invalid-sitemap"'
    ]
