"""Link sources: for each URL that pages link to, how many distinct pages do and the
first few of them (``SITEMAPGEN_LINK_SOURCES``), kept in the crawl's store so that a
paused crawl (``JOBDIR``) and the workers sharing a Redis store keep them too.

Memory stays bounded: a URL's row holds a count and at most that many sources however
many pages link to it, and what the crawl records between two commits waits in one
:class:`LinkBatch`, a row per target, so a store writes one upsert per target per batch,
not one per link. Both stores keep a row as the same text (:func:`encode`) and merge
two the same way (:func:`merge` in Python for SQLite, :data:`REDIS_MERGE` in Lua).

A page counts once per target however often it links to it. A page whose links were
committed and that a resumed crawl fetches again (its answer was not yet recorded when
the crawl was killed) counts once more, unless it is among the sources kept: the count
is exact for the sources shown, and may run over after a kill for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.broken_links import BROKEN_PREFIXES
from ..sitemaps.urls import origin_of

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator

    from ..sitemaps.urls import Origin

__all__ = [
    "LINKS_JOIN",
    "REDIS_MERGE",
    "SCHEMA",
    "UPSERT",
    "LinkBatch",
    "broken_query",
    "decode",
    "encode",
    "merge",
    "register",
    "upsert_rows",
]

#: Between the count and the sources, and between sources: no URL the crawl keeps holds
#: a line break (they are percent-encoded).
_SEP = "\n"
#: One row per URL linked to, under the URL's own origin (as ``judged``'s, which the
#: broken links are joined with).
SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    scheme TEXT NOT NULL,
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    loc TEXT NOT NULL,
    sources TEXT NOT NULL,
    PRIMARY KEY (scheme, host, port, loc)
) WITHOUT ROWID
"""
_MERGE_FUNCTION = "sitemapgen_merge_links"
UPSERT = (
    "INSERT INTO links (scheme, host, port, loc, sources) VALUES (?, ?, ?, ?, ?)"
    f" ON CONFLICT DO UPDATE SET sources = {_MERGE_FUNCTION}(sources, excluded.sources)"
)
#: The join of a table of URLs aliased ``t`` (``loc`` its URL column) with their links.
LINKS_JOIN = (
    "links l ON l.scheme = t.scheme AND l.host = t.host AND l.port = t.port AND l.loc = {loc}"
)
#: KEYS: the origin's links hash; ARGV: the target, the pages counted, the most sources
#: kept, then the sources. The same merge as merge().
REDIS_MERGE = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
local count = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local sources, seen = {}, {}
if old then
  local first = true
  for line in string.gmatch(old, '[^\\n]+') do
    if first then
      count = count + tonumber(line)
      first = false
    else
      sources[#sources + 1] = line
      seen[line] = true
    end
  end
end
for i = 4, #ARGV do
  local source = ARGV[i]
  if seen[source] then
    count = count - 1
  elseif #sources < limit then
    sources[#sources + 1] = source
    seen[source] = true
  end
end
table.insert(sources, 1, tostring(count))
redis.call('HSET', KEYS[1], ARGV[1], table.concat(sources, '\\n'))
return count
"""


def encode(count: int, sources: Iterable[str]) -> str:
    return _SEP.join((str(count), *sources))


def decode(text: str | bytes | None) -> tuple[int, tuple[str, ...]]:
    """(the pages counted, the sources kept) of a stored row; (0, ()) for none."""
    if not text:
        return 0, ()
    if isinstance(text, bytes):
        text = text.decode()
    count, *sources = text.split(_SEP)
    return int(count), tuple(sources)


def merge(old: str | None, new: str, limit: int) -> str:
    """A stored row and a batch's row of the same target as one: the counts added, less
    the batch's sources already kept (a page counts once), the batch's sources appended
    while fewer than ``limit`` are kept."""
    if old is None:
        return new
    count, kept = decode(old)
    added, sources = decode(new)
    merged = list(kept)
    known = set(kept)
    count += added
    for source in sources:
        if source in known:
            count -= 1
        elif len(merged) < limit:
            merged.append(source)
            known.add(source)
    return encode(count, merged)


def register(db: sqlite3.Connection, limit: int) -> None:
    """Give ``db`` the merge :data:`UPSERT` calls, keeping at most ``limit`` sources."""
    db.create_function(
        _MERGE_FUNCTION, 2, lambda old, new: merge(old, new, limit), deterministic=True
    )


class LinkBatch:
    """The links recorded since the last write, a row per target: how many pages link to
    it, and the first ``limit`` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.targets: dict[str, tuple[list[int], list[str]]] = {}

    def add(self, source: str, targets: Iterable[str]) -> None:
        """``source`` links to each of ``targets`` (distinct, ``source``'s own excluded)."""
        limit = self.limit
        rows = self.targets
        for target in targets:
            row = rows.get(target)
            if row is None:
                rows[target] = ([1], [source])
                continue
            counted, sources = row
            if source in sources:  # the same page recorded twice in one batch
                continue
            counted[0] += 1
            if len(sources) < limit:
                sources.append(source)

    def __len__(self) -> int:
        return len(self.targets)

    def take(self) -> Iterator[tuple[str, int, list[str]]]:
        """(target, pages counted, sources) of each row; the batch is empty after."""
        rows, self.targets = self.targets, {}
        for target, (counted, sources) in rows.items():
            yield target, counted[0], sources


def upsert_rows(batch: LinkBatch) -> list[tuple[str, str, int, str, str]]:
    """The rows of :data:`UPSERT` for a batch (a URL without an origin has none)."""
    rows = []
    for target, count, sources in batch.take():
        try:
            origin = origin_of(target)
        except (ValueError, KeyError):  # a port out of range: no sitemap can list it
            continue
        rows.append((origin.scheme, origin.host, origin.port, target, encode(count, sources)))
    return rows


def broken_query(origin: Origin | None) -> tuple[str, tuple[object, ...]]:
    """The SQL of the broken links (this run's ``judged`` verdicts of
    :data:`..sitemaps.broken_links.BROKEN_PREFIXES` with a row of links), of ``origin``
    or of every origin, in origin then URL order: (loc, verdict, sources)."""
    where = " OR ".join("t.verdict LIKE ?" for _ in BROKEN_PREFIXES)
    params: tuple[object, ...] = tuple(f"{prefix}%" for prefix in BROKEN_PREFIXES)
    if origin is not None:
        where = f"({where}) AND t.scheme = ? AND t.host = ? AND t.port = ?"
        params = (*params, origin.scheme, origin.host, origin.port)
    sql = (
        f"SELECT t.loc, t.verdict, l.sources FROM judged t JOIN {LINKS_JOIN.format(loc='t.loc')}"
        f" WHERE {where} ORDER BY t.scheme, t.host, t.port, t.loc"
    )
    return sql, params
