"""The one place a benchmark's output is checked before its time counts.

A run whose output is wrong raises :class:`CheckFailed`: the harness stops, and the result
file says ``"status": "failed"`` with the reason. What is checked, by benchmark:

- build and memory: the ``<loc>`` count of every urlset, following each origin's index
  (ours: the feed's distinct normalised URLs; the record writers: one per record), and
  ``scrapy sitemapgen-validate``'s checker on every file or each origin's first urlset;
- crawl: the published URL set is exactly the site's listable pages, once each, and the
  first crawl's files pass the checker; with the add-on off, nothing is written;
- kill: the published URL set after the resume (missing, extra, duplicates) and no
  temporary file left in the output.
"""

from __future__ import annotations

import gzip
import hashlib
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
#: The names an origin's index has: ours and the Python contenders', sitemap.js's.
INDEX_NAMES = ("sitemap.xml", "sitemap-index.xml.gz")


class CheckFailed(AssertionError):
    """A benchmark's output is wrong: its time does not count."""


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


def count_locs(out: Path) -> tuple[int, int]:
    """(``<loc>``s in the urlsets, bytes of the indexes and urlsets) of an output folder."""
    files = urlsets(out)
    if not files:
        raise CheckFailed(f"no index, or an empty one, in {out}")
    size = sum(p.stat().st_size for p in [*indexes(out), *files])
    return sum(read_sitemap(p).count(b"<loc>") for p in files), size


def require_count(what: str, found: int, expected: int) -> None:
    if found != expected:
        raise CheckFailed(f"{what}: {found:,} URLs written, {expected:,} expected")


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


def require_url_set(what: str, out: Path, expected: set[str]) -> None:
    errors = url_set_errors(published_locs(out), expected)
    if any(errors.values()):
        raise CheckFailed(
            f"{what}: {', '.join(f'{n} {k}' for k, n in errors.items())} "
            f"against the {len(expected):,} URLs expected"
        )


def leftovers(out: Path) -> list[str]:
    """Temporary or partial files anywhere in the output."""
    return [str(p) for p in out.rglob("*") if ".tmp-" in p.name or p.name.endswith(".part")]


def validate(sources: Iterable[Path]) -> None:
    """The package's own checker (``scrapy sitemapgen-validate``) on ``sources``: the
    schema and every protocol rule."""
    from scrapy_sitemapgen.validate.checker import validate as check

    violations = check([str(p) for p in sources])
    if violations:
        raise CheckFailed("\n".join(map(str, violations[:20])))


def urlset_digest(out: Path) -> str:
    """One hash of the urlsets (the indexes and the manifest hold the run's time; gzip
    members hold none, so equal URLs give equal bytes)."""
    total = hashlib.sha256()
    for path in urlsets(out):
        total.update(path.name.encode())
        total.update(path.read_bytes())
    return total.hexdigest()
