"""The offline build's bulk road (the ``build`` package): worker processes, sorted runs, merged per
origin. It must write exactly what recording the same records through the item pipeline
into a store writes, whatever the number of workers and runs."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_sitemapgen.build import input_reader as bulk
from scrapy_sitemapgen.build import run_files, run_merge, spills
from scrapy_sitemapgen.build.input_reader import build_store, input_ranges, read_range
from scrapy_sitemapgen.sitemaps.urls import Origin, UrlPolicy

from .helpers import PROPERTY, files, read_entries

if TYPE_CHECKING:
    from pathlib import Path

NOW = datetime.now(timezone.utc)
RECENT = (NOW - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _records() -> list[object]:
    """Every kind of record a feed can hold, repeats of one URL among them."""
    a, b = "https://a.example/", "http://b.example:8080/"
    return [
        {"loc": f"{a}p/1", "lastmod": "2020-01-01", "changefreq": "daily", "priority": 0.5},
        {"loc": f"{a}p/2", "images": [f"{a}i/2.jpg", f"{a}i/2.jpg", f"{a}i/2b.png"]},
        # Repeats of p/1: the newest lastmod wins whatever its position; the later
        # changefreq and priority replace earlier ones; a record without them keeps them.
        {"loc": f"{a}p/1", "lastmod": "2021-05-05T10:00:00Z", "changefreq": "weekly"},
        {"loc": f"{a}p/1", "lastmod": "2019-12-31T23:59:59+00:00", "priority": "0.9"},
        {"loc": f"{a}p/1#fragment"},  # the same page once normalised
        # Media: the later record with media replaces the earlier one's; none keeps them.
        {"loc": f"{a}p/3", "images": [f"{a}i/old.jpg"]},
        {
            "loc": f"{a}p/3",
            "images": [f"{a}i/new.jpg"],
            "videos": [
                {
                    "thumbnail_loc": f"{a}t.jpg",
                    "title": "T & t",
                    "description": "D",
                    "content_loc": f"{a}v.mp4",
                    "duration": 61,
                }
            ],
        },
        {"loc": f"{a}p/3", "lastmod": "2022-02-02"},
        {
            "loc": f"{a}news/1",
            "news": {
                "publication_name": "The A",
                "publication_language": "en",
                "publication_date": RECENT,
                "title": "Hello <world>",
            },
        },
        {"loc": f"{a}caf\u00e9?q=1&r=\u00e9"},  # non-ASCII, & and a query
        {"loc": f"{b}x;jsessionid=abc?sid=1&keep=2"},  # session ids stripped (G4)
        {"loc": f"{b}y", "lastmod": "not a date", "changefreq": "sometimes", "priority": 7},
        {"loc": f"{b}z", "images": "not a list", "videos": [1], "news": "no"},
        {"loc": f"{b}denied/1"},
        {"loc": "ftp://c.example/file"},
        {"loc": "https://user:pw@c.example/"},
        {"loc": "http://" + "h" * 300 + ".example/"},
        {"loc": f"{b}{'x' * 2100}"},
        {"loc": f"{b}future", "lastmod": "2999-01-01"},
        {"no_loc": True},
        [1, 2],
        "a string",
    ]


def _write_feed(path: Path, records: list[object], *, copies: int = 1) -> None:
    with path.open("wb") as feed:
        feed.write(b'\xef\xbb\xbf{"loc": "https://a.example/bom"}\n')  # as some tools start a file
        for n in range(copies):
            for record in records:
                feed.write(json.dumps(record, ensure_ascii=n % 2 == 0).encode() + b"\n")
            feed.write(b"\n   \n")  # blank lines are no records
            feed.write(b"{not json\n")
            feed.write(b'{"loc": "https://a.example/\xff"}\n')  # not UTF-8


def _build(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "sitemapgen-build",
            *args,
            "-s",
            "SITEMAPGEN_DENY=/denied/",
            "-s",
            "LOG_LEVEL=INFO",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stats(stderr: str) -> dict[str, int]:
    """The ``sitemapgen/`` counters of the stats dump at the end of the log."""
    dump = stderr[stderr.index("Dumping Scrapy stats:") :]
    return {key: int(value) for key, value in re.findall(r"'(sitemapgen/[^']+)': (\d+)", dump)}


def test_bulk_build_writes_what_the_pipeline_road_writes(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    _write_feed(feed, _records(), copies=3)
    outputs = {}
    stats = {}
    for road, extra in {
        "pipeline": ["--store", str(tmp_path / "store.sqlite3")],  # a named store: one by one
        "bulk-1": ["--workers", "1"],
        "bulk-2": ["--workers", "2"],
    }.items():
        out = tmp_path / road
        result = _build(
            tmp_path,
            "--input",
            str(feed),
            *extra,
            "-s",
            f"SITEMAPGEN_URI={out}",
            "-s",
            f"SITEMAPGEN_STATE={tmp_path / road}.state",
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        outputs[road] = out
        stats[road] = _stats(result.stderr)
    a, b = Origin("https", "a.example", 443).name, Origin("http", "b.example", 8080).name
    for road in ("bulk-1", "bulk-2"):
        assert files(outputs[road]) == files(outputs["pipeline"])
        for name in files(outputs["pipeline"]):
            if name.endswith(".gz"):
                assert (outputs[road] / name).read_bytes() == (
                    outputs["pipeline"] / name
                ).read_bytes(), name
        assert stats[road] == stats["pipeline"]
    # And what that is, written out by hand from the records above.
    entries = read_entries(outputs["bulk-2"], a)
    assert sorted(entries) == [
        "https://a.example/bom",
        "https://a.example/caf%C3%A9?q=1&r=%C3%A9",
        "https://a.example/news/1",
        "https://a.example/p/1",
        "https://a.example/p/2",
        "https://a.example/p/3",
    ]
    p1 = entries["https://a.example/p/1"]
    assert (p1["lastmod"], p1["changefreq"], p1["priority"]) == (
        "2021-05-05T10:00:00+00:00",
        "weekly",
        "0.9",
    )
    assert entries["https://a.example/p/2"]["images"] == [
        "https://a.example/i/2.jpg",
        "https://a.example/i/2b.png",
    ]
    p3 = entries["https://a.example/p/3"]
    assert p3["lastmod"] == "2022-02-02"
    assert p3["images"] == ["https://a.example/i/new.jpg"]
    assert [v["title"] for v in p3["videos"]] == ["T & t"]  # type: ignore[index]
    news = read_entries(outputs["bulk-2"], a, "sitemap-news-")
    assert news["https://a.example/news/1"]["news"]["title"] == "Hello <world>"  # type: ignore[index]
    assert sorted(read_entries(outputs["bulk-2"], b)) == [
        "http://b.example:8080/future",
        "http://b.example:8080/x?keep=2",
        "http://b.example:8080/y",
        "http://b.example:8080/z",
    ]
    counts = stats["bulk-2"]
    # Per copy: two JSON values that are no objects, a line of bad JSON, one of bad UTF-8.
    assert counts["sitemapgen/skipped/bad_record"] == 3 * 4
    assert counts["sitemapgen/excluded/denied"] == 3
    assert counts["sitemapgen/skipped/item_bad_lastmod"] == 3
    assert counts["sitemapgen/skipped/item_lastmod_future"] == 3
    assert counts["sitemapgen/skipped/item_bad_scheme"] == 3
    assert counts["sitemapgen/skipped/item_url_too_long"] == 3
    # Per copy: p/1 four times, p/2, p/3 three times, news/1, café, x, y, z, the long host
    # (a 300-character label is no DNS name, but a valid URI) and "future".
    assert counts["sitemapgen/items/recorded"] == 1 + 3 * 15


def test_workers_must_be_positive(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    _write_feed(feed, _records())
    result = _build(tmp_path, "--input", str(feed), "--workers", "0")
    assert result.returncode == 2
    assert "--workers must be at least 1, not 0" in result.stderr


def test_ranges_cover_every_line_once(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    lines = [
        json.dumps({"loc": f"https://a.example/{'x' * (n % 37)}{n}"}).encode() + b"\n"
        for n in range(500)
    ]
    feed.write_bytes(b"".join(lines))
    for parts in (1, 2, 3, 7, 499, 500, 2000):
        ranges = input_ranges(feed, parts)
        assert ranges[0][0] == 0 and ranges[-1][1] == feed.stat().st_size
        assert all(end == start for (_, end), (start, _) in itertools.pairwise(ranges))
        data = feed.read_bytes()
        pieces = [data[start:end] for start, end in ranges]
        assert all(piece.endswith(b"\n") for piece in pieces)  # cut only at line ends
        assert len(ranges) <= parts


def test_many_small_runs_merge_to_the_same_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of 3 records forces dozens of runs per origin and repeats across them; a
    fan-in of 4 forces merges in several passes."""
    feed = tmp_path / "feed.jsonl"
    records = [
        {
            "loc": f"https://a.example/{n % 40}",
            "lastmod": f"20{10 + n % 13}-01-01",
            "priority": (n % 10) / 10,
        }
        for n in range(200)
    ] + [{"loc": f"http://b.example/{n}"} for n in range(30)]
    feed.write_text("".join(json.dumps(r) + "\n" for r in records))
    policy = UrlPolicy()
    stores = [
        build_store(feed, policy, NOW, workers=workers, temp_dir=str(tmp_path), run_records=size)[0]
        for workers, size in ((1, 1_000_000), (1, 3), (3, 3))
    ]
    monkeypatch.setattr(bulk, "FAN_IN", 4)
    monkeypatch.setattr(run_merge, "FAN_IN", 4)
    stores.append(
        build_store(feed, policy, NOW, workers=1, temp_dir=str(tmp_path), run_records=3)[0]
    )
    try:
        expected = {
            f"https://a.example/{k}": (
                max(f"20{10 + n % 13}-01-01" for n in range(200) if n % 40 == k),
                str(max(n for n in range(200) if n % 40 == k) % 10 / 10),
            )
            for k in range(40)
        }
        for store in stores:
            assert store.origins() == [
                Origin("http", "b.example", 80),
                Origin("https", "a.example", 443),
            ]
            assert len(store) == 70
            got = {
                f.loc: (f.lastmod, f.priority)
                for f in store.entries(Origin("https", "a.example", 443))
            }
            assert got == expected
            locs = [f.loc for f in store.entries(Origin("https", "a.example", 443))]
            assert locs == sorted(locs)  # code-point order, as the SQLite store gives
            assert list(store.news_entries(Origin("https", "a.example", 443))) == []
    finally:
        for store in stores:
            store.close()
    assert [p.name for p in tmp_path.iterdir()] == ["feed.jsonl"]  # every run file removed


def test_a_line_across_a_range_cut_is_read_once(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(json.dumps({"loc": f"https://a.example/{n}"}) + "\n" for n in range(10))
    )
    size = feed.stat().st_size
    seen = 0
    for start, end in input_ranges(feed, 4):
        _, tally = read_range(str(feed), start, end, str(tmp_path), f"t{start}", UrlPolicy(), NOW)
        seen += tally.records
    assert seen == 10 and size > 0


@pytest.mark.parametrize("content", [b"", b"\n\n", b"[]\n"])
def test_a_feed_with_no_record_writes_nothing(tmp_path: Path, content: bytes) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_bytes(content)
    store, tally = build_store(feed, UrlPolicy(), NOW, workers=2, temp_dir=str(tmp_path))
    try:
        assert store.origins() == [] and len(store) == 0 and tally.records == 0
    finally:
        store.close()


def test_parallel_staging_counts_changes_as_one_process_does(tmp_path: Path) -> None:
    """Origins staged in worker processes: the URLs each noted reach the publish state, so
    a second run counts what came and went (+3, -2 here, counted by hand) exactly as the
    one-process road does, and keeps the index lastmod of files that did not change."""
    first = [{"loc": f"https://a.example/{n}"} for n in range(10)] + [
        {"loc": f"http://b.example/{n}"} for n in range(5)
    ]
    second = [
        r for r in first if r["loc"] not in ("https://a.example/3", "https://a.example/4")
    ] + [{"loc": f"https://a.example/new-{n}"} for n in range(3)]
    logs = {}
    b_indexes: dict[str, list[bytes]] = {}
    for road, extra in {"one": ["--workers", "1"], "two": ["--workers", "2"]}.items():
        out, state = tmp_path / road, tmp_path / f"{road}.state"
        for number, records in enumerate((first, second)):
            feed = tmp_path / f"feed-{number}.jsonl"
            feed.write_text("".join(json.dumps(r) + "\n" for r in records))
            result = _build(
                tmp_path,
                "--input",
                str(feed),
                *extra,
                "-s",
                f"SITEMAPGEN_URI={out}",
                "-s",
                f"SITEMAPGEN_STATE={state}",
            )
            assert result.returncode == 0, result.stderr[-3000:]
            index = out / Origin("http", "b.example", 80).name / "sitemap.xml"
            b_indexes.setdefault(road, []).append(index.read_bytes())
        logs[road] = sorted(
            re.findall(r"Sitemap: (\S+): (\d+) URLs \(([+-]\d+), -(\d+) since", result.stderr)
        )
    assert (
        logs["two"]
        == logs["one"]
        == [
            ("http://b.example/", "5", "+0", "0"),
            ("https://a.example/", "11", "+3", "2"),
        ]
    )
    # b did not change: its index (and the lastmod in it) is the first run's, on both roads.
    assert b_indexes["two"][0] == b_indexes["two"][1]
    assert b_indexes["one"][0] == b_indexes["one"][1]


ODD_JSON = [
    b'{"loc": "https://a.example/nan", "priority": NaN}\n',  # the stdlib reads NaN, orjson not
    b'{"loc": "https://a.example/inf", "priority": 1e400}\n',
    b'{"loc": "https://a.example/big", "priority": 123456789012345678901234567890}\n',
    b'{"loc": "https://a.example/sur\\ud800"}\n',  # a lone surrogate escape
    b'{"loc": "https://a.example/dup", "loc": "https://a.example/dup2"}\n',  # the last wins
    b'\xef\xbb\xbf{"loc": "https://a.example/bom2"}\n',
    b'{"loc": "https://a.example/nul"}\x00\n',
    b'  {"loc": "https://a.example/ws"}  \r\n',
]


def _decoded(parse: object, line: bytes) -> object:
    try:
        return ("ok", parse(line))  # type: ignore[operator]
    except ValueError:
        return ("refused", None)


@pytest.mark.skipif("orjson" not in bulk.JSON_PARSERS, reason="the fast extra is not installed")
def test_orjson_reads_lines_as_the_standard_parser_does() -> None:
    fast, slow = bulk.JSON_PARSERS["orjson"], bulk.JSON_PARSERS["json"]
    for line in ODD_JSON:
        got, want = _decoded(fast, line), _decoded(slow, line)
        if b"1234567890123" in line:  # the one documented difference: a float, not an int
            assert got == (
                "ok",
                {"loc": "https://a.example/big", "priority": 1.2345678901234568e29},
            )
            assert want == (
                "ok",
                {"loc": "https://a.example/big", "priority": 123456789012345678901234567890},
            )
        elif b"NaN" in line:  # nan != nan: compare the text
            assert (
                repr(got)
                == repr(want)
                == "('ok', {'loc': 'https://a.example/nan', 'priority': nan})"
            )
        else:
            assert got == want, line
    assert _decoded(fast, ODD_JSON[4]) == ("ok", {"loc": "https://a.example/dup2"})
    assert _decoded(fast, ODD_JSON[6]) == ("refused", None)


@pytest.mark.skipif("orjson" not in bulk.JSON_PARSERS, reason="the fast extra is not installed")
def test_both_parsers_build_the_same_store(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    _write_feed(feed, _records(), copies=2)
    with feed.open("ab") as file:
        file.write(b"".join(ODD_JSON))
    seen = []
    for parser in ("json", "orjson"):
        store, tally = build_store(
            feed, UrlPolicy(), NOW, workers=1, temp_dir=str(tmp_path), parser=parser
        )
        try:
            entries = [f for origin in store.origins() for f in store.entries(origin)]
            seen.append((entries, tally.records, tally.bad_lines, tally.counts))
        finally:
            store.close()
    assert seen[0] == seen[1]
    locs = {f.loc for f in seen[0][0]}
    assert {
        "https://a.example/nan",
        "https://a.example/inf",
        "https://a.example/dup2",
        "https://a.example/ws",
    } <= locs
    assert seen[0][2] == 2 * 4 + 1  # the bad lines of _write_feed, and the NUL one


def test_an_add_on_that_changes_the_url_rules_is_obeyed(tmp_path: Path) -> None:
    """The build's add-ons apply to its settings before the feed is read: one that
    changes SITEMAPGEN_DENY has the feed read with its rules."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(
            json.dumps({"loc": f"https://a.example/{name}"}) + "\n"
            for name in ("keep", "drop/1", "drop/2")
        )
    )
    (tmp_path / "denyaddon.py").write_text(
        "class DenyAddon:\n"
        "    def update_settings(self, settings):\n"
        "        settings.set('SITEMAPGEN_DENY', ['/drop/'], priority=50)  # over -s\n"
    )
    runs = {}
    for case, extra in {
        "plain": [],
        "add-on": ["-s", 'ADDONS={"denyaddon.DenyAddon": 100}'],
    }.items():
        out = tmp_path / case
        result = _build(
            tmp_path,
            "--input",
            str(feed),
            "--workers",
            "2",
            *extra,
            "-s",
            f"SITEMAPGEN_URI={out}",
            "-s",
            f"SITEMAPGEN_STATE={out}.state",
        )
        assert result.returncode == 0, result.stderr[-3000:]
        runs[case] = (
            sorted(read_entries(out, Origin("https", "a.example", 443).name)),
            result.stderr,
        )
    locs, log = runs["plain"]
    assert locs == [
        "https://a.example/drop/1",
        "https://a.example/drop/2",
        "https://a.example/keep",
    ]
    locs, log = runs["add-on"]
    assert locs == ["https://a.example/keep"]
    assert _stats(log)["sitemapgen/excluded/denied"] == 2


@PROPERTY
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 3)), max_size=30),
        min_size=1,
        max_size=6,
    ),
    st.integers(1, 4),
)
def test_runs_merge_in_loc_order_keeping_feed_order_for_repeats(
    tmp_path_factory: pytest.TempPathFactory, runs: list[list[tuple[str, int]]], block: int
) -> None:
    """The merge of sorted runs is what a stable sort of all rows by loc gives: rows of
    one URL in run order, then in their order within the run (tiny blocks, so repeats
    of a loc run on from one block into the next)."""
    folder = tmp_path_factory.mktemp("runs")
    paths, every = [], []
    for number, rows in enumerate(runs):
        # The run's rows, tagged with where they came from, sorted by loc alone (stably).
        tagged = sorted(
            ((loc, number, index, tag) for index, (loc, tag) in enumerate(rows)), key=lambda r: r[0]
        )
        every += tagged
        path = folder / f"run-{number}"
        with path.open("wb") as file:
            for start in range(0, len(tagged), block):
                run_files.dump_block(file, tagged[start : start + block])
        paths.append(run_files.WholeRun(str(path)))
    merged = [row for batch in run_merge.sorted_batches(paths) for row in batch]
    assert merged == sorted(every, key=lambda r: r[0])


def test_run_folders_of_killed_builds_are_removed(tmp_path: Path) -> None:
    """A build holds a lock on its run folder while it lives; the next build removes the
    folders whose lock no process holds (a killed build's), and only those."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"loc": "https://a.example/"}\n')
    temp = tmp_path / "tmp"
    temp.mkdir()
    stale = temp / "sitemapgen-build-stale"
    stale.mkdir()
    (stale / "owner.lock").write_bytes(b"")
    (stale / "run-0-1-0").write_bytes(b"x" * 100)
    unknown = temp / "sitemapgen-build-nolock"  # no lock file: not known to be ours, kept
    unknown.mkdir()
    live = temp / "sitemapgen-build-live"
    live.mkdir()
    holder = subprocess.Popen(  # a live build: holds its folder's lock until killed
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'wb'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(live / "owner.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        store, _ = build_store(feed, UrlPolicy(), NOW, workers=1, temp_dir=str(temp))
        try:
            assert (store.folder / "owner.lock").exists()
            # While this build runs, another build leaves its folder alone.
            assert bulk.remove_stale_folders(str(temp)) == 0
            assert sorted(p.name for p in temp.iterdir()) == sorted(
                [store.folder.name, "sitemapgen-build-live", "sitemapgen-build-nolock"]
            )
        finally:
            store.close()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert bulk.remove_stale_folders(str(temp)) == 1  # the holder is gone: its folder goes
    assert [p.name for p in temp.iterdir()] == ["sitemapgen-build-nolock"]


MAIN_SCRIPT = """
import sys
from datetime import datetime, timezone
from pathlib import Path

with open(sys.argv[1], "a") as marks:  # one line each time this script is run
    marks.write(__name__ + "\\n")

if __name__ == "__main__":
    from scrapy_sitemapgen.build.input_reader import build_store
    from scrapy_sitemapgen.sitemaps.urls import UrlPolicy

    store, tally = build_store(
        Path(sys.argv[2]), UrlPolicy(), datetime.now(timezone.utc), workers=2, temp_dir=sys.argv[3]
    )
    try:
        print(tally.records, len(store), "__file__" in vars(sys.modules["__main__"]))
    finally:
        store.close()
"""


def test_workers_do_not_run_the_main_script_again(tmp_path: Path) -> None:
    """The ``scrapy`` command is a script: spawned workers would run it again before their
    first task (all of Scrapy's imports, for nothing). The script runs once, the records
    are all read, and the script's ``__file__`` is back afterwards."""
    script = tmp_path / "main.py"
    script.write_text(MAIN_SCRIPT)
    marks = tmp_path / "marks.txt"
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(json.dumps({"loc": f"https://a.example/{n}"}) + "\n" for n in range(500))
    )
    result = subprocess.run(
        [sys.executable, str(script), str(marks), str(feed), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["500", "500", "True"]
    assert marks.read_text().split() == ["__main__"]


def _hostile_records(count: int) -> list[object]:
    """Records that take every road of reading and writing: refused URLs, dates, media and
    news, escapes, non-ASCII, repeats."""
    records: list[object] = []
    for n in range(count):
        records += [
            {
                "loc": f"https://a.example/p{n}?x=1&y=<2>",
                "lastmod": f"2020-01-0{1 + n % 9}T10:00:00+02:00",
                "changefreq": "daily",
                "priority": 0.5,
                "images": [
                    f"https://a.example/i{n}.jpg",
                    "javascript:x",
                    f"https://a.example/caf\u00e9{n}.jpg",
                ],
                "videos": [
                    {
                        "thumbnail_loc": f"https://a.example/t{n}.jpg",
                        "title": "T & <t>",
                        "description": "d",
                        "content_loc": f"https://a.example/v{n}.mp4",
                        "duration": 30,
                    },
                    {"title": "no urls"},
                ],
                "news": {
                    "publication_name": "N",
                    "publication_language": "en",
                    "publication_date": RECENT,
                    "title": "t",
                }
                if n % 2
                else {"no": "fields"},
            },
            {
                "loc": f"https://a.example/p{n}",
                "lastmod": "bogus",
                "priority": 7,
                "changefreq": "sometimes",
                "images": "not a list",
            },
            {
                "loc": f"https://a.example/p{n}",
                "lastmod": "2999-01-01",
            },  # a repeat, from the future
            {"loc": f"ftp://a.example/{n}"},
            {"loc": f"https://user:pw@a.example/{n}"},
            {"loc": f"http://b.example:8080/caf\u00e9/{n};jsessionid=1"},
            [n],
        ]
    return records


def test_worker_tasks_leave_no_reference_cycles(tmp_path: Path) -> None:
    """Worker processes run without the cyclic garbage collector (build.pool), so
    reading and staging must leave nothing that only it could free: whatever the records,
    reference counting frees every object. Without that, a worker's memory would grow with
    the feed. Checked with the collector off, as in a worker, on every kind of record."""
    import gc
    import io

    from scrapy.settings import Settings

    from scrapy_sitemapgen.publish.staging import _noted, fresh_news, with_rules
    from scrapy_sitemapgen.settings import Config
    from scrapy_sitemapgen.sitemaps.writer import write_origin
    from scrapy_sitemapgen.state.url_notes import UrlNotes
    from scrapy_sitemapgen.stats import Tally

    feed = tmp_path / "feed.jsonl"
    _write_feed(feed, _hostile_records(300))
    gc.collect()
    gc.disable()
    try:
        # One worker: the feed is read in this process, by the read_range a worker runs.
        store, tally = build_store(
            feed,
            UrlPolicy(strip_params=frozenset({"jsessionid"})),
            NOW,
            workers=1,
            temp_dir=str(tmp_path),
            run_records=500,
        )
        after_reading = gc.collect()
        # What a staging worker runs per URL (staging.stage_origin): the rules, the news
        # filter, the URLs noted for the state file, the writer.
        config = Config.from_settings(
            Settings(
                {
                    "SITEMAPGEN_ENABLED": True,
                    "SITEMAPGEN_CHANGEFREQ": [[r"/p1", "hourly"]],
                    "SITEMAPGEN_PRIORITY": [[r"caf", 0.3]],
                }
            )
        )
        written = noted = 0
        for origin in store.origins():
            notes = UrlNotes(iter(()), lambda seq, data: None)
            output = write_origin(
                _noted(with_rules(store.entries(origin), config), notes),
                news=fresh_news(store.news_entries(origin), NOW, config.news_max_age, Tally()),
                scope=origin.root,
                base_url=origin.root,
                lastmod="2020-01-01",
                open_sink=lambda name: io.BytesIO(),
            )
            written += output.url_count
            noted += notes.finish()[0]
        after_writing = gc.collect()
    finally:
        gc.enable()
    store.close()
    assert tally.records == 4 * 300 + 1 and len(tally.counts) >= 8  # every road was taken
    assert written == noted == 3 * 300 + 1  # p{n}?x..., p{n} (thrice), b.example; the BOM record
    assert (after_reading, after_writing) == (0, 0)


def test_workers_run_without_the_cyclic_collector_and_the_parent_keeps_it(tmp_path: Path) -> None:
    import gc

    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(json.dumps({"loc": f"https://a.example/{n}"}) + "\n" for n in range(50))
    )
    store, _ = build_store(feed, UrlPolicy(), NOW, workers=2, temp_dir=str(tmp_path))
    try:
        pool = store.pool()
        assert pool is not None
        assert [pool.submit(gc.isenabled).result() for _ in range(4)] == [False] * 4
        assert gc.isenabled()
    finally:
        store.close()


def test_the_build_command_pauses_the_collector_while_it_runs_and_restores_it() -> None:
    """The one place the collector changes: the build's own processes. It is off inside
    and as it was found after, on or off."""
    import gc

    from scrapy_sitemapgen.build.pool import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("a failed build")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_run_store_is_true_without_merging_its_runs(tmp_path: Path) -> None:
    """``if store`` / ``store or other`` must not merge every run to count the URLs (it
    did, once, before every build's write): the truth of a source is not its size."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(json.dumps({"loc": f"https://a.example/{n}"}) + "\n" for n in range(20))
    )
    store, _ = build_store(feed, UrlPolicy(), NOW, workers=1, temp_dir=str(tmp_path))
    try:
        for path in tmp_path.glob("sitemapgen-build-*/run-*"):
            path.unlink()  # a merge would now fail
        assert store
        assert (store or None) is store
    finally:
        store.close()


def test_the_ranges_counts_merge_into_one_line_an_origin(tmp_path: Path) -> None:
    """Each range writes its origins' counts (rows, rows with news, runs) to a file in key
    order; merged, the files give each origin once, in key order, with its counts summed
    over the ranges: more origins than a block holds, some in one range only, some in
    each, and one spilled twice in a range."""
    import random

    rng = random.Random(5)
    keys = [f"https://h{n:05d}.example/" for n in range(1300)]
    expected: dict[str, list[int]] = {}
    paths = []
    for tag in range(3):
        runs = spills.RangeSpills(tmp_path, str(tag), run_records=10**6)
        for _spill in range(2):
            for key in rng.sample(keys, 700):
                news = rng.random() < 0.3
                rows = [
                    (
                        f"{key}p{n}",
                        None,
                        None,
                        None,
                        None,
                        None,
                        ("N", "en", "2024", "T") if news else None,
                    )
                    for n in range(rng.randint(1, 3))
                ]
                runs.pending[key] = rows
                runs.held += len(rows)
                counts = expected.setdefault(key, [0, 0, 0])
                counts[0] += len(rows)
                counts[1] += len(rows) if news else 0
                counts[2] += 1
            runs.spill()
        paths.append(runs.finish().counts)
    merged = list(run_merge.merged_counts(paths))
    assert [key for key, *_ in merged] == sorted(expected)
    assert {key: [rows, news, spread] for key, rows, news, spread in merged} == expected
    assert max(spread for *_, spread in merged) == 6
