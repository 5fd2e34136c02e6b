"""SqliteFactStore on real SQLite files: dedup, the merge rules, ordering, resume from the
same file (JOBDIR), refusing foreign files, and flat memory however many URLs are recorded.
"""

from __future__ import annotations

import itertools
import sqlite3
import tracemalloc
from typing import TYPE_CHECKING

import pytest

from scrapy_sitemapgen.sitemaps.facts import Alternate, News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.store.sqlite import SqliteFactStore, StoreError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

SITE = Origin("https", "www.example.com", 443)
LOC = "https://www.example.com/page"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"


@pytest.fixture
def store(path: Path) -> Iterator[SqliteFactStore]:
    opened = SqliteFactStore(path)
    yield opened
    opened.close()


def only_entry(store: SqliteFactStore, origin: Origin = SITE) -> UrlFacts:
    entries = list(store.entries(origin))
    assert len(entries) == 1, entries
    return entries[0]


# --- dedup ------------------------------------------------------------------------------


def test_dedup_by_loc(store: SqliteFactStore) -> None:
    for _ in range(3):
        store.record(UrlFacts(LOC))
    store.record(UrlFacts(LOC), from_item=True)
    store.record(UrlFacts(LOC + "/other"))
    assert len(store) == 2
    assert [f.loc for f in store.entries(SITE)] == [LOC, LOC + "/other"]


def test_locs_that_differ_are_different_urls(store: SqliteFactStore) -> None:
    # The loc is the key as given: path case and query are part of the URL (RFC 3986 6.2.2).
    locs = [LOC, LOC + "?a=1", LOC + "?a=2", "https://www.example.com/Page", LOC + "/"]
    for loc in locs:
        store.record(UrlFacts(loc))
    assert len(store) == 5


# --- merge rules ------------------------------------------------------------------------

PAGE_LASTMODS = [
    "2024-01-01T00:00:00+00:00",
    "2024-03-01T08:00:00+00:00",
    "2024-02-01T00:00:00+00:00",
]


@pytest.mark.parametrize("order", list(itertools.permutations(PAGE_LASTMODS)), ids=str)
def test_newest_page_lastmod_wins(store: SqliteFactStore, order: tuple[str, ...]) -> None:
    for lastmod in order:
        store.record(UrlFacts(LOC, lastmod=lastmod))
    assert only_entry(store).lastmod == "2024-03-01T08:00:00+00:00"


@pytest.mark.parametrize(
    "order",
    [("2024-03-01", "2024-02-28T23:00:00+00:00"), ("2024-02-28T23:00:00+00:00", "2024-03-01")],
    ids=["date-first", "datetime-first"],
)
def test_newest_page_lastmod_wins_across_date_and_datetime(
    store: SqliteFactStore, order: tuple[str, str]
) -> None:
    # P4 allows both forms; 1 March (a date) is later than 28 February 23:00 UTC.
    for lastmod in order:
        store.record(UrlFacts(LOC, lastmod=lastmod))
    assert only_entry(store).lastmod == "2024-03-01"


def test_page_without_lastmod_keeps_the_known_one(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC, lastmod="2024-01-01"))
    store.record(UrlFacts(LOC))
    assert only_entry(store).lastmod == "2024-01-01"


def test_no_lastmod_at_all(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC))
    store.record(UrlFacts(LOC, changefreq="daily"), from_item=True)
    assert only_entry(store) == UrlFacts(LOC, None, "daily", None)


@pytest.mark.parametrize("item_first", [True, False], ids=["item-first", "page-first"])
def test_item_lastmod_beats_page_lastmod(store: SqliteFactStore, item_first: bool) -> None:
    # The spider knows better than the server's Last-Modified, even when the page's is newer.
    page = UrlFacts(LOC, lastmod="2024-06-01T00:00:00+00:00")
    item = UrlFacts(LOC, lastmod="2023-01-01")
    records = [(item, True), (page, False)] if item_first else [(page, False), (item, True)]
    for facts, from_item in records:
        store.record(facts, from_item=from_item)
    assert only_entry(store).lastmod == "2023-01-01"


def test_item_lastmod_beats_page_lastmod_across_flushes(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC, lastmod="2023-01-01"), from_item=True)
    store.flush()
    store.record(UrlFacts(LOC, lastmod="2024-06-01"))
    store.flush()
    store.record(UrlFacts(LOC, lastmod="2024-07-01"))
    assert only_entry(store).lastmod == "2023-01-01"


def test_item_without_lastmod_keeps_the_page_lastmod(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC, lastmod="2024-01-01"))
    store.record(UrlFacts(LOC, priority="0.8"), from_item=True)
    assert only_entry(store) == UrlFacts(LOC, "2024-01-01", None, "0.8")


def test_later_item_changefreq_and_priority_replace_earlier_ones(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC, changefreq="daily", priority="0.3"), from_item=True)
    store.record(UrlFacts(LOC, changefreq="weekly", priority="0.9"), from_item=True)
    entry = only_entry(store)
    assert (entry.changefreq, entry.priority) == ("weekly", "0.9")


def test_item_without_a_field_keeps_the_earlier_item_value(store: SqliteFactStore) -> None:
    store.record(UrlFacts(LOC, changefreq="daily", priority="0.3"), from_item=True)
    store.record(UrlFacts(LOC, priority="0.9"), from_item=True)
    store.record(UrlFacts(LOC, changefreq="monthly"), from_item=True)
    entry = only_entry(store)
    assert (entry.changefreq, entry.priority) == ("monthly", "0.9")


@pytest.mark.parametrize("flush_between", [False, True], ids=["same-batch", "separate-batches"])
def test_page_record_does_not_erase_item_changefreq(
    store: SqliteFactStore, flush_between: bool
) -> None:
    store.record(UrlFacts(LOC, changefreq="daily", priority="0.7"), from_item=True)
    if flush_between:
        store.flush()
    store.record(UrlFacts(LOC, lastmod="2024-01-01"))
    assert only_entry(store) == UrlFacts(LOC, "2024-01-01", "daily", "0.7")


# --- reading: origins and entries -------------------------------------------------------

MIXED_LOCS = [
    "https://b.example/",
    "http://b.example/x",
    "http://a.example:8080/",
    "http://a.example/z",
    "http://a.example/B",
    "http://a.example/a?x=1",
    "http://a.example/a/b",
    "http://a.example/a-b",
    "http://a.example/a",
    "http://a.example/%C3%A9",
    "http://[::1]:8080/",
]


def test_origins_sorted(store: SqliteFactStore) -> None:
    for loc in MIXED_LOCS:
        store.record(UrlFacts(loc))
    assert store.origins() == [
        Origin("http", "[::1]", 8080),  # "[" (0x5B) sorts before "a" (0x61)
        Origin("http", "a.example", 80),
        Origin("http", "a.example", 8080),
        Origin("http", "b.example", 80),
        Origin("https", "b.example", 443),
    ]


def test_entries_of_one_origin_in_code_point_order(store: SqliteFactStore) -> None:
    for loc in MIXED_LOCS:
        store.record(UrlFacts(loc))
    # Code points: "%" 0x25 < "-" 0x2D < "/" 0x2F < "?" 0x3F < "B" 0x42 < "a" 0x61 < "z" 0x7A,
    # and a prefix sorts before its extensions.
    assert [f.loc for f in store.entries(Origin("http", "a.example", 80))] == [
        "http://a.example/%C3%A9",
        "http://a.example/B",
        "http://a.example/a",
        "http://a.example/a-b",
        "http://a.example/a/b",
        "http://a.example/a?x=1",
        "http://a.example/z",
    ]
    assert [f.loc for f in store.entries(Origin("http", "a.example", 8080))] == [
        "http://a.example:8080/"
    ]
    assert [f.loc for f in store.entries(Origin("https", "b.example", 443))] == [
        "https://b.example/"
    ]
    assert list(store.entries(Origin("https", "a.example", 443))) == []


def test_empty_store(store: SqliteFactStore) -> None:
    assert len(store) == 0
    assert store.origins() == []
    assert list(store.entries(SITE)) == []


# --- durability: batching and resume ----------------------------------------------------


def committed_locs(path: Path) -> list[str]:
    """What another reader of the file sees: only committed rows."""
    reader = sqlite3.connect(path)
    try:
        return [loc for (loc,) in reader.execute("SELECT loc FROM urls ORDER BY loc")]
    finally:
        reader.close()


def test_records_are_visible_after_flush(path: Path) -> None:
    writer = SqliteFactStore(path, batch_size=1000)
    try:
        for i in range(3):
            writer.record(UrlFacts(f"{LOC}/{i}"))
        writer.flush()
        # Another connection (another reader of the file) sees the flushed records.
        assert committed_locs(path) == [f"{LOC}/{i}" for i in range(3)]
    finally:
        writer.close()


def test_len_and_entries_include_unflushed_records(path: Path) -> None:
    store = SqliteFactStore(path, batch_size=1000)
    try:
        for i in range(3):
            store.record(UrlFacts(f"{LOC}/{i}"))
        assert len(store) == 3
        store.record(UrlFacts(f"{LOC}/3"))
        assert [f.loc for f in store.entries(SITE)] == [f"{LOC}/{i}" for i in range(4)]
        store.record(UrlFacts("http://other.example/"))
        assert store.origins() == [Origin("http", "other.example", 80), SITE]
    finally:
        store.close()


def test_full_batches_are_written_without_flush(path: Path) -> None:
    store = SqliteFactStore(path, batch_size=2)
    try:
        for i in range(5):
            store.record(UrlFacts(f"{LOC}/{i}"))
        assert len(committed_locs(path)) == 4  # two full batches; the fifth still waits
        assert len(store) == 5
    finally:
        store.close()


def test_reopen_keeps_everything(path: Path) -> None:
    # The JOBDIR case: the crawl pauses (close), later resumes on the same file.
    first = SqliteFactStore(path, batch_size=1000)
    first.record(UrlFacts(LOC, lastmod="2024-01-01"))
    first.record(UrlFacts(LOC + "/item", changefreq="daily", priority="0.9"), from_item=True)
    first.record(UrlFacts("http://other.example/x", lastmod="2024-02-02T02:02:02+00:00"))
    first.close()  # nothing flushed explicitly: close must do it

    second = SqliteFactStore(path)
    try:
        assert len(second) == 3
        assert second.origins() == [Origin("http", "other.example", 80), SITE]
        assert list(second.entries(SITE)) == [
            UrlFacts(LOC, "2024-01-01"),
            UrlFacts(LOC + "/item", None, "daily", "0.9"),
        ]
        # Facts recorded after the resume merge with those from before the pause.
        second.record(UrlFacts(LOC + "/item", lastmod="2024-03-03"))
        second.record(UrlFacts(LOC, lastmod="2023-12-31"))
        assert list(second.entries(SITE)) == [
            UrlFacts(LOC, "2024-01-01"),
            UrlFacts(LOC + "/item", "2024-03-03", "daily", "0.9"),
        ]
    finally:
        second.close()

    third = SqliteFactStore(path)
    try:
        assert len(third) == 3
        assert (
            only_entry(third, Origin("http", "other.example", 80)).lastmod
            == "2024-02-02T02:02:02+00:00"
        )
    finally:
        third.close()


def test_creates_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "job" / "sitemapgen" / "store.sqlite"
    store = SqliteFactStore(path)
    store.record(UrlFacts(LOC))
    store.close()
    assert path.is_file()


def test_an_empty_file_becomes_a_store(path: Path) -> None:
    path.write_bytes(b"")
    store = SqliteFactStore(path)
    try:
        store.record(UrlFacts(LOC))
        assert len(store) == 1
    finally:
        store.close()


# --- foreign files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"this is not an SQLite database\n" * 200, bytes(range(256)) * 16],
    ids=["text", "binary"],
)
def test_garbage_file_is_a_store_error(path: Path, content: bytes) -> None:
    path.write_bytes(content)
    with pytest.raises(StoreError) as info:
        SqliteFactStore(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content  # left as it was


@pytest.mark.parametrize("user_version", [0, 2, 7])
def test_database_of_another_schema_is_a_store_error(path: Path, user_version: int) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE things (name TEXT)")
        db.execute("INSERT INTO things VALUES ('keep me')")
        db.execute(f"PRAGMA user_version = {user_version}")
    db.close()

    with pytest.raises(StoreError) as info:
        SqliteFactStore(path)
    assert str(path) in str(info.value)

    # Another program's database is not modified.
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == user_version
        tables = [
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        assert tables == ["things"]
        assert db.execute("SELECT name FROM things").fetchall() == [("keep me",)]
    finally:
        db.close()


# --- memory -----------------------------------------------------------------------------

URL_COUNT = 200_000
# Holding the recorded URLs in Python would cost far more than this bound: 200,000 locs of
# 44 characters are about 18 MB as str objects alone (a 49-byte str header plus the text),
# before any tuple, dict or set around them. Writing through batches of 500 rows keeps only
# one batch (a few hundred KB at most) alive. 2 MB leaves room for interpreter and sqlite3
# module noise and still fails, by a factor of 9 or more, for any store that keeps one Python
# object per URL. (tracemalloc sees Python allocations only; SQLite's own page cache is
# bounded by its cache_size, not by the number of URLs.)
PEAK_BOUND = 2 * 1024 * 1024


def many_facts(count: int) -> Iterator[UrlFacts]:
    for i in range(count):
        yield UrlFacts(
            f"https://www.example.com/catalog/item-{i:07d}",
            lastmod="2024-05-06T07:08:09+00:00",
            changefreq="weekly" if i % 2 else None,
        )


def test_memory_stays_flat_while_recording(path: Path) -> None:
    store = SqliteFactStore(path)
    try:
        tracemalloc.start()
        try:
            for facts in many_facts(URL_COUNT):
                store.record(facts)
            store.flush()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < PEAK_BOUND, f"peak {peak:,} bytes while recording {URL_COUNT:,} URLs"
        assert len(store) == URL_COUNT

        # Reading them back streams too: one origin, in loc order.
        tracemalloc.start()
        try:
            count = 0
            previous = ""
            for entry in store.entries(SITE):
                assert entry.loc > previous
                previous = entry.loc
                count += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert count == URL_COUNT
        assert peak < PEAK_BOUND, f"peak {peak:,} bytes while reading {URL_COUNT:,} URLs"
    finally:
        store.close()


# --- media, alternates and news (G7) ----------------------------------------------------

CDN = "https://cdn.example.net"
FULL_VIDEO = Video(
    thumbnail_loc=f"{CDN}/thumbs/1.jpg",
    title="Grilling steaks & fish <live> at Joe's",
    description="Caf\u00e9 d\u00e9mo \u2014 \u65e5\u672c \U0001f600",  # non-ASCII survives the JSON
    content_loc=f"{CDN}/video/1.mp4",
    player_loc="https://www.example.com/player?v=1&autoplay=0",
    duration=600,
    publication_date="2024-04-30T10:00:00+00:00",
)
PLAYER_ONLY = Video(
    f"{CDN}/thumbs/2.jpg", "Second", "Only the required fields", player_loc=f"{CDN}/embed/2"
)
ALTERNATES = (
    Alternate("en", LOC),
    Alternate("de-CH", "https://www.example.com/de-ch/page"),
    Alternate("x-default", LOC),
)
NEWS = News(
    "The Example Times", "en", "2024-05-06T07:00:00+00:00", "Companies A & B in merger talks"
)


def test_g7_media_survive_close_and_reopen(path: Path) -> None:
    first = SqliteFactStore(path)
    first.record(
        UrlFacts(
            LOC,
            "2024-05-01",
            images=(f"{CDN}/a.jpg", f"{CDN}/b.jpg?w=1&h=2"),
            videos=(FULL_VIDEO, PLAYER_ONLY),
            alternates=ALTERNATES,
        )
    )
    first.record(UrlFacts(LOC, changefreq="daily", news=NEWS), from_item=True)
    first.close()

    second = SqliteFactStore(path)
    try:
        assert list(second.entries(SITE)) == [
            UrlFacts(
                LOC,
                "2024-05-01",
                "daily",
                None,
                images=(f"{CDN}/a.jpg", f"{CDN}/b.jpg?w=1&h=2"),
                videos=(FULL_VIDEO, PLAYER_ONLY),
                alternates=ALTERNATES,
                news=NEWS,
            )
        ]
    finally:
        second.close()


def test_item_media_survive_close_and_reopen(path: Path) -> None:
    first = SqliteFactStore(path)
    first.record(UrlFacts(LOC, images=(f"{CDN}/i.jpg",), videos=(PLAYER_ONLY,)), from_item=True)
    first.close()
    second = SqliteFactStore(path)
    try:
        assert only_entry(second) == UrlFacts(LOC, images=(f"{CDN}/i.jpg",), videos=(PLAYER_ONLY,))
    finally:
        second.close()


@pytest.mark.parametrize("flush_between", [False, True], ids=["same-batch", "separate-batches"])
def test_newest_page_record_replaces_page_media(
    store: SqliteFactStore, flush_between: bool
) -> None:
    # docs/items.rst: a page's images, videos and alternates come from its newest response.
    old_images = (f"{CDN}/old-1.jpg", f"{CDN}/old-2.jpg")
    store.record(UrlFacts(LOC, images=old_images, videos=(FULL_VIDEO,), alternates=ALTERNATES))
    if flush_between:
        store.flush()
    store.record(UrlFacts(LOC, images=(f"{CDN}/new.jpg",)))
    entry = only_entry(store)
    assert entry.images == (f"{CDN}/new.jpg",)
    assert entry.videos == ()
    assert entry.alternates == ()


@pytest.mark.parametrize("flush_between", [False, True], ids=["same-batch", "separate-batches"])
def test_newest_page_record_without_media_clears_page_media(
    store: SqliteFactStore, flush_between: bool
) -> None:
    # The page was fetched again and no longer shows the image, the video or the alternates:
    # its newest response says it has none, so none are listed (the merge rules, sitemaps/merge.py).
    store.record(
        UrlFacts(LOC, images=(f"{CDN}/gone.jpg",), videos=(FULL_VIDEO,), alternates=ALTERNATES)
    )
    if flush_between:
        store.flush()
    store.record(UrlFacts(LOC, lastmod="2024-06-01"))
    assert only_entry(store) == UrlFacts(LOC, "2024-06-01")


@pytest.mark.parametrize("item_first", [False, True], ids=["page-first", "item-first"])
def test_item_images_follow_page_images_without_duplicates(
    store: SqliteFactStore, item_first: bool
) -> None:
    page = UrlFacts(LOC, images=(f"{CDN}/p1.jpg", f"{CDN}/shared.jpg", f"{CDN}/p2.jpg"))
    item = UrlFacts(LOC, images=(f"{CDN}/i1.jpg", f"{CDN}/shared.jpg", f"{CDN}/i2.jpg"))
    records = [(item, True), (page, False)] if item_first else [(page, False), (item, True)]
    for facts, from_item in records:
        store.record(facts, from_item=from_item)
    assert only_entry(store).images == (
        f"{CDN}/p1.jpg",
        f"{CDN}/shared.jpg",
        f"{CDN}/p2.jpg",
        f"{CDN}/i1.jpg",
        f"{CDN}/i2.jpg",
    )


def test_item_images_capped_at_1000_per_url(store: SqliteFactStore) -> None:
    # Google's image extension: at most 1,000 <image:image> per <url>. 600 from the page,
    # then the item's first 400 new ones (its first 100 repeat page images).
    page = [f"{CDN}/p/{i}.jpg" for i in range(600)]
    item = page[:100] + [f"{CDN}/i/{i}.jpg" for i in range(600)]
    store.record(UrlFacts(LOC, images=tuple(page)))
    store.record(UrlFacts(LOC, images=tuple(item)), from_item=True)
    images = only_entry(store).images
    assert len(images) == 1000
    assert images == tuple(page) + tuple(f"{CDN}/i/{i}.jpg" for i in range(400))


def test_item_videos_follow_page_videos_deduplicated_by_media_urls(store: SqliteFactStore) -> None:
    page_video = Video(f"{CDN}/t/1.jpg", "Page title", "Page text", content_loc=f"{CDN}/v/1.mp4")
    # Same (content_loc, player_loc): the same video, described again; the page's is kept.
    same = Video(f"{CDN}/t/other.jpg", "Item title", "Item text", content_loc=f"{CDN}/v/1.mp4")
    # Same content_loc, another player: another (content_loc, player_loc) pair.
    with_player = Video(
        f"{CDN}/t/1.jpg", "Page title", "Page text", f"{CDN}/v/1.mp4", f"{CDN}/embed/1"
    )
    player_only = Video(f"{CDN}/t/3.jpg", "Third", "Text", player_loc=f"{CDN}/embed/3")
    store.record(UrlFacts(LOC, videos=(page_video, player_only)))
    store.record(UrlFacts(LOC, videos=(same, with_player, player_only)), from_item=True)
    assert only_entry(store).videos == (page_video, player_only, with_player)


def test_later_item_news_replaces_earlier_news(store: SqliteFactStore) -> None:
    later = News("The Example Times", "fr", "2024-05-07", "Fusion")
    store.record(UrlFacts(LOC, news=NEWS), from_item=True)
    store.flush()
    store.record(UrlFacts(LOC, news=later), from_item=True)
    store.record(UrlFacts(LOC, priority="0.9"), from_item=True)  # no news: keeps the last
    store.record(UrlFacts(LOC, lastmod="2024-05-08"))  # a page record: keeps it too
    assert only_entry(store).news == later


def test_news_entries_only_those_with_news_in_loc_order(store: SqliteFactStore) -> None:
    b_news = News("The Example Times", "en", "2024-05-06", "B")
    a_news = News("The Example Times", "en", "2024-05-05", "A")
    store.record(UrlFacts(f"{LOC}/c"))  # no news
    store.record(UrlFacts(f"{LOC}/b", "2024-05-06", images=(f"{CDN}/b.jpg",)))
    store.record(UrlFacts(f"{LOC}/b", news=b_news), from_item=True)
    store.record(UrlFacts(f"{LOC}/a", news=a_news), from_item=True)
    store.record(UrlFacts("https://other.example/n", news=NEWS), from_item=True)  # another origin
    assert list(store.news_entries(SITE)) == [
        UrlFacts(f"{LOC}/a", news=a_news),
        # The whole merged entry, media included: the writer decides what a news file holds.
        UrlFacts(f"{LOC}/b", "2024-05-06", images=(f"{CDN}/b.jpg",), news=b_news),
    ]
    assert [f.loc for f in store.news_entries(Origin("https", "other.example", 443))] == [
        "https://other.example/n"
    ]
    assert list(store.news_entries(Origin("http", "www.example.com", 80))) == []
    assert len(list(store.entries(SITE))) == 3


MERGE_PAGE = UrlFacts(
    LOC,
    "2024-05-01T00:00:00+00:00",
    images=(f"{CDN}/p.jpg", f"{CDN}/both.jpg"),
    videos=(FULL_VIDEO,),
    alternates=ALTERNATES,
)
MERGE_ITEM = UrlFacts(
    LOC,
    "2023-01-01",
    "weekly",
    "0.7",
    images=(f"{CDN}/both.jpg", f"{CDN}/i.jpg"),
    videos=(PLAYER_ONLY, FULL_VIDEO),
    news=NEWS,
)
MERGED = UrlFacts(
    LOC,
    "2023-01-01",  # the item's lastmod beats the page's
    "weekly",
    "0.7",
    images=(f"{CDN}/p.jpg", f"{CDN}/both.jpg", f"{CDN}/i.jpg"),
    videos=(FULL_VIDEO, PLAYER_ONLY),
    alternates=ALTERNATES,
    news=NEWS,
)


@pytest.mark.parametrize("item_first", [False, True], ids=["page-first", "item-first"])
@pytest.mark.parametrize("flush_between", [False, True], ids=["same-batch", "separate-batches"])
def test_media_merge_does_not_depend_on_arrival_order(
    store: SqliteFactStore, item_first: bool, flush_between: bool
) -> None:
    records = (
        [(MERGE_ITEM, True), (MERGE_PAGE, False)]
        if item_first
        else [(MERGE_PAGE, False), (MERGE_ITEM, True)]
    )
    for facts, from_item in records:
        store.record(facts, from_item=from_item)
        if flush_between:
            store.flush()
    assert only_entry(store) == MERGED
    assert list(store.news_entries(SITE)) == [MERGED]


# --- crash safety: commit window, ordered writes, lock, pending requests ---------------


def test_writes_older_than_max_delay_are_committed_by_the_next_write(path: Path) -> None:
    import time

    store = SqliteFactStore(path, batch_size=1000, max_delay=0.05)
    try:
        store.record(UrlFacts(f"{LOC}/0"))
        assert committed_locs(path) == []  # within the window: not yet durable
        time.sleep(0.06)
        store.record(UrlFacts(f"{LOC}/1"))  # the window has passed: both are committed
        assert committed_locs(path) == [f"{LOC}/0", f"{LOC}/1"]
    finally:
        store.close()


def test_a_second_store_on_the_same_file_fails_fast(path: Path) -> None:
    first = SqliteFactStore(path)
    try:
        with pytest.raises(StoreError, match="in use by process"):
            SqliteFactStore(path)
    finally:
        first.close()
    SqliteFactStore(path).close()  # released on close


def test_tracked_requests_until_answered(path: Path) -> None:
    store = SqliteFactStore(path, batch_size=1000)
    journal = store.journal()
    calls: list[str] = []

    def blob(name: str) -> Callable[[], bytes]:
        return lambda: calls.append(name) or name.encode()

    try:
        assert journal.track("a", blob("a")) is True
        assert journal.track("b", blob("b")) is True
        assert journal.track("a", blob("a again")) is False  # known: not serialised again
        assert calls == ["a", "b"]
        store.record(UrlFacts(LOC))
        journal.done("a")
        assert journal.pending() == [b"b"]
        # Answered requests stay known, so a later duplicate is no new request.
        assert journal.track("a", blob("a third time")) is False
        assert journal.pending() == [b"b"]
        journal.clear()
        assert journal.pending() == []
        assert journal.track("a", blob("a after clearing")) is True
    finally:
        store.close()


def test_pending_requests_survive_a_crash(path: Path) -> None:
    """What was committed survives the process dying without close()."""
    store = SqliteFactStore(path, batch_size=1)
    store.journal().track("k", lambda: b"\x80\x04blob")
    store.flush()
    store._db.close()  # the process dies: no final flush, no unlock call
    store._lock.close()
    reopened = SqliteFactStore(path)
    try:
        assert reopened.journal().pending() == [b"\x80\x04blob"]
    finally:
        reopened.close()


# --- the media column's JSON: orjson (the ``fast`` extra) writes the standard text ------


def test_media_json_is_the_standard_librarys_text_for_every_code_point() -> None:
    """The store's column text does not depend on whether orjson is installed: for every
    code point but the surrogates (which validated text never holds), orjson's compact
    JSON is the standard encoder's, and both read back the same."""
    import json

    from scrapy_sitemapgen.sitemaps.codec import _compact_json, _load_extra, _stdlib_compact_json

    assert _compact_json is not _stdlib_compact_json  # orjson is installed for the tests
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for start in range(0, len(every), 4096):
        text = every[start : start + 4096]
        value = {"i": (f"https://a.example/{text[:40]}",), "v": [[text, None, 7, "2024-01-01"]]}
        assert _compact_json(value) == _stdlib_compact_json(value)
        assert _load_extra(_compact_json(value)) == json.loads(_stdlib_compact_json(value))


def test_media_json_that_orjson_refuses_takes_the_standard_road() -> None:
    from scrapy_sitemapgen.sitemaps.codec import _compact_json, _load_extra, _stdlib_compact_json

    for value in ({"v": [["a\ud800b", None]]}, {"v": [["t", 2**70]]}):
        text = _compact_json(value)
        assert text == _stdlib_compact_json(value)
        assert _load_extra(text) == {
            key: [list(row) for row in rows] for key, rows in value.items()
        }
