"""The name of every file the package writes in an origin folder, and which names are ours.

One place for both, so that delivery's "is this stale file ours to remove?" can only
answer yes for a name the writer or the staging step could have written: a file a user
keeps beside the sitemaps (``index.html``, ``sitemap.xml.bak``, a half-written
``sitemap-1.xml.gz.tmp``) is never taken for one of ours.
"""

from __future__ import annotations

import re

__all__ = [
    "INDEX_NAME",
    "MANIFEST_NAME",
    "ROBOTS_NAME",
    "index_name",
    "is_owned_name",
    "news_name",
    "text_name",
    "urlset_name",
]

#: The first (usually only) index of an origin: the file robots.txt names (P15).
INDEX_NAME = "sitemap.xml"
#: The file beside each index with the ``Sitemap:`` lines for that origin's robots.txt (P15).
ROBOTS_NAME = "robots.txt"
#: The machine-readable list of an origin's files (hash, size, entries, lastmod).
MANIFEST_NAME = "manifest.json"

_FIXED_NAMES = frozenset({INDEX_NAME, ROBOTS_NAME, MANIFEST_NAME})
# The file number of a numbered name: every one has it once, as "-<number>.".
_NUMBER_RE = re.compile(r"-([0-9]+)\.")


def urlset_name(number: int, gzipped: bool) -> str:
    """``sitemap-1.xml.gz``: urlsets are numbered from 1 in URL order."""
    return f"sitemap-{number}.xml{'.gz' if gzipped else ''}"


def text_name(number: int, gzipped: bool) -> str:
    """``sitemap-1.txt.gz``: plain-text sitemaps (P11), one URL per line."""
    return f"sitemap-{number}.txt{'.gz' if gzipped else ''}"


def news_name(number: int, gzipped: bool) -> str:
    """``sitemap-news-1.xml.gz``: Google News sitemaps, kept apart from the urlsets."""
    return f"sitemap-news-{number}.xml{'.gz' if gzipped else ''}"


def index_name(number: int) -> str:
    """``sitemap.xml`` for the first index, ``sitemap-index-2.xml`` past 50,000 sitemaps."""
    return INDEX_NAME if number == 1 else f"sitemap-index-{number}.xml"


def is_owned_name(name: str) -> bool:
    """Whether ``name`` is one the package writes in an origin folder: a file so named is
    ours, and is removed when a publish no longer has it. Asks the functions above, so it
    holds exactly their names: numbers from 1 without leading zeros, ``.gz`` only where the
    writer adds it."""
    if name in _FIXED_NAMES:
        return True
    match = _NUMBER_RE.search(name)
    if match is None:
        return False
    number = int(match.group(1))
    return number >= 1 and name in (
        urlset_name(number, True),
        urlset_name(number, False),
        news_name(number, True),
        news_name(number, False),
        text_name(number, True),
        text_name(number, False),
        index_name(number),
    )
