"""The page reader's shortcuts give what the long road gives.

``extract`` turns a page's image and alternate values into final URLs without joining and
normalising the ones already in shape (``_normal_url``). The long road is the public one:
``page.image_urls``/``page.alternates`` (join, deduplicate), then ``normalize_loc`` or the
URL policy for each, a rejected value counted once. These properties build that road here
from the public functions, the way the extractor did before the shortcuts, and hold the
extractor to the same URLs, in the same order, with the same counted skips, over hostile
values, bases (``<base href>``, default and odd ports, upper case, IPv6, punycode) and
page encodings.
"""

from __future__ import annotations

import html
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from scrapy_sitemapgen import page
from scrapy_sitemapgen.extract import _normal_url, _normal_prefix, _Page
from scrapy_sitemapgen.facts import Alternate, FactRejected, parse_hreflang
from scrapy_sitemapgen.limits import MAX_IMAGES_PER_URL, MAX_LOC_LENGTH
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.urls import UrlRejected, is_normal, normalize_loc

from .test_properties import NASTY, PROPERTY, url_text

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
]  # fmt: skip
value = st.one_of(st.sampled_from(SHAPED), st.sampled_from(NASTY), url_text, st.sampled_from(SHAPED).flatmap(
    lambda shaped: url_text.map(lambda tail: shaped + tail)
))
hreflang = st.one_of(st.sampled_from(["en", "de-AT", "x-default", " fr ", "EN", "", "e n", "zz-ZZZZ", "x-def"]), st.text(max_size=8))


class Skips:
    """What the reporter was told, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        self.calls.append((reason, detail))

    def exclude(self, reason: str, url: str) -> None:
        self.calls.append((f"excluded/{reason}", url))


def config(**extra: Any) -> Config:
    values = Settings({"SITEMAPGEN_URI": "sitemaps", **extra})
    return Config.from_settings(values)


CONFIGS = [
    config(),
    config(SITEMAPGEN_HOST_ALIASES={"127.0.0.1": "localhost", "cdn.example.com": "img.example.com"}),
    config(SITEMAPGEN_STRIP_PARAMS=[], SITEMAPGEN_IMAGE_DENY=[r"\.png$"]),
]


def attr(text: str) -> str:
    return html.escape(text, quote=True)


def make_page(
    base: str, base_href: str | None, encoding: str, images: list[str], srcsets: list[str],
    alternates: list[tuple[str, str]], link_header: list[tuple[str, str]], conf: Config,
) -> tuple[_Page, Skips]:
    head = f'<meta charset="{encoding}">'
    if base_href is not None:
        head += f'<base href="{attr(base_href)}">'
    head += "".join(f'<meta property="og:image" content="{attr(v)}">' for v in images[:1])
    head += "".join(
        f'<link rel="alternate" hreflang="{attr(lang)}" href="{attr(href)}">' for lang, href in alternates
    )
    body = "".join(f'<img src="{attr(v)}">' for v in images[1:])
    body += "".join(f'<picture><source srcset="{attr(v)} 2x"></picture><img srcset="{attr(v)}, /s.jpg 2x">' for v in srcsets)
    document = f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"
    headers = {"Content-Type": f"text/html; charset={encoding}"}
    if link_header:
        headers["Link"] = ", ".join(f'<{href}>; rel="alternate"; hreflang="{lang}"' for lang, href in link_header)
    try:
        url = conf.url_policy.loc(base)
    except UrlRejected:
        url = "http://127.0.0.1:8000/fallback"
    response = HtmlResponse(
        url, body=document.encode(encoding, "replace"), headers={k: v.encode("latin-1", "replace") for k, v in headers.items()},
        request=Request(url), encoding=encoding,
    )
    skips = Skips()
    return _Page(response, conf, skips, url), skips  # type: ignore[arg-type]


def long_road_images(facts: _Page) -> tuple[tuple[str, ...], list[tuple[str, object]]]:
    """The extractor's images before its shortcut: page.image_urls, each normalised."""
    found: dict[str, None] = {}
    skips: list[tuple[str, object]] = []
    policy = facts.config.image_policy
    for raw in page.image_urls(facts.nodes, facts.base):
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
    """The extractor's alternates before its shortcut: page.alternates, each checked and
    put through the URL policy."""
    found: dict[Alternate, None] = {}
    skips: list[tuple[str, object]] = []
    for lang, href in page.alternates(facts.nodes, facts.links, facts.base):
        try:
            found[Alternate(parse_hreflang(lang), facts.config.url_policy.loc(href, facts.response.encoding))] = None
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
    link_header=st.lists(st.tuples(st.sampled_from(["en", "x-default", "bad lang"]), st.sampled_from(SHAPED[:12])), max_size=2),
    conf=st.sampled_from(CONFIGS),
)
def test_images_and_alternates_match_the_long_road(
    base: str, base_href: str | None, encoding: str, images: list[str], srcsets: list[str],
    alternates: list[tuple[str, str]], link_header: list[tuple[str, str]], conf: Config,
) -> None:
    facts, skips = make_page(base, base_href, encoding, images, srcsets, alternates, link_header, conf)
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
    """When the shortcut answers, its URL is ``normalize_loc(page.absolute(base, raw))``."""
    shortcut = _normal_url(raw, _normal_prefix(base) or "", base)
    if shortcut is None:
        return
    assert shortcut == normalize_loc(page.absolute(base, raw) or "")


@settings(PROPERTY, max_examples=1500)
@given(url=st.one_of(value, st.sampled_from(BASES), st.tuples(st.sampled_from(BASES), value).map("".join)))
def test_is_normal_means_normalize_loc_leaves_it(url: str) -> None:
    if is_normal(url):
        assert normalize_loc(url) == url


def test_the_shortcut_takes_the_usual_shapes() -> None:
    """Not a property: that the shortcut is taken at all, for the values pages are full of
    (otherwise the properties above would hold of a shortcut that never answers)."""
    base = "http://127.0.0.1:8000/p/1"
    prefix = _normal_prefix(base) or ""
    assert prefix == "http://127.0.0.1:8000"
    assert _normal_url("/img/1-480.jpg", prefix, base) == "http://127.0.0.1:8000/img/1-480.jpg"
    assert _normal_url("/de/p/1?a=1&b=2", prefix, base) == "http://127.0.0.1:8000/de/p/1?a=1&b=2"
    assert _normal_url("https://cdn.example.com/og/1.jpg", prefix, base) == "https://cdn.example.com/og/1.jpg"
    # The long road: dot segments, escapes, default ports, relative paths, upper case.
    for raw in ("/a/../b", "/a/./b", "/%41", "a/b", "/a b", "HTTPS://cdn.example.com/x", "//cdn/x"):
        assert _normal_url(raw, prefix, base) is None, raw
    assert _normal_prefix("http://example.com:80/x") is None
    assert _normal_prefix("http://Example.com/x") is None
    assert _normal_prefix("https://[::1]:8080/x") is None
