"""Every encoding of one URL's facts, in one place: the stores' record and its JSON extras,
the state's published entries, the Redis value, the SQLite read and the offline build's
run rows. Nothing outside this module builds or reads a record by position or knows a
key of the extras.

The shapes are named here (:class:`StoredRow`, :class:`RunRow`, the extras' keys), and
the field lists of the media come from their dataclasses (:func:`dataclasses.fields`),
so a field added at the end of :class:`~.facts.Video` is kept by every encoding without
a change here; text stored before it still reads, the new field absent. The formats are
data that outlives a process (a ``JOBDIR`` store, a Redis prefix, a state file): a key
or a position here never changes meaning. Pure.
"""

from __future__ import annotations

import json
from dataclasses import fields
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from .facts import Alternate, Content, News, UrlFacts, Video, unique_videos
from .lastmod import published
from .limits import MAX_IMAGES_PER_URL

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "ALTERNATES_LIKE",
    "COLUMNS",
    "ENTRY_SELECT",
    "REDIS_MERGE",
    "RUN_LOC",
    "RunRow",
    "StoredRow",
    "entry",
    "fact_row",
    "item_run_record",
    "published_entry",
    "published_text",
    "redis_entry",
    "redis_run",
    "redis_value",
    "row_facts",
    "rows_with_news",
    "run_entries",
    "run_loc",
    "run_row",
    "run_row_of",
    "video_fields",
]


class StoredRow(NamedTuple):
    """One URL's record as every store keeps it: each source (the page's response, the
    spider's items) in columns of its own, so that merges never depend on arrival order
    (:mod:`.merge`). ``None``: not given; a page record without media gives ``""`` as its
    extra, which does replace older media. The extras are JSON text (see
    :func:`_dump_extra`), the news a JSON list of :class:`~.facts.News`' fields."""

    page_lastmod: str | None
    item_lastmod: str | None
    changefreq: str | None
    priority: str | None
    page_extra: str | None
    item_extra: Any  # JSON text; in a run row's record, its (images, videos) pair
    news: Any  # JSON text; in a run row's record, News' fields as a tuple


#: The stored columns of one URL's record, in order: the SQLite columns, the Redis
#: value's first items.
COLUMNS = StoredRow._fields

# The extras' JSON keys: stored text holds them, so each keeps its letter for ever.
_CONTENT = "c"
_IMAGES = "i"
_VIDEOS = "v"
_ALTERNATES = "a"
_LANGUAGE = "l"
_TITLE = "t"

#: A video's fields as a plain tuple, in ``Video``'s order: how rows and extras keep
#: videos (:func:`dataclasses.fields`, so a new field is kept with no change here).
video_fields: Callable[[Video], tuple[Any, ...]] = attrgetter(
    *(field.name for field in fields(Video))
)
#: A news entry's fields as a plain tuple, in ``News``' order.
_news_fields: Callable[[News], tuple[str, ...]] = attrgetter(
    *(field.name for field in fields(News))
)


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


def _load_json(text: str) -> Any:
    if _orjson_loads is not None:
        try:
            return _orjson_loads(text)
        except ValueError:  # a lone surrogate the standard encoder wrote
            pass
    return json.loads(text)


def _dump_extra(facts: UrlFacts, with_content: bool = True) -> str:
    """Images, videos, alternates and the page's content as compact JSON; "" when there
    are none (not NULL, so a newer page record without them does replace an older one's).
    The content goes with the page's media: a page fact, the latest page record's wins."""
    content = facts.content if with_content else None
    if not (facts.images or facts.videos or facts.alternates or content or facts.title):
        return ""
    extra: dict[str, Any] = {}
    if content is not None:
        extra[_CONTENT] = [content.fingerprint, content.fetched, 1 if content.canonical else 0]
        if content.text is not None:
            extra[_CONTENT].append(content.text)
    if facts.images:
        extra[_IMAGES] = facts.images
    if facts.videos:
        extra[_VIDEOS] = [video_fields(v) for v in facts.videos]
    if facts.alternates:
        extra[_ALTERNATES] = [[a.hreflang, a.href] for a in facts.alternates]
        if facts.language:
            extra[_LANGUAGE] = facts.language
    if facts.title:
        extra[_TITLE] = facts.title
    return _compact_json(extra)


def _video(kept: list[Any]) -> Video:
    """A video from the JSON list of its :func:`video_fields`: a field of several values
    (a tuple in ``Video``) comes back from JSON as a list. A list stored before a field
    was added is shorter: the fields after it take their defaults."""
    values: list[Any] = [tuple(value) if type(value) is list else value for value in kept]
    return Video(*values)


def _load_extra(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    return _load_json(text)  # type: ignore[no-any-return]


#: What the SQLite store's ``LIKE`` finds a page that declares alternates by, without
#: reading a row into Python: the extras' key and the list it opens, which no JSON
#: string can hold (its quotes would be escaped).
ALTERNATES_LIKE = f'%"{_ALTERNATES}":[%'


def _news(facts: UrlFacts) -> str | None:
    """A record's news facts as the ``news`` column keeps them."""
    news = facts.news
    if not news:
        return None
    return _news_json(_news_fields(news))


def fact_row(facts: UrlFacts, from_item: bool) -> StoredRow:
    """One record as every store keeps it (:class:`StoredRow`): the facts in the columns
    of their source."""
    extra = _dump_extra(facts)
    return StoredRow(
        page_lastmod=None if from_item else facts.lastmod,
        item_lastmod=facts.lastmod if from_item else None,
        changefreq=facts.changefreq,
        priority=facts.priority,
        page_extra=None if from_item else extra,
        item_extra=extra or None if from_item else None,
        news=_news(facts),
    )


def entry(loc: str, row: tuple[Any, ...]) -> UrlFacts:
    """What the merged ``row`` (a :class:`StoredRow`, or a tuple of its columns) of
    ``loc`` publishes: the item's lastmod beats the page's."""
    page_lastmod, item_lastmod, changefreq, priority, page_extra, item_extra, news = row
    return row_facts(
        loc,
        published(page_lastmod, item_lastmod),
        changefreq,
        priority,
        page_extra,
        item_extra,
        news,
    )


#: What the SQLite store selects for one entry, in :func:`row_facts`' order: the lastmod
#: to publish chosen in SQL (``lastmod.published``: the item's beats the page's).
ENTRY_SELECT = (
    "loc, COALESCE(item_lastmod, page_lastmod), changefreq, priority, page_extra, item_extra, news"
)


def row_facts(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    page_extra: str | None,
    item_extra: str | None,
    news: str | None,
) -> UrlFacts:
    """:func:`entry`, given the lastmod already chosen (as :data:`ENTRY_SELECT` does).
    Images of both sources combine (page first, repeats dropped, at most 1,000), videos
    likewise by :func:`~.facts.video_key`; alternates, language and content are the
    page's; the title is the item's when it gave one, else the page's."""
    page, item = _load_extra(page_extra), _load_extra(item_extra)
    content = page.get(_CONTENT)
    images = tuple(dict.fromkeys([*page.get(_IMAGES, ()), *item.get(_IMAGES, ())]))[
        :MAX_IMAGES_PER_URL
    ]
    videos = unique_videos(
        _video(kept) for kept in [*page.get(_VIDEOS, ()), *item.get(_VIDEOS, ())]
    )
    return UrlFacts(
        loc,
        lastmod,
        changefreq,
        priority,
        images=images,
        videos=videos,
        alternates=tuple(Alternate(h, href) for h, href in page.get(_ALTERNATES, ())),
        news=News(*json.loads(news)) if news else None,
        content=(
            Content(content[0], content[1], bool(content[2]), content[3] if content[3:] else None)
            if content
            else None
        ),
        language=page.get(_LANGUAGE),
        title=item.get(_TITLE) or page.get(_TITLE),
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


# The Redis value: a JSON list of the record's columns, then the run that last recorded
# it (absent in a value an earlier version wrote: an earlier run's).
_REDIS_RUN = len(COLUMNS)
_NEWEST = (COLUMNS.index("page_lastmod") + 1, COLUMNS.index("item_lastmod") + 1)

#: :func:`.merge.merge` in Lua, as the Redis store runs it (held to it by
#: tests/test_merge.py): lastmod.newest() for the two lastmods, latest_given() for the
#: other columns. KEYS: origins set, locs zset, facts hash. ARGV: origin key, loc, the
#: new value (:func:`redis_value`; null: not given). Lua counts from 1.
REDIS_MERGE = f"""
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
local new = cjson.decode(ARGV[3])
local old = redis.call('HGET', KEYS[3], ARGV[2])
if old then
  old = cjson.decode(old)
  for i = {_NEWEST[0]}, {_NEWEST[1]} do
    if new[i] == cjson.null or (old[i] ~= cjson.null and old[i] > new[i]) then new[i] = old[i] end
  end
  for i = {_NEWEST[1] + 1}, {len(COLUMNS)} do
    if new[i] == cjson.null then new[i] = old[i] end
  end
end
redis.call('HSET', KEYS[3], ARGV[2], cjson.encode(new))
return 1
"""


def redis_value(facts: UrlFacts, from_item: bool, run: int) -> str:
    """One record as the Redis store sends it: its columns and the run recording it."""
    return json.dumps([*fact_row(facts, from_item), run], ensure_ascii=False)


def redis_entry(loc: str, value: bytes | str) -> UrlFacts:
    """What a Redis value of ``loc`` publishes (:func:`entry`)."""
    return entry(loc, tuple(json.loads(value)[:_REDIS_RUN]))


def redis_run(value: bytes | str) -> int | None:
    """The run that last recorded a Redis value; None: one an earlier version wrote."""
    values = json.loads(value)
    return values[_REDIS_RUN] if len(values) > _REDIS_RUN else None


class RunRow(NamedTuple):
    """One record of a feed as the offline build's run files keep it: the item's columns
    alone, images a tuple of locs, videos tuples of :func:`video_fields`, news a tuple of
    News' fields (``None``: not given). The files hold plain tuples of this order, as
    :mod:`marshal` takes no subclass: this class names the positions, and the functions
    below read and build them."""

    loc: str
    lastmod: str | None
    changefreq: str | None
    priority: str | None
    images: tuple[str, ...] | None
    videos: tuple[tuple[Any, ...], ...] | None
    news: tuple[str, ...] | None


#: Where a run row keeps its loc (they are sorted and merged by it), and the key that
#: gives it. First, as the keyed files' entries keep their key: the build's merges
#: (:func:`..build.run_merge.sorted_batches`) sort both by their first item.
RUN_LOC = RunRow._fields.index("loc")
assert RUN_LOC == 0
run_loc = itemgetter(RUN_LOC)
_RUN_NEWS = RunRow._fields.index("news")


def run_row(loc: str, found: tuple[Any, ...]) -> tuple[Any, ...]:
    """A record read by :meth:`.records.RecordReader.read` (its fields: lastmod,
    changefreq, priority, images, videos, news) as a run row: a plain tuple, built once
    per record of a feed."""
    lastmod, changefreq, priority, images, videos, news = found
    return (
        loc,
        lastmod,
        changefreq,
        priority,
        images or None,
        (tuple(map(video_fields, unique_videos(videos))) or None) if videos else None,
        _news_fields(news) if news else None,
    )


def rows_with_news(rows: Iterable[tuple[Any, ...]]) -> int:
    """How many of the run rows ``rows`` carry news."""
    at = _RUN_NEWS
    return sum(1 for row in rows if row[at] is not None)


def item_run_record(row: tuple[Any, ...]) -> StoredRow:
    """A run row as the merge rules' record of an item (no page columns): its images and
    videos are the item's media, given when either is, kept as a pair in
    ``item_extra`` (they are replaced together, as an item's JSON extra is)."""
    _, lastmod, changefreq, priority, images, videos, news = row
    media = (images, videos) if images or videos else None
    return StoredRow(None, lastmod, changefreq, priority, None, media, news)


def run_row_of(loc: str, record: StoredRow) -> tuple[Any, ...]:
    """The run row of ``loc`` that an :func:`item_run_record` (merged) stands for."""
    images, videos = record.item_extra or (None, None)
    return (
        loc,
        record.item_lastmod,
        record.changefreq,
        record.priority,
        images,
        videos,
        record.news,
    )


def run_entries(
    rows: Iterable[tuple[Any, ...]],
    news_only: bool = False,
    counted: Callable[[int], None] | None = None,
) -> Iterator[UrlFacts]:
    """The entries of an origin's merged run rows (those with news, when ``news_only``);
    once they are all read, ``counted`` is told how many rows there were, all of them
    counted (a callback, not a generator's return value: the caller hands this generator
    on instead of delegating to it, a resumption less per URL)."""
    count = 0
    for loc, lastmod, changefreq, priority, images, videos, news in rows:
        count += 1
        if news_only and news is None:
            continue
        yield UrlFacts(  # by position: keyword arguments cost more, and this runs per URL
            loc,
            lastmod,
            changefreq,
            priority,
            images or (),
            tuple(Video(*v) for v in videos) if videos else (),
            (),
            News(*news) if news else None,
        )
    if counted is not None:
        counted(count)
