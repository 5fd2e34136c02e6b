"""One entry per image a page shows (docs/media-and-alternates.rst, issue 53): of an
``<img>``'s ``src`` and ``srcset``, or a ``<picture>``'s sources and its ``<img>``, the
largest candidate is the image's ``<image:loc>``; the other candidates are counted in
``sitemapgen/skipped/image/smaller_candidate``.

A real crawl of a local WordPress-like blog (WordPress 6.1's responsive-image markup, a
``<picture>`` of AVIF and WebP sources, a lazy-loading placeholder), the sitemaps
schema-validated and read back. Expectations are written from the markup and the rule
(the greatest width wins; a tie goes to the candidate a browser reads first)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import Route, SiteServer, html, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import CrawlFn


# WordPress 6.1's markup for a 2048x1536 upload inserted at its "large" size.
CAFE = (
    '<img width="1024" height="768" src="/uploads/cafe-1024x768.jpg" class="wp-image-42" '
    'alt="" decoding="async" srcset="/uploads/cafe-1024x768.jpg 1024w, '
    '/uploads/cafe-300x225.jpg 300w, /uploads/cafe-768x576.jpg 768w, /uploads/cafe.jpg 2048w" '
    'sizes="(max-width: 1024px) 100vw, 1024px">'
)
TEAM = (
    "<picture>"
    '<source type="image/avif" srcset="/uploads/team-800.avif 800w, /uploads/team-1600.avif 1600w">'
    '<source type="image/webp" srcset="/uploads/team-800.webp 800w, /uploads/team-1600.webp 1600w">'
    '<img src="/uploads/team-800.jpg" width="800" alt="the team">'
    "</picture>"
)
# A lazy-loading theme: the src is a 1x1 placeholder until a script swaps it.
HERO = (
    '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="640" '
    'srcset="/uploads/hero-640.jpg 640w, /uploads/hero-1280.jpg 1280w" sizes="100vw">'
)


@pytest.fixture
def blog() -> Iterator[SiteServer]:
    with SiteServer() as server:
        server.routes.update(
            {
                "/": Route(
                    body=html(body=f'{HERO}<a href="/cafe/">cafe</a><a href="/about/">a</a>')
                ),
                # The full size again, as a lightbox link's image: still one image.
                "/cafe/": Route(
                    body=html(body=f'{CAFE}<p>text</p>{TEAM}<img src="/uploads/cafe.jpg">')
                ),
                # The thumbnail shown on its own is an image of this page; a 2x logo.
                "/about/": Route(
                    body=html(
                        body='<img src="/uploads/cafe-300x225.jpg" width="300">'
                        '<img src="/uploads/logo.png" srcset="/uploads/logo@2x.png 2x">'
                    )
                ),
            }
        )
        yield server


@deferred_f_from_coro_f
async def test_one_entry_per_image_the_largest_candidate(
    blog: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    crawler = await crawl(start_url=blog.url("/"))
    entries = read_entries(tmp_path / "out", blog.origin.name)
    images = {loc: entry["images"] for loc, entry in entries.items()}
    assert images == {
        blog.url("/"): [blog.url("/uploads/hero-1280.jpg")],
        blog.url("/cafe/"): [blog.url("/uploads/cafe.jpg"), blog.url("/uploads/team-1600.avif")],
        blog.url("/about/"): [
            blog.url("/uploads/cafe-300x225.jpg"),
            blog.url("/uploads/logo@2x.png"),
        ],
    }
    # /: hero-640 (the placeholder is no candidate). /cafe/: 1024x768, 300x225, 768x576;
    # team-800.avif, team-800.webp, team-1600.webp, team-800.jpg. /about/: logo.png.
    assert crawler.stats.get_value("sitemapgen/skipped/image/smaller_candidate") == 9
    assert crawler.stats.get_value("sitemapgen/pages/recorded") == 3


@deferred_f_from_coro_f
async def test_images_switched_off_count_nothing(
    blog: SiteServer, crawl: CrawlFn, tmp_path: Path
) -> None:
    crawler = await crawl({"SITEMAPGEN_IMAGES": False}, start_url=blog.url("/"))
    entries = read_entries(tmp_path / "out", blog.origin.name)
    assert {loc: entry["images"] for loc, entry in entries.items()} == {
        blog.url(path): [] for path in ("/", "/cafe/", "/about/")
    }
    assert crawler.stats.get_value("sitemapgen/skipped/image/smaller_candidate") is None
