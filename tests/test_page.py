"""Case tables for the page readers: JSON-LD, robots directives, Link headers, canonical,
meta refresh, srcset, images, videos, hreflang alternates, page dates and ISO 8601
durations.

Every expected value was worked out by hand from the HTML standard (srcset parsing, shared
declarative refresh steps, rel token lists), RFC 8288 / RFC 9110 (Link headers), RFC 3986
5.2 (relative resolution), Google's robots meta / X-Robots-Tag documentation, the Open
Graph protocol, schema.org and ISO 8601. None was captured from the code.
"""

from __future__ import annotations

import json
import time
from html import escape
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from scrapy_sitemapgen.pages.canonical import canonical_urls
from scrapy_sitemapgen.pages.dates import page_dates
from scrapy_sitemapgen.pages.hreflang import alternates
from scrapy_sitemapgen.pages.images import (
    image_sources,
    image_urls,
    largest_candidate,
    parse_srcset,
    srcset_candidates,
)
from scrapy_sitemapgen.pages.jsonld import json_ld
from scrapy_sitemapgen.pages.links import parse_link_header
from scrapy_sitemapgen.pages.refresh import refresh_url
from scrapy_sitemapgen.pages.robots import robots_directives
from scrapy_sitemapgen.pages.videos import iso8601_duration, videos

if TYPE_CHECKING:
    from parsel import Selector

PAGE_URL = "http://example.com/dir/page.html"
# A page whose <base href> sends relative URLs to another host and folder.
BASE_TAG = '<base href="https://cdn.example.net/base/">'


def read(
    html: str | bytes, headers: dict[str, str | list[str]] | None = None
) -> tuple[Selector, str, HtmlResponse]:
    """What the middleware hands to the page readers: the cached selector and the base URL
    with ``<base href>`` honoured (Scrapy's own ``get_base_url``)."""
    body = html.encode("utf-8") if isinstance(html, str) else html
    response = HtmlResponse(PAGE_URL, body=body, encoding="utf-8", headers=headers)
    return response.selector, get_base_url(response), response


def header(response: HtmlResponse, name: str) -> list[str]:
    """Header values as the caller passes them: every value, latin-1-decoded."""
    return [value.decode("latin-1") for value in response.headers.getlist(name)]


def ld_page(*blocks: str) -> str:
    return (
        "<html><head>"
        + "".join(f'<script type="application/ld+json">{block}</script>' for block in blocks)
        + "</head><body></body></html>"
    )


# --- json_ld ------------------------------------------------------------------------------

# (html, expected blocks, expected invalid count)
JSON_LD_CASES: list[tuple[str, list[Any], int]] = [
    (ld_page('{"@type": "Article"}'), [{"@type": "Article"}], 0),
    # The type is matched case-insensitively, with outer whitespace.
    (
        '<script type=" Application/LD+JSON ">{"a": 1}</script>',
        [{"a": 1}],
        0,
    ),
    # Media type parameters do not change the media type.
    ('<script type="application/ld+json; charset=utf-8">{"a": 1}</script>', [{"a": 1}], 0),
    # Whitespace and an HTML comment around the JSON (old anti-parser habit).
    (ld_page('\n  <!--\n {"a": [1, 2]} \n-->\n '), [{"a": [1, 2]}], 0),
    (ld_page("<![CDATA[ [true, null] ]]>"), [[True, None]], 0),
    # Other script types are not JSON-LD.
    (
        '<script>{"a": 1}</script><script type="application/json">{"a": 1}</script>'
        '<script type="text/javascript">var a = 1;</script>',
        [],
        0,
    ),
    # Invalid JSON is counted, not raised; valid blocks around it still come back in order.
    (ld_page('{"a": 1}', '{"b": 2,}', '[{"c": 3}]'), [{"a": 1}, [{"c": 3}]], 1),
    (ld_page("{'single': 'quotes'}", "not json at all"), [], 2),
    # An empty block is no JSON.
    (ld_page("", "   "), [], 2),
    # Any JSON value is a parsed block, even one no reader will use.
    (ld_page("42", '"a string"', "null"), [42, "a string", None], 0),
    # Nested deeper than the JSON parser's recursion limit: invalid, not a crash.
    (ld_page("[" * 100_000 + "]" * 100_000), [], 1),
]


@pytest.mark.parametrize(("html", "blocks", "invalid"), JSON_LD_CASES)
def test_json_ld(html: str, blocks: list[Any], invalid: int) -> None:
    selector, _, _ = read(html)
    assert json_ld(selector) == (blocks, invalid)


# --- robots_directives --------------------------------------------------------------------

GOOGLEBOT = frozenset({"googlebot"})
NOBODY: frozenset[str] = frozenset()

# (html, X-Robots-Tag values, named user agents, expected directives)
ROBOTS_CASES: list[tuple[str, list[str], frozenset[str], set[str]]] = [
    ("", [], GOOGLEBOT, set()),
    # <meta name="robots">: a comma list, names case-insensitive, values lower-cased.
    ('<meta name="robots" content="noindex, nofollow">', [], NOBODY, {"noindex", "nofollow"}),
    ('<meta name=" ROBOTS " content=" NoIndex ,NOFOLLOW">', [], NOBODY, {"noindex", "nofollow"}),
    ('<meta name="robots" content="none">', [], NOBODY, {"none"}),
    # Valued directives keep only their name.
    (
        '<meta name="robots" content="max-snippet:20, max-image-preview:large">',
        [],
        NOBODY,
        {"max-snippet", "max-image-preview"},
    ),
    # Several robots metas add up.
    (
        '<meta name="robots" content="noindex"><meta name="robots" content="noarchive">',
        [],
        NOBODY,
        {"noindex", "noarchive"},
    ),
    # <meta name="googlebot"> applies only when googlebot is named.
    ('<meta name="googlebot" content="noindex">', [], GOOGLEBOT, {"noindex"}),
    ('<meta name="Googlebot" content="noindex">', [], GOOGLEBOT, {"noindex"}),
    ('<meta name="googlebot" content="noindex">', [], NOBODY, set()),
    ('<meta name="bingbot" content="noindex">', [], GOOGLEBOT, set()),
    (
        '<meta name="googlebot-news" content="nosnippet">',
        [],
        frozenset({"googlebot", "googlebot-news"}),
        {"nosnippet"},
    ),
    # Other metas are not robots metas.
    ('<meta name="description" content="noindex">', [], GOOGLEBOT, set()),
    # X-Robots-Tag: plain, comma list, repeated header lines.
    ("", ["noindex"], NOBODY, {"noindex"}),
    ("", ["noindex, nofollow"], NOBODY, {"noindex", "nofollow"}),
    ("", ["noindex", "nofollow"], NOBODY, {"noindex", "nofollow"}),
    ("", ["NOINDEX"], NOBODY, {"noindex"}),
    ("", ["none"], NOBODY, {"none"}),
    # A user-agent prefix scopes the value to that crawler...
    ("", ["googlebot: noindex"], GOOGLEBOT, {"noindex"}),
    ("", ["googlebot: noindex"], NOBODY, set()),
    ("", ["GoogleBot:NoIndex"], GOOGLEBOT, {"noindex"}),
    # ... including the rest of its comma list (Google's "otherbot: noindex, nofollow").
    ("", ["googlebot: noindex, nofollow"], NOBODY, set()),
    ("", ["googlebot: noindex, nofollow"], GOOGLEBOT, {"noindex", "nofollow"}),
    ("", ["otherbot: none"], GOOGLEBOT, set()),
    ("", ["otherbot: none", "noarchive"], GOOGLEBOT, {"noarchive"}),
    ("", ["googlebot: nofollow", "otherbot: noindex"], GOOGLEBOT, {"nofollow"}),
    # Items before a prefix are still generic.
    ("", ["noarchive, otherbot: noindex"], GOOGLEBOT, {"noarchive"}),
    # Valued directives are no user-agent prefixes.
    ("", ["unavailable_after: 25 Jun 2010 15:00:00 PST"], NOBODY, {"unavailable_after"}),
    # An RFC 850 date holds a comma: its second half is no directive.
    ("", ["unavailable_after: Friday, 25-Jun-10 15:00:00 PST"], NOBODY, {"unavailable_after"}),
    (
        "",
        ["max-snippet: 20, max-image-preview: large, max-video-preview: -1"],
        NOBODY,
        {"max-snippet", "max-image-preview", "max-video-preview"},
    ),
    ("", ["max-image-preview: none"], NOBODY, {"max-image-preview"}),
    ("", ["googlebot: unavailable_after: 2025-01-01"], GOOGLEBOT, {"unavailable_after"}),
    ("", ["googlebot: unavailable_after: 2025-01-01"], NOBODY, set()),
    # Garbage and empty items are dropped.
    ("", ["", " , ,", "123, !!, no index"], NOBODY, set()),
    # Meta and header add up.
    ('<meta name="robots" content="noindex">', ["nofollow"], NOBODY, {"noindex", "nofollow"}),
]


@pytest.mark.parametrize(("html", "x_robots_tag", "agents", "expected"), ROBOTS_CASES)
def test_robots_directives(
    html: str, x_robots_tag: list[str], agents: frozenset[str], expected: set[str]
) -> None:
    selector, _, _ = read(f"<html><head>{html}</head><body></body></html>")
    assert robots_directives(selector, x_robots_tag, agents) == frozenset(expected)


def test_robots_directives_read_real_repeated_headers() -> None:
    selector, _, response = read(
        "<p>x</p>",
        headers={"X-Robots-Tag": ["noarchive", "googlebot: noindex", "bingbot: nofollow"]},
    )
    tags = header(response, "X-Robots-Tag")
    assert robots_directives(selector, tags, GOOGLEBOT) == {"noarchive", "noindex"}
    assert robots_directives(selector, tags, ["bingbot"]) == {"noarchive", "nofollow"}


# --- parse_link_header ---------------------------------------------------------------------

# (header values, expected links)
LINK_HEADER_CASES: list[tuple[list[str], list[tuple[str, dict[str, str]]]]] = [
    ([], []),
    ([""], []),
    (
        ['<https://example.com/a>; rel="canonical"'],
        [("https://example.com/a", {"rel": "canonical"})],
    ),
    # Several links in one value, separated by commas.
    (
        [
            '<https://example.com/de>; rel="alternate"; hreflang="de", '
            '<https://example.com/fr>; rel="alternate"; hreflang="fr"'
        ],
        [
            ("https://example.com/de", {"rel": "alternate", "hreflang": "de"}),
            ("https://example.com/fr", {"rel": "alternate", "hreflang": "fr"}),
        ],
    ),
    # Several values (repeated header lines).
    (
        ["</a>; rel=next", "</b>; rel=prev"],
        [("/a", {"rel": "next"}), ("/b", {"rel": "prev"})],
    ),
    # A comma inside <...> does not split.
    (
        ["<https://img.example/w_100,h_100/x.jpg>; rel=preload; as=image"],
        [("https://img.example/w_100,h_100/x.jpg", {"rel": "preload", "as": "image"})],
    ),
    # Nor does a comma (or ';') inside a quoted string; quoted-pairs are undone.
    (
        ['</a>; title="one, two; three"; rel=next, </b>; title="say \\"hi\\""'],
        [("/a", {"title": "one, two; three", "rel": "next"}), ("/b", {"title": 'say "hi"'})],
    ),
    # No rel at all: still a link.
    (["<https://example.com/a>; hreflang=de"], [("https://example.com/a", {"hreflang": "de"})]),
    # A parameter without a value.
    (
        ["</font.woff2>; rel=preload; crossorigin"],
        [("/font.woff2", {"rel": "preload", "crossorigin": ""})],
    ),
    # Parameter names are case-insensitive (lower-cased); values are kept as written.
    (['</a>; REL="Canonical"'], [("/a", {"rel": "Canonical"})]),
    # RFC 8288 3.3: a repeated rel is ignored after the first.
    (["</a>; rel=canonical; rel=alternate"], [("/a", {"rel": "canonical"})]),
    # Optional whitespace everywhere (BWS around "=").
    (
        ['  < https://example.com/a >  ;  rel = "canonical"  ,  '],
        [("https://example.com/a", {"rel": "canonical"})],
    ),
    # An empty target is the context itself: parsed (readers decide).
    (["<>; rel=canonical"], [("", {"rel": "canonical"})]),
    # Malformed link-values are skipped up to the next comma.
    (["junk, </b>; rel=next"], [("/b", {"rel": "next"})]),
    (['rel="a, b", </b>; rel=next'], [("/b", {"rel": "next"})]),
    # An unterminated target swallows the rest of the value.
    (["</a>; rel=next, <https://example.com/c; rel=prev"], [("/a", {"rel": "next"})]),
    # A malformed parameter is skipped up to the next ';'; the link keeps the rest.
    (["</a>; =x; rel=next"], [("/a", {"rel": "next"})]),
    (['</a>; rel="next" junk; title=t'], [("/a", {"rel": "next", "title": "t"})]),
    (["</a>; ; rel=next;"], [("/a", {"rel": "next"})]),
    # An unterminated quoted string runs to the end.
    (['</a>; title="abc, </b>'], [("/a", {"title": "abc, </b>"})]),
]


@pytest.mark.parametrize(("values", "expected"), LINK_HEADER_CASES)
def test_parse_link_header(values: list[str], expected: list[tuple[str, dict[str, str]]]) -> None:
    assert parse_link_header(values) == expected


# --- canonical_urls -----------------------------------------------------------------------

# (head html, Link header values, expected), for a page at PAGE_URL
CANONICAL_CASES: list[tuple[str, list[str], list[str]]] = [
    ("", [], []),
    ('<link rel="canonical" href="/a">', [], ["http://example.com/a"]),
    # rel and href case, whitespace-padded href.
    ('<LINK REL="Canonical" HREF=" https://example.com/b ">', [], ["https://example.com/b"]),
    # rel is a token list.
    ('<link rel="nofollow  CANONICAL\t" href="/c">', [], ["http://example.com/c"]),
    ('<link rel="canonicalize" href="/c"><link rel="alternate" href="/d">', [], []),
    # RFC 3986 5.2: relative, dot-segment and network-path references.
    ('<link rel="canonical" href="other.html">', [], ["http://example.com/dir/other.html"]),
    ('<link rel="canonical" href="../up.html">', [], ["http://example.com/up.html"]),
    ('<link rel="canonical" href="//www.example.com/p">', [], ["http://www.example.com/p"]),
    ('<link rel="canonical" href="?page=2">', [], ["http://example.com/dir/page.html?page=2"]),
    # Empty hrefs are dropped; a missing href too.
    (
        '<link rel="canonical" href=""><link rel="canonical" href="  "><link rel="canonical">',
        [],
        [],
    ),
    # All of them, in document order: conflicting canonicals are the caller's call.
    (
        '<link rel="canonical" href="/a"><link rel="canonical" href="/b">',
        [],
        ["http://example.com/a", "http://example.com/b"],
    ),
    # Then the header's rel=canonical targets.
    (
        '<link rel="canonical" href="/a">',
        ['<https://example.com/h>; rel="canonical"', "</rel>; rel=canonical"],
        ["http://example.com/a", "https://example.com/h", "http://example.com/rel"],
    ),
    (
        "",
        ['<https://example.com/x>; rel="alternate", <https://example.com/y>; rel="Canonical"'],
        ["https://example.com/y"],
    ),
    # A link with an anchor speaks about another resource (RFC 8288 3.2).
    ("", ['<https://example.com/x>; rel=canonical; anchor="/other"'], []),
    # A link without rel is no canonical.
    ("", ["<https://example.com/x>"], []),
    # <base href> is honoured (through the base argument).
    (
        BASE_TAG + '<link rel="canonical" href="c.html">',
        [],
        ["https://cdn.example.net/base/c.html"],
    ),
    # ... by the body's links only: a header's target resolves against the page URL
    # (RFC 8288 3.1).
    (BASE_TAG, ['<c.html>; rel="canonical"'], ["http://example.com/dir/c.html"]),
    (
        BASE_TAG + '<link rel="canonical" href="c.html">',
        ['<c.html>; rel="canonical"'],
        ["https://cdn.example.net/base/c.html", "http://example.com/dir/c.html"],
    ),
    # An unparsable URL is dropped rather than raised.
    # Unparsable: returned as written, for the caller's URL check to refuse and count.
    ('<link rel="canonical" href="http://[::1/x">', [], ["http://[::1/x"]),
]


@pytest.mark.parametrize(("head", "links", "expected"), CANONICAL_CASES)
def test_canonical_urls(head: str, links: list[str], expected: list[str]) -> None:
    selector, base, response = read(f"<html><head>{head}</head><body></body></html>")
    assert canonical_urls(selector, links, base, response.url) == expected


def test_canonical_urls_in_body_and_real_headers() -> None:
    selector, base, response = read(
        '<html><body><link rel="canonical" href="/in-body"></body></html>',
        headers={"Link": ['<https://example.com/one>; rel="canonical"', "</two>; rel=preload"]},
    )
    assert canonical_urls(selector, header(response, "Link"), base, response.url) == [
        "http://example.com/in-body",
        "https://example.com/one",
    ]


# --- refresh_url --------------------------------------------------------------------------

# (content, expected), for a page at PAGE_URL; forms from the HTML standard's parser
REFRESH_CASES: list[tuple[str, str | None]] = [
    ("0;url=/x", "http://example.com/x"),
    ("0; URL='/x'", "http://example.com/x"),
    ('0; url="/x"', "http://example.com/x"),
    ("0, url=/x", "http://example.com/x"),
    ("0;/x", "http://example.com/x"),
    ("0 url=/x", "http://example.com/x"),
    ("5; url=https://other.example/new", "https://other.example/new"),
    ("  3  ;  uRl  =  'next.html'  ", "http://example.com/dir/next.html"),
    # Quotes end the URL at the matching quote.
    ("0; url='/x'trailing", "http://example.com/x"),
    # Time may carry a fraction, or be only one.
    ("1.5; url=/x", "http://example.com/x"),
    (".5; url=/x", "http://example.com/x"),
    # "u" not followed by "rl=": the whole rest is the URL (the standard's jump to parse).
    ("0; u=/x", "http://example.com/dir/u=/x"),
    ("0; url/x", "http://example.com/dir/url/x"),
    # A plain reload: no URL.
    ("5", None),
    ("5;", None),
    ("0; url=", None),
    ("0; url=''", None),
    # Invalid: no time, or junk right after it.
    ("url=/x", None),
    ("abc", None),
    ("0x; url=/x", None),
    ("", None),
]


@pytest.mark.parametrize(("content", "expected"), REFRESH_CASES)
def test_refresh_url(content: str, expected: str | None) -> None:
    html = f'<html><head><meta http-equiv="refresh" content="{escape(content)}"></head></html>'
    selector, base, _ = read(html)
    assert refresh_url(selector, base) == expected


# (head html, expected)
REFRESH_PAGE_CASES: list[tuple[str, str | None]] = [
    ("", None),
    ('<meta http-equiv="refresh">', None),
    ('<meta http-equiv="content-type" content="0; url=/x">', None),
    ('<meta HTTP-EQUIV=" Refresh " content="0;url=/x">', "http://example.com/x"),
    # An invalid refresh is passed over; a valid one (even a reload) ends the search.
    (
        '<meta http-equiv="refresh" content="soon"><meta http-equiv="refresh" content="0;/b">',
        "http://example.com/b",
    ),
    ('<meta http-equiv="refresh" content="5"><meta http-equiv="refresh" content="0;/b">', None),
    (
        '<meta http-equiv="refresh" content="0;/a"><meta http-equiv="refresh" content="0;/b">',
        "http://example.com/a",
    ),
    (
        BASE_TAG + '<meta http-equiv="refresh" content="0; url=next">',
        "https://cdn.example.net/base/next",
    ),
]


@pytest.mark.parametrize(("head", "expected"), REFRESH_PAGE_CASES)
def test_refresh_url_page(head: str, expected: str | None) -> None:
    selector, base, _ = read(f"<html><head>{head}</head></html>")
    assert refresh_url(selector, base) == expected


# --- parse_srcset -------------------------------------------------------------------------

# (srcset, expected URLs), per the HTML standard's "parse a srcset attribute"
SRCSET_CASES: list[tuple[str, list[str]]] = [
    ("", []),
    (" , ,, ", []),
    ("a.jpg", ["a.jpg"]),
    ("a.jpg 1x, b.jpg 2x", ["a.jpg", "b.jpg"]),
    ("a.jpg 300w, b.jpg 600w", ["a.jpg", "b.jpg"]),
    ("a.jpg 1.5x", ["a.jpg"]),
    ("  a.jpg  1x  ,  b.jpg  ", ["a.jpg", "b.jpg"]),
    ("a.jpg\t1x,\nb.jpg\f2x\r", ["a.jpg", "b.jpg"]),
    # Image-CDN URLs with commas stay whole: a URL runs to whitespace.
    (
        "https://img.example/w_100,h_100/x.jpg 100w, https://img.example/w_200,h_200/x.jpg 200w",
        ["https://img.example/w_100,h_100/x.jpg", "https://img.example/w_200,h_200/x.jpg"],
    ),
    ("https://img.example/c_fill,w_300/x.jpg", ["https://img.example/c_fill,w_300/x.jpg"]),
    # Trailing commas end a URL; an inner comma does not.
    ("a.jpg,b.jpg", ["a.jpg,b.jpg"]),
    ("a.jpg, b.jpg", ["a.jpg", "b.jpg"]),
    ("a.jpg,,, b.jpg 2x,", ["a.jpg", "b.jpg"]),
    # A data: URL's comma is inside the URL (image_urls drops data: later).
    ("data:image/png;base64,AAAA 1x, b.jpg 2x", ["data:image/png;base64,AAAA", "b.jpg"]),
    # Height is only allowed beside a width; "0x" is a valid density.
    ("a.jpg 100w 50h", ["a.jpg"]),
    ("a.jpg 0x", ["a.jpg"]),
    ("a.jpg 1e1x", ["a.jpg"]),
    # Invalid descriptors drop the candidate, as in browsers; the next candidate survives.
    ("a.jpg 1x 2x, b.jpg", ["b.jpg"]),
    ("a.jpg 100w 2x, b.jpg", ["b.jpg"]),
    ("a.jpg 0w, b.jpg", ["b.jpg"]),
    ("a.jpg -1x, b.jpg", ["b.jpg"]),
    ("a.jpg 1.x, b.jpg", ["b.jpg"]),
    ("a.jpg 50h, b.jpg", ["b.jpg"]),
    ("a.jpg large, b.jpg", ["b.jpg"]),
    ("a.jpg 2X, b.jpg", ["b.jpg"]),  # descriptor letters are lower-case only
    # Parentheses hold commas and spaces inside one (invalid) descriptor.
    ("a.jpg (x, y) 1x, b.jpg", ["b.jpg"]),
    ("a.jpg (unclosed, b.jpg", []),
]


@pytest.mark.parametrize(("srcset", "expected"), SRCSET_CASES)
def test_parse_srcset(srcset: str, expected: list[str]) -> None:
    assert parse_srcset(srcset) == expected


# (srcset, expected (URL, descriptor) pairs): the descriptor kept is the one that ranks.
SRCSET_CANDIDATE_CASES: list[tuple[str, list[tuple[str, str]]]] = [
    ("a.jpg", [("a.jpg", "")]),
    ("a.jpg 300w, b.jpg 1.5x", [("a.jpg", "300w"), ("b.jpg", "1.5x")]),
    ("a.jpg 100w 50h, b.jpg", [("a.jpg", "100w"), ("b.jpg", "")]),
    ("w_1,h_2/a.jpg 2x,b.jpg 1e1x", [("w_1,h_2/a.jpg", "2x"), ("b.jpg", "1e1x")]),
    ("a.jpg 2x 3x, b.jpg 9w", [("b.jpg", "9w")]),
]


@pytest.mark.parametrize(("srcset", "expected"), SRCSET_CANDIDATE_CASES)
def test_srcset_candidates(srcset: str, expected: list[tuple[str, str]]) -> None:
    assert srcset_candidates(srcset) == expected


# WordPress 6.1's markup for a 2048x1536 upload shown at "large" size (the cafe post).
WP_SRC = "https://blog.example/wp-content/uploads/2023/05/cafe-1024x768.jpg"
WP_SRCSET = (
    "https://blog.example/wp-content/uploads/2023/05/cafe-1024x768.jpg 1024w, "
    "https://blog.example/wp-content/uploads/2023/05/cafe-300x225.jpg 300w, "
    "https://blog.example/wp-content/uploads/2023/05/cafe-768x576.jpg 768w, "
    "https://blog.example/wp-content/uploads/2023/05/cafe.jpg 2048w"
)
WP_UPLOADS = "https://blog.example/wp-content/uploads/2023/05/"

# (srcsets, src, width, expected (chosen, others)): which candidate is the image.
LARGEST_CASES: list[tuple[list[str], str | None, str | None, tuple[str | None, list[str]]]] = [
    # WordPress: the full size, though src names the large one and comes first in srcset.
    (
        [WP_SRCSET],
        WP_SRC,
        "1024",
        (
            WP_UPLOADS + "cafe.jpg",
            [WP_UPLOADS + n for n in ("cafe-1024x768.jpg", "cafe-300x225.jpg", "cafe-768x576.jpg")],
        ),
    ),
    # Widths: the greatest, wherever it is in the list.
    (["s.jpg 300w, l.jpg 1200w, m.jpg 600w"], None, None, ("l.jpg", ["s.jpg", "m.jpg"])),
    # Densities: the greatest; no descriptor is 1x, and src is 1x.
    (["b.jpg 2x, c.jpg 1.5x"], "a.jpg", None, ("b.jpg", ["c.jpg", "a.jpg"])),
    (["b.jpg"], "a.jpg", None, ("b.jpg", ["a.jpg"])),  # a tie: srcset's 1x before src
    (["a.jpg 0.5x"], "big.jpg", None, ("big.jpg", ["a.jpg"])),
    # src without a width attribute: no known width, so below any width descriptor...
    (["s.jpg 10w"], "src.jpg", None, ("s.jpg", ["src.jpg"])),
    # ...with one, its width in pixels, and a density that many times it.
    (["s.jpg 500w"], "src.jpg", "800", ("src.jpg", ["s.jpg"])),
    (["s.jpg 900w, d.jpg 2x"], "src.jpg", " 500 ", ("d.jpg", ["s.jpg", "src.jpg"])),
    (["s.jpg 900w"], "src.jpg", "100%", ("s.jpg", ["src.jpg"])),  # not a plain integer
    # A <picture>: its sources and its <img>, the first of equals winning.
    (
        ["p.avif 800w", "p.webp 800w, q.webp 400w"],
        "p.jpg",
        None,
        ("p.avif", ["p.webp", "q.webp", "p.jpg"]),
    ),
    # Not candidates: data:, javascript:, blob:, about: (any case, padded) and empty values.
    (
        ["data:image/png;base64,AAAA 4000w, ok.jpg 10w, JavaScript:x 9000w, blob:y 9000w"],
        " DATA:image/gif;base64,R0lGOD== ",
        "5000",
        ("ok.jpg", []),
    ),
    (["about:blank 2x"], "   ", None, (None, [])),
    # Malformed descriptors drop their candidate; the same URL twice is one candidate.
    (
        ["big.jpg 9000q, huge.jpg 0w, x.jpg 1x 2x, ok.jpg 20w, ok.jpg 10w"],
        None,
        None,
        ("ok.jpg", []),
    ),
    ([], None, None, (None, [])),
    ([], "only.jpg", "wide", ("only.jpg", [])),
]


@pytest.mark.parametrize(("srcsets", "src", "width", "expected"), LARGEST_CASES)
def test_largest_candidate(
    srcsets: list[str],
    src: str | None,
    width: str | None,
    expected: tuple[str | None, list[str]],
) -> None:
    assert largest_candidate(srcsets, src, width) == expected


def test_image_sources_smaller_candidates() -> None:
    """The candidates passed over, per image: what the extractor counts."""
    selector, _, _ = read(
        f'<html><body><img src="{WP_SRC}" srcset="{WP_SRCSET}" width="1024" sizes="(max-width: '
        '1024px) 100vw, 1024px"><picture><source srcset="p.webp 2x"><source srcset="p1.webp">'
        '<img src="p.jpg"></picture><img src="plain.png"></body></html>'
    )
    sources = image_sources(selector)
    assert sources.shown == [WP_UPLOADS + "cafe.jpg", "p.webp", "plain.png"]
    assert sorted(sources.smaller) == sorted(
        [WP_UPLOADS + n for n in ("cafe-1024x768.jpg", "cafe-300x225.jpg", "cafe-768x576.jpg")]
        + ["p1.webp", "p.jpg"]
    )


# --- image_urls ---------------------------------------------------------------------------

# (html, expected URLs), for a page at PAGE_URL
IMAGE_CASES: list[tuple[str, list[str]]] = [
    ("", []),
    ('<img src="a.png">', ["http://example.com/dir/a.png"]),
    ('<IMG SRC=" /B.PNG ">', ["http://example.com/B.PNG"]),
    ('<img src="../c.png">', ["http://example.com/c.png"]),
    ('<img src="//cdn.example.com/d.png">', ["http://cdn.example.com/d.png"]),
    ('<img src="https://cdn.example.com/e.png">', ["https://cdn.example.com/e.png"]),
    # One image per <img>: the largest of src and the srcset candidates.
    (
        '<img src="x.png" srcset="x-1x.png 1x, https://img.example/w_100,h_100/x.png 2x">',
        ["https://img.example/w_100,h_100/x.png"],
    ),
    ('<img srcset="s-300.png 300w, s-600.png 600w">', ["http://example.com/dir/s-600.png"]),
    # <picture>: one image of every <source srcset> and the <img>.
    (
        '<picture><source type="image/avif" srcset="p.avif 1x, p2.avif 2x">'
        '<source type="image/webp" srcset="/p.webp"><img src="p.jpg"></picture>',
        ["http://example.com/dir/p2.avif"],
    ),
    # Two pictures and an <img> between them stay three images, in document order.
    (
        '<picture><source srcset="a-1.webp 100w, a-2.webp 200w"><img src="a.jpg"></picture>'
        '<img src="mid.png" srcset="mid-2.png 2x">'
        '<picture><source srcset="b.webp"><img src="b.jpg" srcset="b-big.jpg 900w"></picture>',
        [
            "http://example.com/dir/a-2.webp",
            "http://example.com/dir/mid-2.png",
            "http://example.com/dir/b-big.jpg",
        ],
    ),
    # A <picture> with its <img> alone is that <img>.
    ('<picture><img src="only.png"></picture>', ["http://example.com/dir/only.png"]),
    # <source> outside <picture> is no image.
    ('<video><source src="v.mp4" srcset="v.png"></video><audio><source src="a.ogg"></audio>', []),
    # og:image and its two aliases, in document order; other og:image:* are no URLs.
    (
        '<meta property="og:image" content="https://example.com/og.jpg">'
        '<meta property="og:image:width" content="1200">'
        '<meta property="og:image:secure_url" content="https://example.com/og-s.jpg">'
        '<meta property="og:image:url" content="/og-u.jpg">'
        '<meta property="og:image:alt" content="a cat">'
        '<meta name="og:title" content="t.jpg">',
        [
            "https://example.com/og.jpg",
            "https://example.com/og-s.jpg",
            "http://example.com/og-u.jpg",
        ],
    ),
    ('<meta property=" OG:Image " content="og.jpg">', ["http://example.com/dir/og.jpg"]),
    # Document order across metas and images.
    (
        '<img src="first.png"><meta property="og:image" content="second.png"><img src="third.png">',
        [
            "http://example.com/dir/first.png",
            "http://example.com/dir/second.png",
            "http://example.com/dir/third.png",
        ],
    ),
    # Not fetchable: data:, javascript:, blob:, about:, in any case, padded, or broken by a tab.
    (
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><img src=" DATA:image/png,x ">'
        '<img src="javascript:void(0)"><img src="JavaScript:alert(1)">'
        '<img src="blob:https://example.com/1-2-3"><img src="about:blank">'
        '<img src="da&#9;ta:image/png,x">'
        '<img srcset="data:image/png;base64,AAAA 1x, ok.png 2x">',
        ["http://example.com/dir/ok.png"],
    ),
    # A lazy-loading placeholder never hides the image: data: is no candidate.
    (
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="1024" '
        'srcset="data:image/svg+xml,%3Csvg%3E 4000w, real.jpg 300w">',
        ["http://example.com/dir/real.jpg"],
    ),
    # Empty or missing values are skipped.
    ('<img src=""><img src="   "><img><img srcset=""><meta property="og:image" content="">', []),
    # Duplicates: first wins, compared after resolution.
    (
        '<meta property="og:image" content="http://example.com/dir/a.png">'
        '<img src="a.png" srcset="a.png 1x, b.png 2x"><img src="/dir/b.png">',
        ["http://example.com/dir/a.png", "http://example.com/dir/b.png"],
    ),
    # <base href> is honoured (through the base argument); absolute URLs ignore it.
    (
        BASE_TAG + '<img src="x.png"><img src="/y.png"><img src="http://example.com/z.png">',
        [
            "https://cdn.example.net/base/x.png",
            "https://cdn.example.net/y.png",
            "http://example.com/z.png",
        ],
    ),
    # A URL the parser rejects is dropped.
    # Unparsable: returned as written, for the caller to refuse and count (image_bad_url).
    (
        '<img src="http://[oops/x.png"><img src="fine.png">',
        ["http://[oops/x.png", "http://example.com/dir/fine.png"],
    ),
]


@pytest.mark.parametrize(("html", "expected"), IMAGE_CASES)
def test_image_urls(html: str, expected: list[str]) -> None:
    selector, base, _ = read(f"<html><head></head><body>{html}</body></html>")
    assert image_urls(selector, base) == expected


def test_image_urls_not_capped() -> None:
    selector, base, _ = read("".join(f'<img src="/i{n}.png">' for n in range(1_500)))
    urls = image_urls(selector, base)
    assert len(urls) == 1_500
    assert urls[0] == "http://example.com/i0.png"
    assert urls[-1] == "http://example.com/i1499.png"


# --- videos -------------------------------------------------------------------------------

STEAK_VIDEO = {
    "@type": "VideoObject",
    "name": "  Grilling\n   steaks ",
    "description": "How to grill\ta steak.",
    "contentUrl": "/media/steak.mp4",
    "embedUrl": "https://player.example/embed/1",
    "thumbnailUrl": ["https://img.example/t1.jpg", "https://img.example/t2.jpg"],
    "duration": "PT1M30S",
    "uploadDate": " 2024-03-01T08:00:00+01:00 ",
}
STEAK_EXPECTED = {
    "content_loc": "http://example.com/media/steak.mp4",
    "player_loc": "https://player.example/embed/1",
    "thumbnail_loc": "https://img.example/t1.jpg",
    "title": "Grilling steaks",
    "description": "How to grill a steak.",
    "duration": "90",
    "publication_date": "2024-03-01T08:00:00+01:00",
}
OG_META = (
    '<meta property="og:title" content=" OG  title ">'
    '<meta property="og:description" content="OG description">'
)


def _ld(value: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(value)}</script>'


def _og(**props: str) -> str:
    return "".join(
        f'<meta property="og:{name.replace("__", ":")}" content="{value}">'
        for name, value in props.items()
    )


# (head html, body html, expected candidates), for a page at PAGE_URL
VIDEO_CASES: list[tuple[str, str, list[dict[str, str]]]] = [
    ("", "", []),
    # JSON-LD nested in @graph, inside another object's property.
    (
        _ld(
            {
                "@context": "https://schema.org",
                "@graph": [
                    {"@type": "WebPage", "name": "The page"},
                    {"@type": "Article", "headline": "Steak", "video": STEAK_VIDEO},
                ],
            }
        ),
        "",
        [STEAK_EXPECTED],
    ),
    # @type as a list or as an IRI; thumbnailUrl as an ImageObject.
    (
        _ld(
            [
                {
                    "@type": ["VideoObject", "MediaObject"],
                    "contentUrl": "https://v.example/a.mp4",
                    "thumbnailUrl": {"@type": "ImageObject", "url": "thumb.jpg"},
                    "duration": "PT2H",
                },
                {"@type": "https://schema.org/VideoObject", "embedUrl": "//player.example/b"},
                {"@type": "Video", "contentUrl": "https://v.example/not-a-video-object.mp4"},
            ]
        ),
        "",
        [
            {
                "content_loc": "https://v.example/a.mp4",
                "thumbnail_loc": "http://example.com/dir/thumb.jpg",
                "duration": "7200",
            },
            {"player_loc": "http://player.example/b"},
        ],
    ),
    # Values that are not what schema.org says are omitted, never guessed.
    (
        _ld(
            {
                "@type": "VideoObject",
                "name": 42,
                "description": "",
                "contentUrl": {"href": "x.mp4"},
                "embedUrl": "javascript:play()",
                "thumbnailUrl": [None, 3, "", "data:image/png,x", "https://img.example/ok.jpg"],
                "duration": "90 seconds",
                "uploadDate": ["2024-01-01"],
            }
        )
        + _ld({"@type": "VideoObject", "contentUrl": "https://v.example/n.mp4", "duration": 90}),
        "",
        [
            {"thumbnail_loc": "https://img.example/ok.jpg", "publication_date": "2024-01-01"},
            {"content_loc": "https://v.example/n.mp4"},
        ],
    ),
    # A VideoObject with nothing usable is no candidate.
    (_ld({"@type": "VideoObject", "name": None}), "", []),
    # Open Graph: video/* type -> content_loc, with og:image, og:title, og:description,
    # og:video:duration.
    (
        _og(
            video="https://cdn.example.com/v/1",
            video__type="video/mp4",
            video__duration="0120",
            image="/og.jpg",
        )
        + OG_META,
        "",
        [
            {
                "content_loc": "https://cdn.example.com/v/1",
                "thumbnail_loc": "http://example.com/og.jpg",
                "title": "OG title",
                "description": "OG description",
                "duration": "120",
            }
        ],
    ),
    # A video file extension makes it a content_loc without a type.
    (
        _og(video="/media/clip.WebM?token=1"),
        "",
        [{"content_loc": "http://example.com/media/clip.WebM?token=1"}],
    ),
    (
        _og(video="https://cdn.example.com/live/index.m3u8"),
        "",
        [{"content_loc": "https://cdn.example.com/live/index.m3u8"}],
    ),
    # Anything else is a player page.
    (
        _og(
            video="https://www.youtube.com/embed/abc", video__type="text/html", video__duration="2m"
        ),
        "",
        [{"player_loc": "https://www.youtube.com/embed/abc"}],
    ),
    (
        _og(video="https://player.example/watch?file=a.mp4"),
        "",
        [{"player_loc": "https://player.example/watch?file=a.mp4"}],
    ),
    # og:video first, then og:video:url, then og:video:secure_url.
    (
        _og(video__secure_url="https://s.example/s.mp4", video__url="https://s.example/u.mp4"),
        "",
        [{"content_loc": "https://s.example/u.mp4"}],
    ),
    (
        _og(video__secure_url="https://s.example/s.mp4"),
        "",
        [{"content_loc": "https://s.example/s.mp4"}],
    ),
    # No og:video: og:title alone is no video.
    (OG_META + _og(image="/og.jpg"), "", []),
    # <video src poster title>.
    (
        "",
        '<video src="clip.webm" poster="poster.jpg" title=" My  clip "></video>',
        [
            {
                "content_loc": "http://example.com/dir/clip.webm",
                "thumbnail_loc": "http://example.com/dir/poster.jpg",
                "title": "My clip",
            }
        ],
    ),
    # The first <source src>; aria-label as the title; og:description as the description.
    (
        OG_META,
        '<video poster="/p.jpg" aria-label="Labelled"><source src="/a.mp4" type="video/mp4">'
        '<source src="/a.webm" type="video/webm"></video>',
        [
            {
                "content_loc": "http://example.com/a.mp4",
                "thumbnail_loc": "http://example.com/p.jpg",
                "title": "Labelled",
                "description": "OG description",
            }
        ],
    ),
    # og:title is the fallback title; <title> never is.
    (
        "<title>Page title</title>" + OG_META,
        '<video src="/v.mp4"></video>',
        [
            {
                "content_loc": "http://example.com/v.mp4",
                "title": "OG title",
                "description": "OG description",
            }
        ],
    ),
    (
        "<title>Page title</title>",
        '<video src="/v.mp4"></video>',
        [{"content_loc": "http://example.com/v.mp4"}],
    ),
    # A <video> filled in by script names no video: no candidate.
    ("", '<video poster="p.jpg"></video><video src="blob:https://example.com/x"></video>', []),
    # Each <video> element is a candidate.
    (
        "",
        '<video src="/1.mp4"></video><div><video><source src="/2.mp4"></video></div>',
        [{"content_loc": "http://example.com/1.mp4"}, {"content_loc": "http://example.com/2.mp4"}],
    ),
    # Later duplicates are dropped: same content_loc or player_loc as an earlier candidate.
    (
        _ld(STEAK_VIDEO)
        + _og(video="https://player.example/embed/1", image="/og.jpg")
        + _ld(
            {
                "@type": "VideoObject",
                "contentUrl": "http://example.com/media/steak.mp4",
                "name": "again",
            }
        ),
        '<video src="/media/steak.mp4" poster="other.jpg"></video><video src="/other.mp4"></video>',
        [STEAK_EXPECTED, {"content_loc": "http://example.com/other.mp4"}],
    ),
    # <base href> is honoured for every source.
    (
        BASE_TAG + _ld({"@type": "VideoObject", "contentUrl": "ld.mp4"}) + _og(video="og.mp4"),
        '<video src="el.mp4" poster="el.jpg"></video>',
        [
            {"content_loc": "https://cdn.example.net/base/ld.mp4"},
            {"content_loc": "https://cdn.example.net/base/og.mp4"},
            {
                "content_loc": "https://cdn.example.net/base/el.mp4",
                "thumbnail_loc": "https://cdn.example.net/base/el.jpg",
            },
        ],
    ),
]


@pytest.mark.parametrize(("head", "body", "expected"), VIDEO_CASES)
def test_videos(head: str, body: str, expected: list[dict[str, str]]) -> None:
    selector, base, _ = read(f"<html><head>{head}</head><body>{body}</body></html>")
    ld, invalid = json_ld(selector)
    assert invalid == 0
    assert videos(selector, ld, base) == expected


def test_videos_walk_deep_json_ld() -> None:
    """A VideoObject nested hundreds of levels deep is found, without recursion."""
    video = '{"@type": "VideoObject", "contentUrl": "https://v.example/deep.mp4"}'
    selector, base, _ = read(ld_page('{"hasPart": [' * 400 + video + "]}" * 400))
    ld, invalid = json_ld(selector)
    assert invalid == 0
    assert videos(selector, ld, base) == [{"content_loc": "https://v.example/deep.mp4"}]


def test_videos_ignore_json_ld_that_is_no_object() -> None:
    selector, base, _ = read("<p>x</p>")
    assert videos(selector, [42, "VideoObject", None, [True, 1.5]], base) == []


# --- alternates ---------------------------------------------------------------------------


def test_alternates_from_page_then_header() -> None:
    head = (
        '<link rel="alternate" hreflang="en" href="/en/">'
        '<link rel="alternate" hreflang="de-DE" href="https://example.de/">'
        '<link rel="alternate" hreflang="x-default" href="/">'
        '<LINK REL="Alternate" HREFLANG=" fr " HREF=" ../fr/ ">'
        '<link rel="alternate" type="application/rss+xml" href="/feed">'  # no hreflang
        '<link rel="alternate" hreflang="en" href="http://example.com/en/">'  # duplicate
        '<link rel="alternate" hreflang="" href="/empty-lang">'
        '<link rel="alternate" hreflang="it" href="">'
        '<link rel="canonical" hreflang="pl" href="/pl/">'  # not an alternate
    )
    selector, base, response = read(
        f"<html><head>{head}</head><body></body></html>",
        headers={
            "Link": [
                '<https://example.com/es/>; rel="alternate"; hreflang="es", '
                '<http://example.com/en/>; rel="alternate"; hreflang="en"',
                '<https://example.com/nl/>; rel="alternate"',  # no hreflang
                '<https://example.com/pt/>; hreflang="pt"',  # no rel
                "</ja/>; rel=alternate; hreflang=ja",
                '<https://example.com/x/>; rel="alternate"; hreflang="x-default"',
            ]
        },
    )
    assert alternates(selector, header(response, "Link"), base, response.url) == [
        ("en", "http://example.com/en/"),
        ("de-DE", "https://example.de/"),
        ("x-default", "http://example.com/"),
        ("fr", "http://example.com/fr/"),
        ("", "http://example.com/empty-lang"),  # kept for the caller to count bad_hreflang
        ("es", "https://example.com/es/"),
        ("ja", "http://example.com/ja/"),
        ("x-default", "https://example.com/x/"),
    ]


def test_alternates_honour_base() -> None:
    selector, base, _ = read(
        f'<html><head>{BASE_TAG}<link rel="alternate" hreflang="en" href="en/"></head></html>'
    )
    assert alternates(selector, [], base, base) == [("en", "https://cdn.example.net/base/en/")]


def test_alternates_header_targets_ignore_base() -> None:
    selector, base, response = read(
        f'<html><head>{BASE_TAG}<link rel="alternate" hreflang="fr" href="fr/"></head></html>',
        headers={
            "Link": '<page.html>; rel="alternate"; hreflang="en", </de/>; rel=alternate; hreflang=de'
        },
    )
    assert alternates(selector, header(response, "Link"), base, response.url) == [
        ("fr", "https://cdn.example.net/base/fr/"),
        ("en", "http://example.com/dir/page.html"),
        ("de", "http://example.com/de/"),
    ]


def test_alternates_none() -> None:
    selector, base, _ = read("<html><head></head><body></body></html>")
    assert alternates(selector, [], base, base) == []


# --- page_dates ---------------------------------------------------------------------------

# (html, expected): precedence article:modified_time > og:updated_time > JSON-LD
# dateModified > microdata, whatever the document order.
PAGE_DATE_CASES: list[tuple[str, list[str]]] = [
    ("", []),
    (
        '<time itemprop="dateModified" datetime="2024-01-05">Jan 5</time>'
        '<meta itemprop="dateModified" content="2024-01-04">'
        + _ld({"@type": "Article", "dateModified": "2024-01-03"})
        + '<meta property="og:updated_time" content="2024-01-02T10:00:00Z">'
        '<meta property="article:modified_time" content=" 2024-01-01T09:00:00+02:00 ">',
        [
            "2024-01-01T09:00:00+02:00",
            "2024-01-02T10:00:00Z",
            "2024-01-03",
            "2024-01-05",
            "2024-01-04",
        ],
    ),
    # JSON-LD: the first dateModified at any depth; non-strings are passed over.
    (
        _ld(
            {
                "@graph": [
                    {"@type": "WebSite", "dateModified": 20240101},
                    {
                        "@type": "WebPage",
                        "mainEntity": {"@type": "Article", "dateModified": "2024-02-02"},
                    },
                    {"@type": "Article", "dateModified": "2024-03-03"},
                ]
            }
        ),
        ["2024-02-02"],
    ),
    # Microdata: itemprop is a token list; <time> without datetime gives its text.
    (
        '<time itemprop="datePublished dateModified"> 2024-04-04 </time>'
        '<time itemprop="datemodified" datetime="2024-09-09"></time>',  # case-sensitive name
        ["2024-04-04"],
    ),
    # Published dates are no modification dates; empty values are dropped; repeats too.
    (
        '<meta property="article:published_time" content="2023-01-01">'
        '<meta itemprop="datePublished" content="2023-01-01">'
        '<meta property="article:modified_time" content="">'
        '<meta property="og:updated_time" content="2024-05-05">'
        '<meta itemprop="dateModified" content="2024-05-05">'
        '<time itemprop="dateModified" datetime="  "></time>',
        ["2024-05-05"],
    ),
]


@pytest.mark.parametrize(("html", "expected"), PAGE_DATE_CASES)
def test_page_dates(html: str, expected: list[str]) -> None:
    selector, _, _ = read(f"<html><head></head><body>{html}</body></html>")
    ld, _ = json_ld(selector)
    assert page_dates(selector, ld) == expected


# --- iso8601_duration ---------------------------------------------------------------------

DURATION_CASES: list[tuple[str, int | None]] = [
    ("PT1M30S", 90),
    ("PT90S", 90),
    ("PT1H", 3_600),
    ("PT1H2M3S", 3_723),
    ("P1DT1S", 86_401),
    ("P0DT1M", 60),
    ("P2D", 172_800),
    ("PT0S", 0),
    ("  PT5S ", 5),
    ("pt5s", 5),
    # Fractions round half to even, as Python's round(): 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
    ("PT0.5S", 0),
    ("PT1.5S", 2),
    ("PT2.5S", 2),
    ("PT2.51S", 3),
    ("PT2.4999S", 2),
    ("PT0,75S", 1),  # ISO 8601 allows a decimal comma
    # Not durations.
    ("1:30", None),
    ("", None),
    ("P", None),
    ("PT", None),
    ("P1DT", None),
    ("PT1", None),
    ("T1M", None),
    ("90", None),
    ("-PT5S", None),
    ("PT1.5M", None),  # fractions on seconds only
    ("P1Y", None),  # years, months and weeks have no fixed length
    ("P1M", None),
    ("P1W", None),
    ("PT1S1M", None),  # wrong order
    ("P1DT1H garbage", None),
    ("PT" + "9" * 5_000 + "S", None),  # beyond any video, and beyond int()'s digit limit
]


@pytest.mark.parametrize(
    ("value", "expected"), DURATION_CASES, ids=[c[0][:20] for c in DURATION_CASES]
)
def test_iso8601_duration(value: str, expected: int | None) -> None:
    assert iso8601_duration(value) == expected


# --- hostile input ------------------------------------------------------------------------

HUGE = "a" * 5_000_000


def _read_everything(selector: Selector, base: str, headers: dict[str, list[str]]) -> None:
    """Run every reader; none may raise."""
    ld, _ = json_ld(selector)
    robots_directives(selector, headers.get("X-Robots-Tag", []), GOOGLEBOT)
    canonical_urls(selector, headers.get("Link", []), base, base)
    refresh_url(selector, base)
    image_urls(selector, base)
    videos(selector, ld, base)
    alternates(selector, headers.get("Link", []), base, base)
    page_dates(selector, ld)


def test_hostile_broken_html() -> None:
    html = (
        '<html><head><meta name="robots" content="noindex"<link rel=canonical href=/c>'
        "<body><div><p><img src=a.png><table><tr><td><img src='b.png' srcset=\"b2.png 2x,"
        '<video src="x.mp4"><source src="y.mp4"><picture><source srcset="p.webp"></td></div>'
        '</span></p></p><img src="c.png"<img src="d.png">'
        # Unclosed: everything after it is script text, so it is one invalid block.
        '<script type="application/ld+json">{"@type": "VideoObject", "contentUrl": "/v.mp4"'
        '<img src="never.png">'
    )
    selector, base, _ = read(html)
    _read_everything(selector, base, {})
    # What survives the parser's repair is still read.
    assert json_ld(selector) == ([], 1)
    images = image_urls(selector, base)
    assert "http://example.com/dir/a.png" in images
    assert "http://example.com/dir/never.png" not in images


def test_hostile_huge_attribute_values() -> None:
    html = (
        f'<html><head><meta name="robots" content="{HUGE}, noindex">'
        f'<link rel="canonical" href="/{HUGE}">'
        f'<link rel="alternate" hreflang="{HUGE}" href="/x">'
        f'<meta http-equiv="refresh" content="0; url=/{HUGE}">'
        f'<meta property="og:video" content="{HUGE}.mp4"><meta property="og:title" content="{HUGE}">'
        f'<meta property="article:modified_time" content="{HUGE}">'
        f'</head><body><img src="/{HUGE}" srcset="{HUGE} 1x, {"(" * 1_000_000} , {"," * 1_000_000}">'
        f'<video src="{HUGE}" poster="{HUGE}" title="{HUGE}"></video></body></html>'
    )
    headers = {
        "X-Robots-Tag": [f"googlebot: {HUGE}", ("x, " * 1_000_000)],
        "Link": [f"<{HUGE}>; rel={HUGE}", '"' * 1_000_000, f'</a>; title="{HUGE}'],
    }
    selector, base, _ = read(html)
    started = time.perf_counter()
    _read_everything(selector, base, headers)
    assert time.perf_counter() - started < 30  # linear, not quadratic
    assert "noindex" in robots_directives(selector, [], NOBODY)
    # The srcset's 1x candidate stands for src, as in the HTML standard.
    assert image_urls(selector, base)[0] == f"http://example.com/dir/{HUGE}"
    assert refresh_url(selector, base) == f"http://example.com/{HUGE}"
    assert parse_srcset(f"{HUGE} 1x") == [HUGE]


def test_hostile_non_utf8_bytes() -> None:
    body = (
        b"\x80\xff<html><head><meta name=robots content='noindex\x80'>"
        b'<script type="application/ld+json">{"name": "caf\xe9"}</script>'
        b'<script type="application/ld+json">{"@type": "VideoObject", "contentUrl": "/v\xc3\xa9.mp4"}</script>'
        b"</head><body><img src='/\xe9\xff.png'><img src='/ok.png'></body></html>"
    )
    selector, base, _ = read(body, headers={"Link": "<http://ex\xe9mple.com/>; rel=canonical"})
    _read_everything(selector, base, {"Link": ["<http://ex\xc3\xa9mple.com/\x00>; rel=canonical"]})
    # Invalid UTF-8 is decoded with replacement characters, so the JSON stays valid JSON.
    ld, invalid = json_ld(selector)
    assert (len(ld), invalid) == (2, 0)
    assert videos(selector, ld, base) == [{"content_loc": "http://example.com/v\xe9.mp4"}]
    assert "http://example.com/ok.png" in image_urls(selector, base)


def test_hostile_json_ld_of_any_shape() -> None:
    selector, base, _ = read(
        ld_page(
            "42", '"VideoObject"', "[]", "{}", "[1, [2, [3]]]", '{"@type": 5, "@graph": "x"}', "NaN"
        )
    )
    ld, invalid = json_ld(selector)
    assert invalid == 0
    assert len(ld) == 7
    assert videos(selector, ld, base) == []
    assert page_dates(selector, ld) == []


def test_hostile_empty_body() -> None:
    selector, base, _ = read(b"")
    _read_everything(selector, base, {})
    assert json_ld(selector) == ([], 0)
    assert image_urls(selector, base) == []
    assert refresh_url(selector, base) is None
