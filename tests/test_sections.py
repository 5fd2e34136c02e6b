"""SITEMAPGEN_SECTIONS: a urlset sequence per section, one index, incremental per file."""

from __future__ import annotations

import gzip
import json
import logging
from typing import TYPE_CHECKING

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.naming import is_owned_name, section_of_name, urlset_name
from scrapy_sitemapgen.state.statefile import PublishState

from .helpers import NS, Route, SiteServer, assert_valid, html, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SECTIONS = [("products", r"/products/"), ("blog", r"/blog/")]
SETTINGS = {"SITEMAPGEN_SECTIONS": SECTIONS, "SITEMAPGEN_MAX_URLS": 2}


def _links(*paths: str) -> str:
    return "".join(f"<a href='{p}'>x</a>" for p in paths)


PAGES = ["/", "/about", "/help/h1", "/products/p1", "/products/p2", "/products/p3"]
PAGES += ["/blog/b1", "/blog/b2"]


@pytest.fixture
def shop() -> Iterator[SiteServer]:
    """A home page linking to every page: three of no section, three products, two posts."""
    server = SiteServer()
    # The links in a <nav>: the site's menu, no content of the home page, which a new
    # link in it does not change (docs/lastmod.rst, "Content").
    server.routes["/"] = Route(body=html(body=f"<nav>{_links(*PAGES[1:])}</nav>"))
    for path in PAGES[1:]:
        # Each its own text, so none is another's duplicate by content.
        server.routes[path] = Route(body=html(body=f"<p>{path}</p>"))
    yield server
    server.close()


def _index_names(folder: Path) -> list[str]:
    from xml.etree import ElementTree

    index = ElementTree.fromstring(assert_valid(folder / "sitemap.xml"))
    return [loc.text.rsplit("/", 1)[1] for loc in index.iter(f"{NS}loc")]


def _locs(folder: Path, name: str) -> list[str]:
    from xml.etree import ElementTree

    root = ElementTree.fromstring(assert_valid(folder / name))
    return [loc.text for loc in root.iter(f"{NS}loc")]


@deferred_f_from_coro_f
async def test_each_section_is_its_own_sequence_in_one_index(
    shop, crawl, tmp_path: Path, caplog
) -> None:
    with caplog.at_level(logging.INFO):
        crawler = await crawl(SETTINGS, start_url=shop.url("/"))
    folder = tmp_path / "out" / shop.origin.name
    u = shop.url
    # The URLs of no section keep the plain names; each section is split at 2 on its own
    # (P7), and the one index lists them all (P8), no section first, then in setting order.
    assert _index_names(folder) == [
        "sitemap-1.xml.gz",
        "sitemap-2.xml.gz",
        "sitemap-products-1.xml.gz",
        "sitemap-products-2.xml.gz",
        "sitemap-blog-1.xml.gz",
    ]
    assert _locs(folder, "sitemap-1.xml.gz") == [u("/"), u("/about")]
    assert _locs(folder, "sitemap-2.xml.gz") == [u("/help/h1")]
    assert _locs(folder, "sitemap-products-1.xml.gz") == [u("/products/p1"), u("/products/p2")]
    assert _locs(folder, "sitemap-products-2.xml.gz") == [u("/products/p3")]
    assert _locs(folder, "sitemap-blog-1.xml.gz") == [u("/blog/b1"), u("/blog/b2")]
    # Every file schema-valid, the index naming exactly the files on disk, no URL twice.
    assert sorted(read_entries(tmp_path / "out", shop.origin.name)) == sorted(map(u, PAGES))
    # Scrapy's own sitemap reader follows the index and reads every URL back.
    index = Sitemap((folder / "sitemap.xml").read_bytes())
    assert index.type == "sitemapindex"
    read_back = []
    for entry in index:
        urlset = Sitemap(gzip.decompress((folder / entry["loc"].rsplit("/", 1)[1]).read_bytes()))
        assert urlset.type == "urlset"
        read_back += [url["loc"] for url in urlset]
    assert sorted(read_back) == sorted(map(u, PAGES))
    # The counts per section: manifest, state, stats, close log.
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sections"] == {
        "default": {"files": 2, "urls": 3},
        "products": {"files": 2, "urls": 3},
        "blog": {"files": 1, "urls": 2},
    }
    state = PublishState(tmp_path / "out" / ".sitemapgen-state.sqlite3")
    try:
        # "." is the key of an output folder that holds its state file.
        counts = state.section_counts(".", shop.origin.name)
    finally:
        state.close()
    assert counts == {"default": (2, 3), "products": (2, 3), "blog": (1, 2)}
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/sections/default/urls"] == 3
    assert stats["sitemapgen/sections/products/urls"] == 3
    assert stats["sitemapgen/sections/products/files"] == 2
    assert stats["sitemapgen/sections/blog/urls"] == 2
    assert stats["sitemapgen/sections/blog/files"] == 1
    assert (
        f"Sitemap: {shop.origin.root} by section: default 3 URLs in 2 files, products 3 URLs in 2 files, blog 2 URLs in 1 file"
        in caplog.messages
    )


@deferred_f_from_coro_f
async def test_a_new_blog_page_leaves_the_product_files_alone(shop, crawl, tmp_path: Path) -> None:
    """Incremental per file (P10): only the blog's sequence and the index change."""
    await crawl(SETTINGS, start_url=shop.url("/"))
    folder = tmp_path / "out" / shop.origin.name
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    manifest_before = json.loads((folder / "manifest.json").read_text())
    shop.routes["/"] = Route(body=html(body=f"<nav>{_links(*PAGES[1:], '/blog/b3')}</nav>"))
    shop.routes["/blog/b3"] = Route(body=html(body="<p>new</p>"))
    crawler = await crawl(SETTINGS, start_url=shop.url("/"))
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    untouched = [
        "sitemap-1.xml.gz",
        "sitemap-2.xml.gz",
        "sitemap-products-1.xml.gz",
        "sitemap-products-2.xml.gz",
        "sitemap-blog-1.xml.gz",  # b1, b2: the new b3 starts the blog's second file
        "robots.txt",
    ]
    for name in untouched:
        assert after[name] == before[name], f"{name} was rewritten"
    assert _locs(folder, "sitemap-blog-2.xml.gz") == [shop.url("/blog/b3")]
    assert "sitemap-blog-2.xml.gz" not in before
    # The unchanged files keep their index lastmod (P10); the new one is listed last.
    lastmod = {f["name"]: f["lastmod"] for f in manifest_before["files"]}
    manifest = json.loads((folder / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["name"] in untouched:
            assert entry["lastmod"] == lastmod[entry["name"]]
    assert _index_names(folder)[-1] == "sitemap-blog-2.xml.gz"
    assert manifest["sections"]["blog"] == {"files": 2, "urls": 3}
    stats = crawler.stats.get_stats()
    assert stats["sitemapgen/files/written"] == 2  # sitemap-blog-2 and the index
    assert stats["sitemapgen/sections/blog/urls"] == 3


@deferred_f_from_coro_f
async def test_a_section_dropped_from_the_setting_has_its_files_removed(
    shop, crawl, tmp_path: Path
) -> None:
    await crawl(SETTINGS, start_url=shop.url("/"))
    folder = tmp_path / "out" / shop.origin.name
    (folder / "sitemap-backup-1.xml.gz.bak").write_bytes(b"a user's file")
    await crawl({"SITEMAPGEN_MAX_URLS": 2}, start_url=shop.url("/"))
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap-2.xml.gz",
        "sitemap-3.xml.gz",
        "sitemap-4.xml.gz",
        "sitemap-backup-1.xml.gz.bak",
        "sitemap.xml",
    ]
    assert "sections" not in json.loads((folder / "manifest.json").read_text())


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ([("news", "/n/")], "names the package uses already"),
        ([("index", "/i/")], "names the package uses already"),
        ([("default", "/d/")], "names the package uses already"),
        ([("Blog", "/blog/")], "lower-case letters"),
        ([("a/b", "/blog/")], "safe in a file name"),
        ([("", "/blog/")], "safe in a file name"),
        ([("-x", "/blog/")], "not first or last"),
        ([("blog", "/blog/"), ("blog", "/posts/")], "a name of its own"),
        ([("blog", "(")], "no regular expression"),
        ([("blog",)], "not a (name, regular expression) pair"),
        ("blog", "not a (name, regular expression) pair"),
    ],
)
def test_bad_sections_are_refused_naming_the_setting(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match="SITEMAPGEN_SECTIONS") as info:
        Config.from_settings(Settings({"SITEMAPGEN_SECTIONS": value}))
    assert fragment in str(info.value)


def test_sections_from_the_command_line_are_json() -> None:
    config = Config.from_settings(
        Settings({"SITEMAPGEN_SECTIONS": '[["blog", "/blog/"], ["help-center", "/help/"]]'})
    )
    assert [(s.name, s.pattern.pattern) for s in config.sections] == [
        ("blog", "/blog/"),
        ("help-center", "/help/"),
    ]


@pytest.mark.parametrize(
    ("name", "section"),
    [
        ("sitemap-1.xml.gz", ""),
        ("sitemap-12.xml", ""),
        ("sitemap-blog-1.xml.gz", "blog"),
        ("sitemap-help-center-3.xml", "help-center"),
        ("sitemap-news-1.xml.gz", None),
        ("sitemap-index-2.xml", None),
        ("sitemap-1.txt.gz", None),
        ("sitemap-blog-01.xml.gz", None),
        ("sitemap-blog-0.xml.gz", None),
        ("sitemap-Blog-1.xml.gz", None),
        ("sitemap-blog-1.xml.gz.bak", None),
        ("sitemap.xml", None),
    ],
)
def test_the_section_of_a_file_name(name: str, section: str | None) -> None:
    assert section_of_name(name) == section
    assert is_owned_name(name) == (
        section is not None
        or name
        in ("sitemap-news-1.xml.gz", "sitemap-index-2.xml", "sitemap-1.txt.gz", "sitemap.xml")
    )


def test_section_names_round_trip() -> None:
    assert urlset_name(3, True, "blog") == "sitemap-blog-3.xml.gz"
    assert urlset_name(3, False) == "sitemap-3.xml"
