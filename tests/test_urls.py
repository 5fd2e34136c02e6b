"""Case tables for the pure URL rules: ``<loc>`` normalisation (P3), origins (P12) and the
names and URLs an origin's files get (P13).

Every expected value below was worked out by hand from RFC 3986/3987/3492 and the protocol,
not captured from the code.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_sitemapgen.sitemaps.urls import (
    _CLEAN_RE,
    Origin,
    UrlPolicy,
    UrlRejected,
    _normalize_fully,
    base_url_for,
    normalize_loc,
    origin_of,
)

# --- normalize_loc: accepted URLs -------------------------------------------------------

# (input, expected <loc>)
NORMALIZE_CASES = [
    # Already fine: unchanged.
    ("http://example.com/", "http://example.com/"),
    ("https://example.com/a/b?c=d", "https://example.com/a/b?c=d"),
    # P3 / RFC 3986 2.1: characters outside the URL syntax become %HH.
    ("http://example.com/a b", "http://example.com/a%20b"),
    ('http://example.com/say"hi"', "http://example.com/say%22hi%22"),
    ("http://example.com/<tag>", "http://example.com/%3Ctag%3E"),
    # RFC 3986 2: control characters (C0, DEL) are not URL characters either.
    ("http://example.com/a\x01b", "http://example.com/a%01b"),
    ("http://example.com/a\x7fb", "http://example.com/a%7Fb"),
    # P3 / RFC 3987 3.1: non-ASCII in the path as UTF-8 bytes, percent-encoded.
    # é = U+00E9 = C3 A9; 日 = U+65E5 = E6 97 A5; 本 = U+672C = E6 9C AC.
    ("http://example.com/café", "http://example.com/caf%C3%A9"),
    ("http://example.com/日本", "http://example.com/%E6%97%A5%E6%9C%AC"),
    # 😀 = U+1F600 = F0 9F 98 80 (4-byte UTF-8).
    ("http://example.com/\U0001f600", "http://example.com/%F0%9F%98%80"),
    # The query is encoded too (UTF-8 by default).
    ("http://example.com/s?q=café", "http://example.com/s?q=caf%C3%A9"),
    ("http://example.com/s?q=a b", "http://example.com/s?q=a%20b"),
    ("http://example.com/s?q=<b>", "http://example.com/s?q=%3Cb%3E"),
    # Existing escapes are kept: %20 is not re-encoded as %2520.
    ("http://example.com/a%20b", "http://example.com/a%20b"),
    ("http://example.com/caf%C3%A9", "http://example.com/caf%C3%A9"),
    ("http://example.com/s?q=a%26b", "http://example.com/s?q=a%26b"),
    # A "%" that starts no escape is a literal percent sign: RFC 3986 2.4 says encode it.
    ("http://example.com/100%", "http://example.com/100%25"),
    ("http://example.com/a%zzb", "http://example.com/a%25zzb"),
    ("http://example.com/a%2", "http://example.com/a%252"),
    ("http://example.com/s?p=50%", "http://example.com/s?p=50%25"),
    # RFC 3986 6.2.2.1: hex digits of escapes are upper-cased, so one page is one entry.
    ("http://example.com/caf%c3%a9?x=%2f&y=%Aa", "http://example.com/caf%C3%A9?x=%2F&y=%AA"),
    # RFC 3986 6.2.2.1: scheme and host are case-insensitive (lowered); the path is not.
    ("HTTP://EXAMPLE.COM/Path/File", "http://example.com/Path/File"),
    ("HtTpS://Www.Example.Com/", "https://www.example.com/"),
    # IDN host to punycode (RFC 3492 / RFC 5891): bücher -> xn--bcher-kva.
    ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ("http://BÜCHER.example/", "http://xn--bcher-kva.example/"),
    ("http://bücher.example/bücher", "http://xn--bcher-kva.example/b%C3%BCcher"),
    # RFC 3986 6.2.3: the scheme's default port is dropped, any other is kept.
    ("http://example.com:80/", "http://example.com/"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:443/", "http://example.com:443/"),
    ("https://example.com:80/", "https://example.com:80/"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    # RFC 3986 6.2.3: an empty port and leading zeros name the same (default) port.
    ("http://example.com:/", "http://example.com/"),
    ("http://example.com:080/", "http://example.com/"),
    # The fragment never reaches the server: not part of the page's URL.
    ("http://example.com/a#section-2", "http://example.com/a"),
    ("http://example.com/a?b=1#c", "http://example.com/a?b=1"),
    ("http://example.com/#", "http://example.com/"),
    # RFC 3986 6.2.3: an empty path is "/".
    ("http://example.com", "http://example.com/"),
    ("http://example.com?q=1", "http://example.com/?q=1"),
    ("http://example.com:8080", "http://example.com:8080/"),
    # WHATWG URL: tabs and newlines inside a URL are removed, outer whitespace stripped.
    ("http://exam\tple.com/a\nb\rc", "http://example.com/abc"),
    ("  http://example.com/a \n", "http://example.com/a"),
    # IP literals (RFC 3986 3.2.2), IPv6 lowered and kept in brackets.
    ("http://127.0.0.1:80/x", "http://127.0.0.1/x"),
    ("http://[::1]:8080/", "http://[::1]:8080/"),
    ("http://[2001:DB8::1]/", "http://[2001:db8::1]/"),
]


@pytest.mark.parametrize(("url", "expected"), NORMALIZE_CASES, ids=[c[0] for c in NORMALIZE_CASES])
def test_p3_normalize_loc(url: str, expected: str) -> None:
    assert normalize_loc(url) == expected


@pytest.mark.parametrize(("url", "expected"), NORMALIZE_CASES, ids=[c[0] for c in NORMALIZE_CASES])
def test_p3_normalize_loc_is_idempotent(url: str, expected: str) -> None:
    # A loc read back from the store or a sitemap must map to itself (it is the dedup key).
    assert normalize_loc(expected) == expected


@pytest.mark.parametrize(
    ("url", "encoding", "expected"),
    [
        # Browsers encode the query in the page's encoding (é = E9 in Latin-1), but the path
        # always in UTF-8 (RFC 3987 3.1, WHATWG URL "path percent-encode").
        ("http://example.com/café?q=café", "latin-1", "http://example.com/caf%C3%A9?q=caf%E9"),
        ("http://example.com/café?q=café", "utf-8", "http://example.com/caf%C3%A9?q=caf%C3%A9"),
    ],
)
def test_p3_query_uses_the_page_encoding(url: str, encoding: str, expected: str) -> None:
    assert normalize_loc(url, encoding=encoding) == expected


# --- normalize_loc: rejected URLs -------------------------------------------------------

REJECT_CASES = [
    ("", "empty_url"),
    ("   ", "empty_url"),
    ("\t\n", "empty_url"),
    # P12: a sitemap served over HTTP(S) lists URLs of its own scheme only.
    ("ftp://example.com/file.txt", "bad_scheme"),
    ("mailto:someone@example.com", "bad_scheme"),
    ("javascript:alert(1)", "bad_scheme"),
    ("file:///etc/passwd", "bad_scheme"),
    # P3: "absolute URL starting with the scheme".
    ("/relative/path", "bad_scheme"),
    ("example.com/page", "bad_scheme"),
    # Credentials must never be published.
    ("http://user:secret@example.com/", "userinfo"),
    ("http://user@example.com/", "userinfo"),
    ("https://:secret@example.com/", "userinfo"),
    # No usable host.
    ("http:///path", "bad_host"),
    ("http://", "bad_host"),
    ("http://exa mple.com/", "bad_host"),
    ("http://exa<mple.com/", "bad_host"),
    # RFC 3986 3.2.3 / TCP: a port is 0-65535 digits.
    ("http://example.com:65536/", "bad_url"),
    ("http://example.com:99999999/", "bad_url"),
    ("http://example.com:http/", "bad_url"),
    ("http://[::1/", "bad_url"),
    # A lone surrogate has no UTF-8 form, so no percent-encoding (RFC 3987 3.1).
    ("http://example.com/a\ud800b", "bad_url"),
]


@pytest.mark.parametrize(("url", "reason"), REJECT_CASES, ids=[repr(c[0]) for c in REJECT_CASES])
def test_normalize_loc_rejects(url: str, reason: str) -> None:
    with pytest.raises(UrlRejected) as info:
        normalize_loc(url)
    assert info.value.reason == reason
    assert info.value.url == url
    assert isinstance(info.value, ValueError)


def test_highest_port_is_accepted() -> None:
    assert normalize_loc("http://example.com:65535/") == "http://example.com:65535/"


PREFIX = "http://example.com/"  # 19 characters


def test_p3_loc_of_2047_characters_passes() -> None:
    url = PREFIX + "a" * (2047 - len(PREFIX))
    assert len(url) == 2047
    assert normalize_loc(url) == url


def test_p3_loc_of_2048_characters_is_too_long() -> None:
    # P3: "less than 2,048 characters".
    url = PREFIX + "a" * (2048 - len(PREFIX))
    with pytest.raises(UrlRejected) as info:
        normalize_loc(url)
    assert info.value.reason == "url_too_long"


def test_p3_length_counts_the_escaped_loc() -> None:
    # Each é becomes "%C3%A9" (6 characters): 19 + 338 * 6 = 2,047 fits, 339 -> 2,053 does not.
    assert len(normalize_loc(PREFIX + "é" * 338)) == 2047
    with pytest.raises(UrlRejected) as info:
        normalize_loc(PREFIX + "é" * 339)
    assert info.value.reason == "url_too_long"


def test_p3_default_port_does_not_count_towards_the_length() -> None:
    # 2,050 characters as given, 2,047 once ":80" is dropped.
    url = "http://example.com:80/" + "a" * (2047 - len(PREFIX))
    assert normalize_loc(url) == PREFIX + "a" * (2047 - len(PREFIX))


# --- origins ----------------------------------------------------------------------------

ORIGIN_CASES = [
    ("http://example.com/a", Origin("http", "example.com", 80)),
    ("https://example.com/a?b", Origin("https", "example.com", 443)),
    ("http://example.com:8080/", Origin("http", "example.com", 8080)),
    ("https://example.com:80/", Origin("https", "example.com", 80)),
    # The port is always explicit: http://a/ and http://a:80/ are one origin.
    ("http://example.com:80/", Origin("http", "example.com", 80)),
    ("http://127.0.0.1/", Origin("http", "127.0.0.1", 80)),
    ("http://[::1]:8080/x", Origin("http", "[::1]", 8080)),
    ("https://[2001:db8::1]/", Origin("https", "[2001:db8::1]", 443)),
    ("http://xn--bcher-kva.example/", Origin("http", "xn--bcher-kva.example", 80)),
]


@pytest.mark.parametrize(("loc", "expected"), ORIGIN_CASES, ids=[c[0] for c in ORIGIN_CASES])
def test_p12_origin_of(loc: str, expected: Origin) -> None:
    assert origin_of(loc) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM:80/a", Origin("http", "example.com", 80)),
        ("http://bücher.example/", Origin("http", "xn--bcher-kva.example", 80)),
        ("http://[::1]/", Origin("http", "[::1]", 80)),
    ],
)
def test_p12_origin_of_normalized_loc(url: str, expected: Origin) -> None:
    assert origin_of(normalize_loc(url)) == expected


ROOT_CASES = [
    (Origin("http", "example.com", 80), "http://example.com/"),
    (Origin("https", "example.com", 443), "https://example.com/"),
    (Origin("http", "example.com", 8080), "http://example.com:8080/"),
    (Origin("http", "example.com", 443), "http://example.com:443/"),
    (Origin("https", "example.com", 80), "https://example.com:80/"),
    (Origin("http", "[::1]", 8080), "http://[::1]:8080/"),
    (Origin("https", "[2001:db8::1]", 443), "https://[2001:db8::1]/"),
]


@pytest.mark.parametrize(("origin", "expected"), ROOT_CASES, ids=[c[1] for c in ROOT_CASES])
def test_p12_origin_root(origin: Origin, expected: str) -> None:
    assert origin.root == expected
    # The root is itself a loc of that origin.
    assert normalize_loc(origin.root) == expected
    assert origin_of(origin.root) == origin


LONG_LABEL = "a" * 63  # the longest DNS label (RFC 1035 2.3.4)
LONG_HOST = ".".join([LONG_LABEL] * 3) + ".example"  # 199 characters
# Origins whose folder names must all differ: each pair differs in one part only.
DISTINCT_ORIGINS = [
    Origin("http", "example.com", 80),
    Origin("https", "example.com", 443),
    Origin("https", "example.com", 80),
    Origin("http", "example.com", 443),
    Origin("http", "example.com", 8080),
    Origin("http", "example.com", 8),
    Origin("http", "example.com8", 80),
    Origin("http", "example.com", 880),
    Origin("http", "www.example.com", 80),
    Origin("http", "example.co", 80),
    Origin("http", "[::1]", 80),
    Origin("http", "[::1]", 8080),
    Origin("https", "[::1]", 443),
    Origin("http", "[::]", 180),
    Origin("http", "[2001:db8::1]", 80),
    Origin("http", "127.0.0.1", 80),
    Origin("http", "a_b", 80),
    Origin("http", "a", 8),
    Origin("http", "xn--bcher-kva.example", 80),
    Origin("http", LONG_HOST, 80),
    Origin("https", LONG_HOST, 443),
    Origin("http", LONG_HOST, 8080),
    Origin("http", LONG_HOST[:-1] + "f", 80),
    Origin("http", "b" + LONG_HOST[1:], 80),
]
NAME_RE = re.compile(r"^[A-Za-z0-9._\-\[\]~]+$")


def test_origin_names_are_unambiguous() -> None:
    names = [origin.name for origin in DISTINCT_ORIGINS]
    assert len(set(names)) == len(DISTINCT_ORIGINS), names
    # Case-insensitive file systems (macOS, Windows) must not merge two folders either.
    assert len({name.lower() for name in names}) == len(DISTINCT_ORIGINS)


@pytest.mark.parametrize(
    "origin", DISTINCT_ORIGINS, ids=lambda o: f"{o.scheme}-{o.host[:20]}-{o.port}"
)
def test_origin_name_is_a_safe_folder_name(origin: Origin) -> None:
    name = origin.name
    assert NAME_RE.match(name), name
    assert name not in {".", ".."}
    assert len(name) <= 120
    # Deterministic: a resumed crawl writes to the same folder.
    assert Origin(origin.scheme, origin.host, origin.port).name == name


@pytest.mark.parametrize(
    "origin",
    [Origin("http", "example.com", 80), Origin("https", "[::1]", 8443), Origin("http", "a_b", 80)],
    ids=str,
)
def test_short_origin_name_shows_scheme_host_and_port(origin: Origin) -> None:
    # Readable for a human looking at the output folder.
    name = origin.name
    assert name.startswith(origin.scheme)
    assert origin.host.strip("[]").replace(":", "") in name.replace("-", "").replace(":", "")
    assert name.endswith(str(origin.port))


def test_long_hosts_get_short_distinct_names() -> None:
    one = Origin("http", LONG_HOST, 80)
    two = Origin("http", LONG_HOST[:-1] + "f", 80)  # differs in the last character only
    assert len(LONG_HOST) == 199
    assert len(one.name) <= 120
    assert len(two.name) <= 120
    assert one.name != two.name


# --- base_url_for -----------------------------------------------------------------------

BASE_URL_CASES = [
    # No template: the files sit at the origin's root (P12: root placement recommended).
    ("", Origin("https", "www.example.com", 443), "https://www.example.com/"),
    ("", Origin("http", "example.com", 8080), "http://example.com:8080/"),
    # A fixed folder on the same host; the trailing "/" is added once.
    (
        "https://www.example.com/sitemaps",
        Origin("https", "www.example.com", 443),
        "https://www.example.com/sitemaps/",
    ),
    (
        "https://www.example.com/sitemaps/",
        Origin("https", "www.example.com", 443),
        "https://www.example.com/sitemaps/",
    ),
    # P13: one folder per host on another host.
    (
        "https://cdn.example.net/sitemaps/%(host)s",
        Origin("https", "www.example.com", 443),
        "https://cdn.example.net/sitemaps/www.example.com/",
    ),
    (
        "https://cdn.example.net/%(scheme)s/%(host)s/%(port)s/",
        Origin("http", "shop.example.com", 8080),
        "https://cdn.example.net/http/shop.example.com/8080/",
    ),
    (
        "https://cdn.example.net/%(origin)s",
        Origin("http", "example.com", 80),
        "https://cdn.example.net/" + Origin("http", "example.com", 80).name + "/",
    ),
    # "%%" is a literal percent sign, as in any %-format.
    (
        "https://cdn.example.net/100%%25/%(host)s",
        Origin("https", "a.example", 443),
        "https://cdn.example.net/100%25/a.example/",
    ),
]


@pytest.mark.parametrize(
    ("template", "origin", "expected"),
    BASE_URL_CASES,
    ids=[f"{c[0]!r}-{c[1].host}" for c in BASE_URL_CASES],
)
def test_base_url_for(template: str, origin: Origin, expected: str) -> None:
    assert base_url_for(template, origin) == expected


def test_base_url_for_different_hosts_differs() -> None:
    template = "https://cdn.example.net/sitemaps/%(host)s/"
    one = base_url_for(template, Origin("https", "a.example", 443))
    two = base_url_for(template, Origin("https", "b.example", 443))
    assert one != two


# --- UrlPolicy.loc: session ids (G4) and host aliases (G3) ------------------------------

SESSION_POLICY = UrlPolicy(strip_params=frozenset({"sid", "phpsessid", "jsessionid"}))

STRIP_CASES = [
    # G4: a session id in the query is removed; the other parameters keep their order.
    ("http://example.com/p?sid=abc&page=2", "http://example.com/p?page=2"),
    ("http://example.com/p?page=2&sid=abc&sort=asc", "http://example.com/p?page=2&sort=asc"),
    ("http://example.com/p?b=2&a=1&sid=x&c=3", "http://example.com/p?b=2&a=1&c=3"),  # not sorted
    # Names are matched case-insensitively.
    ("http://example.com/p?PHPSESSID=0123abcd&q=shoes", "http://example.com/p?q=shoes"),
    ("http://example.com/p?q=shoes&SiD=1", "http://example.com/p?q=shoes"),
    # The only parameter: the "?" goes too.
    ("http://example.com/p?sid=abc", "http://example.com/p"),
    ("http://example.com/p?sid", "http://example.com/p"),
    ("http://example.com/p?sid=1&SID=2", "http://example.com/p"),
    # Whole names only, and values are never looked at.
    ("http://example.com/p?sidebar=1&sid=2", "http://example.com/p?sidebar=1"),
    ("http://example.com/p?q=sid&xsid=1", "http://example.com/p?q=sid&xsid=1"),
    # ;jsessionid=... path parameters (Java servlets) are removed, in the path only...
    ("http://example.com/cart;jsessionid=0AB12C", "http://example.com/cart"),
    ("http://example.com/cart;JSESSIONID=0AB12C", "http://example.com/cart"),
    ("http://example.com/a;jsessionid=XYZ/b", "http://example.com/a/b"),
    # ... in the path and the query together ...
    ("http://example.com/cart;jsessionid=0AB12C?item=7&sid=9", "http://example.com/cart?item=7"),
    # ... and other path parameters are kept.
    ("http://example.com/cart;jsessionid=0AB12C;v=2", "http://example.com/cart;v=2"),
    ("http://example.com/doc;v=2", "http://example.com/doc;v=2"),
    # Nothing to strip: unchanged.
    ("http://example.com/p?page=2", "http://example.com/p?page=2"),
    ("http://example.com/", "http://example.com/"),
    # The normalisation of P3 still happens first.
    ("HTTP://Example.COM:80/p?sid=1&q=caf\u00e9#top", "http://example.com/p?q=caf%C3%A9"),
]


@pytest.mark.parametrize(("url", "expected"), STRIP_CASES, ids=[c[0] for c in STRIP_CASES])
def test_g4_session_ids_are_stripped(url: str, expected: str) -> None:
    assert SESSION_POLICY.loc(url) == expected


@pytest.mark.parametrize(("url", "expected"), STRIP_CASES, ids=[c[0] for c in STRIP_CASES])
def test_g4_stripped_loc_is_a_fixed_point(url: str, expected: str) -> None:
    # The loc is the dedup key: applying the policy again changes nothing.
    assert SESSION_POLICY.loc(expected) == expected


ALIAS_POLICY = UrlPolicy(host_aliases={"example.com": "www.example.com", "[::1]": "localhost"})

ALIAS_CASES = [
    # G3: one syntax for the site.
    ("http://example.com/a", "http://www.example.com/a"),
    ("https://EXAMPLE.com/a?b=1", "https://www.example.com/a?b=1"),
    # The port is kept, and a default port is dropped before the alias applies.
    ("http://example.com:8080/a", "http://www.example.com:8080/a"),
    ("https://example.com:443/", "https://www.example.com/"),
    # Other hosts, even sub- or super-strings of an alias, are left alone.
    ("http://www.example.com/a", "http://www.example.com/a"),
    ("http://shop.example.com/a", "http://shop.example.com/a"),
    ("http://example.com.evil.example/a", "http://example.com.evil.example/a"),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/"),
    # IPv6 literals: untouched unless aliased; the port survives the brackets.
    ("http://[2001:db8::1]/x", "http://[2001:db8::1]/x"),
    ("http://[2001:db8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
    ("http://[::1]/x", "http://localhost/x"),
    ("http://[::1]:8080/x", "http://localhost:8080/x"),
]


@pytest.mark.parametrize(("url", "expected"), ALIAS_CASES, ids=[c[0] for c in ALIAS_CASES])
def test_g3_host_aliases(url: str, expected: str) -> None:
    assert ALIAS_POLICY.loc(url) == expected


def test_g3_g4_aliases_and_stripping_together() -> None:
    policy = UrlPolicy(
        strip_params=frozenset({"sid"}), host_aliases={"example.com": "www.example.com"}
    )
    assert (
        policy.loc("http://example.com:8080/p;sid=1?sid=2&x=y")
        == "http://www.example.com:8080/p?x=y"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/p?sid=abc&page=2", "http://example.com/p?sid=abc&page=2"),
        ("http://example.com/cart;jsessionid=0AB12C", "http://example.com/cart;jsessionid=0AB12C"),
        ("http://Example.com:80/a b#frag", "http://example.com/a%20b"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
    ],
)
def test_empty_policy_only_normalises(url: str, expected: str) -> None:
    assert UrlPolicy().loc(url) == expected


def test_policy_loc_rejects_what_normalize_loc_rejects() -> None:
    with pytest.raises(UrlRejected) as info:
        SESSION_POLICY.loc("ftp://example.com/?sid=1")
    assert info.value.reason == "bad_scheme"


# --- UrlPolicy.refusal: allow / deny patterns -------------------------------------------

ALLOW_DENY = UrlPolicy(
    allow=(re.compile(r"/blog/"), re.compile(r"/shop/")), deny=(re.compile(r"/private/"),)
)


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("https://www.example.com/blog/post-1", None),
        ("https://www.example.com/shop/item?id=2", None),
        # Deny wins over allow.
        ("https://www.example.com/blog/private/draft", "denied"),
        ("https://www.example.com/private/blog/", "denied"),
        # Allow patterns given and none matches.
        ("https://www.example.com/about", "not_allowed"),
        ("https://www.example.com/", "not_allowed"),
        # re.search, not re.match: anywhere in the loc, query included.
        ("https://www.example.com/x?next=/blog/", None),
    ],
)
def test_refusal_allow_and_deny(loc: str, expected: str | None) -> None:
    assert ALLOW_DENY.refusal(loc) == expected


def test_refusal_without_allow_patterns_allows_all_but_denied() -> None:
    policy = UrlPolicy(deny=(re.compile(r"\.pdf$"),))
    assert policy.refusal("https://www.example.com/about") is None
    assert policy.refusal("https://www.example.com/doc.pdf") == "denied"
    assert UrlPolicy().refusal("https://www.example.com/anything") is None


# --- the shortcut for URLs already in shape gives exactly what the full parse gives -----

SHORTCUT_CASES = [
    "https://www.example.com/a/b?x=1&y=2",
    "https://www.example.com:443/",
    "http://www.example.com:80/a",
    "http://a.b:8080/x",
    "http://a.b:0/x",
    "http://a.b:99999/x",
    "https://x.com/a/../b",
    "https://x.com/%e9",
    "https://x.com/%E9%zz",
    "https://x.com/a?b='c'",
    "https://x.com/a'b",
    "https://x..com/",
    "https://x.com/?",
    "https://x.com/a;jsessionid=1?q=(1)*!$,@:",
    "https://xn--bcher-kva.example/%C3%BC",
    "http://127.0.0.1:8080/p/1",
    "https://x.com/" + "a" * 2040,
]


def _both(url: str) -> tuple[str, str]:
    try:
        fast = normalize_loc(url)
    except UrlRejected as exc:
        fast = f"rejected {exc.reason}"
    try:
        full = _normalize_fully(url, "utf-8")
    except UrlRejected as exc:
        full = f"rejected {exc.reason}"
    return fast, full


@pytest.mark.parametrize("url", SHORTCUT_CASES)
def test_p3_shortcut_equals_the_full_parse(url: str) -> None:
    fast, full = _both(url)
    assert fast == full


_URL_CHARS = st.sampled_from(list("abcxyzABC019-._~!$&'()*+,;=:@/%?#[] é\"<>"))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    host=st.sampled_from(["www.example.com", "x.com", "a..b", "EX.com", "127.0.0.1"]),
    port=st.sampled_from(["", ":80", ":443", ":8080", ":0", ":08080"]),
    tail=st.text(_URL_CHARS, max_size=40),
)
def test_p3_shortcut_equals_the_full_parse_for_arbitrary_urls(
    host: str, port: str, tail: str
) -> None:
    url = f"http://{host}{port}/{tail}"
    if _CLEAN_RE.fullmatch(url):
        fast, full = _both(url)
        assert fast == full, url
