"""The benchmark tools' own arithmetic, on inputs written by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.spy_crawl import summarize

if TYPE_CHECKING:
    from pathlib import Path

RECORD = "SitemapSpiderMiddleware._record (scrapy_sitemapgen/middleware.py:53)"


def test_spy_crawl_sums_the_extension_samples_by_reader(tmp_path: Path) -> None:
    """py-spy's raw format: ``frame;frame;... count``. Samples outside ``_record`` count
    only in the total; inside, each goes to the first reader its path names (the walk of
    the tree wherever it happens), or to the code between the readers."""
    engine = "run (twisted/base.py:1);_process (scrapy/core/scraper.py:2)"
    raw = tmp_path / "samples.txt"
    raw.write_text(
        "\n".join(
            [
                f"{engine} 60",  # the crawl, not the extension
                f"{engine};{RECORD};page_facts (x.py:1);_Page.images (x.py:2);_normal_url (x.py:3) 10",
                f"{engine};{RECORD};page_facts (x.py:1);_Page.exclusion (x.py:4);_Page.nodes (x.py:5) 15",
                f"{engine};{RECORD};page_facts (x.py:1);_Page.exclusion (x.py:4);robots_directives (x.py:6) 5",
                f"{engine};{RECORD};SitemapExporter.record (e.py:1);SqliteFactStore.record (s.py:2) 8",
                f"{engine};{RECORD};page_facts (x.py:1) 2",
                "garbage line without a count",
            ]
        )
    )
    report = summarize(raw, top=3)
    lines = report.splitlines()
    assert lines[0].startswith("40 of 100 samples inside the extension (40.0% of the process's")
    readers = lines[lines.index("by reader:") + 1 : lines.index("by reader:") + 6]
    assert [line.split(None, 1) for line in readers] == [
        ["37.5%", "the walk of the tree"],
        ["25.0%", "images"],
        ["20.0%", "the store"],
        ["12.5%", "indexability"],
        ["5.0%", "the code between them"],
    ]
    paths = lines[lines.index("by call path (the 3 largest):") + 1 :]
    assert paths == [
        "   37.5%  page_facts > _Page.exclusion > _Page.nodes",
        "   25.0%  page_facts > _Page.images > _normal_url",
        "   20.0%  SitemapExporter.record > SqliteFactStore.record",
    ]


def test_ab_set_gives_the_new_side_its_settings() -> None:
    from benchmarks.ab import settings_of

    assert settings_of("new", ["SITEMAPGEN_IMAGES=False", "LOG_LEVEL=DEBUG"]) == [
        "-s",
        "SITEMAPGEN_IMAGES=False",
        "-s",
        "LOG_LEVEL=DEBUG",
    ]
    assert settings_of("base", ["SITEMAPGEN_IMAGES=False"]) == []
