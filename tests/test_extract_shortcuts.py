"""The page reader's shortcuts give what the long road gives.

``extract`` turns a page's image and alternate values into final URLs without joining and
normalising the ones already in shape (``sitemaps.urls.joined_loc``). The long road is the
public one:
``pages.images.image_urls``/``pages.hreflang.alternates`` (join, deduplicate), then
``normalize_loc`` or the URL policy for each, a rejected value counted once. These properties build that road here
from the public functions, the way the extractor did before the shortcuts, and hold the
extractor to the same URLs, in the same order, with the same counted skips, over hostile
values, bases (``<base href>``, default and odd ports, upper case, IPv6, punycode) and
page encodings.
"""

from __future__ import annotations

import html
import itertools
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from scrapy_sitemapgen.crawl.extract import _Page
from scrapy_sitemapgen.pages.hreflang import alternates as page_alternates
from scrapy_sitemapgen.pages.hrefs import absolute
from scrapy_sitemapgen.pages.images import image_urls
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import Alternate, FactRejected, parse_hreflang
from scrapy_sitemapgen.sitemaps.limits import MAX_IMAGES_PER_URL, MAX_LOC_LENGTH
from scrapy_sitemapgen.sitemaps.urls import (
    UrlRejected,
    is_normal,
    joined_loc,
    loc_prefix,
    normal_directory,
    normalize_loc,
    relative_join,
)

from .helpers import NASTY, PROPERTY, MemorySinks, assert_valid, url_text
from .helpers import Skips as WriterSkips

BASES = [
    "http://127.0.0.1:8000/p/1",
    "https://www.example.com/a/b?q=1",
    "https://www.example.com",
    "http://Example.COM/x/",  # upper-case host: no shortcut
    "http://example.com:80/x",  # default port: no shortcut
    "https://example.com:443/",
    "http://example.com:0/",
    "http://example.com:99999/",
    "http://[::1]:8080/x",
    "https://xn--bcher-kva.example/x/y",
    "https://bücher.example/x",
    "https://a..b.example/x",
    "http://exa_mple.com/",
    "https://user:pw@example.com/x",
    "ftp://example.com/x",
    # Bases whose directory Python's join changes: an empty segment, a dot segment, a
    # ";" parameter (no relative shortcut from these).
    "http://example.com/a//b/c.html",
    "http://example.com/a/./b/c.html",
    "http://example.com/a;p/b/c",
    "http://example.com/a/b;p",
]
ENCODINGS = ["utf-8", "cp1252", "shift_jis"]
# Values in the shapes the shortcut takes, near misses, and hostile text.
SHAPED = [
    "/img/1.jpg", "/a/b?x=1&y=2", "/a?", "/a?b", "/", "/a/./b", "/a/../b", "/.well-known/x",
    "/a..b", "//cdn.example.com/x", "/%41", "/%zz", "/é", "/a;b", "/a?b;c", "/a'b", "/a?b'c",
    "/a b", " /a ", "/a#f", "/a\\b", "/" + "x" * 2100, "/" + "x" * (MAX_LOC_LENGTH - 30),
    "https://cdn.example.com/og/1.jpg", "HTTPS://cdn.example.com/x", "https://cdn.example.com",
    "https://cdn.example.com:443/x", "https://cdn.example.com/a;b", "http://h/a/../b",
    "a/b", "../x", "?q", "#top", "", " ", "javascript:alert(1)", "data:image/png;base64,xx",
    "ja\tvascript:x", "https://[::1/x", "http://127.0.0.1:8000/p/1?jsessionid=5",
    "/p;jsessionid=5", "/p?jsessionid=5&a=1",
    # Relative paths (documentation sites link this way), and their near misses.
    "sect.install.html", "images/a.png", "img/a.png?v=2", "x.html#part", "a//b", "a/./b",
    "a/../b", "a/.", "./a", ".hidden", "a:b/c", "a/b:c", "a;b", "a?", "a b", "é.html",
    "a%20b", "a\\b", "a/b/",
]  # fmt: skip
# Segments of relative paths, in shape and out of it.
RELATIVE_SEGMENTS = ["a", "b.html", "c-d_e~f", "g(1)", "h?i=1", "", ".", "..", ".x", "x:y", "é"]
RELATIVE_SEGMENTS += ["%41", "p;q", "e#f", "a b", "?", "k:"]
value = st.one_of(
    st.sampled_from(SHAPED),
    st.sampled_from(NASTY),
    url_text,
    st.sampled_from(SHAPED).flatmap(lambda shaped: url_text.map(lambda tail: shaped + tail)),
)
hreflang = st.one_of(
    st.sampled_from(["en", "de-AT", "x-default", " fr ", "EN", "", "e n", "zz-ZZZZ", "x-def"]),
    st.text(max_size=8),
)


class Skips:
    """What the reporter was told, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        #: What the rules' counters were given (not bad data: no skip).
        self.counted: dict[str, int] = {}

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        self.calls.append((reason, detail))

    def exclude(self, reason: str, url: str, detail: str | None = None) -> None:
        self.calls.append((f"excluded/{reason}", url))

    def count(self, key: str, count: int = 1) -> None:
        self.counted[key] = self.counted.get(key, 0) + count


def config(**extra: Any) -> Config:
    values = Settings({"SITEMAPGEN_URI": "sitemaps", **extra})
    return Config.from_settings(values)


CONFIGS = [
    config(),
    config(
        SITEMAPGEN_HOST_ALIASES={"127.0.0.1": "localhost", "cdn.example.com": "img.example.com"}
    ),
    config(SITEMAPGEN_STRIP_PARAMS=[], SITEMAPGEN_IMAGE_DENY=[r"\.png$"]),
]


def attr(text: str) -> str:
    return html.escape(text, quote=True)


def make_page(
    base: str,
    base_href: str | None,
    encoding: str,
    images: list[str],
    srcsets: list[str],
    alternates: list[tuple[str, str]],
    link_header: list[tuple[str, str]],
    conf: Config,
) -> tuple[_Page, Skips]:
    head = f'<meta charset="{encoding}">'
    if base_href is not None:
        head += f'<base href="{attr(base_href)}">'
    head += "".join(f'<meta property="og:image" content="{attr(v)}">' for v in images[:1])
    head += "".join(
        f'<link rel="alternate" hreflang="{attr(lang)}" href="{attr(href)}">'
        for lang, href in alternates
    )
    body = "".join(f'<img src="{attr(v)}">' for v in images[1:])
    body += "".join(
        f'<picture><source srcset="{attr(v)} 2x"></picture><img srcset="{attr(v)}, /s.jpg 2x">'
        for v in srcsets
    )
    document = f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"
    headers = {"Content-Type": f"text/html; charset={encoding}"}
    if link_header:
        headers["Link"] = ", ".join(
            f'<{href}>; rel="alternate"; hreflang="{lang}"' for lang, href in link_header
        )
    try:
        url = conf.url_policy.loc(base)
    except UrlRejected:
        url = "http://127.0.0.1:8000/fallback"
    response = HtmlResponse(
        url,
        body=document.encode(encoding, "replace"),
        headers={k: v.encode("latin-1", "replace") for k, v in headers.items()},
        request=Request(url),
        encoding=encoding,
    )
    skips = Skips()
    return _Page(response, conf, skips, url), skips  # type: ignore[arg-type]


def long_road_images(facts: _Page) -> tuple[tuple[str, ...], list[tuple[str, object]]]:
    """The extractor's images before its shortcut: image_urls, each normalised."""
    found: dict[str, None] = {}
    skips: list[tuple[str, object]] = []
    policy = facts.config.image_policy
    for raw in image_urls(facts.nodes, facts.base):
        try:
            url = normalize_loc(raw, facts.response.encoding)
        except UrlRejected as exc:
            skips.append((f"image_{exc.reason}", raw))
            continue
        if policy.refusal(url) is None:
            found[url] = None
    if len(found) > MAX_IMAGES_PER_URL:
        skips.append(("images_over_limit", len(found)))
    return tuple(found)[:MAX_IMAGES_PER_URL], skips


def long_road_alternates(facts: _Page) -> tuple[tuple[Alternate, ...], list[tuple[str, object]]]:
    """The extractor's alternates before its shortcut: pages.hreflang.alternates, each
    checked and put through the URL policy."""
    found: dict[Alternate, None] = {}
    skips: list[tuple[str, object]] = []
    for lang, href in page_alternates(facts.nodes, facts.links, facts.base, facts.response.url):
        try:
            found[
                Alternate(
                    parse_hreflang(lang), facts.config.url_policy.loc(href, facts.response.encoding)
                )
            ] = None
        except FactRejected as exc:
            skips.append((exc.reason, lang))
        except UrlRejected as exc:
            skips.append((f"alternate_{exc.reason}", href))
    return tuple(found), skips


@settings(PROPERTY, max_examples=500)
@given(
    base=st.sampled_from(BASES),
    base_href=st.one_of(st.none(), st.sampled_from(BASES), value),
    encoding=st.sampled_from(ENCODINGS),
    images=st.lists(value, max_size=6),
    srcsets=st.lists(value, max_size=3),
    alternates=st.lists(st.tuples(hreflang, value), max_size=5),
    link_header=st.lists(
        st.tuples(st.sampled_from(["en", "x-default", "bad lang"]), st.sampled_from(SHAPED[:12])),
        max_size=2,
    ),
    conf=st.sampled_from(CONFIGS),
)
def test_images_and_alternates_match_the_long_road(
    base: str,
    base_href: str | None,
    encoding: str,
    images: list[str],
    srcsets: list[str],
    alternates: list[tuple[str, str]],
    link_header: list[tuple[str, str]],
    conf: Config,
) -> None:
    facts, skips = make_page(
        base, base_href, encoding, images, srcsets, alternates, link_header, conf
    )
    facts.nodes, facts.base  # noqa: B018  # a broken <base href> is counted here, once
    skips.calls.clear()
    expected_images, image_skips = long_road_images(facts)
    assert facts.images() == expected_images
    assert skips.calls == image_skips
    skips.calls.clear()
    expected_alternates, alternate_skips = long_road_alternates(facts)
    assert facts.alternates() == expected_alternates
    assert skips.calls == alternate_skips


@settings(PROPERTY, max_examples=1500)
@given(base=st.one_of(st.sampled_from(BASES), value), raw=value)
def test_normal_url_is_the_join_normalised(base: str, raw: str) -> None:
    """When the shortcut answers, its URL is ``normalize_loc(absolute(base, raw))``."""
    shortcut = joined_loc(raw, loc_prefix(base), base, normal_directory(base))
    if shortcut is None:
        return
    assert shortcut == normalize_loc(absolute(base, raw) or "")


@settings(PROPERTY, max_examples=1500)
@given(
    base=st.one_of(
        st.sampled_from(BASES),
        st.tuples(st.sampled_from(BASES[:3]), st.sampled_from(SHAPED)).map("/".join),
        value,
    ),
    raw=st.one_of(
        value,
        st.sampled_from(SHAPED).map(lambda v: v.lstrip("/")),
        st.lists(
            st.sampled_from(RELATIVE_SEGMENTS),
            min_size=1,
            max_size=4,
        ).map("/".join),
    ),
)
def test_relative_join_is_pythons_join_normalised(base: str, raw: str) -> None:
    """``relative_join`` answers only where it is ``urljoin`` then ``normalize_loc``
    (Python's join drops empty segments, which RFC 3986 keeps: the shortcut refuses
    them)."""
    joined = relative_join(normal_directory(base), raw)
    if joined is not None:
        event("joined")
        assert joined == normalize_loc(absolute(base, raw) or "")


def test_relative_join_over_every_short_path() -> None:
    """Every path of up to three of these segments, against bases in shape and not: where
    the shortcut answers, it is the join normalised, and it answers for the paths in
    shape."""
    bases = [*BASES, "http://example.com/", "https://example.com/a/b/", "http://e.com/a/b?c=d/e"]
    joined = 0
    for base in bases:
        directory = normal_directory(base)
        for length in (1, 2, 3):
            for segments in itertools.product(RELATIVE_SEGMENTS, repeat=length):
                raw = "/".join(segments)
                shortcut = relative_join(directory, raw)
                if shortcut is not None:
                    joined += 1
                    assert shortcut == normalize_loc(absolute(base, raw) or ""), (base, raw)
    assert joined > 1000


@settings(PROPERTY, max_examples=300)
@given(
    base=st.sampled_from(BASES),
    hrefs=st.lists(
        st.one_of(
            value,
            st.sampled_from(SHAPED).map(lambda v: v + "#part"),
            st.sampled_from(["#", "#top", "#a b", ""]),
            st.lists(st.sampled_from(RELATIVE_SEGMENTS), min_size=1, max_size=3).map("/".join),
        ),
        max_size=8,
        unique=True,
    ),
    conf=st.sampled_from(CONFIGS),
)
def test_link_targets_are_the_long_roads(base: str, hrefs: list[str], conf: Config) -> None:
    """The content fingerprint's link targets: each href joined to the page's base and put
    through the URL policy (the URL as it is where the policy refuses it), whatever
    shortcut the page reader takes."""
    page, _ = make_page(base, None, "utf-8", [], [], [], [], conf)
    expected = [
        page._target(url) for value in hrefs if (url := absolute(page.base, value)) is not None
    ]
    assert page._targets(hrefs) == expected


@settings(PROPERTY, max_examples=1500)
@given(
    url=st.one_of(
        value, st.sampled_from(BASES), st.tuples(st.sampled_from(BASES), value).map("".join)
    )
)
def test_is_normal_means_normalize_loc_leaves_it(url: str) -> None:
    if is_normal(url):
        assert normalize_loc(url) == url


def test_the_shortcut_takes_the_usual_shapes() -> None:
    """Not a property: that the shortcut is taken at all, for the values pages are full of
    (otherwise the properties above would hold of a shortcut that never answers)."""
    base = "http://127.0.0.1:8000/p/1"
    prefix = loc_prefix(base)
    assert prefix == "http://127.0.0.1:8000"
    assert joined_loc("/img/1-480.jpg", prefix, base) == "http://127.0.0.1:8000/img/1-480.jpg"
    assert joined_loc("/de/p/1?a=1&b=2", prefix, base) == "http://127.0.0.1:8000/de/p/1?a=1&b=2"
    assert (
        joined_loc("https://cdn.example.com/og/1.jpg", prefix, base)
        == "https://cdn.example.com/og/1.jpg"
    )
    # The long road: dot segments, escapes, default ports, relative paths, upper case.
    for raw in ("/a/../b", "/a/./b", "/%41", "a/b", "/a b", "HTTPS://cdn.example.com/x", "//cdn/x"):
        assert joined_loc(raw, prefix, base) is None, raw
    # Relative paths, with the page's directory.
    directory = normal_directory("http://127.0.0.1:8000/en-US/sect.x.html?a=1")
    assert directory == "http://127.0.0.1:8000/en-US/"
    assert joined_loc("sect.y.html", prefix, base, directory) == directory + "sect.y.html"
    assert joined_loc("img/a.png?v=2", prefix, base, directory) == directory + "img/a.png?v=2"
    assert joined_loc("../b/c.html", prefix, base, directory) == "http://127.0.0.1:8000/b/c.html"
    for raw in ("./a", "../../a", "a//b", "a/./b", "a:b", "?q", "#top", "a%20b", "a;b", ""):
        assert joined_loc(raw, prefix, base, directory) is None, raw
    for odd in ("http://e.com/a//b/c", "http://e.com/a/./b", "http://e.com/a;p/b", "/a/b"):
        assert normal_directory(odd) == "", odd
    assert loc_prefix("http://example.com:80/x") == ""
    assert loc_prefix("http://Example.com/x") == ""
    assert loc_prefix("https://[::1]:8080/x") == ""


# --- page_facts over hostile pages: no crash, a valid entry -------------------------------

import json as _json  # noqa: E402

from scrapy_sitemapgen.crawl.extract import page_facts  # noqa: E402
from scrapy_sitemapgen.sitemaps.urls import origin_of  # noqa: E402
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin  # noqa: E402

# Plausible values beside the hostile ones, so that most pages have something to list.
good_url = st.one_of(
    st.sampled_from(
        [
            "/img/1.jpg",
            "https://cdn.example.com/og/1.jpg",
            "/de/p/1",
            "fr/p/2",
            "../x.png",
            "/v.mp4",
        ]
    ),
    value,
)
date_value = st.one_of(
    st.sampled_from(
        ["2024-01-02", "2024-01-02T03:04:05+01:00", "2024-01-02T03:04Z", "9999-01-01", "yesterday"]
    ),
    value,
)
json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), value),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "@type",
                    "contentUrl",
                    "embedUrl",
                    "thumbnailUrl",
                    "name",
                    "description",
                    "duration",
                    "uploadDate",
                    "dateModified",
                    "url",
                    "@graph",
                    "@value",
                ]
            ),
            children,
            max_size=5,
        ),
    ),
    max_leaves=12,
)
video_object = st.fixed_dictionaries(
    {"@type": st.sampled_from(["VideoObject", "schema:VideoObject", ["Thing", "VideoObject"]])},
    optional={
        "contentUrl": good_url,
        "embedUrl": good_url,
        "thumbnailUrl": st.one_of(good_url, st.lists(good_url, max_size=2)),
        "name": st.one_of(st.text(max_size=30), value),
        "description": st.one_of(st.text(max_size=30), value),
        "duration": st.one_of(value, st.sampled_from(["PT1M", "P1D", "PT"])),
        "uploadDate": date_value,
    },
)
element = st.one_of(
    st.builds(
        lambda n, c: f'<meta name="{attr(n)}" content="{attr(c)}">',
        st.sampled_from(["robots", "googlebot", "ROBOTS", "other"]),
        st.one_of(value, st.sampled_from(["noindex", "none, x", "nofollow"])),
    ),
    st.builds(
        lambda c: f'<meta http-equiv="refresh" content="{attr(c)}">',
        st.one_of(value, value.map(lambda v: "0; url=" + v)),
    ),
    st.builds(
        lambda p, c: f'<meta property="{attr(p)}" content="{attr(c)}">',
        st.sampled_from(
            [
                "og:image",
                "og:video",
                "og:video:url",
                "og:video:type",
                "og:title",
                "og:description",
                "og:video:duration",
                "article:modified_time",
                "og:updated_time",
                "OG:IMAGE ",
            ]
        ),
        st.one_of(good_url, date_value),
    ),
    st.builds(lambda c: f'<meta itemprop="dateModified" content="{attr(c)}">', date_value),
    st.builds(lambda t: f'<time itemprop="dateModified">{html.escape(t)}</time>', date_value),
    st.builds(
        lambda r, h, lang: f'<link rel="{attr(r)}" href="{attr(h)}" hreflang="{attr(lang)}">',
        st.sampled_from(["canonical", "alternate", "alternate", "Canonical alternate", "icon"]),
        good_url,
        hreflang,
    ),
    st.builds(
        lambda s, ss: f'<img src="{attr(s)}" srcset="{attr(ss)}">',
        good_url,
        st.one_of(good_url, value),
    ),
    st.builds(
        lambda ss: f'<picture><source srcset="{attr(ss)}"></picture>', st.one_of(good_url, value)
    ),
    st.builds(
        lambda s, p, t: (
            f'<video src="{attr(s)}" poster="{attr(p)}" title="{attr(t)}"><source src="{attr(s)}"></video>'
        ),
        good_url,
        good_url,
        st.one_of(st.text(max_size=30), value),
    ),
    st.builds(
        lambda j: f'<script type="application/ld+json">{_json.dumps(j)}</script>',
        st.one_of(json_value, video_object, video_object),
    ),
    st.builds(lambda t: f'<script type="application/ld+json">{t}</script>', value),
    st.builds(lambda b: f'<base href="{attr(b)}">', value),
)
header = st.one_of(
    st.tuples(
        st.just("Last-Modified"),
        st.one_of(
            value,
            st.sampled_from(["Wed, 21 Oct 2015 07:28:00 GMT", "Sat, 01 Jan 2300 00:00:00 GMT"]),
        ),
    ),
    st.tuples(
        st.just("X-Robots-Tag"),
        st.one_of(value, st.sampled_from(["noindex", "googlebot: noindex", "otherbot: none"])),
    ),
    st.tuples(
        st.just("Link"),
        st.one_of(
            value,
            st.builds(
                lambda h, lang: f'<{h}>; rel="alternate"; hreflang="{lang}"', value, hreflang
            ),
        ),
    ),
)


@settings(PROPERTY, max_examples=400)
@given(
    base=st.sampled_from([BASES[0], BASES[1], BASES[2], BASES[5], BASES[8], BASES[9]]),
    elements=st.lists(element, max_size=8),
    headers=st.lists(header, max_size=3),
    encoding=st.sampled_from(ENCODINGS),
    conf=st.sampled_from(CONFIGS),
)
def test_page_facts_of_hostile_pages(
    base: str, elements: list[str], headers: list[tuple[str, str]], encoding: str, conf: Config
) -> None:
    """Whatever the page holds, page_facts gives None or facts, never an exception, and
    the facts are written as a schema-valid urlset (P14) with the same loc."""
    document = f"<!DOCTYPE html><html><head>{''.join(elements[::2])}</head><body>{''.join(elements[1::2])}</body></html>"
    raw_headers: dict[bytes, list[bytes]] = {
        b"Content-Type": [f"text/html; charset={encoding}".encode()]
    }
    for name, text in headers:
        raw_headers.setdefault(name.encode(), []).append(text.encode("latin-1", "replace"))
    url = conf.url_policy.loc(base)
    response = HtmlResponse(
        url, body=document.encode(encoding, "replace"), headers=raw_headers, request=Request(url)
    )
    skips = Skips()
    facts = page_facts(response, conf, skips)  # type: ignore[arg-type]
    if facts is None:
        assert skips.calls and skips.calls[-1][0].startswith("excluded/")
        event(skips.calls[-1][0])
        return
    event(
        f"listed: {bool(facts.images)} images, {bool(facts.videos)} videos, "
        f"{bool(facts.alternates)} alternates, {facts.lastmod is not None} lastmod"
    )
    assert facts.loc == url
    sinks = MemorySinks()
    writer_skips = WriterSkips()
    origin = origin_of(url)
    output = write_origin(
        [facts],
        scope=origin.root,
        base_url=origin.root,
        lastmod="2024-01-01T00:00:00+00:00",
        open_sink=sinks,
        options=WriterOptions(gzip=False),
        on_skip=writer_skips,
    )
    assert writer_skips.calls == []
    assert [written.entries for written in output.sitemaps] == [1]
    assert_valid(sinks.data(output.sitemaps[0].name))
