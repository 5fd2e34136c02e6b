"""Schema validation of generated files against the schemas in ``tests/xsd/`` (P14).

Shared by every test that checks output, so "valid" means one thing across the suite.
lxml (libxml2's XSD 1.0 validator) comes with Scrapy, so validation needs no extra package.
"""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path

from lxml import etree

XSD_DIR = Path(__file__).parent / "xsd"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@cache
def schema(name: str) -> etree.XMLSchema:
    """``sitemap`` (urlset) or ``siteindex``."""
    return etree.XMLSchema(etree.parse(str(XSD_DIR / f"{name}.xsd")))


def read_bytes(path: Path) -> bytes:
    """The uncompressed bytes of a generated file (gzip detected by its magic number)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def errors(data: bytes) -> list[str]:
    """Schema errors of a urlset or index document, [] when valid."""
    kind = "siteindex" if b"<sitemapindex" in data[:300] else "sitemap"
    # A parser that resolves no entities and reads nothing from the network.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        document = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        return [f"not well-formed: {exc}"]
    validator = schema(kind)
    if validator.validate(document):
        return []
    return [f"line {e.line}: {e.message}" for e in validator.error_log]


def assert_valid(path_or_bytes: Path | bytes) -> bytes:
    """Validate and return the uncompressed bytes."""
    data = read_bytes(path_or_bytes) if isinstance(path_or_bytes, Path) else path_or_bytes
    problems = errors(data)
    assert not problems, f"{path_or_bytes!s:.200}: {problems[:5]}"
    return data
