"""Crawled for real: what ``Link`` header targets and hreflang values become in the sitemap.

RFC 8288 3.1: a ``Link`` header's target is resolved against the request's (final) URL; a
``<base href>`` in the body applies to the body's ``<link>`` elements only. hreflang values
are Google's: an ISO 639-1 language, an optional ISO 15924 script, an optional ISO 3166-1
alpha-2 region, or ``x-default``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.sitemaps.facts import FactRejected, parse_hreflang

from .helpers import Route, SiteServer, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

BASE = '<base href="/elsewhere/">'


def html(head: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body><p>text</p></body></html>"


# --- hreflang: the case table -------------------------------------------------------------

#: (value as written, what is published, or None when it is dropped and counted)
HREFLANG_CASES: list[tuple[str, str | None]] = [
    ("en", "en"),
    ("en-GB", "en-GB"),
    ("EN-gb", "en-GB"),  # case-insensitive, written in BCP 47's conventional case
    ("en-gb", "en-GB"),
    ("de-DE", "de-DE"),
    ("de-AT", "de-AT"),
    ("fr-CA", "fr-CA"),
    ("pt-BR", "pt-BR"),
    ("zh-Hant", "zh-Hant"),
    ("zh-hans-cn", "zh-Hans-CN"),
    ("zh-Hant-TW", "zh-Hant-TW"),
    ("sr-Latn", "sr-Latn"),
    ("he", "he"),
    ("x-default", "x-default"),
    ("X-Default", "x-default"),
    (" es-ES ", "es-ES"),  # padding is not part of the value
    ("en-UK", None),  # UK is only reserved in ISO 3166-1; the region is GB
    ("english", None),
    ("en_US", None),  # BCP 47 separates with "-"
    ("es-419", None),  # a valid BCP 47 tag (UN M.49 region) that Google does not read
    ("fil", None),  # ISO 639-2/3: Google reads ISO 639-1 only
    ("eng", None),
    ("zz", None),  # not an ISO 639-1 language
    ("qa", None),
    ("en-ZZ", None),  # not an assigned region
    ("en-EU", None),  # reserved, not assigned
    ("zh-Abcd", None),  # not an ISO 15924 script
    ("zh-Hant-XX", None),
    ("de-CH-1901", None),  # a variant
    ("en-US-x-private", None),
    ("x-klingon", None),  # private use
    ("i-klingon", None),  # grandfathered
    ("en-", None),
    ("-GB", None),
    ("en--GB", None),
    ("GB", None),  # a region alone
    ("", None),
    ("123", None),
    ("en-GB-", None),
    ("é", None),
]


@pytest.mark.parametrize(("value", "expected"), HREFLANG_CASES)
def test_parse_hreflang(value: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(FactRejected) as info:
            parse_hreflang(value)
        assert info.value.reason == "bad_hreflang"
    else:
        assert parse_hreflang(value) == expected


def test_case_table_is_large_and_goes_both_ways() -> None:
    assert len(HREFLANG_CASES) >= 30
    assert {expected is None for _, expected in HREFLANG_CASES} == {True, False}


# --- the site -----------------------------------------------------------------------------


def build(server: SiteServer) -> dict[str, Any]:
    """Routes, and what each listed page's entry must be (written by hand)."""
    u = server.url
    hreflang_links = "".join(
        f'<link rel="alternate" hreflang="{value}" href="/h/{n}">'
        for n, (value, _) in enumerate(HREFLANG_CASES)
    )
    alt_header = '<{0}>; rel="alternate"; hreflang="en", <de.html>; rel="alternate"; hreflang="de"'
    pages = {
        # Alternates from the header: resolved against the page URL, <base> or not.
        "/l/alt-base.html": Route(
            body=html(BASE), headers={"Link": alt_header.format("alt-base.html")}
        ),
        "/l/alt-plain.html": Route(
            body=html(), headers={"Link": alt_header.format("alt-plain.html")}
        ),
        # Both sources: the body's <link> honours <base>, the header does not.
        "/l/alt-mixed.html": Route(
            body=html(BASE + '<link rel="alternate" hreflang="fr" href="fr.html">'),
            headers={"Link": '<alt-mixed.html>; rel="alternate"; hreflang="en"'},
        ),
        # Canonical from the header alone, naming the page itself: listed either way.
        "/c/header-base.html": Route(
            body=html(BASE), headers={"Link": '<header-base.html>; rel="canonical"'}
        ),
        "/c/header-plain.html": Route(
            body=html(), headers={"Link": '<header-plain.html>; rel="canonical"'}
        ),
        # From the header alone, naming another page: left out either way.
        "/c/header-other.html": Route(
            body=html(BASE), headers={"Link": '<target.html>; rel="canonical"'}
        ),
        # From the head alone: the relative href resolves against <base>.
        "/c/head-base.html": Route(
            body=html(BASE + '<link rel="canonical" href="head-base.html">')
        ),
        "/c/head-plain.html": Route(body=html('<link rel="canonical" href="head-plain.html">')),
        # Both: they agree once the header ignores <base>, so the canonical holds (elsewhere).
        "/c/both-other.html": Route(
            body=html(BASE + '<link rel="canonical" href="/c/target.html">'),
            headers={"Link": '<target.html>; rel="canonical"'},
        ),
        # Both, naming the page itself.
        "/c/both-self.html": Route(
            body=html(BASE + '<link rel="canonical" href="/c/both-self.html">'),
            headers={"Link": '<both-self.html>; rel="canonical"'},
        ),
        "/hreflang.html": Route(body=html(hreflang_links)),
    }
    server.routes.update(pages)
    server.routes["/"] = Route(body="".join(f"<a href='{path}'>x</a>" for path in pages))

    def entry(*alternates: tuple[str, str]) -> dict[str, object]:
        return {
            "lastmod": None,
            "changefreq": None,
            "priority": None,
            "images": [],
            "videos": [],
            "alternates": list(alternates),
            "news": None,
        }

    return {
        u("/"): entry(),
        u("/l/alt-base.html"): entry(("en", u("/l/alt-base.html")), ("de", u("/l/de.html"))),
        u("/l/alt-plain.html"): entry(("en", u("/l/alt-plain.html")), ("de", u("/l/de.html"))),
        u("/l/alt-mixed.html"): entry(
            ("fr", u("/elsewhere/fr.html")), ("en", u("/l/alt-mixed.html"))
        ),
        u("/c/header-base.html"): entry(),
        u("/c/header-plain.html"): entry(),
        u("/c/head-plain.html"): entry(),
        u("/c/both-self.html"): entry(),
        u("/hreflang.html"): entry(
            *[(tag, u(f"/h/{n}")) for n, (_, tag) in enumerate(HREFLANG_CASES) if tag is not None]
        ),
    }


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def server() -> Iterator[SiteServer]:
    site = SiteServer()
    yield site
    site.close()


@deferred_f_from_coro_f
async def test_link_targets_and_hreflang_in_a_crawl(
    server: SiteServer, crawl: Any, tmp_path: Path
) -> None:
    expected = build(server)
    warnings = _Warnings()
    logging.getLogger("scrapy_sitemapgen").addHandler(warnings)
    try:
        # The pages share their text (only their links differ): what is under test is
        # each URL, so they are not left out as duplicates by content. What is under test
        # is each value as declared (resolved, checked), so the alternates are written as
        # declared, not as whole clusters (tests/test_hreflang_clusters.py): /hreflang.html
        # gives en-GB and x-default two URLs each, all to pages never crawled.
        crawler = await crawl(
            {"SITEMAPGEN_DEDUPE_CONTENT": False, "SITEMAPGEN_ALTERNATES_CHECK": "as_declared"},
            start_url=server.url("/"),
        )
    finally:
        logging.getLogger("scrapy_sitemapgen").removeHandler(warnings)
    entries = read_entries(tmp_path / "out", server.origin.name)
    assert entries == expected, sorted(set(entries) ^ set(expected))
    stats = crawler.stats.get_stats()
    # header-other, head-base (its head names /elsewhere/head-base.html) and both-other.
    assert stats["sitemapgen/excluded/canonical_elsewhere"] == 3
    dropped = [value for value, tag in HREFLANG_CASES if tag is None]
    assert stats["sitemapgen/skipped/bad_hreflang"] == len(dropped)
    # The first dropped value is named at WARNING; the rest go to DEBUG.
    hreflang_warnings = [m for m in warnings.messages if "(bad_hreflang)" in m]
    assert len(hreflang_warnings) == 1
    assert repr(dropped[0]) in hreflang_warnings[0]
