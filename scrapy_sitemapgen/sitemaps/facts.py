"""The facts recorded about one URL, and the rules that turn raw values into valid ones.

Pure: HTTP headers, item fields and stored rows all pass through the same parsers, so a
value that reaches the writer already satisfies P4-P6 and the writer never has to guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

from .. import clock
from .langtags import ISO_639_1, ISO_3166_1_ALPHA_2, ISO_15924
from .limits import (
    CHANGEFREQ_VALUES,
    PRIORITY_MAX,
    PRIORITY_MIN,
    VIDEO_DESCRIPTION_MAX,
    VIDEO_DURATION_MAX,
    VIDEO_DURATION_MIN,
    VIDEO_TITLE_MAX,
    XML_FORBIDDEN_CHARS,
)

__all__ = [
    "FUTURE_TOLERANCE",
    "Alternate",
    "Content",
    "FactRejected",
    "News",
    "UrlFacts",
    "Video",
    "clean_title",
    "format_w3c",
    "lastmod_from_http",
    "make_news",
    "make_video",
    "parse_changefreq",
    "parse_hreflang",
    "parse_lastmod",
    "parse_priority",
    "unique_videos",
    "video_key",
]

#: A lastmod further ahead of the crawl clock than this is a broken server clock or a
#: placeholder, not a modification time: it is dropped rather than published.
FUTURE_TOLERANCE = timedelta(days=1)

_W3C_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# RFC 9110 5.6.7 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (the day name is not checked,
# as email.utils does not check it either).
_IMF_FIXDATE_RE = re.compile(
    r"\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT\s*\Z"
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
# A date-time to the second with a zone, ASCII digits only: what feeds write, mostly unique
# (so not memoised) and read without the general parser. Group 1 is set for UTC.
_SECONDS_DATETIME_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:(Z|\+00:00)|[+-][0-9]{2}:[0-9]{2})\Z"
)
_W3C_DATETIME_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$"
)


class FactRejected(ValueError):
    """A value that cannot be written; ``reason`` is the stats qualifier."""

    def __init__(self, reason: str, value: object) -> None:
        super().__init__(f"{reason}: {str(value)[:200]!r}")
        self.reason = reason
        self.value = value


# The shape of an hreflang value Google reads: a two-letter language, an optional four-letter
# script, an optional two-letter region; each part is then looked up in its ISO list.
_HREFLANG_RE = re.compile(r"([A-Za-z]{2})(?:-([A-Za-z]{4}))?(?:-([A-Za-z]{2}))?")
# Google News: an ISO 639 code, with zh-cn / zh-tw the only region forms.
_NEWS_LANGUAGE_RE = re.compile(r"^(?:[a-z]{2,3}|zh-cn|zh-tw)$")
_SPACE_RE = re.compile(r"\s+")
_FORBIDDEN_RE = re.compile(XML_FORBIDDEN_CHARS)

#: Called with (reason, value) for a value dropped or shortened without losing the fact.
OnIssue = Callable[[str, object], None]
#: Turns a raw URL into a ``<loc>``-grade one, raising ``ValueError`` when it cannot.
UrlNormalizer = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Video:
    """A ``<video:video>`` (G7) with its required fields present; fields in writing order."""

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    publication_date: str | None = None


def video_key(video: Video) -> tuple[str | None, str | None]:
    """Videos are one per (content, player) pair: the first seen is kept."""
    return (video.content_loc, video.player_loc)


def unique_videos(videos: Iterable[Video]) -> tuple[Video, ...]:
    """``videos`` without repeats of a :func:`video_key`, first kept, in order."""
    found: dict[tuple[str | None, str | None], Video] = {}
    for video in videos:
        found.setdefault(video_key(video), video)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class Alternate:
    """A language version of the page: ``<xhtml:link rel="alternate" hreflang href>``."""

    hreflang: str
    href: str


@dataclass(frozen=True, slots=True)
class News:
    """A ``<news:news>`` entry (Google News sitemaps); all four fields are required."""

    publication_name: str
    publication_language: str
    publication_date: str
    title: str


@dataclass(frozen=True, slots=True)
class Content:
    """What a page's content was when it was fetched: its fingerprint, what counts as a
    change (:func:`pages.fingerprint.change_fingerprint`), the fetch time (a W3C Datetime,
    the ``observed`` lastmod when the content turns out to have changed), whether the page
    names itself as its canonical URL (the preferred one of duplicates), and the
    fingerprint of its text alone when that differs from ``fingerprint`` (``text``)."""

    fingerprint: str
    fetched: str
    canonical: bool = False
    text: str | None = None

    @property
    def duplicate_key(self) -> str:
        """What pages that are the same to a reader share: the text's fingerprint. The
        canonical URL, the links and the structured data often name the page itself, so
        two URLs of one page would differ by them."""
        return self.fingerprint if self.text is None else self.text


@dataclass(slots=True)
class UrlFacts:
    """One ``<url>`` entry: ``loc`` normalised (see :func:`urls.normalize_loc`), the rest
    already valid W3C / P5 / P6 text or ``None`` when unknown (the tag is then omitted).
    Media and alternates are valid too, deduplicated and within the limits.

    Not frozen, though nothing changes one once made (``dataclasses.replace`` makes a new
    one): one is made per URL each time a store is read, and a frozen dataclass's
    ``__init__`` (a setattr per field) costs as much as the rest of reading a URL."""

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None
    images: tuple[str, ...] = ()
    videos: tuple[Video, ...] = ()
    alternates: tuple[Alternate, ...] = ()
    news: News | None = None
    content: Content | None = None
    #: The page's own language as an hreflang value (its ``<html lang>``), kept only for a
    #: page with alternates when the clusters are checked: its self entry's last resort.
    language: str | None = None
    #: The page's ``<title>`` (or an item's ``title``), kept only for the changes feed
    #: (SITEMAPGEN_CHANGES_FEED): its entries' titles. Never written in a sitemap.
    title: str | None = None
    #: When this run's or an earlier run's evidence last confirmed the entry (seconds since
    #: the epoch), for an entry published before and kept without evidence now (a 5xx,
    #: not reached: :mod:`.evidence`); None for an entry this run listed. Never written.
    confirmed: int | None = None


def clean_title(title: object) -> str | None:
    """A page's or an item's title as kept (the changes feed's entry title): whitespace
    collapsed, the characters XML 1.0 forbids removed (a lone surrogate could not even be
    stored as UTF-8, P1); None when nothing is left or it is no text."""
    return _text(title) or None


def format_w3c(moment: datetime) -> str:
    """W3C Datetime in UTC to the second (P4): ``2015-10-21T07:28:00+00:00``."""
    utc = moment.astimezone(timezone.utc)
    # Not strftime: %Y gives "100", not "0100", for early years on some platforms.
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
        f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}+00:00"
    )


def _check_not_future(moment: datetime, now: datetime | None, value: object) -> None:
    now = now or clock.now()
    if moment > now + FUTURE_TOLERANCE:
        raise FactRejected("lastmod_future", value)


def lastmod_from_http(value: bytes | str, now: datetime | None = None) -> str:
    """Parse a ``Last-Modified`` header value into a W3C Datetime (P4).

    Same parser as Scrapy's HTTP cache (``email.utils.parsedate_to_datetime``), which takes
    RFC 1123, RFC 850 and asctime dates; a date without a zone is GMT, as RFC 9110 says all
    HTTP dates are. Raises :class:`FactRejected` when the value is no date or lies in the
    future: the lastmod is then omitted, never replaced by the crawl time.
    """
    known = _http_lastmods.get(value)
    if known is not None:  # a site's pages often share a date (a deploy, a static export)
        _check_not_future(known[1], now, value)
        return known[0]
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    fixdate = _IMF_FIXDATE_RE.match(text)
    if fixdate is not None:  # what servers send (RFC 9110's preferred form): no email parser
        day, month, year, hour, minute, second = fixdate.groups()
        try:
            moment = datetime(
                int(year),
                _MONTHS[month],
                int(day),
                int(hour),
                int(minute),
                int(second),
                tzinfo=timezone.utc,
            )
        except ValueError:
            raise FactRejected("bad_lastmod", value) from None
        w3c = f"{year}-{_MONTHS[month]:02d}-{day}T{hour}:{minute}:{second}+00:00"  # format_w3c's
        if len(_http_lastmods) >= _LASTMOD_MEMO_SIZE:
            _http_lastmods.clear()
        _http_lastmods[value] = (w3c, moment)
        _check_not_future(moment, now, value)
        return w3c
    try:
        moment = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        raise FactRejected("bad_lastmod", value) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    _check_not_future(moment, now, value)
    try:
        return format_w3c(moment)
    except (OverflowError, ValueError):
        raise FactRejected("bad_lastmod", value) from None


#: Bounds of the parse memos: well above the distinct values a feed repeats (days over a
#: decade, a few spellings of the P5 words and P6 numbers), small enough that a worker's
#: memory stays flat over millions of records. A full memo is emptied, not evicted from:
#: the values that repeat come back within a few records.
_LASTMOD_MEMO_SIZE = 8_192
_SCALAR_MEMO_SIZE = 1_024

#: Exact ``str`` lastmod -> (W3C text or None when it cannot be written, moment or None
#: when it is no date). Only the future check depends on the clock, so it is kept out of
#: the memo and made on every call.
_lastmods: dict[str, tuple[str | None, datetime | None]] = {}
#: Exact Last-Modified value (IMF-fixdate, the form servers send) -> (W3C text, moment);
#: the future check is made on every call.
_http_lastmods: dict[bytes | str, tuple[str, datetime]] = {}


def parse_lastmod(value: object, now: datetime | None = None) -> str:
    """Validate a lastmod given by a spider's item (P4).

    Accepts ``datetime``/``date`` objects and W3C strings (``YYYY-MM-DD`` or a full
    date-time). A date-time without a zone is taken as UTC, Python's and most feeds'
    convention, and documented as such. Date-times are written in UTC; dates stay dates.
    """
    if type(value) is str:  # what feeds and most items give; str subclasses take the long road
        known = _lastmods.get(value)
        if known is None:
            seconds = _SECONDS_DATETIME_RE.match(value)
            if seconds is not None:  # a million feed records take this road
                return _lastmod_to_the_second(value, seconds.group(1) is not None, now)
            known = _read_lastmod(value)
            if len(_lastmods) >= _LASTMOD_MEMO_SIZE:
                _lastmods.clear()
            _lastmods[value] = known
        text, moment = known
    elif isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        _check_not_future(moment, now, value)
        try:
            return format_w3c(moment)
        except (OverflowError, ValueError):  # year 1 shifted to UTC falls off the calendar
            raise FactRejected("bad_lastmod", value) from None
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
        _check_not_future(moment, now, value)
        return value.isoformat()
    elif isinstance(value, str):
        text, moment = _read_lastmod(value)
    else:
        raise FactRejected("bad_lastmod", value)
    # The order of the checks is the reasons' precedence: no date, then the future, then
    # a date-time that falls off the calendar in UTC.
    if moment is None:
        raise FactRejected("bad_lastmod", value)
    _check_not_future(moment, now, value)
    if text is None:
        raise FactRejected("bad_lastmod", value)
    return text


def _lastmod_to_the_second(value: str, utc: bool, now: datetime | None) -> str:
    """A date-time to the second with a zone: one C parse, and for UTC the output is the
    input with "+00:00", once the date and time are known to exist."""
    if utc:
        text = f"{value[:19]}+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise FactRejected("bad_lastmod", value) from None
        _check_not_future(moment, now, value)
        return text
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise FactRejected("bad_lastmod", value) from None
    try:
        # Converted before the future check, not after as format_w3c would be: comparing
        # two UTC times is a field compare, a time at another offset costs four times that.
        moment = moment.astimezone(timezone.utc)
    except OverflowError:  # falls off the calendar in UTC; the future check comes first
        _check_not_future(moment, now, value)
        raise FactRejected("bad_lastmod", value) from None
    _check_not_future(moment, now, value)
    return moment.isoformat()  # format_w3c's text, as there are no microseconds to drop


def _read_lastmod(value: str) -> tuple[str | None, datetime | None]:
    """A W3C string as (text, moment), independent of the clock so it can be memoised:
    ``(None, None)`` when it is no date, ``(None, moment)`` when the moment exists but
    cannot be written in UTC (a refusal that the future check takes precedence over)."""
    text = value.strip()
    if text != value:
        return _read_lastmod(text)
    if _W3C_DATE_RE.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return None, None
        # A valid YYYY-MM-DD is its own isoformat().
        return text, datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    match = _W3C_DATETIME_RE.match(text)
    if not match:
        return None, None
    day_part, time_part, zone = match.groups()
    if zone == "Z" or zone is None:
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    try:
        moment = datetime.fromisoformat(f"{day_part}T{time_part}{zone}")
    except ValueError:
        return None, None
    try:
        return format_w3c(moment), moment
    except (OverflowError, ValueError):  # year 1 shifted to UTC falls off the calendar
        return None, moment


#: Exact ``str`` changefreq -> its P5 word; only accepted values are kept.
_changefreqs: dict[str, str] = {}


def parse_changefreq(value: object) -> str:
    """One of the P5 words, case-insensitively."""
    if type(value) is str:
        word = _changefreqs.get(value)
        if word is not None:
            return word
    if isinstance(value, str) and value.strip().lower() in CHANGEFREQ_VALUES:
        word = value.strip().lower()
        if type(value) is str:
            if len(_changefreqs) >= _SCALAR_MEMO_SIZE:
                _changefreqs.clear()
            _changefreqs[value] = word
        return word
    raise FactRejected("bad_changefreq", value)


#: Priority text of accepted values, one memo per exact type: ``True == 1 == 1.0`` share a
#: dict key, and bool (no type here) must stay refused. Subclasses take the long road.
_priorities: dict[type, dict[object, str]] = {str: {}, float: {}, int: {}}


def parse_priority(value: object) -> str:
    """A P6 priority as decimal text (``0.6``, ``1.0``); numbers or numeric strings."""
    memo = _priorities.get(type(value))
    if memo is not None:
        text = memo.get(value)
        if text is not None:
            return text
    text = _priority_text(value)
    if memo is not None:
        if len(memo) >= _SCALAR_MEMO_SIZE:
            memo.clear()
        memo[value] = text
    return text


def _priority_text(value: object) -> str:
    """:func:`parse_priority` without its memo."""
    if isinstance(value, bool):
        raise FactRejected("bad_priority", value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FactRejected("bad_priority", value) from None
    if math.isnan(number) or not PRIORITY_MIN <= number <= PRIORITY_MAX:
        raise FactRejected("bad_priority", value)
    text = f"{number + 0.0:.3f}".rstrip("0")  # + 0.0 turns -0.0 into 0.0
    return text + "0" if text.endswith(".") else text


def parse_hreflang(value: object) -> str:
    """An hreflang value Google reads, in BCP 47's conventional case (``en-GB``,
    ``zh-Hant-TW``, ``x-default``).

    Google's rule: an ISO 639-1 language, optionally an ISO 15924 script, optionally an
    ISO 3166-1 alpha-2 region, or ``x-default``; matched case-insensitively, so ``EN-gb`` is
    ``en-GB``. Each part must be in its list (:mod:`.langtags`), so ``en-UK`` is refused
    (the region is GB). A valid BCP 47 tag outside that rule (``es-419``, a UN M.49
    region; ``fil``, a three-letter language; ``de-CH-1901``, a variant) is refused too:
    Google ignores such an annotation, so it is dropped and counted where the user sees
    it rather than published to no effect.
    """
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "x-default":
            return "x-default"
        match = _HREFLANG_RE.fullmatch(text)
        if match is not None:
            language, script, region = match.groups()
            language = language.lower()
            if language in ISO_639_1:
                tag = language
                if script is not None:
                    script = script.title()
                    if script not in ISO_15924:
                        raise FactRejected("bad_hreflang", value)
                    tag += "-" + script
                if region is not None:
                    region = region.upper()
                    if region not in ISO_3166_1_ALPHA_2:
                        raise FactRejected("bad_hreflang", value)
                    tag += "-" + region
                return tag
    raise FactRejected("bad_hreflang", value)


def _text(value: object) -> str:
    """Free text as it will be written: XML-forbidden characters removed (P1) before the
    blank check, so text made only of them counts as missing, not as an empty element."""
    if not isinstance(value, str):
        return ""
    return _SPACE_RE.sub(" ", _FORBIDDEN_RE.sub("", value)).strip()


def _shorten(text: str, limit: int, reason: str, on_issue: OnIssue) -> str:
    if len(text) <= limit:
        return text
    on_issue(reason, text)
    return text[: limit - 1].rstrip() + "\u2026"


def _optional_url(
    raw: object, normalize: UrlNormalizer, reason: str, on_issue: OnIssue
) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return normalize(raw)
    except ValueError:
        on_issue(reason, raw)
        return None


def make_video(
    raw: Mapping[str, object],
    normalize: UrlNormalizer,
    on_issue: OnIssue,
    now: datetime | None = None,
) -> Video:
    """A valid :class:`Video` from raw fields (page candidates or an item's dict).

    Raises :class:`FactRejected` ``video_incomplete`` when a field Google requires is
    missing or unusable (thumbnail, title, description, and a content or player URL).
    Overlong title or description is shortened (with an ellipsis) rather than losing the
    video; a bad optional duration or date is dropped. Both are reported via ``on_issue``.
    """
    thumbnail = _optional_url(raw.get("thumbnail_loc"), normalize, "video_bad_url", on_issue)
    content = _optional_url(raw.get("content_loc"), normalize, "video_bad_url", on_issue)
    player = _optional_url(raw.get("player_loc"), normalize, "video_bad_url", on_issue)
    title = _text(raw.get("title"))
    description = _text(raw.get("description"))
    if not (thumbnail and title and description and (content or player)):
        raise FactRejected("video_incomplete", content or player or title or dict(raw))
    duration: int | None = None
    raw_duration = raw.get("duration")
    if raw_duration is not None and raw_duration != "":
        try:
            number = float(raw_duration)  # type: ignore[arg-type]
            if isinstance(raw_duration, bool) or not math.isfinite(number):
                raise ValueError
            duration = round(number)
            if not VIDEO_DURATION_MIN <= duration <= VIDEO_DURATION_MAX:
                raise ValueError
        except (TypeError, ValueError):
            on_issue("video_bad_duration", raw_duration)
            duration = None
    published: str | None = None
    raw_date = raw.get("publication_date")
    if raw_date is not None and raw_date != "":
        try:
            published = parse_lastmod(raw_date, now)
        except FactRejected:
            on_issue("video_bad_publication_date", raw_date)
    return Video(
        thumbnail_loc=thumbnail,
        title=_shorten(title, VIDEO_TITLE_MAX, "video_title_shortened", on_issue),
        description=_shorten(
            description, VIDEO_DESCRIPTION_MAX, "video_description_shortened", on_issue
        ),
        content_loc=content,
        player_loc=player,
        duration=duration,
        publication_date=published,
    )


def make_news(raw: Mapping[str, object], now: datetime | None = None) -> News:
    """A valid :class:`News` from an item's ``news`` mapping, or :class:`FactRejected`."""
    name = _text(raw.get("publication_name"))
    title = _text(raw.get("title"))
    language = _text(raw.get("publication_language")).lower()
    if not (name and title and language and raw.get("publication_date")):
        raise FactRejected("news_incomplete", dict(raw))
    if not _NEWS_LANGUAGE_RE.match(language):
        raise FactRejected("news_bad_language", language)
    try:
        published = parse_lastmod(raw.get("publication_date"), now)
    except FactRejected:
        raise FactRejected("news_bad_date", raw.get("publication_date")) from None
    return News(name, language, published, title)
