"""The changes feed of an origin as Atom 1.0 (RFC 4287): ``changes.atom``, the URLs added or
changed lately, newest first (G1: Google reads an Atom feed beside the sitemaps, as P11
names the format). Pure: it renders entries it is given; which entries they are is the
feature's (:mod:`.changes_feed`).

Written by hand, not through a tree, as the urlsets are: every value goes through the
writer's :func:`..sitemaps.writer.escape` (the five entities of P1, characters XML 1.0 forbids
removed), so a page title with control characters, a lone surrogate or ``]]>`` still
gives a well-formed file; characters beyond the BMP are kept, in UTF-8.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..sitemaps.facts import format_w3c
from ..sitemaps.limits import ATOM_NS
from ..sitemaps.writer import escape

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..state.changes_feed_notes import ChangesFeedEntry

__all__ = ["atom_time", "changes_feed_xml"]


def atom_time(lastmod: str | None, fallback: str) -> str:
    """``lastmod`` (a W3C Datetime, P4) as the date-time with seconds and zone that RFC
    3339 (and so Atom's ``updated``) asks for, in UTC: a date alone is its midnight UTC.
    ``fallback`` (the run's time, already in that form) when there is none or it cannot
    be read."""
    if not lastmod:
        return fallback
    try:
        moment = datetime.fromisoformat(lastmod.replace("Z", "+00:00"))
    except ValueError:
        return fallback
    if moment.tzinfo is None:  # a W3C date without a time: midnight, read as UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return format_w3c(moment)


def changes_feed_xml(
    entries: Iterable[ChangesFeedEntry], *, feed_url: str, site: str, fallback_updated: str
) -> bytes:
    """The feed's bytes: ``id`` and ``link rel="self"`` are ``feed_url`` (where it is
    published), the ``author`` and ``link`` the site (``site``: the origin's root URL), so
    that every entry has an author (RFC 4287 4.1.1); ``updated`` the newest entry's, or
    ``fallback_updated`` for a feed with none. ``entries`` in the order given."""
    listed = list(entries)
    updated = max((e.updated for e in listed), default=fallback_updated)
    site_text = escape(site)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<feed xmlns="{ATOM_NS}">\n',
        f"  <id>{escape(feed_url)}</id>\n",
        f"  <title>Changes to {site_text}</title>\n",
        f"  <updated>{updated}</updated>\n",
        f'  <link rel="self" type="application/atom+xml" href="{escape(feed_url)}"/>\n',
        f'  <link href="{site_text}"/>\n',
        f"  <author><name>{site_text}</name><uri>{site_text}</uri></author>\n",
    ]
    for entry in listed:
        loc = escape(entry.loc)
        title = escape(entry.title) if entry.title else loc
        parts.append(
            f"  <entry>\n    <id>{loc}</id>\n    <title>{title}</title>\n"
            f'    <updated>{entry.updated}</updated>\n    <link href="{loc}"/>\n  </entry>\n'
        )
    parts.append("</feed>\n")
    return "".join(parts).encode()
