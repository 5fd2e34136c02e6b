"""Reading a generated output folder back, schema-checking every file on the way."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from .xmlcheck import NS, assert_valid


def files(out: Path) -> set[str]:
    """Every file under ``out``, as ``origin/name`` paths."""
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def read_urls(out: Path) -> dict[str, dict[str, dict[str, str | None]]]:
    """origin folder -> {loc: {lastmod, changefreq, priority}}, following each index, with
    every urlset and index validated against the schemas and no loc listed twice."""
    result: dict[str, dict[str, dict[str, str | None]]] = {}
    for index in sorted(out.glob("*/sitemap.xml")):
        urls: dict[str, dict[str, str | None]] = {}
        root = ElementTree.fromstring(assert_valid(index))
        for loc in root.iter(f"{NS}loc"):
            name = loc.text.rsplit("/", 1)[1]
            urlset = ElementTree.fromstring(assert_valid(index.parent / name))
            for url in urlset.iter(f"{NS}url"):
                fields = {
                    tag: (url.findtext(f"{NS}{tag}")) for tag in ("lastmod", "changefreq", "priority")
                }
                key = url.findtext(f"{NS}loc")
                assert key not in urls, f"{key} listed twice"
                urls[key] = fields
        result[index.parent.name] = urls
    return result


def lastmods(out: Path) -> dict[str, dict[str, str | None]]:
    return {o: {loc: f["lastmod"] for loc, f in urls.items()} for o, urls in read_urls(out).items()}
