"""Chrome images (SITEMAPGEN_IMAGE_CHROME_SHARE, docs/media-and-alternates.rst): an image
on more than a share of an origin's listed pages is left out of every page's images (G7:
image sitemaps are for the images a page is about).

Real crawls of local sites (a logo on every page, an icon on 60 % of them, a banner on
40 %, an image of its own on each), the sitemaps schema-validated and read back by Scrapy's
parser; a build from a feed in worker processes; and the frequent-items count checked
against an exact count on seeded random data. Expectations are written from the rule."""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.features.chrome_images import (
    ChromeImages,
    ImageCounts,
    chrome_check,
    pages_allowed,
)
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import Content, UrlFacts

from .helpers import Route, SiteServer, html, read_bytes, read_entries, run_build

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import CrawlFn

CHROME_LINE = (
    "Sitemap: {root}: {images} image{s} on more pages than SITEMAPGEN_IMAGE_CHROME_SHARE "
    "allows left out of every page's images as the site's chrome, {count} in all "
    "(sitemapgen/skipped/image/chrome): {first}"
)


# --- the sites ---------------------------------------------------------------------------


class ImagesSpider(scrapy.Spider):
    """Follows every link; a page that names an image in ``<meta name=item-image>`` also
    yields a sitemap item carrying that image (an item's images count like the page's)."""

    name = "images"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        image = response.css("meta[name=item-image]::attr(content)").get()
        if image:
            yield {"loc": response.url, "images": [image]}
        yield from response.follow_all(css="a")


def _page(title: str, images: list[str], links: list[str], item_image: str | None = None) -> Route:
    head = f"<title>{title}</title>"
    if item_image:
        head += f"<meta name=item-image content='{item_image}'>"
    body = "".join(f"<img src='{src}' alt=''>" for src in images)
    body += f"<h1>{title}</h1><p>The page about {title}.</p>"
    body += "".join(f"<a href='{href}'>{href}</a>" for href in links)
    return Route(body=html(head, body))


def _paths(count: int) -> list[str]:
    return ["/", *(f"/p/{n}" for n in range(1, count))]


Sites = tuple[SiteServer, SiteServer, SiteServer, dict[str, dict[str, list[str]]]]


@pytest.fixture
def sites() -> Iterator[Sites]:
    """The three origins (:func:`build_sites`) and what each page carries."""
    a, b, c = SiteServer(), SiteServer(), SiteServer()
    yield a, b, c, build_sites(a, b, c)
    for server in (a, b, c):
        server.close()


def build_sites(a: SiteServer, b: SiteServer, c: SiteServer) -> dict[str, dict[str, list[str]]]:
    """Origin ``a``: 25 listed pages (and one duplicate by content, left out), the logo on
    every page, the icon on 15 (five of them from an item), the banner on 10, an image of
    each page's own. Origin ``b``: 20 pages, ``a``'s banner on all of them. Origin ``c``:
    19 pages, its logo on all of them. Returns, for each origin's root, each listed page's
    URL -> every image it carries, in the page's order."""
    logo, icon, banner = a.url("/static/logo.svg"), a.url("/static/icon.svg"), a.url("/banner.jpg")
    pages: dict[str, dict[str, list[str]]] = {a.url("/"): {}, b.url("/"): {}, c.url("/"): {}}
    a_paths = _paths(25)
    for n, path in enumerate(a_paths):
        own = a.url(f"/img/{n}.jpg")
        shared = [icon] if n % 5 < 3 else [banner]  # 15 pages with the icon, 10 with the banner
        item_image = icon if n % 5 == 0 else None  # the icon of five pages comes from an item
        in_html = [logo, *(s for s in shared if s != item_image), own]
        links = [*a_paths, "/p/1?print=1", b.url("/"), c.url("/")] if path == "/" else []
        a.routes[path] = _page(f"a{n}", in_html, links, item_image)
        # An item's images come after the page's (the merge rules).
        pages[a.url("/")][a.url(path)] = [*in_html, *([item_image] if item_image else [])]
    # The same text as /p/1: left out as a duplicate by content, its images with it.
    a.routes["/p/1?print=1"] = a.routes["/p/1"]
    b_paths = _paths(20)
    for n, path in enumerate(b_paths):
        own = b.url(f"/photo-{n}.png")
        b.routes[path] = _page(f"b{n}", [banner, own], b_paths if path == "/" else [])
        pages[b.url("/")][b.url(path)] = [banner, own]
    c_paths = _paths(19)
    c_logo = c.url("/logo.png")
    for n, path in enumerate(c_paths):
        own = c.url(f"/pic-{n}.gif")
        c.routes[path] = _page(f"c{n}", [c_logo, own], c_paths if path == "/" else [])
        pages[c.url("/")][c.url(path)] = [c_logo, own]
    return pages


def _listed(out: Path, server: SiteServer) -> dict[str, list[str]]:
    """Each listed page's ``<image:loc>``s (every file schema-valid and accepted by the
    package's validator); the same locs read back by Scrapy's own sitemap parser."""
    entries = read_entries(out, server.origin.name)
    images = {loc: list(entry["images"]) for loc, entry in entries.items()}  # type: ignore[call-overload]
    folder = out / server.origin.name
    scrapy_locs = [
        url["loc"]
        for sitemap in Sitemap(read_bytes(folder / "sitemap.xml"))
        for url in Sitemap(read_bytes(folder / sitemap["loc"].rsplit("/", 1)[1]))
    ]
    assert sorted(scrapy_locs) == sorted(images)
    return images


def _lines(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == level and "as the site's chrome" in r.getMessage()
    ]


@deferred_f_from_coro_f
async def test_chrome_images_left_out_per_origin(
    sites: Sites, crawl: CrawlFn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, c, pages = sites
    logo, icon, banner = a.url("/static/logo.svg"), a.url("/static/icon.svg"), a.url("/banner.jpg")
    with caplog.at_level(logging.INFO, logger="scrapy_sitemapgen"):
        crawler = await crawl(spidercls=ImagesSpider, start_url=a.url("/"))
    out = tmp_path / "out"
    # a: 25 listed pages, at most floor(0.5 * 25) = 12 may share an image. The logo (25)
    # and the icon (15, five of them from items) go; the banner (10) and each page's own stay.
    got_a = _listed(out, a)
    assert set(got_a) == set(pages[a.url("/")])
    assert a.url("/p/1?print=1") not in got_a
    for loc, images in pages[a.url("/")].items():
        assert got_a[loc] == [i for i in images if i not in (logo, icon)], loc
    assert sum(banner in images for images in got_a.values()) == 10
    # b: 20 pages, at most 10 may share an image; a's banner is on all 20 of b's: gone from
    # b, decided on b's pages alone (a keeps it).
    got_b = _listed(out, b)
    assert got_b == {loc: [b.url(f"/photo-{n}.png")] for n, loc in enumerate(pages[b.url("/")])}
    # c: 19 pages, fewer than 20: its logo on every page stays.
    assert _listed(out, c) == pages[c.url("/")]
    # One per image per page it was left out of: 25 + 15 in a, 20 in b.
    assert crawler.stats.get_value("sitemapgen/skipped/image/chrome") == 60
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 1
    assert sorted(_lines(caplog)) == sorted(
        [
            CHROME_LINE.format(
                root=a.url("/"),
                images=2,
                s="s",
                count=40,
                first=f"{logo} (on 25 pages), {icon} (on 15 pages)",
            ),
            CHROME_LINE.format(
                root=b.url("/"), images=1, s="", count=20, first=f"{banner} (on 20 pages)"
            ),
        ]
    )


@deferred_f_from_coro_f
async def test_none_keeps_every_image(
    sites: Sites, crawl: CrawlFn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, c, pages = sites
    with caplog.at_level(logging.DEBUG, logger="scrapy_sitemapgen"):
        crawler = await crawl(
            {"SITEMAPGEN_IMAGE_CHROME_SHARE": None}, spidercls=ImagesSpider, start_url=a.url("/")
        )
    out = tmp_path / "out"
    for server in (a, b, c):
        assert _listed(out, server) == pages[server.url("/")]
    assert crawler.stats.get_value("sitemapgen/skipped/image/chrome") is None
    assert _lines(caplog, logging.INFO) == _lines(caplog, logging.DEBUG) == []


@deferred_f_from_coro_f
async def test_without_the_duplicates_pass_and_at_a_higher_share(
    sites: Sites, crawl: CrawlFn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SITEMAPGEN_DEDUPE_CONTENT off: the count makes its own pass; at 0.7 only the
    logo (on every page) goes: the icon on 15 of a's 26 pages is at most floor(0.7 * 26).
    With SITEMAPGEN_LOG_ORIGINS=1, only the first origin's line is at INFO, the counter
    still counts every origin."""
    a, b, c, pages = sites
    logo, banner = a.url("/static/logo.svg"), a.url("/banner.jpg")
    with caplog.at_level(logging.DEBUG, logger="scrapy_sitemapgen"):
        crawler = await crawl(
            {
                "SITEMAPGEN_DEDUPE_CONTENT": False,
                "SITEMAPGEN_IMAGE_CHROME_SHARE": 0.7,
                "SITEMAPGEN_LOG_ORIGINS": 1,
                "LOG_LEVEL": "DEBUG",
            },
            spidercls=ImagesSpider,
            start_url=a.url("/"),
        )
    out = tmp_path / "out"
    got_a = _listed(out, a)
    expected = {loc: [i for i in images if i != logo] for loc, images in pages[a.url("/")].items()}
    expected[a.url("/p/1?print=1")] = expected[a.url("/p/1")]  # listed: no dedupe
    assert got_a == expected
    # b: the banner on 20 of 20 pages, more than floor(0.7 * 20) = 14.
    assert _listed(out, b) == {
        loc: [b.url(f"/photo-{n}.png")] for n, loc in enumerate(pages[b.url("/")])
    }
    assert _listed(out, c) == pages[c.url("/")]  # 19 pages: every image stays
    assert crawler.stats.get_value("sitemapgen/skipped/image/chrome") == 26 + 20
    lines = {
        a.origin: CHROME_LINE.format(
            root=a.url("/"), images=1, s="", count=26, first=f"{logo} (on 26 pages)"
        ),
        b.origin: CHROME_LINE.format(
            root=b.url("/"), images=1, s="", count=20, first=f"{banner} (on 20 pages)"
        ),
    }
    first = min(a.origin, b.origin, c.origin)
    assert _lines(caplog) == ([lines[first]] if first in lines else [])
    assert sorted(_lines(caplog, logging.DEBUG)) == sorted(
        line for origin, line in lines.items() if origin != first
    )


def test_a_build_in_worker_processes_reports_the_chrome_images(tmp_path: Path) -> None:
    """A feed (items only, no content: the count's own pass) of three origins staged by two
    workers: the counts and the close log's line come back from them; the origin of 19
    records (fewer than 20 rows: no pass made) keeps its logo."""
    lines = []
    for host, count in (("a.example", 30), ("b.example", 22), ("c.example", 19)):
        for n in range(count):
            images = [f"https://{host}/logo.png", f"https://{host}/i/{n}.jpg"]
            lines.append(json.dumps({"loc": f"https://{host}/p/{n}", "images": images}))
    (tmp_path / "feed.jsonl").write_text("\n".join(lines) + "\n")
    result = run_build(
        tmp_path, "--input", "feed.jsonl", "--workers", "2", "-s", "SITEMAPGEN_URI=out"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'sitemapgen/skipped/image/chrome': 52," in result.stderr, result.stderr[-3000:]
    for host, count in (("a.example", 30), ("b.example", 22)):
        line = CHROME_LINE.format(
            root=f"https://{host}/",
            images=1,
            s="",
            count=count,
            first=f"https://{host}/logo.png (on {count} pages)",
        )
        assert line in result.stderr, result.stderr[-3000:]
        entries = read_entries(tmp_path / "out", f"https_{host}_443")
        assert {loc: e["images"] for loc, e in entries.items()} == {
            f"https://{host}/p/{n}": [f"https://{host}/i/{n}.jpg"] for n in range(count)
        }
    entries = read_entries(tmp_path / "out", "https_c.example_443")
    assert {loc: e["images"] for loc, e in entries.items()} == {
        f"https://c.example/p/{n}": ["https://c.example/logo.png", f"https://c.example/i/{n}.jpg"]
        for n in range(19)
    }
    assert "https://c.example/: 1 image on" not in result.stderr


# --- the count and the decision, against an exact count -------------------------------------


def _facts(loc: str, images: list[str], fingerprint: str | None = None) -> UrlFacts:
    content = Content(fingerprint, "2026-01-01T00:00:00+00:00") if fingerprint else None
    return UrlFacts(loc, images=tuple(images), content=content)


def _random_pages(rng: random.Random, count: int) -> list[list[str]]:
    """Pages of a site: a few images on most pages, some near the share on either side,
    many shared by a few, and one or more of each page's own."""
    shared = {f"/s/{k}": rng.uniform(0.3, 0.99) for k in range(12)}
    pages = []
    for n in range(count):
        images = [image for image, p in shared.items() if rng.random() < p]
        images += [f"/few/{rng.randrange(count // 3)}" for _ in range(rng.randrange(3))]
        images += [f"/own/{n}/{k}" for k in range(rng.randrange(1, 6))]
        pages.append(list(dict.fromkeys(images)))
    return pages


def _exact_chrome(pages: list[list[str]], share: Fraction) -> set[str]:
    counts = Counter(image for images in pages for image in images)
    allowed = share.numerator * len(pages) // share.denominator
    return {image for image, count in counts.items() if count > allowed}


@pytest.mark.parametrize("seed", range(6))
def test_the_count_keeps_every_frequent_image_in_bounded_memory(seed: int) -> None:
    """Misra-Gries with a small table: every image on more than the share of the pages has
    a counter, each counter's bounds hold its true count, and an image without one is on
    no more pages than the decrements made; the table stays far below the distinct images."""
    rng = random.Random(seed)
    pages = _random_pages(rng, 3000)
    share = Fraction(rng.choice([1, 2, 3]), 4)
    counts = ImageCounts(share, floor=16)
    for images in pages:
        counts.add(images)
    truth = Counter(image for images in pages for image in images)
    assert counts.decrements > 0  # the table did forget
    assert counts.decrements <= share.numerator * 3000 // share.denominator
    bounds = {image: (least, most) for image, least, most in counts.bounds()}
    for image in _exact_chrome(pages, share):
        assert image in bounds
    for image, count in truth.items():
        if image in bounds:
            least, most = bounds[image]
            assert least <= count <= most, image
        else:
            assert count <= counts.decrements, image
    assert len(truth) > 5_000
    assert len(counts.counts) < 1_000


#: How many duplicates by content per listed page: none (the count's own pass), a tenth
#: (counted on the duplicates' pass), more than one each (that count cannot decide alone).
COPIES = [None, 0.1, 1.5]


def _copies(rng: random.Random, pages: list[list[str]], ratio: float) -> list[UrlFacts]:
    """Pages left out as duplicates of listed ones (their fingerprint), with other images,
    ``/s/0`` on each (counted on the duplicates' pass, never among the listed)."""
    return [
        _facts(
            f"/copy/{k}", [*dict.fromkeys([*pages[rng.randrange(len(pages))][:2], "/s/0"])], f"f{n}"
        )
        for k, n in enumerate(rng.choices(range(len(pages)), k=int(len(pages) * ratio)))
    ]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("copies", COPIES)
def test_the_decision_is_the_exact_one_and_ignores_the_order(
    seed: int, copies: float | None
) -> None:
    """Chrome images as an exact count over the listed pages decides, in any page order,
    also when the count rides on the duplicates' pass (over the duplicates too)."""
    rng = random.Random(seed)
    pages = _random_pages(rng, rng.randrange(20, 2000))
    share = rng.choice([0.2, 0.5, 0.57, 0.8])
    stored = [_facts(f"/page/{n}", images, f"f{n}") for n, images in enumerate(pages)]
    every = stored + (_copies(rng, pages, copies) if copies is not None else [])
    expected = _exact_chrome(pages, Fraction(repr(share)))
    for _ in range(2):
        rng.shuffle(every)
        listed = [facts for facts in every if facts.loc.startswith("/page/")]
        chrome = ChromeImages(share, folded=copies is not None, floor=8)
        if copies is not None:
            for _ in chrome.counted(every):
                pass
        chrome.decide(lambda listed=listed: iter(listed), len(pages))  # type: ignore[misc]
        assert chrome.images == expected
        assert chrome.listed == len(pages)


def test_twenty_pages_at_least_and_the_share_in_exact_arithmetic() -> None:
    logo = "/logo.svg"
    for count, expected in ((19, frozenset()), (20, frozenset({logo}))):
        entries = [_facts(f"/{n}", [logo, f"/{n}.jpg"]) for n in range(count)]
        chrome = ChromeImages(0.5, folded=False)
        chrome.decide(lambda entries=entries: iter(entries))  # type: ignore[misc]
        assert chrome.images == expected
    # 57 of 100 pages is not more than 57 % of them (0.57 * 100 is 56.99... in floats).
    assert pages_allowed(Fraction(repr(0.57)), 100) == 57
    entries = [_facts(f"/{n}", ["/icon.png"] if n < 57 else []) for n in range(100)]
    chrome = ChromeImages(0.57, folded=False)
    chrome.decide(lambda: iter(entries))
    assert chrome.images == frozenset()
    entries[57] = _facts("/57", ["/icon.png"])
    chrome = ChromeImages(0.57, folded=False)
    chrome.decide(lambda: iter(entries))
    assert chrome.images == frozenset({"/icon.png"})


def test_no_check_when_off_or_known_to_be_too_small() -> None:
    assert chrome_check(None, folded=True, most_pages=None) is None
    assert chrome_check(0.5, folded=False, most_pages=19) is None  # no pass made
    assert chrome_check(0.5, folded=False, most_pages=20) is not None
    assert chrome_check(0.5, folded=True, most_pages=None) is not None  # not known


def test_strip_counts_the_first_pass_only() -> None:
    entries = [_facts(f"/{n}", ["/logo.svg", "/icon.png", f"/{n}.jpg"]) for n in range(20)]
    entries += [_facts("/bare", [])]
    chrome = ChromeImages(0.5, folded=False)
    chrome.decide(lambda: iter(entries))
    assert chrome.images == {"/logo.svg", "/icon.png"}
    first = list(chrome.strip(entries, first=True))
    again = list(chrome.strip(entries, first=False))
    assert first == again
    assert [facts.images for facts in first] == [(f"/{n}.jpg",) for n in range(20)] + [()]
    assert entries[0].images == ("/logo.svg", "/icon.png", "/0.jpg")  # the stored entry is left
    assert chrome.removals == 40
    assert chrome.first() == [("/icon.png", 20), ("/logo.svg", 20)]


@pytest.mark.parametrize(
    ("value", "share"),
    [(0.5, 0.5), ("0.8", 0.8), (None, None), ("None", None)],
)
def test_the_setting_none_switches_it_off(value: object, share: float | None) -> None:
    """A None set in the settings is the user's None, not "use the default"."""
    assert (
        Config.from_settings(Settings({"SITEMAPGEN_IMAGE_CHROME_SHARE": value})).image_chrome_share
        == share
    )
    assert Config.from_settings(Settings({})).image_chrome_share == 0.5
    with pytest.raises(ValueError, match=r"SITEMAPGEN_IMAGE_CHROME_SHARE=1\.0 is invalid"):
        Config.from_settings(Settings({"SITEMAPGEN_IMAGE_CHROME_SHARE": 1.0}))
