"""scrapy-playwright with the add-on on: a page whose links, images and robots meta exist
only after its JavaScript runs gives, crawled through a real headless Chromium, the sitemap
that a plain crawl of a static copy of the rendered pages gives."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .helpers import CHROMIUM_ARGS, Route, SiteServer, html, read_entries, write_project

if TYPE_CHECKING:
    from pathlib import Path

LAST_MODIFIED = {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}

#: What each page's script builds: (head elements, body elements). Nothing of it is in
#: the served HTML of the script site; all of it is in the static copy.
RENDERED = {
    "/": ("", "<a href='/a'>a</a> <a href='/b'>b</a> <img src='/img/home.png'>"),
    "/a": (
        "",
        "<a href='/c'>c</a> <img src='/img/a1.jpg'>"
        "<img srcset='/img/a2-small.jpg 480w, /img/a2.jpg 1080w' src='/img/a2.jpg'>",
    ),
    "/b": ("<meta name='robots' content='noindex'>", "<a href='/'>home</a>"),
    "/c": ("", "<p>reached only through a link that a script wrote</p>"),
}

#: The spider: every request through the browser when ``playwright`` is on.
SPIDER = """
import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"
    playwright = False

    async def start(self):
        yield scrapy.Request(self.start_url, meta={"playwright": self.playwright})

    def parse(self, response):
        yield from response.follow_all(css="a", meta={"playwright": self.playwright})
"""


def scripted_page(head: str, body: str) -> str:
    """A page that is empty until its script writes ``head`` and ``body`` into it."""
    return html(
        "<title>app</title>",
        "<div id='app'></div><script>"
        f"document.head.insertAdjacentHTML('beforeend', {json.dumps(head)});"
        f"document.getElementById('app').innerHTML = {json.dumps(body)};"
        "</script>",
    )


def serve(server: SiteServer, *, scripted: bool) -> SiteServer:
    for path, (head, body) in RENDERED.items():
        page = scripted_page(head, body) if scripted else html(f"<title>app</title>{head}", body)
        server.routes[path] = Route(body=page, headers=LAST_MODIFIED if path == "/a" else {})
    for name in ("home.png", "a1.jpg", "a2.jpg", "a2-small.jpg"):
        server.routes[f"/img/{name}"] = Route(body=b"\x89PNG", content_type="image/png")
    return server


def crawl(tmp_path: Path, server: SiteServer, settings: str) -> dict[str, dict[str, object]]:
    from .helpers import crawl_site

    project = write_project(tmp_path, f"SITEMAPGEN_URI = {str(tmp_path / 'out')!r}\n" + settings)
    (project / "proj" / "spiders" / "site.py").write_text(SPIDER)
    result = crawl_site(project, server)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    entries = read_entries(tmp_path / "out", server.origin.name)
    # The same paths on both origins: compare them without the origin.
    return {
        loc.removeprefix(server.root): {
            **facts,
            "images": [i.removeprefix(server.root) for i in facts["images"]],  # type: ignore[attr-defined]
        }
        for loc, facts in entries.items()
    }


def test_playwright_crawl_gives_the_sitemap_of_the_rendered_pages(
    tmp_path: Path, chromium_executable: str
) -> None:
    launch = {"executable_path": chromium_executable, "args": CHROMIUM_ARGS, "timeout": 60_000}
    playwright_settings = (
        "DOWNLOAD_HANDLERS = {\n"
        '    "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",\n'
        '    "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",\n'
        "}\n"
        'PLAYWRIGHT_BROWSER_TYPE = "chromium"\n'
        f"PLAYWRIGHT_LAUNCH_OPTIONS = {launch!r}\n"
        "from proj.spiders.site import SiteSpider\n"
        "SiteSpider.playwright = True\n"
    )
    with SiteServer() as scripted, SiteServer() as static:
        serve(scripted, scripted=True)
        serve(static, scripted=False)
        rendered = crawl(tmp_path / "browser", scripted, playwright_settings)
        copied = crawl(tmp_path / "static", static, "")
        # The browser fetched the pages' images: the pages did run in Chromium.
        assert "/img/a1.jpg" in scripted.requested
        assert "/img/a1.jpg" not in static.requested

    expected_images = {
        "/": ["/img/home.png"],
        "/a": ["/img/a1.jpg", "/img/a2.jpg"],  # a2-small.jpg: a smaller candidate
        "/c": [],
    }
    # Written from RENDERED by hand: /b is noindex once rendered; /c is reached only
    # through the link a script wrote; /a keeps its Last-Modified through the browser.
    assert {loc: sorted(f["images"]) for loc, f in copied.items()} == {  # type: ignore[call-overload]
        loc: sorted(images) for loc, images in expected_images.items()
    }
    assert copied["/a"]["lastmod"] == "2015-10-21T07:28:00+00:00"
    assert rendered == copied
