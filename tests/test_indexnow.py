"""IndexNow: what changed since the previous run, submitted after the publish, through
Scrapy's downloader, to a local endpoint that checks the protocol (helpers.IndexNowServer)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.features.entry_prints import EntryPrints
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.indexnow import batches
from scrapy_sitemapgen.state.indexnow_changes import ENTRY_PRINTS

from .helpers import IndexNowServer, Route, SiteServer, html, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

KEY = "a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90"
AGENT = "sitemapgen-indexnow-test"


def _modified(day: int) -> dict[str, str]:
    return {"Last-Modified": f"Wed, {day:02d} Jan 2025 10:00:00 GMT"}


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[SiteServer]:
    """/ links to /a, /b, /c, /d, each with a Last-Modified date (its <lastmod>); the
    published output is served too, so the endpoint can fetch the key file."""
    server = SiteServer()
    server.routes["/"] = Route(body=html(body=_links("/a", "/b", "/c", "/d")))
    for day, path in enumerate(("/a", "/b", "/c", "/d"), start=1):
        # Each its own text, so none is another's duplicate by content.
        server.routes[path] = Route(body=html(body=f"<p>{path}</p>"), headers=_modified(day))
    server.static = tmp_path / "out" / server.origin.name
    yield server
    server.close()


def _links(*paths: str) -> str:
    return "".join(f"<a href='{p}'>x</a>" for p in paths)


def _settings(endpoint: IndexNowServer, **more: object) -> dict[str, object]:
    return {
        # The runs change a page by moving its Last-Modified, not its text: its lastmod
        # follows the header, not the content (SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT).
        "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": False,
        "SITEMAPGEN_INDEXNOW_KEY": KEY,
        "SITEMAPGEN_INDEXNOW_ENDPOINT": endpoint.url,
        "SITEMAPGEN_INDEXNOW_BATCH": 2,
        "USER_AGENT": AGENT,
        **more,
    }


async def _submit_all(crawl, shop, endpoint, caplog, level=logging.ERROR, **more):
    """A first run that submits every URL (10 a request): (the crawler, its messages at
    ``level`` or above)."""
    settings = _settings(
        endpoint, SITEMAPGEN_INDEXNOW_INITIAL=True, SITEMAPGEN_INDEXNOW_BATCH=10, **more
    )
    with caplog.at_level(level):
        crawler = await crawl(settings, start_url=shop.url("/"))
    return crawler, [r.getMessage() for r in caplog.records if r.levelno >= level]


@deferred_f_from_coro_f
async def test_three_runs_submit_exactly_what_changed(
    shop, endpoint, crawl, tmp_path: Path, caplog
) -> None:
    u = shop.url
    folder = tmp_path / "out" / shop.origin.name
    # Run 1: no previous run, so nothing is submitted; the key file is published.
    with caplog.at_level(logging.INFO):
        first = await crawl(_settings(endpoint), start_url=u("/"))
    assert endpoint.received == []
    assert (folder / f"{KEY}.txt").read_text() == KEY
    assert first.stats.get_value("sitemapgen/indexnow/urls/initial_skipped") == 5
    assert first.stats.get_value("sitemapgen/indexnow/requests") is None
    assert any("has no previous run to compare with" in m for m in caplog.messages)
    # Run 2: /b's lastmod changes, /d was deleted with its link (its 404 found by the
    # recheck of the pages not reached: removed), /e is new; and /, whose links now lead
    # to /e, not /d, changed (a change of its links counts: its lastmod is the time run 2
    # found it, docs/lastmod.rst "What counts as a change").
    shop.routes["/"] = Route(body=html(body=_links("/a", "/b", "/c", "/e")))
    shop.routes["/d"] = Route(404, "gone")
    shop.routes["/b"] = Route(body=html(body="<p>x</p>"), headers=_modified(20))
    shop.routes["/e"] = Route(body=html(body="<p>new</p>"), headers=_modified(21))
    second = await crawl(_settings(endpoint), start_url=u("/"))
    # In loc order, two per request (SITEMAPGEN_INDEXNOW_BATCH), removed ones included.
    assert endpoint.url_lists == [[u("/"), u("/b")], [u("/d"), u("/e")]]
    assert [s.status for s in endpoint.received] == [202, 202]
    for submission in endpoint.received:
        assert submission.method == "POST"
        assert submission.headers["content-type"].startswith("application/json")
        assert submission.headers["user-agent"] == AGENT  # the downloader's middlewares ran
        assert submission.body["host"] == "127.0.0.1"
        assert submission.body["key"] == KEY
        assert submission.body["keyLocation"] == u(f"/{KEY}.txt")
    stats = second.stats.get_stats()
    assert stats["sitemapgen/indexnow/requests"] == 2
    assert stats["sitemapgen/indexnow/status/202"] == 2
    assert stats["sitemapgen/indexnow/urls/submitted"] == 4
    assert stats["sitemapgen/indexnow/urls/added"] == 1
    assert stats["sitemapgen/indexnow/urls/changed"] == 2
    assert stats["sitemapgen/indexnow/urls/removed"] == 1
    # Run 3: nothing changed, so no request at all.
    third = await crawl(_settings(endpoint), start_url=u("/"))
    assert len(endpoint.received) == 2
    assert third.stats.get_value("sitemapgen/indexnow/requests") is None
    assert sorted(read_entries(tmp_path / "out", shop.origin.name)) == [
        u(p) for p in ("/", "/a", "/b", "/c", "/e")
    ]


@deferred_f_from_coro_f
async def test_initial_submits_every_url_of_a_first_run(shop, endpoint, crawl) -> None:
    u = shop.url
    await crawl(_settings(endpoint, SITEMAPGEN_INDEXNOW_INITIAL=True), start_url=u("/"))
    assert endpoint.url_lists == [[u("/"), u("/a")], [u("/b"), u("/c")], [u("/d")]]


@deferred_f_from_coro_f
async def test_a_missing_key_file_is_a_403_logged_with_its_meaning(
    shop, endpoint, crawl, tmp_path: Path, caplog
) -> None:
    """The endpoint fetches the key location, finds nothing: 403. The sitemaps stand."""
    settings = _settings(
        endpoint,
        SITEMAPGEN_INDEXNOW_INITIAL=True,
        SITEMAPGEN_INDEXNOW_BATCH=10_000,
        SITEMAPGEN_INDEXNOW_KEY_LOCATION=shop.url("/nowhere.txt"),
    )
    with caplog.at_level(logging.ERROR):
        crawler = await crawl(settings, start_url=shop.url("/"))
    assert [s.status for s in endpoint.received] == [403]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        f"Sitemap: IndexNow: {endpoint.url} refused 5 URLs: 403 key not valid: the key "
        f"file was not found at the key location, or does not hold the key"
    ]
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/indexnow/status/403"] == 1
    assert stats["sitemapgen/indexnow/urls/failed"] == 5
    assert "sitemapgen/output/failed" not in stats
    folder = tmp_path / "out" / shop.origin.name
    assert not (folder / f"{KEY}.txt").exists()  # a key location given: no key file here
    assert len(read_entries(tmp_path / "out", shop.origin.name)) == 5


@pytest.mark.parametrize(
    ("status", "meaning"),
    [
        (400, "400 bad request: the endpoint could not read the submission"),
        (422, "422 unprocessable entity: URLs that do not belong to the host"),
    ],
)
@deferred_f_from_coro_f
async def test_refusals_are_errors_and_not_retried(
    shop, endpoint, crawl, caplog, status: int, meaning: str
) -> None:
    endpoint.script = [(status, {})]
    crawler, errors = await _submit_all(crawl, shop, endpoint, caplog)
    assert len(endpoint.received) == 1
    assert len(errors) == 1
    assert meaning in errors[0]
    assert crawler.stats.get_value(f"sitemapgen/indexnow/status/{status}") == 1


@deferred_f_from_coro_f
async def test_429_is_retried_after_the_wait_it_asks_for(shop, endpoint, crawl, caplog) -> None:
    endpoint.script = [(429, {"Retry-After": "0"})]
    crawler, messages = await _submit_all(crawl, shop, endpoint, caplog, logging.WARNING)
    assert [s.status for s in endpoint.received] == [429, 202]
    assert endpoint.url_lists == [[shop.url(p) for p in ("/", "/a", "/b", "/c", "/d")]]
    assert any("429 too many requests" in m and "trying again in 0s" in m for m in messages)
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/indexnow/requests"] == 2
    assert stats["sitemapgen/indexnow/status/429"] == 1
    assert stats["sitemapgen/indexnow/urls/submitted"] == 5


@deferred_f_from_coro_f
async def test_5xx_is_retried_with_back_off_within_the_time_allowed(
    shop, endpoint, crawl, tmp_path: Path, caplog
) -> None:
    """503, wait 1 s, 503; the next wait (2 s) would pass the 1.5 s allowed: given up."""
    endpoint.script = [(503, {})] * 5
    crawler, errors = await _submit_all(
        crawl, shop, endpoint, caplog, SITEMAPGEN_INDEXNOW_RETRY_SECONDS=1.5
    )
    assert [s.status for s in endpoint.received] == [503, 503]
    assert len(errors) == 1
    assert "did not take 5 URLs within SITEMAPGEN_INDEXNOW_RETRY_SECONDS (1.5s)" in errors[0]
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/indexnow/status/503"] == 2
    assert stats["sitemapgen/indexnow/urls/failed"] == 5
    assert len(read_entries(tmp_path / "out", shop.origin.name)) == 5


@deferred_f_from_coro_f
async def test_no_key_no_indexnow(shop, endpoint, crawl, tmp_path: Path) -> None:
    crawler = await crawl({"SITEMAPGEN_INDEXNOW_ENDPOINT": endpoint.url}, start_url=shop.url("/"))
    assert endpoint.received == []
    assert sorted(p.name for p in (tmp_path / "out" / shop.origin.name).iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap.xml",
    ]
    assert not any(k.startswith("sitemapgen/indexnow/") for k in crawler.stats.get_stats())


# --- the endpoint's own checks, each status of the protocol ----------------------------------


def _post(url: str, body: object, content_type: str = "application/json") -> int:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        with error:  # it holds the connection
            return error.code


def test_the_endpoint_checks_what_the_protocol_asks(endpoint, tmp_path: Path) -> None:
    with SiteServer(static=tmp_path) as site:
        (tmp_path / f"{KEY}.txt").write_text(KEY)
        (tmp_path / "other.txt").write_text("another-key-0000")
        ok = {
            "host": "127.0.0.1",
            "key": KEY,
            "keyLocation": site.url(f"/{KEY}.txt"),
            "urlList": [site.url("/a")],
        }
        assert _post(endpoint.url, ok) == 202
        assert _post(endpoint.url, b"{not json") == 400
        assert _post(endpoint.url, ok, content_type="text/plain") == 400
        assert _post(endpoint.url, {**ok, "urlList": []}) == 400
        assert _post(endpoint.url, {**ok, "urlList": [site.url("/a")] * 10_001}) == 400
        assert _post(endpoint.url, {**ok, "urlList": [site.url("/a")] * 10_000}) == 202
        assert _post(endpoint.url, {**ok, "key": "short"}) == 422
        assert _post(endpoint.url, {**ok, "urlList": ["http://other.example/a"]}) == 422
        below = {**ok, "keyLocation": site.url(f"/keys/{KEY}.txt")}
        assert _post(endpoint.url, below) == 422  # /a is outside /keys/
        assert _post(endpoint.url, {**ok, "keyLocation": site.url("/other.txt")}) == 403
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(endpoint.url, timeout=5)
        with info.value:
            assert info.value.code == 400


# --- the pure part ----------------------------------------------------------------------------


def test_changes_are_found_in_one_merge_pass_in_loc_order() -> None:
    saved: dict[int, bytes] = {}
    first = EntryPrints(iter(()), saved.__setitem__, lambda changes: None)
    first.note_all([("http://h/a", "1"), ("http://h/b", "1"), ("http://h/d", "1")])
    assert first.finish() == {"added": 3, "changed": 0, "removed": 0}
    previous = [pair for n in sorted(saved) for pair in ENTRY_PRINTS.decode(saved[n])]
    assert previous == [("http://h/a", "1"), ("http://h/b", "1"), ("http://h/d", "1")]
    seen: list[tuple[str, str]] = []
    second = EntryPrints(iter(previous), {}.__setitem__, seen.extend)
    second.note_all([("http://h/a", "1"), ("http://h/b", "2")])
    second.note_all([("http://h/c", "1")])
    assert second.finish() == {"added": 1, "changed": 1, "removed": 1}
    assert seen == [("changed", "http://h/b"), ("added", "http://h/c"), ("removed", "http://h/d")]


def test_batches_never_pass_the_protocols_10000() -> None:
    sizes = [len(b) for b in batches((f"http://h/{n}" for n in range(20_001)), 50_000)]
    assert sizes == [10_000, 10_000, 1]
    assert [len(b) for b in batches(["a", "b", "c"], 2)] == [2, 1]


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("SITEMAPGEN_INDEXNOW_KEY", "short", "8 to 128 characters"),
        ("SITEMAPGEN_INDEXNOW_KEY", "a" * 129, "8 to 128 characters"),
        ("SITEMAPGEN_INDEXNOW_KEY", "abcdefgh_12", "a-z, A-Z, 0-9 and '-'"),
        ("SITEMAPGEN_INDEXNOW_KEY", 12345678, "8 to 128 characters"),
        ("SITEMAPGEN_INDEXNOW_ENDPOINT", "api.indexnow.org/indexnow", "absolute http(s) URL"),
        ("SITEMAPGEN_INDEXNOW_ENDPOINT", "", "absolute http(s) URL"),
        ("SITEMAPGEN_INDEXNOW_KEY_LOCATION", "/key.txt", "absolute http(s) URL"),
        ("SITEMAPGEN_INDEXNOW_KEY_LOCATION", "https://%(nope)s/k.txt", "placeholders"),
        ("SITEMAPGEN_INDEXNOW_BATCH", 10_001, "from 1 to 10,000"),
        ("SITEMAPGEN_INDEXNOW_RETRY_SECONDS", -1, "number of seconds"),
        ("SITEMAPGEN_INDEXNOW_INITIAL", "maybe", "True or False"),
    ],
)
def test_bad_indexnow_settings_are_refused(name: str, value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=name) as info:
        Config.from_settings(Settings({"SITEMAPGEN_INDEXNOW_KEY": KEY, name: value}))
    assert repr(value) in str(info.value)
    assert fragment in str(info.value)


@deferred_f_from_coro_f
async def test_a_bad_key_stops_the_crawl_before_it_starts(shop, endpoint, crawl) -> None:
    with pytest.raises(ValueError, match="SITEMAPGEN_INDEXNOW_KEY"):
        await crawl({"SITEMAPGEN_INDEXNOW_KEY": "bad key!"}, start_url=shop.url("/"))
    assert shop.requested == []


# --- the offline build: origins staged in worker processes ------------------------------------


def _feed(path: Path, records: list[tuple[str, str]]) -> None:
    path.write_text(
        "".join(json.dumps({"loc": loc, "lastmod": when}) + "\n" for loc, when in records)
    )


def test_a_build_with_two_workers_submits_each_hosts_changes(endpoint, tmp_path: Path) -> None:
    """``sitemapgen-build --workers 2``: each origin staged in a worker process, its
    fingerprints and changes taken in by the parent; sections too."""
    import subprocess
    import sys

    out = tmp_path / "out"
    with SiteServer() as a, SiteServer() as b:
        a.static, b.static = out / a.origin.name, out / b.origin.name

        def build(records: list[tuple[str, str]]) -> subprocess.CompletedProcess[str]:
            _feed(tmp_path / "feed.jsonl", records)
            return subprocess.run(
                [
                    *(sys.executable, "-m", "scrapy", "sitemapgen-build", "--input", "feed.jsonl"),
                    *("--workers", "2", "-s", f"SITEMAPGEN_URI={out}"),
                    *("-s", 'SITEMAPGEN_SECTIONS=[["blog", "/blog/"]]'),
                    *("-s", f"SITEMAPGEN_INDEXNOW_KEY={KEY}"),
                    *("-s", f"SITEMAPGEN_INDEXNOW_ENDPOINT={endpoint.url}"),
                ],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

        day1, day2 = "2025-01-01", "2025-02-01"
        first = [(a.url("/x1"), day1), (a.url("/x2"), day1), (a.url("/blog/y"), day1)]
        first += [(b.url("/x1"), day1), (b.url("/blog/z"), day1)]
        result = build(first)
        assert result.returncode == 0, result.stderr[-2000:]
        assert endpoint.received == []
        for server in (a, b):
            names = sorted(p.name for p in (out / server.origin.name).iterdir())
            assert names == sorted(
                [
                    f"{KEY}.txt",
                    "manifest.json",
                    "robots.txt",
                    "sitemap-1.xml.gz",
                    "sitemap-blog-1.xml.gz",
                    "sitemap.xml",
                ]
            )
        # /x2 of a changes, /blog/new of a is new, /x1 of b is gone.
        second = [(a.url("/x1"), day1), (a.url("/x2"), day2), (a.url("/blog/y"), day1)]
        second += [(a.url("/blog/new"), day2), (b.url("/blog/z"), day1)]
        result = build(second)
        assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(endpoint.url_lists) == sorted(
        [[a.url("/blog/new"), a.url("/x2")], [b.url("/x1")]]
    )
    assert [s.status for s in endpoint.received] == [202, 202]
    assert {s.body["keyLocation"] for s in endpoint.received} == {
        a.url(f"/{KEY}.txt"),
        b.url(f"/{KEY}.txt"),
    }


@deferred_f_from_coro_f
async def test_an_endpoint_no_handler_serves_is_an_error_not_retried(
    shop, endpoint, crawl, caplog
) -> None:
    https = endpoint.url.replace("http://", "https://")
    crawler, errors = await _submit_all(
        crawl,
        shop,
        endpoint,
        caplog,
        SITEMAPGEN_INDEXNOW_ENDPOINT=https,
        DOWNLOAD_HANDLERS={"https": None},
    )
    assert len(errors) == 1
    assert errors[0].startswith(f"Sitemap: IndexNow: {https} cannot be reached: NotSupported")
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/indexnow/requests"] == 1
    assert stats["sitemapgen/indexnow/error/NotSupported"] == 1
    assert stats["sitemapgen/indexnow/urls/failed"] == 5
