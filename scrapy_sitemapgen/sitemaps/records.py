"""The sitemap fields of one item or feed record, validated into :class:`UrlFacts`.

Pure: the item pipeline (any item a spider yields) and the offline build (every line of a
JSON-lines feed, in worker processes) read records with this one function, so a field
means the same and is refused for the same reasons on both roads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .facts import (
    FactRejected,
    News,
    UrlFacts,
    Video,
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

__all__ = ["FIELDS", "record_facts", "record_fields"]

#: The field names a record may carry; ``loc`` is read (and normalised) by the caller.
FIELDS = ("loc", "lastmod", "changefreq", "priority", "images", "videos", "news")

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
) -> Fields:
    """:func:`record_facts` as a plain tuple (lastmod, changefreq, priority, images,
    videos, news): the offline build keeps rows, not objects, for a million records.

    The fields are read and refused in one fixed order (lastmod, changefreq, priority,
    then the media), which is the order the issues are reported in."""
    raw = get("lastmod")
    lastmod = None
    if raw is not None and raw != "":
        try:
            lastmod = parse_lastmod(raw, now)
        except FactRejected as exc:
            issue(exc.reason, raw)
    images = get("images")
    videos = get("videos")
    news = get("news")
    return (
        lastmod,
        _scalar(get("changefreq"), parse_changefreq, issue),
        _scalar(get("priority"), parse_priority, issue),
        _images(images, issue) if images is not None else (),
        _videos(videos, issue, now) if videos is not None else (),
        _news(news, issue, now, as_mapping) if news is not None else None,
    )


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


def _images(images: object, issue: OnIssue) -> tuple[str, ...]:
    if type(images) is list:  # what JSON gives, and most items
        if len(images) == 1:  # a third of feed image lists: no dict to dedup through
            try:
                return (normalize_loc(images[0]),)
            except (UrlRejected, AttributeError, TypeError):
                pass  # read again below, which reports it
        raws: list[Any] = images
    else:
        raws = _list(images, "images", issue)
    found: dict[str, None] = {}
    for raw in raws:
        try:
            found[normalize_loc(raw)] = None
        except (UrlRejected, AttributeError, TypeError):
            issue("bad_image", raw)
    if len(found) > MAX_IMAGES_PER_URL:
        issue("images_over_limit", len(found))
    return tuple(found)[:MAX_IMAGES_PER_URL]


def _videos(raws: object, issue: OnIssue, now: datetime) -> tuple[Video, ...]:
    videos = []
    for raw in _list(raws, "videos", issue):
        if not isinstance(raw, Mapping):
            issue("video_incomplete", raw)
            continue
        try:
            videos.append(make_video(raw, normalize_loc, issue, now))
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
