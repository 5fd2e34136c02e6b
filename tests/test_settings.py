"""Config.from_settings: the defaults, and a ValueError naming the setting, the bad value and
what is allowed for every bad value (STYLE rule 2), at start-up rather than at close.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy.settings import Settings

from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.urls import Origin, base_url_for
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin

from .helpers import NS, assert_valid


def config(**values: Any) -> Config:
    return Config.from_settings(Settings(values))


def assert_rejected(name: str, value: Any, *allowed: str) -> str:
    """The error names the setting, shows the value, and says what is allowed."""
    with pytest.raises(ValueError) as info:
        config(**{name: value})
    message = str(info.value)
    assert name in message, message
    assert repr(value) in message or str(value) in message, message
    for pattern in allowed:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    return message


# --- defaults ---------------------------------------------------------------------------


def test_defaults() -> None:
    cfg = config()
    assert cfg.enabled is True
    assert cfg.max_urls == 50_000  # P7
    assert cfg.max_bytes == 52_428_800  # G2: 50 MB
    assert cfg.gzip is True
    assert cfg.base_url == ""  # files at each origin's root (P12)
    assert cfg.output_dir == Path("sitemaps")
    assert cfg.content_types == frozenset({"text/html", "application/xhtml+xml"})
    assert cfg.write_on_shutdown is False
    assert cfg.jobdir is None


def test_config_is_frozen() -> None:
    cfg = config()
    with pytest.raises(AttributeError):
        cfg.max_urls = 1  # type: ignore[misc]


# --- SITEMAPGEN_MAX_URLS (P7) -----------------------------------------------------------


@pytest.mark.parametrize("value", [0, 50_001, -1, 1_000_000, "many", "", "1e3", True, [100], 2.5])
def test_p7_max_urls_out_of_range(value: Any) -> None:
    assert_rejected("SITEMAPGEN_MAX_URLS", value, r"\b1\b", r"50,?000")


@pytest.mark.parametrize(
    ("value", "expected"), [(1, 1), (50_000, 50_000), ("100", 100), (" 7 ", 7), (100.0, 100)]
)
def test_p7_max_urls_accepted(value: Any, expected: int) -> None:
    # Strings come from the command line (-s SITEMAPGEN_MAX_URLS=100) and the environment.
    assert config(SITEMAPGEN_MAX_URLS=value).max_urls == expected


# --- SITEMAPGEN_MAX_BYTES (P7, G2) ------------------------------------------------------


@pytest.mark.parametrize("value", [4_095, 0, -1, 52_428_801, 10**9, "50MB"])
def test_g2_max_bytes_out_of_range(value: Any) -> None:
    assert_rejected("SITEMAPGEN_MAX_BYTES", value, r"4,?096", r"52,?428,?800")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(4_096, 4_096), (10_485_760, 10_485_760), (52_428_800, 52_428_800), ("10485760", 10_485_760)],
    ids=["minimum", "P7-2008-10MB", "G2-50MB", "string"],
)
def test_g2_max_bytes_accepted(value: Any, expected: int) -> None:
    assert config(SITEMAPGEN_MAX_BYTES=value).max_bytes == expected


# --- booleans ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["SITEMAPGEN_ENABLED", "SITEMAPGEN_GZIP", "SITEMAPGEN_WRITE_ON_SHUTDOWN"]
)
@pytest.mark.parametrize("value", ["maybe", "yes please", "on"])
def test_bad_booleans(name: str, value: str) -> None:
    assert_rejected(name, value, "True", "False")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (False, False),
        ("False", False),
        ("false", False),
        ("0", False),
        (0, False),
        (True, True),
        ("1", True),
    ],
)
def test_booleans_accepted(value: Any, expected: bool) -> None:
    cfg = config(
        SITEMAPGEN_ENABLED=value, SITEMAPGEN_GZIP=value, SITEMAPGEN_WRITE_ON_SHUTDOWN=value
    )
    assert (cfg.enabled, cfg.gzip, cfg.write_on_shutdown) == (expected, expected, expected)


# --- SITEMAPGEN_URI ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["s3://bucket/x", "gs://bucket/sitemaps/%(host)s", "ftp://example.com/sitemaps"]
)
def test_uri_with_a_feed_storage_scheme_is_remote(value: str) -> None:
    # What FEEDS accepts, SITEMAPGEN_URI accepts: delivered through Scrapy's feed storages.
    loaded = config(SITEMAPGEN_URI=value)
    assert loaded.uri == value
    assert loaded.local is False
    assert loaded.output_dir is None


@pytest.mark.parametrize("value", ["https://example.com/sitemaps", "sftp://host/x"])
def test_uri_with_unsupported_scheme(value: str) -> None:
    # No feed storage for the scheme: refused at start-up, not after the crawl.
    assert_rejected("SITEMAPGEN_URI", value, "FEED_STORAGES", value.split(":")[0])


def test_uri_with_an_unknown_placeholder() -> None:
    assert_rejected(
        "SITEMAPGEN_URI", "out/%(hostname)s", re.escape("%(host)s"), re.escape("%(origin)s")
    )


def test_local_uri_keeps_state_beside_the_output(tmp_path: Path) -> None:
    loaded = config(SITEMAPGEN_URI=str(tmp_path / "out"))
    assert loaded.local is True
    assert loaded.state_path == tmp_path / "out" / ".sitemapgen-state.sqlite3"


@pytest.mark.parametrize("value", ["", "   "])
def test_uri_empty(value: str) -> None:
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_URI=value)
    assert "SITEMAPGEN_URI" in str(info.value)
    assert repr(value) in str(info.value)
    assert "folder" in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # RFC 8089: file:///path, percent-decoded.
        ("file:///tmp/out/sitemaps", Path("/tmp/out/sitemaps")),
        ("file:///tmp/my%20sitemaps", Path("/tmp/my sitemaps")),
        ("file:///srv/caf%C3%A9/", Path("/srv/café")),
        # Plain paths, relative or absolute.
        ("out/sitemaps", Path("out/sitemaps")),
        ("/var/www/sitemaps", Path("/var/www/sitemaps")),
    ],
)
def test_uri_maps_to_a_folder(value: str, expected: Path) -> None:
    assert config(SITEMAPGEN_URI=value).output_dir == expected


def test_uri_as_path_object(tmp_path: Path) -> None:
    assert config(SITEMAPGEN_URI=tmp_path / "out").output_dir == tmp_path / "out"


def test_uri_as_file_uri_of_tmp_path(tmp_path: Path) -> None:
    folder = tmp_path / "with space" / "sitemaps"
    assert config(SITEMAPGEN_URI=folder.as_uri()).output_dir == folder


# --- SITEMAPGEN_BASE_URL (P13) ----------------------------------------------------------

PLACEHOLDERS = r"%\(host\)s"


@pytest.mark.parametrize(
    "value",
    [
        "https://cdn.example.net/%(nope)s/",  # unknown placeholder
        "https://cdn.example.net/%(hostname)s/",
        "/sitemaps/",  # relative: P3/P8 need absolute URLs in the index
        "sitemaps.example.net/%(host)s",
        "ftp://files.example.net/sitemaps/",  # P12: served over http(s)
        "https://cdn.example.net/100%/",  # a lone % in a %-template
        "https://user:pw@cdn.example.net/",  # credentials would be published
    ],
)
def test_p13_bad_base_url(value: str) -> None:
    assert_rejected("SITEMAPGEN_BASE_URL", value, "absolute", "http", PLACEHOLDERS)


@pytest.mark.parametrize(
    "value",
    [
        "https://cdn.example.net/sitemaps/%(host)s/",
        "https://cdn.example.net/%(scheme)s-%(host)s-%(port)s",
        "https://cdn.example.net/%(origin)s/",
        "https://www.example.com/sitemaps/",
        "http://127.0.0.1:8080/s/",
        "https://cdn.example.net/100%%/%(host)s/",
    ],
)
def test_p13_good_base_url(value: str) -> None:
    assert config(SITEMAPGEN_BASE_URL=value).base_url == value


@pytest.mark.parametrize(
    "value",
    [
        "https://cdn.example.net/sitemaps/%(host)s/",
        "https://cdn.example.net:443/sitemaps/",
        # Accepted or refused, either is fine; what is accepted must give a valid index:
        # P3 (and P8 for the index) wants every <loc> URL-escaped, so a raw space, a raw
        # non-ASCII character or a '"' must not reach it, and the scheme must be the
        # http/https the schema's pattern spells.
        "https://cdn.example.net/my sitemaps/",
        "https://cdn.example.net/café/%(host)s/",
        "https://bücher.example/sitemaps/",
        'https://cdn.example.net/say"hi"/',
        "HTTPS://CDN.EXAMPLE.NET/sitemaps/",
    ],
)
def test_p3_p8_accepted_base_url_gives_a_valid_index(value: str, tmp_path: Path) -> None:
    try:
        cfg = config(SITEMAPGEN_BASE_URL=value)
    except ValueError as exc:  # refusing at start-up is fine (STYLE rule 2)
        assert "SITEMAPGEN_BASE_URL" in str(exc)
        return
    origin = Origin("https", "www.example.com", 443)
    base = base_url_for(cfg.base_url, origin)
    write_origin(
        [UrlFacts(origin.root)],
        scope=origin.root,
        base_url=base,
        lastmod="2024-05-06",
        open_sink=lambda name: (tmp_path / name).open("wb"),
        options=WriterOptions(gzip=False),
    )
    index = assert_valid(tmp_path / "sitemap.xml")
    locs = [el.text for el in etree.fromstring(index).iter(f"{NS}loc")]
    assert len(locs) == 1
    assert locs[0].endswith("/sitemap-1.xml")


def test_base_url_surrounding_whitespace_is_ignored() -> None:
    assert (
        config(SITEMAPGEN_BASE_URL="  https://cdn.example.net/s/\n").base_url
        == "https://cdn.example.net/s/"
    )


def test_base_url_must_be_a_string() -> None:
    assert_rejected("SITEMAPGEN_BASE_URL", 42, "string")


# --- SITEMAPGEN_CONTENT_TYPES -----------------------------------------------------------


@pytest.mark.parametrize("value", [[], "", ["html"], ["text/html", "nonsense"]], ids=repr)
def test_bad_content_types(value: Any) -> None:
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_CONTENT_TYPES=value)
    message = str(info.value)
    assert "SITEMAPGEN_CONTENT_TYPES" in message
    assert "non-empty" in message
    assert "text/html" in message  # an example of what is allowed


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["text/html"], {"text/html"}),
        (["Text/HTML", " application/xhtml+xml "], {"text/html", "application/xhtml+xml"}),
        ("text/html,text/plain", {"text/html", "text/plain"}),  # -s on the command line
    ],
)
def test_content_types_accepted(value: Any, expected: set[str]) -> None:
    # Media types are case-insensitive (RFC 9110 8.3.1).
    assert config(SITEMAPGEN_CONTENT_TYPES=value).content_types == frozenset(expected)


# --- JOBDIR -----------------------------------------------------------------------------


def test_jobdir_is_read(tmp_path: Path) -> None:
    assert config(JOBDIR=str(tmp_path / "crawls" / "one")).jobdir == tmp_path / "crawls" / "one"


@pytest.mark.parametrize("value", [None, ""])
def test_no_jobdir(value: Any) -> None:
    assert config(JOBDIR=value).jobdir is None


# --- the page-fact and URL-policy settings: defaults ------------------------------------


def rejected_message(name: str, value: Any, shown: str, *allowed: str) -> str:
    """Like ``assert_rejected`` for list and dict settings, where the message shows the bad
    element (``shown``) rather than the whole value."""
    with pytest.raises(ValueError) as info:
        config(**{name: value})
    message = str(info.value)
    assert name in message, message
    assert shown in message, f"{shown!r} not in {message!r}"
    for pattern in allowed:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    return message


def test_page_fact_defaults() -> None:
    cfg = config()
    assert cfg.respect_noindex is True
    assert cfg.respect_canonical is True
    assert cfg.respect_meta_refresh is True
    assert cfg.robots_user_agents == frozenset({"googlebot", "bingbot"})
    assert (cfg.images, cfg.videos, cfg.alternates) == (True, True, True)
    assert cfg.image_policy.allow == () and cfg.image_policy.deny == ()
    # Google News: articles of the last two days.
    assert cfg.news_max_age == 2 * 24 * 60 * 60 == 172_800
    # P4: lastmod the page's author wrote first, then the server's, then a change the
    # crawls observed (issue 21); never invented from the crawl time.
    assert cfg.lastmod_sources == ("page", "header", "observed")
    assert "crawl_time" not in cfg.lastmod_sources
    assert cfg.lastmod_follows_content is True
    assert cfg.dedupe_content is True
    assert cfg.fingerprints is True
    assert cfg.changefreq_rules == ()
    assert cfg.priority_rules == ()


def test_g3_g4_url_policy_defaults() -> None:
    policy = config().url_policy
    # G4: the usual session id names of PHP, Java, ASP, ColdFusion, osCommerce, Zen Cart.
    assert policy.strip_params == frozenset(
        {
            "sessionid",
            "session_id",
            "sessid",
            "sid",
            "phpsessid",
            "jsessionid",
            "aspsessionid",
            "cfid",
            "cftoken",
            "oscsid",
            "zenid",
        }
    )
    assert dict(policy.host_aliases) == {}
    assert policy.allow == () and policy.deny == ()
    # G4 with the defaults, end to end through the policy.
    assert policy.loc("https://www.example.com/p;jsessionid=1A?PHPSESSID=2&page=3") == (
        "https://www.example.com/p?page=3"
    )


@pytest.mark.parametrize(
    ("name", "attribute"),
    [
        ("SITEMAPGEN_RESPECT_NOINDEX", "respect_noindex"),
        ("SITEMAPGEN_RESPECT_CANONICAL", "respect_canonical"),
        ("SITEMAPGEN_RESPECT_META_REFRESH", "respect_meta_refresh"),
        ("SITEMAPGEN_IMAGES", "images"),
        ("SITEMAPGEN_VIDEOS", "videos"),
        ("SITEMAPGEN_ALTERNATES", "alternates"),
    ],
)
def test_page_fact_switches(name: str, attribute: str) -> None:
    assert getattr(config(**{name: "False"}), attribute) is False
    assert getattr(config(**{name: 0}), attribute) is False
    assert_rejected(name, "sometimes", "True", "False")


# --- SITEMAPGEN_CHANGEFREQ / SITEMAPGEN_PRIORITY (P5, P6) -------------------------------


def rules(cfg_rules: tuple[tuple[re.Pattern[str], str], ...]) -> list[tuple[str, str]]:
    return [(pattern.pattern, value) for pattern, value in cfg_rules]


def test_p5_p6_rules_accepted_in_order() -> None:
    cfg = config(
        SITEMAPGEN_CHANGEFREQ=[
            (r"^https://www\.example\.com/news/", "Hourly"),
            ("/archive/", "never"),
        ],
        SITEMAPGEN_PRIORITY=[["/blog/", 0.8], ("/", "0.3"), (r"\.html$", 1)],
    )
    assert rules(cfg.changefreq_rules) == [
        (r"^https://www\.example\.com/news/", "hourly"),
        ("/archive/", "never"),
    ]
    assert rules(cfg.priority_rules) == [("/blog/", "0.8"), ("/", "0.3"), (r"\.html$", "1.0")]


def test_p6_rules_from_the_command_line_as_json() -> None:
    # scrapy crawl x -s SITEMAPGEN_PRIORITY='[["/blog/", 0.8]]'
    cfg = config(
        SITEMAPGEN_PRIORITY='[["/blog/", 0.8]]',
        SITEMAPGEN_CHANGEFREQ='[["/news/", "daily"], ["/", "monthly"]]',
    )
    assert rules(cfg.priority_rules) == [("/blog/", "0.8")]
    assert rules(cfg.changefreq_rules) == [("/news/", "daily"), ("/", "monthly")]


@pytest.mark.parametrize("name", ["SITEMAPGEN_CHANGEFREQ", "SITEMAPGEN_PRIORITY"])
@pytest.mark.parametrize(
    ("rule", "shown"),
    [
        ("/blog/", "'/blog/'"),  # a bare pattern
        (("/blog/",), "('/blog/',)"),
        (("/blog/", "daily", "extra"), "('/blog/', 'daily', 'extra')"),
        ((5, "daily"), "(5, 'daily')"),  # the pattern must be a string
    ],
    ids=["bare", "one", "three", "int-pattern"],
)
def test_rules_must_be_pairs(name: str, rule: Any, shown: str) -> None:
    rejected_message(name, [rule], shown, "pair", "regular expression")


@pytest.mark.parametrize("name", ["SITEMAPGEN_CHANGEFREQ", "SITEMAPGEN_PRIORITY"])
def test_rules_must_be_a_list(name: str) -> None:
    rejected_message(name, {"/blog/": "daily"}, "{'/blog/': 'daily'}", "list|pair")


@pytest.mark.parametrize(
    ("name", "value"), [("SITEMAPGEN_CHANGEFREQ", "daily"), ("SITEMAPGEN_PRIORITY", 0.5)]
)
@pytest.mark.parametrize("pattern", ["(", "[a-", "*.html", "a{2,1}"])
def test_rules_bad_regex(name: str, value: Any, pattern: str) -> None:
    rejected_message(name, [(pattern, value)], repr(pattern), "regular expression")


@pytest.mark.parametrize("value", ["sometimes", "biweekly", "", 7, None])
def test_p5_changefreq_rule_bad_value(value: Any) -> None:
    rejected_message(
        "SITEMAPGEN_CHANGEFREQ",
        [("/blog/", value)],
        repr(value),
        "always",
        "hourly",
        "daily",
        "weekly",
        "monthly",
        "yearly",
        "never",
    )


@pytest.mark.parametrize("value", [1.5, -0.1, "high", True, None, "nan"])
def test_p6_priority_rule_bad_value(value: Any) -> None:
    rejected_message("SITEMAPGEN_PRIORITY", [("/blog/", value)], repr(value), r"0\.0", r"1\.0")


# --- SITEMAPGEN_ALLOW / DENY / IMAGE_ALLOW / IMAGE_DENY ---------------------------------

PATTERN_SETTINGS = [
    "SITEMAPGEN_ALLOW",
    "SITEMAPGEN_DENY",
    "SITEMAPGEN_IMAGE_ALLOW",
    "SITEMAPGEN_IMAGE_DENY",
]


@pytest.mark.parametrize("name", PATTERN_SETTINGS)
@pytest.mark.parametrize("pattern", ["(", "[unclosed", "*.jpg", "(?P<x>a)(?P<x>b)"])
def test_bad_pattern(name: str, pattern: str) -> None:
    rejected_message(name, ["/ok/", pattern], repr(pattern), "regular expression")


@pytest.mark.parametrize("name", PATTERN_SETTINGS)
@pytest.mark.parametrize("value", [[5], [""], [None]], ids=repr)
def test_pattern_must_be_a_string(name: str, value: Any) -> None:
    rejected_message(name, value, repr(value), "regular expression")


def test_patterns_go_to_the_right_policy() -> None:
    cfg = config(
        SITEMAPGEN_ALLOW=["/blog/"],
        SITEMAPGEN_DENY=[r"\?print=1"],
        SITEMAPGEN_IMAGE_ALLOW='["^https://cdn\\\\.example\\\\.net/"]',  # JSON from -s
        SITEMAPGEN_IMAGE_DENY='["/thumbs/", "/icons/"]',  # several patterns: a JSON list
    )
    assert [p.pattern for p in cfg.url_policy.allow] == ["/blog/"]
    assert [p.pattern for p in cfg.url_policy.deny] == [r"\?print=1"]
    assert [p.pattern for p in cfg.image_policy.allow] == [r"^https://cdn\.example\.net/"]
    assert [p.pattern for p in cfg.image_policy.deny] == ["/thumbs/", "/icons/"]
    assert cfg.url_policy.refusal("https://www.example.com/blog/a?print=1") == "denied"
    assert cfg.image_policy.refusal("https://cdn.example.net/icons/x.png") == "denied"
    assert cfg.image_policy.refusal("https://img.example.org/x.png") == "not_allowed"


# --- SITEMAPGEN_HOST_ALIASES (G3) -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"example.com": "www.example.com"}, {"example.com": "www.example.com"}),
        ({"Example.COM": "WWW.Example.com"}, {"example.com": "www.example.com"}),
        # IDN hosts in punycode (RFC 3492), as in every loc: bücher -> xn--bcher-kva.
        (
            {"bücher.example": "www.bücher.example"},
            {"xn--bcher-kva.example": "www.xn--bcher-kva.example"},
        ),
        # -s SITEMAPGEN_HOST_ALIASES='{"example.com": "www.example.com"}'
        ('{"example.com": "www.example.com"}', {"example.com": "www.example.com"}),
    ],
)
def test_g3_host_aliases_accepted(value: Any, expected: dict[str, str]) -> None:
    assert dict(config(SITEMAPGEN_HOST_ALIASES=value).url_policy.host_aliases) == expected


def test_g3_idn_alias_applies_to_locs() -> None:
    policy = config(SITEMAPGEN_HOST_ALIASES={"bücher.example": "www.bücher.example"}).url_policy
    assert policy.loc("http://BÜCHER.example/a") == "http://www.xn--bcher-kva.example/a"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"example.com": "www.example.com:8080"}, "'www.example.com:8080'"),  # a port
        ({"example.com:8080": "www.example.com"}, "'example.com:8080'"),
        # Even the default port: the alias would otherwise apply to every port and scheme.
        ({"example.com:80": "www.example.com"}, "'example.com:80'"),
        ({"exa mple.com": "www.example.com"}, "'exa mple.com'"),  # a space
        ({"example.com": "www.exa mple.com"}, "'www.exa mple.com'"),
        ({"example.com": ""}, "''"),
        ({"example.com": 5}, "5"),
        # A URL or a path is no host name: refused rather than read as host "https".
        ({"https://example.com": "www.example.com"}, "'https://example.com'"),
        ({"example.com": "https://www.example.com/"}, "'https://www.example.com/'"),
        ({"example.com/shop": "www.example.com"}, "'example.com/shop'"),
    ],
    ids=[
        "port-target",
        "port-alias",
        "default-port-alias",
        "space-alias",
        "space-target",
        "empty",
        "int",
        "url-alias",
        "url-target",
        "path",
    ],
)
def test_g3_bad_host_aliases(value: dict[str, Any], shown: str) -> None:
    rejected_message("SITEMAPGEN_HOST_ALIASES", value, shown, "host name", "port")


# --- SITEMAPGEN_LASTMOD_SOURCES (P4) ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["page"], ("page",)),
        (["page", "header"], ("page", "header")),
        # crawl_time only when named, and in the position given.
        (["header", "crawl_time"], ("header", "crawl_time")),
        (["crawl_time"], ("crawl_time",)),
        ("page,header", ("page", "header")),  # -s on the command line
        ('["header", "page", "crawl_time"]', ("header", "page", "crawl_time")),
        (["Header"], ("header",)),
        (["observed"], ("observed",)),
        (["header", "observed"], ("header", "observed")),
    ],
)
def test_p4_lastmod_sources_accepted(value: Any, expected: tuple[str, ...]) -> None:
    assert config(SITEMAPGEN_LASTMOD_SOURCES=value).lastmod_sources == expected


@pytest.mark.parametrize(
    "value",
    [
        ["header", "etag"],  # unknown
        ["date"],  # the Date header is no modification time
        ["header", "header"],  # repeated
        ["page", "header", "page"],
    ],
    ids=repr,
)
def test_p4_bad_lastmod_sources(value: list[str]) -> None:
    assert_rejected(
        "SITEMAPGEN_LASTMOD_SOURCES", value, "header", "page", "crawl_time", "observed", "repeat"
    )


@pytest.mark.parametrize(
    "value", [["observed", "header"], ["page", "observed", "crawl_time"]], ids=repr
)
def test_observed_must_come_last(value: list[str]) -> None:
    """``observed`` is settled at publish, after the stated sources: it can only be last."""
    assert_rejected("SITEMAPGEN_LASTMOD_SOURCES", value, "'observed' must come last")


@pytest.mark.parametrize(
    "name", ["SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT", "SITEMAPGEN_DEDUPE_CONTENT"]
)
def test_content_switches(name: str) -> None:
    field = {"SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": "lastmod_follows_content"}.get(
        name, "dedupe_content"
    )
    assert getattr(config(**{name: False}), field) is False
    assert getattr(config(**{name: "0"}), field) is False  # -s on the command line
    assert getattr(config(**{name: True}), field) is True
    assert_rejected(name, "maybe", "True or False")


def test_no_fingerprints_unless_a_rule_reads_them() -> None:
    """The crawl computes no fingerprint when no setting reads one."""
    off = config(
        SITEMAPGEN_LASTMOD_SOURCES=["header"],
        SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT=False,
        SITEMAPGEN_DEDUPE_CONTENT=False,
    )
    assert off.fingerprints is False
    assert config(
        SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT=False, SITEMAPGEN_DEDUPE_CONTENT=False
    ).fingerprints


# --- SITEMAPGEN_NEWS_MAX_AGE ------------------------------------------------------------


@pytest.mark.parametrize("value", [59, 0, -1, 31_536_001, "two days", "", True, 3600.5])
def test_news_max_age_out_of_range(value: Any) -> None:
    # From one minute to one year (365 * 86,400 = 31,536,000 seconds).
    assert_rejected("SITEMAPGEN_NEWS_MAX_AGE", value, r"\b60\b", r"31,?536,?000")


@pytest.mark.parametrize(
    ("value", "expected"), [(60, 60), (172_800, 172_800), (31_536_000, 31_536_000), ("3600", 3600)]
)
def test_news_max_age_accepted(value: Any, expected: int) -> None:
    assert config(SITEMAPGEN_NEWS_MAX_AGE=value).news_max_age == expected


# --- SITEMAPGEN_ROBOTS_USER_AGENTS ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["Googlebot", "BingBot", "Googlebot-News"], {"googlebot", "bingbot", "googlebot-news"}),
        ("Googlebot, YandexBot", {"googlebot", "yandexbot"}),
        ([], set()),
    ],
)
def test_robots_user_agents_lower_cased(value: Any, expected: set[str]) -> None:
    # Robots meta names and X-Robots-Tag user agents are case-insensitive.
    assert config(SITEMAPGEN_ROBOTS_USER_AGENTS=value).robots_user_agents == frozenset(expected)


@pytest.mark.parametrize("value", [[""], [5], {"googlebot": 1}], ids=repr)
def test_bad_robots_user_agents(value: Any) -> None:
    rejected_message("SITEMAPGEN_ROBOTS_USER_AGENTS", value, repr(value), "list")


# --- SITEMAPGEN_STRIP_PARAMS (G4) -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["SID", "JSESSIONID", "utm_source"], {"sid", "jsessionid", "utm_source"}),
        ("sid, ref", {"sid", "ref"}),
        ([], set()),
    ],
)
def test_g4_strip_params(value: Any, expected: set[str]) -> None:
    assert config(SITEMAPGEN_STRIP_PARAMS=value).url_policy.strip_params == frozenset(expected)


def test_g4_empty_strip_params_keeps_every_parameter() -> None:
    policy = config(SITEMAPGEN_STRIP_PARAMS=[]).url_policy
    assert (
        policy.loc("https://www.example.com/p?sid=1&PHPSESSID=2")
        == "https://www.example.com/p?sid=1&PHPSESSID=2"
    )


def test_g4_strip_params_given_in_upper_case_still_strip() -> None:
    policy = config(SITEMAPGEN_STRIP_PARAMS=["SessionID"]).url_policy
    assert (
        policy.loc("https://www.example.com/p?sessionid=1&SESSIONID=2&q=3")
        == "https://www.example.com/p?q=3"
    )


@pytest.mark.parametrize("value", [[""], [5], {"sid": True}], ids=repr)
def test_g4_bad_strip_params(value: Any) -> None:
    rejected_message("SITEMAPGEN_STRIP_PARAMS", value, repr(value), "list")


def test_a_pattern_from_the_command_line_keeps_its_commas() -> None:
    """-s SITEMAPGEN_DENY='a{1,2}' is one regular expression, not two halves."""
    assert [p.pattern for p in config(SITEMAPGEN_DENY="/x{1,2}/").url_policy.deny] == ["/x{1,2}/"]
    assert [p.pattern for p in config(SITEMAPGEN_DENY='["a,b", "c"]').url_policy.deny] == [
        "a,b",
        "c",
    ]


# --- SITEMAPGEN_GZIP_LEVEL ----------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 10, -1, "fast", 6.5, True])
def test_gzip_level_out_of_range_is_refused(value: object) -> None:
    assert_rejected("SITEMAPGEN_GZIP_LEVEL", value, r"\b1\b", r"\b9\b")


@pytest.mark.parametrize(("value", "expected"), [(None, 5), (1, 1), ("6", 6), ("9", 9)])
def test_gzip_level(value: object, expected: int) -> None:
    settings = {} if value is None else {"SITEMAPGEN_GZIP_LEVEL": value}
    assert config(**settings).gzip_level == expected


# --- SITEMAPGEN_LOG_ORIGINS ---------------------------------------------------------------


@pytest.mark.parametrize("value", [-1, "many", 2.5, True, [3]])
def test_log_origins_must_be_a_count(value: object) -> None:
    assert_rejected("SITEMAPGEN_LOG_ORIGINS", value, r"\b0\b", "integer")


@pytest.mark.parametrize(("value", "expected"), [(None, 20), (0, 0), ("5", 5), (100_000, 100_000)])
def test_log_origins(value: object, expected: int) -> None:
    settings = {} if value is None else {"SITEMAPGEN_LOG_ORIGINS": value}
    assert config(**settings).log_origins == expected
