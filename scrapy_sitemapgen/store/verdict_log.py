"""Verdicts kept per URL, and the URLs the live sitemaps list, for the audit.

Both live in the SQLite store's file beside the facts and write in its ordered stream:
one row per URL (a later verdict replaces an earlier one), so the file grows with the
site, as the facts do, and not with the number of responses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.broken_links import BrokenLink
from ..sitemaps.urls import origin_of
from ..sitemaps.verdicts import LISTED, MAX_DETAIL, Listed, Verdict
from . import link_sources as link_rows

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..sitemaps.urls import Origin
    from .journal import OrderedWrites

__all__ = ["SCHEMA", "TABLES", "VerdictLog"]

#: The tables, created in the store's file when it opens.
TABLES = frozenset({"verdicts", "listed"})
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS verdicts (
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    url TEXT NOT NULL,
    verdict TEXT NOT NULL,
    status INTEGER,
    detail TEXT,
    lastmod TEXT,
    source TEXT NOT NULL,
    images INTEGER NOT NULL,
    PRIMARY KEY (scheme, host, port, url)
) WITHOUT ROWID
""",
    """
CREATE TABLE IF NOT EXISTS listed (
    seq INTEGER PRIMARY KEY,
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    url TEXT NOT NULL,
    key TEXT NOT NULL,
    lastmod TEXT,
    sitemap TEXT NOT NULL
)
""",
)
# A verdict of the crawl's own requests is never replaced by the audit's fetch of the
# same URL: the crawl reached it, which is what "listed_unreachable" asks.
_PUT = """
INSERT INTO verdicts (scheme, host, port, url, verdict, status, detail, lastmod, source, images)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO UPDATE SET
    verdict = excluded.verdict, status = excluded.status, detail = excluded.detail,
    lastmod = excluded.lastmod, images = excluded.images,
    source = CASE WHEN source = 'crawl' THEN source ELSE excluded.source END
"""
_PUBLISHED = (
    "UPDATE verdicts SET lastmod = ? WHERE scheme = ? AND host = ? AND port = ? AND url = ?"
    f" AND verdict = '{LISTED}'"
)
_LIST = (
    "INSERT INTO listed (scheme, host, port, url, key, lastmod, sitemap)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "url, verdict, status, detail, lastmod, source, images"
_WHERE = "WHERE scheme = ? AND host = ? AND port = ?"


def _origin(url: str) -> Origin | None:
    try:
        return origin_of(url)
    except (ValueError, KeyError):  # no port urlsplit takes, or a scheme without a default
        return None


class VerdictLog:
    """The verdicts of a crawl and the URLs its origins' live sitemaps list."""

    def __init__(self, store: OrderedWrites) -> None:
        self._store = store

    def put(self, verdict: Verdict) -> None:
        """Keep ``verdict`` for its URL (replacing the one before); a URL without an
        origin (a port out of range: what the URL policy refused, kept as it came) has no
        row, since no sitemap can list it."""
        origin = _origin(verdict.url)
        if origin is None:
            return
        detail = verdict.detail[:MAX_DETAIL] if verdict.detail is not None else None
        self._store.write(
            _PUT,
            (
                origin.scheme,
                origin.host,
                origin.port,
                verdict.url,
                verdict.verdict,
                verdict.status,
                detail,
                verdict.lastmod,
                verdict.source,
                verdict.images,
            ),
        )

    def published_lastmod(self, url: str, lastmod: str | None) -> None:
        """The lastmod the publish gives a listed URL, where the state's content notes
        settled another one than the crawl read (a page whose content did not change
        keeps the lastmod published before; ``observed``): its verdict's ``lastmod``
        from then on, which the audit's ``lastmod_mismatch`` compares with the live
        ``<lastmod>``.

        Why here: only the publish knows that lastmod (the content notes are settled
        while the sitemaps are written), and the audit's findings are made after it,
        from this log: the crawl's own report at close, and ``sitemapgen-audit
        --store`` later, from the same file, so both compare with what the package
        publishes and neither needs the state file. The facts are not touched (the
        data still flow response -> facts -> store -> writer), and the verdict's
        ``lastmod`` was always meant as what a listed page publishes, so no column is
        added; without content notes nothing is changed. Only what the notes changed
        comes here, written as the publish's first pass goes (not held for a whole
        origin)."""
        origin = _origin(url)
        if origin is not None:
            self._store.write(_PUBLISHED, (lastmod, origin.scheme, origin.host, origin.port, url))

    def get(self, url: str) -> Verdict | None:
        origin = _origin(url)
        if origin is None:
            return None
        rows = self._store.read(
            f"SELECT {_COLUMNS} FROM verdicts {_WHERE} AND url = ?",
            (origin.scheme, origin.host, origin.port, url),
        )
        return next((Verdict(*row) for row in rows), None)

    def origins(self) -> list[Origin]:
        """Every origin with a verdict or a listed URL, sorted."""
        from ..sitemaps.urls import Origin

        rows = self._store.read(
            "SELECT scheme, host, port FROM verdicts UNION SELECT scheme, host, port FROM listed"
            " ORDER BY 1, 2, 3"
        )
        return [Origin(*row) for row in rows]

    def verdicts(self, origin: Origin) -> Iterator[Verdict]:
        """The verdicts of one origin, in URL order."""
        rows = self._store.read(
            f"SELECT {_COLUMNS} FROM verdicts {_WHERE} ORDER BY url",
            (origin.scheme, origin.host, origin.port),
        )
        for row in rows:
            yield Verdict(*row)

    def linked(self, origin: Origin) -> Iterator[tuple[Verdict, int, tuple[str, ...]]]:
        """:meth:`verdicts`, each with the count of pages linking to its URL and the
        first of them (:mod:`.links`; 0 and none for a URL no recorded page links to)."""
        columns = ", ".join(f"t.{name.strip()}" for name in _COLUMNS.split(","))
        rows = self._store.read(
            f"SELECT {columns}, l.sources FROM verdicts t"
            f" LEFT JOIN {link_rows.LINKS_JOIN.format(loc='t.url')}"
            " WHERE t.scheme = ? AND t.host = ? AND t.port = ? ORDER BY t.url",
            (origin.scheme, origin.host, origin.port),
        )
        for row in rows:
            count, sources = link_rows.decode(row[-1])
            yield Verdict(*row[:-1]), count, sources

    def broken_links(self, origin: Origin) -> Iterator[BrokenLink]:
        """The broken links of ``origin`` (the crawl's verdicts of the URLs it did not
        list, joined with the pages that link to them), in URL order."""
        sql, params = link_rows.broken_query(origin)
        for loc, verdict, sources in self._store.read(sql, params):
            count, first = link_rows.decode(sources)
            yield BrokenLink(loc, verdict, count, first)

    def add_listed(self, entry: Listed) -> None:
        """A URL a live sitemap lists, kept in listing order under the origin of its key
        (where its verdict is)."""
        origin = origin_of(entry.key)
        self._store.write(
            _LIST,
            (
                origin.scheme,
                origin.host,
                origin.port,
                entry.url,
                entry.key,
                entry.lastmod,
                entry.sitemap,
            ),
        )

    def unjudged(self, origin: Origin) -> Iterator[tuple[str, str]]:
        """(key, the first URL listed for it) for each listed key of ``origin`` without a
        verdict, in listing order."""
        rows = self._store.read(
            "SELECT key, url, MIN(seq) FROM listed l WHERE scheme = ? AND host = ? AND port = ?"
            " AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.scheme = l.scheme"
            " AND v.host = l.host AND v.port = l.port AND v.url = l.key)"
            " GROUP BY key ORDER BY 3",
            (origin.scheme, origin.host, origin.port),
        )
        for key, url, _ in list(rows):
            yield key, url

    def listed(self, origin: Origin) -> Iterator[Listed]:
        rows = self._store.read(
            f"SELECT url, key, lastmod, sitemap FROM listed {_WHERE} ORDER BY seq",
            (origin.scheme, origin.host, origin.port),
        )
        for row in rows:
            yield Listed(*row)

    def clear_listed(self) -> None:
        """Forget the listed URLs: each audit reads the live sitemaps anew."""
        self._store.write("DELETE FROM listed", ())

    def flush(self) -> None:
        self._store.flush()
