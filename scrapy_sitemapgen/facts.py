"""The facts recorded about one URL, and the rules that turn raw values into valid ones.

Pure: HTTP headers, item fields and stored rows all pass through the same parsers, so a
value that reaches the writer already satisfies P4-P6 and the writer never has to guess.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

from .limits import CHANGEFREQ_VALUES, PRIORITY_MAX, PRIORITY_MIN

__all__ = [
    "FUTURE_TOLERANCE",
    "FactRejected",
    "UrlFacts",
    "format_w3c",
    "lastmod_from_http",
    "parse_changefreq",
    "parse_lastmod",
    "parse_priority",
]

#: A lastmod further ahead of the crawl clock than this is a broken server clock or a
#: placeholder, not a modification time: it is dropped rather than published.
FUTURE_TOLERANCE = timedelta(days=1)

_W3C_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_W3C_DATETIME_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$"
)


class FactRejected(ValueError):
    """A value that cannot be written; ``reason`` is the stats qualifier."""

    def __init__(self, reason: str, value: object) -> None:
        super().__init__(f"{reason}: {str(value)[:200]!r}")
        self.reason = reason
        self.value = value


@dataclass(frozen=True, slots=True)
class UrlFacts:
    """One ``<url>`` entry: ``loc`` normalised (see :func:`urls.normalize_loc`), the rest
    already valid W3C / P5 / P6 text or ``None`` when unknown (the tag is then omitted)."""

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None


def format_w3c(moment: datetime) -> str:
    """W3C Datetime in UTC to the second (P4): ``2015-10-21T07:28:00+00:00``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _check_not_future(moment: datetime, now: datetime | None, value: object) -> None:
    now = now or datetime.now(timezone.utc)
    if moment > now + FUTURE_TOLERANCE:
        raise FactRejected("lastmod_future", value)


def lastmod_from_http(value: bytes | str, now: datetime | None = None) -> str:
    """Parse a ``Last-Modified`` header value into a W3C Datetime (P4).

    Same parser as Scrapy's HTTP cache (``email.utils.parsedate_to_datetime``), which takes
    RFC 1123, RFC 850 and asctime dates; a date without a zone is GMT, as RFC 9110 says all
    HTTP dates are. Raises :class:`FactRejected` when the value is no date or lies in the
    future: the lastmod is then omitted, never replaced by the crawl time.
    """
    text = value.decode("latin-1") if isinstance(value, bytes) else value
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


def parse_lastmod(value: object, now: datetime | None = None) -> str:
    """Validate a lastmod given by a spider's item (P4).

    Accepts ``datetime``/``date`` objects and W3C strings (``YYYY-MM-DD`` or a full
    date-time). A date-time without a zone is taken as UTC, Python's and most feeds'
    convention, and documented as such. Date-times are written in UTC; dates stay dates.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
        _check_not_future(moment, now, value)
        return value.isoformat()
    elif isinstance(value, str):
        text = value.strip()
        if _W3C_DATE_RE.match(text):
            try:
                day = date.fromisoformat(text)
            except ValueError:
                raise FactRejected("bad_lastmod", value) from None
            return parse_lastmod(day, now)
        match = _W3C_DATETIME_RE.match(text)
        if not match:
            raise FactRejected("bad_lastmod", value)
        day_part, time_part, zone = match.groups()
        if zone == "Z" or zone is None:
            zone = "+00:00"
        elif ":" not in zone:
            zone = f"{zone[:3]}:{zone[3:]}"
        try:
            moment = datetime.fromisoformat(f"{day_part}T{time_part}{zone}")
        except ValueError:
            raise FactRejected("bad_lastmod", value) from None
    else:
        raise FactRejected("bad_lastmod", value)
    _check_not_future(moment, now, value)
    try:
        return format_w3c(moment)
    except (OverflowError, ValueError):  # year 1 shifted to UTC falls off the calendar
        raise FactRejected("bad_lastmod", value) from None


def parse_changefreq(value: object) -> str:
    """One of the P5 words, case-insensitively."""
    if isinstance(value, str) and value.strip().lower() in CHANGEFREQ_VALUES:
        return value.strip().lower()
    raise FactRejected("bad_changefreq", value)


def parse_priority(value: object) -> str:
    """A P6 priority as decimal text (``0.6``, ``1.0``); numbers or numeric strings."""
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
