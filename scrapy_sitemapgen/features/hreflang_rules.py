"""The rules of an hreflang cluster as search engines read one (G6), pure: which reason a
target the crawl judged is dropped for, which of two URLs one hreflang value names wins,
and under which language a page lists itself.

Google ignores a pair of language versions that does not name each other both ways, and
wants each version to list every other and itself; writing what a page declares, broken
links and all, only earns "no return tags" in Search Console. The SQL that applies these
rules to every listed page, in bounded memory, is :mod:`.hreflang_clusters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.facts import FactRejected, parse_hreflang

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..sitemaps.facts import Alternate

__all__ = [
    "CONFLICT",
    "DROP_REASONS",
    "FINDING_MISSING_SELF",
    "FINDING_NO_RETURN",
    "FINDING_TARGET_NOT_LISTED",
    "NO_RETURN",
    "X_DEFAULT",
    "conflicts",
    "drop_reason",
    "html_language",
    "missing_self_detail",
    "self_language",
]

#: The value that names no language: the page for users of no listed language.
X_DEFAULT = "x-default"
#: A listed target that does not name the page back.
NO_RETURN = "no_return"
#: A second URL for an hreflang value the page already gave a URL.
CONFLICT = "conflict"
#: Why a target the crawl judged and did not list is dropped (the qualifiers of
#: ``sitemapgen/skipped/alternate/<reason>``), in the order the docs give them.
DROP_REASONS = (
    "noindex",
    "canonical_elsewhere",
    "redirected",
    "status",
    "robots_txt",
    "duplicate_content",
    "excluded",
)
#: The audit's findings of a broken cluster (``sitemaps.verdicts.FINDINGS``).
FINDING_NO_RETURN = "hreflang_no_return"
FINDING_TARGET_NOT_LISTED = "hreflang_target_not_listed"
FINDING_MISSING_SELF = "hreflang_missing_self"

_EXACT = {
    "excluded/noindex": "noindex",
    "excluded/canonical_elsewhere": "canonical_elsewhere",
    "excluded/meta_refresh": "redirected",
    "redirected": "redirected",
    "fetch_failed": "status",
    "blocked_by_robots": "robots_txt",
    "excluded/duplicate_content": "duplicate_content",
}
_PREFIXES = (
    ("excluded/status/", "status"),
    ("excluded/robots_txt/", "robots_txt"),
    ("excluded/", "excluded"),
    ("skipped/", "excluded"),
)


def drop_reason(verdict: str) -> str | None:
    """The reason a target with ``verdict`` (a :class:`~.verdicts.Verdict`'s ``verdict``)
    is dropped from the alternates naming it; None for a verdict that lists it (it is then
    a listed page, or one whose listing this run cannot see: kept, unverified)."""
    exact = _EXACT.get(verdict)
    if exact is not None:
        return exact
    for prefix, reason in _PREFIXES:
        if verdict.startswith(prefix):
            return reason
    return None


def conflicts(alternates: Iterable[Alternate]) -> list[bool]:
    """For each of a page's declared alternates, in document order, whether it is a
    conflict: an hreflang value that an earlier alternate gave another URL. The first in
    document order wins, as a reader that keeps one URL per value would read the page."""
    seen: set[str] = set()
    flags = []
    for alternate in alternates:
        flags.append(alternate.hreflang in seen)
        seen.add(alternate.hreflang)
    return flags


def html_language(value: str | None) -> str | None:
    """The ``<html lang>`` of a page as an hreflang value (:func:`.facts.parse_hreflang`),
    or None: absent, refused by Google's rule, or ``x-default``, which names no language."""
    if not value:
        return None
    try:
        tag = parse_hreflang(value)
    except FactRejected:
        return None
    return None if tag == X_DEFAULT else tag


def self_language(
    returned: Iterable[str],
    declared: Iterable[str],
    html_lang: str | None,
    taken: Iterable[str] = (),
) -> str | None:
    """The hreflang a page lists itself under: the first value the pages that name it
    back give it (``returned``: in URL order of those pages, each in its document order),
    else the first it declares for itself (``declared``), else its ``<html lang>``; never
    ``x-default`` (no language) nor a value in ``taken`` (already naming another page of
    its cluster). None: no language is known, the self entry is missing."""
    used = set(taken)
    for candidates in (returned, declared, (html_lang,) if html_lang else ()):
        for value in candidates:
            if value != X_DEFAULT and value not in used:
                return value
    return None


def missing_self_detail(supplied: str | None) -> str:
    """The detail of ``hreflang_missing_self``: the value the sitemap lists the page under
    instead (:func:`self_language`), or that none is known, so none is written."""
    if supplied is None:
        return "no language known: the sitemap lists its pairs without it"
    return f'the sitemap supplies it as hreflang="{supplied}"'
