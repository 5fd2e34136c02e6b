"""The merge rules are defined once (``sitemaps.merge.merge``); the SQLite store's SQL, the
Redis store's Lua and the offline build's row combining are held to it here, over random
records of a few URLs in random order."""

from __future__ import annotations

import json
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_sitemapgen.build.input_reader import build_store
from scrapy_sitemapgen.sitemaps.codec import COLUMNS, entry, fact_row
from scrapy_sitemapgen.sitemaps.facts import Alternate, News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.merge import latest_given, merge, newest
from scrapy_sitemapgen.sitemaps.urls import UrlPolicy, origin_of
from scrapy_sitemapgen.store.redis import RedisFactStore
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

if TYPE_CHECKING:
    from .helpers import RedisServer

SITE = "https://www.example.com"
LOCS = [f"{SITE}/a", f"{SITE}/b", f"{SITE}/c%C3%A9"]
NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)

lastmods = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "2024-01-01T00:00:00+00:00",
            "2024-01-02T00:00:00+00:00",
            "2024-03-05T12:30:00+00:00",
            "2023-12-31T23:59:59+00:00",
        ]
    ),
)
images = st.lists(st.sampled_from([f"{SITE}/i/{n}.png" for n in range(4)]), max_size=3, unique=True)
videos = st.lists(
    st.builds(
        Video,
        thumbnail_loc=st.just(f"{SITE}/t.jpg"),
        title=st.sampled_from(["one", "two"]),
        description=st.just("a clip"),
        content_loc=st.sampled_from([f"{SITE}/v1.mp4", f"{SITE}/v2.mp4", None]),
        player_loc=st.sampled_from([f"{SITE}/player", None]),
    ).filter(lambda v: v.content_loc or v.player_loc),
    max_size=2,
)
news = st.one_of(
    st.none(),
    st.builds(
        News,
        publication_name=st.sampled_from(["Daily", "Weekly"]),
        publication_language=st.just("en"),
        publication_date=st.just("2024-05-31T10:00:00+00:00"),
        title=st.sampled_from(["Headline", "Another"]),
    ),
)


@st.composite
def records(draw: st.DrawFn, items_only: bool = False) -> tuple[UrlFacts, bool]:
    from_item = True if items_only else draw(st.booleans())
    facts = UrlFacts(
        draw(st.sampled_from(LOCS)),
        draw(lastmods),
        draw(st.one_of(st.none(), st.sampled_from(["daily", "weekly"]))),
        draw(st.one_of(st.none(), st.sampled_from(["0.5", "0.8"]))),
        images=tuple(draw(images)),
        videos=tuple(draw(videos)),
        # Alternates come from pages only.
        alternates=()
        if from_item
        else tuple(
            Alternate(h, f"{SITE}/{h}/")
            for h in draw(st.lists(st.sampled_from(["en", "de"]), unique=True))
        ),
        news=draw(news),
    )
    return facts, from_item


def expected(recorded: list[tuple[UrlFacts, bool]]) -> list[UrlFacts]:
    """The pure rule, folded over the records in the order they came."""
    rows: dict[str, tuple[Any, ...]] = {}
    for facts, from_item in recorded:
        row = fact_row(facts, from_item)
        rows[facts.loc] = merge(rows[facts.loc], row) if facts.loc in rows else row
    return [entry(loc, rows[loc]) for loc in sorted(rows)]


PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_the_rule_column_by_column() -> None:
    """The rule as the docs state it, on one pair (written by hand)."""
    old = ("2024-01-02", "2024-01-01", "daily", "0.5", '{"i":["x"]}', None, None)
    new = ("2024-01-01", None, None, "0.8", "", '{"i":["y"]}', None)
    assert merge(old, new) == ("2024-01-02", "2024-01-01", "daily", "0.8", "", '{"i":["y"]}', None)
    assert len(COLUMNS) == len(old)
    assert newest(None, "2024") == "2024" and newest("2025", None) == "2025"
    assert latest_given("a", None) == "a" and latest_given("a", "") == ""


@PROPERTY
@given(st.lists(records(), min_size=1, max_size=12))
def test_sqlite_store_merges_as_the_rule(recorded: list[tuple[UrlFacts, bool]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteFactStore(Path(folder) / "store.sqlite3", batch_size=3)
        try:
            for facts, from_item in recorded:
                store.record(facts, from_item=from_item)
            got = list(store.entries(origin_of(LOCS[0])))
        finally:
            store.close()
    assert got == expected(recorded)


def _feed_line(facts: UrlFacts) -> str:
    record: dict[str, Any] = {"loc": facts.loc}
    for name in ("lastmod", "changefreq", "priority"):
        if getattr(facts, name) is not None:
            record[name] = getattr(facts, name)
    if facts.images:
        record["images"] = list(facts.images)
    if facts.videos:
        record["videos"] = [
            {
                k: v
                for k, v in zip(Video.__slots__, (getattr(video, s) for s in Video.__slots__))
                if v is not None
            }
            for video in facts.videos
        ]
    if facts.news:
        record["news"] = {s: getattr(facts.news, s) for s in News.__slots__}
    return json.dumps(record)


@PROPERTY
@given(st.lists(records(items_only=True), min_size=1, max_size=12))
def test_offline_build_merges_as_the_rule(recorded: list[tuple[UrlFacts, bool]]) -> None:
    """A feed is item records: its repeats combine by the same rule."""
    with tempfile.TemporaryDirectory() as folder:
        feed = Path(folder) / "feed.jsonl"
        feed.write_text("".join(_feed_line(facts) + "\n" for facts, _ in recorded))
        store, tally = build_store(
            feed, UrlPolicy(), NOW, workers=1, temp_dir=folder, run_records=4
        )
        try:
            got = list(store.entries(origin_of(LOCS[0])))
        finally:
            store.close()
    assert tally.counts == {}
    assert got == expected(recorded)


@PROPERTY
@given(st.lists(records(), min_size=1, max_size=12))
def test_redis_store_merges_as_the_rule(
    redis_server: RedisServer, recorded: list[tuple[UrlFacts, bool]]
) -> None:
    """The Lua merge, on a real Redis server; each example under keys of its own."""
    store = RedisFactStore(redis_server.url, prefix=f"merge-{uuid.uuid4().hex}", batch_size=3)
    try:
        for facts, from_item in recorded:
            store.record(facts, from_item=from_item)
        got = list(store.entries(origin_of(LOCS[0])))
    finally:
        store.close()
    assert got == expected(recorded)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_item_lastmod_beats_the_page_whatever_the_order(order: tuple[int, int]) -> None:
    page = (UrlFacts(LOCS[0], "2024-03-01T00:00:00+00:00"), False)
    item = (UrlFacts(LOCS[0], "2024-01-01T00:00:00+00:00"), True)
    pair = [(page, item)[i] for i in order]
    assert [e.lastmod for e in expected(pair)] == ["2024-01-01T00:00:00+00:00"]
