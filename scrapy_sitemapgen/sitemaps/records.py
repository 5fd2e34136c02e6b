"""The sitemap fields of one item or feed record, validated into :class:`UrlFacts`.

Pure: the item pipeline (any item a spider yields), the offline build (every line of a
JSON-lines feed, in worker processes) and the build command's store ingestion read records
with one :class:`RecordReader`, and feed lines with one :data:`JSON_PARSERS` entry, so a
field means the same and is refused for the same reasons on every road.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .facts import (
    FactRejected,
    News,
    UrlFacts,
    Video,
    clean_title,
    make_news,
    make_video,
    parse_changefreq,
    parse_lastmod,
    parse_priority,
)
from .limits import MAX_IMAGES_PER_URL
from .urls import UrlRejected, normalize_loc

if TYPE_CHECKING:
    from datetime import datetime

    from .urls import UrlPolicy

__all__ = [
    "DEFAULT_JSON_PARSER",
    "ITEM_PREFIX",
    "JSON_PARSERS",
    "URL_FIELDS",
    "RecordReader",
    "SkipReporter",
    "record_facts",
    "record_fields",
    "url_field",
]

#: What a refused field or URL of a record is counted as: ``item_<reason>``.
ITEM_PREFIX = "item_"

#: The names a feed not written for sitemaps gives a page's URL (``scrapy crawl -O
#: items.jsonl`` with ``url``), in the order they are preferred.
URL_FIELDS = ("url", "link", "href", "page", "uri")


class SkipReporter(Protocol):
    """Where refusals go: :class:`..stats.Reporter` in a crawl, a tally in a build's
    worker process."""

    def skip(self, reason: str, url: str, detail: object = None) -> None: ...

    def exclude(self, reason: str, url: str) -> None: ...


#: ``issue(reason, value)``: a field was refused (reported as ``item_<reason>``).
OnIssue = Callable[[str, object], None]


def record_facts(
    loc: str,
    get: Callable[[str], Any],
    issue: OnIssue,
    now: datetime,
    as_mapping: Callable[[object], Mapping[str, object] | None] | None = None,
) -> UrlFacts:
    """The facts of a record whose ``loc`` is already normalised: each field read with
    ``get(name)`` and validated; a bad field is reported through ``issue`` and left out,
    the rest of the record is kept. ``as_mapping`` turns a nested item (a ``news`` given
    as an item object) into a mapping; plain mappings need nothing."""
    lastmod, changefreq, priority, images, videos, news = record_fields(get, issue, now, as_mapping)
    return UrlFacts(loc, lastmod, changefreq, priority, images=images, videos=videos, news=news)


Fields = tuple[
    "str | None", "str | None", "str | None", "tuple[str, ...]", "tuple[Video, ...]", "News | None"
]


def record_fields(
    get: Callable[[str], Any],
    issue: OnIssue,
    now: datetime,
    as_mapping: Callable[[object], Mapping[str, object] | None] | None = None,
    media_loc: Callable[[str], str] = normalize_loc,
) -> Fields:
    """:func:`record_facts` as a plain tuple (lastmod, changefreq, priority, images,
    videos, news): the offline build keeps rows, not objects, for a million records.
    ``media_loc`` makes an image's or a video's URL a ``<loc>`` (``UrlPolicy.media_loc``,
    which maps a medium on a mapped origin: SITEMAPGEN_ORIGIN_MAP).

    The fields are read and refused in one fixed order (lastmod, changefreq, priority,
    then the media), which is the order the issues are reported in."""
    raw = get("lastmod")
    lastmod = None
    if raw is not None and raw != "":
        try:
            lastmod = parse_lastmod(raw, now)
        except FactRejected as exc:
            issue(exc.reason, raw)
    changefreq = get("changefreq")
    priority = get("priority")
    images = get("images")
    videos = get("videos")
    news = get("news")
    return (
        lastmod,
        # Most records have neither: no call for an absent one (_scalar's first test).
        None if changefreq is None else _scalar(changefreq, parse_changefreq, issue),
        None if priority is None else _scalar(priority, parse_priority, issue),
        _images(images, issue, media_loc) if images is not None else (),
        _videos(videos, issue, now, media_loc) if videos is not None else (),
        _news(news, issue, now, as_mapping) if news is not None else None,
    )


class _Issues:
    """The reader's ``issue`` callback about the record being read. Apart from the reader,
    so that the reader can keep it bound once without referring to itself: a build's
    workers run without the cyclic garbage collector, which would alone free a cycle."""

    __slots__ = ("loc", "reporter")

    def __init__(self, reporter: SkipReporter) -> None:
        self.reporter = reporter
        self.loc = ""

    def issue(self, reason: str, value: object) -> None:
        self.reporter.skip(ITEM_PREFIX + reason, self.loc, value)


class RecordReader:
    """Reads records one at a time: the ``loc`` through the URL policy (a refused or
    excluded URL counted, the record then skipped), then every other field
    (:func:`record_fields`), a refused field counted as ``item_<reason>`` and left out.

    One reader serves many records (a build reads a million): what it needs per record is
    bound once."""

    __slots__ = ("_as_mapping", "_issue", "_issues", "_locate", "_media", "_refuse", "_reporter")

    def __init__(
        self,
        policy: UrlPolicy,
        reporter: SkipReporter,
        as_mapping: Callable[[object], Mapping[str, object] | None] | None = None,
    ) -> None:
        self._reporter = reporter
        self._locate = policy.loc
        # Without a map, a medium's URL is only normalised: the plain function, no method.
        self._media = policy.media_loc if policy.origin_map else normalize_loc
        # Most crawls and builds have no patterns: no refusal to look up per record.
        self._refuse = policy.refusal if policy.allow or policy.deny else None
        self._as_mapping = as_mapping
        self._issues = _Issues(reporter)
        self._issue = self._issues.issue

    def read(self, get: Callable[[str], Any], now: datetime) -> tuple[str, Fields] | None:
        """``(loc, fields)`` of the record ``get`` reads, or None: no ``loc`` (a missing or
        empty one: not counted, as most items of a crawl are no sitemap records; a feed's
        reader counts them), or a URL the policy refuses or excludes (counted)."""
        raw_loc = get("loc")
        if not raw_loc:
            return None
        try:
            loc = self._locate(str(raw_loc))
        except UrlRejected as exc:
            self._reporter.skip(ITEM_PREFIX + exc.reason, str(raw_loc))
            return None
        if self._refuse is not None:
            refusal = self._refuse(loc)
            if refusal is not None:
                self._reporter.exclude(refusal, loc)
                return None
        self._issues.loc = loc
        return loc, record_fields(get, self._issue, now, self._as_mapping, self._media)

    def facts(self, get: Callable[[str], Any], now: datetime) -> UrlFacts | None:
        """:meth:`read` as :class:`UrlFacts`."""
        found = self.read(get, now)
        if found is None:
            return None
        loc, (lastmod, changefreq, priority, images, videos, news) = found
        # An item's title: the changes feed's entry title, before the page's. (Not in the
        # fields a build keeps: a feed's build writes no titles.)
        title = clean_title(get("title"))
        return UrlFacts(
            loc, lastmod, changefreq, priority, images=images, videos=videos, news=news, title=title
        )


def url_field(record: Mapping[str, object]) -> str | None:
    """The name of a field of ``record`` (one without ``loc``) that looks like the page's
    URL: one of :data:`URL_FIELDS`, in any case, holding an http(s) URL; None if none."""
    found: tuple[int, str] | None = None
    for name, value in record.items():
        rank = _URL_FIELD_RANKS.get(name.lower()) if isinstance(name, str) else None
        if (
            rank is not None
            and isinstance(value, str)
            and value[:8].lower().startswith(("http://", "https://"))
            and (found is None or rank < found[0])
        ):
            found = (rank, name)
    return found[1] if found is not None else None


_URL_FIELD_RANKS = {name: rank for rank, name in enumerate(URL_FIELDS)}


def _scalar(raw: object, parse: Callable[[object], str], issue: OnIssue) -> str | None:
    if raw is None or raw == "":
        return None
    try:
        return parse(raw)
    except FactRejected as exc:
        issue(exc.reason, raw)
        return None


def _list(raw: object, name: str, issue: OnIssue) -> list[Any]:
    if type(raw) is list:  # what JSON gives, and most items: no ABC check needed
        return raw
    if isinstance(raw, (str, bytes, Mapping)) or not hasattr(raw, "__iter__"):
        issue(f"bad_{name}", raw)
        return []
    return list(raw)


def _images(images: object, issue: OnIssue, media_loc: Callable[[str], str]) -> tuple[str, ...]:
    if type(images) is list:  # what JSON gives, and most items
        if len(images) == 1:  # a third of feed image lists: no dict to dedup through
            try:
                return (media_loc(images[0]),)
            except (UrlRejected, AttributeError, TypeError):
                pass  # read again below, which reports it
        raws: list[Any] = images
    else:
        raws = _list(images, "images", issue)
    found: dict[str, None] = {}
    for raw in raws:
        try:
            found[media_loc(raw)] = None
        except (UrlRejected, AttributeError, TypeError):
            issue("bad_image", raw)
    if len(found) > MAX_IMAGES_PER_URL:
        issue("images_over_limit", len(found))
    return tuple(found)[:MAX_IMAGES_PER_URL]


def _videos(
    raws: object, issue: OnIssue, now: datetime, media_loc: Callable[[str], str]
) -> tuple[Video, ...]:
    videos = []
    for raw in _list(raws, "videos", issue):
        if not isinstance(raw, Mapping):
            issue("video_incomplete", raw)
            continue
        try:
            videos.append(make_video(raw, media_loc, issue, now))
        except FactRejected as exc:
            issue(exc.reason, exc.value)
    return tuple(videos)


def _news(
    raw: object,
    issue: OnIssue,
    now: datetime,
    as_mapping: Callable[[object], Mapping[str, object] | None] | None,
) -> News | None:
    mapping = raw if isinstance(raw, Mapping) else as_mapping(raw) if as_mapping else None
    if mapping is None:
        issue("news_incomplete", raw)
        return None
    try:
        return make_news(mapping, now)
    except FactRejected as exc:
        issue(exc.reason, exc.value)
        return None


# --- feed lines ---------------------------------------------------------------------------

_BOM = b"\xef\xbb\xbf"
_STDLIB_DECODE = json.JSONDecoder().decode  # json.loads less its per-call type checks


def _json_line(line: bytes) -> Any:
    """A line as ``json.loads(line)`` reads it, a UTF-8 BOM skipped."""
    return _STDLIB_DECODE(line.decode("utf-8-sig" if line.startswith(_BOM) else "utf-8"))


def _orjson_line(line: bytes) -> Any:
    """:func:`_json_line` by orjson: what orjson refuses (a BOM, NaN, a lone surrogate, a
    float out of range) is read by the standard parser, so the same lines are records.
    One difference: orjson reads an integer beyond 64 bits as a float, and no sitemap field
    accepts such a number, so at most a refused value is logged as a float rather than an
    integer."""
    try:
        return _orjson_loads(line)
    except ValueError:  # orjson.JSONDecodeError is one
        return _json_line(line)


#: The JSON parsers a feed line can be read with: orjson when installed (the ``fast``
#: extra). Each raises ValueError for a line that is not JSON.
JSON_PARSERS: dict[str, Callable[[bytes], Any]] = {"json": _json_line}
try:
    from orjson import loads as _orjson_loads

    JSON_PARSERS["orjson"] = _orjson_line
except ImportError:  # pragma: no cover - the extra is installed for the tests
    pass
DEFAULT_JSON_PARSER = "orjson" if "orjson" in JSON_PARSERS else "json"
