"""The merge rules, once: how the records of one URL combine, whatever order they arrive
in, and what a merged row publishes.

A record is kept as a :data:`Row` of seven columns, each source (the page's response, the
spider's items) in columns of its own, so that combining never depends on arrival order:

- ``page_lastmod``, ``item_lastmod``: the newest of each source wins, and an item's
  lastmod beats the page's when published (the lastmod decision, :mod:`.lastmod`);
- ``changefreq``, ``priority``, ``page_extra``, ``item_extra``, ``news``: the latest value
  given replaces an earlier one (:func:`latest_given`); ``None`` means "not given", and a
  page record without media gives ``""``, which does replace older media.

:func:`merge` is the rule as a pure function. The SQLite store applies it in SQL and the
Redis store in Lua, for speed; property tests hold both to this function over random
records in random order (tests/test_merge.py). The offline build's rows carry only item
columns and apply the same primitives.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .facts import Alternate, Content, News, UrlFacts, Video
from .lastmod import newest, published
from .limits import MAX_IMAGES_PER_URL

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "COLUMNS",
    "Row",
    "entry",
    "fact_row",
    "latest_given",
    "merge",
    "newest",
    "published_entry",
    "published_text",
    "row_facts",
    "unique_videos",
    "video_fields",
    "video_key",
]

#: The stored columns of one URL's record, in order.
COLUMNS = (
    "page_lastmod",
    "item_lastmod",
    "changefreq",
    "priority",
    "page_extra",
    "item_extra",
    "news",
)
Row = tuple["str | None", ...]


def latest_given(old: Any, new: Any) -> Any:
    """The newer value unless it was not given (``None``)."""
    return old if new is None else new


_RULES = (newest, newest, latest_given, latest_given, latest_given, latest_given, latest_given)


def merge(old: Row, new: Row) -> Row:
    """Two records of one URL, ``new`` recorded after ``old``, as one."""
    return tuple(rule(a, b) for rule, a, b in zip(_RULES, old, new))


def video_key(video: Video) -> tuple[str | None, str | None]:
    """Videos are one per (content, player) pair: the first seen is kept."""
    return (video.content_loc, video.player_loc)


def video_fields(v: Video) -> tuple[Any, ...]:
    """A video's fields as a plain tuple, in ``Video``'s order: how rows keep videos."""
    return (
        v.thumbnail_loc,
        v.title,
        v.description,
        v.content_loc,
        v.player_loc,
        v.duration,
        v.publication_date,
    )


def unique_videos(videos: Iterable[Video]) -> tuple[Video, ...]:
    """``videos`` without repeats of a :func:`video_key`, first kept, in order."""
    found: dict[tuple[str | None, str | None], Video] = {}
    for video in videos:
        found.setdefault(video_key(video), video)
    return tuple(found.values())


# json.dumps() with options builds an encoder per call: these are built once (same text).
_stdlib_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_news_json = json.JSONEncoder(ensure_ascii=False).encode
try:  # the ``fast`` extra
    from orjson import dumps as _orjson_dumps
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - the extra is installed for the tests
    _orjson_dumps = _orjson_loads = None  # type: ignore[assignment]


def _compact_json(value: object) -> str:
    """The standard library's compact JSON, by orjson when installed (it runs once per
    recorded page, and orjson gives the same text for every code point, tested).
    What orjson refuses (a lone surrogate, an integer beyond 64 bits) takes the standard road."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    return _stdlib_compact_json(value)


def _dump_extra(facts: UrlFacts, with_content: bool = True) -> str:
    """Images, videos, alternates and the page's content as compact JSON; "" when there
    are none (not NULL, so a newer page record without them does replace an older one's).
    The content goes with the page's media: a page fact, the latest page record's wins."""
    content = facts.content if with_content else None
    if not (facts.images or facts.videos or facts.alternates or content or facts.title):
        return ""
    extra: dict[str, Any] = {}
    if content is not None:
        extra["c"] = [content.fingerprint, content.fetched, 1 if content.canonical else 0]
        if content.text is not None:
            extra["c"].append(content.text)
    if facts.images:
        extra["i"] = facts.images
    if facts.videos:
        extra["v"] = [video_fields(v) for v in facts.videos]
    if facts.alternates:
        extra["a"] = [[a.hreflang, a.href] for a in facts.alternates]
        if facts.language:
            extra["l"] = facts.language
    if facts.title:
        extra["t"] = facts.title
    return _compact_json(extra)


def _load_json(text: str) -> Any:
    if _orjson_loads is not None:
        try:
            return _orjson_loads(text)
        except ValueError:  # a lone surrogate the standard encoder wrote
            pass
    return json.loads(text)


def _load_extra(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    return _load_json(text)  # type: ignore[no-any-return]


def _news(facts: UrlFacts) -> str | None:
    """A record's news facts as the ``news`` column keeps them."""
    news = facts.news
    if not news:
        return None
    return _news_json(
        [news.publication_name, news.publication_language, news.publication_date, news.title]
    )


def fact_row(facts: UrlFacts, from_item: bool) -> tuple[str | None, ...]:
    """(page_lastmod, item_lastmod, changefreq, priority, page_extra, item_extra, news): one
    record as every store keeps it, each source in its own column so merges do not depend
    on arrival order."""
    extra = _dump_extra(facts)
    news = _news(facts)
    return (
        None if from_item else facts.lastmod,
        facts.lastmod if from_item else None,
        facts.changefreq,
        facts.priority,
        None if from_item else extra,
        extra or None if from_item else None,
        news,
    )


def entry(loc: str, row: Row) -> UrlFacts:
    """What the merged ``row`` of ``loc`` publishes: the item's lastmod beats the page's."""
    page_lastmod, item_lastmod, *rest = row
    return row_facts(loc, published(page_lastmod, item_lastmod), *rest)


def row_facts(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    page_extra: str | None,
    item_extra: str | None,
    news: str | None,
) -> UrlFacts:
    """:func:`entry`, given the lastmod already chosen (as the SQLite store's query does).
    Images of both sources combine (page first, repeats dropped, at most 1,000), videos
    likewise by :func:`video_key`; alternates, language and content are the page's; the
    title is the item's when it gave one, else the page's."""
    page, item = _load_extra(page_extra), _load_extra(item_extra)
    content = page.get("c")
    images = tuple(dict.fromkeys([*page.get("i", ()), *item.get("i", ())]))[:MAX_IMAGES_PER_URL]
    videos = unique_videos(Video(*fields) for fields in [*page.get("v", ()), *item.get("v", ())])
    return UrlFacts(
        loc,
        lastmod,
        changefreq,
        priority,
        images=images,
        videos=videos,
        alternates=tuple(Alternate(h, href) for h, href in page.get("a", ())),
        news=News(*json.loads(news)) if news else None,
        content=(
            Content(content[0], content[1], bool(content[2]), content[3] if content[3:] else None)
            if content
            else None
        ),
        language=page.get("l"),
        title=item.get("t") or page.get("t"),
    )


def published_text(facts: UrlFacts) -> str:
    """An entry as it was published, for the state to keep (an unreached page is published
    again from it, :mod:`.evidence`): the columns of a page's :func:`fact_row` as one
    compact JSON list, without the page's content (the content notes keep that)."""
    return _compact_json(
        [facts.lastmod, facts.changefreq, facts.priority, _dump_extra(facts, False), _news(facts)]
    )


def published_entry(loc: str, text: str | None) -> UrlFacts:
    """What :func:`published_text` kept of ``loc``; None: only the loc is known (a state
    file from before the published entries were kept)."""
    if text is None:
        return UrlFacts(loc)
    lastmod, changefreq, priority, extra, news = _load_json(text)
    return row_facts(loc, lastmod, changefreq, priority, extra, None, news)
