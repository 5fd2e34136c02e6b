"""The encodings of a URL's facts (``sitemaps.codec``) are data that outlives a process: a
JOBDIR store, a Redis prefix, a state file. Their text is pinned here, written by hand
from the formats, so that a change of the code's shape cannot change them; and text an
earlier version wrote (a video list shorter than ``Video``'s fields, a Redis value
without its run) still reads."""

from __future__ import annotations

import json
import marshal

from scrapy_sitemapgen.sitemaps.codec import (
    COLUMNS,
    StoredRow,
    entry,
    fact_row,
    item_run_record,
    published_entry,
    published_text,
    redis_entry,
    redis_run,
    redis_value,
    run_entries,
    run_loc,
    run_row,
    run_row_of,
)
from scrapy_sitemapgen.sitemaps.facts import Alternate, Content, News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.merge import merge

LOC = "https://www.example.com/a"
VIDEO = Video("https://www.example.com/t.jpg", "Clip", "A clip", "https://www.example.com/v.mp4")
NEWS = News("Daily", "en", "2024-05-31T10:00:00+00:00", "Headline")
PAGE = UrlFacts(
    LOC,
    "2024-01-02T00:00:00+00:00",
    images=("https://www.example.com/i.png",),
    videos=(VIDEO,),
    alternates=(Alternate("de", "https://www.example.com/de/a"),),
    content=Content("f1", "2024-06-01T00:00:00+00:00", True, "t1"),
    language="en",
    title="Été",
)
PAGE_EXTRA = (
    '{"c":["f1","2024-06-01T00:00:00+00:00",1,"t1"],"i":["https://www.example.com/i.png"],'
    '"v":[["https://www.example.com/t.jpg","Clip","A clip","https://www.example.com/v.mp4",'
    'null,null,null]],"a":[["de","https://www.example.com/de/a"]],"l":"en","t":"Été"}'
)
NEWS_TEXT = '["Daily", "en", "2024-05-31T10:00:00+00:00", "Headline"]'


def test_the_stored_row_of_a_page_and_of_an_item() -> None:
    assert COLUMNS == (
        "page_lastmod",
        "item_lastmod",
        "changefreq",
        "priority",
        "page_extra",
        "item_extra",
        "news",
    )
    assert fact_row(PAGE, from_item=False) == (
        "2024-01-02T00:00:00+00:00",
        None,
        None,
        None,
        PAGE_EXTRA,
        None,
        None,
    )
    item = UrlFacts(LOC, "2024-01-03", "daily", "0.5", news=NEWS)
    assert fact_row(item, from_item=True) == (
        None,
        "2024-01-03",
        "daily",
        "0.5",
        None,
        None,
        NEWS_TEXT,
    )
    assert fact_row(UrlFacts(LOC), from_item=False).page_extra == ""  # replaces older media


def test_a_merged_row_publishes_both_sources() -> None:
    page = fact_row(PAGE, from_item=False)
    item = fact_row(UrlFacts(LOC, "2024-01-03", news=NEWS), from_item=True)
    published = entry(LOC, merge(page, item))
    assert published.lastmod == "2024-01-03"  # the item's beats the page's
    assert published.videos == (VIDEO,)
    assert published.alternates == PAGE.alternates
    assert published.content == PAGE.content
    assert published.news == NEWS
    assert (published.language, published.title) == ("en", "Été")


def test_a_video_stored_before_a_field_was_added_still_reads() -> None:
    short = '{"v":[["https://www.example.com/t.jpg","Clip","A clip",null,"https://p"]]}'
    (video,) = entry(LOC, StoredRow(None, None, None, None, short, None, None)).videos
    assert video == Video("https://www.example.com/t.jpg", "Clip", "A clip", None, "https://p")


def test_the_published_entry_text() -> None:
    text = published_text(PAGE)
    # The page's columns as one list, without its content (the content notes keep it).
    extra = PAGE_EXTRA.replace('"c":["f1","2024-06-01T00:00:00+00:00",1,"t1"],', "")
    assert text == json.dumps(
        ["2024-01-02T00:00:00+00:00", None, None, extra, None],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    again = published_entry(LOC, text)
    assert (again.lastmod, again.videos, again.alternates) == (
        PAGE.lastmod,
        PAGE.videos,
        PAGE.alternates,
    )
    assert again.content is None
    assert published_entry(LOC, None) == UrlFacts(LOC)


def test_the_redis_value() -> None:
    value = redis_value(UrlFacts(LOC, "2024-01-03", news=NEWS), True, 4)
    assert json.loads(value) == [None, "2024-01-03", None, None, None, None, NEWS_TEXT, 4]
    assert redis_run(value) == 4
    earlier = json.dumps([None, "2024-01-03", None, None, None, None, None])  # no run
    assert redis_run(earlier) is None
    assert redis_entry(LOC, earlier).lastmod == "2024-01-03"
    assert redis_entry(LOC, value.encode()).news == NEWS


def test_the_run_row_is_a_plain_tuple_that_marshal_keeps() -> None:
    fields = ("2024-01-03", "daily", None, ("https://www.example.com/i.png",), (VIDEO,), NEWS)
    row = run_row(LOC, fields)
    assert type(row) is tuple
    assert row == (
        LOC,
        "2024-01-03",
        "daily",
        None,
        ("https://www.example.com/i.png",),
        (
            (
                "https://www.example.com/t.jpg",
                "Clip",
                "A clip",
                "https://www.example.com/v.mp4",
                None,
                None,
                None,
            ),
        ),
        ("Daily", "en", "2024-05-31T10:00:00+00:00", "Headline"),
    )
    assert marshal.loads(marshal.dumps([row])) == [row]
    assert run_loc(row) == LOC
    bare = run_row(LOC, (None, None, None, (), (), None))
    assert bare == (LOC, None, None, None, None, None, None)
    # Repeats combine as two item records: the later media replace the earlier together.
    combined = run_row_of(LOC, merge(item_run_record(row), item_run_record(bare)))
    assert combined == row
    counts: list[int] = []
    found = list(run_entries([row, bare], news_only=True, counted=counts.append))
    assert counts == [2]
    assert [(f.loc, f.videos, f.news) for f in found] == [(LOC, (VIDEO,), NEWS)]
