"""A count and its noun in the right number: "1 finding", "2 findings", "1,204 URLs".

Every line the package prints that counts something words the count here, so a reader
never sees "1 findings", or "(s)" after a noun. Pure, beside the clock at the bottom of the layers:
every layer prints counts.
"""

from __future__ import annotations

__all__ = ["counted", "noun", "verb"]

#: Nouns whose plural is not the noun and an "s".
_IRREGULAR = {
    "entry": "entries",
    "query": "queries",
    "index": "indexes",
    "child": "children",
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
}


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """``singular`` when ``count`` is 1, else ``plural`` (by default the singular and an
    "s", or the irregular plural the module knows). The last word is the one that changes:
    ``noun(2, "sitemap file")`` is ``"sitemap files"``."""
    if count == 1:
        return singular
    if plural is not None:
        return plural
    head, _, last = singular.rpartition(" ")
    many = _IRREGULAR.get(last, f"{last}s")
    return f"{head} {many}" if head else many


def counted(count: int, singular: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """``count`` and its noun: ``counted(1, "page")`` is ``"1 page"``, ``counted(3,
    "URL")`` is ``"3 URLs"``; ``grouped``: with thousands separators (``"1,204 URLs"``),
    for the lines that group them (the audit's, the validator's)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun(count, singular, plural)}"


def verb(count: int, singular: str) -> str:
    """The verb agreeing with ``count`` things: ``verb(1, "is")`` is ``"is"``,
    ``verb(3, "is")`` is ``"are"``; a regular verb loses its "s": ``verb(2, "fails")`` is
    ``"fail"``."""
    if count == 1:
        return singular
    if singular in _IRREGULAR:
        return _IRREGULAR[singular]
    return singular[:-1] if singular.endswith("s") else singular
