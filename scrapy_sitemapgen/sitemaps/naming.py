"""The name of every file the package writes in an origin folder, and which names are ours.

One place for both, so that delivery's "is this stale file ours to remove?" can only
answer yes for a name the writer or the staging step could have written: a file a user
keeps beside the sitemaps (``index.html``, ``sitemap.xml.bak``, a half-written
``sitemap-1.xml.gz.tmp``) is never taken for one of ours.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "CHANGES_FEED_NAME",
    "INDEX_NAME",
    "MANIFEST_NAME",
    "ROBOTS_NAME",
    "index_name",
    "is_owned_name",
    "news_name",
    "section_of_name",
    "text_name",
    "urlset_name",
]

#: The first (usually only) index of an origin: the file robots.txt names (P15).
INDEX_NAME = "sitemap.xml"
#: The file beside each index with the ``Sitemap:`` lines for that origin's robots.txt (P15).
ROBOTS_NAME = "robots.txt"
#: The machine-readable list of an origin's files (hash, size, entries, lastmod).
MANIFEST_NAME = "manifest.json"
#: The Atom feed of the URLs added or changed lately (SITEMAPGEN_CHANGES_FEED, G1).
CHANGES_FEED_NAME = "changes.atom"

_FIXED_NAMES = frozenset({INDEX_NAME, ROBOTS_NAME, MANIFEST_NAME, CHANGES_FEED_NAME})
#: A section's name (SITEMAPGEN_SECTIONS): lower-case letters, digits, ``_`` and inner
#: ``-``, so ``sitemap-<name>-1.xml.gz`` is one name on every file system (no case to fold).
SECTION_NAME = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?")
#: Names no section may take: the news and index sequences' names (``sitemap-news-1.xml``,
#: ``sitemap-index-2.xml``), and the name the counts give the URLs of no section.
RESERVED_SECTION_NAMES = frozenset({"news", "index", "default"})
_SECTION_FILE_RE = re.compile(r"sitemap-(.+)-([0-9]+)\.xml(?:\.gz)?")
# The file number of a numbered name: every one has it once, as "-<number>.".
_NUMBER_RE = re.compile(r"-([0-9]+)\.")


def urlset_name(number: int, gzipped: bool, section: str = "") -> str:
    """``sitemap-1.xml.gz``: urlsets are numbered from 1 in URL order; a section's are
    ``sitemap-<section>-1.xml.gz``, numbered on their own."""
    part = f"{section}-" if section else ""
    return f"sitemap-{part}{number}.xml{'.gz' if gzipped else ''}"


# The two questions below are asked of every file of every origin, and their names are a
# handful (``sitemap-1.xml.gz``, ``sitemap.xml``, ...) for 100,000 origins: answered once.
_NAMES_KEPT = 1024


@functools.lru_cache(maxsize=_NAMES_KEPT)
def section_of_name(name: str) -> str | None:
    """The section whose urlset ``name`` is: "" for the URLs of no section
    (``sitemap-1.xml.gz``), None when ``name`` is no urlset of ours (news, index, text)."""
    if not is_owned_name(name):
        return None
    match = _SECTION_FILE_RE.fullmatch(name)
    if match is not None and _is_section_name(match.group(1)):
        return match.group(1)
    number = _NUMBER_RE.search(name)
    if number is not None and name.startswith("sitemap-") and name.endswith((".xml", ".xml.gz")):
        return (
            ""
            if name
            in (urlset_name(int(number.group(1)), True), urlset_name(int(number.group(1)), False))
            else None
        )
    return None


def _is_section_name(name: str) -> bool:
    return SECTION_NAME.fullmatch(name) is not None and name not in RESERVED_SECTION_NAMES


def text_name(number: int, gzipped: bool) -> str:
    """``sitemap-1.txt.gz``: plain-text sitemaps (P11), one URL per line."""
    return f"sitemap-{number}.txt{'.gz' if gzipped else ''}"


def news_name(number: int, gzipped: bool) -> str:
    """``sitemap-news-1.xml.gz``: Google News sitemaps, kept apart from the urlsets."""
    return f"sitemap-news-{number}.xml{'.gz' if gzipped else ''}"


def index_name(number: int) -> str:
    """``sitemap.xml`` for the first index, ``sitemap-index-2.xml`` past 50,000 sitemaps."""
    return INDEX_NAME if number == 1 else f"sitemap-index-{number}.xml"


@functools.lru_cache(maxsize=_NAMES_KEPT)
def is_owned_name(name: str) -> bool:
    """Whether ``name`` is one the package writes in an origin folder: a file so named is
    ours, and is removed when a publish no longer has it. Asks the functions above, so it
    holds exactly their names: numbers from 1 without leading zeros, ``.gz`` only where the
    writer adds it."""
    if name in _FIXED_NAMES:
        return True
    section = _SECTION_FILE_RE.fullmatch(name)
    if section is not None and _is_section_name(section.group(1)):
        number = int(section.group(2))
        return number >= 1 and name == urlset_name(number, name.endswith(".gz"), section.group(1))
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
