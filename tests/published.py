"""Reading what a run published: each origin's index, the urlsets it names, their
``<loc>``s, how far they are from an expected URL set, and any temporary file left behind.

The kill-and-resume test reads a crawl's output with these, and so does the harness
(``benchmarks/checks.py``) before a run's time counts.
"""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from pathlib import Path

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
#: The names an origin's index has: ours and the Python contenders', sitemap.js's.
INDEX_NAMES = ("sitemap.xml", "sitemap-index.xml.gz")


def read_sitemap(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def indexes(out: Path) -> list[Path]:
    """The index of every origin folder in ``out``: ``sitemap.xml``, or sitemap.js's
    ``sitemap-index.xml.gz`` (the name and the compression its README gives the index)."""
    return sorted(p for name in INDEX_NAMES for p in out.glob(f"*/{name}"))


def urlsets(out: Path) -> list[Path]:
    """Every urlset of every origin folder in ``out``, following each index."""
    files = []
    for index in indexes(out):
        for entry in ElementTree.fromstring(read_sitemap(index)).iter(f"{NS}loc"):
            files.append(index.parent / (entry.text or "").rsplit("/", 1)[1])
    return files


def published_locs(out: Path) -> list[str]:
    """Every ``<loc>`` of the published urlsets, in file order, repeats kept."""
    return [
        e.text or ""
        for p in urlsets(out)
        for e in ElementTree.fromstring(read_sitemap(p)).iter(f"{NS}loc")
    ]


def url_set_errors(locs: list[str], expected: set[str]) -> dict[str, int]:
    """How far ``locs`` is from listing ``expected`` once each: missing, extra, duplicates."""
    found = set(locs)
    return {
        "missing": len(expected - found),
        "extra": len(found - expected),
        "duplicates": len(locs) - len(found),
    }


def leftovers(out: Path) -> list[str]:
    """Temporary or partial files anywhere in the output."""
    return [str(p) for p in out.rglob("*") if ".tmp-" in p.name or p.name.endswith(".part")]
