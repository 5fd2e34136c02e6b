"""The one place a benchmark's output is checked before its time counts.

A run whose output is wrong raises :class:`CheckFailed`: the harness stops, and the result
file says ``"status": "failed"`` with the reason. What is checked, by benchmark:

- build and memory: the ``<loc>`` count of every urlset, following each origin's index
  (ours: the feed's distinct normalised URLs; the record writers: one per record), and
  ``scrapy sitemapgen-validate``'s checker on every file or each origin's first urlset;
- crawl: the published URL set is exactly the site's listable pages, once each, and the
  first crawl's files pass the checker; with the add-on off, nothing is written;
- kill: the published URL set after the resume (missing, extra, duplicates) and no
  temporary file left in the output (the trial, ``tests/kill_trial.py``, reads it).

Reading the published files is ``tests/published.py``'s, which the tests share.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from tests.published import indexes, published_locs, read_sitemap, url_set_errors, urlsets

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


class CheckFailed(AssertionError):
    """A benchmark's output is wrong: its time does not count."""


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


def require_url_set(what: str, out: Path, expected: set[str]) -> None:
    errors = url_set_errors(published_locs(out), expected)
    if any(errors.values()):
        raise CheckFailed(
            f"{what}: {', '.join(f'{n} {k}' for k, n in errors.items())} "
            f"against the {len(expected):,} URLs expected"
        )


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
