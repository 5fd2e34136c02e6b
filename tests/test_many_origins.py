"""Many origins, as a broad crawl has them: a real crawl over many hosts on loopback
(127.0.0.2, 127.0.0.3, ...: the whole 127.0.0.0/8 range is loopback), and an offline build
of a feed over many origins in worker processes. Each origin gets its own exact, valid set,
and the close report sums up the origins past SITEMAPGEN_LOG_ORIGINS in one line."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.sitemaps.urls import UrlPolicy, origin_of

from .helpers import Route, SiteServer, files, html, read_urls, run_scrapy

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HOSTS = 60
SHOWN = 5
_LAST_MODIFIED = "Wed, 01 May 2024 10:00:00 GMT"


class BroadSpider(scrapy.Spider):
    """Follows every link, on any host."""

    name = "broad"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Iterator[scrapy.Request]:
        yield from response.follow_all(css="a")


def _hosts() -> list[SiteServer]:
    """Host k (127.0.0.k+2) serves /, /a (with a Last-Modified) and /b?x=1&y=2; the
    first host's / also links to every other host's /."""
    servers = [SiteServer(host=f"127.0.0.{k + 2}") for k in range(HOSTS)]
    for k, server in enumerate(servers):
        others = "".join(f'<a href="{s.url("/")}">{n}</a>' for n, s in enumerate(servers)) * (
            k == 0
        )
        server.routes["/"] = Route(
            body=html(body=f'<a href="/a">a</a><a href="/b?x=1&amp;y=2">b</a>{others}')
        )
        server.routes["/a"] = Route(body=html(), headers={"Last-Modified": _LAST_MODIFIED})
        server.routes["/b?x=1&y=2"] = Route(body=html())
    return servers


def _summary(caplog: Any) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "scrapy_sitemapgen.publish.close_report" and r.levelno == logging.INFO
    ]


@deferred_f_from_coro_f
async def test_a_crawl_over_many_hosts_writes_one_exact_set_each(
    crawl, tmp_path: Path, caplog
) -> None:
    servers = _hosts()
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_sitemapgen"):
            crawler = await crawl(
                {"SITEMAPGEN_LOG_ORIGINS": SHOWN, "CONCURRENT_REQUESTS": 16},
                spidercls=BroadSpider,
                start_url=servers[0].url("/"),
            )
    finally:  # at once: each waits up to its serve loop's poll interval
        with ThreadPoolExecutor(len(servers)) as closing:
            list(closing.map(SiteServer.close, servers))
    out = tmp_path / "out"
    names = [s.origin.name for s in servers]
    assert files(out) == {
        *(f"{n}/{f}" for n in names for f in ("sitemap.xml", "sitemap-1.xml.gz")),
        *(f"{n}/{f}" for n in names for f in ("robots.txt", "manifest.json")),
        ".sitemapgen-state.sqlite3",
    }
    # Every set validated (schemas and the package's validator) and exact: three pages,
    # the & escaped and read back, /a with its Last-Modified as a W3C date-time (P4).
    got = read_urls(out)
    for server in servers:
        assert {loc: facts["lastmod"] for loc, facts in got[server.origin.name].items()} == {
            server.url("/"): None,
            server.url("/a"): "2024-05-01T10:00:00+00:00",
            server.url("/b?x=1&y=2"): None,
        }
        assert (out / server.origin.name / "robots.txt").read_text() == (
            f"Sitemap: {server.url('/sitemap.xml')}\n"
        )
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/origins"] == HOSTS
    assert stats["sitemapgen/urls/written"] == 3 * HOSTS
    assert stats["sitemapgen/files/written"] == 2 * HOSTS
    # Per-origin stats and lines for the first SHOWN origins in origin order (127.0.0.10
    # sorts before 127.0.0.2: hosts are text); one line for the other 55.
    first = sorted(s.origin for s in servers)[:SHOWN]
    per_origin = {k.rsplit("/", 1)[1] for k in stats if k.startswith("sitemapgen/urls/written/")}
    assert per_origin == {o.name for o in first}
    lines = _summary(caplog)
    assert len(lines) == SHOWN + 1, lines
    for origin, line in zip(first, lines):
        assert line.startswith(f"Sitemap: {origin.root}: 3 URLs (+3, -0 "), line
    assert lines[-1].startswith(
        f"Sitemap: and {HOSTS - SHOWN} more origins: {3 * (HOSTS - SHOWN)} URLs in "
        f"{HOSTS - SHOWN} sitemap files, {2 * (HOSTS - SHOWN)} files changed "
    ), lines[-1]


def _feed(path: Path, origins: int, big: int) -> dict[str, set[str]]:
    """A feed over ``origins`` small origins (three records each, interleaved as a broad
    crawl writes them, one URL twice) and one origin of ``big`` records; what it lists."""
    expected: dict[str, set[str]] = {}
    lines = []
    for page in range(3):
        for k in range(origins):
            root = f"https://h{k:04d}.example.com" if k % 7 else f"http://h{k:04d}.example.net:81"
            loc = f"{root}/page-{page}"
            lines.append({"loc": loc})
            expected.setdefault(origin_of(root + "/").name, set()).add(loc)
        lines.append({"loc": f"https://h0001.example.com/page-{page}", "lastmod": "2024-01-02"})
    for n in range(big):
        lines.append({"loc": f"https://big.example.org/item/{n:05d}"})
    expected[origin_of("https://big.example.org/").name] = {
        f"https://big.example.org/item/{n:05d}" for n in range(big)
    }
    # The big origin's records spread through the feed, so every range holds some.
    lines = [lines[i] for i in sorted(range(len(lines)), key=lambda i: (i * 7919) % len(lines))]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return expected


def test_a_build_over_many_origins_in_workers_is_the_one_process_build(tmp_path: Path) -> None:
    """More origins than one staging task takes, small ones in shared run segments and one
    with run files of its own: two workers write, byte for byte, what one process writes."""
    feed = tmp_path / "feed.jsonl"
    expected = _feed(feed, origins=700, big=5000)
    outs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"out-{workers}"
        result = run_scrapy(
            tmp_path,
            "sitemapgen-build",
            "--input",
            str(feed),
            "--workers",
            workers,
            "-s",
            f"SITEMAPGEN_URI={out}",
            "-s",
            f"SITEMAPGEN_STATE={tmp_path / f'state-{workers}.sqlite3'}",
            "-s",
            "SITEMAPGEN_LOG_ORIGINS=3",
        )
        assert result.returncode == 0, result.stderr[-3000:]
        outs[workers] = out
        assert len(re.findall(r"\] INFO: Sitemap: https?://\S+: \d+ URLs", result.stderr)) == 3
        assert f"Sitemap: and {len(expected) - 3} more origins: " in result.stderr
    one, two = outs["1"], outs["2"]
    assert files(one) - {".sitemapgen-state.sqlite3"} == files(two) - {".sitemapgen-state.sqlite3"}
    # The urlsets and robots.txt byte for byte (the index and the manifest hold the run's
    # time as the files' lastmod).
    compared = [n for n in files(one) if n.endswith(("/robots.txt", ".xml.gz"))]
    assert len(compared) == 2 * len(expected)
    for name in compared:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    got = read_urls(two)  # every set validated
    assert {name: set(urls) for name, urls in got.items()} == expected


def _build(tmp_path: Path, feed: Path, out: Path, *settings: str, workers: int = 1) -> Any:
    args = ["-s", f"SITEMAPGEN_URI={out}", "-s", f"SITEMAPGEN_STATE={tmp_path / 'state.sqlite3'}"]
    for setting in settings:
        args += ["-s", setting]
    return run_scrapy(
        tmp_path, "sitemapgen-build", "--input", str(feed), "--workers", str(workers), *args
    )


def test_a_publish_goes_group_by_group_and_a_stop_keeps_each_origin_whole(
    tmp_path: Path,
) -> None:
    """700 origins, published 500 at a time (one process: origins in origin order). A
    folder where the 600th origin's index goes stops the publish at the second group:
    the first 500 origins are published and remembered (the next run finds their files
    unchanged), the others keep what they had (nothing), no staging folder is left, and
    the next run, unblocked, publishes the rest."""
    feed, out = tmp_path / "feed.jsonl", tmp_path / "out"
    expected = {name: locs for name, locs in _feed(feed, origins=700, big=0).items() if locs}
    assert len(expected) == 700
    names = sorted(expected, key=lambda name: origin_of(next(iter(expected[name]))))
    blocked = out / names[599] / "sitemap.xml"
    blocked.mkdir(parents=True)
    result = _build(tmp_path, feed, out, "SITEMAPGEN_LOG_ORIGINS=3")
    assert result.returncode == 1, result.stderr[-3000:]
    assert "a folder stands where a sitemap goes" in result.stderr
    published = {p.name for p in out.iterdir() if (p / "manifest.json").is_file()}
    assert published == set(names[:500])
    # (The delivery's check may have made the folders of the second group's first
    # origins before it found the block: empty.)
    unpublished = {p: list(p.iterdir()) for p in out.iterdir() if p.name not in published}
    assert unpublished.pop(out / names[599]) == [blocked]
    assert {p.name for p in unpublished} <= set(names[500:599])
    assert all(inside == [] for inside in unpublished.values())
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]
    blocked.rmdir()
    got = read_urls(out)  # the published sets whole and valid
    assert {name: set(urls) for name, urls in got.items()} == {n: expected[n] for n in names[:500]}

    result = _build(tmp_path, feed, out, "SITEMAPGEN_LOG_ORIGINS=3")
    assert result.returncode == 0, result.stderr[-3000:]
    # The 200 origins not published before get their urlset and index; the 500 others'
    # files are the ones published by the stopped run, so nothing of theirs changes.
    assert (
        "Sitemap: and 697 more origins: 2091 URLs in 697 sitemap files, "
        "400 files changed (one line each at DEBUG" in result.stderr
    ), result.stderr[-3000:]
    got = read_urls(out)
    assert {name: set(urls) for name, urls in got.items()} == expected


def test_indexnow_lines_past_the_shown_origins_are_summed_up(tmp_path: Path) -> None:
    """A first run with an IndexNow key over 700 origins: a "no previous run" line for
    each of the first three origins only, and one line for the other 697."""
    feed, out = tmp_path / "feed.jsonl", tmp_path / "out"
    _feed(feed, origins=700, big=0)
    result = _build(
        tmp_path,
        feed,
        out,
        "SITEMAPGEN_LOG_ORIGINS=3",
        "SITEMAPGEN_INDEXNOW_KEY=a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90",
        "SITEMAPGEN_INDEXNOW_ENDPOINT=http://127.0.0.1:9/indexnow",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    first_runs = re.findall(r"INFO: Sitemap: IndexNow: (\S+) has no previous run", result.stderr)
    assert len(first_runs) == 3, first_runs
    # 697 origins of three URLs each (h0001's fourth record repeats one of its URLs).
    assert (
        "INFO: Sitemap: IndexNow: and 697 more origins: 697 with no previous run, whose "
        "2091 URLs were not submitted; 0 URLs of 0 origins submitted (one line each at "
        "DEBUG; SITEMAPGEN_LOG_ORIGINS=3)" in result.stderr
    ), result.stderr[-3000:]


# --- what each origin costs less of (issue 20): the pieces under the builds above ------


def test_the_close_report_makes_debug_lines_only_for_a_handler_that_writes_them() -> None:
    """Scrapy leaves its loggers at every level and sets LOG_LEVEL on its handler: a
    DEBUG line per origin is made only when some handler would write it."""
    from scrapy_sitemapgen.publish.close_report import _written

    log = logging.getLogger("sitemapgen-test.report")
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        root.handlers = []
        root.setLevel(logging.NOTSET)
        info = logging.StreamHandler()
        info.setLevel(logging.INFO)
        root.addHandler(info)
        assert not _written(log, logging.DEBUG)
        assert _written(log, logging.INFO)
        debug = logging.StreamHandler()
        debug.setLevel(logging.DEBUG)
        log.addHandler(debug)
        assert _written(log, logging.DEBUG)
        log.removeHandler(debug)
        log.propagate = False  # nothing above it: only Python's last resort (WARNING)
        assert not _written(log, logging.INFO)
        assert _written(log, logging.WARNING)
    finally:
        log.propagate = True
        root.handlers, level = saved
        root.setLevel(level)


def test_staged_sets_cross_to_the_workers_and_back_whole() -> None:
    """Pickled as any dataclass is, every field set to a value other than its default
    comes back, its origin an Origin and its records FileRecords: a field added later is
    carried along without a list to update."""
    import dataclasses
    import pickle

    from scrapy_sitemapgen.publish.staging import OriginSet
    from scrapy_sitemapgen.sitemaps.evidence import OriginEvidence
    from scrapy_sitemapgen.sitemaps.manifest import FileRecord
    from scrapy_sitemapgen.sitemaps.urls import Origin

    origin_set = OriginSet(
        origin=origin_of("https://example.com/"),
        folder="out/https_example.com_443",
        staging="out/.https_example.com_443.tmp-x-1",
        records=[
            FileRecord("sitemap-1.xml.gz", "urlset", 3, 300, "ab", "2026-01-01", False),
            FileRecord("sitemap.xml", "index", 1, 90, "cd", "2026-01-02", True),
        ],
        index_urls=("https://example.com/sitemap.xml",),
        added=5,
        removed=2,
        previous=3,
        sectioned=True,
        indexnow={"added": 1},
        duplicates=3,
        first_duplicates=[("https://example.com/a", "https://example.com/b")],
        chrome=7,
        chrome_images=1,
        first_chrome=[("https://example.com/logo.svg", 7)],
        feed_entries=4,
        evidence=OriginEvidence(previous=9, listed=6, kept={"503": 1}, removed={"noindex": 2}),
    )
    for field in dataclasses.fields(OriginSet):  # the test sets every one of them
        assert getattr(origin_set, field.name) != field.default, field.name
    data = pickle.dumps([origin_set, origin_set])
    again, twice = pickle.loads(data)
    assert again == origin_set
    assert twice is again  # one object sent twice is one object again
    assert type(again.origin) is Origin
    assert again.origin.root == "https://example.com/"
    assert [type(r) for r in again.records] == [FileRecord, FileRecord]
    assert again.records[1].changed is True
    assert again.url_count == 3
    assert again.files("index") == [origin_set.records[1]]


def _store_in_one_process(feed: Path, tmp_path: Path, *, run_records: int) -> Any:
    """The run store of ``feed``, read in this process, ``run_records`` rows a spill."""
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build.input_reader import build_store
    from scrapy_sitemapgen.sitemaps.urls import UrlPolicy

    return build_store(
        feed,
        UrlPolicy(),
        datetime.now(timezone.utc),
        workers=1,
        temp_dir=str(tmp_path),
        run_records=run_records,
    )


def test_run_segments_read_right_and_the_collector_left_alone(
    tmp_path: Path,
) -> None:
    """A build over many spill files reads every segment right, each file opened for its
    read alone (no descriptor outlives a read), and leaves this process's collector as it
    found it: on, nothing frozen (the process runs the user's crawl)."""
    import gc

    from scrapy_sitemapgen.build.run_files import Segment

    origins = 30
    feed = tmp_path / "feed.jsonl"
    with feed.open("w") as out:  # each spill of 3 rows holds 3 origins' one-row segments
        for n in range(200 * 3):
            out.write(json.dumps({"loc": f"https://h{n % origins}.example/p{n}"}) + "\n")
    gc.enable()
    fds = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    store, tally = _store_in_one_process(feed, tmp_path, run_records=3)
    try:
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0
        assert tally.records == 600
        segments = [run for o in store.origins() for run in store._held[o].runs]
        assert all(isinstance(run, Segment) for run in segments)
        assert len({run.path for run in segments}) == 200  # a shared file a spill
        for origin in store.origins():
            locs = [f.loc for f in store.entries(origin)]
            assert locs == sorted(
                f"https://{origin.host}/p{n}"
                for n in range(600)
                if n % origins == int(origin.host[1:].split(".")[0])
            )
        if fds is not None:  # the store's lock file aside, every file read is closed
            assert len(set(os.listdir("/proc/self/fd")) - fds) <= 1
    finally:
        store.close()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_task_reads_its_small_origins_segments_in_one_stretch_per_spill(
    tmp_path: Path,
) -> None:
    """Spills lay small origins out in root order and the staging tasks take small origins
    in that order, so a task's part reads each spill's segments of its origins at once:
    the same rows as reading each segment alone, whether its origins are neighbours (read
    in stretches) or scattered (read one segment at a time)."""
    from scrapy_sitemapgen.build import pool, run_files, run_store
    from scrapy_sitemapgen.build.run_files import LoadedSegment, Segment, WholeRun

    origins = 300
    feed = tmp_path / "feed.jsonl"
    with feed.open("w") as out:  # every spill of 600 rows holds a segment of every origin
        for n in range(origins * 8):
            k = (n * 37) % origins
            out.write(json.dumps({"loc": f"https://h{k:03d}.example/p{n}", "priority": 0.5}) + "\n")
        for n in range(1800):  # one origin with run files of its own (600 rows a spill)
            out.write(json.dumps({"loc": f"https://big.example/p{n}"}) + "\n")
    store, _ = _store_in_one_process(feed, tmp_path, run_records=600)
    try:
        everything = store.origins()
        tasks = list(pool.tasks(store))
        big = origin_of("https://big.example/")
        taken = [o for task in tasks for o in task]
        assert taken[0] == big  # the large first
        small = taken[1:]
        assert small == sorted(small, key=lambda o: o.root)  # then the small, in root order
        # Each spill's shared file holds its origins' segments in root order.
        for origin_runs in (store._held[o] for o in small):
            assert all(isinstance(run, Segment) for run in origin_runs.runs)
        by_file: dict[str, list[tuple[int, str]]] = {}
        for o in small:
            for path, start, _ in store._held[o].runs:
                by_file.setdefault(path, []).append((start, o.root))
        assert len(by_file) == 4  # 2,400 small rows, 600 a spill
        for segments in by_file.values():
            assert [root for _, root in sorted(segments)] == sorted(r for _, r in segments)

        def rows(source: run_store.RunStore, origin: Any) -> list[tuple[Any, ...]]:
            return [(f.loc, f.priority) for f in source.entries(origin)]

        whole = {o: rows(store, o) for o in everything}
        assert all(len(whole[o]) == 8 for o in small)
        reads = []
        real_segment = run_files.read_segment

        def counted(path: str, start: int, end: int) -> bytes:
            reads.append(os.path.basename(path))
            return real_segment(path, start, end)

        # Read in stretches (run_store) or a segment alone (run_files): both counted.
        run_files.read_segment = counted  # type: ignore[assignment]
        run_store.read_segment = counted  # type: ignore[assignment]
        try:
            neighbours = small[:100]
            part = store.part([big, *neighbours])
            assert {o: rows(part, o) for o in [big, *neighbours]} == {
                o: whole[o] for o in [big, *neighbours]
            }
            assert len(reads) == len(by_file)  # one read per spill, not one per segment
            assert all(isinstance(r, LoadedSegment) for o in neighbours for r in part._held[o].runs)
            assert all(isinstance(r, WholeRun) for r in part._held[big].runs)  # files stay files
            reads.clear()
            scattered = small[::60]  # far apart: each segment read alone
            part = store.part(scattered)
            assert {o: rows(part, o) for o in scattered} == {o: whole[o] for o in scattered}
            assert len(reads) == sum(len(store._held[o].runs) for o in scattered)
        finally:
            run_files.read_segment = real_segment  # type: ignore[assignment]
            run_store.read_segment = real_segment  # type: ignore[assignment]
    finally:
        store.close()


def test_the_runs_of_a_build_in_workers_stay_in_the_ranges_index_files(tmp_path: Path) -> None:
    """In workers, each range writes its origins' runs into an index file and returns
    only their counts: the main process holds no list of runs, and what a task, the main
    process itself or a lookup over several blocks of each index reads back is what the
    one-process build holds (which looks every origin up at once)."""
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build import run_files, run_merge, run_store
    from scrapy_sitemapgen.build.input_reader import build_store
    from scrapy_sitemapgen.sitemaps.urls import UrlPolicy

    feed = tmp_path / "feed.jsonl"
    with feed.open("w") as out:  # more origins than an index block holds, in every range
        for n in range(3000):
            k = (n * 37) % 700
            out.write(json.dumps({"loc": f"https://h{k:03d}.example/p{n}"}) + "\n")
    one, _ = _store_in_one_process(feed, tmp_path, run_records=200)
    two, _ = build_store(
        feed,
        UrlPolicy(),
        datetime.now(timezone.utc),
        workers=2,
        temp_dir=str(tmp_path),
        run_records=200,
    )
    try:
        origins = two.origins()
        assert origins == one.origins() and len(origins) == 700
        assert not two._held  # on disk, not here: no entry, no list of runs
        assert all(one._held[o].runs for o in origins)
        assert len(two._indexes) == 2  # 2 workers, a range each
        assert all(len(directory) > 1 for _, directory in two._indexes)

        def locs(store: run_store.RunStore, origin: Any) -> list[str]:
            return [f.loc for f in store.entries(origin)]

        part = two.part(origins[100:400])
        # A task gets the blocks of each range's index its origins may be in, not every
        # range's whole directory (a block per 256 origins: it grew with the origins).
        assert [path for path, _ in part._indexes] == [path for path, _ in two._indexes]
        assert all(
            len(mine) < len(whole) for (_, mine), (_, whole) in zip(part._indexes, two._indexes)
        )
        assert {o: locs(part, o) for o in origins[100:400]} == {
            o: locs(one, o) for o in origins[100:400]
        }
        edges = two.part([origins[0], origins[-1]])  # the first block and the last
        assert {o: locs(edges, o) for o in (origins[0], origins[-1])} == {
            o: locs(one, o) for o in (origins[0], origins[-1])
        }
        assert locs(two, origins[5]) == locs(one, origins[5])  # the main process's own read
        # Each origin's runs in feed order, whichever blocks they are in: the same rows
        # as the one-process build's, in the same order.
        looked_up = run_merge.runs_of(two._indexes, [o.root for o in origins])
        for origin in origins:
            assert [list(run_files.read_blocks(r)) for r in looked_up[origin.root]] == [
                list(run_files.read_blocks(r)) for r in one._held[origin].runs or []
            ]
        assert len(two) == len(one) == 3000
    finally:
        two.close()
        one.close()


def test_a_build_in_workers_holds_a_number_an_origin_not_an_entry(tmp_path: Path) -> None:
    """The run store keeps its origins in a file of its own, read a few blocks at a time:
    what the main process holds once the store is built grows with the origins by the
    one number it keeps of each (its count of URLs), not by an object per origin (issue
    20: memory flat in the origin count). Measured as what the build leaves allocated in
    this process (``tracemalloc``), 10,000 origins against 20,000, so that what does not
    grow with the origins (imports, caches) cancels out."""
    import gc
    import tracemalloc
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build.input_reader import build_store

    def kept(origins: int) -> int:
        feed = tmp_path / f"feed-{origins}.jsonl"
        with feed.open("w") as out:
            for k in range(origins):
                out.write(json.dumps({"loc": f"https://h{k:05d}.example/"}) + "\n")
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            store, _ = build_store(
                feed, UrlPolicy(), datetime.now(timezone.utc), workers=2, temp_dir=str(tmp_path)
            )
            try:
                assert len(store.first_origins(3)) == 3
                gc.collect()
                held = tracemalloc.get_traced_memory()[0] - before
            finally:
                store.close()
        finally:
            tracemalloc.stop()
        return held

    kept(10_000)  # a first build: what is imported or cached once
    grown = kept(20_000) - kept(10_000)
    # An Origin, its host and an entry were about 250 bytes an origin; a count is 8.
    assert grown < 10_000 * 24, grown


def test_a_run_store_gives_its_first_origins_in_origin_order(tmp_path: Path) -> None:
    """The close log's origins are the first in origin order (scheme, host, port), which
    is not the order of the roots a run store's files are in ("http://a.example.com/"
    sorts before "http://a.example/", whose origin comes first; "http://b.example:9/" after
    "http://b.example:10/"). The store keeps the first 1,000 from its build and finds more
    by a pass over its origins file: both give what the sorted list of every origin does."""
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build import run_store as runs
    from scrapy_sitemapgen.build.input_reader import build_store

    hosts = [f"h{k:04d}.example" for k in range(1200)] + ["a.example", "a.example.com"]
    locs = [f"http://{host}/" for host in hosts]
    locs += ["http://b.example:10/", "http://b.example:9/", "https://a.example/"]
    feed = tmp_path / "feed.jsonl"
    feed.write_text("".join(json.dumps({"loc": loc}) + "\n" for loc in reversed(locs)))
    store, _ = build_store(
        feed, UrlPolicy(), datetime.now(timezone.utc), workers=2, temp_dir=str(tmp_path)
    )
    try:
        everything = store.origins()
        assert len(everything) == len(locs) > runs.FIRST_ORIGINS
        assert everything == sorted(origin_of(loc) for loc in locs)
        assert [o.root for o in everything[:4]] == [
            "http://a.example/",
            "http://a.example.com/",
            "http://b.example:9/",
            "http://b.example:10/",
        ]
        assert not store._held  # none of them is an object the store holds
        for count in (0, 3, runs.FIRST_ORIGINS, runs.FIRST_ORIGINS + 1, len(locs) + 5):
            assert store.first_origins(count) == everything[:count]
    finally:
        store.close()


@dataclasses.dataclass(frozen=True, slots=True)
class AsGiven(UrlPolicy):
    """A URL policy that takes every loc as given (module-level: the build's worker
    processes unpickle it)."""

    def loc(self, url: str, encoding: str = "utf-8") -> str:
        return url


def test_an_origin_whose_root_is_not_its_key_is_looked_up_at_once(tmp_path: Path) -> None:
    """The runs of a build in workers are found later by each origin's root; an origin
    whose loc prefix is not that root (no normalised loc has one: here a policy that lets
    a default port through) has its runs looked up while the store is built, not lost."""
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build.input_reader import build_store

    feed = tmp_path / "feed.jsonl"
    locs = [f"http://h.example:80/p{n}" for n in range(50)]
    feed.write_text("".join(json.dumps({"loc": loc}) + "\n" for loc in locs))
    store, _ = build_store(
        feed, AsGiven(), datetime.now(timezone.utc), workers=2, temp_dir=str(tmp_path)
    )
    try:
        (origin,) = store.origins()
        assert origin.root == "http://h.example/"  # not the locs' "http://h.example:80/"
        assert store._held[origin].runs  # looked up at once
        part = store.part([origin])
        assert [f.loc for f in part.entries(origin)] == sorted(locs)
    finally:
        store.close()


def test_staging_in_workers_leaves_the_collector_alone_and_no_cycle_behind(
    tmp_path: Path,
) -> None:
    """While a build's workers stage, the parent's cyclic collector stays as it is: the
    parent runs Scrapy and the user's code, whose interpreter-wide state the build does
    not change. What the staging and the delivery of the groups made is
    freed by reference counting alone: with the collector off all along, a collection at
    the end finds nothing of it."""
    import gc
    import logging
    import shutil
    from datetime import datetime, timezone

    from scrapy.settings import Settings
    from scrapy.utils.test import get_crawler

    from scrapy_sitemapgen.build.input_reader import build_store
    from scrapy_sitemapgen.publish.delivery import Stagings, publish_local
    from scrapy_sitemapgen.publish.staging import OriginSet, stage_origins
    from scrapy_sitemapgen.settings import Config
    from scrapy_sitemapgen.sitemaps.urls import Origin, origin_folder
    from scrapy_sitemapgen.state.statefile import PublishState
    from scrapy_sitemapgen.stats import Reporter

    feed, out = tmp_path / "feed.jsonl", tmp_path / "out"
    expected = {name: locs for name, locs in _feed(feed, origins=700, big=0).items() if locs}
    config = Config.from_settings(
        Settings({"SITEMAPGEN_ENABLED": True, "SITEMAPGEN_URI": str(out)})
    )
    store, _ = build_store(
        feed, UrlPolicy(), datetime.now(timezone.utc), workers=2, temp_dir=str(tmp_path)
    )
    state = PublishState(tmp_path / "state.sqlite3")
    stagings = Stagings(config)
    crawler = get_crawler()
    assert crawler.stats is not None
    reporter = Reporter(crawler.stats, logging.getLogger(__name__))
    paused: list[bool] = []
    delivered = 0

    def staged() -> Iterator[list[OriginSet]]:
        def staging_of(origin: Origin) -> str:
            return stagings.new(origin_folder(config.uri, origin))

        now = datetime.now(timezone.utc)
        return stage_origins(store, config, now, state, reporter, staging_of)

    try:
        assert gc.isenabled()
        gc.collect()
        gc.disable()
        try:
            groups = staged()
            for sets in groups:
                # Every origin is new: its staging folder is renamed into place, and the
                # publisher is told so (nothing left there for it to remove).
                moved = publish_local(sets, reporter)
                assert moved == {s.staging for s in sets}
                assert not any(os.path.exists(staging) for staging in moved)
                state.commit_all(config.uri, [(s.origin.name, s.records) for s in sets])
                delivered += len(sets)
                del sets
            del groups
            left = gc.collect()
        finally:
            gc.enable()
        # With the collector on, it stays on while the groups come, and after.
        for sets in staged():
            paused.append(not gc.isenabled())
            # Every folder is there now: the files move, one by one, and no staging
            # folder was renamed.
            assert publish_local(sets, reporter) == set()
            for origin_set in sets:
                shutil.rmtree(origin_set.staging)
        assert gc.isenabled()
        # The parent holds no entry per origin, before or after: they are in the
        # store's origins file, read as the tasks are made. The URLs counted in the
        # workers come back as numbers, in the order of each task's origins.
        assert not store._held
        assert all(count is not None for count in store.counts(store.origins()))
        assert len(store) == sum(len(locs) for locs in expected.values())
    finally:
        state.close()
        store.close()
    assert delivered == len(expected) == 700
    assert len(paused) >= 2 and not any(paused)
    assert left == 0
    assert {p.name for p in out.iterdir()} == set(expected)


def test_a_worker_sends_a_tally_back_only_for_an_origin_that_met_something(
    tmp_path: Path,
) -> None:
    """What staging meets in a worker comes back as a tally per origin, replayed in the
    parent as the crawl would report it; an origin that met nothing (most of a broad
    crawl's) sends none back. Here one origin of 30 has a news article too old for its
    news sitemap: one exclusion, counted and logged once, through two workers."""
    import logging
    from datetime import datetime, timezone

    from scrapy.settings import Settings
    from scrapy.utils.test import get_crawler

    from scrapy_sitemapgen.build.input_reader import build_store
    from scrapy_sitemapgen.build.pool import stage_task, tasks
    from scrapy_sitemapgen.publish.delivery import Stagings
    from scrapy_sitemapgen.publish.staging import stage_origin, stage_origins
    from scrapy_sitemapgen.settings import Config
    from scrapy_sitemapgen.sitemaps.urls import origin_folder
    from scrapy_sitemapgen.state.statefile import PublishState
    from scrapy_sitemapgen.stats import Reporter

    old_news = "https://h0007.example.com/old-news"
    lines = [{"loc": f"https://h{k:04d}.example.com/page"} for k in range(30)]
    lines.append(
        {
            "loc": old_news,
            "news": {
                "publication_name": "The Paper",
                "publication_language": "en",
                "publication_date": "2020-01-02T03:04:05+00:00",
                "title": "Long ago",
            },
        }
    )
    feed = tmp_path / "feed.jsonl"
    feed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = Config.from_settings(
        Settings({"SITEMAPGEN_ENABLED": True, "SITEMAPGEN_URI": str(tmp_path / "out")})
    )
    now = datetime.now(timezone.utc)
    store, _ = build_store(feed, UrlPolicy(), now, workers=2, temp_dir=str(tmp_path))
    state = PublishState(tmp_path / "state.sqlite3")
    stagings = Stagings(config)
    try:
        # One task's results, staged here as a worker stages them.
        (task,) = tasks(store)
        results, _, _ = stage_task(
            stage_origin,
            store.part(task),
            [(o, {}, stagings.new(origin_folder(config.uri, o))) for o in task],
            config,
            now,
            state.path,
            tmp_path / "notes.sqlite3",
        )
        tallies = {
            origin_set.origin.root: tally
            for origin_set, tally in results
            if origin_set is not None and tally is not None
        }
        assert list(tallies) == ["https://h0007.example.com/"]
        assert tallies["https://h0007.example.com/"].counts == {("exclude", "news_too_old"): 1}
        assert sum(1 for origin_set, _ in results if origin_set is not None) == 30

        # The same through the workers, replayed into a crawl's stats.
        crawler = get_crawler()
        assert crawler.stats is not None
        reporter = Reporter(crawler.stats, logging.getLogger(__name__))
        staged = stage_origins(
            store,
            config,
            now,
            state,
            reporter,
            lambda origin: stagings.new(origin_folder(config.uri, origin)),
        )
        assert sum(len(sets) for sets in staged) == 30
        assert crawler.stats.get_value("sitemapgen/excluded/news_too_old") == 1
    finally:
        state.close()
        store.close()


def test_a_staging_folder_renamed_into_place_holds_the_set_and_nothing_else(
    tmp_path: Path,
) -> None:
    """A new origin's staging folder becomes its folder by one rename, unlisted: so every
    file staging writes must be one the set records. A build in two workers with every
    kind of file (urlsets of no section and of one, a news sitemap, text sitemaps, the
    index, robots.txt, IndexNow's key file, the manifest): each origin folder holds what
    its manifest lists, and the manifest, and nothing more."""
    from datetime import datetime, timezone

    feed, out = tmp_path / "feed.jsonl", tmp_path / "out"
    today = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with feed.open("w") as lines:
        for n in range(40 * 12):
            root = f"https://h{n % 40:02d}.example.com"
            record: dict[str, Any] = {"loc": f"{root}/{'blog/' if n % 3 else ''}p{n}"}
            if n % 4 == 0:
                record["images"] = [f"{root}/i{n}.jpg"]
            if n % 5 == 0:
                record["news"] = {
                    "publication_name": "Daily",
                    "publication_language": "en",
                    "publication_date": today,
                    "title": f"Story {n}",
                }
            lines.write(json.dumps(record) + "\n")
    result = _build(
        tmp_path,
        feed,
        out,
        'SITEMAPGEN_FORMATS=["xml", "txt"]',
        'SITEMAPGEN_SECTIONS=[["blog", "/blog/"]]',
        "SITEMAPGEN_INDEXNOW_KEY=a1b2c3d4e5f6a7b8",
        workers=2,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 40
    kinds: set[str] = set()
    for folder in folders:
        manifest = json.loads((folder / "manifest.json").read_text())
        listed = {entry["name"] for entry in manifest["files"]}
        kinds |= {entry["kind"] for entry in manifest["files"]}
        assert {p.name for p in folder.iterdir()} == listed | {"manifest.json"}, folder.name
    assert kinds == {"urlset", "news", "text", "index", "robots", "indexnow-key"}
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]  # no staging left


def test_a_range_read_holds_no_entry_an_origin_between_spills(tmp_path: Path) -> None:
    """A worker reading a range of the feed writes each spill's entries (an origin's run
    and counts) to disk, and merges them into the range's index and counts at its end:
    its peak is the rows it holds (``run_records``), whatever the origins (issue 20:
    memory flat in the origin count). The same 30,000 records over 2,500 origins and over
    25,000, spilled every 2,500 rows, measured as the peak ``tracemalloc`` sees."""
    import random
    import tracemalloc
    from datetime import datetime, timezone

    from scrapy_sitemapgen.build.input_reader import read_range
    from scrapy_sitemapgen.build.run_merge import merged_counts

    def peak(origins: int) -> int:
        path = tmp_path / f"feed-{origins}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            # Each record's origin drawn at random, as a broad crawl interleaves its hosts.
            rng = random.Random(3)
            for i in range(30_000):
                root = f"https://host-{rng.randrange(origins):06d}.example.com"
                record = {"loc": f"{root}/articles/page-{i}", "lastmod": "2024-03-01"}
                if i % 3 == 0:
                    record["images"] = [f"https://cdn.example.com/img/{i}/0.jpg"]
                out.write(json.dumps(record) + "\n")
        work = tmp_path / f"runs-{origins}"
        work.mkdir()
        tracemalloc.start()
        try:
            runs, tally = read_range(
                str(path),
                0,
                path.stat().st_size,
                str(work),
                "0",
                UrlPolicy(),
                datetime.now(timezone.utc),
                2_500,
            )
            highest = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert tally.records == 30_000
        assert list(work.glob("entries-*")) == []  # merged, then removed
        keys = [key for key, *_ in merged_counts([runs.counts])]
        assert keys == sorted(set(keys)) and len(keys) > origins // 2
        return highest

    few, many = peak(2_500), peak(25_000)
    # Each origin's list of runs and counts, held to the end of the range, made the
    # many-origin read peak several MB higher (benchmarks/RECORD.md).
    assert many - few < 1_000_000, (few, many)
