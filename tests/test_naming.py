"""File names in an origin folder: ``naming.is_owned_name`` holds exactly the names the
writer and the staging step write, so delivery removes a stale file of ours and never a
file a user keeps beside the sitemaps."""

from __future__ import annotations

import pytest

from scrapy_sitemapgen.sitemaps.facts import News, UrlFacts
from scrapy_sitemapgen.sitemaps.naming import MANIFEST_NAME, ROBOTS_NAME, is_owned_name
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin, write_text

from .helpers import MemorySinks

SITE = "https://www.example.com/"
LASTMOD = "2024-05-06T07:08:09+00:00"


def page(i: int) -> str:
    return f"{SITE}p/{i:05d}"


NEWS = News("The Example Times", "en", "2024-05-06T07:08:09+00:00", "Story")


def split_set(gzip: bool) -> list[str]:
    """The names of one origin's set split in every way it can be: 5 urlsets, 3 news
    sitemaps and 3 text sitemaps of 2 entries, listed in 4 indexes of 2 sitemaps."""
    options = WriterOptions(max_urls=2, max_index_entries=2, gzip=gzip)
    sinks = MemorySinks()
    output = write_origin(
        (UrlFacts(page(i)) for i in range(10)),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=options,
        news=(UrlFacts(page(i), news=NEWS) for i in range(5)),
    )
    texts = write_text(
        (UrlFacts(page(i)) for i in range(5)), scope=SITE, open_sink=sinks, options=options
    )
    output.texts.extend(texts)
    assert (len(output.sitemaps), len(output.news), len(output.texts)) == (5, 3, 3)
    assert len(output.indexes) == 4
    names = [written.name for written in output.files]
    assert sorted(names) == sorted(sinks)  # every file opened is one of the set
    return names


SPLIT_SET = split_set(gzip=True) + split_set(gzip=False) + [ROBOTS_NAME, MANIFEST_NAME]


def test_the_split_set_is_named_as_the_writer_names_files() -> None:
    """The table below is the writer's own naming, not a guess at it."""
    assert sorted(SPLIT_SET) == sorted(
        [
            *(f"sitemap-{n}.xml{gz}" for n in range(1, 6) for gz in (".gz", "")),
            *(f"sitemap-news-{n}.xml{gz}" for n in range(1, 4) for gz in (".gz", "")),
            *(f"sitemap-{n}.txt{gz}" for n in range(1, 4) for gz in (".gz", "")),
            *(["sitemap.xml", "sitemap-index-2.xml", "sitemap-index-3.xml"] * 2),
            *(["sitemap-index-4.xml"] * 2),
            "robots.txt",
            "manifest.json",
        ]
    )


@pytest.mark.parametrize("name", sorted(set(SPLIT_SET)))
def test_every_name_of_a_split_set_is_owned(name: str) -> None:
    assert is_owned_name(name)


# (name, owned): the names of a set far past the split above, and user files, half-written
# copies and near misses, which delivery must leave alone.
OWNED_CASES = [
    ("sitemap.xml", True),
    ("sitemap-1.xml", True),
    ("sitemap-1.xml.gz", True),
    ("sitemap-50000.xml.gz", True),
    ("sitemap-123456789.xml.gz", True),
    ("sitemap-news-1.xml", True),
    ("sitemap-news-12.xml.gz", True),
    ("sitemap-1.txt", True),
    ("sitemap-7.txt.gz", True),
    ("sitemap-index-2.xml", True),
    ("sitemap-index-10.xml", True),
    ("robots.txt", True),
    ("manifest.json", True),
    # user files
    ("index.html", False),
    ("my-sitemap.xml", False),
    ("sitemap.html", False),
    ("sitemaps.xml", False),
    ("feed.xml", False),
    ("notes-1.txt", False),
    ("robots.txt.orig", False),
    ("manifest.json~", False),
    ("", False),
    # copies and half-written files
    ("sitemap.xml.bak", False),
    ("sitemap-1.xml.gz.tmp", False),
    (".sitemap-1.xml.gz.part", False),
    ("sitemap-1.xml~", False),
    ("sitemap-1 (copy).xml", False),
    ("sitemap-1.xml.gz.1", False),
    # names the writer never gives
    ("sitemap.xml.gz", False),  # the first index is never gzipped
    ("sitemap-index-1.xml", False),  # the first index is sitemap.xml
    ("sitemap-index-2.xml.gz", False),
    ("sitemap.txt", False),  # text sitemaps are numbered
    ("sitemap.txt.gz", False),
    ("sitemap-news.xml", False),
    ("sitemap-news-1.txt", False),  # news sitemaps are XML
    ("sitemap-news-1.txt.gz", False),
    ("sitemap-0.xml", False),  # numbered from 1
    ("sitemap-index-0.xml", False),
    ("sitemap-01.xml", False),  # no leading zeros
    ("sitemap-news-007.xml.gz", False),
    ("sitemap--1.xml", False),
    ("sitemap-1.xml.GZ", False),
    ("Sitemap-1.xml", False),
    ("SITEMAP.XML", False),
    ("sitemap-\u0661.xml", False),  # ARABIC-INDIC DIGIT ONE: a digit to \d, not to us
    ("sitemap-1.xml.gz.xml", False),
    ("sitemap-1.json", False),
    ("Robots.txt", False),
]


@pytest.mark.parametrize(("name", "owned"), OWNED_CASES)
def test_is_owned_name(name: str, owned: bool) -> None:
    assert is_owned_name(name) is owned
