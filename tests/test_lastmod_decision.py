"""The lastmod decision (P4) is one module's (``sitemaps.lastmod``): the order of the
sources, newest wins, an item's beats the page's. The stores that mirror it in their own
language (the SQLite store's SQL upsert and select, the Redis store's Lua) are held to the
pure functions here over generated records in generated order; and the key a store files
a loc under is one function's (``urls.origin_key``), the origin's root."""

from __future__ import annotations

import functools
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.lastmod import OBSERVED, first_stated, newest, published
from scrapy_sitemapgen.sitemaps.urls import (
    Origin,
    UrlRejected,
    normalize_loc,
    origin_key,
    origin_of,
)
from scrapy_sitemapgen.store.redis import RedisFactStore
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

from .helpers import PROPERTY

if TYPE_CHECKING:
    from collections.abc import Iterator
    from random import Random

    from scrapy_sitemapgen.store.base import FactStore

    from .helpers import RedisServer

SITE = "https://www.example.com"
LOCS = [f"{SITE}/a", f"{SITE}/b", f"{SITE}/c%C3%A9"]

STORE_PROPERTY = settings(
    PROPERTY,
    max_examples=120,
    suppress_health_check=[
        *PROPERTY.suppress_health_check,
        HealthCheck.function_scoped_fixture,
    ],
)

# Valid W3C lastmods as the crawl writes them (P4): dates stay dates, date-times are in
# UTC to the second. Both forms of one day, and years of one more digit, so the string
# comparison every mirror makes is exercised where it could differ from a date's.
lastmods = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "2024-01-01",
            "2024-01-01T00:00:00+00:00",
            "2024-01-01T23:59:59+00:00",
            "2024-01-02",
            "2023-12-31T23:59:59+00:00",
            "1999-06-30",
            "0999-01-01T00:00:00+00:00",
        ]
    ),
)
records = st.lists(
    st.tuples(st.sampled_from(LOCS), lastmods, st.booleans()), min_size=1, max_size=12
)


def decided(recorded: list[tuple[str, str | None, bool]]) -> dict[str, str | None]:
    """The pure decision folded over the records in the order they came: the newest
    lastmod of each source, then the item's over the page's."""
    page: dict[str, str | None] = {}
    item: dict[str, str | None] = {}
    for loc, lastmod, from_item in recorded:
        source = item if from_item else page
        source[loc] = newest(source.get(loc), lastmod)
    return {loc: published(page.get(loc), item.get(loc)) for loc in sorted({*page, *item})}


def _published(
    store: FactStore, recorded: list[tuple[str, str | None, bool]]
) -> dict[str, str | None]:
    """What ``store`` publishes once ``recorded`` is recorded into it, in order; closed."""
    try:
        for loc, lastmod, from_item in recorded:
            store.record(UrlFacts(loc, lastmod), from_item=from_item)
        return {facts.loc: facts.lastmod for facts in store.entries(origin_of(SITE + "/"))}
    finally:
        store.close()


# --- the sources, in the settings' order --------------------------------------------------

BAD = None  # a candidate found invalid (counted by the caller), which passes to the next

# (case, SITEMAPGEN_LASTMOD_SOURCES, each source's candidates) -> the lastmod stated
SOURCES = [
    ("the first source's date", ("page", "header"),
     {"page": ["2024-01-01"], "header": ["2023-01-01"]}, "2024-01-01"),
    ("the settings' order, not the page's", ("header", "page"),
     {"page": ["2024-01-01"], "header": ["2023-01-01"]}, "2023-01-01"),
    ("a source without a date passes to the next", ("page", "header"),
     {"page": [], "header": ["2023-01-01"]}, "2023-01-01"),
    ("an invalid date passes to the source's next", ("page", "header"),
     {"page": [BAD, "2024-02-02"], "header": ["2023-01-01"]}, "2024-02-02"),
    ("an invalid date passes to the next source", ("header", "page"),
     {"page": ["2024-01-01"], "header": [BAD]}, "2024-01-01"),
    ("nothing valid: the tag is omitted, never a guess", ("page", "header", "observed"),
     {"page": [BAD], "header": []}, None),
    ("a source not named is not read", ("page",),
     {"page": [], "header": ["2023-01-01"], "crawl_time": ["2024-06-01T00:00:00+00:00"]},
     None),
    ("crawl_time only when named", ("page", "crawl_time"),
     {"page": [], "crawl_time": ["2024-06-01T00:00:00+00:00"]}, "2024-06-01T00:00:00+00:00"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("sources", "dates", "expected"),
    [case[1:] for case in SOURCES],
    ids=[case[0] for case in SOURCES],
)
def test_p4_first_stated_takes_the_first_valid_date_in_the_settings_order(
    sources: tuple[str, ...], dates: dict[str, list[str | None]], expected: str | None
) -> None:
    assert first_stated(sources, lambda source: dates.get(source, [])) == expected


def test_p4_first_stated_reads_no_further_than_it_needs() -> None:
    """A source after the one that gives a date is not asked (its dates cost nothing),
    and ``observed`` is never asked: it is settled at publish."""
    asked: list[str] = []

    def dates(source: str) -> Iterator[str | None]:
        asked.append(source)
        yield BAD
        yield f"2024-01-0{len(asked)}"
        raise AssertionError("read past the first valid date")

    assert first_stated(("header", OBSERVED, "page", "crawl_time"), dates) == "2024-01-01"
    assert asked == ["header"]
    assert first_stated((OBSERVED,), dates) is None
    assert asked == ["header"]


def test_p4_newest_and_published_by_hand() -> None:
    assert newest(None, None) is None
    assert newest("2024-01-01", None) == newest(None, "2024-01-01") == "2024-01-01"
    assert newest("2024-01-01", "2024-01-01T00:00:00+00:00") == "2024-01-01T00:00:00+00:00"
    assert newest("2024-01-02", "2024-01-01T23:59:59+00:00") == "2024-01-02"
    assert published("2024-03-01", "2024-01-01") == "2024-01-01"  # the item's, though older
    assert published("2024-03-01", None) == "2024-03-01"
    assert published(None, None) is None


# --- the stores' mirrors, held to the pure decision -----------------------------------------


@STORE_PROPERTY
@given(records)
def test_p4_sqlite_store_decides_the_lastmod_as_the_pure_decision(
    recorded: list[tuple[str, str | None, bool]],
) -> None:
    """The SQL upsert (``MAX`` per source) and select (``COALESCE(item, page)``) give
    what ``newest`` and ``published`` give, on a real SQLite store, with writes batched
    and committed mid-way."""
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteFactStore(Path(folder) / "store.sqlite3", batch_size=3)
        assert _published(store, recorded) == decided(recorded)


@STORE_PROPERTY
@given(records)
def test_p4_redis_store_decides_the_lastmod_as_the_pure_decision(
    redis_server: RedisServer, recorded: list[tuple[str, str | None, bool]]
) -> None:
    """The Lua merge (newest per source) on a real Redis server gives what ``newest`` and
    ``published`` give; each example under keys of its own."""
    store = RedisFactStore(redis_server.url, prefix=f"lastmod-{uuid.uuid4().hex}", batch_size=3)
    assert _published(store, recorded) == decided(recorded)


@PROPERTY
@given(st.lists(lastmods, min_size=2, max_size=6), st.randoms(use_true_random=False))
def test_p4_newest_wins_whatever_the_order(values: list[str | None], random: Random) -> None:
    """Newest wins is an order-free fold: any arrival order gives the same lastmod."""
    shuffled = list(values)
    random.shuffle(shuffled)
    assert functools.reduce(newest, shuffled, None) == functools.reduce(newest, values, None)


# --- the origin key -------------------------------------------------------------------------

hosts = st.lists(
    st.text(alphabet="ab-", min_size=1, max_size=3).filter(
        lambda label: not label.startswith("-") and not label.endswith("-")
    ),
    min_size=1,
    max_size=3,
).map(".".join)
urls = st.builds(
    "{}://{}{}/{}".format,
    st.sampled_from(["http", "https"]),
    hosts,
    st.sampled_from(["", ":80", ":443", ":8080", ":9000", ":10000"]),
    st.sampled_from(["", "x", "x/y", "a.b", "-", "?q=1"]),
)


def _loc(url: str) -> str | None:
    try:
        return normalize_loc(url)
    except UrlRejected:
        return None


@settings(PROPERTY, max_examples=300)
@given(st.lists(urls.map(_loc).filter(bool), min_size=2, max_size=6))
def test_p12_origin_key_is_the_root_and_keys_sort_as_their_locs(locs: list[str]) -> None:
    """A store's key of a loc is its origin's root, a prefix of the loc, so sorting by key
    never reorders locs (P12: an origin is scheme, host and port)."""
    for loc in locs:
        assert origin_key(loc) == origin_of(loc).root
        assert loc.startswith(origin_key(loc))
    ordered = sorted(locs)
    keys = [origin_key(loc) for loc in ordered]
    assert keys == sorted(keys)


def test_origins_order_by_fields_not_by_root() -> None:
    """Today's order of origins (the published sets', the close log's first origins) is
    (scheme, host, port), which is not the roots' order: kept, as outputs follow it."""
    com, com_br = Origin("https", "example.com", 443), Origin("https", "example.com.br", 443)
    assert sorted([com_br, com]) == [com, com_br]
    assert sorted([com.root, com_br.root]) == [com_br.root, com.root]
    short, long = Origin("http", "a", 9000), Origin("http", "a", 10000)
    assert sorted([long, short]) == [short, long]
    assert sorted([short.root, long.root]) == [long.root, short.root]
