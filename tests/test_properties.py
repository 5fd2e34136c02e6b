"""Hypothesis properties of the pure layer: ``<loc>`` normalisation (P3, P12), the writer's
output for arbitrary entries (P1, P2, P7, P14, G2, G7), the split at the limits (P7, G2),
lastmod parsing (P4) and origin folder names.

The expectations are written from the protocol (shared/spec/PROTOCOL.md) and from XML 1.0,
never read from the code under test: the frame and entry bytes are spelled out by hand, the
characters XML forbids come from the XML 1.0 ``Char`` production, and read-back goes through
lxml and Scrapy's own sitemap parser. Every run is derandomized and keeps no example
database, so CI sees the same examples each time.
"""

from __future__ import annotations

import re
import string
from datetime import date, datetime, timedelta, timezone
from urllib.parse import urlsplit

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lxml import etree
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.sitemaps.facts import (
    FactRejected,
    UrlFacts,
    Video,
    lastmod_from_http,
    make_news,
    make_video,
    parse_lastmod,
    parse_priority,
)
from scrapy_sitemapgen.sitemaps.limits import CHANGEFREQ_VALUES
from scrapy_sitemapgen.sitemaps.urls import Origin, UrlRejected, normalize_loc, origin_of
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin

from .helpers import (
    NEWS_NS,
    NS,
    PROPERTY,
    URLSET_FRAME,
    URLSET_HEAD,
    URLSET_TAIL,
    VIDEO_NS,
    Issues,
    MemorySinks,
    Skips,
    assert_valid,
    piece,
    url_text,
)

SITE = "https://www.example.com/"
SITE_ORIGIN = Origin("https", "www.example.com", 443)
CDN = "https://cdn.example.net/"
LASTMOD = "2024-05-06T07:08:09+00:00"

# --- shared strategies (NASTY, piece and url_text are in helpers.py) ---------------------

# Characters XML 1.0 forbids, and the whitespace around them: text made only of these is
# blank once written.
UNWRITABLE = [
    "\x00",
    "\x01",
    "\x08",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x1f",
    "\ufffe",
    "\uffff",
    " ",
    "\t",
    "\n",
    "\r",
]
free_text = st.one_of(
    st.text(),
    st.lists(st.sampled_from(UNWRITABLE), min_size=1, max_size=6).map("".join),
    st.lists(piece, min_size=1, max_size=15).map("".join),
    st.tuples(piece, st.integers(20, 400)).map(lambda t: t[0] * t[1]),
)


def xml_char(char: str) -> bool:
    """XML 1.0 section 2.2, production [2] Char."""
    code = ord(char)
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def xml_clean(text: str) -> str:
    """``text`` as an XML file can carry it: the characters XML 1.0 forbids removed."""
    return "".join(char for char in text if xml_char(char))


def entity_escape(text: str) -> str:
    """P1: the five entities, ``&`` first."""
    for raw, entity in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&apos;"),
    ):
        text = text.replace(raw, entity)
    return text


def accepted(url: str) -> str | None:
    try:
        return normalize_loc(url)
    except UrlRejected:
        return None


@st.composite
def site_locs(draw: st.DrawFn, base: str = SITE) -> str:
    """A ``<loc>`` of ``base``'s origin that normalize_loc produced from arbitrary text."""
    path, query = draw(url_text), draw(url_text)
    # Past P3's 2,048 characters, keep the start: a list of entries needs every loc.
    loc = accepted(f"{base}{path}?{query}") or accepted(f"{base}{path[:100]}?{query[:100]}")
    assume(loc is not None)
    assert loc is not None
    return loc


# --- 1. normalize_loc (P3, P12) ----------------------------------------------------------

PRINTABLE_LOC_CHARS = frozenset(chr(code) for code in range(0x21, 0x7F)) - set('"<>')


@settings(PROPERTY, max_examples=400)
@given(path=url_text, query=url_text)
def test_p3_normalize_loc_of_arbitrary_path_and_query(path: str, query: str) -> None:
    try:
        loc = normalize_loc(f"{SITE}{path}?{query}")
    except UrlRejected:
        return
    # P3: URL-escaped per RFC 3986, so printable ASCII with no space, quote or angle bracket.
    bad = sorted(set(loc) - PRINTABLE_LOC_CHARS)
    assert not bad, f"characters {bad!r} in {loc!r}"
    assert len(loc) < 2048  # P3: less than 2,048 characters
    assert normalize_loc(loc) == loc  # a <loc> is its own dedup key
    # P12: the loc stays on the origin the URL named.
    assert loc.startswith(SITE)
    assert origin_of(loc) == SITE_ORIGIN


# --- 2. the writer on arbitrary entries (P1, P2, P7, P14, G2, G7) ------------------------

lastmod_values = st.one_of(
    st.dates().map(date.isoformat),
    st.datetimes(timezones=st.just(timezone.utc)).map(
        lambda moment: moment.isoformat(timespec="seconds")
    ),
)
lastmods = st.one_of(st.none(), lastmod_values)
# Dates that go through parse_lastmod (video and news dates). Date-times before the year
# 1000 are left to the lastmod properties below, which test that parser on its own.
parsed_dates = st.one_of(
    st.dates().map(date.isoformat),
    st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.just(timezone.utc)).map(
        lambda moment: moment.isoformat(timespec="seconds")
    ),
)
priorities = st.one_of(st.none(), st.floats(0.0, 1.0).map(parse_priority))
changefreqs = st.one_of(st.none(), st.sampled_from(sorted(CHANGEFREQ_VALUES)))


@st.composite
def videos(draw: st.DrawFn) -> Video | None:
    """A video built the way the extractor and the pipeline build one (make_video), from
    arbitrary title and description text; None when make_video refuses it."""
    raw: dict[str, object] = {
        "thumbnail_loc": draw(site_locs(CDN)),
        "title": draw(free_text),
        "description": draw(free_text),
    }
    if draw(st.booleans()):
        raw["content_loc"] = draw(site_locs(CDN))
    if draw(st.booleans()) or "content_loc" not in raw:
        raw["player_loc"] = draw(site_locs())
    if draw(st.booleans()):
        raw["duration"] = draw(st.integers(1, 28_800))
    if draw(st.booleans()):
        raw["publication_date"] = draw(parsed_dates)
    try:
        return make_video(raw, normalize_loc, Issues())
    except FactRejected:
        return None


@st.composite
def url_facts(draw: st.DrawFn) -> UrlFacts:
    news = None
    if draw(st.integers(0, 3)) == 0:
        try:
            news = make_news(
                {
                    "publication_name": draw(free_text),
                    "publication_language": draw(
                        st.sampled_from(["en", "de", "fil", "zh-cn", "zh-TW"])
                    ),
                    "publication_date": draw(parsed_dates),
                    "title": draw(free_text),
                },
                now=datetime(10_000 - 1, 1, 1, tzinfo=timezone.utc),
            )
        except FactRejected:
            news = None
    return UrlFacts(
        loc=draw(site_locs()),
        lastmod=draw(lastmods),
        changefreq=draw(changefreqs),
        priority=draw(priorities),
        images=tuple(draw(st.lists(site_locs(CDN), max_size=3))),
        videos=tuple(v for v in draw(st.lists(videos(), max_size=2)) if v is not None),
        news=news,
    )


def written_locs(sinks: MemorySinks, names: list[str]) -> list[str]:
    """The locs of a file set as Scrapy's sitemap parser reads them, file after file."""
    found: list[str] = []
    for name in names:
        sitemap = Sitemap(sinks.data(name))
        assert sitemap.type == "urlset"
        found.extend(entry["loc"] for entry in sitemap)
    return found


def texts(document: bytes, path: str) -> list[str]:
    return [element.text or "" for element in etree.fromstring(document).iterfind(path)]


@settings(PROPERTY, max_examples=60)
@given(
    entries=st.lists(url_facts(), max_size=12),
    max_urls=st.integers(1, 6),
    max_bytes=st.integers(100_000, 400_000),
    gzipped=st.booleans(),
)
def test_writer_output_for_arbitrary_entries(
    entries: list[UrlFacts], max_urls: int, max_bytes: int, gzipped: bool
) -> None:
    news = [entry for entry in entries if entry.news is not None]
    sinks = MemorySinks()
    skips = Skips()
    output = write_origin(
        entries,
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=WriterOptions(
            max_urls=max_urls, max_bytes=max_bytes, gzip=gzipped, compresslevel=1
        ),
        on_skip=skips,
        news=news,
    )
    assert skips.calls == []  # every entry is a valid, same-origin one that fits the limit
    assert sorted(sinks) == sorted(f.name for f in output.files)
    for group, limit in ((output.sitemaps, max_urls), (output.news, min(max_urls, 1000))):
        for written in group:
            data = assert_valid(sinks.data(written.name))  # well-formed and schema-valid (P14)
            assert written.size == len(data)  # G2: the size the limit applies to
            assert len(data) <= max_bytes
            assert 1 <= written.entries <= limit  # P7
            assert len(etree.fromstring(data)) == written.entries
    # P8: the index lists every file, urlsets first, and is valid itself.
    for written in output.indexes:
        assert written.size == len(assert_valid(sinks.data(written.name))) <= max_bytes
    listed = [entry["loc"] for f in output.indexes for entry in Sitemap(sinks.data(f.name))]
    assert listed == [SITE + f.name for f in [*output.sitemaps, *output.news]]

    # Read-back by a real consumer: the input locs, in order, nothing lost or added.
    assert written_locs(sinks, [f.name for f in output.sitemaps]) == [e.loc for e in entries]
    assert written_locs(sinks, [f.name for f in output.news]) == [e.loc for e in news]

    # Free text: what was given, minus the characters XML cannot carry (XML 1.0 2.2).
    urlsets = [sinks.data(f.name) for f in output.sitemaps]
    expected_videos = [video for entry in entries for video in entry.videos]
    for tag, field in (("title", "title"), ("description", "description")):
        read = [
            text
            for doc in urlsets
            for text in texts(doc, f"{NS}url/{VIDEO_NS}video/{VIDEO_NS}{tag}")
        ]
        assert read == [xml_clean(getattr(video, field)) for video in expected_videos]
    images = [text for doc in urlsets for text in texts(doc, f"{NS}url/{{*}}image/{{*}}loc")]
    assert images == [image for entry in entries for image in entry.images]
    news_docs = [sinks.data(f.name) for f in output.news]
    for path, field in (
        (f"{NEWS_NS}title", "title"),
        (f"{NEWS_NS}publication/{NEWS_NS}name", "publication_name"),
    ):
        read = [text for doc in news_docs for text in texts(doc, f"{NS}url/{NEWS_NS}news/{path}")]
        assert read == [xml_clean(getattr(entry.news, field)) for entry in news]


# --- 3. the split at the limits (P7, G2) -------------------------------------------------

LOC_CHARS = string.ascii_letters + string.digits + "-._~/?=&';:@!$()*+,"
varied_locs = st.tuples(st.text(LOC_CHARS, min_size=1, max_size=24), st.integers(0, 90)).map(
    lambda t: (SITE + t[0] * t[1])[:2047]
)


def url_line(loc: str) -> bytes:
    """One ``<url>`` entry as P1/P2 spell it, a newline after it."""
    return f"<url><loc>{entity_escape(loc)}</loc></url>\n".encode()


@settings(PROPERTY, max_examples=120)
@given(
    locs=st.integers(0, 300).flatmap(lambda n: st.lists(varied_locs, min_size=n, max_size=n)),
    max_urls=st.integers(1, 50),
    data=st.data(),
)
def test_p7_split_never_loses_or_duplicates_an_entry(
    locs: list[str], max_urls: int, data: st.DataObject
) -> None:
    lines = [url_line(loc) for loc in locs]
    largest = max(map(len, lines), default=0)
    max_bytes = data.draw(
        st.one_of(
            # Room for every entry, up to a few KB more.
            st.integers(URLSET_FRAME + largest, URLSET_FRAME + largest + 4096),
            # Below the largest entry: those that cannot fit any file are skipped.
            st.integers(URLSET_FRAME, URLSET_FRAME + largest),
        ),
        label="max_bytes",
    )
    room = max_bytes - URLSET_FRAME
    sinks = MemorySinks()
    skips = Skips()
    output = write_origin(
        (UrlFacts(loc) for loc in locs),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=WriterOptions(max_urls=max_urls, max_bytes=max_bytes, gzip=False),
        on_skip=skips,
    )
    # Skipped only when the entry alone is more than an empty file has room for (G2).
    assert skips.calls == [
        ("entry_too_large", loc) for loc, line in zip(locs, lines) if len(line) > room
    ]
    kept = [(loc, line) for loc, line in zip(locs, lines) if len(line) <= room]

    files = output.sitemaps
    assert [f.name for f in files] == [f"sitemap-{n}.xml" for n in range(1, len(files) + 1)]
    assert sum(f.entries for f in files) == len(kept)
    position = 0
    for number, written in enumerate(files):
        assert 1 <= written.entries <= max_urls  # P7
        mine = kept[position : position + written.entries]
        document = sinks.data(written.name)
        # Each file is exactly the frame around its own run of entries, in input order.
        assert document == URLSET_HEAD + b"".join(line for _, line in mine) + URLSET_TAIL
        assert written.size == len(document) <= max_bytes  # G2
        assert [entry["loc"] for entry in Sitemap(document)] == [loc for loc, _ in mine]
        position += written.entries
        if number < len(files) - 1:
            # A file ends only when the next entry would pass one of the limits.
            next_line = kept[position][1]
            assert written.entries == max_urls or written.size + len(next_line) > max_bytes, (
                f"{written.name} closed early: {written.entries} entries, {written.size} bytes,"
                f" next entry {len(next_line)} bytes, limits {max_urls} / {max_bytes}"
            )
    assert position == len(kept)
    if files:
        assert_valid(sinks.data(files[0].name))
    else:
        assert dict(sinks) == {}  # P2: no empty urlset, no empty index


# --- 4. lastmod values (P4) --------------------------------------------------------------

W3C_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$", re.ASCII)
W3C_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)

DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Sunday", "Monday"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
HTTP_ZONES = [
    "GMT",
    "UTC",
    "UT",
    "Z",
    "EST",
    "PDT",
    "+0000",
    "-0000",
    "+0100",
    "-1200",
    "+1400",
    "+2359",
    "-9959",
    "",
]
years = st.one_of(
    st.integers(0, 10_100), st.sampled_from([0, 1, 68, 69, 99, 100, 999, 1000, 1969, 9999])
)


@st.composite
def http_dates(draw: st.DrawFn) -> str:
    """RFC 1123, RFC 850 and asctime shapes with edge-of-range fields, and near misses."""
    day, month = draw(st.sampled_from(DAYS)), draw(st.sampled_from(MONTHS))
    dd, hh, mm, ss = (draw(st.integers(0, top)) for top in (32, 24, 60, 61))
    year, zone = draw(years), draw(st.sampled_from(HTTP_ZONES))
    width = draw(st.sampled_from([2, 4]))
    shape = draw(st.sampled_from(["rfc1123", "rfc850", "asctime"]))
    clock = f"{hh:02d}:{mm:02d}:{ss:02d}"
    if shape == "rfc1123":
        text = f"{day}, {dd:02d} {month} {year:0{width}d} {clock} {zone}"
    elif shape == "rfc850":
        text = (
            f"{day}, {dd:02d}-{month}-{year % 100 if width == 2 else year:0{width}d} {clock} {zone}"
        )
    else:
        text = f"{day} {month} {dd:2d} {hh:02d}:{mm:02d}:{ss:02d} {year}"
    return (
        draw(st.sampled_from(["", " ", "\t", "\x00"]))
        + text
        + draw(st.sampled_from(["", " ", "x", ";"]))
    )


W3C_ZONES = ["", "Z", "+00:00", "-00:00", "+01:00", "-12:00", "+14:00", "+2359", "-23:59", "+24:00"]


@st.composite
def w3c_texts(draw: st.DrawFn) -> str:
    """W3C date and date-time shapes with out-of-range fields, zones and separators."""
    text = f"{draw(years):04d}-{draw(st.integers(0, 13)):02d}-{draw(st.integers(0, 32)):02d}"
    if draw(st.booleans()):
        text += draw(st.sampled_from(["T", " ", "t"]))
        text += f"{draw(st.integers(0, 25)):02d}:{draw(st.integers(0, 60)):02d}"
        if draw(st.booleans()):
            text += f":{draw(st.integers(0, 61)):02d}" + draw(
                st.sampled_from(["", ".5", ".999999", ".1234567"])
            )
        text += draw(st.sampled_from(W3C_ZONES))
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", " ", "\t"]))


def assert_w3c_not_future(value: str, started: datetime, *, dates: bool = False) -> None:
    finished = datetime.now(timezone.utc)
    if dates and W3C_DATE.match(value):
        moment = datetime.combine(date.fromisoformat(value), datetime.min.time(), timezone.utc)
    else:
        assert W3C_DATETIME.match(value), f"not a W3C Datetime in UTC (P4): {value!r}"
        moment = datetime.fromisoformat(value)
    assert started - timedelta(days=1) <= finished  # clock sanity
    assert moment <= finished + timedelta(days=1), f"{value!r} is after now + 1 day"


@settings(PROPERTY, max_examples=400)
@given(value=st.one_of(st.text(), http_dates(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_p4_lastmod_from_http_of_arbitrary_text(value: str) -> None:
    started = datetime.now(timezone.utc)
    try:
        result = lastmod_from_http(value)
    except FactRejected:
        return
    assert_w3c_not_future(result, started)


@settings(PROPERTY, max_examples=400)
@given(value=st.one_of(st.text(), w3c_texts()))
def test_p4_parse_lastmod_of_arbitrary_text(value: str) -> None:
    # A W3C date stays a date (P4 allows YYYY-MM-DD); anything else is a UTC date-time.
    started = datetime.now(timezone.utc)
    try:
        result = parse_lastmod(value)
    except FactRejected:
        return
    assert_w3c_not_future(result, started, dates=True)


# --- 5. origin folder names -------------------------------------------------------------

WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {
        f"{stem}{n}"
        for stem in ("COM", "LPT")
        for n in [*"0123456789", "\u00b9", "\u00b2", "\u00b3"]
    }
)
WINDOWS_FORBIDDEN = frozenset('<>:"/\\|?*') | {chr(code) for code in range(32)}

label = st.one_of(
    st.from_regex(r"[a-z0-9_-]{1,20}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9]{1,63}", fullmatch=True),
    st.text(
        st.characters(min_codepoint=0xA0, max_codepoint=0x2FFF, categories=["Ll", "Lo"]),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["xn--caf-dma", "www", "com", "localhost", "a", "_", "-"]),
)
registered = st.tuples(
    st.lists(label, min_size=1, max_size=6).map(".".join), st.sampled_from(["", "."])
).map("".join)
hosts = st.one_of(
    registered,
    # Long names, past the 120-character cut (hash suffix) and up to the 2,048 of P3.
    st.tuples(label, st.integers(10, 400)).map(lambda t: ".".join([t[0]] * t[1])[:1990]),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"),
)
ports = st.one_of(st.none(), st.integers(0, 65_535), st.sampled_from([0, 80, 443, 8080]))
schemes = st.sampled_from(["http", "https", "HTTP", "Https"])


def url_of(scheme: str, host: str, port: int | None) -> str:
    return f"{scheme}://{host}{'' if port is None else f':{port}'}/"


def assert_safe_name(name: str) -> None:
    assert name not in ("", ".", "..")
    assert "/" not in name and "\\" not in name and "\x00" not in name
    bad = sorted(set(name) & WINDOWS_FORBIDDEN)
    assert not bad, f"{bad!r} in {name!r}: not allowed in a Windows file name"
    assert not name.endswith((".", " ")), f"{name!r}: Windows drops a trailing dot or space"
    assert name.split(".", 1)[0].upper() not in WINDOWS_DEVICES, f"{name!r} is a Windows device"
    assert len(name) <= 120


def origin_key(loc: str) -> tuple[str, str]:
    """The origin a loc names, as the URL spells it: scheme and netloc (P12)."""
    parts = urlsplit(loc)
    return parts.scheme, parts.netloc


@settings(PROPERTY, max_examples=300)
@given(scheme=schemes, host=hosts, port=ports)
def test_origin_name_is_one_safe_path_component(scheme: str, host: str, port: int | None) -> None:
    loc = accepted(url_of(scheme, host, port))
    assume(loc is not None)
    assert loc is not None
    origin = origin_of(loc)
    assert_safe_name(origin.name)
    # P12: the origin is the loc's own: its root is where the loc starts.
    assert loc.startswith(origin.root), f"{loc!r} is not under its origin's root {origin.root!r}"


@st.composite
def origin_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two origin URLs, often near each other: same host other port, a shared long prefix."""
    scheme, host, port = draw(schemes), draw(hosts), draw(ports)
    other_scheme = draw(st.one_of(st.just(scheme), schemes))
    other_host = draw(
        st.one_of(
            st.just(host),
            st.just(host.upper()),
            hosts,
            st.sampled_from(["", ".", "x", ".x", "-", "_"]).map(lambda tail: host + tail),
            st.sampled_from(["x", "x.", "_"]).map(lambda head: head + host),
        )
    )
    other_port = draw(st.one_of(st.just(port), ports))
    return url_of(scheme, host, port), url_of(other_scheme, other_host, other_port)


@settings(PROPERTY, max_examples=300)
@given(pair=origin_pairs())
def test_distinct_origins_get_distinct_names(pair: tuple[str, str]) -> None:
    first, second = (accepted(url) for url in pair)
    assume(first is not None and second is not None)
    assert first is not None and second is not None
    one, two = origin_of(first), origin_of(second)
    if origin_key(first) == origin_key(second):
        assert one.name == two.name
    else:
        assert one.name != two.name, f"{first!r} and {second!r} share the folder {one.name!r}"
