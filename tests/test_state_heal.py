"""A state file that is damaged, another program's, or moved with its output folder: found
before the first request, moved aside and rebuilt from the published set, so the next run
publishes the very same bytes (issue 38, items 3 and 7). Real crawls, real SQLite files."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.state.repair import prepare_state

from .helpers import BASE_SETTINGS, Route, SiteServer, SiteSpider, html, lastmods, log_messages
from .helpers import run_build as build

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import Clock, CrawlFn

STATE = ".sitemapgen-state.sqlite3"
LM_HEADER = "Wed, 21 Oct 2015 07:28:00 GMT"
#: Several files per origin (3 URLs a urlset), a section, text sitemaps; gzip is the default.
SETTINGS: dict[str, Any] = {
    "SITEMAPGEN_MAX_URLS": 3,
    "SITEMAPGEN_SECTIONS": [["pages", "/page"]],
    "SITEMAPGEN_FORMATS": ["xml", "txt"],
}


class Pages:
    """Two origins; ``a``'s /page3 and ``b``'s /b2 have no date of their own, and their
    text can be changed between runs, so their lastmods come from "observed"."""

    def __init__(self) -> None:
        self.a, self.b = SiteServer(), SiteServer()
        self.edition = 0
        a_pages = [f"/page{i}" for i in range(1, 6)] + ["/x1", "/x2"]
        self.a.routes["/"] = Route(
            body=html(body=_links(*a_pages, self.b.url("/"))), headers={"Last-Modified": LM_HEADER}
        )
        for i, path in enumerate(a_pages):
            self.a.routes[path] = Route(body=html(body=f"<p>{path}</p>{_links('/')}"))
            if i % 3 == 0:
                self.a.routes[path].headers = {"Last-Modified": LM_HEADER}
        self.b.routes["/"] = Route(body=html(body=_links("/b1", "/b2", "/b3")))
        for path in ("/b1", "/b2", "/b3"):
            self.b.routes[path] = Route(body=html(body=f"<p>{path}</p>"))
        self.edit()

    def edit(self) -> None:
        """A new text for the pages without a date."""
        self.edition += 1
        self.a.routes["/page3"].body = html(body=f"<p>edition {self.edition}</p>")
        self.b.routes["/b2"].body = html(body=f"<p>edition {self.edition}</p>")

    def close(self) -> None:
        self.a.close()
        self.b.close()


def _links(*hrefs: str) -> str:
    return "".join(f"<a href='{h}'>{h}</a>" for h in hrefs)


@pytest.fixture
def pages() -> Iterator[Pages]:
    made = Pages()
    yield made
    made.close()


def published(out: Path) -> dict[str, bytes]:
    """Every file of every origin folder, by its path below ``out``."""
    found = {}
    for folder in out.iterdir():
        if folder.is_dir():
            for path in folder.iterdir():
                found[f"{folder.name}/{path.name}"] = path.read_bytes()
    return found


def set_aside(out: Path) -> list[Path]:
    return sorted(out.glob(f"{STATE}.corrupt-*"))


def close_counts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The (+added, -removed) of each origin's close line."""
    return re.findall(r"URLs \(([+-]\d+, -\d+) since the previous run\)", caplog.text)


async def crawl_twice(crawl: CrawlFn, clock: Clock, pages: Pages, out: Path) -> dict[str, bytes]:
    """A first run, then a second after the dateless pages changed (their lastmods now
    "observed"); the published set of the second."""
    settings = {**SETTINGS, "SITEMAPGEN_URI": str(out)}
    await crawl(settings, start_url=pages.a.url("/"))
    clock.advance(1)  # the second run's time differs from the first's
    pages.edit()
    await crawl(settings, start_url=pages.a.url("/"))
    before = published(out)
    observed = lastmods(out)
    # The pages without a date carry the time the second run found them changed.
    assert observed[pages.a.origin.name][pages.a.url("/page3")] is not None
    assert observed[pages.b.origin.name][pages.b.url("/b2")] is not None
    clock.advance(1)  # a file stamped anew by the next run would show it
    return before


def damage(path: Path, how: str) -> None:
    size = path.stat().st_size
    if how == "truncated":
        with path.open("r+b") as f:
            f.truncate(size // 2)
    elif how == "zeroed":
        path.write_bytes(bytes(size))
    elif how == "random":
        path.write_bytes(os.urandom(size))
    elif how == "foreign":
        path.unlink()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('not a sitemap state')")
        db.commit()
        db.close()
    for suffix in ("-wal", "-shm"):
        if how != "foreign":
            with open(f"{path}{suffix}", "wb") as f:  # what a crash may leave beside it
                f.write(os.urandom(64))


class CheckingSpider(SiteSpider):
    """Notes, as the crawl starts and before its first request, what the output folder
    holds: the state's check must be done by then."""

    name = "checking"
    before_first_request: ClassVar[list[list[Path]]] = []
    out: str

    async def start(self) -> Any:
        from pathlib import Path

        type(self).before_first_request.append(set_aside(Path(self.out)))
        async for request in super().start():
            yield request


@pytest.mark.parametrize("how", ["truncated", "zeroed", "random", "foreign"])
@deferred_f_from_coro_f
async def test_a_damaged_state_is_moved_aside_and_rebuilt_byte_for_byte(
    crawl: CrawlFn,
    clock: Clock,
    pages: Pages,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    how: str,
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    out = tmp_path / "out"
    before = await crawl_twice(crawl, clock, pages, out)
    assert len([n for n in before if pages.a.origin.name in n]) >= 8  # several files
    state = out / STATE
    damage(state, how)
    caplog.clear()
    CheckingSpider.before_first_request = []
    await crawl(
        {**SETTINGS, "SITEMAPGEN_URI": str(out)},
        spidercls=CheckingSpider,
        start_url=pages.a.url("/"),
        out=str(out),
    )
    aside = set_aside(out)
    assert len(aside) == 1
    # Found in from_crawler: moved aside before the crawl's first request.
    assert CheckingSpider.before_first_request == [aside]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert str(state) in warnings[0]
    assert str(aside[0]) in warnings[0]
    assert "rebuilt" in warnings[0]
    after = published(out)
    assert after.keys() == before.keys()
    for name, data in before.items():
        assert after[name] == data, name
    assert close_counts(caplog) == ["+0, -0", "+0, -0"]
    db = sqlite3.connect(state)
    sha = db.execute("SELECT count(*) FROM files WHERE sha256 = ''").fetchone()
    db.close()
    assert sha == (0,)


@deferred_f_from_coro_f
async def test_a_layout_with_placeholders_is_rebuilt(
    crawl: CrawlFn, clock: Clock, pages: Pages, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Origin folders made from the placeholders, the state file above them: the rebuild
    finds each origin's folder by the template."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    out = tmp_path / "out"
    settings = {
        **SETTINGS,
        "SITEMAPGEN_URI": str(out / "%(origin)s" / "maps"),
        "SITEMAPGEN_STATE": str(out / STATE),
    }
    await crawl(settings, start_url=pages.a.url("/"))
    before = {p: p.read_bytes() for p in out.glob("*/maps/*")}
    assert len(before) >= 12
    damage(out / STATE, "random")
    clock.advance(1)
    caplog.clear()
    await crawl(settings, start_url=pages.a.url("/"))
    assert "rebuilt from the published set (2 origins, 12 URLs)" in caplog.text
    assert {p: p.read_bytes() for p in out.glob("*/maps/*")} == before
    assert close_counts(caplog) == ["+0, -0", "+0, -0"]


@pytest.mark.parametrize("follows", [False, True])
@deferred_f_from_coro_f
async def test_the_rebuilt_notes_take_the_real_fingerprints_once(
    crawl: CrawlFn, clock: Clock, pages: Pages, tmp_path: Path, follows: bool
) -> None:
    """After the heal's run, a change of content is seen as one again: the dateless page
    gets a new observed lastmod, the unchanged ones keep theirs."""
    out = tmp_path / "out"
    await crawl_twice(crawl, clock, pages, out)
    settings = {
        **SETTINGS,
        "SITEMAPGEN_URI": str(out),
        "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": follows,
    }
    damage(out / STATE, "random")
    await crawl(settings, start_url=pages.a.url("/"))
    healed = lastmods(out)
    clock.advance(1)
    pages.edit()  # /page3 and /b2 change; nothing else does
    await crawl(settings, start_url=pages.a.url("/"))
    now = lastmods(out)
    a, b = pages.a.origin.name, pages.b.origin.name
    assert now[a][pages.a.url("/page3")] > healed[a][pages.a.url("/page3")]  # type: ignore[operator]
    assert now[b][pages.b.url("/b2")] > healed[b][pages.b.url("/b2")]  # type: ignore[operator]
    for origin in (a, b):
        for loc, lastmod in now[origin].items():
            if loc not in (pages.a.url("/page3"), pages.b.url("/b2")):
                assert lastmod == healed[origin][loc], loc


@pytest.mark.parametrize("published_set", ["none", "cut short"])
@deferred_f_from_coro_f
async def test_a_state_that_cannot_be_rebuilt_starts_afresh(
    crawl: CrawlFn,
    pages: Pages,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    published_set: str,
) -> None:
    """No published set (an empty output folder), or one that cannot be read back (a
    urlset cut short): the damaged state is moved aside all the same, and the run starts
    afresh."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    out = tmp_path / "out"
    settings = {**SETTINGS, "SITEMAPGEN_URI": str(out)}
    urlset = out / pages.b.origin.name / "sitemap-1.xml.gz"
    if published_set == "none":
        out.mkdir()
        (out / STATE).write_bytes(os.urandom(8192))
        said = "no published set in"
    else:
        await crawl(settings, start_url=pages.a.url("/"))
        whole = urlset.read_bytes()
        urlset.write_bytes(whole[: len(whole) // 2])
        damage(out / STATE, "zeroed")
        said = "could not be read back"
    caplog.clear()
    await crawl(settings, start_url=pages.a.url("/"))
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said in warning and "starts afresh" in warning
    assert len(set_aside(out)) == 1
    assert sorted(close_counts(caplog)) == ["+4, -0", "+8, -0"]
    assert (out / pages.a.origin.name / "sitemap.xml").is_file()
    if published_set != "none":
        assert urlset.read_bytes() == whole  # written again, whole


@deferred_f_from_coro_f
async def test_a_copied_output_folder_carries_on(
    crawl: CrawlFn, clock: Clock, pages: Pages, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    out = tmp_path / "first" / "out"
    before = await crawl_twice(crawl, clock, pages, out)
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(out, copy)
    caplog.clear()
    await crawl({**SETTINGS, "SITEMAPGEN_URI": str(copy)}, start_url=pages.a.url("/"))
    assert close_counts(caplog) == ["+0, -0", "+0, -0"]
    assert published(copy) == before
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@deferred_f_from_coro_f
async def test_a_state_keyed_by_the_absolute_path_is_adopted(
    crawl: CrawlFn, clock: Clock, pages: Pages, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A state file of an earlier version names the output by its absolute path: its rows
    are re-keyed once, and the copied folder carries on."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    out = tmp_path / "first" / "out"
    before = await crawl_twice(crawl, clock, pages, out)
    db = sqlite3.connect(out / STATE)
    tables = ["files", "url_blocks", "content_blocks", "sections", "indexnow_blocks"]
    with db:
        for table in tables:
            db.execute(f"UPDATE {table} SET output = ?", (str(out),))
    db.close()
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(out, copy)
    caplog.clear()
    await crawl({**SETTINGS, "SITEMAPGEN_URI": str(copy)}, start_url=pages.a.url("/"))
    adopted = [r.getMessage() for r in caplog.records if "now follow the folder" in r.getMessage()]
    assert len(adopted) == 1 and str(out) in adopted[0]
    assert close_counts(caplog) == ["+0, -0", "+0, -0"]
    assert published(copy) == before
    db = sqlite3.connect(copy / STATE)
    keys = {o for table in tables for (o,) in db.execute(f"SELECT DISTINCT output FROM {table}")}
    db.close()
    assert keys == {"."}


@pytest.mark.parametrize(
    ("uri", "state", "key"),
    [
        ("{tmp}/out", "", "."),
        ("file://{tmp}/out", "", "."),
        ("{tmp}/out/%(host)s/maps", "{tmp}/out/.state.sqlite3", "./%(host)s/maps"),
        ("{tmp}/out", "{tmp}/elsewhere/state.sqlite3", "{tmp}/out"),
        ("{tmp}/out/%(host)s", "", "{tmp}/out/%(host)s"),
    ],
)
def test_the_state_key(tmp_path: Path, uri: str, state: str, key: str) -> None:
    settings = {
        **BASE_SETTINGS,
        "SITEMAPGEN_URI": uri.format(tmp=tmp_path),
        "SITEMAPGEN_STATE": state.format(tmp=tmp_path),
    }
    from scrapy.settings import Settings

    assert Config.from_settings(Settings(settings)).state_key == key.format(tmp=tmp_path)


def test_the_build_heals_the_state_before_it_reads_the_feed(tmp_path: Path, clock: Clock) -> None:
    feed = tmp_path / "feed.jsonl"
    records = [
        {"loc": f"https://{host}.example/p{i}", **({"lastmod": "2024-05-01"} if i % 2 else {})}
        for host in ("a", "b")
        for i in range(7)
    ]
    feed.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out"
    args = ["--input", str(feed), "-s", f"SITEMAPGEN_URI={out}", "-s", "SITEMAPGEN_MAX_URLS=3"]
    args += ["-s", "SITEMAPGEN_SECTIONS=" + json.dumps([["odd", "[13579]$"]])]
    first = build(tmp_path, *args)
    assert first.returncode == 0, first.stderr[-3000:]
    before = published(out)
    assert len(before) >= 12
    damage(out / STATE, "truncated")
    clock.advance(1)  # the child's clock too (SITEMAPGEN_TEST_NOW)
    again = build(tmp_path, *args)
    assert again.returncode == 0, again.stderr[-3000:]
    warnings = log_messages(again.stderr, "WARNING")
    assert len(warnings) == 1 and "rebuilt from the published set" in warnings[0], warnings
    assert str(set_aside(out)[0]) in warnings[0]
    # Said before the input is read (the build checks the state, then reads).
    lines = again.stderr.splitlines()
    said = next(i for i, line in enumerate(lines) if "rebuilt from the published" in line)
    assert said < next(i for i, line in enumerate(lines) if "Sitemap: reading " in line)
    assert published(out) == before
    assert re.findall(r"\(([+-]\d+, -\d+) since the previous run\)", again.stderr) == [
        "+0, -0",
        "+0, -0",
    ]


@pytest.fixture
def sound_state(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Path:
    """A sound state file of 50,000 rows (more than a moment's check) in ``tmp_path``, the
    package's INFO lines captured."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    path = tmp_path / STATE
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE files (output TEXT, origin TEXT, name TEXT, sha256 TEXT, lastmod TEXT)"
    )
    rows = [(".", f"o{i}", "sitemap.xml", "x", "y") for i in range(50_000)]
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    return path


def test_a_check_that_takes_too_long_is_cut_short(
    sound_state: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = sound_state
    prepare_state(path, ".", str(tmp_path), tmp_path, seconds=0)
    assert [r.getMessage() for r in caplog.records] == [
        f"Sitemap: the check of the state file {path} was cut short after 0 s; going on with "
        "it as it is"
    ]
    assert set_aside(tmp_path) == []


def test_a_remote_outputs_damaged_state_starts_afresh(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sitemapgen-state.sqlite3"
    path.write_bytes(os.urandom(4096))
    prepare_state(path, "s3://bucket/maps", "s3://bucket/maps", None)
    (aside,) = tmp_path.glob("sitemapgen-state.sqlite3.corrupt-*")
    assert not path.exists()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert str(aside) in warning and "cannot be read back through feed storages" in warning
    assert "starts afresh" in warning


def test_a_state_locked_by_another_process_is_left_alone(
    sound_state: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Busy is no damage: the state file stays where it is, for the publish to wait on."""
    path = sound_state
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        prepare_state(path, ".", str(tmp_path), tmp_path, seconds=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert set_aside(tmp_path) == []
    assert path.is_file()
    (said,) = [r.getMessage() for r in caplog.records]
    assert said == f"Sitemap: the state file {path} could not be checked (database is locked)"
