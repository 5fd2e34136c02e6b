"""The hreflang clusters of one publish, checked on disk (SITEMAPGEN_ALTERNATES_CHECK =
"listed"): which alternates each listed page gets written, the counts of those dropped,
and the findings of the broken clusters.

Built once before the first origin is staged, when some listed page declares alternates:
one pass over every origin's listed entries (duplicates by content left out as staging
leaves them out) writes the listed URLs and the declared pairs into an SQLite file of its
own, and SQL (indexes and joins) judges every pair, so that memory does not grow with a
million-page origin's clusters. Staging (in this process or a build's worker) then opens
the file read-only and looks up each entry that has alternates (:class:`ClusterLookup`).
The rules themselves are :mod:`.hreflang_rules`'; no Scrapy here.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..sitemaps.duplicates import duplicate_choice
from ..sitemaps.facts import Alternate
from ..sitemaps.verdicts import Finding
from ..stats import DUPLICATE_CONTENT
from .hreflang_rules import (
    CONFLICT,
    DROP_REASONS,
    FINDING_MISSING_SELF,
    FINDING_NO_RETURN,
    FINDING_TARGET_NOT_LISTED,
    NO_RETURN,
    X_DEFAULT,
    conflicts,
    drop_reason,
    missing_self_detail,
    self_language,
)
from .origin_watch import OriginWatch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from ..sitemaps.verdicts import Verdict
    from ..store.base import FactSource
    from .origin_watch import OriginStart

__all__ = [
    "ClusterIndex",
    "ClusterLookup",
    "HreflangClustersWatch",
    "OriginClusters",
    "build_clusters",
    "clustered",
    "declares_alternates",
    "hreflang_clusters",
]

#: Rows handed to SQLite at once.
_BATCH = 2_000
#: The examples of an origin's close log line.
EXAMPLES = 3
#: What a pair comes to besides a drop reason: written, written unverified, the page's
#: own entry (replaced by the chosen one, but for x-default).
_KEPT = "kept"
_UNVERIFIED = "unverified"
_SELF = "self"
_FILE = "clusters.sqlite3"

_SCHEMA = (
    # src: a listed page that declares alternates; origin: its root, for the findings.
    "CREATE TABLE sources (src TEXT PRIMARY KEY, origin TEXT NOT NULL, lang TEXT) WITHOUT ROWID",
    # Every declared pair of those pages, in document order, the conflicts marked.
    "CREATE TABLE edges (src TEXT NOT NULL, pos INTEGER NOT NULL, hreflang TEXT NOT NULL,"
    " target TEXT NOT NULL, conflict INTEGER NOT NULL, outcome TEXT,"
    " PRIMARY KEY (src, pos)) WITHOUT ROWID",
    "CREATE TABLE listed (loc TEXT PRIMARY KEY) WITHOUT ROWID",
    # The reason of each target not listed: left out as a duplicate by content (reasons),
    # else the crawl's verdict of it (judged).
    "CREATE TABLE reasons (target TEXT PRIMARY KEY, reason TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE judged (target TEXT PRIMARY KEY, reason TEXT NOT NULL) WITHOUT ROWID",
    # What is written for each source: its alternates in order (none: no <xhtml:link>).
    "CREATE TABLE written (src TEXT NOT NULL, seq INTEGER NOT NULL, hreflang TEXT NOT NULL,"
    " href TEXT NOT NULL, PRIMARY KEY (src, seq)) WITHOUT ROWID",
    # The sources that do not name themselves under a language: lang, the one the sitemap
    # supplies, or NULL when none is known (then none is written).
    "CREATE TABLE missing_self (src TEXT PRIMARY KEY, lang TEXT) WITHOUT ROWID",
)
# A pair between two listed pages stands when the target names the source back among its
# own pairs that are no conflict (then the relation is symmetric: both are written).
_JUDGE = f"""
UPDATE edges SET outcome = CASE
    WHEN conflict THEN '{CONFLICT}'
    WHEN target = src THEN '{_SELF}'
    WHEN EXISTS (SELECT 1 FROM listed WHERE loc = edges.target) THEN
        CASE WHEN EXISTS (SELECT 1 FROM edges AS back WHERE back.src = edges.target
                          AND back.target = edges.src AND NOT back.conflict)
             THEN '{_KEPT}' ELSE '{NO_RETURN}' END
    ELSE COALESCE((SELECT reason FROM reasons WHERE reasons.target = edges.target),
                  (SELECT reason FROM judged WHERE judged.target = edges.target),
                  '{_UNVERIFIED}')
END
"""
# The values the kept pages give a source, in URL order of those pages, each in its own
# document order: the first is the source's self entry (hreflang_rules.self_language).
_RETURNED = f"""
SELECT e.src, back.hreflang FROM edges AS e
JOIN edges AS back ON back.src = e.target AND back.target = e.src AND NOT back.conflict
WHERE e.outcome = '{_KEPT}'
ORDER BY e.src, e.target, back.pos
"""


def declares_alternates(source: FactSource, config: Config) -> bool:
    """The one check a publish makes when the clusters are checked: whether some entry
    declares alternates. A source of items only (a feed) has none; a store that can tell
    without reading its entries says; else the entries are read up to the first with
    alternates."""
    if not config.checks_clusters or not getattr(source, "has_content", True):
        return False
    knows = getattr(source, "has_alternates", None)
    if knows is not None:
        return bool(knows())
    return any(facts.alternates for origin in source.origins() for facts in source.entries(origin))


def _listed(source: FactSource, origin: Origin, config: Config) -> Iterator[tuple[UrlFacts, bool]]:
    """The origin's entries, each with whether staging lists it: a duplicate by content is
    left out as ``publish.staging`` leaves it out."""
    chosen = (
        duplicate_choice(source.entries(origin), source.canonical_targets(origin))
        if config.dedupe_content and getattr(source, "has_content", True)
        else {}
    )
    for facts in source.entries(origin):
        content = facts.content
        if chosen and content is not None:
            yield facts, chosen.get(content.duplicate_key, facts.loc) == facts.loc
        else:
            yield facts, True


@dataclass
class OriginClusters:
    """One origin's broken clusters: the findings counted by kind, and the first few."""

    root: str
    counts: dict[str, int] = field(default_factory=dict)
    examples: list[Finding] = field(default_factory=list)


class ClusterIndex:
    """The judged clusters of one publish in an SQLite file (:attr:`path`), removed by
    :meth:`close`."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.path = os.path.join(folder, _FILE)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        for statement in _SCHEMA:
            self._db.execute(statement)

    def _fill(
        self, source: FactSource, config: Config, verdict_of: Callable[[str], Verdict | None]
    ) -> None:
        db = self._db
        listed: list[tuple[str]] = []
        dropped: list[tuple[str, str]] = []
        sources: list[tuple[str, str, str | None]] = []
        edges: list[tuple[str, int, str, str, int]] = []

        def drain() -> None:
            db.executemany("INSERT OR IGNORE INTO listed VALUES (?)", listed)
            db.executemany("INSERT OR IGNORE INTO reasons VALUES (?, ?)", dropped)
            db.executemany("INSERT OR IGNORE INTO sources VALUES (?, ?, ?)", sources)
            db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?, NULL)", edges)
            for rows in (listed, dropped, sources, edges):
                rows.clear()

        for origin in source.origins():
            root = origin.root
            for facts, is_listed in _listed(source, origin, config):
                if not is_listed:
                    dropped.append((facts.loc, DUPLICATE_CONTENT))
                    continue
                listed.append((facts.loc,))
                if facts.alternates:
                    src = facts.loc
                    sources.append((src, root, facts.language))
                    flags = conflicts(facts.alternates)
                    edges.extend(
                        (src, pos, a.hreflang, a.href, int(flag))
                        for pos, (a, flag) in enumerate(zip(facts.alternates, flags))
                    )
                if len(listed) + len(dropped) + len(edges) >= _BATCH:
                    drain()
        drain()
        db.execute("CREATE INDEX edges_back ON edges (src, target)")
        db.execute("CREATE INDEX edges_target ON edges (target)")
        db.execute("CREATE INDEX sources_origin ON sources (origin)")
        # The targets neither listed nor left out as duplicates: the crawl's verdicts say
        # why (a point query each, streamed: another table takes them in).
        unlisted = db.execute(
            "SELECT DISTINCT target FROM edges WHERE target NOT IN (SELECT loc FROM listed)"
            " AND target NOT IN (SELECT target FROM reasons)"
        )
        judged: list[tuple[str, str]] = []
        for (target,) in unlisted:
            verdict = verdict_of(target)
            reason = drop_reason(verdict.verdict) if verdict is not None else None
            if reason is not None:
                judged.append((target, reason))
                if len(judged) >= _BATCH:
                    db.executemany("INSERT INTO judged VALUES (?, ?)", judged)
                    judged.clear()
        db.executemany("INSERT INTO judged VALUES (?, ?)", judged)
        db.execute(_JUDGE)
        self._write()
        db.commit()

    def _write(self) -> None:
        """Each source's written alternates: the pairs kept, in document order (x-default
        naming the page itself among them), and the page's own entry under the language
        :func:`self_language` gives it, where the page declared itself, else first."""
        db = self._db
        # Two cursors read in source order side by side; the rows written go to a table
        # neither reads.
        returned = itertools.groupby(db.execute(_RETURNED), key=lambda row: row[0])
        pending = next(returned, None)
        edges = db.execute(
            "SELECT e.src, s.lang, e.hreflang, e.target, e.outcome FROM edges AS e"
            " JOIN sources AS s ON s.src = e.src ORDER BY e.src, e.pos"
        )
        rows: list[tuple[str, int, str, str]] = []
        missing: list[tuple[str, str | None]] = []
        for src, pairs in itertools.groupby(edges, key=lambda row: row[0]):
            values: list[str] = []
            while pending is not None and pending[0] < src:
                pending = next(returned, None)
            if pending is not None and pending[0] == src:
                values = [value for _, value in pending[1]]
                pending = next(returned, None)
            kept: list[tuple[str, str]] = []
            declared: list[str] = []
            own_at = 0  # where the page's own entry goes: where it declared it, else first
            named = False  # whether the page names itself, under any value (x-default too)
            lang = None
            for _, lang_of_src, hreflang, target, outcome in pairs:
                lang = lang_of_src
                named = named or outcome == _SELF
                if outcome in (_KEPT, _UNVERIFIED) or (outcome == _SELF and hreflang == X_DEFAULT):
                    kept.append((hreflang, target))
                elif outcome == _SELF:
                    if not declared:
                        own_at = len(kept)
                    declared.append(hreflang)
            if not any(target != src for _, target in kept):
                continue  # nothing but the page itself would remain: no <xhtml:link>
            own = self_language(values, declared, lang, (h for h, _ in kept))
            written = kept
            if own is None or not named:
                # Reported even when the sitemap supplies the entry: the page's own tags
                # are what other engines, and the tools SEO engineers use, read.
                missing.append((src, own))
            if own is not None:
                written = [*kept[:own_at], (own, src), *kept[own_at:]]
            rows.extend((src, seq, h, href) for seq, (h, href) in enumerate(written))
            if len(rows) >= _BATCH:
                db.executemany("INSERT INTO written VALUES (?, ?, ?, ?)", rows)
                rows.clear()
        db.executemany("INSERT INTO written VALUES (?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO missing_self VALUES (?, ?)", missing)

    def counts(self) -> dict[str, int]:
        """Pairs by what they came to: ``kept``, ``unverified``, and each drop reason."""
        rows = self._db.execute(
            "SELECT outcome, COUNT(*) FROM edges WHERE outcome != ? GROUP BY outcome", (_SELF,)
        )
        return dict(rows.fetchall())

    def findings(self, root: str) -> Iterator[Finding]:
        """The findings of one origin's pages (``root``: its root URL), in URL order."""
        yield from self._findings("WHERE s.origin = ?", (root,))

    def _findings(self, where: str, params: tuple[str, ...]) -> Iterator[Finding]:
        reasons = ", ".join(f"'{reason}'" for reason in DROP_REASONS)
        rows = self._db.execute(
            f"SELECT s.origin, e.src, e.pos, e.outcome, e.hreflang, e.target FROM edges AS e"
            f" JOIN sources AS s ON s.src = e.src {where}"
            f" AND e.outcome IN ('{NO_RETURN}', {reasons})"
            f" UNION ALL SELECT s.origin, m.src, -1, NULL, m.lang, NULL FROM missing_self AS m"
            f" JOIN sources AS s ON s.src = m.src {where}"
            f" ORDER BY 1, 2, 3",
            params + params,
        )
        for _, src, _, outcome, hreflang, target in rows:
            if outcome is None:  # hreflang: the value the sitemap supplies, if any
                yield Finding(src, FINDING_MISSING_SELF, missing_self_detail(hreflang))
            elif outcome == NO_RETURN:
                yield Finding(src, FINDING_NO_RETURN, f"{hreflang} {target}")
            else:
                yield Finding(src, FINDING_TARGET_NOT_LISTED, f"{hreflang} {target} ({outcome})")

    def by_origin(self) -> Iterator[OriginClusters]:
        """Each origin with a broken cluster, in origin order: its counts and the first
        :data:`EXAMPLES` findings (of its pages in URL order)."""
        origin: OriginClusters | None = None
        for finding_root, finding in self._all_findings():
            if origin is None or origin.root != finding_root:
                if origin is not None:
                    yield origin
                origin = OriginClusters(finding_root)
            origin.counts[finding.finding] = origin.counts.get(finding.finding, 0) + 1
            if len(origin.examples) < EXAMPLES:
                origin.examples.append(finding)
        if origin is not None:
            yield origin

    def _all_findings(self) -> Iterator[tuple[str, Finding]]:
        origins = self._db.execute("SELECT DISTINCT origin FROM sources ORDER BY origin").fetchall()
        for (root,) in origins:
            for finding in self.findings(root):
                yield root, finding

    def close(self) -> None:
        self._db.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def build_clusters(
    source: FactSource, config: Config, verdict_of: Callable[[str], Verdict | None]
) -> ClusterIndex | None:
    """The index of ``source``'s clusters, or None when there is nothing to check (the
    check is off, or no entry declares alternates). ``verdict_of``: the crawl's verdict
    of a URL, None when it has none (a store that keeps no verdicts gives none, so every
    target that is not listed is kept, unverified)."""
    if not declares_alternates(source, config):
        return None
    index = ClusterIndex(tempfile.mkdtemp(prefix="sitemapgen-clusters-"))
    try:
        index._fill(source, config, verdict_of)
    except BaseException:
        index.close()
        raise
    return index


class ClusterLookup:
    """The written alternates of each entry, read from the index file (read-only: a build's
    worker opens it beside the parent)."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    def alternates(self, loc: str) -> tuple[Alternate, ...]:
        rows = self._db.execute(
            "SELECT hreflang, href FROM written WHERE src = ? ORDER BY seq", (loc,)
        )
        return tuple(Alternate(hreflang, href) for hreflang, href in rows)

    def close(self) -> None:
        self._db.close()


def clustered(entries: Iterable[UrlFacts], lookup: ClusterLookup) -> Iterator[UrlFacts]:
    """``entries`` with the alternates the clusters' check writes, for those that
    declare any (the others pass untouched)."""
    for facts in entries:
        if facts.alternates:
            facts = dataclasses.replace(facts, alternates=lookup.alternates(facts.loc))
        yield facts


def hreflang_clusters(start: OriginStart) -> HreflangClustersWatch | None:
    """The watch of an origin when the publish built the clusters' index
    (SITEMAPGEN_ALTERNATES_CHECK = "listed" and some listed page declares alternates)."""
    return None if start.clusters is None else HreflangClustersWatch(start.clusters)


class HreflangClustersWatch(OriginWatch):
    """Writes the alternates the clusters' check kept, on every pass that writes them."""

    def __init__(self, path: str) -> None:
        self.lookup = ClusterLookup(path)

    def rewrite(self, entries: Iterable[UrlFacts], *, first: bool) -> Iterable[UrlFacts]:
        return clustered(entries, self.lookup)

    def rewrite_news(self, entries: Iterable[UrlFacts]) -> Iterable[UrlFacts]:
        return clustered(entries, self.lookup)

    def close(self) -> None:
        self.lookup.close()
