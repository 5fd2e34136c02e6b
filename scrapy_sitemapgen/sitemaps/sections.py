"""Sections (SITEMAPGEN_SECTIONS): which urlset sequence of its origin a ``<loc>`` goes to.

A loc goes to the first section whose pattern it matches (``re.search``), the rest to the
URLs of no section, written as ``sitemap-1.xml.gz``, … as without sections. Each section is
its own sequence, ``sitemap-<name>-1.xml.gz``, …, split at the limits on its own (P7) and
listed in the origin's one index (P8): a page added to one section changes that section's
files only, so the other sections' files stay as they were (P10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .naming import RESERVED_SECTION_NAMES, SECTION_NAME, section_of_name

if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Iterator

    from .facts import UrlFacts

__all__ = [
    "DEFAULT_SECTION",
    "Section",
    "in_section",
    "section_counts",
    "section_name_problem",
    "section_of",
]

#: The name the counts (stats, manifest, state, close log) give the URLs of no section.
DEFAULT_SECTION = "default"


@dataclass(frozen=True, slots=True)
class Section:
    """One ``(name, regular expression)`` pair of SITEMAPGEN_SECTIONS."""

    name: str
    pattern: re.Pattern[str]


def section_name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a section name, or None when it is fine."""
    if not isinstance(name, str) or SECTION_NAME.fullmatch(name) is None:
        return (
            "a section name must be 1 to 40 lower-case letters, digits, '_' or '-' "
            "(not first or last), so that it is safe in a file name"
        )
    if name in RESERVED_SECTION_NAMES:
        return f"{', '.join(sorted(RESERVED_SECTION_NAMES))} are names the package uses already"
    return None


def section_of(loc: str, sections: tuple[Section, ...]) -> str:
    """The name of the first section whose pattern ``loc`` matches; "" for none."""
    for section in sections:
        if section.pattern.search(loc):
            return section.name
    return ""


def in_section(
    entries: Iterable[UrlFacts], sections: tuple[Section, ...], name: str
) -> Iterator[UrlFacts]:
    """The entries of section ``name`` ("": of no section), in their order."""
    for facts in entries:
        if section_of(facts.loc, sections) == name:
            yield facts


def section_counts(files: Iterable[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    """Section name -> (urlset files, URLs) of an origin's published ``(name, entries)``
    files; the URLs of no section under :data:`DEFAULT_SECTION`. Other files are left out."""
    counts: dict[str, tuple[int, int]] = {}
    for name, entries in files:
        section = section_of_name(name)
        if section is None:
            continue
        key = section or DEFAULT_SECTION
        files_before, urls_before = counts.get(key, (0, 0))
        counts[key] = (files_before + 1, urls_before + entries)
    return counts
