"""record_fields: one record's lastmod (P4), changefreq (P5), priority (P6) and images.

The parsers memoise what they read, so every case here is read twice, the second time
from a warm memo, and both answers, and both lists of issues, must be the hand-worked ones:
a memo may make a record cheaper, never read it differently. Expected values are worked
out from the protocol (shared/spec/PROTOCOL.md P4-P6) and Google's image extension, not
captured from the code.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from scrapy_sitemapgen.sitemaps import facts
from scrapy_sitemapgen.sitemaps.limits import MAX_IMAGES_PER_URL
from scrapy_sitemapgen.sitemaps.records import Fields, record_facts, record_fields

from .helpers import NASTY, PROPERTY, MemorySinks, assert_valid
from .helpers import Skips as WriterSkips

if TYPE_CHECKING:
    from collections.abc import Iterator

UTC = timezone.utc
# A fixed crawl clock: "in the future" means after 2024-06-02T12:00:00Z (a day of skew).
NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
IMG = "https://cdn.example.com/img/"


def _cold() -> None:
    """Empty the parse memos, so the next read is the first one."""
    facts._lastmods.clear()
    facts._changefreqs.clear()
    for memo in facts._priorities.values():
        memo.clear()


@pytest.fixture(autouse=True)
def cold_memos() -> Iterator[None]:
    _cold()
    yield
    _cold()


def read(record: dict[str, Any], now: datetime = NOW) -> tuple[Fields, list[tuple[str, object]]]:
    issues: list[tuple[str, object]] = []
    fields = record_fields(record.get, lambda reason, value: issues.append((reason, value)), now)
    return fields, issues


def read_twice(
    record: dict[str, Any], now: datetime = NOW
) -> tuple[Fields, list[tuple[str, object]]]:
    """The record read cold, then warm: both reads must agree, field for field and issue
    for issue (same reasons, same values, same types, same order)."""
    first = read(record, now)
    second = read(record, now)
    assert first == second
    assert [type(value) for _, value in first[1]] == [type(value) for _, value in second[1]]
    return first


# --- P6 priority: numbers and numeric strings, never bool --------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # True == 1 == 1.0 and hash alike: whichever is read first, bool stays refused.
        ([1, True, 1.0, True], ["1.0", None, "1.0", None]),
        ([1.0, True, 1], ["1.0", None, "1.0"]),
        ([0, False, 0.0, -0.0, "0", "-0", False], ["0.0", None, "0.0", "0.0", "0.0", "0.0", None]),
        (["1", "1.0", 1, 1.0, " 1 "], ["1.0", "1.0", "1.0", "1.0", "1.0"]),
        ([0.5, "0.5", "0.50", 0.25, "0.125"], ["0.5", "0.5", "0.5", "0.25", "0.125"]),
        ([2, "1.5", 1.01, -0.1, "nan", "high", [0.5]], [None] * 7),
    ],
    ids=repr,
)
def test_p6_priority_read_in_sequence(values: list[object], expected: list[str | None]) -> None:
    got = [read_twice({"priority": value})[0][2] for value in values]
    assert got == expected


@pytest.mark.parametrize("value", [True, False, 2, "1.5", "high", [0.5], -0.1])
def test_p6_bad_priority_is_reported_on_every_read(value: object) -> None:
    read({"priority": 1})  # a warm memo holds 1, equal to True
    read({"priority": 0.0})  # and 0.0, equal to False
    for _ in range(2):
        fields, issues = read({"priority": value})
        assert fields[2] is None
        assert issues == [("bad_priority", value)]
        assert type(issues[0][1]) is type(value)


def test_p6_priority_value_reported_is_the_one_given() -> None:
    # 1 then True: the issue carries True, not the memo's 1.
    read({"priority": 1})
    _, issues = read({"priority": True})
    assert issues == [("bad_priority", True)] and issues[0][1] is True


# --- P5 changefreq: the seven words, any case, blanks around ------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (" Daily ", "daily"),
        ("daily", "daily"),
        ("DAILY", "daily"),
        ("never\n", "never"),
        ("\tWeekly", "weekly"),
    ],
    ids=repr,
)
def test_p5_changefreq_spellings(value: str, expected: str) -> None:
    fields, issues = read_twice({"changefreq": value})
    assert fields[1] == expected
    assert issues == []


@pytest.mark.parametrize(
    "value", ["dayly", "Daily, weekly", " ", b"daily", 1, True, ["daily"]], ids=repr
)
def test_p5_bad_changefreq_is_reported_on_every_read(value: object) -> None:
    read({"changefreq": "daily"})
    for _ in range(2):
        fields, issues = read({"changefreq": value})
        assert fields[1] is None
        assert issues == [("bad_changefreq", value)]


# --- P4 lastmod: W3C dates and date-times, never in the future ---------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-06", "2024-05-06"),
        (" 2024-05-06\n", "2024-05-06"),
        ("2024-02-29", "2024-02-29"),  # 2024 is a leap year
        ("2024-05-06T07:08:09Z", "2024-05-06T07:08:09+00:00"),
        ("2024-05-06T07:08:09+00:00", "2024-05-06T07:08:09+00:00"),
        ("2024-05-06T07:08:09-00:00", "2024-05-06T07:08:09+00:00"),
        ("2024-05-06T07:08:09", "2024-05-06T07:08:09+00:00"),  # no zone: UTC
        ("2024-05-06 07:08:09", "2024-05-06T07:08:09+00:00"),
        ("2024-05-06T07:08", "2024-05-06T07:08:00+00:00"),
        ("2024-05-06T07:08:09+02:00", "2024-05-06T05:08:09+00:00"),
        ("2024-05-06T07:08:09+0200", "2024-05-06T05:08:09+00:00"),
        ("2024-05-06T07:08:09-05:30", "2024-05-06T12:38:09+00:00"),
        ("2024-05-06T07:08:09.75+01:00", "2024-05-06T06:08:09+00:00"),
        ("2024-01-01T00:30:00+01:00", "2023-12-31T23:30:00+00:00"),  # the year moves too
        ("2024-05-06T23:30:00-01:00", "2024-05-07T00:30:00+00:00"),
        (" 2024-05-06T07:08:09+02:00 ", "2024-05-06T05:08:09+00:00"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00+00:00"),
        ("0001-01-01T00:30:00-01:00", "0001-01-01T01:30:00+00:00"),
        # The future starts a day after the clock: the boundary itself is not in it.
        ("2024-06-02T12:00:00Z", "2024-06-02T12:00:00+00:00"),
        ("2024-06-02T13:00:00+01:00", "2024-06-02T12:00:00+00:00"),
        ("2024-06-02", "2024-06-02"),
    ],
    ids=repr,
)
def test_p4_lastmod(value: str, expected: str) -> None:
    fields, issues = read_twice({"lastmod": value})
    assert fields[0] == expected
    assert issues == []


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        # Dates that do not exist, bare and inside date-times.
        ("2021-02-29", "bad_lastmod"),
        (" 2021-02-29 ", "bad_lastmod"),
        ("2021-02-29T10:00:00Z", "bad_lastmod"),
        ("2021-02-29T10:00:00+02:00", "bad_lastmod"),
        ("2024-04-31", "bad_lastmod"),
        ("2024-05-06T24:00:00Z", "bad_lastmod"),
        ("2024-05-06T07:08:60+02:00", "bad_lastmod"),
        ("2024-05-06T07:08:09+24:00", "bad_lastmod"),
        ("0000-01-01", "bad_lastmod"),
        # Not W3C Datetime.
        ("yesterday", "bad_lastmod"),
        ("2024-05-06T07:08:09\u0662Z", "bad_lastmod"),
        ("\u0662024-05-06", "bad_lastmod"),
        ("2024-05-06Z", "bad_lastmod"),
        ("2024-05-06T07:08:09 Z", "bad_lastmod"),
        (20240506, "bad_lastmod"),
        (b"2024-05-06", "bad_lastmod"),
        # Year 1 at UTC+1 is year 0 in UTC: it cannot be written.
        ("0001-01-01T00:30:00+01:00", "bad_lastmod"),
        # The future, by a second past the day of skew.
        ("2024-06-02T12:00:01Z", "lastmod_future"),
        ("2024-06-02T13:00:01+01:00", "lastmod_future"),
        ("2024-06-02T12:00:01", "lastmod_future"),
        ("2024-06-03", "lastmod_future"),
        (" 2024-06-03 ", "lastmod_future"),
        # Beyond the calendar in UTC but in the future: the future is what is reported.
        ("9999-12-31T23:30:00-01:00", "lastmod_future"),
        (" 9999-12-31T23:30:00-01:00", "lastmod_future"),
    ],
    ids=repr,
)
def test_p4_bad_lastmod_is_reported_on_every_read(value: object, reason: str) -> None:
    for _ in range(2):
        fields, issues = read({"lastmod": value})
        assert fields[0] is None
        assert issues == [(reason, value)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-06-10", "2024-06-10"),
        (" 2024-06-10 ", "2024-06-10"),
        ("2024-06-10T08:00:00Z", "2024-06-10T08:00:00+00:00"),
        ("2024-06-10T08:00:00+02:00", "2024-06-10T06:00:00+00:00"),
        ("2024-06-10T08:00:00", "2024-06-10T08:00:00+00:00"),
    ],
    ids=repr,
)
def test_p4_future_check_follows_the_clock_of_each_read(value: str, expected: str) -> None:
    # The parse is remembered, the verdict on the future is not: it moves with `now`.
    later = NOW + timedelta(days=10)
    assert read({"lastmod": value}) == (
        (None, None, None, (), (), None),
        [("lastmod_future", value)],
    )
    assert read({"lastmod": value}, later) == ((expected, None, None, (), (), None), [])
    assert read({"lastmod": value}) == (
        (None, None, None, (), (), None),
        [("lastmod_future", value)],
    )


@pytest.mark.parametrize(
    "value", ["2024-01-01", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00+02:00"]
)
def test_p4_clock_errors_are_raised_warm_as_cold(value: str) -> None:
    # A clock at the calendar's end has no "a day later"; a naive clock cannot be
    # compared with a zoned lastmod. Neither is a record's fault, and neither is hidden.
    for _ in range(2):
        with pytest.raises(OverflowError):
            read({"lastmod": value}, datetime(9999, 12, 31, 12, tzinfo=UTC))
        with pytest.raises(TypeError):
            read({"lastmod": value}, datetime(2024, 6, 1))


def test_p4_lastmod_objects() -> None:
    fields, issues = read_twice({"lastmod": date(2024, 5, 6)})
    assert (fields[0], issues) == ("2024-05-06", [])
    value = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone(timedelta(hours=2)))
    fields, issues = read_twice({"lastmod": value})
    assert (fields[0], issues) == ("2024-05-06T05:08:09+00:00", [])


def test_p4_lastmod_memo_stays_bounded() -> None:
    start = date(2000, 1, 1)
    for offset in range(facts._LASTMOD_MEMO_SIZE + 50):
        day = (start + timedelta(days=offset)).isoformat()
        assert read({"lastmod": day})[0][0] == day
    assert 0 < len(facts._lastmods) <= facts._LASTMOD_MEMO_SIZE


# --- images: normalised, deduplicated in order, at most MAX_IMAGES_PER_URL ----------------


@pytest.mark.parametrize(
    ("images", "expected", "issues"),
    [
        ([f"{IMG}a.jpg"], (f"{IMG}a.jpg",), []),
        ([], (), []),
        # Spellings of one URL are one image, kept where it first appears.
        (
            [
                f"{IMG}b.jpg",
                f"{IMG}a.jpg",
                "HTTPS://CDN.example.com:443/img/b.jpg",
                f"{IMG}a.jpg#x",
            ],
            (f"{IMG}b.jpg", f"{IMG}a.jpg"),
            [],
        ),
        (["HTTPS://CDN.Example.com/img/a b.jpg"], (f"{IMG}a%20b.jpg",), []),
        ([f"{IMG}a.jpg", f"{IMG}a.jpg"], (f"{IMG}a.jpg",), []),
        # What is not a URL is reported, in list order, and the rest kept.
        (
            [
                5,
                f"{IMG}a.jpg",
                None,
                "ftp://cdn.example.com/x.jpg",
                "",
                b"https://cdn.example.com/",
                f"{IMG}c.jpg",
            ],
            (f"{IMG}a.jpg", f"{IMG}c.jpg"),
            [
                ("bad_image", 5),
                ("bad_image", None),
                ("bad_image", "ftp://cdn.example.com/x.jpg"),
                ("bad_image", ""),
                ("bad_image", b"https://cdn.example.com/"),
            ],
        ),
        (["javascript:alert(1)"], (), [("bad_image", "javascript:alert(1)")]),
        ([["nested"]], (), [("bad_image", ["nested"])]),
        # Not a list of URLs at all.
        (f"{IMG}a.jpg", (), [("bad_images", f"{IMG}a.jpg")]),
        ({"loc": f"{IMG}a.jpg"}, (), [("bad_images", {"loc": f"{IMG}a.jpg"})]),
        (7, (), [("bad_images", 7)]),
        ((f"{IMG}a.jpg", f"{IMG}a.jpg"), (f"{IMG}a.jpg",), []),
    ],
    ids=repr,
)
def test_images(
    images: object, expected: tuple[str, ...], issues: list[tuple[str, object]]
) -> None:
    fields, got = read_twice({"images": images})
    assert fields[3] == expected
    assert got == issues


def test_images_from_a_generator() -> None:
    fields, issues = read({"images": (f"{IMG}{n}.jpg" for n in (1, 2, 1))})
    assert (fields[3], issues) == ((f"{IMG}1.jpg", f"{IMG}2.jpg"), [])


@pytest.mark.parametrize("count", [MAX_IMAGES_PER_URL - 1, MAX_IMAGES_PER_URL])
def test_images_up_to_the_limit(count: int) -> None:
    # Duplicates do not count towards the limit: only distinct images do.
    urls = [f"{IMG}{n}.jpg" for n in range(count)]
    fields, issues = read_twice({"images": urls + urls[:5]})
    assert fields[3] == tuple(urls)
    assert issues == []


@pytest.mark.parametrize("count", [MAX_IMAGES_PER_URL + 1, MAX_IMAGES_PER_URL + 300])
def test_images_over_the_limit(count: int) -> None:
    urls = [f"{IMG}{n}.jpg" for n in range(count)]
    fields, issues = read_twice({"images": [5, *urls, urls[0]]})
    assert fields[3] == tuple(urls[:MAX_IMAGES_PER_URL])
    assert issues == [("bad_image", 5), ("images_over_limit", count)]


# --- the record as a whole ---------------------------------------------------------------


def test_issue_order_is_the_field_order() -> None:
    record = {
        "images": ["nope"],
        "priority": "high",
        "changefreq": "dayly",
        "lastmod": "2021-02-29",
    }
    fields, issues = read_twice(record)
    assert fields == (None, None, None, (), (), None)
    assert issues == [
        ("bad_lastmod", "2021-02-29"),
        ("bad_changefreq", "dayly"),
        ("bad_priority", "high"),
        ("bad_image", "nope"),
    ]


@pytest.mark.parametrize("blank", [None, ""])
def test_blank_fields_are_absent_not_bad(blank: object) -> None:
    record = {"lastmod": blank, "changefreq": blank, "priority": blank}
    assert read_twice(record) == ((None, None, None, (), (), None), [])


def test_record_facts_carries_the_fields() -> None:
    issues: list[tuple[str, object]] = []
    record = {
        "lastmod": "2024-05-06T07:08:09+02:00",
        "changefreq": " Daily ",
        "priority": "1",
        "images": [f"{IMG}a.jpg"],
    }
    facts_ = record_facts(
        "https://www.example.com/", record.get, lambda r, v: issues.append((r, v)), NOW
    )
    assert (facts_.loc, facts_.lastmod, facts_.changefreq, facts_.priority, facts_.images) == (
        "https://www.example.com/",
        "2024-05-06T05:08:09+00:00",
        "daily",
        "1.0",
        (f"{IMG}a.jpg",),
    )
    assert issues == []


# --- properties ---------------------------------------------------------------------------

_DAYS = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
_LASTMODS = st.one_of(
    _DAYS.map(date.isoformat),
    st.builds(
        lambda day, seconds, zone, sep: (
            f"{day.isoformat()}{sep}{timedelta(seconds=seconds)!s:0>8}{zone}"
        ),
        _DAYS,
        st.integers(0, 86_399),
        st.sampled_from(
            ["Z", "+00:00", "-00:00", "+02:00", "-05:30", "+14:00", "+24:00", "+0200", "", ".5Z"]
        ),
        st.sampled_from(["T", " ", "t"]),
    ),
    st.from_regex(
        r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2}))?\Z"
    ),
    st.text(max_size=30),
    st.sampled_from([None, "", " 2024-05-06 ", "2021-02-29", 20240506, date(2024, 5, 6), True]),
)
_PRIORITIES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.booleans(),
    st.decimals(min_value=-1, max_value=2, places=3).map(str),
    st.sampled_from([None, "", "1", "1.0", " 0.5 ", "-0", "nan", "inf", "1e-1", [0.5]]),
)
_CHANGEFREQS = st.one_of(
    st.sampled_from(sorted(facts.CHANGEFREQ_VALUES)).flatmap(
        lambda word: st.sampled_from([word, word.upper(), f" {word.title()} ", f"{word}\n"])
    ),
    st.text(max_size=10),
    st.sampled_from([None, "", 1, True, b"daily"]),
)
_IMAGES = st.one_of(
    st.lists(
        st.one_of(
            st.integers(0, 5).map(lambda n: f"{IMG}{n}.jpg"),
            st.sampled_from(
                ["HTTPS://CDN.example.com/img/1.jpg", "ftp://x/y", "", "https://h/%zz", 5, None]
            ),
            st.text(max_size=15),
        ),
        max_size=6,
    ),
    st.sampled_from([None, "https://x/", 7]),
)
_NOWS = st.one_of(
    st.just(NOW),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.datetimes(
        min_value=datetime(1, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from(
            [timezone(timedelta(hours=5)), timezone(timedelta(hours=-9, minutes=-30))]
        ),
    ),
)


@PROPERTY
@given(
    lastmod=_LASTMODS,
    changefreq=_CHANGEFREQS,
    priority=_PRIORITIES,
    images=_IMAGES,
    now=_NOWS,
)
def test_property_a_warm_read_equals_the_cold_one(
    lastmod: object, changefreq: object, priority: object, images: object, now: datetime
) -> None:
    _cold()
    record = {"lastmod": lastmod, "changefreq": changefreq, "priority": priority, "images": images}
    cold = read(record, now)
    warm = read(record, now)
    assert repr(cold) == repr(warm)  # repr: nan != nan, yet the same nan is reported
    assert [type(value) for _, value in cold[1]] == [type(value) for _, value in warm[1]]


@PROPERTY
@given(
    moment=st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)),
    minutes=st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
def test_property_p4_zoned_date_time_is_written_in_utc(moment: datetime, minutes: int) -> None:
    # The oracle is plain arithmetic: local time minus the offset is UTC.
    local = moment.replace(microsecond=0)
    sign = "-" if minutes < 0 else "+"
    zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    value = f"{local.year:04d}-{local:%m-%dT%H:%M:%S}{zone}"  # %Y does not pad on glibc
    utc = local - timedelta(minutes=minutes)
    expected = f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S}+00:00"
    clock = datetime(9999, 12, 30, tzinfo=UTC)  # nothing below it is in the future
    for _ in range(2):
        assert read({"lastmod": value}, clock)[0][0] == expected
    far = utc.replace(tzinfo=UTC) - timedelta(days=1, seconds=1)
    assert read({"lastmod": value}, far) == (
        (None, None, None, (), (), None),
        [("lastmod_future", value)],
    )


# --- arbitrary records: refused field by field, never raised, always writable -------------


_TEXT = st.one_of(st.text(max_size=40), st.sampled_from(NASTY))
_URLISH = st.one_of(
    st.sampled_from(
        [
            "https://www.example.com/a.jpg",
            "/rel.png",
            "https://cdn.example.net/v.mp4",
            "ftp://x/y",
            "",
        ]
    ),
    _TEXT.map(lambda t: "https://www.example.com/" + t),
    _TEXT,
)
_DATEISH = st.one_of(
    st.sampled_from(
        [
            "2024-05-01",
            "2024-05-01T10:00:00+02:00",
            "2024-05-31T23:59:59Z",
            "2300-01-01",
            "yesterday",
        ]
    ),
    _TEXT,
)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    _TEXT,
    _URLISH,
    _DATEISH,
    st.datetimes(timezones=st.none() | st.just(UTC)),
    st.dates(),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_TEXT, children, max_size=3),
    ),
    max_leaves=8,
)
_VIDEO = st.fixed_dictionaries(
    {},
    optional={
        key: st.one_of(
            _URLISH if key.endswith("_loc") else _DATEISH if "date" in key else _TEXT, _VALUE
        )
        for key in (
            "thumbnail_loc",
            "title",
            "description",
            "content_loc",
            "player_loc",
            "duration",
            "publication_date",
        )
    },
)
# Records that are mostly right: the required fields present, some of them odd.
_GOOD_VIDEO = st.fixed_dictionaries(
    {
        "thumbnail_loc": st.sampled_from(
            ["https://www.example.com/t.jpg", "https://cdn.example.net/t.png"]
        ),
        "title": st.one_of(st.sampled_from(["A clip", "Planting & pruning <tips>"]), _TEXT),
        "description": st.one_of(st.sampled_from(["How to", "x" * 3000]), _TEXT),
        "content_loc": st.sampled_from(
            ["https://cdn.example.net/v.mp4", "https://www.example.com/v?a=1&b=2"]
        ),
    },
    optional={"duration": st.one_of(st.integers(-5, 30000), _TEXT), "publication_date": _DATEISH},
)
_GOOD_NEWS = st.fixed_dictionaries(
    {
        "publication_name": st.one_of(st.just("The Example Times"), _TEXT),
        "publication_language": st.sampled_from(["en", "zh-tw", "pt-BR"]),
        "publication_date": st.sampled_from(["2024-05-31", "2024-05-31T10:00:00+02:00"]),
        "title": st.one_of(st.just("Roses & <thorns>"), _TEXT),
    }
)
_NEWS = st.fixed_dictionaries(
    {},
    optional={
        "publication_name": st.one_of(_TEXT, _VALUE),
        "publication_language": st.one_of(st.sampled_from(["en", "zh-tw", "xx-yy-zz", ""]), _VALUE),
        "publication_date": st.one_of(_DATEISH, _VALUE),
        "title": st.one_of(_TEXT, _VALUE),
    },
)


@settings(PROPERTY, max_examples=300)
@given(
    record=st.fixed_dictionaries(
        {},
        optional={
            "lastmod": st.one_of(_DATEISH, _VALUE),
            "changefreq": st.one_of(
                st.sampled_from(["daily", "Weekly ", "hourly", "sometimes"]), _VALUE
            ),
            "priority": st.one_of(st.sampled_from([0, 0.5, "1.0", 1.5, "-0", "nan"]), _VALUE),
            "images": st.one_of(st.lists(st.one_of(_URLISH, _VALUE), max_size=4), _VALUE),
            "videos": st.one_of(
                st.lists(st.one_of(_GOOD_VIDEO, _VIDEO, _VALUE), max_size=3), _VALUE
            ),
            "news": st.one_of(_GOOD_NEWS, _GOOD_NEWS, _NEWS, _VALUE),
        },
    )
)
def test_property_any_record_gives_writable_facts(record: dict[str, Any]) -> None:
    """Whatever a spider's item or a feed line holds, each bad field is refused and
    reported, nothing raises, and the facts kept write a schema-valid urlset (P14) and,
    with news, a valid news sitemap."""
    issues: list[tuple[str, object]] = []
    loc = "https://www.example.com/page"
    entry = record_facts(loc, record.get, lambda reason, value: issues.append((reason, value)), NOW)
    assert entry.loc == loc
    event(
        f"kept: lastmod {entry.lastmod is not None}, {len(entry.images)} images, "
        f"{len(entry.videos)} videos, news {entry.news is not None}"
    )
    sinks = MemorySinks()
    writer_skips = WriterSkips()
    output = facts_writer.write_origin(
        [entry],
        scope="https://www.example.com/",
        base_url="https://www.example.com/",
        lastmod="2024-06-01T00:00:00+00:00",
        open_sink=sinks,
        options=facts_writer.WriterOptions(gzip=False),
        on_skip=writer_skips,
        news=[entry] if entry.news is not None else [],
    )
    assert writer_skips.calls == []
    for written in [*output.sitemaps, *output.news, *output.indexes]:
        assert_valid(sinks.data(written.name))
    assert [w.entries for w in output.sitemaps] == [1]


from scrapy_sitemapgen.sitemaps import writer as facts_writer  # noqa: E402

# --- one field list -----------------------------------------------------------------------


def test_the_reader_reads_exactly_the_item_fields() -> None:
    """items.ITEM_FIELDS is the one list: SitemapItem declares exactly it, and a record is
    read field by field from exactly it (``loc`` by the reader, the rest by record_fields;
    ``title``, the changes feed's, by ``facts`` alone: the offline build keeps none)."""
    import dataclasses

    from scrapy_sitemapgen.items import ITEM_FIELDS, SitemapItem
    from scrapy_sitemapgen.sitemaps.records import RecordReader
    from scrapy_sitemapgen.sitemaps.urls import UrlPolicy
    from scrapy_sitemapgen.stats import Tally

    assert tuple(f.name for f in dataclasses.fields(SitemapItem)) == ITEM_FIELDS
    asked: list[str] = []
    record = {"loc": "https://www.example.com/a"}

    def get(name: str) -> object:
        asked.append(name)
        return record.get(name)

    tally = Tally()
    found = RecordReader(UrlPolicy(), tally).read(get, datetime.now(timezone.utc))
    assert found is not None and found[0] == "https://www.example.com/a"
    assert sorted(asked) == sorted(set(ITEM_FIELDS) - {"title"})
    asked.clear()
    facts = RecordReader(UrlPolicy(), tally).facts(get, datetime.now(timezone.utc))
    assert facts is not None and facts.title is None
    assert sorted(asked) == sorted(ITEM_FIELDS)
    assert tally.counts == {}
