"""The benchmark harness's own arithmetic, on inputs written by hand: the A/B settings, the
result file, the summaries and the tables rendered from them; and the harness's shape (its
modules' length, no import circle, nothing of it imported by the tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import results, tables
from benchmarks.build import build_summary
from benchmarks.crawl import summary as crawl_summary
from tests.published import url_set_errors

if TYPE_CHECKING:
    import pytest


def test_ab_set_gives_the_new_side_its_settings() -> None:
    from benchmarks.ab import settings_of

    assert settings_of("new", ["SITEMAPGEN_IMAGES=False", "LOG_LEVEL=DEBUG"]) == [
        "-s",
        "SITEMAPGEN_IMAGES=False",
        "-s",
        "LOG_LEVEL=DEBUG",
    ]
    assert settings_of("base", ["SITEMAPGEN_IMAGES=False"]) == []


def test_ab_build_takes_a_feed_of_many_origins() -> None:
    """``ab build --origins N`` (the many-origins build, side by side with a revision);
    without it, the feed's own three origins."""
    import argparse

    from benchmarks.ab import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["build", "--base", "HEAD"]).origins == 0
    parsed = parser.parse_args(["build", "--base", "HEAD", "--origins", "100000"])
    assert parsed.origins == 100_000
    assert parser.parse_args(["build", "--base", "HEAD"]).shape == "ours"
    assert parser.parse_args(["build", "--base", "HEAD", "--shape", "site"]).shape == "site"


def test_site_shape_puts_most_urls_on_one_origin() -> None:
    """``--shape site`` (issue 42): the realistic records with one origin holding about
    80 % of the URLs and the other two about 15 % and 5 %; its own stream, so its records
    are not the realistic shape's; the same seed gives the same records."""
    from collections import Counter
    from urllib.parse import urlsplit

    from benchmarks import feed

    site = [record for record, _ in feed.records(20_000, 1, "site")]
    shares = Counter(urlsplit(record["loc"]).netloc for record in site)
    assert [host for host, _ in shares.most_common()] == [
        "www.example.com",
        "shop.example.org",
        "blog.example.net:8080",
    ]
    assert 0.78 < shares["www.example.com"] / len(site) < 0.82
    assert 0.13 < shares["shop.example.org"] / len(site) < 0.17
    assert 0.04 < shares["blog.example.net:8080"] / len(site) < 0.06
    realistic = [record["loc"] for record, _ in feed.records(200, 1, "realistic")]
    assert [record["loc"] for record in site[:200]] != realistic
    assert [record for record, _ in feed.records(200, 1, "site")] == site[:200]
    assert feed.feed_path(10, 1, "site").name == f"feed-n10-s1-site-v{feed.VERSION}.jsonl"


def _measure(wall: float, urls: int = 10, size: int = 1000) -> dict[str, Any]:
    return {
        "wall": wall,
        "cpu": wall,
        "rss": 20_000,
        "tree_rss": 40_000,
        "code": 0,
        "urls": urls,
        "bytes": size,
    }


def _build_record() -> dict[str, Any]:
    """A build result as ``python -m benchmarks build`` writes it, figures by hand: ours
    takes 8 and 9 s where the bare loop takes 10, xml-sitemap-writer 12 and 18, the floor
    5 and 6."""
    record = results.new("build", ["build", "--records", "10"], "python -m benchmarks build", True)
    record["parameters"] = {
        "records": 10,
        "repeat": 2,
        "feed": {
            "records": 10,
            "bytes": 900,
            "seed": 1,
            "distinct_locs": 9,
            "non_ascii": 1,
            "raw_non_ascii": 0,
            "ampersand": 1,
            "images": 5,
            "with_lastmod": 6,
            "repeats": 1,
        },
        "gzip_default": {"level": 5, "backend": "zlib-ng"},
        "contenders": [
            {"key": "ours", "label": "ours: `scrapy sitemapgen-build --input`"},
            {"key": "bare", "label": "bare loop"},
            {"key": "xsw", "label": "xml-sitemap-writer, level 6"},
            {"key": "least", "label": "least"},
        ],
    }
    record["measurements"] = {
        "rounds": [
            {
                "ours": _measure(8.0, 9),
                "bare": _measure(10.0),
                "xsw": _measure(12.0),
                "least": _measure(5.0),
            },
            {
                "ours": _measure(9.0, 9),
                "bare": _measure(10.0),
                "xsw": _measure(18.0),
                "least": _measure(6.0),
            },
        ],
        "plain_bytes": 5000,
        "level9": _measure(9.5, 9, 950),
        "recompress": {"raw": 4000, "written": 1000, "z6": 1000, "z9": 900, "t6": 0.1, "t9": 0.2},
        "rss_floor": 9000,
    }
    record["summary"] = build_summary(record)
    return record


def test_build_summary_ratios_come_from_the_rounds() -> None:
    summary = _build_record()["summary"]
    assert summary["ours_vs_bare_rounds"] == [0.8, 0.9]
    assert summary["contenders"]["ours"]["wall_vs_bare"] == 0.85  # median 8.5 s over 10 s
    assert summary["throughput_vs"]["xsw"] == {"median": 15.0 / 8.5, "rounds": [1.5, 2.0]}
    assert summary["gzip"]["default_over_smallest_9"] == 1000 / 900 - 1
    assert summary["least_vs_bare_rounds"] == [0.5, 0.6]
    assert summary["ours_vs_least_rounds"] == [8.0 / 5.0, 9.0 / 6.0]


def test_result_file_round_trip_and_schema(tmp_path: Path) -> None:
    record = _build_record()
    results.finish(record)
    assert record["status"] == "ok" and "_started" not in record
    path = results.write(record, tmp_path)  # a folder: the default name inside it
    assert path.parent == tmp_path
    assert path.name.startswith("build-") and path.suffix == ".json"
    loaded = results.load(path)
    for key in ("command", "invocation", "date", "machine", "code", "parameters"):
        assert loaded[key], key
    assert loaded["invocation"] == "python -m benchmarks build --records 10"
    assert {"cores", "python", "scrapy", "platform"} <= set(loaded["machine"])
    assert len(loaded["code"]["commit"]) == 40
    assert loaded["measurements"]["rounds"][1]["xsw"]["wall"] == 18.0
    named = results.write(record, tmp_path / "mine.json")
    assert named == tmp_path / "mine.json"
    (tmp_path / "other.json").write_text(json.dumps({"schema": 0}))
    try:
        results.load(tmp_path / "other.json")
    except ValueError:
        pass
    else:
        raise AssertionError("a file of another schema was loaded")


def test_tables_render_the_ratios_with_command_and_machine_under_them() -> None:
    record = _build_record()
    results.finish(record)
    text = tables.render([record, record])
    assert "| ours: `scrapy sitemapgen-build --input` | **0.85×** | 8.50 s |" in text
    assert "Ours against the bare loop within each round: 0.80×, 0.90× (median 0.85×)." in text
    assert "| xml-sitemap-writer, level 6 | **1.76×** | 1.50× to 2.00× |" in text
    assert (
        "The floor (`least`) against the bare loop within each round: 0.50×, 0.60× (median 0.55×);"
        " ours over the floor: wall 1.60×, 1.50×" in text
    )
    assert "< 9 MiB" not in text and "| 20 MiB |" in text
    footers = [line for line in text.splitlines() if line.startswith("<sub>Command:")]
    assert footers and all("`python -m benchmarks build --records 10`" in f for f in footers)
    assert all(f"Python {record['machine']['python']}" in f for f in footers)
    assert text.count(tables.SMOKE) == len(footers)  # a smoke run, labelled under every table
    assert "### Writing sitemaps, run by run" in text  # two builds: side by side too


def test_crawl_summary_and_url_set_errors() -> None:
    def crawl(responses: int, elapsed: float, crawl_cpu: float, extension_cpu: float) -> Any:
        return {
            "responses": responses,
            "elapsed": elapsed,
            "crawl_cpu": crawl_cpu,
            "extension_cpu": extension_cpu,
            "recorded": responses // 2,
            "cpu": crawl_cpu + 1,
            "rss": 50_000,
        }

    pairs = [
        {"on": crawl(100, 2.0, 0.5, 0.05), "off": crawl(100, 1.0, 0.4, 0.0)},
        {"on": crawl(100, 1.0, 0.5, 0.025), "off": crawl(100, 1.0, 0.5, 0.0)},
    ]
    summary = crawl_summary(pairs)
    assert summary["responses_per_s_ratios"] == [0.5, 1.0]
    assert summary["extension_cpu_per_response"] == 0.000375  # median of 0.5 and 0.25 ms
    assert summary["crawl_cpu_per_response_ratios"] == [1.25, 1.0]
    assert url_set_errors(["a", "b", "b", "x"], {"a", "b", "c"}) == {
        "missing": 1,
        "extra": 1,
        "duplicates": 1,
    }


def test_memory_run_reads_the_phases_from_a_real_build_log(tmp_path: Path) -> None:
    """The phases come from the log lines of a real ``sitemapgen-build`` (the feed's
    reading begun and done, the close report's per-origin line): a renamed logger or
    message would leave them unknown."""
    from benchmarks.memory import memory_run

    result = memory_run(1000, 1, tmp_path)
    phases = result["phases"]
    assert phases is not None, result
    assert set(phases) == {"startup", "ingest", "write", "rest"}
    assert all(value >= 0 for value in phases.values()), phases


def test_profile_build_profiles_the_worker_processes(tmp_path: Path) -> None:
    """``profile-build --workers 2``: the feed is read and the origins are staged in the
    worker processes, so their profile, not the main process's, holds the reading (a
    range a worker: 2 calls) and the staging (the realistic feed's three origins)."""
    import subprocess
    import sys

    from benchmarks.results import REPO

    out = tmp_path / "profile.json"
    command = [sys.executable, "-m", "benchmarks", "profile-build", "--records", "3000"]
    command += ["--shape", "realistic", "--workers", "2", "--top", "200"]
    command += ["--out", str(tmp_path / "build.prof"), "--results", str(out)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, timeout=600)
    measured = json.loads(out.read_text())["measurements"]

    def calls(rows: list[dict[str, Any]], name: str) -> int:
        return sum(row["calls"] for row in rows if row["function"].endswith(f"({name})"))

    workers = measured["workers_top"]["package"]
    assert calls(workers, "read_range") == 2
    assert calls(workers, "stage_origin") == 3
    assert calls(measured["top"]["package"], "read_range") == 0
    assert (tmp_path / "build-workers.prof").is_file()


def test_crawl_docs_nginx_config_runs_unprivileged_from_its_prefix(tmp_path: Path) -> None:
    """Everything nginx writes goes under its ``-p`` prefix (relative paths), nothing under
    /var; it stays in the foreground for the harness to stop, logs no access, and listens
    on loopback only, at the port given."""
    from benchmarks.docsite import nginx_config

    config = nginx_config(tmp_path / "my site", 40123)
    lines = [line.strip() for line in config.splitlines()]
    assert "daemon off;" in lines and "access_log off;" in lines
    assert "listen 127.0.0.1:40123;" in lines
    assert f'root "{tmp_path}/my site";' in lines  # quoted: the path may hold a space
    assert "pid nginx.pid;" in lines and "error_log error.log warn;" in lines
    temps = [line for line in lines if "_temp_path " in line]
    assert len(temps) == 5 and all(" temp/" in line for line in temps)
    assert "/var" not in config
    assert "text/html html htm;" in lines and "image/png png;" in lines
    assert config.count("{") == config.count("}")


def test_crawl_docs_root_page_links_every_language() -> None:
    from benchmarks.docsite import root_page

    page = root_page(["de-DE", "en-US"])
    assert '<a href="de-DE/index.html">' in page and '<a href="en-US/index.html">' in page
    assert page.count("<a ") == 2


def test_crawl_docs_reads_a_book_per_language_and_a_book_of_one(tmp_path: Path) -> None:
    """The handbook's layout (a folder per language, the benchmark's root page above) and
    postgresql-doc-15's (the book's own index.html at the top, no language folders)."""
    from benchmarks.docsite import languages_of, pages_of, site_facts

    many = tmp_path / "many"
    for lang in ("de-DE", "en-US"):
        (many / lang / "images").mkdir(parents=True)
        (many / lang / "index.html").write_text("<img src='images/a.png'>")
        (many / lang / "images" / "a.png").write_bytes(b"")
    one = tmp_path / "one"
    (one / "images").mkdir(parents=True)
    for name in ("index.html", "sql.html"):
        (one / name).write_text("<p>text</p>")
    (one / "images" / "a.svg").write_bytes(b"")
    assert languages_of(many) == ["de-DE", "en-US"] and languages_of(one) == []
    assert [p.relative_to(one).as_posix() for p in pages_of(one, [])] == [
        "index.html",
        "sql.html",
    ]
    # The handbook's count has the benchmark's own root page; the book of one has none.
    assert site_facts(many, ["de-DE", "en-US"]) == {
        "pages": 3,
        "img_elements": 2,
        "image_files": 2,
    }
    assert site_facts(one, []) == {"pages": 2, "img_elements": 0, "image_files": 1}


def test_crawl_docs_summary_is_the_median_of_the_pairs_ratios_with_its_spread() -> None:
    """Five pairs whose wall ratios are 0.9 .. 1.3 by hand; the quartiles by the exclusive
    method: positions 1.5 and 4.5 of the sorted five."""

    def crawl(wall: float, cpu: float, elapsed: float) -> dict[str, Any]:
        return {"wall": wall, "cpu": cpu, "elapsed": elapsed, "responses": 100, "rss": 1024}

    walls = [1.2, 0.9, 1.3, 1.0, 1.1]
    pairs = [
        {
            "on": crawl(10 * w, 4.0, 2.0),
            "off": crawl(10.0, 2.0, 1.0),
            "order": "on,off",
            "load": 1.0 + n,
        }
        for n, w in enumerate(walls)
    ]
    from benchmarks.docsite import summary

    s = summary(pairs)
    wall = s["wall"]
    assert round(wall["median"], 9) == 1.1
    assert (round(wall["q1"], 9), round(wall["q3"], 9)) == (0.95, 1.25)
    assert (round(wall["min"], 9), round(wall["max"], 9)) == (0.9, 1.3)
    assert wall["on_faster"] == 1  # 0.9; 1.0 is a tie, not faster
    assert s["cpu"]["median"] == 2.0 and s["cpu"]["on"] == 4.0 and s["cpu"]["off"] == 2.0
    assert s["time_per_response"]["median"] == 2.0  # 100 responses in 2 s against 1 s
    assert s["responses_per_s"] == {"on": 50.0, "off": 100.0}
    assert s["load"] == {"min": 1.0, "max": 5.0}

    record = results.new("crawl-docs", ["crawl-docs"], "python -m benchmarks crawl-docs", False)
    record["parameters"] = {
        "package": "debian-handbook",
        "package_version": "11.1",
        "server": "nginx",
        "server_version": "1.22.1",
        "languages": ["en-US"],
        "pages": 128,
        "img_elements": 347,
        "image_files": 150,
        "pairs": 5,
    }
    record["measurements"] = {"pairs": pairs, "rss_floor": 0}
    record["summary"] = {**s, "images_listed": 300}
    results.finish(record)
    text = tables.render([record])
    assert (
        "| wall, the whole process | **1.100×** (quartiles 0.950–1.250, range 0.900–1.300) | 1 of 5 |"
        in text
    )
    assert "128 HTML pages (1 language and the root page), 347 `<img>`" in text
    assert "Load average (1 min) before the pairs: 1.00 to 5.00." in text


def test_origins_summary_takes_the_floor_off_within_each_pair() -> None:
    """``origins``: many over three within each pair, and per origin what many cost over
    three, the file system's floor, and the difference, each the median over the pairs;
    the ratio with nothing per origin but the floor."""
    from benchmarks.origins import summary as origins_summary

    def run(wall: float, cpu: float) -> dict[str, float]:
        return {"wall": wall, "cpu": cpu, "rss": 1024, "tree_rss": 2048}

    record = results.new("origins", ["origins"], "python -m benchmarks origins", False)
    feed = {"distinct_locs": 9000}
    record["parameters"] = {
        "records": 10_000,
        "origins": 1000,
        "pairs": 3,
        "feeds": {"three": feed, "many": feed},
    }
    record["measurements"] = {
        "pairs": [
            {"three": run(10, 20), "many": run(30, 50), "floor": run(5, 9)},
            {"three": run(12, 20), "many": run(30, 56), "floor": run(6, 8)},
            {"three": run(10, 22), "many": run(40, 60), "floor": run(4, 10)},
        ]
    }
    s = origins_summary(record)
    assert s["wall_ratio"]["pairs"] == [3.0, 2.5, 4.0]
    assert s["wall_ratio"]["median"] == 3.0
    # (30-10)/1000 s = 20,000 us; (30-12) = 18,000; (40-10) = 30,000.
    assert s["wall_per_origin_us"]["extra"] == 20_000
    assert s["wall_per_origin_us"]["floor"] == 5_000  # 5, 6, 4 s over 1,000
    # Within pairs: 20,000-5,000, 18,000-6,000, 30,000-4,000.
    assert s["wall_per_origin_us"]["own"] == 15_000
    assert s["cpu_per_origin_us"]["own"] == 28_000  # median of 30-9, 36-8, 38-10 (thousands)
    assert s["wall_ratio_floor_only"] == 1.5  # 15/10, 18/12, 14/10
    assert s["wall"]["floor"] == 5
    record["summary"] = s
    results.finish(record)
    text = tables.render([record])
    assert "| the package's own (the difference) | 15000 µs | 28000 µs |" in text
    assert "With nothing per origin but the floor, the ratio would be 1.50x." in text


def _urlset_locs(folder: Path) -> dict[str, list[str]]:
    """Each origin folder's ``<loc>`` values, in the order of its index's urlsets."""
    import gzip

    locs: dict[str, list[str]] = {}
    for origin in sorted(folder.iterdir()):
        index = (origin / "sitemap.xml").read_text(encoding="utf-8")
        names = re.findall(r"<loc>[^<]*/([^/<]+)</loc>", index)
        locs[origin.name] = [
            loc
            for name in names
            for loc in re.findall(
                r"<url><loc>([^<]*)</loc>", gzip.decompress((origin / name).read_bytes()).decode()
            )
        ]
    return locs


def test_least_writes_the_bare_loops_entries_each_origin_in_loc_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The floor ``least`` writes what the bare loop writes, one ``<url>`` per record, but
    in loc order per origin, split at 50,000 URLs: the work every build that sorts must
    do, on two processes."""
    import gzip
    import tempfile

    from benchmarks import contenders, feed

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where least's scratch goes
    path = tmp_path / "feed.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for record, _ in feed.records(110_000, 3):
            out.write(json.dumps(record) + "\n")
    assert contenders.least(path, tmp_path / "least") == 110_000
    assert contenders.bare(path, tmp_path / "bare", 6) == 110_000
    least, bare = _urlset_locs(tmp_path / "least"), _urlset_locs(tmp_path / "bare")
    assert (
        list(least)
        == list(bare)
        == [
            "http_blog.example.net_8080",
            "https_shop.example.org",
            "https_www.example.com",
        ]
    )
    for origin, locs in least.items():
        assert locs == sorted(bare[origin])  # the same entries, in loc order
    www = tmp_path / "least" / "https_www.example.com"
    sizes = [gzip.decompress(f.read_bytes()).count(b"<url>") for f in sorted(www.glob("*.xml.gz"))]
    assert sizes[0] == 50_000 and sum(sizes) == len(least["https_www.example.com"]) > 50_000
    assert list(scratch.iterdir()) == []  # its scratch files gone with it


def test_profile_crawl_docs_reads_a_packages_pages_at_their_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``profile-crawl --docs``: every HTML page under the package's
    ``/usr/share/doc/*/html``, at the URL it would be served from."""
    from benchmarks import docsite, profiles

    html = tmp_path / "root" / "usr" / "share" / "doc" / "book" / "html"
    (html / "en").mkdir(parents=True)
    (html / "index.html").write_bytes(b"<p>root</p>")
    (html / "en" / "a.html").write_bytes(b"<p>a</p>")
    (html / "en" / "style.css").write_bytes(b"p {}")
    monkeypatch.setattr(docsite, "unpack", lambda package: (tmp_path / "root", "1.0"))
    bodies, urls, version = profiles.docs_pages("book")
    assert version == "1.0"
    assert urls == [f"{profiles.ROOT}/en/a.html", f"{profiles.ROOT}/index.html"]
    assert bodies == [b"<p>a</p>", b"<p>root</p>"]


def test_ab_profile_docs_table_names_the_package_and_the_per_page_figures() -> None:
    from benchmarks.ab import summary

    pairs = [
        {
            "new": {"ours µs a page": 380.0, "baseline µs a page": 800.0, "output": None},
            "base": {"ours µs a page": 620.0, "baseline µs a page": 810.0, "output": None},
            "order": "new,base",
        },
        {
            "new": {"ours µs a page": 390.0, "baseline µs a page": 820.0, "output": None},
            "base": {"ours µs a page": 640.0, "baseline µs a page": 800.0, "output": None},
            "order": "base,new",
        },
    ]
    record = _build_record()
    record.update(
        benchmark="ab",
        parameters={
            "what": "profile-docs",
            "base": "abc1234",
            "docs": "book",
            "repeat": 3,
            "pairs": 2,
            "set": [],
        },
        summary=summary(pairs, set()),
    )
    text = "\n".join(tables.ab_tables(record))
    assert "on the pages of `book`" in text and "2 alternating pairs" in text
    assert "| ours µs a page | **0.611** | 2 of 2 | 0.613, 0.609 |" in text
    assert "published the same urlsets" not in text


# --- the harness's shape -------------------------------------------------------------------

HARNESS = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, relative ones named from its own package."""
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (f"{path.parent.name}." if node.level else "") + (node.module or "")
            names.add(base.rstrip("."))
            names.update(f"{base.rstrip('.')}.{alias.name}" for alias in node.names)
    return names


def test_no_harness_module_is_over_the_packages_bound() -> None:
    """The package's bound, 700 lines (tests/test_layout.py), holds for the harness too."""
    long = {
        path.name: lines
        for path in HARNESS.glob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert long == {}


def test_only_the_entry_point_imports_the_command_line() -> None:
    """The subcommands' modules are imported by :mod:`benchmarks.cli`, and none imports it
    (or ``__main__``) back: no import circle."""
    back = {
        path.name
        for path in HARNESS.glob("*.py")
        if path.name != "__main__.py"
        and _imports(path) & {"benchmarks.cli", "benchmarks.__main__", "benchmarks.forward"}
    }
    assert back == set()


def test_the_tests_import_nothing_from_the_harness() -> None:
    """The tests' site, kill trial and readers are theirs; the harness imports them."""
    tests = HARNESS.parent / "tests"
    importing = sorted(
        path.name
        for path in tests.glob("*.py")
        if any(name == "benchmarks" or name.startswith("benchmarks.") for name in _imports(path))
    )
    assert importing == []


def test_build_phases_put_each_second_in_one_phase() -> None:
    """A real profile of work named by the rules (zlib, marshal, a write), through a
    generic C function (``len``) called from a function of the package's store: each
    phase gets its own, and the phases add up to the whole profile."""
    import cProfile
    import marshal
    import os
    import pstats
    import tempfile
    import zlib

    from benchmarks.build_phases import PHASES, by_phase, phase_of

    assert phase_of("~", "<built-in method zlib.compress>") == "compress"
    assert phase_of("/x/scrapy_sitemapgen/build/run_merge.py", "merged_rows") == "sort and merge"
    assert phase_of("/x/scrapy_sitemapgen/features/chrome_images.py", "add") == "chrome count"
    assert phase_of("/x/elsewhere.py", "f") == "other"

    data = os.urandom(1 << 20)
    profile = cProfile.Profile()
    profile.enable()
    zlib.compress(data, 6)
    marshal.loads(marshal.dumps([data[i : i + 64] for i in range(0, len(data), 64)]))
    with tempfile.TemporaryFile() as file:
        file.write(data)
    profile.disable()
    stats = pstats.Stats(profile)
    phases = by_phase(stats)
    assert list(phases) == list(PHASES)
    assert phases["compress"] > 0
    assert phases["sort and merge"] > 0
    total = sum(own for _, _, own, _, _ in stats.stats.values())  # type: ignore[attr-defined]
    assert abs(sum(phases.values()) - total) < 1e-3
