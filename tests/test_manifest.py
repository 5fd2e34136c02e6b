"""The publish state's URL set: what came and went between runs (the close log's ``+N, -M``),
kept as blocks in a real SQLite file, and a state file of 0.1.0 (a row per URL) read on."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_sitemapgen.sitemaps.manifest import FileRecord, manifest_json
from scrapy_sitemapgen.state.statefile import PublishState
from scrapy_sitemapgen.state.url_notes import URL_BLOCK, URLS, UrlCounts, UrlNotes

if TYPE_CHECKING:
    from pathlib import Path

OUT = "/out"
ORIGIN = "https_example.com_443"


def counted(path: Path, locs: list[str], origin: str = ORIGIN) -> UrlCounts:
    """One run: note ``locs`` (sorted, as every store gives them), commit, close."""
    state = PublishState(path)
    try:
        notes = state.url_notes(OUT, origin)
        notes.note_all(sorted(locs))
        counts = notes.finish()
        state.commit(
            OUT, origin, [FileRecord("sitemap.xml", "index", 1, 10, "ab", "2026-01-01", True)]
        )
        return counts
    finally:
        state.close()


def publish(path: Path, locs: list[str], origin: str = ORIGIN) -> tuple[int, int]:
    """:func:`counted`'s URLs added and removed."""
    counts = counted(path, locs, origin)
    return counts.added, counts.removed


def url(n: int) -> str:
    return f"https://example.com/page-{n:07d}"


def test_changes_across_runs_are_the_set_differences(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    first = [url(n) for n in range(5000)]
    second = [url(n) for n in range(3, 5000) if n % 7] + [url(n) for n in range(5000, 5004)]
    assert publish(path, first) == (5000, 0)
    # computed by hand: 3 dropped at the start, the multiples of 7 from 7 to 4998 dropped
    # (714 of them), 4 new at the end
    assert publish(path, second) == (4, 3 + 714)
    assert publish(path, second) == (0, 0)


def test_the_previous_count_is_the_set_the_run_before_noted(tmp_path: Path) -> None:
    """The guard on shrinking's base: the URLs the previous run noted, by the notes' own
    count (4,997 from 3 to 4,999, less the 714 multiples of 7, and 4 new: 4,287)."""
    path = tmp_path / "state.sqlite3"
    second = [url(n) for n in range(3, 5000) if n % 7] + [url(n) for n in range(5000, 5004)]
    assert counted(path, [url(n) for n in range(5000)]).previous == 0
    assert counted(path, second).previous == 5000
    assert counted(path, [url(1)]) == (1, 4287, 4287)


def test_origins_and_outputs_are_apart(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    publish(path, [url(1), url(2)])
    assert publish(path, [url(1)], origin="http_example.com_80") == (1, 0)
    assert publish(path, [url(2), url(3)]) == (1, 1)


def test_blocks_hold_the_set_in_few_rows(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    count = URL_BLOCK * 2 + 17
    publish(path, [url(n) for n in range(count)])
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT COUNT(*) FROM url_blocks").fetchone()[0]
    assert rows == 3
    assert publish(path, [url(n) for n in range(count)]) == (0, 0)


def test_out_of_order_notes_are_refused(tmp_path: Path) -> None:
    notes = UrlNotes(iter(()), lambda seq, data: None)
    notes.note_all([url(2)])
    notes.note_all([url(2)])  # the same URL again is one URL
    with pytest.raises(ValueError, match="loc order"):
        notes.note_all([url(1)])
    assert notes.finish() == (1, 0, 0)


def test_a_state_file_of_0_1_0_is_read_then_moved_to_blocks(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as db:  # the 0.1.0 schema, as that release created it
        db.execute(
            "CREATE TABLE urls (output TEXT NOT NULL, origin TEXT NOT NULL, loc TEXT NOT NULL,"
            " PRIMARY KEY (output, origin, loc)) WITHOUT ROWID"
        )
        db.executemany(
            "INSERT INTO urls VALUES (?, ?, ?)",
            [(OUT, ORIGIN, url(n)) for n in range(URL_BLOCK + 5)] + [("/other", ORIGIN, url(1))],
        )
    locs = [url(n) for n in range(2, URL_BLOCK + 9)]
    assert publish(path, locs) == (4, 2)
    with sqlite3.connect(path) as db:
        left = db.execute("SELECT output FROM urls").fetchall()
    assert left == [("/other",)]  # only the published pair moved
    assert publish(path, locs) == (0, 0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sets(st.integers(0, 3 * URL_BLOCK), max_size=3 * URL_BLOCK), min_size=1, max_size=4
    ),
    st.sampled_from(["", "\u00e9", "%C3%A9", "\U0001f600"]),
)
def test_changes_match_set_arithmetic_over_runs(
    tmp_path_factory: pytest.TempPathFactory, runs: list[set[int]], tail: str
) -> None:
    path = tmp_path_factory.mktemp("state") / "state.sqlite3"
    previous: set[str] = set()
    for numbers in runs:
        # Non-ASCII tails: Python's order must be the one the blocks keep (code points).
        current = {f"{url(n)}{tail if n % 3 else ''}" for n in numbers}
        assert publish(path, list(current)) == (len(current - previous), len(previous - current))
        previous = current


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(
    origin=_text,
    files=st.lists(
        st.builds(
            FileRecord,
            name=_text,
            kind=st.sampled_from(["urlset", "news", "text", "index", "robots", "manifest"]),
            entries=st.integers(0, 50_000),
            size=st.integers(0, 52_428_800),
            sha256=_text,
            lastmod=_text,
            changed=st.booleans(),
        ),
        min_size=0,
        max_size=5,
    ),
)
def test_manifest_is_the_json_of_its_files(origin: str, files: list[FileRecord]) -> None:
    """The manifest is JSON with one-space indents (non-ASCII as it is, quotes and control
    characters escaped) of the origin and each file's facts, in order, ``changed`` left
    out; read back, it is that document."""
    document = {
        "origin": origin,
        "files": [
            {
                "name": f.name,
                "kind": f.kind,
                "entries": f.entries,
                "bytes": f.size,
                "sha256": f.sha256,
                "lastmod": f.lastmod,
            }
            for f in files
        ],
    }
    data = manifest_json(origin, files)
    assert data == (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode()
    assert json.loads(data) == document


# --- a group of origins at once (issue 20: many origins) ------------------------------


def _records(tag: str) -> list[FileRecord]:
    return [
        FileRecord("sitemap-1.xml.gz", "urlset", 3, 300, f"{tag}1", "2026-01-01", True),
        FileRecord("robots.txt", "robots", 0, 40, f"{tag}2", "2026-01-01", True),
        FileRecord("sitemap.xml", "index", 1, 90, f"{tag}3", "2026-01-02", True),
    ]


def test_a_group_committed_at_once_is_what_origin_by_origin_gives(tmp_path: Path) -> None:
    """commit_all writes each table once for the whole group: the rows must be those of
    one commit per origin, and a later group replaces only its own origins' rows."""
    origins = [f"https_host{n}.example_443" for n in range(1200)]  # over a query's 500
    together, apart = PublishState(tmp_path / "a.sqlite3"), PublishState(tmp_path / "b.sqlite3")
    try:
        for state in (together, apart):
            for origin in origins:
                notes = state.url_notes(OUT, origin)
                notes.note_all([f"https://{origin}/a", f"https://{origin}/b"])
                notes.finish()
        together.commit_all(OUT, [(o, _records(o)) for o in origins])
        for origin in origins:
            apart.commit(OUT, origin, _records(origin))
        # The second run publishes one origin anew; the others keep what they had.
        for state in (together, apart):
            notes = state.url_notes(OUT, origins[7])
            notes.note_all([f"https://{origins[7]}/c"])
            notes.finish()
        together.commit_all(OUT, [(origins[7], _records("again"))])
        apart.commit(OUT, origins[7], _records("again"))
        tables = ("files", "url_blocks", "sections")
        dumps = [
            {t: sorted(s._db.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}
            for s in (together, apart)
        ]
        assert dumps[0] == dumps[1]
        assert len(dumps[0]["files"]) == 3 * len(origins)
        assert together.previous_files(OUT, origins[7])["sitemap.xml"] == ("again3", "2026-01-02")
        assert together.previous_files(OUT, origins[8])["sitemap.xml"] == (
            f"{origins[8]}3",
            "2026-01-02",
        )
        # previous_files_of is previous_files for each, in queries of up to 500 origins.
        wanted = [*origins, "https_never.example_443"]
        found = together.previous_files_of(OUT, wanted)
        assert found == {o: together.previous_files(OUT, o) for o in origins}
    finally:
        together.close()
        apart.close()


def test_stored_origins_reads_only_the_origins_the_state_holds(tmp_path: Path) -> None:
    """A staging worker asks once which of its origins have URL blocks: those read their
    previous URLs, the others (new hosts) read nothing, and a state of 0.1.0 (rows in
    ``urls``) is read for every origin."""
    from scrapy_sitemapgen.state.notes import StoredOrigins

    def locs(stored: StoredOrigins, output: str, origin: str) -> list[str]:
        return [loc for loc, _ in stored.previous(URLS, output, origin)]

    path = tmp_path / "state.sqlite3"
    publish(path, ["https://example.com/a", "https://example.com/b"])
    db = sqlite3.connect(path)
    try:
        stored = StoredOrigins(db, OUT, [ORIGIN, "https_new.example_443"])
        assert locs(stored, OUT, ORIGIN) == ["https://example.com/a", "https://example.com/b"]
        assert locs(stored, OUT, "https_new.example_443") == []
        assert locs(stored, "/elsewhere", ORIGIN) == []  # asked of OUT only: none
        db.execute("CREATE TABLE urls (output TEXT, origin TEXT, loc TEXT)")
        db.execute("INSERT INTO urls VALUES (?, ?, ?)", (OUT, "https_old.example_443", "x"))
        old = StoredOrigins(db, OUT, ["https_old.example_443"])
        assert locs(old, OUT, "https_old.example_443") == ["x"]
    finally:
        db.close()
