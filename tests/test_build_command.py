"""``scrapy sitemapgen-build``: the same set from a stored crawl, without crawling."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.build.input_reader import line_at
from scrapy_sitemapgen.sitemaps.records import url_field

from .helpers import files, read_urls, run_scrapy, write_project
from .helpers import run_build as build

if TYPE_CHECKING:
    from pathlib import Path


@deferred_f_from_coro_f
async def test_build_from_store_gives_the_crawls_set(site, crawl, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite3"
    await crawl({"SITEMAPGEN_STORE": str(store)}, start_url=site.a.url("/"))
    crawled, rebuilt = tmp_path / "out", tmp_path / "rebuilt"
    result = build(tmp_path, "--store", str(store), "-s", f"SITEMAPGEN_URI={rebuilt}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert files(rebuilt) == files(crawled)
    assert read_urls(rebuilt) == read_urls(crawled)
    for name in files(crawled):
        if name.endswith(".gz"):  # no run time inside urlsets: byte-identical
            assert (rebuilt / name).read_bytes() == (crawled / name).read_bytes()
    assert "sitemapgen/urls/written': 12" in result.stderr


@deferred_f_from_coro_f
async def test_build_from_jobdir_with_other_output_settings(site, crawl, tmp_path: Path) -> None:
    jobdir = tmp_path / "job"
    await crawl({"JOBDIR": str(jobdir)}, start_url=site.a.url("/"))
    out = tmp_path / "plain"
    result = build(
        tmp_path,
        "--jobdir",
        str(jobdir),
        "-s",
        f"SITEMAPGEN_URI={out}",
        "-s",
        "SITEMAPGEN_GZIP=False",
        "-s",
        "SITEMAPGEN_MAX_URLS=5",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    a = site.a.origin.name
    assert sorted(p.name for p in (out / a).iterdir()) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml",
        "sitemap-2.xml",
        "sitemap.xml",
    ]
    assert read_urls(out)[a].keys() == site.expected()[a].keys()


def test_build_without_a_store_is_a_usage_error(tmp_path: Path) -> None:
    result = build(tmp_path)
    assert result.returncode == 2
    assert "--jobdir DIR, --store FILE or --input RECORDS.jsonl" in result.stderr
    result = build(tmp_path, "--store", str(tmp_path / "missing.sqlite3"))
    assert result.returncode == 2
    assert "no sitemap store at" in result.stderr


@deferred_f_from_coro_f
async def test_build_from_a_json_lines_feed_gives_the_crawls_set(
    site, crawl, tmp_path: Path
) -> None:
    """A feed of records with the item fields writes the set a crawl of those pages writes."""
    import json

    await crawl(start_url=site.a.url("/"))
    crawled = tmp_path / "out"
    feed = tmp_path / "items.jsonl"
    with feed.open("w") as lines:
        for urls in read_urls(crawled).values():
            for loc, fields in urls.items():
                record = {"loc": loc, **{k: v for k, v in fields.items() if v is not None}}
                lines.write(json.dumps(record) + "\n")
        lines.write("[1, 2]\n")  # not an object: counted, the rest still counts
    built = tmp_path / "built"
    result = build(tmp_path, "--input", str(feed), "-s", f"SITEMAPGEN_URI={built}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert read_urls(built) == read_urls(crawled)
    for name in files(crawled):
        if name.endswith(".gz"):
            assert (built / name).read_bytes() == (crawled / name).read_bytes()
    assert "'sitemapgen/skipped/bad_record': 1" in result.stderr


def test_build_from_a_missing_feed_is_a_usage_error(tmp_path: Path) -> None:
    result = build(tmp_path, "--input", str(tmp_path / "none.jsonl"))
    assert result.returncode == 2
    assert "no feed at" in result.stderr


def test_an_offline_build_starts_no_crawl(tmp_path: Path) -> None:
    """The feed is read, then published: no spider opens, no engine, extension, middleware
    or pipeline runs, and the stats are dumped at the end all the same."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"loc": "https://a.example/"}\n')
    result = build(tmp_path, "--input", str(feed), "-s", f"SITEMAPGEN_URI={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-3000:]
    for crawl_line in (
        "Spider opened",
        "Closing spider",
        "Enabled extensions",
        "Enabled downloader middlewares",
        "Enabled item pipelines",
    ):
        assert crawl_line not in result.stderr
    assert "Sitemap: reading " in result.stderr
    assert "'sitemapgen/urls/written': 1" in result.stderr.split("Dumping Scrapy stats:")[1]


def test_an_offline_build_opens_no_port(tmp_path: Path) -> None:
    """Nothing is crawled, so no extension runs: Scrapy's telnet console and
    remote-control server stay off, even when the project gave them an order."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"loc": "https://a.example/"}\n')
    result = build(tmp_path, "--input", str(feed), "-s", f"SITEMAPGEN_URI={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Telnet console listening" not in result.stderr
    assert "Remote control HTTP server listening" not in result.stderr
    asked = build(
        tmp_path,
        "--input",
        str(feed),
        "-s",
        f"SITEMAPGEN_URI={tmp_path / 'out2'}",
        "-s",
        'EXTENSIONS={"scrapy.extensions.telnet.TelnetConsole": 0}',
        "-s",
        "TELNETCONSOLE_PORT=0",
    )
    assert asked.returncode == 0, asked.stderr[-3000:]
    assert "Telnet console listening" not in asked.stderr


def test_an_offline_build_imports_no_server_nor_download_handler(tmp_path: Path) -> None:
    """Nor are their modules imported (aiohttp for remote control, a TLS context for the
    HTTP handler: a fifth of a small build's time), even when the project names one:
    nothing is downloaded."""
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"loc": "https://a.example/"}\n')
    runner = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('MODULES', *sorted(sys.modules)))\n"
        "from scrapy.cmdline import execute\n"
        "execute(['scrapy', 'sitemapgen-build', *sys.argv[1:]])\n"
    )

    def imported(*settings: str) -> set[str]:
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                runner,
                "--input",
                str(feed),
                "-s",
                f"SITEMAPGEN_URI={tmp_path / 'out'}",
                *settings,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        [line] = [line for line in result.stdout.splitlines() if line.startswith("MODULES ")]
        return set(line.split()[1:])

    heavy = {
        "aiohttp",
        "scrapy.extensions.telnet",
        "scrapy.extensions.remote_control",
        "scrapy.core.downloader.handlers.http11",
        "scrapy.core.downloader.contextfactory",
    }
    modules = imported()
    assert "scrapy_sitemapgen.build.run_store" in modules and not heavy & modules
    asked = imported(
        "-s",
        'DOWNLOAD_HANDLERS={"https": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"}',
    )
    assert not heavy & asked


# --- feed records without loc ---------------------------------------------------------------

#: The roads a feed takes: read in bulk (in this process, or by worker processes), or
#: recorded one by one into a store through the item pipeline.
ROADS = {
    "bulk, one process": ["--workers", "1"],
    "bulk, two workers": ["--workers", "2"],
    "into a store": ["--store", "{tmp}/store.sqlite3"],
}
GOOD = '{"loc": "https://a.example/%d"}\n'
#: What a `scrapy crawl -O items.jsonl` of a spider that yields `url` writes.
URL_ITEMS = "".join(f'{{"url": "https://a.example/p{n}", "title": "T"}}\n' for n in range(12))
JQ_URL = "name the page's URL loc, or map it (jq '.loc = .url')"
NEEDS_LOC = "each record needs loc, the page's absolute URL"
REFUSED = (
    "the loc of 1 record was refused or excluded (see sitemapgen/skipped/item_* and "
    "sitemapgen/excluded/* in the stats)"
)

#: feed text -> (records without loc, the WARNING about them or None, the close report's
#: reason when no record was usable or None).
NO_LOC_CASES: dict[str, tuple[str, int, str | None, str | None]] = {
    "url items only": (
        URL_ITEMS,
        12,
        f"12 records have no loc field (the first at line 1); they have 'url': {JQ_URL}",
        "{feed}: 12 records have no loc field",
    ),
    "good records, then link fields": (
        "".join(GOOD % n for n in range(40))
        + '{"link": "https://a.example/x"}\n'
        + "".join(GOOD % n for n in range(40, 43))
        + '{"link": "https://a.example/y", "page": 2}\n',
        2,
        "2 records have no loc field (the first at line 41); they have 'link': name the "
        "page's URL loc, or map it (jq '.loc = .link')",
        None,
    ),
    "an empty loc and no URL field": (
        GOOD % 1 + '{"loc": ""}\n\n{"title": "T", "page": 3, "href": "/relative"}\n',
        2,
        f"2 records have no loc field (the first at line 2); {NEEDS_LOC}",
        None,
    ),
    "one of two has URL in capitals": (
        '{"title": "T"}\n{"URL": "HTTPS://A.EXAMPLE/"}\n' + GOOD % 1,
        2,
        "2 records have no loc field (the first at line 1); 1 of them has 'URL': name the "
        "page's URL loc, or map it (jq '.loc = .URL')",
        None,
    ),
    "no loc, a refused loc, a line that is no object": (
        '[1]\n{"uri": "https://a.example/"}\n{"loc": "ftp://a.example/x"}\n',
        1,
        "1 record has no loc field (the first at line 2); it has 'uri': name the "
        "page's URL loc, or map it (jq '.loc = .uri')",
        f"{{feed}}: 1 record has no loc field, {REFUSED}, 1 line is not a JSON object",
    ),
    "only refused locs": ('{"loc": "ftp://a.example/x"}\n', 0, None, f"{{feed}}: {REFUSED}"),
    "only lines that are no objects": (
        '"a"\nnot json\n',
        0,
        None,
        "{feed}: 2 lines are not JSON objects",
    ),
    "an empty feed": ("\n", 0, None, "{feed} holds no record"),
}


def logged(stderr: str, level: str) -> list[str]:
    """The messages this package logged at ``level``."""
    marker = f"] {level}: "
    return [
        line.split(marker, 1)[1]
        for line in stderr.splitlines()
        if "[scrapy_sitemapgen." in line and marker in line
    ]


@pytest.mark.parametrize("road", sorted(ROADS))
@pytest.mark.parametrize("case", sorted(NO_LOC_CASES))
def test_records_without_loc_are_counted_and_explained(
    tmp_path: Path, road: str, case: str
) -> None:
    text, count, warning, reason = NO_LOC_CASES[case]
    (tmp_path / "feed.jsonl").write_text(text)
    args = [arg.format(tmp=tmp_path) for arg in ROADS[road]]
    result = build(tmp_path, "--input", "feed.jsonl", "-s", "SITEMAPGEN_URI=out", *args)
    warnings = [m for m in logged(result.stderr, "WARNING") if "no loc field (the first" in m]
    assert warnings == ([f"Sitemap: feed.jsonl: {warning}"] if warning else []), result.stderr
    stat = f"'sitemapgen/skipped/item_no_loc': {count},"
    assert (stat in result.stderr) == bool(count), result.stderr[-3000:]
    nothing = "Sitemap: no page was recorded, so no sitemap was written"
    final = [m for m in logged(result.stderr, "INFO") if m.startswith(nothing)]
    if reason is None:
        assert (result.returncode, final) == (0, []), result.stderr[-3000:]
    else:
        expected = f"{nothing}: {reason.format(feed='feed.jsonl')}"
        assert (result.returncode, final) == (1, [expected]), result.stderr[-3000:]


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"url": "https://a.example/"}, "url"),
        ({"title": "T", "link": "http://a.example/"}, "link"),
        ({"href": "https://a.example/", "url": "https://b.example/"}, "url"),  # url first
        ({"Page": "HTTP://A.EXAMPLE/"}, "Page"),
        ({"uri": "https://a.example/"}, "uri"),
        ({"page": 3}, None),
        ({"href": "/relative"}, None),
        ({"url": None, "link": ["https://a.example/"]}, None),
        ({"source_url": "https://a.example/"}, None),
        ({}, None),
    ],
)
def test_url_field(record: dict[str, object], field: str | None) -> None:
    assert url_field(record) == field


@pytest.mark.parametrize(
    ("offset", "line"), [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 4), (99, 4)]
)
def test_line_at(tmp_path: Path, offset: int, line: int) -> None:
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b"a\nb\n\nc")
    assert line_at(path, offset) == line


def test_inside_a_project_with_the_add_on_it_is_loaded_once(tmp_path: Path) -> None:
    """The project names the add-on by its path; the command adds it only when no key of
    ADDONS names it already (it was enabled twice, a class and its path)."""
    project = write_project(tmp_path / "project")
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"loc": "https://www.example.com/a"}\n')
    result = run_scrapy(
        project,
        "sitemapgen-build",
        "--input",
        str(feed),
        "-s",
        f"SITEMAPGEN_URI={tmp_path / 'out'}",
    )
    assert result.returncode == 0, result.stderr
    enabled = result.stderr.split("Enabled addons:\n", 1)[1].splitlines()[0]
    assert enabled.count("scrapy_sitemapgen.addon.Addon object") == 1, enabled
    assert (tmp_path / "out" / "https_www.example.com_443" / "sitemap.xml").is_file()


#: A build of feed.jsonl into files of the smallest byte limit allowed (G2).
_SMALLEST_FILES = (
    "--input",
    "feed.jsonl",
    "-s",
    "SITEMAPGEN_URI=out",
    "-s",
    "SITEMAPGEN_MAX_BYTES=4096",
)


def _oversized_feed(path: Path, small: int) -> str:
    """A feed of ``small`` plain pages and one whose images make its entry larger than a
    4,096-byte file can hold (G2's smallest SITEMAPGEN_MAX_BYTES here); its loc."""
    large = "https://a.example/large"
    images = [f"https://a.example/img/{k:03d}-{'i' * 60}.jpg" for k in range(80)]
    with path.open("w") as feed:
        for n in range(small):
            feed.write(json.dumps({"loc": f"https://a.example/p/{n}"}) + "\n")
        feed.write(json.dumps({"loc": large, "images": images}) + "\n")
    return large


def test_an_entry_too_large_for_a_file_is_not_noted_as_published(tmp_path: Path) -> None:
    """The entry left out as too large for any file (G2) is not in the URL set the state
    keeps: the close line counts what was written, and the next run is not refused by
    the guard on shrinking (SITEMAPGEN_MAX_REMOVED_SHARE) as if a URL went missing."""
    large = _oversized_feed(tmp_path / "feed.jsonl", 5)
    closes = []
    for _ in range(2):
        result = build(tmp_path, *_SMALLEST_FILES)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "'sitemapgen/skipped/entry_too_large': 1," in result.stderr
        assert "sitemapgen/output/refused" not in result.stderr
        closes += [m for m in logged(result.stderr, "INFO") if " since the previous run" in m]
    assert [line.split(" in ", 1)[0] for line in closes] == [
        "Sitemap: https://a.example/: 5 URLs (+5, -0 since the previous run)",
        "Sitemap: https://a.example/: 5 URLs (+0, -0 since the previous run)",
    ]
    (urls,) = read_urls(tmp_path / "out").values()
    assert sorted(urls) == [f"https://a.example/p/{n}" for n in range(5)]
    assert large not in urls


def test_when_every_entry_is_too_large_the_close_says_none_could_be_written(
    tmp_path: Path,
) -> None:
    _oversized_feed(tmp_path / "feed.jsonl", 0)
    result = build(tmp_path, *_SMALLEST_FILES)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "sitemapgen/output/refused" not in result.stderr
    final = [m for m in logged(result.stderr, "INFO") if "no sitemap was written" in m]
    assert final == [
        "Sitemap: no page was recorded, so no sitemap was written: no page could be written "
        "(why: the warnings above)"
    ]
