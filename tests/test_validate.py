"""``scrapy sitemapgen-validate`` run as users run it: a subprocess, outside any project.

Broken inputs are small hand-written files under ``tests/broken/`` (one per rule, each
with the exact rule id and line it must be reported at); large or hostile inputs (50,001
URLs, a gzip bomb) are generated into ``tmp_path``; good input is written by the package's
own writer, read from disk and over HTTP.
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import pytest

from scrapy_sitemapgen.sitemaps.facts import Alternate, News, UrlFacts, Video
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin
from scrapy_sitemapgen.validate.checker import (
    SCHEMA_DIR,
    CheckIncomplete,
    InputError,
    Violation,
    validate,
)

from .helpers import XSD_DIR, Route, SiteServer

if TYPE_CHECKING:
    from collections.abc import Iterator

BROKEN = Path(__file__).parent / "broken"
LINE_RE = re.compile(r"^(?P<source>.+?):(?P<line>\d+): (?P<rule>[PG]\d+): (?P<message>.+)$")
SUMMARY_RE = re.compile(r"^(\d+) files?, (\d+) URLs?, (\d+) violations?$")
URLSET_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n'
)


class Run:
    """One run of the command: its output parsed, the exit status checked against it."""

    def __init__(self, result: subprocess.CompletedProcess[str], seconds: float) -> None:
        self.status = result.returncode
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.seconds = seconds
        lines = result.stdout.splitlines()
        self.lines = [LINE_RE.match(line) for line in lines[:-1]]
        assert all(self.lines), result.stdout + result.stderr
        summary = SUMMARY_RE.match(lines[-1]) if lines else None
        assert summary, result.stdout + result.stderr
        self.files, self.urls, self.count = (int(n) for n in summary.groups())
        assert self.count == len(self.lines)
        assert self.status == (1 if self.count else 0), result.stderr

    def found(self) -> list[tuple[int, str]]:
        """(line, rule) of every violation, sorted."""
        return sorted((int(m["line"]), m["rule"]) for m in self.lines if m is not None)

    def messages(self) -> list[str]:
        return [m["message"] for m in self.lines if m is not None]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return env


def command(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """``scrapy sitemapgen-validate ARGS`` in ``cwd`` (a temp dir: no project is found)."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "sitemapgen-validate", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )


def run(cwd: Path, *args: object) -> Run:
    """The command on valid arguments: violations are expected, usage errors are not."""
    start = time.monotonic()
    result = command(cwd, *args)
    assert result.returncode != 2, f"usage error: {result.stdout}{result.stderr}"
    return Run(result, time.monotonic() - start)


# --- the schemas the package ships are the schemas the tests use ---------------------------


def test_shipped_schemas_are_the_test_schemas() -> None:
    """The validator reads the schemas the tests validate against (helpers.XSD_DIR, the
    package's own folder): one set of files, not two copies to keep equal."""
    shipped = {p.name: p.read_bytes() for p in SCHEMA_DIR.glob("*.xsd")}
    tested = {p.name: p.read_bytes() for p in XSD_DIR.glob("*.xsd")}
    assert sorted(shipped) == sorted(tested)
    for name, data in tested.items():
        assert shipped[name] == data, f"{SCHEMA_DIR / name} differs from {XSD_DIR / name}"


# --- one broken fixture per rule, all checked in one run -----------------------------------

#: file (or folder entry point) -> the exact (line, rule) pairs it must produce.
EXPECTED: dict[str, list[tuple[int, str]]] = {
    "p1-unescaped-ampersand.xml": [(4, "P1")],
    "p1-latin1.xml": [(1, "P1"), (3, "P1")],  # the declaration, then the first non-UTF-8 byte
    "p2-empty-urlset.xml": [(2, "P2")],
    "p2-missing-loc.xml": [(5, "P2")],
    "p3-relative-loc.xml": [(4, "P3")],
    "p3-not-encoded.xml": [(4, "P3"), (5, "P3")],
    "p4-lastmod-no-zone.xml": [(5, "P4")],
    "p5-changefreq.xml": [(9, "P5")],
    "p6-priority.xml": [(9, "P6")],
    "p8-index-missing-file.xml": [(4, "P8")],
    "p11-text-sitemap.txt": [(2, "P3"), (3, "P2"), (4, "P3")],
    "p12-other-origin.xml": [(4, "P12")],
    "p14-inner-namespace.xml": [(5, "P14")],
    "g5-old-namespace.xml": [(2, "G5")],
    "g7-video-no-title.xml": [(8, "G7")],
    "g8-video-is-page.xml": [(10, "G8")],
    "entity-expansion.xml": [(2, "P1")],
    "external-entity.xml": [(2, "P1")],
    "external-dtd.xml": [(2, "P1")],
    "duplicate-across-files/sitemap.xml": [],
    "duplicate-across-files/sitemap-1.xml": [],
    "duplicate-across-files/sitemap-2.xml": [(4, "P2")],
    "p8-index-of-indexes/sitemap.xml": [(3, "P8")],  # it lists an index
    "p8-index-of-indexes/inner-index.xml": [],
    "p9-index-two-sites/sitemap.xml": [(4, "P9")],
    "p9-index-two-sites/p9-a.xml": [],
    "p9-index-two-sites/p9-b.xml": [],
    "p15-robots/robots.txt": [(3, "P15"), (4, "P15")],
    "p15-robots/p15-sitemap.xml": [],
}
#: What the run is given: every single file, and each folder's entry point.
SOURCES = [n for n in EXPECTED if "/" not in n or n.endswith(("/sitemap.xml", "/robots.txt"))]


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run(tmp_path_factory.mktemp("cwd"), *(BROKEN / name for name in SOURCES))


def test_every_broken_fixture_is_covered() -> None:
    assert {str(p.relative_to(BROKEN)) for p in BROKEN.rglob("*") if p.is_file()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_fixture_reports_rule_and_line(broken_run: Run, name: str) -> None:
    found = [
        (int(m["line"]), m["rule"])
        for m in broken_run.lines
        if m is not None and m["source"].endswith(f"/{name}")
    ]
    assert sorted(found) == EXPECTED[name], broken_run.stdout


def test_broken_run_summary(broken_run: Run) -> None:
    assert broken_run.status == 1
    assert broken_run.count == sum(len(v) for v in EXPECTED.values())


def test_messages_explain(broken_run: Run) -> None:
    text = broken_run.stdout
    assert "a raw '&' (escape it as &amp;)" in text
    assert "declared encoding 'ISO-8859-1'; a sitemap is UTF-8" in text
    assert "duplicate <loc> https://example.com/dup/b: already listed at " in text
    assert "duplicate-across-files/sitemap-1.xml:4" in text  # both places of the duplicate
    assert "inner-index.xml is a sitemap index: an index lists sitemaps, not other indexes" in text
    assert "https://example.com/p8-no-such-sitemap.xml.gz is listed, but " in text


def test_entities_are_never_expanded(broken_run: Run) -> None:
    assert "lollollol" not in broken_run.stdout
    assert "root:" not in broken_run.stdout  # /etc/passwd, named by external-entity.xml
    message = next(m for m in broken_run.messages() if "(lol, lol1" in m)
    assert "the DOCTYPE declares entities" in message


def test_base_url_checks_the_published_folder(tmp_path: Path) -> None:
    result = run(
        tmp_path, "--base-url", "https://example.com/catalog/", BROKEN / "p12-other-origin.xml"
    )
    assert result.found() == [(4, "P12"), (5, "P12")]  # another host; outside /catalog/
    assert run(
        tmp_path, "--base-url", "https://example.com/", BROKEN / "p3-relative-loc.xml"
    ).found() == [(4, "P3")]


def test_base_url_checks_index_entries_same_site(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "--base-url",
        "https://example.org/",
        BROKEN / "p9-index-two-sites" / "sitemap.xml",
    )
    # The index (now known at example.org) lists a sitemap of example.com (P9); that
    # sitemap, published at the URL the index gives, lists its own site: fine.
    assert result.found() == [(3, "P9")]


# --- generated: counts and sizes ------------------------------------------------------------


def _gzip_urlset(path: Path, count: int, width: int = 0) -> None:
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(URLSET_HEAD.encode())
        pad = "x" * width
        for number in range(count):
            out.write(f"<url><loc>https://example.com/p7/{pad}{number}</loc></url>\n".encode())
        out.write(b"</urlset>\n")


def test_p7_more_than_50000_urls(tmp_path: Path) -> None:
    path = tmp_path / "p7-50001-urls.xml.gz"
    _gzip_urlset(path, 50_001)
    result = run(tmp_path, path)
    # Line 1 is the declaration, line 2 <urlset>: URL n is on line n + 2.
    assert result.found() == [(50_003, "P7")]
    assert result.urls == 50_001
    assert "50,001 <url> entries; at most 50,000" in result.stdout


def test_max_bytes_legacy_limit(tmp_path: Path) -> None:
    path = tmp_path / "eleven-mb.xml.gz"
    _gzip_urlset(path, 5_200, width=2_000)  # ~10.7 MB uncompressed, ~0.1 MB on disk
    assert run(tmp_path, path).found() == []
    legacy = run(tmp_path, "--max-bytes", 10_485_760, path)
    assert "more than 10,485,760 bytes uncompressed" in legacy.stdout
    # Reported on the line that holds byte 10,485,761: URL n is on line n + 3.
    total = len(URLSET_HEAD.encode())
    for number in range(5_200):
        total += len(f"<url><loc>https://example.com/p7/{'x' * 2_000}{number}</loc></url>\n")
        if total > 10_485_760:
            break
    assert legacy.found() == [(number + 3, "G2")]


def test_g7_images_and_news_per_file(tmp_path: Path) -> None:
    images = "".join(
        f"<image:image><image:loc>https://example.com/g7/{n}.jpg</image:loc></image:image>"
        for n in range(1_001)
    )
    news = (
        "<news:news><news:publication><news:name>Daily</news:name><news:language>en</news:language>"
        "</news:publication><news:publication_date>2024-01-02</news:publication_date>"
        "<news:title>T</news:title></news:news>"
    )
    path = tmp_path / "g7.xml"
    path.write_text(
        URLSET_HEAD
        + f"<url><loc>https://example.com/g7/images</loc>{images}</url>\n"
        + "".join(
            f"<url><loc>https://example.com/g7/news/{n}</loc>{news}</url>\n" for n in range(1_001)
        )
        + "</urlset>\n",
        encoding="utf-8",
    )
    # Line 3: the <url> with 1,001 images; lines 4..1004 the news entries: the 1,001st is
    # on line 1004.
    assert run(tmp_path, path).found() == [(3, "G7"), (1_004, "G7")]


def test_gzip_bomb_fails_fast_with_little_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xml.gz"
    zeros = bytes(1 << 20)
    with (
        path.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out,
    ):
        out.write(URLSET_HEAD.encode() + b"<url><loc>https://example.com/")
        for _ in range(200):  # 200 MiB of zeros, streamed: never in memory at once
            out.write(zeros)
        out.write(b"</loc></url>\n</urlset>\n")
    assert path.stat().st_size < 1_000_000
    # A fresh parent whose only child is the command, so RUSAGE_CHILDREN is the command's.
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.monotonic()\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(r.returncode, time.monotonic() - start, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(r.stdout, end='')\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            sys.executable,
            "-m",
            "scrapy",
            "sitemapgen-validate",
            str(path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    first, *output = result.stdout.splitlines()
    status, seconds, max_rss_kib = first.split()
    assert status == "1"
    assert all(LINE_RE.match(line) for line in output[:-1])  # one line per violation
    assert f"{path}:3: G2: more than 52,428,800 bytes uncompressed" in "\n".join(output)
    assert float(seconds) < 30
    assert int(max_rss_kib) < 200 * 1024  # all 200 MiB would not fit; one chunk does


def test_gzip_of_empty_members_stops_at_the_stored_size(tmp_path: Path) -> None:
    # Empty gzip members decompress to nothing: the uncompressed count never grows, so the
    # stored size is capped too (max_bytes + 1 MiB).
    path = tmp_path / "members.xml.gz"
    empty = gzip.compress(b"", mtime=0)
    with path.open("wb") as out:
        out.write(gzip.compress(URLSET_HEAD.encode(), mtime=0))
        out.write(empty * 70_000)  # 1.4 MB stored
    result = run(tmp_path, "--max-bytes", 100_000, path)
    assert result.found() == [(0, "G2")]
    assert "more than 1,148,576 bytes as stored" in result.stdout


# --- good sets written by the package itself -----------------------------------------------


def _facts(origin: str, count: int) -> Iterator[UrlFacts]:
    for n in range(count):
        page = f"{origin}page/{n}?q=a&b=%22c%22"
        yield UrlFacts(
            loc=page,
            lastmod="2024-01-02T03:04:05+00:00",
            changefreq="daily",
            priority="0.5",
            images=(f"{origin}img/{n}.jpg", f"{origin}img/{n}-2.jpg"),
            videos=(
                Video(
                    thumbnail_loc=f"{origin}thumb/{n}.jpg",
                    title=f"Video <{n}> & more",
                    description='It\'s "quoted"',
                    content_loc=f"{origin}video/{n}.mp4",
                    duration=60,
                ),
            )
            if n % 2
            else (),
            alternates=(Alternate("en", page), Alternate("de", f"{origin}de/page/{n}")),
            news=News("Daily", "en", "2024-01-02T03:04:05+00:00", f"Title {n}")
            if n % 3 == 0
            else None,
        )


def write_set(
    folder: Path, origin: str, count: int = 7, gzipped: bool = True, base_url: str | None = None
) -> None:
    """A real set: urlsets of 3 URLs, a news sitemap, the index (published at ``base_url``,
    the origin's root by default), and a robots.txt naming the index."""
    folder.mkdir(parents=True, exist_ok=True)
    base_url = base_url or origin

    def open_sink(name: str) -> BinaryIO:
        return (folder / name).open("wb")

    output = write_origin(
        _facts(origin, count),
        news=[f for f in _facts(origin, count) if f.news is not None],
        scope=origin,
        base_url=base_url,
        lastmod="2024-01-02T03:04:05+00:00",
        open_sink=open_sink,
        options=WriterOptions(max_urls=3, gzip=gzipped),
    )
    assert len(output.sitemaps) == 3 and output.news and output.indexes
    (folder / "robots.txt").write_text(
        f"User-agent: *\nSitemap: {base_url}sitemap.xml\n", encoding="utf-8"
    )


def test_generated_set_passes(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/")
    for args in (
        ["site/robots.txt"],
        ["site/sitemap.xml"],
        ["--base-url", "https://example.com/", "site/robots.txt"],
        [
            "--base-url",
            "https://example.com/sitemap.xml",
            (tmp_path / "site" / "sitemap.xml").as_uri(),
        ],
    ):
        result = run(tmp_path, *args)
        assert (result.status, result.found()) == (0, []), result.stdout
    # The index, 3 urlsets and 1 news sitemap; the news entries repeat urlset pages, which
    # is allowed (each kind is deduplicated on its own).
    assert (result.files, result.urls) == (5, 7 + 3)


def test_sitemaps_in_a_folder_need_the_robots_txt(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/", base_url="https://example.com/sitemaps/")
    # Published in /sitemaps/, the urlsets may only list pages under /sitemaps/ (P12)...
    alone = run(tmp_path, "--base-url", "https://example.com/sitemaps/", "site/sitemap.xml")
    assert {rule for _, rule in alone.found()} == {"P12"}
    assert alone.count == 7 + 3
    # ...unless the site's robots.txt names them (P13): then the whole site is theirs.
    assert run(tmp_path, "--base-url", "https://example.com/", "site/robots.txt").found() == []


def test_in_process_api(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/", gzipped=False)
    assert validate([str(tmp_path / "site" / "sitemap.xml")]) == []
    problems = validate([str(BROKEN / "p5-changefreq.xml")])
    assert [(v.line, v.rule) for v in problems] == [(9, "P5")]
    assert str(problems[0]) == (
        f"{BROKEN / 'p5-changefreq.xml'}:9: P5: <url> #2: <changefreq> 'often' is not valid: "
        "the protocol expects one of always, hourly, daily, weekly, monthly, yearly, never"
    )
    assert problems[0] == Violation(str(BROKEN / "p5-changefreq.xml"), 9, "P5", problems[0].message)


def test_entities_declared_before_a_root_that_fails_are_reported_as_entities(
    tmp_path: Path,
) -> None:
    """A DOCTYPE that declares entities breaks P1 whether libxml2 reads on to the root or
    stops before it (its entity amplification limit does, in the libxml2 that lxml 6.2
    bundles): the same violation, at the DOCTYPE's line, either way. Here the parse fails
    before the root whatever libxml2's version: the root's start tag is broken."""
    path = tmp_path / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE urlset [\n  <!ENTITY a "x">\n  <!ENTITY % b "y">\n]>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"<url>\n',
        encoding="utf-8",
    )
    problems = validate([str(path)])
    assert [(v.line, v.rule) for v in problems] == [(2, "P1")]
    assert problems[0].message.startswith("the DOCTYPE declares entities (a, b): ")


def test_max_files(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/")
    result = run(tmp_path, "--max-files", 3, "site/sitemap.xml")
    # The index and two urlsets are read; the third urlset, listed on line 5, is not.
    assert result.found() == [(5, "P8")]
    assert result.files == 3
    assert "more than 3 files (raise --max-files)" in result.stdout


# --- over HTTP ------------------------------------------------------------------------------


@pytest.fixture
def http_site(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The test server on 127.0.0.1 serving the files of ``tmp_path/www``: yields (root URL,
    folder)."""
    folder = tmp_path / "www"
    folder.mkdir()
    with SiteServer(static=folder) as server:
        yield server.url("/"), folder


def test_http_set_passes_and_a_missing_file_is_reported(
    tmp_path: Path, http_site: tuple[str, Path]
) -> None:
    root, folder = http_site
    write_set(folder, root)
    result = run(tmp_path, f"{root}robots.txt")
    assert (result.status, result.found(), result.files) == (0, [], 6), (
        result.stdout
    )  # robots.txt too
    (folder / "sitemap-2.xml.gz").unlink()
    missing = run(tmp_path, f"{root}sitemap.xml")
    assert [(m["source"], int(m["line"]), m["rule"]) for m in missing.lines if m] == [
        (f"{root}sitemap.xml", 4, "P8")
    ]
    assert f"{root}sitemap-2.xml.gz is listed, but cannot be fetched: HTTP 404" in missing.stdout
    # The sitemap URL itself missing: nothing announced can be read (P15).
    assert run(tmp_path, f"{root}nothing.xml").found() == [(0, "P15")]


def test_http_urls_must_be_under_the_sitemap_folder(
    tmp_path: Path, http_site: tuple[str, Path]
) -> None:
    root, folder = http_site
    write_set(folder, "https://example.com/")  # served from 127.0.0.1, listing example.com
    result = run(tmp_path, f"{root}sitemap-1.xml.gz")
    assert result.found() == [(3, "P12"), (4, "P12"), (5, "P12")]


def _endless() -> Iterator[bytes]:
    """An XML comment that never ends."""
    yield URLSET_HEAD.encode() + b"<!--"
    yield from itertools.repeat(b"-" * 65536)


def _trickle() -> Iterator[bytes]:
    """An XML comment that never ends, sent a byte every 0.1 s."""
    yield URLSET_HEAD.encode() + b"<!--"
    while True:
        time.sleep(0.1)
        yield b"-"


@pytest.fixture
def hostile_server() -> Iterator[SiteServer]:
    """A redirect to FTP, an answer after 10 s, an endless body, a body that trickles in;
    what was requested."""
    with SiteServer() as server:
        server.routes.update(
            {
                "/to-ftp": Route(
                    302, content_type=None, headers={"Location": "ftp://127.0.0.1/sitemap.xml"}
                ),
                "/slow": Route(content_type=None, delay=10),
                "/endless.xml": Route(content_type="application/xml", stream=_endless),
                "/trickle.xml": Route(content_type="application/xml", stream=_trickle),
            }
        )
        yield server


@pytest.fixture
def hostile(hostile_server: SiteServer) -> str:
    return hostile_server.url("/")


def test_parsing_reads_nothing_from_the_network(
    tmp_path: Path, hostile: str, hostile_server: SiteServer
) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<!DOCTYPE urlset SYSTEM "{hostile}evil.dtd" [\n'
        f'  <!ENTITY % remote SYSTEM "{hostile}evil.ent"> %remote;\n'
        f'  <!ENTITY page SYSTEM "{hostile}page">\n'
        "]>\n"
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <url><loc>https://example.com/&page;</loc></url>\n"
        "</urlset>\n",
        encoding="utf-8",
    )
    assert run(tmp_path, path).found() == [(2, "P1")]
    assert hostile_server.requested == []


def test_http_redirect_to_another_scheme_is_refused(tmp_path: Path, hostile: str) -> None:
    result = run(tmp_path, f"{hostile}to-ftp")
    assert result.found() == [(0, "P15")]
    assert "redirect to a non-HTTP URL refused: ftp://127.0.0.1/sitemap.xml" in result.stdout


def test_http_timeout(tmp_path: Path, hostile: str) -> None:
    """No answer in time says nothing about the sitemap: an input error, not P15."""
    start = time.monotonic()
    result = command(tmp_path, "--timeout", "0.5", f"{hostile}slow")
    assert result.returncode == 2
    assert result.stderr == f"{hostile}slow: cannot be fetched: no answer within 0.5 s (timeout)\n"
    assert time.monotonic() - start < 8  # the server answers after 10 s


def test_http_endless_body_stops_at_the_size_cap(tmp_path: Path, hostile: str) -> None:
    result = run(tmp_path, "--max-bytes", 1_000_000, f"{hostile}endless.xml")
    assert [rule for _, rule in result.found()] == ["G2"]
    assert result.seconds < 30


# --- usage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["no-such-file.xml"],
        ["ftp://example.com/sitemap.xml"],
        ["--max-bytes", "0", str(BROKEN / "p6-priority.xml")],
        ["--max-bytes", "60000000", str(BROKEN / "p6-priority.xml")],
        ["--max-files", "0", str(BROKEN / "p6-priority.xml")],
        ["--base-url", "/relative/", str(BROKEN / "p6-priority.xml")],
        [
            "--base-url",
            "https://example.com/x.xml",
            str(BROKEN / "p6-priority.xml"),
            str(BROKEN / "p5-changefreq.xml"),
        ],
        ["--no-such-option", str(BROKEN / "p6-priority.xml")],
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    result = command(tmp_path, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_listed_outside_a_project(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "-h"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert "no active project" in result.stdout
    assert "sitemapgen-validate" in result.stdout


# --- schema errors in the protocol's words -------------------------------------------------

URL_EXPECTS = "the protocol expects <loc> first, then optional <lastmod>, <changefreq>, <priority>"
INDEX_EXPECTS = "the protocol expects <loc> first, then an optional <lastmod>"
URL_HOLDS = (
    "a <url> holds <loc>, <lastmod>, <changefreq> and <priority>; anything else goes in an "
    "extension's namespace, declared on the root"
)
SITEMAP_HOLDS = "a <sitemap> holds <loc> and an optional <lastmod>, nothing else"
W3C = (
    "the protocol expects a W3C Datetime: YYYY-MM-DD, or a date and time with a time zone, "
    "e.g. 2024-01-02T03:04:05+00:00"
)
LOC_RULE = (
    "the protocol expects an absolute http(s) URL, percent-encoded, of at most 2,047 characters"
)
FREQ_RULE = "the protocol expects one of always, hourly, daily, weekly, monthly, yearly, never"
LOC3 = "<loc>https://example.com/s/3</loc>"
IMAGE = "<image:image><image:loc>https://example.com/s/3.jpg</image:loc></image:image>"

#: The third <url> of a urlset (from line 5 on) -> the one violation it gives: (line, rule,
#: message). Two good <url>s come first, on lines 3 and 4.
URL_CASES: dict[str, tuple[str, int, str, str]] = {
    "lastmod before loc": (
        f"<url><lastmod>2024-01-02</lastmod>{LOC3}</url>",
        5,
        "P2",
        f"<url> #3: <lastmod> before <loc>: {URL_EXPECTS}",
    ),
    "priority before changefreq, each on its line": (
        f"<url>\n  {LOC3}\n  <priority>0.5</priority>\n  <changefreq>daily</changefreq>\n</url>",
        8,
        "P2",
        f"<url> #3: <priority> before <changefreq>: {URL_EXPECTS}",
    ),
    "changefreq before lastmod": (
        f"<url>{LOC3}<changefreq>daily</changefreq><lastmod>2024-01-02</lastmod></url>",
        5,
        "P2",
        f"<url> #3: <changefreq> before <lastmod>: {URL_EXPECTS}",
    ),
    "two locs": (
        f"<url>{LOC3}{LOC3}</url>",
        5,
        "P2",
        "<url> #3: a second <loc>: a <url> holds exactly one <loc>",
    ),
    "two lastmods": (
        f"<url>{LOC3}<lastmod>2024-01-02</lastmod><lastmod>2024-01-03</lastmod></url>",
        5,
        "P2",
        "<url> #3: a second <lastmod>: a <url> holds at most one <lastmod>",
    ),
    "an unknown element in the sitemap namespace": (
        f"<url>{LOC3}<title>T</title></url>",
        5,
        "P2",
        f"<url> #3: <title> is no sitemap element: {URL_HOLDS}",
    ),
    "an element in no namespace": (
        f'<url>{LOC3}<title xmlns="">T</title></url>',
        5,
        "P14",
        f"<url> #3: <title> is in no namespace: {URL_HOLDS}",
    ),
    "no loc": (
        "<url>\n  <lastmod>2024-01-02</lastmod>\n</url>",
        6,
        "P2",
        f"<url> #3: no <loc>: {URL_EXPECTS}",
    ),
    "nothing inside": ("<url></url>", 5, "P2", f"<url> #3: no <loc>: {URL_EXPECTS}"),
    "only an extension": (f"<url>{IMAGE}</url>", 5, "P2", f"<url> #3: no <loc>: {URL_EXPECTS}"),
    "an extension before loc": (
        f"<url>{IMAGE}{LOC3}</url>",
        5,
        "P2",
        f"<url> #3: <image:image> before <loc>: {URL_EXPECTS}",
    ),
    "an extension before lastmod": (
        f"<url>{LOC3}{IMAGE}<lastmod>2024-01-02</lastmod></url>",
        5,
        "P2",
        "<url> #3: <image:image> before <lastmod>: the protocol expects extension elements "
        "after <loc>, <lastmod>, <changefreq> and <priority>",
    ),
    "changefreq not a word of the protocol": (
        f"<url>{LOC3}<changefreq>often</changefreq></url>",
        5,
        "P5",
        f"<url> #3: <changefreq> 'often' is not valid: {FREQ_RULE}",
    ),
    "changefreq capitalised": (
        f"<url>{LOC3}<changefreq>Daily</changefreq></url>",
        5,
        "P5",
        f"<url> #3: <changefreq> 'Daily' is not valid: {FREQ_RULE}",
    ),
    "priority above 1": (
        f"<url>{LOC3}<priority>1.5</priority></url>",
        5,
        "P6",
        "<url> #3: <priority> '1.5' is not valid: the protocol expects a number from 0.0 to 1.0",
    ),
    "priority not a number": (
        f"<url>{LOC3}<priority>high</priority></url>",
        5,
        "P6",
        "<url> #3: <priority> 'high' is not valid: the protocol expects a number from 0.0 to 1.0",
    ),
    "lastmod not a date": (
        f"<url>{LOC3}<lastmod>yesterday</lastmod></url>",
        5,
        "P4",
        f"<url> #3: <lastmod> 'yesterday' is not valid: {W3C}",
    ),
    "lastmod without a time zone": (
        f"<url>{LOC3}<lastmod>2024-01-02T03:04:05</lastmod></url>",
        5,
        "P4",
        f"<url> #3: <lastmod> '2024-01-02T03:04:05' has a time but no time zone: {W3C}",
    ),
    "lastmod on a day that does not exist": (
        f"<url>{LOC3}<lastmod>2024-02-30</lastmod></url>",
        5,
        "P4",
        f"<url> #3: <lastmod> '2024-02-30' is not valid: {W3C}",
    ),
    "lastmod empty": (
        f"<url>{LOC3}<lastmod></lastmod></url>",
        5,
        "P4",
        f"<url> #3: <lastmod> is empty: {W3C}",
    ),
    "lastmod holding an element": (
        f"<url>{LOC3}<lastmod><b>2024-01-02</b></lastmod></url>",
        5,
        "P4",
        f"<url> #3: <lastmod> holds an element, <b>: {W3C}",
    ),
    "loc relative": (
        "<url><loc>/s/3</loc></url>",
        5,
        "P3",
        f"<url> #3: <loc> '/s/3' is not valid (not an absolute http(s) URL): {LOC_RULE}",
    ),
    "loc with a space": (
        "<url><loc>https://example.com/s 3</loc></url>",
        5,
        "P3",
        "<url> #3: <loc> 'https://example.com/s 3' is not valid (character ' ' must be "
        f"percent-encoded): {LOC_RULE}",
    ),
    "text inside the url": (
        f"<url>{LOC3}stray</url>",
        5,
        "P2",
        "<url> #3: text 'stray' directly inside <url>",
    ),
    "an attribute on the url": (
        f'<url id="3">{LOC3}</url>',
        5,
        "P2",
        "<url> #3: unexpected attribute id on <url>",
    ),
    "an extension's own order": (
        f"<url>{LOC3}<image:image><image:title>T</image:title></image:image></url>",
        5,
        "G7",
        "<url> #3: <image:title>: not expected here; expected <image:loc>",
    ),
    "an extension nobody declared": (
        f"<url>{LOC3}<x:rating>5</x:rating></url>",
        5,
        "P14",
        "<url> #3: <{urn:example:x}rating> is no element of an extension the validator knows "
        "(image, video, news, xhtml:link)",
    ),
}


@pytest.mark.parametrize("case", sorted(URL_CASES))
def test_urlset_schema_errors_in_the_protocols_words(tmp_path: Path, case: str) -> None:
    entry, line, rule, message = URL_CASES[case]
    path = tmp_path / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:x="urn:example:x">\n'
        "<url><loc>https://example.com/s/1</loc></url>\n"
        "<url><loc>https://example.com/s/2</loc><lastmod>2024-01-02</lastmod></url>\n"
        f"{entry}\n</urlset>\n",
        encoding="utf-8",
    )
    assert validate([str(path)]) == [Violation(str(path), line, rule, message)]


#: The third <sitemap> of an index (line 5) -> its one violation, as in URL_CASES.
INDEX_CASES: dict[str, tuple[str, int, str, str]] = {
    "lastmod before loc": (
        "<sitemap><lastmod>2024-01-02</lastmod><loc>https://example.com/s3.xml</loc></sitemap>",
        5,
        "P8",
        f"<sitemap> #3: <lastmod> before <loc>: {INDEX_EXPECTS}",
    ),
    "two lastmods": (
        "<sitemap><loc>https://example.com/s3.xml</loc><lastmod>2024-01-02</lastmod>"
        "<lastmod>2024-01-03</lastmod></sitemap>",
        5,
        "P8",
        "<sitemap> #3: a second <lastmod>: a <sitemap> holds at most one <lastmod>",
    ),
    "an element of a urlset": (
        "<sitemap><loc>https://example.com/s3.xml</loc><changefreq>daily</changefreq></sitemap>",
        5,
        "P8",
        f"<sitemap> #3: <changefreq> is no sitemap element: {SITEMAP_HOLDS}",
    ),
    "an extension element": (
        f"<sitemap><loc>https://example.com/s3.xml</loc>{IMAGE}</sitemap>",
        5,
        "P8",
        f"<sitemap> #3: <image:image> in a <sitemap>: {SITEMAP_HOLDS}",
    ),
    "no loc": (
        "<sitemap><lastmod>2024-01-02</lastmod></sitemap>",
        5,
        "P8",
        f"<sitemap> #3: no <loc>: {INDEX_EXPECTS}",
    ),
    "nothing inside": ("<sitemap/>", 5, "P8", f"<sitemap> #3: no <loc>: {INDEX_EXPECTS}"),
    "lastmod not a date": (
        "<sitemap><loc>https://example.com/s3.xml</loc><lastmod>soon</lastmod></sitemap>",
        5,
        "P4",
        f"<sitemap> #3: <lastmod> 'soon' is not valid: {W3C}",
    ),
    "loc relative": (
        "<sitemap><loc>s3.xml</loc></sitemap>",
        5,
        "P3",
        f"<sitemap> #3: <loc> 's3.xml' is not valid (not an absolute http(s) URL): {LOC_RULE}",
    ),
}


@pytest.mark.parametrize("case", sorted(INDEX_CASES))
def test_index_schema_errors_in_the_protocols_words(tmp_path: Path, case: str) -> None:
    entry, line, rule, message = INDEX_CASES[case]
    for n in (1, 2, 3):  # the sitemaps the index lists, beside it
        (tmp_path / f"s{n}.xml").write_text(
            f"{URLSET_HEAD}<url><loc>https://example.com/page/{n}</loc></url>\n</urlset>\n"
        )
    path = tmp_path / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
        "<sitemap><loc>https://example.com/s1.xml</loc></sitemap>\n"
        "<sitemap><loc>https://example.com/s2.xml</loc><lastmod>2024-01-02</lastmod></sitemap>\n"
        f"{entry}\n</sitemapindex>\n",
        encoding="utf-8",
    )
    assert validate([str(path)]) == [Violation(str(path), line, rule, message)]


def test_an_index_read_before_an_index_lists_it(tmp_path: Path) -> None:
    """An index checked first as a source of its own is still an index when another index
    lists it (P8), whatever the order of the sources."""
    folder = BROKEN / "p8-index-of-indexes"
    result = run(tmp_path, folder / "inner-index.xml", folder / "sitemap.xml")
    assert [(m["source"], int(m["line"]), m["rule"]) for m in result.lines if m] == [
        (str(folder / "inner-index.xml"), 3, "P8"),  # it lists a sitemap that is not there
        (str(folder / "sitemap.xml"), 3, "P8"),
    ]
    assert result.messages()[1] == (
        f"{folder / 'inner-index.xml'} is a sitemap index: an index lists sitemaps, not other "
        "indexes; not followed"
    )


# --- a .gz that is no gzip ------------------------------------------------------------------

#: (file name, its bytes, the first bytes as the message shows them)
NOT_GZIP = {
    "plain XML": (
        "sitemap-1.xml.gz",
        (URLSET_HEAD + "<url><loc>https://example.com/</loc></url></urlset>\n").encode(),
        "3c 3f 78 6d 6c 20 76 65, '<?xml ve'",
    ),
    "an HTML error page": (
        "sitemap-1.xml.gz",
        b"<!DOCTYPE html>\n<html><body>Not here</body></html>\n",
        "3c 21 44 4f 43 54 59 50, '<!DOCTYP'",
    ),
    "bzip2": ("sitemap.xml.gz", b"BZh91AY&SY\x00\x01\x02", "42 5a 68 39 31 41 59 26, 'BZh91AY&'"),
    "binary": ("urls.txt.gz", bytes(range(16)), "00 01 02 03 04 05 06 07, '........'"),
}


def _not_gzip(first: str) -> str:
    return (
        f"not gzip (the first bytes are {first}; gzip data starts with 1f 8b): a .gz file "
        "must be gzip-compressed; not checked further"
    )


@pytest.mark.parametrize("case", sorted(NOT_GZIP))
def test_a_gz_that_is_not_gzip(tmp_path: Path, http_site: tuple[str, Path], case: str) -> None:
    name, data, first = NOT_GZIP[case]
    root, folder = http_site
    (tmp_path / name).write_bytes(data)
    (folder / name).write_bytes(data)
    for source in (tmp_path / name, f"{root}{name}"):
        result = run(tmp_path, source)
        assert [(m["source"], int(m["line"]), m["rule"]) for m in result.lines if m] == [
            (str(source), 0, "P1")
        ]
        assert result.messages() == [_not_gzip(first)]
        assert result.status == 1


def test_a_listed_gz_that_is_not_gzip(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/")
    part = tmp_path / "site" / "sitemap-2.xml.gz"
    part.write_bytes(gzip.decompress(part.read_bytes()))
    result = run(tmp_path, "site/sitemap.xml")
    assert [(m["source"], int(m["line"])) for m in result.lines if m] == [
        ("site/sitemap-2.xml.gz", 0)
    ]
    assert result.messages() == [_not_gzip("3c 3f 78 6d 6c 20 76 65, '<?xml ve'")]


# --- a folder as the source ------------------------------------------------------------------


def test_a_folder_checks_every_sitemap_in_its_tree(tmp_path: Path) -> None:
    out = tmp_path / "sitemaps"
    write_set(out / "https_example.com_443", "https://example.com/")
    write_set(out / "https_example.org_443", "https://example.org/", gzipped=False)
    (out / "https_example.org_443" / "manifest.json").write_text("{}")
    (out / "https_example.org_443" / "notes.xml").write_text("not a sitemap, not read")
    (out / "README.txt").write_text("not a sitemap either")
    result = run(tmp_path, "sitemaps")
    assert (result.status, result.found()) == (0, []), result.stdout
    # Each set: robots.txt, the index, 3 urlsets and a news sitemap.
    assert (result.files, result.urls) == (12, 2 * (7 + 3))
    # A sitemap no index lists is checked all the same.
    (out / "https_example.org_443" / "sitemap-9.xml").write_text(
        f"{URLSET_HEAD}<url><loc>https://example.org/nine</loc>"
        "<changefreq>often</changefreq></url>\n</urlset>\n"
    )
    again = run(tmp_path, "sitemaps/")
    assert [(m["source"], int(m["line"]), m["rule"]) for m in again.lines if m] == [
        ("sitemaps/https_example.org_443/sitemap-9.xml", 3, "P5")
    ]
    assert again.messages() == [f"<url> #1: <changefreq> 'often' is not valid: {FREQ_RULE}"]
    assert again.files == 13


def test_a_folder_is_read_robots_txt_first(tmp_path: Path) -> None:
    """The robots.txt of a folder is read before its sitemaps, so that they get the site it
    grants them (P13), as when the robots.txt is the source."""
    write_set(tmp_path / "site", "https://example.com/", base_url="https://example.com/sitemaps/")
    assert run(tmp_path, "--base-url", "https://example.com/", "site").found() == []


def test_a_folder_with_nothing_to_check(tmp_path: Path) -> None:
    (tmp_path / "empty" / "deeper").mkdir(parents=True)
    (tmp_path / "empty" / "deeper" / "index.html").write_text("<p>hi</p>")
    result = command(tmp_path, "empty")
    assert result.returncode == 2
    assert result.stderr == (
        "empty: nothing to check: no robots.txt and no sitemap*.xml, .xml.gz, .txt or .txt.gz "
        "file in this folder or below\n"
    )
    assert result.stdout == "0 files, 0 URLs, 0 violations, 1 input error\n"


def test_a_folder_needs_a_folder_base_url(tmp_path: Path) -> None:
    write_set(tmp_path / "site", "https://example.com/")
    result = command(tmp_path, "--base-url", "https://example.com/sitemap.xml", "site")
    assert result.returncode == 2
    assert "error: with a folder, --base-url must be a folder URL ending in /" in result.stderr


# --- input errors: exit status 2, one line on stderr ---------------------------------------


@pytest.fixture(scope="module")
def refused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: args -> (the stderr line, the summary), with {tmp}, {port}, {root} (the http_site) and
#: {hostile} filled in.
INPUT_ERRORS: dict[str, tuple[list[str], str, str]] = {
    "a missing local file": (
        ["{tmp}/none.xml"],
        "{tmp}/none.xml: cannot be read: no such file",
        "0 files, 0 URLs, 0 violations, 1 input error",
    ),
    "a missing file:// URI": (
        ["file://{tmp}/none.xml"],
        "file://{tmp}/none.xml: cannot be read: no such file",
        "0 files, 0 URLs, 0 violations, 1 input error",
    ),
    "a socket, no regular file": (
        ["{tmp}/sitemap.sock"],
        "{tmp}/sitemap.sock: cannot be read: not a regular file",
        "0 files, 0 URLs, 0 violations, 1 input error",
    ),
    "a refused connection": (
        ["http://127.0.0.1:{port}/sitemap.xml"],
        "http://127.0.0.1:{port}/sitemap.xml: cannot be fetched: connection refused",
        "0 files, 0 URLs, 0 violations, 1 input error",
    ),
    "a refused connection for a sitemap robots.txt lists": (
        ["{root}robots.txt"],
        "http://127.0.0.1:{port}/sitemap.xml: cannot be fetched: connection refused (listed "
        "at {root}robots.txt:2)",
        "1 file, 0 URLs, 0 violations, 1 input error",
    ),
    "no answer in time": (
        ["--timeout", "0.5", "{hostile}slow"],
        "{hostile}slow: cannot be fetched: no answer within 0.5 s (timeout)",
        "0 files, 0 URLs, 0 violations, 1 input error",
    ),
    "a body that trickles in": (
        ["--timeout", "0.5", "{hostile}trickle.xml"],
        "{hostile}trickle.xml: cannot be fetched: the download took more than 0.5 s (timeout)",
        "1 file, 0 URLs, 0 violations, 1 input error",
    ),
    "a violation elsewhere, and a missing file": (
        [str(BROKEN / "p5-changefreq.xml"), "{tmp}/none.xml"],
        "{tmp}/none.xml: cannot be read: no such file",
        "1 file, 2 URLs, 1 violation, 1 input error",
    ),
}


@pytest.mark.parametrize("case", sorted(INPUT_ERRORS))
def test_input_errors_exit_2_with_one_line(
    tmp_path: Path,
    http_site: tuple[str, Path],
    hostile: str,
    refused_port: int,
    case: str,
) -> None:
    root, folder = http_site
    (folder / "robots.txt").write_text(
        f"User-agent: *\nSitemap: http://127.0.0.1:{refused_port}/sitemap.xml\n"
    )
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "sitemap.sock"))
    args, line, summary = INPUT_ERRORS[case]
    names = {"tmp": tmp_path, "port": refused_port, "root": root, "hostile": hostile}
    try:
        result = command(tmp_path, *(arg.format(**names) for arg in args))
    finally:
        unix.close()
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == line.format(**names) + "\n"
    *violations, last = result.stdout.splitlines()
    assert all(LINE_RE.match(v) for v in violations)
    assert last == summary


def test_an_unknown_host_is_an_input_error(tmp_path: Path) -> None:
    result = command(tmp_path, "http://nohost.invalid/sitemap.xml")
    assert result.returncode == 2
    # The cause in brackets is the resolver's own words (glibc: "Name or service not known").
    assert re.fullmatch(
        r"http://nohost\.invalid/sitemap\.xml: cannot be fetched: unknown host \([^)]+\)\n",
        result.stderr,
    ), result.stderr
    assert result.stdout == "0 files, 0 URLs, 0 violations, 1 input error\n"


def test_an_http_error_status_stays_a_violation(
    tmp_path: Path, http_site: tuple[str, Path]
) -> None:
    """The server answered: the sitemap it announces is not there (P15), exit status 1."""
    root, _ = http_site
    result = run(tmp_path, f"{root}nothing.xml")
    assert result.status == 1
    assert result.messages() == ["cannot be read: HTTP 404 Not Found"]


def test_validate_raises_when_the_check_is_incomplete(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.xml")
    with pytest.raises(CheckIncomplete) as info:
        validate([str(BROKEN / "p6-priority.xml"), missing])
    assert info.value.errors == [InputError(missing, "cannot be read: no such file")]
    assert [(v.line, v.rule) for v in info.value.violations] == [(9, "P6")]
    assert str(info.value) == f"{missing}: cannot be read: no such file"


def test_help_documents_the_exit_statuses(tmp_path: Path) -> None:
    result = command(tmp_path, "-h")
    text = " ".join(result.stdout.split())
    assert (
        "Exit status: 0 all valid; 1 rule violations; 2 a usage error, or an input that could "
        "not be checked." in text
    )


# --- an Atom feed (the changes feed) ------------------------------------------------------

FEED_LINE = "an Atom feed, not a sitemap: read as XML only, not checked against the sitemap rules"


def _changes_feed(root: str) -> bytes:
    """A changes feed as the package publishes it, of two entries."""
    from scrapy_sitemapgen.features.changes_feed_atom import changes_feed_xml
    from scrapy_sitemapgen.state.changes_feed_notes import ChangesFeedEntry

    return changes_feed_xml(
        [
            ChangesFeedEntry(f"{root}a", "2026-02-02T00:00:00+00:00", "Page A"),
            ChangesFeedEntry(f"{root}b", "2026-02-01T00:00:00+00:00"),
        ],
        feed_url=f"{root}changes.atom",
        site=root,
        fallback_updated="2026-01-01T00:00:00+00:00",
    )


def test_an_atom_feed_given_alone_is_named_not_failed(tmp_path: Path) -> None:
    """``changes.atom`` as a source: one line saying it is an Atom feed, exit 0, no P2;
    not well-formed, it is a P1 violation (exit 1), as any XML file's."""
    feed = tmp_path / "changes.atom"
    feed.write_bytes(_changes_feed("https://example.com/"))
    result = command(tmp_path, "changes.atom")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"changes.atom: {FEED_LINE}",
        "1 file, 0 URLs, 0 violations",
    ]
    assert result.stderr == ""

    feed.write_bytes(_changes_feed("https://example.com/")[:-30])  # cut in an entry
    result = command(tmp_path, "changes.atom")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"changes.atom: {FEED_LINE}"
    broken = LINE_RE.match(lines[1])
    assert broken is not None and broken["rule"] == "P1", lines
    assert "not well-formed XML" in broken["message"]
    assert lines[2:] == ["1 file, 0 URLs, 1 violation"]


def test_an_atom_feed_in_robots_txt_is_named_in_an_index_is_p2(tmp_path: Path) -> None:
    """Named in a robots.txt (G1, SITEMAPGEN_CHANGES_FEED_IN_ROBOTS), the feed is read as
    one; listed in a sitemap index, it is still no sitemap (P2)."""
    site = tmp_path / "site"
    write_set(site, "https://example.com/", gzipped=False)
    (site / "changes.atom").write_bytes(_changes_feed("https://example.com/"))
    robots = site / "robots.txt"
    robots.write_text(robots.read_text() + "Sitemap: https://example.com/changes.atom\n")
    result = command(tmp_path, "--base-url", "https://example.com/", "site/robots.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"site/changes.atom: {FEED_LINE}" in lines
    assert SUMMARY_RE.match(lines[-1]) and lines[-1].endswith(" 0 violations")

    index = site / "sitemap.xml"
    text = index.read_text()
    entry = "<sitemap><loc>https://example.com/changes.atom</loc></sitemap>"
    index.write_text(text.replace("</sitemapindex>", f"{entry}</sitemapindex>"))
    result = command(tmp_path, "--base-url", "https://example.com/", "site/sitemap.xml")
    assert result.returncode == 1, result.stdout
    assert FEED_LINE not in result.stdout
    assert "site/changes.atom:2: P2: the root element is <{http://www.w3.org/2005/Atom}feed>" in (
        result.stdout
    )
