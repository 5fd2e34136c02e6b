"""The XML writer: escaping (P1), the urlset and index format (P2, P8, P14), the split at the
protocol limits (P7, P8, G2) and the refusals that keep every file valid (P3, P12).

Sizes are computed by hand from the document frame (helpers.py), not read from the writer, and
every document the writer produces here goes through ``assert_valid`` (the package's schemas).
"""

from __future__ import annotations

import gzip
import io
import random
import string
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from xml.sax.saxutils import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scrapy_sitemapgen.sitemaps.facts import Alternate, News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.limits import MAX_URLS_PER_SITEMAP
from scrapy_sitemapgen.sitemaps.writer import (
    OriginOutput,
    WriterOptions,
    WrittenFile,
    escape,
    url_entry,
    write_origin,
)

from .helpers import (
    IMAGE_NS,
    INDEX_FRAME,
    NEWS_NS,
    NS,
    URLSET_FRAME,
    URLSET_HEAD,
    URLSET_TAIL,
    VIDEO_NS,
    XHTML_NS,
    MemorySinks,
    Skips,
    assert_valid,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

GOLDEN = Path(__file__).parent / "golden"
SITE = "https://www.example.com/"
LASTMOD = "2024-05-06T07:08:09+00:00"


def test_frame_sizes_as_counted_by_hand() -> None:
    # Guards the arithmetic the boundary tests below rely on.
    assert URLSET_FRAME == 39 + 59 + 62 + 62 + 60 + 45 + 10 == 337
    assert INDEX_FRAME == 39 + 67 + 16 == 122
    assert len(url_line(page(0))) == 10 + 31 + 13 == 54


def page(i: int) -> str:
    """A loc of fixed length: 24 + 7 = 31 characters."""
    return f"{SITE}p/{i:05d}"


def url_line(loc: str) -> bytes:
    """``<url><loc>…</loc></url>`` and a newline: 23 bytes plus the (ASCII) loc."""
    return f"<url><loc>{loc}</loc></url>\n".encode()


def pages(count: int) -> Iterator[UrlFacts]:
    return (UrlFacts(page(i)) for i in range(count))


def write(
    entries: object,
    sinks: MemorySinks,
    *,
    scope: str = SITE,
    base_url: str = SITE,
    on_skip: Skips | None = None,
    **options: object,
) -> OriginOutput:
    options.setdefault("gzip", False)
    return write_origin(
        entries,  # type: ignore[arg-type]
        scope=scope,
        base_url=base_url,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=WriterOptions(**options),  # type: ignore[arg-type]
        on_skip=on_skip,
    )


def locs_of(document: bytes) -> list[str]:
    root = etree.fromstring(document)
    return [el.text for el in root.iter(f"{NS}loc")]


def assert_all_valid(sinks: MemorySinks, output: OriginOutput) -> None:
    """Every written file: closed, valid, and as big as the writer says (uncompressed)."""
    files = [*output.sitemaps, *output.indexes]
    assert sorted(f.name for f in files) == sorted(sinks)
    for written in files:
        data = assert_valid(sinks.data(written.name))
        assert written.size == len(data), written.name


# --- escaping (P1) ----------------------------------------------------------------------

ESCAPE_CASES = [
    ("plain text", "plain text"),
    ("a&b", "a&amp;b"),
    ("<tag>", "&lt;tag&gt;"),
    ('say "hi"', "say &quot;hi&quot;"),
    ("it's", "it&apos;s"),
    ("&<>\"'", "&amp;&lt;&gt;&quot;&apos;"),
    # Escaping raw text is not idempotent, and must not be: "&amp;" as text is 5 characters.
    ("&amp;", "&amp;amp;"),
    # XML 1.0 section 2.2 Char: C0 controls other than tab, LF and CR are forbidden.
    ("a\x00b\x01c\x08d\x0be\x0cf\x1fg", "abcdefg"),
    ("tab\tlf\ncr\r", "tab\tlf\ncr\r"),
    # ... and so are surrogates, U+FFFE and U+FFFF.
    ("a\ud800b\udfffc", "abc"),
    ("a\ufffeb\uffffc", "abc"),
    # DEL, C1 controls, non-ASCII and astral characters are allowed Chars: kept.
    ("a\x7fb\x85c", "a\x7fb\x85c"),
    ("café 日本 \U0001f600 \U0010fffd", "café 日本 \U0001f600 \U0010fffd"),
    ("\ufffd", "\ufffd"),
    # Removal happens before escaping: "&\x01amp;" must not turn into an entity.
    ("&\x01amp;", "&amp;amp;"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), ESCAPE_CASES, ids=[repr(c[0]) for c in ESCAPE_CASES])
def test_p1_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


@pytest.mark.parametrize(("text", "expected"), ESCAPE_CASES, ids=[repr(c[0]) for c in ESCAPE_CASES])
def test_p1_escaped_text_parses_back(text: str, expected: str) -> None:
    element = ET.fromstring(f"<t>{escape(text)}</t>")
    unescaped = unescape(expected, {"&quot;": '"', "&apos;": "'"})
    # XML parsers normalise a bare CR to LF (XML 1.0 section 2.11).
    assert (element.text or "") == unescaped.replace("\r", "\n")


def _escape_by_the_letter(text: str) -> str:
    """P1 as XML 1.0 states it, one character at a time: the reference the fast paths of
    escape() are held to."""

    def is_char(c: int) -> bool:  # XML 1.0, section 2.2
        return (
            c in (0x9, 0xA, 0xD)
            or 0x20 <= c <= 0xD7FF
            or 0xE000 <= c <= 0xFFFD
            or 0x10000 <= c <= 0x10FFFF
        )

    entities = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
    return "".join(entities.get(ch, ch) for ch in text if is_char(ord(ch)))


# Printable ASCII, the five, every kind of control (allowed: tab, LF, CR; forbidden: the
# other C0 controls; DEL and C1 allowed), non-ASCII, surrogates and the two non-characters.
_ESCAPE_ALPHABET = (
    list("az09/?=%;:.-_~ ")
    + list("&<>\"'")
    + [
        "\x00",
        "\x01",
        "\x08",
        "\t",
        "\n",
        "\x0b",
        "\x0c",
        "\r",
        "\x1f",
        "\x7f",
        "\x85",
        "é",
        "日",
        "\U0001f600",
        "\ud800",
        "\udfff",
        "\ufffd",
        "\ufffe",
        "\uffff",
    ]
)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(st.text(st.sampled_from(_ESCAPE_ALPHABET), max_size=30))
def test_p1_escape_equals_the_rule_character_by_character(text: str) -> None:
    assert escape(text) == _escape_by_the_letter(text)


IMAGE_LISTS = [
    ["https://cdn.example.net/a.jpg"],
    [
        "https://cdn.example.net/a.jpg",
        "https://cdn.example.net/b.jpg",
        "https://cdn.example.net/c.jpg",
    ],
    [
        "https://cdn.example.net/a.jpg",
        "https://cdn.example.net/b.jpg?w=1&h=2",
        "https://cdn.example.net/c'.jpg",
    ],
    ["https://cdn.example.net/a.jpg", "https://cdn.example.net/it's.jpg"],
    ["https://cdn.example.net/a\x01b.jpg", "https://cdn.example.net/b.jpg"],
]


@pytest.mark.parametrize(
    "images", IMAGE_LISTS, ids=["one", "plain", "to-escape", "apostrophe", "forbidden"]
)
def test_p1_images_each_in_its_own_element_escaped(images: list[str]) -> None:
    """Plain image URLs are written in one join, the others one by one: either way each is
    its own <image:image>, in order, and reads back as itself (less what XML forbids)."""
    sinks = MemorySinks()
    write([UrlFacts(f"{SITE}p", images=tuple(images))], sinks)
    data = assert_valid(sinks.data("sitemap-1.xml"))
    url = etree.fromstring(data)[0]
    images_read = [image[0].text for image in url.iter(f"{IMAGE_NS}image")]
    assert images_read == [image.replace("\x01", "") for image in images]
    assert data.count(b"<image:image>") == len(images)
    for image in images:  # all five escaped, as everywhere (P1)
        assert f"<image:loc>{_escape_by_the_letter(image)}</image:loc>".encode() in data


def test_p1_loc_with_ampersand_and_apostrophe(tmp_path: Path) -> None:
    # normalize_loc keeps "&" (query separator) and "'" (a sub-delim in paths) as they are.
    locs = [f"{SITE}it's/here?a=1&b=2", f"{SITE}search?q=rock&amp;roll"]
    sinks = MemorySinks()
    output = write([UrlFacts(loc) for loc in locs], sinks)
    data = assert_valid(sinks.data("sitemap-1.xml"))
    assert b"<loc>https://www.example.com/it&apos;s/here?a=1&amp;b=2</loc>" in data
    assert b"<loc>https://www.example.com/search?q=rock&amp;amp;roll</loc>" in data
    assert b"'" not in data.split(b"\n", 2)[2]  # only the XML declaration may use '
    assert locs_of(data) == locs
    assert [el.text for el in ET.fromstring(data).iter(f"{NS}loc")] == locs
    assert output.url_count == 2


@pytest.mark.parametrize(
    "bad", ["\x01", "\x00", "\x0b", "\x1f", "\ufffe", "\uffff", "\ud800"], ids=repr
)
def test_p1_loc_with_forbidden_xml_char_is_skipped(bad: str) -> None:
    # Not silently altered: removing a character from a URL names another page.
    bad_loc = f"{SITE}a{bad}b"
    skips = Skips()
    sinks = MemorySinks()
    output = write(
        [UrlFacts(f"{SITE}a"), UrlFacts(bad_loc), UrlFacts(f"{SITE}c")], sinks, on_skip=skips
    )
    assert skips.calls == [("bad_url", bad_loc)]
    data = assert_valid(sinks.data("sitemap-1.xml"))
    assert locs_of(data) == [f"{SITE}a", f"{SITE}c"]
    assert output.url_count == 2


# --- golden files (P2, P4-P6, P8) -------------------------------------------------------

GOLDEN_ENTRIES = [
    UrlFacts(SITE, "2024-05-01", "daily", "1.0"),
    UrlFacts(f"{SITE}catalog?item=12&desc=vacation_hawaii", "2024-04-30T12:00:00+00:00", "weekly"),
    UrlFacts(f"{SITE}caf%C3%A9", priority="0.3"),
]


def test_golden_files_are_valid() -> None:
    assert_valid(GOLDEN / "urlset-3.xml")
    assert_valid(GOLDEN / "index-3.xml")


def test_golden_in_memory() -> None:
    sinks = MemorySinks()
    output = write(GOLDEN_ENTRIES, sinks)
    assert list(sinks) == ["sitemap-1.xml", "sitemap.xml"]
    assert sinks.data("sitemap-1.xml") == (GOLDEN / "urlset-3.xml").read_bytes()
    assert sinks.data("sitemap.xml") == (GOLDEN / "index-3.xml").read_bytes()
    assert output.sitemaps == [
        WrittenFile("sitemap-1.xml", 3, (GOLDEN / "urlset-3.xml").stat().st_size)
    ]
    assert output.indexes == [
        WrittenFile("sitemap.xml", 1, (GOLDEN / "index-3.xml").stat().st_size)
    ]
    assert_all_valid(sinks, output)


def test_golden_on_disk(tmp_path: Path) -> None:
    output = write_origin(
        GOLDEN_ENTRIES,
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=lambda name: (tmp_path / name).open("wb"),
        options=WriterOptions(gzip=False),
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sitemap-1.xml", "sitemap.xml"]
    assert (tmp_path / "sitemap-1.xml").read_bytes() == (GOLDEN / "urlset-3.xml").read_bytes()
    assert (tmp_path / "sitemap.xml").read_bytes() == (GOLDEN / "index-3.xml").read_bytes()
    for written in [*output.sitemaps, *output.indexes]:
        path = tmp_path / written.name
        assert written.size == len(assert_valid(path)) == path.stat().st_size


# --- P12: one origin per set ------------------------------------------------------------


def test_p12_entries_outside_the_scope_are_skipped() -> None:
    outside = [
        "http://www.example.com/a",  # other scheme
        "https://www.example.com:8443/a",  # other port
        "https://example.com/a",  # other host (G3: www and bare are different)
        "https://shop.www.example.com/a",
        "https://www.example.com.evil.example/a",  # the scope is a prefix up to the "/"
    ]
    inside = [SITE, f"{SITE}a", f"{SITE}b"]
    skips = Skips()
    sinks = MemorySinks()
    entries = [
        UrlFacts(loc) for loc in [inside[0], *outside[:3], inside[1], *outside[3:], inside[2]]
    ]
    output = write(entries, sinks, on_skip=skips)
    assert skips.calls == [("outside_origin", loc) for loc in outside]
    assert locs_of(assert_valid(sinks.data("sitemap-1.xml"))) == inside
    assert output.url_count == 3


def test_p12_scope_with_port() -> None:
    scope = "http://www.example.com:8080/"
    skips = Skips()
    sinks = MemorySinks()
    entries = [
        UrlFacts(f"{scope}a"),
        UrlFacts("http://www.example.com/a"),
        UrlFacts("http://www.example.com:80/a"),
    ]
    write(entries, sinks, scope=scope, base_url=scope, on_skip=skips)
    assert [reason for reason, _ in skips.calls] == ["outside_origin", "outside_origin"]
    assert locs_of(assert_valid(sinks.data("sitemap-1.xml"))) == [f"{scope}a"]
    index = assert_valid(sinks.data("sitemap.xml"))
    assert locs_of(index) == [f"{scope}sitemap-1.xml"]


def test_skips_without_on_skip_callback() -> None:
    sinks = MemorySinks()
    output = write(
        [UrlFacts("http://other.example/"), UrlFacts(f"{SITE}x\x01"), UrlFacts(f"{SITE}ok")], sinks
    )
    assert output.url_count == 1
    assert locs_of(assert_valid(sinks.data("sitemap-1.xml"))) == [f"{SITE}ok"]


# --- P3: loc length ---------------------------------------------------------------------


def test_p3_loc_of_2047_characters_is_written_2048_is_skipped() -> None:
    fits = SITE + "a" * (2047 - len(SITE))
    too_long = SITE + "b" * (2048 - len(SITE))
    skips = Skips()
    sinks = MemorySinks()
    write([UrlFacts(fits), UrlFacts(too_long)], sinks, on_skip=skips)
    assert skips.calls == [("url_too_long", too_long)]
    assert locs_of(assert_valid(sinks.data("sitemap-1.xml"))) == [fits]


# --- P7: URL count ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def fifty_thousand() -> bytes:
    """The urlset of exactly 50,000 URLs, validated once for the tests that need it."""
    sinks = MemorySinks()
    output = write(pages(50_000), sinks)
    assert [f.name for f in output.sitemaps] == ["sitemap-1.xml"]
    data = sinks.data("sitemap-1.xml")
    assert_valid(data)
    return data


def test_p7_default_limit_is_the_protocol_maximum() -> None:
    assert WriterOptions().max_urls == MAX_URLS_PER_SITEMAP == 50_000


def test_p7_exactly_50000_urls_is_one_urlset(fifty_thousand: bytes) -> None:
    sinks = MemorySinks()
    output = write(pages(50_000), sinks)
    assert output.sitemaps == [WrittenFile("sitemap-1.xml", 50_000, URLSET_FRAME + 50_000 * 54)]
    assert sinks.data("sitemap-1.xml") == fifty_thousand  # validated in the fixture
    assert len(etree.fromstring(fifty_thousand)) == 50_000
    index = assert_valid(sinks.data("sitemap.xml"))
    assert locs_of(index) == [f"{SITE}sitemap-1.xml"]


def test_p7_50001_urls_is_two_urlsets(fifty_thousand: bytes) -> None:
    sinks = MemorySinks()
    output = write(pages(50_001), sinks, compresslevel=1)
    assert output.sitemaps == [
        WrittenFile("sitemap-1.xml", 50_000, URLSET_FRAME + 50_000 * 54),
        WrittenFile("sitemap-2.xml", 1, URLSET_FRAME + 54),
    ]
    assert sinks.data("sitemap-1.xml") == fifty_thousand  # the same first 50,000, validated
    second = assert_valid(sinks.data("sitemap-2.xml"))
    assert second == URLSET_HEAD + url_line(page(50_000)) + URLSET_TAIL
    index = assert_valid(sinks.data("sitemap.xml"))
    assert locs_of(index) == [f"{SITE}sitemap-1.xml", f"{SITE}sitemap-2.xml"]
    assert output.url_count == 50_001


@pytest.mark.parametrize(
    ("count", "max_urls", "split"), [(5, 2, [2, 2, 1]), (4, 2, [2, 2]), (3, 5, [3]), (1, 1, [1])]
)
def test_p7_smaller_url_limit(count: int, max_urls: int, split: list[int]) -> None:
    sinks = MemorySinks()
    output = write(pages(count), sinks, max_urls=max_urls)
    assert [f.entries for f in output.sitemaps] == split
    assert [f.name for f in output.sitemaps] == [
        f"sitemap-{n}.xml" for n in range(1, len(split) + 1)
    ]
    # Every URL once, in the given order, across the files.
    written = [loc for f in output.sitemaps for loc in locs_of(sinks.data(f.name))]
    assert written == [page(i) for i in range(count)]
    assert_all_valid(sinks, output)


# --- P7 / G2: uncompressed bytes --------------------------------------------------------

PER_FILE = 100
EXACT_LIMIT = URLSET_FRAME + PER_FILE * 54  # 337 + 5,400 = 5,737 bytes: 100 entries exactly


def test_p7_file_exactly_at_the_byte_limit() -> None:
    sinks = MemorySinks()
    output = write(pages(PER_FILE), sinks, max_bytes=EXACT_LIMIT)
    assert output.sitemaps == [WrittenFile("sitemap-1.xml", PER_FILE, EXACT_LIMIT)]
    data = sinks.data("sitemap-1.xml")
    assert len(data) == EXACT_LIMIT == 337 + 100 * 54 == 5_737
    assert data == URLSET_HEAD + b"".join(url_line(page(i)) for i in range(PER_FILE)) + URLSET_TAIL
    assert_all_valid(sinks, output)


def test_p7_one_entry_past_the_byte_limit_starts_a_new_file() -> None:
    sinks = MemorySinks()
    output = write(pages(PER_FILE + 1), sinks, max_bytes=EXACT_LIMIT)
    assert output.sitemaps == [
        WrittenFile("sitemap-1.xml", PER_FILE, EXACT_LIMIT),
        WrittenFile("sitemap-2.xml", 1, URLSET_FRAME + 54),
    ]
    assert len(sinks.data("sitemap-1.xml")) == EXACT_LIMIT
    assert locs_of(sinks.data("sitemap-2.xml")) == [page(PER_FILE)]
    assert_all_valid(sinks, output)


def test_p7_one_byte_less_splits_one_entry_earlier() -> None:
    sinks = MemorySinks()
    output = write(pages(PER_FILE + 1), sinks, max_bytes=EXACT_LIMIT - 1)
    assert output.sitemaps == [
        WrittenFile("sitemap-1.xml", PER_FILE - 1, EXACT_LIMIT - 54),
        WrittenFile("sitemap-2.xml", 2, URLSET_FRAME + 2 * 54),
    ]
    assert locs_of(sinks.data("sitemap-2.xml")) == [page(PER_FILE - 1), page(PER_FILE)]
    for written in output.sitemaps:
        assert written.size <= EXACT_LIMIT - 1
    assert_all_valid(sinks, output)


def test_p7_byte_limit_counts_utf8_bytes_and_escapes() -> None:
    # "&" is written as "&amp;" (5 bytes): the limit applies to the bytes on disk.
    loc = f"{SITE}?a=1&b=2&c=3"  # 36 characters, 44 bytes once escaped
    line = f"<url><loc>{escape(loc)}</loc></url>\n".encode()
    assert len(line) == 23 + 36 + 8
    sinks = MemorySinks()
    output = write([UrlFacts(loc)] * 3, sinks, max_bytes=URLSET_FRAME + 2 * len(line))
    assert [f.entries for f in output.sitemaps] == [2, 1]
    assert output.sitemaps[0].size == URLSET_FRAME + 2 * len(line)
    assert_all_valid(sinks, output)


def test_p7_entry_larger_than_the_byte_limit_is_skipped() -> None:
    max_bytes = 527  # room for entries of 527 - 337 = 190 bytes: locs of up to 167 chars
    fits = SITE + "f" * (167 - len(SITE))
    too_large = SITE + "x" * (168 - len(SITE))
    skips = Skips()
    sinks = MemorySinks()
    output = write([UrlFacts(too_large), UrlFacts(fits)], sinks, max_bytes=max_bytes, on_skip=skips)
    assert skips.calls == [("entry_too_large", too_large)]
    assert output.sitemaps == [WrittenFile("sitemap-1.xml", 1, max_bytes)]
    assert locs_of(sinks.data("sitemap-1.xml")) == [fits]
    assert_all_valid(sinks, output)


# --- gzip -------------------------------------------------------------------------------


def gzip_run(directory: Path, count: int = 500) -> OriginOutput:
    directory.mkdir()
    return write_origin(
        pages(count),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=lambda name: (directory / name).open("wb"),
        options=WriterOptions(max_urls=200),
    )


def test_gzip_is_the_default_and_deterministic(tmp_path: Path) -> None:
    one = gzip_run(tmp_path / "one")
    two = gzip_run(tmp_path / "two")
    names = ["sitemap-1.xml.gz", "sitemap-2.xml.gz", "sitemap-3.xml.gz"]
    assert [f.name for f in one.sitemaps] == names
    # The index stays plain XML, the file robots.txt names (P15).
    assert [f.name for f in one.indexes] == ["sitemap.xml"]
    for name in [*names, "sitemap.xml"]:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), (
            name
        )
    assert one == two


def test_gzip_header_has_no_time_and_no_file_name(tmp_path: Path) -> None:
    gzip_run(tmp_path / "out")
    raw = (tmp_path / "out" / "sitemap-1.xml.gz").read_bytes()
    # RFC 1952 2.3: ID1 ID2 CM FLG MTIME(4) ...
    assert raw[:3] == b"\x1f\x8b\x08"
    assert raw[3] & 0x08 == 0, "FNAME set: the file name is stored in the archive"
    assert raw[3] == 0
    assert raw[4:8] == b"\x00\x00\x00\x00", "MTIME set: output differs from run to run"
    assert b"sitemap" not in raw[:64]


def test_gzip_decompresses_to_valid_xml_of_the_written_size(tmp_path: Path) -> None:
    output = gzip_run(tmp_path / "out")
    written = []
    for f in output.sitemaps:
        data = assert_valid(tmp_path / "out" / f.name)  # decompresses
        assert f.size == len(data) == URLSET_FRAME + f.entries * 54
        written.extend(locs_of(data))
    assert written == [page(i) for i in range(500)]
    index = assert_valid(tmp_path / "out" / "sitemap.xml")
    assert locs_of(index) == [f"{SITE}{f.name}" for f in output.sitemaps]


def test_gzip_in_memory_level_1() -> None:
    sinks = MemorySinks()
    output = write(pages(10), sinks, gzip=True, compresslevel=1)
    assert list(sinks) == ["sitemap-1.xml.gz", "sitemap.xml"]
    assert sinks.raw("sitemap-1.xml.gz")[:2] == b"\x1f\x8b"
    assert (
        sinks.data("sitemap-1.xml.gz")
        == URLSET_HEAD + b"".join(url_line(page(i)) for i in range(10)) + URLSET_TAIL
    )
    assert_all_valid(sinks, output)


# --- the index (P8, P10) ----------------------------------------------------------------


def index_entries(document: bytes) -> list[tuple[str, str]]:
    root = etree.fromstring(document)
    assert root.tag == f"{NS}sitemapindex"
    return [(el.findtext(f"{NS}loc"), el.findtext(f"{NS}lastmod")) for el in root]


def test_p8_index_lists_every_urlset_in_order() -> None:
    sinks = MemorySinks()
    output = write(pages(12), sinks, max_urls=1, gzip=True, compresslevel=1)
    names = [f"sitemap-{n}.xml.gz" for n in range(1, 13)]
    assert [f.name for f in output.sitemaps] == names
    assert output.indexes == [WrittenFile("sitemap.xml", 12, output.indexes[0].size)]
    index = assert_valid(sinks.data("sitemap.xml"))
    # P10: <lastmod> is when the sitemap file changed: the time given, for every file.
    assert index_entries(index) == [(SITE + name, LASTMOD) for name in names]
    # Urlsets are written (and opened) before the index that lists them.
    assert list(sinks) == [*names, "sitemap.xml"]
    assert_all_valid(sinks, output)


def test_p13_index_locs_use_the_base_url() -> None:
    base = "https://cdn.example.net/sitemaps/www.example.com/"
    sinks = MemorySinks()
    output = write(pages(3), sinks, base_url=base, max_urls=2)
    index = assert_valid(sinks.data("sitemap.xml"))
    assert index_entries(index) == [
        (f"{base}sitemap-1.xml", LASTMOD),
        (f"{base}sitemap-2.xml", LASTMOD),
    ]
    # The urlsets still list the site's own URLs.
    assert locs_of(sinks.data("sitemap-1.xml")) == [page(0), page(1)]
    assert_all_valid(sinks, output)


def test_p8_several_indexes_past_max_index_entries() -> None:
    sinks = MemorySinks()
    output = write(pages(7), sinks, max_urls=1, max_index_entries=3)
    assert [(f.name, f.entries) for f in output.indexes] == [
        ("sitemap.xml", 3),
        ("sitemap-index-2.xml", 3),
        ("sitemap-index-3.xml", 1),
    ]
    listed = []
    for f in output.indexes:
        entries = index_entries(assert_valid(sinks.data(f.name)))
        assert all(lastmod == LASTMOD for _, lastmod in entries)
        listed.extend(loc for loc, _ in entries)
    assert listed == [f"{SITE}sitemap-{n}.xml" for n in range(1, 8)]
    assert_all_valid(sinks, output)


def test_p8_index_split_at_the_byte_limit() -> None:
    # Index lines are 112 bytes for sitemap-1.xml .. sitemap-9.xml and 113 from sitemap-10.xml:
    # 14 + len(loc) + 15 + 25 + 21, with loc = 24 + len("sitemap-N.xml").
    # Within 4,096 bytes: 122 + 9 * 112 + 26 * 113 = 4,068; one more would be 4,181.
    line = f"<sitemap><loc>{SITE}sitemap-1.xml</loc><lastmod>{LASTMOD}</lastmod></sitemap>\n"
    assert len(line) == 112
    sinks = MemorySinks()
    output = write(pages(40), sinks, max_urls=1, max_bytes=4096)
    assert [(f.name, f.entries, f.size) for f in output.indexes] == [
        ("sitemap.xml", 35, 4068),
        ("sitemap-index-2.xml", 5, INDEX_FRAME + 5 * 113),
    ]
    assert_all_valid(sinks, output)


# --- nothing to write -------------------------------------------------------------------


@pytest.mark.parametrize(
    "entries",
    [
        [],
        [UrlFacts("https://other.example/")],
        [UrlFacts(f"{SITE}\x01")],
        [UrlFacts(SITE + "a" * 2048)],
    ],
    ids=["none", "outside", "bad_url", "too_long"],
)
def test_p2_no_writable_entry_opens_no_file(entries: list[UrlFacts]) -> None:
    # An empty <urlset> or <sitemapindex> is invalid (P2, P8: one or more entries).
    sinks = MemorySinks()
    output = write(entries, sinks)
    assert dict(sinks) == {}
    assert output.sitemaps == []
    assert output.indexes == []
    assert output.url_count == 0


def test_no_writable_entry_creates_no_file_on_disk(tmp_path: Path) -> None:
    write_origin(
        [UrlFacts("http://other.example/")],
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=lambda name: (tmp_path / name).open("wb"),
    )
    assert list(tmp_path.iterdir()) == []


def test_entries_are_streamed_from_an_iterator() -> None:
    consumed = []

    def source() -> Iterator[UrlFacts]:
        for i in range(3):
            consumed.append(i)
            yield UrlFacts(page(i), lastmod=f"2024-01-0{i + 1}")

    sinks = MemorySinks()
    output = write(source(), sinks)
    assert consumed == [0, 1, 2]
    data = assert_valid(sinks.data("sitemap-1.xml"))
    assert [el.text for el in etree.fromstring(data).iter(f"{NS}lastmod")] == [
        "2024-01-01",
        "2024-01-02",
        "2024-01-03",
    ]
    assert_all_valid(sinks, output)


# --- extensions: hreflang alternates, images, videos (G6, G7, G8) -----------------------

RECIPE = f"{SITE}recipes/grill?id=12&lang=en"
FULL_VIDEO = Video(
    thumbnail_loc="https://cdn.example.net/thumbs/123.jpg",
    title="Fish & chips <live> at Joe's",
    description='Says "hi" > all',
    content_loc="https://cdn.example.net/video/123.mp4",
    player_loc=f"{SITE}player?video=123&autoplay=0",
    duration=600,
    publication_date="2024-04-30T10:00:00+00:00",
)
REQUIRED_VIDEO = Video(
    thumbnail_loc="https://cdn.example.net/thumbs/456.jpg",
    title="Second video",
    description="Only the required fields",
    player_loc=f"{SITE}player?video=456",
)
EVERY_EXTENSION = UrlFacts(
    RECIPE,
    "2024-05-01",
    "weekly",
    "0.8",
    # G8: the <loc> is the landing page; images and videos may live on a CDN.
    images=(
        "https://cdn.example.net/img/steak.jpg",
        "https://cdn.example.net/img/fish.jpg?w=800&h=600",
    ),
    videos=(FULL_VIDEO, REQUIRED_VIDEO),
    # G6: every language version, the page itself included.
    alternates=(
        Alternate("en", RECIPE),
        Alternate("de-CH", f"{SITE}de-ch/rezepte/grill?id=12"),
        Alternate("x-default", RECIPE),
    ),
)


def test_g7_url_with_every_extension_in_order() -> None:
    sinks = MemorySinks()
    output = write([EVERY_EXTENSION], sinks)
    data = assert_valid(sinks.data("sitemap-1.xml"))
    url = etree.fromstring(data)[0]
    # P2 / sitemap.xsd: loc, lastmod, changefreq, priority, then the extension elements
    # (the schema's trailing ##other wildcard), each extension's elements together.
    assert [child.tag for child in url] == [
        f"{NS}loc",
        f"{NS}lastmod",
        f"{NS}changefreq",
        f"{NS}priority",
        f"{XHTML_NS}link",
        f"{XHTML_NS}link",
        f"{XHTML_NS}link",
        f"{IMAGE_NS}image",
        f"{IMAGE_NS}image",
        f"{VIDEO_NS}video",
        f"{VIDEO_NS}video",
    ]
    links = url.findall(f"{XHTML_NS}link")
    assert [(link.get("rel"), link.get("hreflang"), link.get("href")) for link in links] == [
        ("alternate", "en", RECIPE),
        ("alternate", "de-CH", f"{SITE}de-ch/rezepte/grill?id=12"),
        ("alternate", "x-default", RECIPE),
    ]
    assert [image.findtext(f"{IMAGE_NS}loc") for image in url.iter(f"{IMAGE_NS}image")] == [
        "https://cdn.example.net/img/steak.jpg",
        "https://cdn.example.net/img/fish.jpg?w=800&h=600",
    ]
    full, required = url.findall(f"{VIDEO_NS}video")
    # The video schema's sequence, as Google documents the tags.
    assert [(etree.QName(c).localname, c.text) for c in full] == [
        ("thumbnail_loc", "https://cdn.example.net/thumbs/123.jpg"),
        ("title", "Fish & chips <live> at Joe's"),
        ("description", 'Says "hi" > all'),
        ("content_loc", "https://cdn.example.net/video/123.mp4"),
        ("player_loc", f"{SITE}player?video=123&autoplay=0"),
        ("duration", "600"),
        ("publication_date", "2024-04-30T10:00:00+00:00"),
    ]
    assert [(etree.QName(c).localname, c.text) for c in required] == [
        ("thumbnail_loc", "https://cdn.example.net/thumbs/456.jpg"),
        ("title", "Second video"),
        ("description", "Only the required fields"),
        ("player_loc", f"{SITE}player?video=456"),
    ]
    assert output.url_count == 1
    assert_all_valid(sinks, output)


def test_p1_extension_text_and_attributes_are_escaped() -> None:
    sinks = MemorySinks()
    write([EVERY_EXTENSION], sinks)
    data = sinks.data("sitemap-1.xml")
    assert b"<video:title>Fish &amp; chips &lt;live&gt; at Joe&apos;s</video:title>" in data
    assert b"<video:description>Says &quot;hi&quot; &gt; all</video:description>" in data
    assert b"<image:loc>https://cdn.example.net/img/fish.jpg?w=800&amp;h=600</image:loc>" in data
    assert (
        b"<video:player_loc>https://www.example.com/player?video=123&amp;autoplay=0</video:player_loc>"
        in data
    )
    assert (
        b'<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/recipes/grill?id=12&amp;lang=en"/>'
        in data
    )
    body = data.split(b"\n", 2)[2]  # after the XML declaration and the root's start tag
    assert b"'" not in body and b"<live>" not in body


def test_p1_forbidden_xml_characters_in_video_text_are_removed() -> None:
    # XML 1.0 section 2.2: free text loses the characters XML cannot carry; the file stays valid.
    video = Video(
        REQUIRED_VIDEO.thumbnail_loc,
        "Bad\x01title",
        "Bad\x0bdescription\ufffe",
        player_loc=REQUIRED_VIDEO.player_loc,
    )
    sinks = MemorySinks()
    write([UrlFacts(f"{SITE}v", videos=(video,))], sinks)
    data = assert_valid(sinks.data("sitemap-1.xml"))
    root = etree.fromstring(data)
    assert root.findtext(f".//{VIDEO_NS}title") == "Badtitle"
    assert root.findtext(f".//{VIDEO_NS}description") == "Baddescription"


def test_golden_urlset_with_every_extension_is_valid() -> None:
    assert_valid(GOLDEN / "urlset-extensions.xml")


def test_golden_urlset_with_every_extension() -> None:
    sinks = MemorySinks()
    output = write([EVERY_EXTENSION], sinks)
    golden = (GOLDEN / "urlset-extensions.xml").read_bytes()
    assert sinks.data("sitemap-1.xml") == golden
    assert output.sitemaps == [WrittenFile("sitemap-1.xml", 1, len(golden))]


def test_p14_g7_urlset_root_declares_every_extension_namespace() -> None:
    sinks = MemorySinks()
    write([UrlFacts(SITE)], sinks)  # even a urlset without extensions: the writer streams
    root = etree.fromstring(assert_valid(sinks.data("sitemap-1.xml")))
    assert root.nsmap == {
        None: "http://www.sitemaps.org/schemas/sitemap/0.9",
        "image": "http://www.google.com/schemas/sitemap-image/1.1",
        "video": "http://www.google.com/schemas/sitemap-video/1.1",
        "news": "http://www.google.com/schemas/sitemap-news/0.9",
        "xhtml": "http://www.w3.org/1999/xhtml",
    }


# --- Google News sitemaps ---------------------------------------------------------------

NEWS_DATE = "2024-05-06T07:00:00+00:00"


def news_facts(count: int) -> list[UrlFacts]:
    """News entries that also carry page media: none of it may reach a news sitemap."""
    return [
        UrlFacts(
            f"{SITE}news/{i:04d}",
            "2024-05-06",
            images=(f"https://cdn.example.net/n/{i}.jpg",),
            videos=(REQUIRED_VIDEO,),
            alternates=(Alternate("en", f"{SITE}news/{i:04d}"),),
            news=News("The Example Times", "en", NEWS_DATE, f"Story {i}"),
        )
        for i in range(count)
    ]


def write_news(
    entries: list[UrlFacts], news: list[UrlFacts], sinks: MemorySinks, **options: object
) -> OriginOutput:
    options.setdefault("gzip", False)
    return write_origin(
        entries,
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=WriterOptions(**options),  # type: ignore[arg-type]
        news=news,
    )


def test_news_entry_written_by_hand() -> None:
    news = UrlFacts(
        f"{SITE}business/article55.html?a=1&b=2",
        images=("https://cdn.example.net/x.jpg",),
        news=News(
            "The Example & Co Times", "zh-cn", "2008-12-23", "Companies A, B <in> Merger Talks"
        ),
    )
    sinks = MemorySinks()
    output = write_news([], [news], sinks)
    data = assert_valid(sinks.data("sitemap-news-1.xml"))
    assert (
        data
        == URLSET_HEAD
        + (
            b"<url><loc>https://www.example.com/business/article55.html?a=1&amp;b=2</loc>"
            b"<news:news><news:publication><news:name>The Example &amp; Co Times</news:name>"
            b"<news:language>zh-cn</news:language></news:publication>"
            b"<news:publication_date>2008-12-23</news:publication_date>"
            b"<news:title>Companies A, B &lt;in&gt; Merger Talks</news:title></news:news></url>\n"
        )
        + URLSET_TAIL
    )
    assert output.news == [WrittenFile("sitemap-news-1.xml", 1, len(data))]
    assert output.sitemaps == []  # no urlset entries given: no urlset
    assert locs_of(assert_valid(sinks.data("sitemap.xml"))) == [f"{SITE}sitemap-news-1.xml"]


@pytest.mark.parametrize("gzipped", [False, True], ids=["xml", "gz"])
def test_1001_news_entries_make_two_news_sitemaps(gzipped: bool) -> None:
    # Google News: at most 1,000 <news:news> per sitemap: 1,000 + 1.
    entries = news_facts(1001)
    sinks = MemorySinks()
    output = write_news(entries, entries, sinks, gzip=gzipped, compresslevel=1)
    ext = ".xml.gz" if gzipped else ".xml"
    assert [(f.name, f.entries) for f in output.news] == [
        (f"sitemap-news-1{ext}", 1000),
        (f"sitemap-news-2{ext}", 1),
    ]
    assert [(f.name, f.entries) for f in output.sitemaps] == [(f"sitemap-1{ext}", 1001)]
    written = []
    for f in output.news:
        data = assert_valid(sinks.data(f.name))  # also counts <news:news> per file
        assert f.size == len(data)
        root = etree.fromstring(data)
        assert len(root) == f.entries
        for url in root:
            # Nothing but the loc and the news: no image, video or xhtml element.
            assert [child.tag for child in url] == [f"{NS}loc", f"{NEWS_NS}news"]
            assert url.findtext(f"{NEWS_NS}news/{NEWS_NS}publication_date") == NEWS_DATE
        written.extend(locs_of(data))
    assert written == [f"{SITE}news/{i:04d}" for i in range(1001)]
    # The urlset keeps the media of the same entries.
    urlset = etree.fromstring(assert_valid(sinks.data(f"sitemap-1{ext}")))
    assert len(list(urlset.iter(f"{IMAGE_NS}image"))) == 1001
    assert list(urlset.iter(f"{NEWS_NS}news")) == []
    # The index lists the urlsets first, then the news sitemaps (P8, P10).
    assert index_entries(assert_valid(sinks.data("sitemap.xml"))) == [
        (f"{SITE}sitemap-1{ext}", LASTMOD),
        (f"{SITE}sitemap-news-1{ext}", LASTMOD),
        (f"{SITE}sitemap-news-2{ext}", LASTMOD),
    ]
    assert list(sinks)[-1] == "sitemap.xml"  # the index is written last


def test_exactly_1000_news_entries_make_one_news_sitemap() -> None:
    sinks = MemorySinks()
    output = write_news([], news_facts(1000), sinks)
    assert [(f.name, f.entries) for f in output.news] == [("sitemap-news-1.xml", 1000)]
    assert_valid(sinks.data("sitemap-news-1.xml"))


def test_p7_smaller_url_limit_applies_to_news_sitemaps() -> None:
    sinks = MemorySinks()
    output = write_news([], news_facts(7), sinks, max_urls=3)
    assert [(f.name, f.entries) for f in output.news] == [
        ("sitemap-news-1.xml", 3),
        ("sitemap-news-2.xml", 3),
        ("sitemap-news-3.xml", 1),
    ]
    for f in output.news:
        assert_valid(sinks.data(f.name))


def test_p12_news_outside_the_origin_is_skipped() -> None:
    skips = Skips()
    sinks = MemorySinks()
    outside = UrlFacts(
        "https://other.example/n", news=News("The Example Times", "en", NEWS_DATE, "Elsewhere")
    )
    output = write_origin(
        [],
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=sinks,
        options=WriterOptions(gzip=False),
        on_skip=skips,
        news=[outside, *news_facts(1)],
    )
    assert skips.calls == [("outside_origin", "https://other.example/n")]
    assert [f.entries for f in output.news] == [1]
    assert locs_of(assert_valid(sinks.data("sitemap-news-1.xml"))) == [f"{SITE}news/0000"]


def test_forbidden_characters_are_exactly_those_outside_xml_char() -> None:
    """P1: XML_FORBIDDEN_CHARS (written as a positive class, for speed) is the complement
    of XML 1.0's Char production over every code point a str can hold."""
    import re

    from scrapy_sitemapgen.sitemaps.limits import XML_FORBIDDEN_CHARS, XML_SPECIAL_CHARS

    def is_char(c: int) -> bool:  # XML 1.0, section 2.2
        return (
            c in (0x9, 0xA, 0xD)
            or 0x20 <= c <= 0xD7FF
            or 0xE000 <= c <= 0xFFFD
            or 0x10000 <= c <= 0x10FFFF
        )

    everything = "".join(map(chr, range(0x110000)))
    assert set(re.findall(XML_FORBIDDEN_CHARS, everything)) == {
        chr(c) for c in range(0x110000) if not is_char(c)
    }
    assert set(re.findall(XML_SPECIAL_CHARS, everything)) == set(
        re.findall(XML_FORBIDDEN_CHARS, everything)
    ) | set("&<>\"'")


class FullDisk(io.BytesIO):
    """A sink that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.tell() + len(data) > self.room:
            raise OSError(28, "No space left on device")
        return super().write(data)


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_failing_sink_fails_the_write(gzipped: bool) -> None:
    """Compression and writing run in a thread (overlapping the rendering): an error there
    still ends write_origin with that error, not with a file cut short and taken as done."""
    opened: list[str] = []

    def open_sink(name: str) -> BinaryIO:
        opened.append(name)
        return FullDisk(200_000)

    with pytest.raises(OSError, match="No space left"):
        write_origin(
            (UrlFacts(f"{SITE}p/{i:07d}/{'x' * 40}") for i in range(60_000)),
            scope=SITE,
            base_url=SITE,
            lastmod=LASTMOD,
            open_sink=open_sink,
            options=WriterOptions(gzip=gzipped, compresslevel=0),
        )
    assert opened == [f"sitemap-1.xml{'.gz' if gzipped else ''}"]


def test_pieces_handed_to_the_thread_keep_their_order() -> None:
    """Several compression pieces per file (each about 512 KiB): the bytes come out whole
    and in order, and the hash is of exactly those bytes."""
    import hashlib

    sinks = MemorySinks()
    output = write(pages(45_000), sinks, gzip=True)
    [urlset] = output.sitemaps
    data = sinks.data(urlset.name)
    assert len(data) == urlset.size > 3 * 512 * 1024
    assert locs_of(data) == [page(i) for i in range(45_000)]
    assert hashlib.sha256(data).hexdigest() == urlset.sha256


@pytest.mark.parametrize("backend", ["zlib", "zlib-ng"])
def test_each_gzip_backend_writes_the_same_xml_in_a_timeless_gzip(backend: str) -> None:
    """zlib-ng (the extra ``fast``, installed for the tests) and the standard zlib write the
    same uncompressed bytes, each as one gzip member with no time and no name, and the same
    compressed bytes twice in a row."""
    from scrapy_sitemapgen.sitemaps.writer import DEFAULT_GZIP_BACKEND, GZIP_BACKENDS

    assert DEFAULT_GZIP_BACKEND == "zlib-ng" and set(GZIP_BACKENDS) == {"zlib", "zlib-ng"}
    plain, first, second = MemorySinks(), MemorySinks(), MemorySinks()
    write(pages(60_000), plain, gzip=False)
    write(pages(60_000), first, gzip=True, gzip_backend=backend)
    write(pages(60_000), second, gzip=True, gzip_backend=backend)
    for number in (1, 2):
        name = f"sitemap-{number}.xml"
        raw = first.raw(f"{name}.gz")
        assert raw == second.raw(f"{name}.gz")
        assert raw[:4] == b"\x1f\x8b\x08\x00" and raw[4:8] == b"\x00\x00\x00\x00"
        assert first.data(f"{name}.gz") == plain.data(name)


def test_the_default_gzip_level_is_5_with_zlib_ng_and_6_with_zlib() -> None:
    """zlib-ng's level 5 writes about what zlib's 6 does at half the CPU; zlib's own 5 is
    10 % larger than its 9 on benchmark urlsets, so without zlib-ng the default stays 6.
    Checked in a fresh interpreter that cannot import zlib-ng, as a machine without the
    extra ``fast`` would run."""
    import subprocess
    import sys

    from scrapy_sitemapgen.settings import DEFAULTS
    from scrapy_sitemapgen.sitemaps.writer import DEFAULT_GZIP_LEVEL

    assert (
        DEFAULT_GZIP_LEVEL
        == 5
        == DEFAULTS["SITEMAPGEN_GZIP_LEVEL"]
        == WriterOptions().compresslevel
    )
    code = (
        "import sys; sys.modules['zlib_ng'] = None\n"
        "from scrapy_sitemapgen.settings import DEFAULTS\n"
        "from scrapy_sitemapgen.sitemaps.writer import DEFAULT_GZIP_BACKEND, WriterOptions\n"
        "print(DEFAULT_GZIP_BACKEND, DEFAULTS['SITEMAPGEN_GZIP_LEVEL'], WriterOptions().compresslevel)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["zlib", "6", "6"]


def _query_locs(count: int) -> Iterator[UrlFacts]:
    """Search pages, in loc order: the shape where zlib's level 6 is 16 % larger than its 9."""
    rng = random.Random(6)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(3000)]
    locs = {
        f"{SITE}search?q={rng.choice(words)}&page={rng.randint(1, 50)}&sort={rng.choice(('asc', 'desc'))}"
        for _ in range(count)
    }
    return (UrlFacts(loc) for loc in sorted(locs))


def _image_pages(count: int) -> Iterator[UrlFacts]:
    """Articles with a lastmod and 0-3 images, in loc order, as the benchmark feed has."""
    rng = random.Random(9)
    rows = sorted((f"{SITE}articles/{rng.randrange(10**9)}-guide", i) for i in range(count))
    for loc, i in rows:
        yield UrlFacts(
            loc,
            f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            images=tuple(
                f"https://cdn.example.com/img/{i}/{k}.jpg" for k in range(rng.randint(0, 3))
            ),
        )


@pytest.mark.parametrize("shape", [pages, _query_locs, _image_pages])
def test_the_default_gzip_level_writes_within_10_percent_of_zlib_level_9(
    shape: Callable[[int], Iterator[UrlFacts]],
) -> None:
    """Issue 6's bound on output size: at the default level, a full urlset is at most 10 %
    larger than zlib's level 9 makes it (``python -m benchmarks levels`` has more shapes)."""
    plain, packed = MemorySinks(), MemorySinks()
    write(shape(20_000), plain, gzip=False)
    write(shape(20_000), packed, gzip=True)
    level_9 = len(gzip.compress(plain.data("sitemap-1.xml"), compresslevel=9, mtime=0))
    assert len(packed.raw("sitemap-1.xml.gz")) <= 1.10 * level_9
    assert packed.data("sitemap-1.xml.gz") == plain.data("sitemap-1.xml")


def test_a_higher_gzip_level_writes_fewer_bytes() -> None:
    sizes = {}
    for level in (1, 9):
        sinks = MemorySinks()
        write(pages(20_000), sinks, gzip=True, compresslevel=level)
        sizes[level] = len(sinks.raw("sitemap-1.xml.gz"))
    assert sizes[9] < sizes[1]


class _SeenSink(io.BytesIO):
    """A sink that notes the switch interval at each write (in the compression thread,
    once a file has one)."""

    def __init__(self, seen: list[float], room: int | None = None) -> None:
        super().__init__()
        self.seen = seen
        self.room = room
        self.written = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        import sys

        self.seen.append(sys.getswitchinterval())
        if self.room is not None and self.tell() + len(data) > self.room:
            raise OSError(28, "No space left on device")
        self.written += len(data)
        return super().write(data)


def test_writing_leaves_the_thread_switch_interval_alone() -> None:
    """The writer runs in the user's Scrapy process: it changes no interpreter-wide state.
    The switch interval stays what it was while small files (compressed inline) and large
    ones (compressed in a thread) are written, and after, error or not."""
    import sys

    from scrapy_sitemapgen.sitemaps.writer import _INLINE_BYTES

    before = sys.getswitchinterval()
    assert before > 0.0005
    small: list[float] = []
    write_origin(
        pages(10),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=lambda name: _SeenSink(small),
    )
    assert small and set(small) == {before}

    large: list[float] = []
    sinks: list[_SeenSink] = []

    def open_sink(name: str) -> BinaryIO:
        sinks.append(_SeenSink(large))
        return sinks[-1]

    options = WriterOptions(gzip=False)
    write_origin(
        pages(20_000),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=open_sink,
        options=options,
    )
    assert sinks[0].written > 2 * _INLINE_BYTES  # past what is written inline
    assert large and set(large) == {before}  # inline first, then in the thread
    assert sys.getswitchinterval() == before

    with pytest.raises(OSError):
        write_origin(
            pages(20_000),
            scope=SITE,
            base_url=SITE,
            lastmod=LASTMOD,
            open_sink=lambda name: _SeenSink([], room=2 * _INLINE_BYTES),
            options=options,
        )
    assert sys.getswitchinterval() == before


# Locs as a urlset entry sees them: normalised ones (ASCII, "&" and "'" kept, escapes
# upper-case, a port, punycode) and ones a store could still hold unnormalised (non-ASCII,
# the five specials, a character escape() would drop from free text).
_ENTRY_LOCS = [
    f"{SITE}a",
    f"{SITE}it's/here?a=1&b=2",
    f"{SITE}caf%C3%A9?q=%26&x=%2F",
    "https://www.example.com:8443/p?x=1",
    "https://xn--bcher-kva.example/b%C3%BCcher",
    f"{SITE}café/ünïcode?a=1&b='2'",
    f'{SITE}<tag>"quoted"',
    f"{SITE}tab\there",
]


@pytest.mark.parametrize("loc", _ENTRY_LOCS, ids=repr)
def test_p1_entry_loc_escaped_once_is_escape(loc: str) -> None:
    """The writer escapes a loc on the look that checks it (issue 20): each written
    ``<url>`` is the entry :func:`escape` gives, the same bytes IndexNow compares
    (url_entry), and the loc reads back as itself."""
    scope = loc[: loc.index("/", 8) + 1]
    facts = UrlFacts(loc, LASTMOD, images=(f"{SITE}i.jpg",))
    sinks = MemorySinks()
    write([facts], sinks, scope=scope, base_url=scope)
    data = sinks.data("sitemap-1.xml")
    entry = data[len(URLSET_HEAD) : -len(URLSET_TAIL)]
    assert entry == url_entry(facts)
    assert entry.startswith(f"<url><loc>{_escape_by_the_letter(loc)}</loc>".encode())
    assert [el.text for el in ET.fromstring(data).iter(f"{NS}loc")] == [loc]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(st.sampled_from([*_ESCAPE_ALPHABET, "a", "%", "/", "é"]), max_size=30))
def test_p1_entry_loc_escaped_once_is_escape_on_any_text(tail: str) -> None:
    facts = UrlFacts(f"{SITE}{tail}")
    sinks = MemorySinks()
    skips = Skips()
    write([facts], sinks, on_skip=skips)
    if skips.calls:  # a character XML forbids: refused, as by the full check
        assert [reason for reason, _ in skips.calls] == ["bad_url"]
        assert any(_escape_by_the_letter(c) == "" for c in tail)
        return
    assert all(_escape_by_the_letter(c) != "" for c in tail)
    entry = sinks.data("sitemap-1.xml")[len(URLSET_HEAD) : -len(URLSET_TAIL)]
    assert entry == url_entry(facts)
    assert entry == f"<url><loc>{_escape_by_the_letter(facts.loc)}</loc></url>\n".encode()


class _Trickle(io.BytesIO):
    """A sink that takes at most ``most`` bytes a write and says so, as an unbuffered
    file may (``os.write``)."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most
        self.calls = 0
        self.whole = b""

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.calls += 1
        taken = bytes(data[: self.most])
        self.whole += taken
        return super().write(taken)

    def close(self) -> None:
        pass  # kept open: the test reads it after the writer closed it


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_sink_that_takes_part_of_a_write_gets_the_rest_after(gzipped: bool) -> None:
    """The staging's files are unbuffered: a write may take part of what it is given, and
    the writer hands over the rest until it is all there."""
    sinks: dict[str, _Trickle] = {}

    def open_sink(name: str) -> BinaryIO:
        sinks[name] = _Trickle(most=97)
        return sinks[name]

    whole = MemorySinks()
    write(pages(300), whole, gzip=gzipped)
    write_origin(
        pages(300),
        scope=SITE,
        base_url=SITE,
        lastmod=LASTMOD,
        open_sink=open_sink,
        options=WriterOptions(gzip=gzipped),
    )
    name = "sitemap-1.xml.gz" if gzipped else "sitemap-1.xml"
    assert sinks[name].calls > len(sinks[name].whole) // 97  # it did take it in parts
    for file_name, sink in sinks.items():
        assert sink.whole == whole.raw(file_name), file_name


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_small_file_is_written_in_one_call_and_a_large_one_in_order(gzipped: bool) -> None:
    """A broad crawl's files are small: each reaches its sink in one write (not one for
    gzip's header, one a piece and one for the flush), and a file past what is compressed
    inline still gets its inline bytes first, then the thread's, in order."""
    from scrapy_sitemapgen.sitemaps.writer import _INLINE_BYTES

    for count in (10, 20_000):
        sinks: dict[str, _Trickle] = {}

        def open_sink(name: str, sinks: dict[str, _Trickle] = sinks) -> BinaryIO:
            sinks[name] = _Trickle(most=1 << 30)
            return sinks[name]

        whole = MemorySinks()
        write(pages(count), whole, gzip=gzipped)
        write_origin(
            pages(count),
            scope=SITE,
            base_url=SITE,
            lastmod=LASTMOD,
            open_sink=open_sink,
            options=WriterOptions(gzip=gzipped),
        )
        for file_name, sink in sinks.items():
            assert sink.whole == whole.raw(file_name), file_name
        urlset = sinks["sitemap-1.xml.gz" if gzipped else "sitemap-1.xml"]
        if count == 10:
            assert {name: sink.calls for name, sink in sinks.items()} == dict.fromkeys(sinks, 1)
        else:
            assert len(urlset.whole) > (_INLINE_BYTES if not gzipped else 0)
            assert urlset.calls > 1


def test_a_staged_file_is_closed_once_and_a_failed_open_leaves_nothing_to_report(
    tmp_path: Path,
) -> None:
    """The staging's files are the system calls alone (no file object): closing twice,
    or dropping one that never opened, must neither fail nor report anything."""
    import gc
    import sys

    from scrapy_sitemapgen.publish.staging import NewFile

    reported: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, reported.append
    try:
        with pytest.raises(FileNotFoundError):
            NewFile(str(tmp_path / "missing" / "sitemap.xml"))
        sink = NewFile(str(tmp_path / "sitemap.xml"))
        assert sink.write(b"<urlset/>") == 9
        sink.close()
        sink.close()
        del sink
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert reported == []
    assert (tmp_path / "sitemap.xml").read_bytes() == b"<urlset/>"
