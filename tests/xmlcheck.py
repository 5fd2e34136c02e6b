"""Schema validation of generated files against the schemas in ``tests/xsd/`` (P14).

Shared by every test that checks output, so "valid" means one thing across the suite.
lxml (libxml2's XSD 1.0 validator) comes with Scrapy, so validation needs no extra package.

A urlset is validated against ``urlset.xsd``: the core ``sitemap.xsd`` plus the image,
video, news and xhtml-link extension schemas (G7), so the core ``<url>``'s strict
``##other`` wildcard checks every extension element. An index is validated against
``siteindex.xsd``. Rules a schema cannot express are checked in Python below
(:func:`rule_errors`), each error naming its rule.
"""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path

from lxml import etree

XSD_DIR = Path(__file__).parent / "xsd"
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
