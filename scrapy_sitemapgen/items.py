"""The item fields a spider may yield to add or correct the facts of a URL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

__all__ = ["ITEM_FIELDS", "SitemapItem"]

#: Field names the item pipeline reads from any item type (dict, ``scrapy.Item``, dataclass,
#: attrs): ``loc`` names the URL; the others are optional and validated (P4-P6).
ITEM_FIELDS = ("loc", "lastmod", "changefreq", "priority")


@dataclass
class SitemapItem:
    """A ready-made item carrying only sitemap facts; any item with a ``loc`` field works."""

    loc: str
    lastmod: str | date | datetime | None = None
    changefreq: str | None = None
    priority: float | str | None = None
