"""SITEMAPGEN_ORIGIN_MAP (issue 41, item 1): the URL policy's map from crawl prefixes to
production prefixes, and the checks of the setting at start-up, one line per problem.

The expected locs are written out by hand from the map's rule (the crawl prefix replaced
by the production one), never computed by the code under test.
"""

from __future__ import annotations

import pickle
from datetime import datetime, timezone
from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.limits import MAX_LOC_LENGTH
from scrapy_sitemapgen.sitemaps.records import RecordReader
from scrapy_sitemapgen.sitemaps.urls import UrlPolicy, UrlRejected
from scrapy_sitemapgen.stats import Tally

STAGING = "http://127.0.0.1:8765/"
PRODUCTION = "https://docs.example.org/3.11/"
NAME = "SITEMAPGEN_ORIGIN_MAP"
NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=timezone.utc)


def config(**values: Any) -> Config:
    return Config.from_settings(Settings(values))


def mapped_policy(**extra: Any) -> UrlPolicy:
    return config(SITEMAPGEN_ORIGIN_MAP={STAGING: PRODUCTION}, **extra).url_policy


# --- the policy ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # Under the crawl prefix: the prefix replaced, the rest kept (P3: still normal).
        (STAGING, PRODUCTION),
        ("http://127.0.0.1:8765/library/os.html", PRODUCTION + "library/os.html"),
        ("http://127.0.0.1:8765/a/b?x=1&y=2", PRODUCTION + "a/b?x=1&y=2"),
        # Normalised before mapping: the fragment goes, escapes are upper-cased.
        ("http://127.0.0.1:8765/caf%c3%a9#top", PRODUCTION + "caf%C3%A9"),
        ("HTTP://127.0.0.1:8765/x", PRODUCTION + "x"),
        # Outside every crawl prefix: unchanged (another port, scheme, host).
        ("http://127.0.0.1:8766/x", "http://127.0.0.1:8766/x"),
        ("https://127.0.0.1:8765/x", "https://127.0.0.1:8765/x"),
        ("https://cdn.example.net/i.png", "https://cdn.example.net/i.png"),
        # Already in production terms: not mapped again.
        (PRODUCTION + "x", PRODUCTION + "x"),
    ],
)
def test_loc_maps_the_crawl_prefix(url: str, expected: str) -> None:
    assert mapped_policy().loc(url) == expected


def test_a_path_prefix_maps_only_what_lies_under_it() -> None:
    """A crawl prefix with a path: the same origin's other paths stay as they are, and
    the prefix's own folder without its slash is outside it (the prefix ends in "/")."""
    policy = config(
        SITEMAPGEN_ORIGIN_MAP={"http://build.local:8000/html/": "https://example.org/"}
    ).url_policy
    assert policy.loc("http://build.local:8000/html/a.html") == "https://example.org/a.html"
    assert policy.loc("http://build.local:8000/html") == "http://build.local:8000/html"
    assert policy.loc("http://build.local:8000/other/") == "http://build.local:8000/other/"


def test_the_other_rules_apply_before_the_map() -> None:
    """Session ids stripped (G4) and host aliases (G3) first: the prefixes are the site's
    own URLs as those rules leave them."""
    policy = config(
        SITEMAPGEN_ORIGIN_MAP={"http://www.staging.test/": PRODUCTION},
        SITEMAPGEN_HOST_ALIASES={"staging.test": "www.staging.test"},
    ).url_policy
    assert policy.loc("http://staging.test/p?sid=42&q=1") == PRODUCTION + "p?q=1"
    assert policy.loc_from_normalized("http://www.staging.test/p;jsessionid=9") == PRODUCTION + "p"


def test_longest_crawl_prefix_first_and_crawl_url_inverts() -> None:
    policy = config(
        SITEMAPGEN_ORIGIN_MAP={
            "http://127.0.0.1:8765/": "https://example.org/",
            "http://127.0.0.1:9000/en/": "https://example.org/english/",
        }
    ).url_policy
    assert policy.origin_map == (
        ("http://127.0.0.1:9000/en/", "https://example.org/english/"),
        ("http://127.0.0.1:8765/", "https://example.org/"),
    )
    assert policy.loc("http://127.0.0.1:9000/en/a") == "https://example.org/english/a"
    # The inverse takes the longest production prefix: /english/ is 9000's, not 8765's.
    assert policy.crawl_url("https://example.org/english/a") == "http://127.0.0.1:9000/en/a"
    assert policy.crawl_url("https://example.org/b") == "http://127.0.0.1:8765/b"
    assert policy.crawl_url("https://elsewhere.example/b") == "https://elsewhere.example/b"


def test_no_map_leaves_every_loc_as_it_is() -> None:
    policy = config().url_policy
    assert policy.origin_map == ()
    assert policy.mapped("http://127.0.0.1:8765/x") == "http://127.0.0.1:8765/x"
    assert policy.crawl_url("https://docs.example.org/3.11/x") == "https://docs.example.org/3.11/x"


def test_a_mapped_loc_over_the_length_limit_is_rejected() -> None:
    """P3: 2,048 characters at most, after the map too (a longer production prefix)."""
    policy = UrlPolicy(origin_map=(("http://a.test/", "https://example.org/" + "p/" * 20),))
    fits = "http://a.test/" + "x" * (MAX_LOC_LENGTH - len("http://a.test/"))
    with pytest.raises(UrlRejected) as info:
        policy.loc(fits)
    assert info.value.reason == "url_too_long"


def test_the_image_policy_shares_the_map() -> None:
    """Images and videos on a mapped origin are mapped with the same map."""
    cfg = config(SITEMAPGEN_ORIGIN_MAP={STAGING: PRODUCTION})
    assert cfg.image_policy.mapped(STAGING + "_images/a.png") == PRODUCTION + "_images/a.png"


# --- the setting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({}, ()),
        ("", ()),
        # Normalised as locs are: host lower-case, the default port dropped, IDN punycode.
        (
            {"HTTP://Build.Local:80/Out/": "https://bücher.example/de/"},
            (("http://build.local/Out/", "https://xn--bcher-kva.example/de/"),),
        ),
        # -s SITEMAPGEN_ORIGIN_MAP='{"http://127.0.0.1:8765/": "https://docs.example.org/3.11/"}'
        (f'{{"{STAGING}": "{PRODUCTION}"}}', ((STAGING, PRODUCTION),)),
        # Two crawl origins of one production site (no overlap between them).
        (
            {"http://localhost:8765/": PRODUCTION, STAGING: PRODUCTION},
            (("http://localhost:8765/", PRODUCTION), (STAGING, PRODUCTION)),
        ),
    ],
)
def test_accepted(value: Any, expected: tuple[tuple[str, str], ...]) -> None:
    assert config(SITEMAPGEN_ORIGIN_MAP=value).url_policy.origin_map == expected


@pytest.mark.parametrize(
    ("value", "lines"),
    [
        # Not a dict at all.
        ("nope", ["'nope' is invalid: it must be a dict of crawl prefixes to production"]),
        (["http://a.test/"], ["['http://a.test/'] is invalid: it must be a dict"]),
        # Each side's own problem, named with the entry.
        (
            {"a.test/": PRODUCTION},
            ["maps 'a.test/' to ", "the crawl prefix 'a.test/' is no absolute URL"],
        ),
        (
            {"ftp://a.test/": PRODUCTION},
            ["the crawl prefix 'ftp://a.test/' is no http(s) URL"],
        ),
        (
            {STAGING: "https://docs.example.org/3.11"},
            ["the production prefix 'https://docs.example.org/3.11' does not end in '/'"],
        ),
        ({STAGING + "?v=1/": PRODUCTION}, ["has a query or fragment"]),
        ({STAGING: PRODUCTION + "#x/"}, ["has a query or fragment"]),
        ({STAGING: 3}, ["the production prefix 3 is no string"]),
        ({"http://user:pw@a.test/": PRODUCTION}, ["is refused (userinfo)"]),
        # Overlaps: a crawl prefix under another, the same prefix twice.
        (
            {STAGING: PRODUCTION, STAGING + "en/": "https://en.example.org/"},
            [f"the crawl prefix '{STAGING}en/' under the crawl prefix '{STAGING}'"],
        ),
        (
            {STAGING: PRODUCTION, "HTTP://127.0.0.1:8765/": PRODUCTION},
            [f"names one crawl prefix twice, as '{STAGING}' and 'HTTP://127.0.0.1:8765/'"],
        ),
        # A production prefix under a crawl prefix would be mapped twice.
        (
            {STAGING: STAGING + "docs/"},
            [f"maps '{STAGING}' to '{STAGING}docs/', which lies under the crawl prefix"],
        ),
    ],
)
def test_refused(value: Any, lines: list[str]) -> None:
    """Each refusal names the setting, the entry, and what is allowed."""
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_ORIGIN_MAP=value)
    message = str(info.value)
    assert message.startswith(NAME), message
    for text in lines:
        assert text in message, message
    assert (
        "an absolute http(s) URL ending in '/', without query or fragment" in message
        or "one crawl prefix only" in message
        or "outside every crawl prefix" in message
    ), message


def test_every_problem_on_a_line_of_its_own() -> None:
    """Issue 41: checked at start, one line per error, all of them at once."""
    with pytest.raises(ValueError) as info:
        config(
            SITEMAPGEN_ORIGIN_MAP={
                "http://a.test": "https://example.org/",  # no trailing slash
                "http://b.test/": "example.org/",  # not absolute
                "http://c.test/": "https://example.org/",
                "http://c.test/x/": "https://example.org/x/",  # under c.test
            }
        )
    lines = str(info.value).splitlines()
    assert len(lines) == 3, lines
    assert all(line.startswith(NAME) for line in lines), lines
    assert "'http://a.test' does not end in '/'" in lines[0]
    assert "'example.org/' is no absolute URL" in lines[1]
    assert "'http://c.test/x/' under the crawl prefix 'http://c.test/'" in lines[2]


def test_the_policy_survives_pickling() -> None:
    """A build's worker processes get the Config pickled: the map must work there too."""
    policy = pickle.loads(pickle.dumps(mapped_policy()))
    assert policy == mapped_policy()
    assert policy.loc(STAGING + "x") == PRODUCTION + "x"
    assert policy.crawl_url(PRODUCTION + "x") == STAGING + "x"


# --- an item's (or a feed line's) media: sitemaps/records.py --------------------------------


def test_a_record_s_loc_and_media_on_a_mapped_origin_are_mapped() -> None:
    """The item pipeline's and the offline build's road: the loc, the images and the
    video URLs under the crawl prefix are mapped; a CDN's are not."""
    tally = Tally()
    record = {
        "loc": STAGING + "item.html",
        "images": [STAGING + "_images/a.png", "https://cdn.example.net/b.png"],
        "videos": [
            {
                "title": "Intro",
                "description": "An introduction",
                "thumbnail_loc": STAGING + "media/intro.jpg",
                "content_loc": STAGING + "media/intro.mp4",
                "player_loc": "https://player.example.net/p?v=1",
            }
        ],
    }
    facts = RecordReader(mapped_policy(), tally).facts(record.get, NOW)
    assert facts is not None
    assert tally.counts == {}
    assert facts.loc == PRODUCTION + "item.html"
    assert facts.images == (PRODUCTION + "_images/a.png", "https://cdn.example.net/b.png")
    (video,) = facts.videos
    assert (video.thumbnail_loc, video.content_loc, video.player_loc) == (
        PRODUCTION + "media/intro.jpg",
        PRODUCTION + "media/intro.mp4",
        "https://player.example.net/p?v=1",
    )


def test_a_record_without_a_map_keeps_its_media() -> None:
    facts = RecordReader(config().url_policy, Tally()).facts(
        {"loc": STAGING + "item.html", "images": [STAGING + "a.png"]}.get, NOW
    )
    assert facts is not None
    assert (facts.loc, facts.images) == (STAGING + "item.html", (STAGING + "a.png",))
