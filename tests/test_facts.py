"""Case tables for the fact parsers: lastmod (P4), changefreq (P5), priority (P6).

Expected values are worked out by hand from RFC 9110 5.6.7 (HTTP dates), the W3C Datetime
note (P4) and the protocol's word lists, never captured from the code.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from scrapy_sitemapgen.sitemaps.facts import (
    FUTURE_TOLERANCE,
    FactRejected,
    News,
    Video,
    lastmod_from_http,
    make_news,
    make_video,
    parse_changefreq,
    parse_hreflang,
    parse_lastmod,
    parse_priority,
)
from scrapy_sitemapgen.sitemaps.urls import UrlPolicy, normalize_loc

from .helpers import Issues

UTC = timezone.utc
# A fixed crawl clock, so "in the future" never depends on when the tests run.
NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)

# --- lastmod_from_http: Last-Modified header -> W3C Datetime (P4) ----------------------

# RFC 9110 5.6.7 gives one instant in its three accepted forms: all must agree.
RFC_9110_INSTANT = "1994-11-06T08:49:37+00:00"
HTTP_DATE_CASES = [
    ("Sun, 06 Nov 1994 08:49:37 GMT", RFC_9110_INSTANT),  # IMF-fixdate (RFC 1123)
    ("Sunday, 06-Nov-94 08:49:37 GMT", RFC_9110_INSTANT),  # obsolete RFC 850
    ("Sun Nov  6 08:49:37 1994", RFC_9110_INSTANT),  # asctime(), no zone: GMT
    (b"Sun, 06 Nov 1994 08:49:37 GMT", RFC_9110_INSTANT),  # raw header bytes
    ("  Sun, 06 Nov 1994 08:49:37 GMT \r\n", RFC_9110_INSTANT),
    ("Thu, 01 Jan 1970 00:00:00 GMT", "1970-01-01T00:00:00+00:00"),
    # Numeric zones (RFC 5322 style, sent by some servers) are converted to UTC.
    ("Wed, 21 Oct 2015 09:28:00 +0200", "2015-10-21T07:28:00+00:00"),
    ("Wed, 21 Oct 2015 02:28:00 -0500", "2015-10-21T07:28:00+00:00"),
    # ... across a day (and year) boundary.
    ("Thu, 01 Jan 2015 01:30:00 +0200", "2014-12-31T23:30:00+00:00"),
    ("Thu, 29 Feb 2024 23:00:00 -0200", "2024-03-01T01:00:00+00:00"),
]


@pytest.mark.parametrize(
    ("header", "expected"), HTTP_DATE_CASES, ids=[repr(c[0]) for c in HTTP_DATE_CASES]
)
def test_p4_lastmod_from_http(header: str | bytes, expected: str) -> None:
    assert lastmod_from_http(header, now=NOW) == expected


BAD_HTTP_DATES = [
    "",
    "   ",
    b"",
    "yesterday",
    "garbage",
    "0",
    "Sun, 32 Nov 1994 08:49:37 GMT",  # no 32nd
    "Sun, 06 Foo 1994 08:49:37 GMT",  # no such month
    "Sun, 06 Nov 1994 25:49:37 GMT",  # no 25th hour
    "Tue, 29 Feb 2022 00:00:00 GMT",  # 2022 is no leap year
    "2015-10-21T07:28:00Z",  # W3C, not an HTTP date
]


@pytest.mark.parametrize("header", BAD_HTTP_DATES, ids=repr)
def test_p4_lastmod_from_http_rejects_non_dates(header: str | bytes) -> None:
    with pytest.raises(FactRejected) as info:
        lastmod_from_http(header, now=NOW)
    assert info.value.reason == "bad_lastmod"
    assert info.value.value == header


@pytest.mark.parametrize(
    "header",
    [
        "Fri, 01 Jan 2027 00:00:00 GMT",  # years ahead of the crawl clock
        "Mon, 03 Jun 2024 12:00:00 GMT",  # two days ahead
        "Fri, 31 Dec 9999 23:59:59 GMT",  # a placeholder
    ],
)
def test_p4_lastmod_from_http_rejects_the_future(header: str) -> None:
    # P4/P10: a lastmod says when the page changed; a future time is a broken clock.
    with pytest.raises(FactRejected) as info:
        lastmod_from_http(header, now=NOW)
    assert info.value.reason == "lastmod_future"


@pytest.mark.parametrize(
    "header", [b"Sat, 01 Jun 2024 12:00:00 GMT", "Sat, 01 Jun 2024 12:00:00 GMT"]
)
def test_p4_lastmod_from_http_checks_the_clock_on_every_call(header: str | bytes) -> None:
    """Parsed dates are remembered by value; the future check is not: the same header is
    a valid lastmod for a crawl after it and refused by a crawl whose clock is before it."""
    assert lastmod_from_http(header, now=NOW) == "2024-06-01T12:00:00+00:00"
    with pytest.raises(FactRejected) as info:
        lastmod_from_http(header, now=NOW - timedelta(days=30))
    assert info.value.reason == "lastmod_future"
    assert lastmod_from_http(header, now=NOW) == "2024-06-01T12:00:00+00:00"


def test_p4_lastmod_from_http_future_with_the_real_clock() -> None:
    with pytest.raises(FactRejected) as info:
        lastmod_from_http("Tue, 01 Jan 2999 00:00:00 GMT")
    assert info.value.reason == "lastmod_future"


def test_p4_lastmod_from_http_tolerates_clock_skew() -> None:
    # An hour ahead (a server clock slightly fast, or a zone mix-up) is still a lastmod.
    assert (
        lastmod_from_http("Sat, 01 Jun 2024 13:00:00 GMT", now=NOW) == "2024-06-01T13:00:00+00:00"
    )
    # Right now is fine too.
    assert (
        lastmod_from_http("Sat, 01 Jun 2024 12:00:00 GMT", now=NOW) == "2024-06-01T12:00:00+00:00"
    )


def test_lastmod_future_tolerance_boundary() -> None:
    edge = NOW + FUTURE_TOLERANCE
    at_edge = edge.strftime("%a, %d %b %Y %H:%M:%S GMT")
    past_edge = (edge + timedelta(seconds=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert lastmod_from_http(at_edge, now=NOW) == edge.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    with pytest.raises(FactRejected) as info:
        lastmod_from_http(past_edge, now=NOW)
    assert info.value.reason == "lastmod_future"


# --- parse_lastmod: item values -> W3C Datetime (P4) -----------------------------------

LASTMOD_CASES = [
    # date objects stay dates (P4 allows YYYY-MM-DD).
    (date(2024, 2, 29), "2024-02-29"),
    (date(1999, 12, 31), "1999-12-31"),
    # datetime objects are written in UTC, to the second.
    (datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), "2024-05-06T07:08:09+00:00"),
    (
        datetime(2024, 5, 6, 9, 8, 9, tzinfo=timezone(timedelta(hours=2))),
        "2024-05-06T07:08:09+00:00",
    ),
    (
        datetime(2024, 5, 6, 1, 38, 9, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        "2024-05-06T07:08:09+00:00",
    ),
    # A naive datetime is taken as UTC (documented convention).
    (datetime(2024, 5, 6, 7, 8, 9), "2024-05-06T07:08:09+00:00"),
    # W3C strings: a date...
    ("2024-05-06", "2024-05-06"),
    (" 2024-05-06\n", "2024-05-06"),
    # ... or a date-time with hh:mm, hh:mm:ss or hh:mm:ss.s, and a zone.
    ("2024-05-06T07:08Z", "2024-05-06T07:08:00+00:00"),
    ("2024-05-06T07:08:09Z", "2024-05-06T07:08:09+00:00"),
    ("2024-05-06T07:08:09+00:00", "2024-05-06T07:08:09+00:00"),
    ("2024-05-06T07:08:09-00:00", "2024-05-06T07:08:09+00:00"),
    ("2024-05-06T07:08:09+02:00", "2024-05-06T05:08:09+00:00"),
    ("2024-05-06T07:08:09-05:30", "2024-05-06T12:38:09+00:00"),
    ("2024-05-06T07:08:09.25Z", "2024-05-06T07:08:09+00:00"),
    ("2024-05-06T07:08:09.999+01:00", "2024-05-06T06:08:09+00:00"),
    ("1997-07-16T19:20:30.45+01:00", "1997-07-16T18:20:30+00:00"),  # the W3C note's example
    # Zone conversion moves the day (and year).
    ("2024-05-06T23:30:00-01:00", "2024-05-07T00:30:00+00:00"),
    ("2024-01-01T00:30:00+01:00", "2023-12-31T23:30:00+00:00"),
    ("2024-05-06T07:08:09+14:00", "2024-05-05T17:08:09+00:00"),
    # No zone: UTC, as for datetime objects.
    ("2024-05-06T07:08:09", "2024-05-06T07:08:09+00:00"),
    # Already UTC to the second (the shortcut), with blanks around, and the first year.
    (" 2024-05-06T07:08:09Z\t", "2024-05-06T07:08:09+00:00"),
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00+00:00"),
]


@pytest.mark.parametrize(
    ("value", "expected"), LASTMOD_CASES, ids=[repr(c[0]) for c in LASTMOD_CASES]
)
def test_p4_parse_lastmod(value: object, expected: str) -> None:
    assert parse_lastmod(value, now=NOW) == expected


BAD_LASTMODS = [
    # Calendar dates that do not exist.
    "2023-02-29",
    "2024-02-30",
    "2024-04-31",
    "2024-13-01",
    "2024-00-10",
    "2024-05-00",
    # Times that do not exist, and zones beyond +-24h.
    "2024-05-06T24:00:00Z",
    "2024-05-06T07:60:00Z",
    "2024-05-06T07:08:61Z",
    "2024-05-06T07:08:09+24:00",
    # Not W3C Datetime as P4 uses it (YYYY-MM-DD or a full date-time).
    "",
    "   ",
    "2024",
    "2024-05",
    "2024-5-6",
    "20240506",
    "06/05/2024",
    "May 6, 2024",
    "Mon, 06 May 2024 07:08:09 GMT",
    "2024-05-06T07Z",
    "2024-05-06T07:08:09 Z",
    "2024-05-06Z",
    "yesterday",
    "2024-05-06T07:08:09+02",
    # Year 1 at UTC+1 is still year 0 in UTC: no such year in a W3C date.
    "0001-01-01T00:30:00+01:00",
    # The UTC shortcut checks the calendar too; blanks around keep the value reported.
    "2024-02-30T10:00:00Z",
    "0000-01-01T00:00:00+00:00",
    " 2024-02-30 ",
    "2024-05-06T07:08:09\u0662Z",
]


@pytest.mark.parametrize("value", BAD_LASTMODS, ids=repr)
def test_p4_parse_lastmod_rejects_bad_strings(value: str) -> None:
    with pytest.raises(FactRejected) as info:
        parse_lastmod(value, now=NOW)
    assert info.value.reason == "bad_lastmod"
    assert info.value.value == value


@pytest.mark.parametrize(
    "value",
    [None, 20240506, 1715000000.0, b"2024-05-06", ["2024-05-06"], {"date": "2024-05-06"}, True],
    ids=repr,
)
def test_p4_parse_lastmod_rejects_other_types(value: object) -> None:
    with pytest.raises(FactRejected) as info:
        parse_lastmod(value, now=NOW)
    assert info.value.reason == "bad_lastmod"


@pytest.mark.parametrize(
    "value",
    [
        "2030-01-01",
        "2024-06-03",
        "2024-06-03T00:00:00Z",
        date(2030, 1, 1),
        datetime(2030, 1, 1, tzinfo=UTC),
        datetime(2030, 1, 1),
    ],
    ids=repr,
)
def test_p4_parse_lastmod_rejects_the_future(value: object) -> None:
    with pytest.raises(FactRejected) as info:
        parse_lastmod(value, now=NOW)
    assert info.value.reason == "lastmod_future"


def test_p4_parse_lastmod_today_is_not_the_future() -> None:
    assert parse_lastmod(date(2024, 6, 1), now=NOW) == "2024-06-01"
    assert parse_lastmod("2024-06-01T12:00:00Z", now=NOW) == "2024-06-01T12:00:00+00:00"


# --- parse_changefreq (P5) --------------------------------------------------------------

P5_WORDS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]


@pytest.mark.parametrize("word", P5_WORDS)
def test_p5_every_changefreq_word(word: str) -> None:
    assert parse_changefreq(word) == word


@pytest.mark.parametrize(
    ("value", "expected"),
    [("DAILY", "daily"), ("Weekly", "weekly"), ("nEvEr", "never"), ("ALWAYS", "always")],
)
def test_p5_changefreq_is_case_insensitive(value: str, expected: str) -> None:
    # The XSD enumeration is lower-case, so the written value must be too.
    assert parse_changefreq(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "day",
        "dayly",
        "biweekly",
        "fortnightly",
        "quarterly",
        "daily,weekly",
        "1d",
        None,
        1,
        ["daily"],
        b"daily",
    ],
    ids=repr,
)
def test_p5_changefreq_rejects_other_values(value: object) -> None:
    with pytest.raises(FactRejected) as info:
        parse_changefreq(value)
    assert info.value.reason == "bad_changefreq"


# --- parse_priority (P6) ----------------------------------------------------------------

PRIORITY_CASES = [
    (0, "0.0"),
    (1, "1.0"),
    (0.5, "0.5"),
    (0.0, "0.0"),
    (1.0, "1.0"),
    (0.8, "0.8"),
    (0.25, "0.25"),
    ("0.3", "0.3"),
    ("1", "1.0"),
    ("0", "0.0"),
    (" 0.6 ", "0.6"),
    (Decimal("0.7"), "0.7"),
    # Negative zero is zero: no "-0.0" in a file.
    (-0.0, "0.0"),
    ("-0", "0.0"),
]


@pytest.mark.parametrize(
    ("value", "expected"), PRIORITY_CASES, ids=[repr(c[0]) for c in PRIORITY_CASES]
)
def test_p6_parse_priority(value: object, expected: str) -> None:
    text = parse_priority(value)
    assert text == expected
    # The text is a plain xsd:decimal (no exponent) within the P6 range.
    assert "e" not in text.lower()
    assert 0.0 <= float(text) <= 1.0


@pytest.mark.parametrize(
    "value",
    [
        True,  # bool is an int in Python, but True is no priority
        False,
        math.nan,
        "nan",
        math.inf,
        -math.inf,
        "inf",
        -0.1,
        -1,
        1.01,
        2,
        "1.5",
        "high",
        "",
        None,
        [0.5],
        "0,5",
    ],
    ids=repr,
)
def test_p6_parse_priority_rejects(value: object) -> None:
    with pytest.raises(FactRejected) as info:
        parse_priority(value)
    assert info.value.reason == "bad_priority"


# --- make_video: the G7 video extension's required and optional fields ------------------


# Google's video sitemap example (G7), one field per <video:…> element the project writes.
FULL_VIDEO = {
    "thumbnail_loc": "https://www.example.com/thumbs/123.jpg",
    "title": "Grilling steaks for summer",
    "description": "Alkis shows you how to get perfectly done steaks every time",
    "content_loc": "http://streamserver.example.com/video123.mp4",
    "player_loc": "https://www.example.com/videoplayer.php?video=123",
    "duration": 600,
    "publication_date": "2007-11-05T19:20:30+08:00",
}
REQUIRED_VIDEO = {k: FULL_VIDEO[k] for k in ("thumbnail_loc", "title", "description", "player_loc")}


def video(**changes: object) -> tuple[Video, Issues]:
    raw = {**FULL_VIDEO, **changes}
    issues = Issues()
    return make_video(raw, normalize_loc, issues, NOW), issues


def test_g7_make_video_complete() -> None:
    made, issues = video()
    assert made == Video(
        thumbnail_loc="https://www.example.com/thumbs/123.jpg",
        title="Grilling steaks for summer",
        description="Alkis shows you how to get perfectly done steaks every time",
        content_loc="http://streamserver.example.com/video123.mp4",
        player_loc="https://www.example.com/videoplayer.php?video=123",
        duration=600,
        # P4 as the lastmod rule: 19:20:30 at UTC+8 is 11:20:30 UTC.
        publication_date="2007-11-05T11:20:30+00:00",
    )
    assert issues.calls == []


@pytest.mark.parametrize(
    "missing",
    [
        ("thumbnail_loc",),
        ("title",),
        ("description",),
        ("content_loc", "player_loc"),  # G7: one of the two is required
    ],
    ids=lambda m: "+".join(m),
)
def test_g7_make_video_missing_required_field(missing: tuple[str, ...]) -> None:
    raw = {k: v for k, v in FULL_VIDEO.items() if k not in missing}
    with pytest.raises(FactRejected) as info:
        make_video(raw, normalize_loc, Issues(), NOW)
    assert info.value.reason == "video_incomplete"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "   "),
        ("description", "\n\t"),
        ("title", None),
        ("thumbnail_loc", ""),
        ("description", 42),
    ],
    ids=repr,
)
def test_g7_make_video_blank_required_field_is_missing(field: str, value: object) -> None:
    # The video XSD: title and description hold at least one non-space character.
    with pytest.raises(FactRejected) as info:
        video(**{field: value})
    assert info.value.reason == "video_incomplete"


def test_g7_make_video_player_loc_alone_is_enough() -> None:
    issues = Issues()
    made = make_video(REQUIRED_VIDEO, normalize_loc, issues, NOW)
    assert made == Video(
        "https://www.example.com/thumbs/123.jpg",
        "Grilling steaks for summer",
        "Alkis shows you how to get perfectly done steaks every time",
        player_loc="https://www.example.com/videoplayer.php?video=123",
    )
    assert (made.content_loc, made.duration, made.publication_date) == (None, None, None)
    assert issues.calls == []


def test_g7_make_video_content_loc_alone_is_enough() -> None:
    raw = {k: FULL_VIDEO[k] for k in ("thumbnail_loc", "title", "description", "content_loc")}
    made = make_video(raw, normalize_loc, Issues(), NOW)
    assert (made.content_loc, made.player_loc) == (
        "http://streamserver.example.com/video123.mp4",
        None,
    )


def test_g7_video_title_of_100_characters_is_kept() -> None:
    title = "t" * 100
    made, issues = video(title=title)
    assert made.title == title
    assert issues.calls == []


def test_g7_video_title_of_101_characters_is_shortened() -> None:
    # Google: a title of at most 100 characters. 99 kept + "…" (one character) = 100.
    title = "t" * 101
    made, issues = video(title=title)
    assert made.title == "t" * 99 + "\u2026"
    assert len(made.title) == 100
    assert issues.calls == [("video_title_shortened", title)]


def test_g7_video_description_of_2048_characters_is_kept() -> None:
    made, issues = video(description="d" * 2048)
    assert made.description == "d" * 2048
    assert issues.calls == []


def test_g7_video_description_over_2048_characters_is_shortened() -> None:
    description = "d" * 3000
    made, issues = video(description=description)
    assert made.description == "d" * 2047 + "\u2026"
    assert len(made.description) == 2048
    assert issues.calls == [("video_description_shortened", description)]


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (28_800, 28_800), (600, 600)])
def test_g7_video_duration_in_range(value: object, expected: int) -> None:
    # Google: duration in seconds, from 1 to 28,800 (8 hours).
    made, issues = video(duration=value)
    assert made.duration == expected
    assert issues.calls == []


@pytest.mark.parametrize("value", [0, 28_801, -5, "abc", True, math.nan, math.inf], ids=repr)
def test_g7_video_bad_duration_is_dropped(value: object) -> None:
    made, issues = video(duration=value)
    assert made.duration is None
    assert made.title == "Grilling steaks for summer"  # the video itself is kept
    assert len(issues.calls) == 1
    reason, reported = issues.calls[0]
    assert reason == "video_bad_duration"
    assert reported is value


@pytest.mark.parametrize("value", ["yesterday", "05/11/2007", "2007-13-01", 20071105], ids=repr)
def test_g7_video_bad_publication_date_is_dropped(value: object) -> None:
    made, issues = video(publication_date=value)
    assert made.publication_date is None
    assert made.content_loc == "http://streamserver.example.com/video123.mp4"
    assert issues.calls == [("video_bad_publication_date", value)]


def test_g7_video_publication_date_as_a_date() -> None:
    made, _ = video(publication_date="2007-11-05")
    assert made.publication_date == "2007-11-05"


def test_g7_video_urls_go_through_the_normalizer_given() -> None:
    # The crawl's URL policy (G3 host alias) applies, not a fixed normaliser.
    policy = UrlPolicy(host_aliases={"example.com": "www.example.com"})
    raw = {
        **FULL_VIDEO,
        "thumbnail_loc": "HTTPS://Example.com/thumbs/a b.jpg",
        "content_loc": "https://example.com:443/v.mp4#t=10",
        "player_loc": "https://example.com/player?v=caf\u00e9",
    }
    made = make_video(raw, policy.loc, Issues(), NOW)
    assert made.thumbnail_loc == "https://www.example.com/thumbs/a%20b.jpg"
    assert made.content_loc == "https://www.example.com/v.mp4"
    assert made.player_loc == "https://www.example.com/player?v=caf%C3%A9"


def test_g7_video_rejected_thumbnail_makes_the_video_incomplete() -> None:
    issues = Issues()
    with pytest.raises(FactRejected) as info:
        make_video(
            {**FULL_VIDEO, "thumbnail_loc": "ftp://example.com/t.jpg"}, normalize_loc, issues, NOW
        )
    assert info.value.reason == "video_incomplete"
    assert issues.calls == [("video_bad_url", "ftp://example.com/t.jpg")]


def test_g7_video_rejected_player_with_a_content_loc_keeps_the_video() -> None:
    issues = Issues()
    made = make_video({**FULL_VIDEO, "player_loc": "javascript:play()"}, normalize_loc, issues, NOW)
    assert (made.content_loc, made.player_loc) == (
        "http://streamserver.example.com/video123.mp4",
        None,
    )
    assert issues.calls == [("video_bad_url", "javascript:play()")]


# --- make_news: Google News sitemaps ----------------------------------------------------

# Google's news sitemap example: every field <news:news> requires.
FULL_NEWS = {
    "publication_name": "The Example Times",
    "publication_language": "en",
    "publication_date": "2008-12-23",
    "title": "Companies A, B in Merger Talks",
}


def test_make_news_complete() -> None:
    assert make_news(FULL_NEWS, NOW) == News(
        "The Example Times", "en", "2008-12-23", "Companies A, B in Merger Talks"
    )


def test_make_news_date_time_in_utc() -> None:
    news = make_news({**FULL_NEWS, "publication_date": "2008-12-23T10:00:00+01:00"}, NOW)
    assert news.publication_date == "2008-12-23T09:00:00+00:00"


@pytest.mark.parametrize("missing", list(FULL_NEWS))
def test_make_news_missing_field(missing: str) -> None:
    raw = {k: v for k, v in FULL_NEWS.items() if k != missing}
    with pytest.raises(FactRejected) as info:
        make_news(raw, NOW)
    assert info.value.reason == "news_incomplete"


@pytest.mark.parametrize("field", ["publication_name", "title", "publication_language"])
def test_make_news_blank_field_is_missing(field: str) -> None:
    with pytest.raises(FactRejected) as info:
        make_news({**FULL_NEWS, field: "  "}, NOW)
    assert info.value.reason == "news_incomplete"


@pytest.mark.parametrize("language", ["English", "eng-US", "en-GB", "en_US", "e", "zh-HK", "fr1"])
def test_make_news_bad_language(language: str) -> None:
    # Google News: an ISO 639 code, with zh-cn and zh-tw the only forms carrying a region.
    with pytest.raises(FactRejected) as info:
        make_news({**FULL_NEWS, "publication_language": language}, NOW)
    assert info.value.reason == "news_bad_language"


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "en"),
        ("zh-CN", "zh-cn"),
        ("zh-tw", "zh-tw"),
        ("ZH-TW", "zh-tw"),
        ("FR", "fr"),
        ("ast", "ast"),
    ],
)
def test_make_news_language_accepted_in_lower_case(language: str, expected: str) -> None:
    assert (
        make_news({**FULL_NEWS, "publication_language": language}, NOW).publication_language
        == expected
    )


@pytest.mark.parametrize(
    "value", ["23/12/2008", "yesterday", "2008-02-30", "Tue, 23 Dec 2008 10:00:00 GMT"]
)
def test_make_news_bad_date(value: str) -> None:
    with pytest.raises(FactRejected) as info:
        make_news({**FULL_NEWS, "publication_date": value}, NOW)
    assert info.value.reason == "news_bad_date"
    assert info.value.value == value


# --- parse_hreflang: language alternates ------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "en",  # ISO 639-1 language
        "en-GB",  # language-region (ISO 3166-1 alpha-2)
        "zh-Hant-TW",  # language-script-region (ISO 15924 script)
        "x-default",  # the fallback page
        "de",
    ],
)
def test_hreflang_accepted_as_written(value: str) -> None:
    assert parse_hreflang(value) == value


# es-419 (a UN M.49 region) and fil (ISO 639-2/3) are valid BCP 47 but not Google's
# hreflang (tests/test_link_targets.py has the whole case table).
@pytest.mark.parametrize(
    "value",
    ["english", "en_GB", "", "en-", 5, None, "-en", "en-GBR-x", "x-defaults", "es-419", "fil"],
    ids=repr,
)
def test_hreflang_rejected(value: object) -> None:
    with pytest.raises(FactRejected) as info:
        parse_hreflang(value)
    assert info.value.reason == "bad_hreflang"


def test_p4_lastmod_from_http_fixdate_shortcut_agrees_with_email_utils() -> None:
    """The IMF-fixdate shortcut gives what Python's email parser (the general road) gives,
    on valid and impossible dates alike (day 00 or 31 of a short month, hour 24, ...)."""
    import random
    from email.utils import parsedate_to_datetime

    from scrapy_sitemapgen.sitemaps.facts import format_w3c

    rng = random.Random(7)
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    for _ in range(3000):
        value = (
            f"{rng.choice(['Mon', 'Sun'])}, {rng.randint(0, 32):02d} {rng.choice(months)} "
            f"{rng.randint(1000, 2023)} {rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:"
            f"{rng.randint(0, 61):02d} GMT"
        )
        try:
            expected = format_w3c(parsedate_to_datetime(value))
        except ValueError:
            expected = "rejected"
        try:
            got = lastmod_from_http(value.encode(), now=NOW)
        except FactRejected:
            got = "rejected"
        assert got == expected, value


# --- memoised parsers: a warm read is the cold one (P4, P5, P6) -------------------------


@pytest.mark.parametrize(
    ("first", "then"), [(1, True), (1.0, True), (0, False), (0.0, False), ("1", True)], ids=repr
)
def test_p6_priority_memo_keeps_bool_refused(first: object, then: bool) -> None:
    # True == 1 == 1.0 as dict keys: a memo keyed by value alone would accept True.
    assert parse_priority(first) in ("1.0", "0.0")
    for _ in range(2):
        with pytest.raises(FactRejected) as info:
            parse_priority(then)
        assert (info.value.reason, info.value.value) == ("bad_priority", then)


@pytest.mark.parametrize(
    ("value", "expected"), [(1, "1.0"), (1.0, "1.0"), ("1", "1.0"), ("1.0", "1.0"), (-0.0, "0.0")]
)
def test_p6_priority_warm_equals_cold(value: object, expected: str) -> None:
    assert [parse_priority(value) for _ in range(3)] == [expected] * 3


def test_p5_changefreq_warm_equals_cold() -> None:
    assert [parse_changefreq(" Daily ") for _ in range(2)] == ["daily", "daily"]
    for _ in range(2):
        with pytest.raises(FactRejected) as info:
            parse_changefreq("Dayly")
        assert (info.value.reason, info.value.value) == ("bad_changefreq", "Dayly")


@pytest.mark.parametrize(
    "value", ["2024-06-10", "2024-06-10T08:00:00Z", "2024-06-10T10:00:00+02:00", " 2024-06-10 "]
)
def test_p4_parse_lastmod_future_verdict_is_not_memoised(value: str) -> None:
    later = NOW + timedelta(days=9)
    for now, reason in [
        (NOW, "lastmod_future"),
        (later, None),
        (NOW, "lastmod_future"),
        (None, None),
    ]:
        if reason is None:
            assert parse_lastmod(value, now=now).startswith("2024-06-10")
        else:
            with pytest.raises(FactRejected) as info:
                parse_lastmod(value, now=now)
            assert (info.value.reason, info.value.value) == (reason, value)


@pytest.mark.parametrize(
    "value",
    [
        "2021-02-29",
        "2021-02-29T00:00:00Z",
        "2021-02-29T00:00:00+01:00",
        "0001-01-01T00:30:00+01:00",
    ],
)
def test_p4_parse_lastmod_bad_string_is_refused_every_time(value: str) -> None:
    for _ in range(3):
        with pytest.raises(FactRejected) as info:
            parse_lastmod(value, now=NOW)
        assert (info.value.reason, info.value.value) == ("bad_lastmod", value)


def test_p4_parse_lastmod_to_the_second_shortcut_agrees_with_the_general_road() -> None:
    """Date-times to the second with a zone skip the general parser; a blank in front
    sends the same text down the general road, which must give the same answer."""
    import random

    rng = random.Random(11)
    zones = [
        "Z",
        "+00:00",
        "-00:00",
        "+02:00",
        "-05:30",
        "+14:00",
        "+23:59",
        "-23:59",
        "+24:00",
        "+05:60",
    ]
    clocks = [NOW, datetime(9999, 12, 30, tzinfo=UTC), datetime(2, 1, 1, tzinfo=UTC)]
    for _ in range(3000):
        value = (
            f"{rng.choice([1, 2, 1999, 2024, 9998, 9999]):04d}-{rng.randint(0, 13):02d}-"
            f"{rng.choice([0, 1, 28, 29, 30, 31, 32]):02d}T{rng.randint(0, 24):02d}:"
            f"{rng.choice([0, 30, 59, 60]):02d}:{rng.choice([0, 59, 60]):02d}{rng.choice(zones)}"
        )
        now = rng.choice(clocks)
        answers = []
        for text in (value, f" {value}"):
            try:
                answers.append(parse_lastmod(text, now=now))
            except FactRejected as exc:
                answers.append(exc.reason)
        assert answers[0] == answers[1], value


def test_parse_memos_stay_bounded() -> None:
    from scrapy_sitemapgen.sitemaps import facts

    for n in range(3 * facts._SCALAR_MEMO_SIZE):
        parse_priority(f"0.{n:05d}")
        parse_priority(n / (4 * facts._SCALAR_MEMO_SIZE))
        parse_changefreq(" " * (n % 50) + "daily" + " " * (n // 50))
    sizes = [len(facts._changefreqs)] + [len(memo) for memo in facts._priorities.values()]
    assert max(sizes) <= facts._SCALAR_MEMO_SIZE
    assert len(facts._changefreqs) > 0 and len(facts._priorities[str]) > 0
