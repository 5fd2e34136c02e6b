"""The merge rules, once: how the records of one URL combine, whatever order they arrive
in.

A record is a :class:`~.codec.StoredRow`, each source (the page's response, the
spider's items) in columns of its own, so that combining never depends on arrival order:

- ``page_lastmod``, ``item_lastmod``: the newest of each source wins, and an item's
  lastmod beats the page's when published (the lastmod decision, :mod:`.lastmod`);
- ``changefreq``, ``priority``, ``page_extra``, ``item_extra``, ``news``: the latest value
  given replaces an earlier one (:func:`latest_given`); ``None`` means "not given", and a
  page record without media gives ``""``, which does replace older media.

:func:`merge` is the rule as a pure function. The SQLite store applies it in SQL and the
Redis store in Lua (:data:`.codec.REDIS_MERGE`), for speed; property tests hold both to
this function over random records in random order (tests/test_merge.py). The offline
build's rows carry only item columns and apply the same function
(:func:`.codec.item_run_record`). How records are encoded, and what a merged one
publishes, is :mod:`.codec`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import COLUMNS, StoredRow
from .lastmod import newest

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["latest_given", "merge", "newest"]


def latest_given(old: Any, new: Any) -> Any:
    """The newer value unless it was not given (``None``)."""
    return old if new is None else new


#: Each column's rule, by name; a column without one fails at import.
_RULE: dict[str, Callable[[Any, Any], Any]] = {
    "page_lastmod": newest,
    "item_lastmod": newest,
    "changefreq": latest_given,
    "priority": latest_given,
    "page_extra": latest_given,
    "item_extra": latest_given,
    "news": latest_given,
}
_RULES = tuple(_RULE[name] for name in COLUMNS)


def merge(old: tuple[Any, ...], new: tuple[Any, ...]) -> StoredRow:
    """Two records of one URL (:class:`~.codec.StoredRow`, or tuples of its columns),
    ``new`` recorded after ``old``, as one."""
    return StoredRow._make(rule(a, b) for rule, a, b in zip(_RULES, old, new))
