"""Schema validation of generated files against the schemas in ``tests/xsd/`` (P14).

Shared by every test that checks output, so "valid" means one thing across the suite.
"""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path

import xmlschema

XSD_DIR = Path(__file__).parent / "xsd"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@cache
def schema(name: str) -> xmlschema.XMLSchema:
    """``sitemap`` (urlset) or ``siteindex``."""
    return xmlschema.XMLSchema(XSD_DIR / f"{name}.xsd")


def read_bytes(path: Path) -> bytes:
    """The uncompressed bytes of a generated file (gzip detected by its magic number)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def errors(data: bytes) -> list[str]:
    """Schema errors of a urlset or index document, [] when valid."""
    kind = "siteindex" if b"<sitemapindex" in data[:300] else "sitemap"
    return [str(e.reason or e) for e in schema(kind).iter_errors(data.decode("utf-8"))]


def assert_valid(path_or_bytes: Path | bytes) -> bytes:
    """Validate and return the uncompressed bytes."""
    data = read_bytes(path_or_bytes) if isinstance(path_or_bytes, Path) else path_or_bytes
    problems = errors(data)
    assert not problems, f"{path_or_bytes!s:.200}: {problems[:5]}"
    return data
