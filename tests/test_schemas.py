"""The schemas the package ships (scrapy_sitemapgen/schemas/) must reject what the protocol
forbids, or "valid" means nothing in the other tests."""

from __future__ import annotations

import pytest

from .helpers import errors

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*urls: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{"".join(urls)}</urlset>'.encode()


def index(*entries: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>{"".join(entries)}</sitemapindex>'.encode()


GOOD_URL = (
    "<url><loc>https://example.com/a?b=1&amp;c=%22d%22</loc><lastmod>2024-01-02T03:04:05+00:00"
    "</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>"
)


def test_well_formed_files_pass() -> None:
    assert errors(urlset(GOOD_URL)) == []
    assert (
        errors(urlset("<url><loc>http://example.com/</loc><lastmod>2024-01-02</lastmod></url>"))
        == []
    )
    assert errors(index("<sitemap><loc>https://example.com/s-1.xml.gz</loc></sitemap>")) == []


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        (urlset(), "P2: at least one <url>"),
        (urlset("<url><lastmod>2024-01-02</lastmod></url>"), "P2: <loc> required"),
        (urlset("<url><loc>/relative</loc></url>"), "P3: absolute URL"),
        (urlset("<url><loc>https://example.com/a b</loc></url>"), "P3: URL-escaped"),
        (urlset("<url><loc>https://example.com/é</loc></url>"), "P3: non-ASCII percent-encoded"),
        (urlset("<url><loc>ftp://example.com/</loc></url>"), "P3/P12: http(s) only"),
        (urlset(f"<url><loc>https://example.com/{'a' * 2028}</loc></url>"), "P3: < 2,048 chars"),
        (
            urlset(
                "<url><loc>https://example.com/</loc><lastmod>2024-01-02T03:04:05</lastmod></url>"
            ),
            "P4: zone",
        ),
        (
            urlset("<url><loc>https://example.com/</loc><lastmod>02/01/2024</lastmod></url>"),
            "P4: W3C",
        ),
        (urlset("<url><loc>https://example.com/</loc><changefreq>often</changefreq></url>"), "P5"),
        (urlset("<url><loc>https://example.com/</loc><priority>1.5</priority></url>"), "P6"),
        (urlset("<url><loc>https://example.com/</loc><priority>high</priority></url>"), "P6"),
        (
            urlset("<url><loc>https://example.com/</loc><loc>https://example.com/x</loc></url>"),
            "P2: one <loc>",
        ),
        (urlset(*["<url><loc>https://example.com/</loc></url>"] * 50_001), "P7: 50,000 URLs"),
        (index(), "P8: at least one <sitemap>"),
        (index("<sitemap><lastmod>2024-01-02</lastmod></sitemap>"), "P8: <loc> required"),
        (
            b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://e.com/</loc></url></urlset>',
            "G5",
        ),
    ],
)
def test_schema_rejects(document: bytes, rule: str) -> None:
    assert errors(document), rule
