"""The item fields a spider may yield to add or correct the facts of a URL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import date, datetime

__all__ = ["ITEM_FIELDS", "SitemapItem"]

#: Field names the item pipeline reads from any item type (dict, ``scrapy.Item``, dataclass,
#: attrs): ``loc`` names the URL; the others are optional and validated (P4-P6, G7).
ITEM_FIELDS = ("loc", "lastmod", "changefreq", "priority", "images", "videos", "news", "title")


@dataclass
class SitemapItem:
    """A ready-made item carrying only sitemap facts; any item with a ``loc`` field works."""

    loc: str
    lastmod: str | date | datetime | None = None
    changefreq: str | None = None
    priority: float | str | None = None
    #: Image URLs (G7 image extension), added to those found on the page.
    images: Sequence[str] = ()
    #: Mappings with the ``<video:…>`` field names: thumbnail_loc, title, description,
    #: content_loc and/or player_loc, optional duration (seconds) and publication_date.
    videos: Sequence[Mapping[str, Any]] = ()
    #: A mapping with publication_name, publication_language, publication_date and title:
    #: the URL then also goes into the origin's Google News sitemap while it is fresh.
    news: Mapping[str, Any] | None = None
    #: The page's title for the changes feed (SITEMAPGEN_CHANGES_FEED), over the page's
    #: ``<title>``; read by the item pipeline only, not by the offline build.
    title: str | None = None
