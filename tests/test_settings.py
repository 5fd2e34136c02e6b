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

from scrapy_sitemapgen.facts import UrlFacts
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.urls import Origin, base_url_for
from scrapy_sitemapgen.writer import WriterOptions, write_origin

from .xmlcheck import NS, assert_valid


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


@pytest.mark.parametrize("name", ["SITEMAPGEN_ENABLED", "SITEMAPGEN_GZIP", "SITEMAPGEN_WRITE_ON_SHUTDOWN"])
@pytest.mark.parametrize("value", ["maybe", "yes please", "on"])
def test_bad_booleans(name: str, value: str) -> None:
    assert_rejected(name, value, "True", "False")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(False, False), ("False", False), ("false", False), ("0", False), (0, False), (True, True), ("1", True)],
)
def test_booleans_accepted(value: Any, expected: bool) -> None:
    cfg = config(SITEMAPGEN_ENABLED=value, SITEMAPGEN_GZIP=value, SITEMAPGEN_WRITE_ON_SHUTDOWN=value)
    assert (cfg.enabled, cfg.gzip, cfg.write_on_shutdown) == (expected, expected, expected)


# --- SITEMAPGEN_URI ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["s3://bucket/x", "gs://bucket/sitemaps", "ftp://example.com/sitemaps", "https://example.com/sitemaps"],
)
def test_uri_with_unsupported_scheme(value: str) -> None:
    # Remote storages are not supported yet: refused at start-up, not after the crawl.
    assert_rejected("SITEMAPGEN_URI", value, "file://", "folder")


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
    assert config(SITEMAPGEN_BASE_URL="  https://cdn.example.net/s/\n").base_url == "https://cdn.example.net/s/"


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
