"""Store -> one origin's complete set of files in a staging folder, ready to deliver.

No Scrapy imports: the crawl's exporter and the ``sitemapgen-build`` command run the same
steps, so a set rebuilt from a stored JOBDIR is the set the crawl would have written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from ..sitemaps.facts import format_w3c
from ..sitemaps.indexnow import ChangeNotes, fingerprint, key_file_name, previous_fingerprints
from ..sitemaps.manifest import URL_BLOCK, FileRecord, UrlNotes, manifest_json, previous_locs
from ..sitemaps.naming import MANIFEST_NAME, ROBOTS_NAME
from ..sitemaps.sections import in_section
from ..sitemaps.urls import Origin, base_url_for, origin_folder
from ..sitemaps.writer import (
    OriginOutput,
    WriterOptions,
    WrittenFile,
    url_entry,
    write_origin,
    write_text,
)
from ..stats import Tally

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from ..settings import Config, Rule
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.manifest import PublishState
    from ..stats import Reporter
    from ..store.base import FactSource

__all__ = [
    "OriginSet",
    "fresh_news",
    "stage_origin",
    "stage_origins",
    "with_rules",
]


class SkipReporter(Protocol):
    """What staging reports to: :class:`stats.Reporter` in the crawl's process, a
    :class:`stats.Tally` in a staging worker (replayed by the parent)."""

    def skip(self, reason: str, url: str, detail: object = None) -> None: ...

    def exclude(self, reason: str, url: str) -> None: ...


class StateView(Protocol):
    """What staging needs of :class:`manifest.PublishState`."""

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]: ...

    def url_notes(self, output: str, origin: str) -> UrlNotes: ...

    def change_notes(self, output: str, origin: str) -> ChangeNotes: ...


@dataclass(slots=True)
class OriginSet:
    """One origin's staged files and what the close log and the delivery need to know."""

    origin: Origin
    folder: str
    staging: Path
    output: OriginOutput
    records: list[FileRecord] = field(default_factory=list)
    index_urls: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0
    #: Written by section (SITEMAPGEN_SECTIONS): the close report counts each.
    sectioned: bool = False
    #: IndexNow's count of URLs added, changed and removed (None: IndexNow is off).
    indexnow: dict[str, int] | None = None

    @property
    def robots_lines(self) -> str:
        return "".join(f"Sitemap: {url}\n" for url in self.index_urls)

    @property
    def changed(self) -> list[str]:
        return [r.name for r in self.records if r.changed]


def _first_match(rules: tuple[Rule, ...], loc: str) -> str | None:
    return next((value for pattern, value in rules if pattern.search(loc)), None)


def with_rules(entries: Iterable[UrlFacts], config: Config) -> Iterator[UrlFacts]:
    """SITEMAPGEN_CHANGEFREQ / SITEMAPGEN_PRIORITY for entries that have no value of their
    own (an item's value wins); first matching rule wins, no match writes nothing."""
    if not config.changefreq_rules and not config.priority_rules:
        return iter(entries)  # no generator step per URL when there is nothing to apply
    return _ruled(entries, config)


def _ruled(entries: Iterable[UrlFacts], config: Config) -> Iterator[UrlFacts]:
    for facts in entries:
        changefreq = facts.changefreq or _first_match(config.changefreq_rules, facts.loc)
        priority = facts.priority or _first_match(config.priority_rules, facts.loc)
        if changefreq != facts.changefreq or priority != facts.priority:
            facts = dataclasses.replace(facts, changefreq=changefreq, priority=priority)
        yield facts


def fresh_news(
    entries: Iterable[UrlFacts], now: datetime, max_age: int, reporter: SkipReporter
) -> Iterator[UrlFacts]:
    """News entries published within ``max_age`` seconds of ``now`` (Google News wants the
    last two days); older ones stay in the urlsets, out of the news sitemap."""
    cutoff = now - timedelta(seconds=max_age)
    for facts in entries:
        assert facts.news is not None
        published = datetime.fromisoformat(facts.news.publication_date)
        if published.tzinfo is None:
            published = published.replace(tzinfo=timezone.utc)
        if published >= cutoff:
            yield facts
        else:
            reporter.exclude("news_too_old", facts.loc)


def _noted(
    entries: Iterable[UrlFacts], notes: UrlNotes, changes: ChangeNotes | None = None
) -> Iterator[UrlFacts]:
    if changes is not None:
        entries = _fingerprinted(entries, changes)
    locs: list[str] = []  # handed over in blocks: one call per block, not per URL
    for facts in entries:
        locs.append(facts.loc)
        if len(locs) >= URL_BLOCK:
            notes.note_all(locs)
            locs = []
        yield facts
    notes.note_all(locs)


def _fingerprinted(entries: Iterable[UrlFacts], changes: ChangeNotes) -> Iterator[UrlFacts]:
    """IndexNow's notes: each URL with a fingerprint of its ``<url>`` entry, in blocks."""
    pairs: list[tuple[str, str]] = []
    for facts in entries:
        pairs.append((facts.loc, fingerprint(url_entry(facts))))
        if len(pairs) >= URL_BLOCK:
            changes.note_all(pairs)
            pairs = []
        yield facts
    changes.note_all(pairs)


def _section_pass(
    store: FactSource, origin: Origin, config: Config, section: str
) -> Iterator[UrlFacts]:
    """One section's entries, from a pass of their own over the store (the store gives
    one origin in loc order; each section is written as a sequence of its own)."""
    yield from in_section(with_rules(store.entries(origin), config), config.sections, section)


def _robots(config: Config, origin: Origin, lines: str) -> bytes:
    """The robots.txt to publish: the user's file (SITEMAPGEN_ROBOTS_TXT) with our
    ``Sitemap:`` lines added where not already there (P15), or the lines alone."""
    if not config.robots_txt:
        return lines.encode()
    existing = Path(
        origin_folder(config.robots_txt, origin) if "%(" in config.robots_txt else config.robots_txt
    )
    text = existing.read_text(encoding="utf-8")
    present = {line.strip().lower() for line in text.splitlines()}
    missing = [line for line in lines.splitlines() if line.strip().lower() not in present]
    if not missing:
        return text.encode()
    separator = "" if not text or text.endswith("\n") else "\n"
    return (text + separator + "\n".join(missing) + "\n").encode()


def stage_origin(
    store: FactSource,
    origin: Origin,
    config: Config,
    now: datetime,
    state: StateView,
    reporter: SkipReporter,
    staging: Path,
) -> OriginSet | None:
    """Write every file of ``origin`` into ``staging``; None when nothing was writable.

    A file whose uncompressed bytes equal what the previous run published keeps that
    run's ``<lastmod>`` in the index (P10) and is marked unchanged, so the delivery can
    leave it alone; everything else gets ``now``.
    """
    previous = state.previous_files(config.uri, origin.name)
    stamp = format_w3c(now)

    def lastmod(written: WrittenFile) -> str:
        sha256, when = previous.get(written.name, ("", ""))
        return when if sha256 == written.sha256 else stamp

    def open_sink(name: str) -> BinaryIO:
        return (staging / name).open("wb")

    options = WriterOptions(
        max_urls=config.max_urls,
        max_bytes=config.max_bytes,
        gzip=config.gzip,
        compresslevel=config.gzip_level,
    )
    skip = reporter.skip
    base_url = base_url_for(config.base_url, origin)
    output = OriginOutput()
    notes = state.url_notes(config.uri, origin.name)
    changes = state.change_notes(config.uri, origin.name) if config.indexnow_key else None
    if "xml" in config.formats:
        # The URLs of no section in the pass that notes every URL, in loc order.
        noted = _noted(with_rules(store.entries(origin), config), notes, changes)
        output = write_origin(
            in_section(noted, config.sections, "") if config.sections else noted,
            sections=[
                (s.name, _section_pass(store, origin, config, s.name)) for s in config.sections
            ],
            news=fresh_news(store.news_entries(origin), now, config.news_max_age, reporter),
            scope=origin.root,
            base_url=base_url,
            lastmod=lastmod,
            open_sink=open_sink,
            options=options,
            on_skip=skip,
        )
    if "txt" in config.formats:
        entries = store.entries(origin)
        output.texts = write_text(
            entries if "xml" in config.formats else _noted(entries, notes, changes),
            scope=origin.root,
            open_sink=open_sink,
            options=options,
            on_skip=skip,
        )
    if not output.sitemaps and not output.texts:
        return None
    kinds = {
        id(f): kind
        for kind, files in (
            ("urlset", output.sitemaps),
            ("news", output.news),
            ("text", output.texts),
            ("index", output.indexes),
        )
        for f in files
    }
    records = [
        FileRecord(
            f.name,
            kinds[id(f)],
            f.entries,
            f.size,
            f.sha256,
            lastmod(f),
            previous.get(f.name, ("",))[0] != f.sha256,
        )
        for f in output.files
    ]
    announced = output.indexes or output.texts
    origin_set = OriginSet(
        origin=origin,
        folder=origin_folder(config.uri, origin),
        staging=staging,
        output=output,
        index_urls=tuple(f"{base_url}{f.name}" for f in announced),
        sectioned=bool(config.sections),
    )
    origin_set.added, origin_set.removed = notes.finish()
    if changes is not None:
        origin_set.indexnow = changes.finish()
    # robots.txt and the manifest go out before the index, which is always published last.
    before_index = len(records) - len(output.indexes)
    robots = _robots(config, origin, origin_set.robots_lines)
    records.insert(before_index, _staged(staging, ROBOTS_NAME, "robots", robots, previous, stamp))
    if config.indexnow_key and not config.indexnow_key_location:
        # The key file IndexNow fetches to check the key, published with the sitemaps.
        key = config.indexnow_key
        records.insert(
            before_index,
            _staged(staging, key_file_name(key), "indexnow-key", key.encode(), previous, stamp),
        )
        before_index += 1
    manifest = manifest_json(origin.root, records, sectioned=bool(config.sections))
    records.insert(
        before_index + 1, _staged(staging, MANIFEST_NAME, "manifest", manifest, previous, stamp)
    )
    origin_set.records = records
    return origin_set


def _staged(
    staging: Path,
    name: str,
    kind: str,
    data: bytes,
    previous: dict[str, tuple[str, str]],
    stamp: str,
) -> FileRecord:
    (staging / name).write_bytes(data)
    sha256 = hashlib.sha256(data).hexdigest()
    old_sha, old_when = previous.get(name, ("", ""))
    return FileRecord(
        name,
        kind,
        0,
        len(data),
        sha256,
        old_when if old_sha == sha256 else stamp,
        old_sha != sha256,
    )


def stage_origins(
    store: FactSource,
    config: Config,
    now: datetime,
    state: PublishState,
    reporter: Reporter,
    staging_of: Callable[[Origin], Path],
) -> list[OriginSet]:
    """:func:`stage_origin` for every origin of ``store``, in origin order.

    A source that worker processes can read (its ``pool()``: the offline build's run
    files) has its origins staged in them at once: each
    writes its files, compares its URLs with the previous run's (reading the state file)
    and saves them into a scratch SQLite file that ``state`` then takes in, and reports
    into a tally replayed here, so the result and the log are the same.
    """
    origins = store.origins()
    pool = store.pool()
    if pool is None or len(origins) < 2:
        sets = []
        for origin in origins:
            origin_set = stage_origin(
                store, origin, config, now, state, reporter, staging_of(origin)
            )
            if origin_set is not None:
                sets.append(origin_set)
        return sets
    scratch = Path(tempfile.mkdtemp(prefix="sitemapgen-notes-"))
    try:
        # The largest origins first, so that the last to finish is a small one.
        order = sorted(origins, key=lambda o: -store.size_of(o))
        futures = {
            origin: pool.submit(
                _stage_in_worker,
                store,
                origin,
                config,
                now,
                state.previous_files(config.uri, origin.name),
                state.path,
                staging_of(origin),
                scratch / f"notes-{n}.sqlite3",
            )
            for n, origin in enumerate(order)
        }
        sets = []
        for origin in origins:
            origin_set, tally, notes, counted = futures[origin].result()
            tally.replay(reporter)
            store.add_counts(counted)
            if origin_set is not None:
                state.take_notes(origin.name, notes)
                sets.append(origin_set)
        return sets
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class _WorkerState:
    """The state as a staging worker sees it: the previous run's files (read by the
    parent) and URL set (read here, from the state file), the URLs written saved into a
    scratch SQLite file for the parent to take in."""

    def __init__(self, previous: dict[str, tuple[str, str]], state_path: Path, notes: Path) -> None:
        self._previous = previous
        self._state = sqlite3.connect(f"{state_path.resolve().as_uri()}?mode=ro", uri=True)
        self._db = sqlite3.connect(notes)
        self._db.execute("PRAGMA journal_mode = OFF")  # scratch: nothing to recover
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE blocks (seq INTEGER PRIMARY KEY, data BLOB NOT NULL)")

    def previous_files(self, output: str, origin: str) -> dict[str, tuple[str, str]]:
        return self._previous

    def url_notes(self, output: str, origin: str) -> UrlNotes:
        def save(seq: int, data: bytes) -> None:
            self._db.execute("INSERT INTO blocks VALUES (?, ?)", (seq, data))

        return UrlNotes(previous_locs(self._state, output, origin), save)

    def change_notes(self, output: str, origin: str) -> ChangeNotes:
        """IndexNow's notes, into the scratch file's ``fingerprints`` and ``changes``."""
        self._db.execute("CREATE TABLE fingerprints (seq INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        self._db.execute("CREATE TABLE changes (kind TEXT NOT NULL, loc TEXT NOT NULL)")

        def save(seq: int, data: bytes) -> None:
            self._db.execute("INSERT INTO fingerprints VALUES (?, ?)", (seq, data))

        def on_changes(changes: list[tuple[str, str]]) -> None:
            self._db.executemany("INSERT INTO changes VALUES (?, ?)", changes)

        return ChangeNotes(previous_fingerprints(self._state, output, origin), save, on_changes)

    def close(self) -> None:
        self._state.close()
        self._db.commit()
        self._db.close()


def _stage_in_worker(
    store: FactSource,
    origin: Origin,
    config: Config,
    now: datetime,
    previous: dict[str, tuple[str, str]],
    state_path: Path,
    staging: Path,
    notes: Path,
) -> tuple[OriginSet | None, Tally, Path, dict[Origin, int]]:
    tally = Tally()
    state = _WorkerState(previous, state_path, notes)
    try:
        origin_set = stage_origin(store, origin, config, now, state, tally, staging)
    finally:
        state.close()
    return origin_set, tally, notes, store.counts()
