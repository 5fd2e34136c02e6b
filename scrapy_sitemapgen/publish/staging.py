"""Store -> one origin's complete set of files in a staging folder, ready to deliver.

The core loop: entries in, the changefreq and priority rules, duplicates by content left
out, lastmods settled, files out. The features that watch the entries (chrome images,
hreflang clusters, the changes feed, IndexNow) plug into it through one interface
(:mod:`..features.origin_watch`), each switched on by its setting.

No Scrapy imports: the crawl's exporter and the ``sitemapgen-build`` command run the same
steps, so a set rebuilt from a stored JOBDIR is the set the crawl would have written.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..build.pool import TASK_ORIGINS, finished, staging_tasks
from ..build.source import PooledSource
from ..features import origin_watches
from ..features.origin_watch import OriginStart, overridden
from ..sitemaps.duplicates import duplicate_choice
from ..sitemaps.facts import format_w3c
from ..sitemaps.lastmod import Seen, observes
from ..sitemaps.manifest import FileRecord, manifest_json
from ..sitemaps.naming import MANIFEST_NAME, ROBOTS_NAME
from ..sitemaps.sections import in_section
from ..sitemaps.urls import Origin, base_url_for, origin_folder
from ..sitemaps.writer import (
    OriginOutput,
    WriterOptions,
    WrittenFile,
    write_all,
    write_origin,
    write_text,
)
from ..state.content_notes import ContentNotes
from ..state.url_notes import URL_BLOCK, UrlCounts
from ..stats import DUPLICATE_CONTENT

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator, Sequence

    from ..features.origin_watch import OriginWatch
    from ..settings import Config, Rule
    from ..sitemaps.evidence import OriginEvidence
    from ..sitemaps.facts import UrlFacts
    from ..state.notes import Save
    from ..state.published_entries import PublishedNotes
    from ..state.statefile import PublishState
    from ..state.url_notes import UrlNotes
    from ..state.view import StateView
    from ..stats import Reporter
    from ..store.base import FactSource
    from .split import Plan

    #: Told (loc, lastmod) of each URL whose lastmod the content notes settled to another
    #: value than the store's, on the pass that notes every URL (:func:`stage_origin`).
    Settled = Callable[[str, str | None], None]

__all__ = [
    "Kept",
    "NewFile",
    "OriginSet",
    "fresh_news",
    "stage_origin",
    "stage_origins",
    "staged_set",
    "with_rules",
    "writer_options",
]


class SkipReporter(Protocol):
    """What staging reports to: :class:`stats.Reporter` in the crawl's process, a
    :class:`stats.Tally` in a staging worker (replayed by the parent)."""

    def skip(self, reason: str, url: str, detail: object = None) -> None: ...

    def exclude(self, reason: str, url: str) -> None: ...


#: How many duplicates by content the close log names per origin (the rest at DEBUG).
DUPLICATES_SHOWN = 5


# Without slots, as FileRecord: a build's worker sends one back for every origin, and a
# slotted dataclass pickles through Python code.
@dataclass
class OriginSet:
    """One origin's staged files and what the close log and the delivery need to know:
    the files are its ``records``, the sitemaps among them those of a sitemap kind."""

    origin: Origin
    folder: str
    #: A string, not a Path: sent back from a worker for every origin, and a Path is
    #: parsed again each time it is unpickled.
    staging: str
    records: list[FileRecord] = field(default_factory=list)
    index_urls: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0
    #: The URLs the previous run noted for it (the guard on shrinking's base).
    previous: int = 0
    #: Written by section (SITEMAPGEN_SECTIONS): the close report counts each.
    sectioned: bool = False
    #: IndexNow's count of URLs added, changed and removed (None: IndexNow is off).
    indexnow: dict[str, int] | None = None
    #: Pages left out as duplicates by content, and the first few as (left out, listed).
    duplicates: int = 0
    first_duplicates: list[tuple[str, str]] = field(default_factory=list)
    #: Chrome images (SITEMAPGEN_IMAGE_CHROME_SHARE): ``<image:image>`` entries left out
    #: (one per image per page), the images, and the most-used few with their pages.
    chrome: int = 0
    chrome_images: int = 0
    first_chrome: list[tuple[str, int]] = field(default_factory=list)
    #: The entries of its changes feed (None: SITEMAPGEN_CHANGES_FEED is off).
    feed_entries: int | None = None
    #: What this run's evidence did to the previous run's set (None: a feed's build).
    evidence: OriginEvidence | None = None

    def files(self, kind: str) -> list[FileRecord]:
        """Its files of ``kind`` (``urlset``, ``news``, ``text``, ``index``, ...), in
        publishing order."""
        return [record for record in self.records if record.kind == kind]

    @property
    def url_count(self) -> int:
        """The URLs in its urlsets."""
        return sum(record.entries for record in self.records if record.kind == "urlset")

    @property
    def listed(self) -> int:
        """The URLs it lists: in its urlsets, or its text sitemaps when it has no XML."""
        return self.url_count or sum(
            record.entries for record in self.records if record.kind == "text"
        )

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
    entries: Iterable[UrlFacts],
    notes: UrlNotes,
    watches: Sequence[OriginWatch] = (),
    published: PublishedNotes | None = None,
    unwritten: set[str] | None = None,
) -> Iterator[UrlFacts]:
    """``entries`` as they are, noted on the way a block at a time: by the URL notes, the
    features' :meth:`~..features.origin_watch.OriginWatch.block` and the published entries.

    A block is noted once the writer asked for the entry after its last, so every entry
    of it was rendered: those the writer left out (``unwritten``, filled by its skip: a
    loc it refuses, an entry too large for a file) are not noted as published."""
    block: list[UrlFacts] = []  # handed over in blocks: one call per block, not per URL
    for facts in entries:
        if len(block) >= URL_BLOCK:
            _note_block(block, notes, watches, published, unwritten)
            block = []
        block.append(facts)
        yield facts
    _note_block(block, notes, watches, published, unwritten)


def _note_block(
    block: list[UrlFacts],
    notes: UrlNotes,
    watches: Sequence[OriginWatch],
    published: PublishedNotes | None,
    unwritten: set[str] | None,
) -> None:
    if unwritten:
        block = [facts for facts in block if facts.loc not in unwritten]
    for watch in watches:
        watch.block(block)
    if published is not None:
        note = published.note
        for facts in block:
            note(facts)
    notes.note_all([facts.loc for facts in block])


def _section_pass(listing: _Listing, config: Config, section: str) -> Iterator[UrlFacts]:
    """One section's entries, from a pass of their own over the store (the store gives
    one origin in loc order; each section is written as a sequence of its own)."""
    entries = listing.entries(first=False)
    yield from in_section(with_rules(entries, config), config.sections, section)


def _settled(watches: list[OriginWatch]) -> Settled | None:
    """What the content notes tell of each lastmod they settle: the watches that want it."""
    settling = [watch.settled for watch in overridden(watches, "settled")]
    if len(settling) <= 1:
        return settling[0] if settling else None

    def settled(loc: str, lastmod: str | None) -> None:
        for tell in settling:
            tell(loc, lastmod)

    return settled


class _Listing:
    """The entries of one origin to publish: duplicates by content left out (counted once,
    on the first pass), the features' rewrites applied, lastmods settled against the
    previous runs' content notes (kept for the next run on the first pass, the one that
    sees every URL, which also tells the features of each lastmod they changed)."""

    def __init__(
        self,
        store: FactSource,
        origin: Origin,
        config: Config,
        state: StateView,
        reporter: SkipReporter,
        watches: list[OriginWatch],
        dedupe: bool,
    ) -> None:
        self.store = store
        self.origin = origin
        self.config = config
        self.state = state
        self.reporter = reporter
        self.duplicates = 0
        self.first_duplicates: list[tuple[str, str]] = []
        # A pass over the store before the ones that write: which URL of each content is
        # listed must be known before the first of them is written. The features that
        # count something over every page ride on it.
        self.chosen: dict[str, str] = {}
        if dedupe:
            stored: Iterable[UrlFacts] = store.entries(origin)
            for watch in overridden(watches, "survey"):
                stored = watch.survey(stored)
            self.chosen = duplicate_choice(stored, store.canonical_targets(origin))
        for watch in overridden(watches, "surveyed"):
            watch.surveyed(self._listed, len(self.chosen))
        self.rewrites = overridden(watches, "rewrite")
        self.news_rewrites = overridden(watches, "rewrite_news")
        self.notes = self._notes(
            *state.content_notes(config.state_key, origin.name), _settled(watches)
        )

    def _notes(
        self,
        previous: Iterator[tuple[str, Seen]],
        save: Save | None,
        settled: Settled | None = None,
    ) -> ContentNotes:
        return ContentNotes(
            previous,
            save,
            observed=observes(self.config.lastmod_sources),
            follows_content=self.config.lastmod_follows_content,
            block=URL_BLOCK,
            on_settled=settled,
        )

    def entries(self, *, first: bool, settled: bool = True) -> Iterator[UrlFacts]:
        """The origin's entries; ``first``: the pass whose exclusions and notes count. The
        other passes (sections, text) settle each lastmod again, the same way, against
        the previous run's notes read again; ``settled=False``: not at all, nor rewritten
        by the features (a text sitemap writes neither lastmods nor media)."""
        entries: Iterable[UrlFacts] = self.store.entries(self.origin)
        if self.chosen:
            entries = self._unique(entries, first)
        if not settled:
            return iter(entries)
        for watch in self.rewrites:
            entries = watch.rewrite(entries, first=first)
        if first:
            return self.notes.follow(entries)
        previous = self.state.previous_contents(self.config.state_key, self.origin.name)
        return self._notes(previous, None).follow(entries)

    def _listed(self) -> Iterator[UrlFacts]:
        """The listed entries as they are stored: a pass to count their images."""
        entries = self.store.entries(self.origin)
        return self._unique(entries, False) if self.chosen else entries

    def news_entries(self) -> Iterator[UrlFacts]:
        entries: Iterable[UrlFacts] = self.store.news_entries(self.origin)
        if self.chosen:
            entries = self._unique(entries, False)
        for watch in self.news_rewrites:
            entries = watch.rewrite_news(entries)
        return iter(entries)

    def _unique(self, entries: Iterable[UrlFacts], first: bool) -> Iterator[UrlFacts]:
        chosen = self.chosen
        for facts in entries:
            content = facts.content
            if content is not None:
                listed = chosen.get(content.duplicate_key, facts.loc)
                if listed != facts.loc:
                    if first:
                        self.duplicates += 1
                        if len(self.first_duplicates) < DUPLICATES_SHOWN:
                            self.first_duplicates.append((facts.loc, listed))
                        self.reporter.exclude(DUPLICATE_CONTENT, facts.loc)
                    continue
            yield facts


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


# One publish stages every origin with the same time and options: a broad crawl's
# origins each made them again.
@functools.lru_cache(maxsize=1)
def _stamp(now: datetime) -> str:
    return format_w3c(now)


def writer_options(config: Config) -> WriterOptions:
    """The limits and format of every origin's files."""
    return _writer_options(config.max_urls, config.max_bytes, config.gzip, config.gzip_level)


@functools.lru_cache(maxsize=1)
def _writer_options(max_urls: int, max_bytes: int, gzip: bool, level: int) -> WriterOptions:
    return WriterOptions(max_urls=max_urls, max_bytes=max_bytes, gzip=gzip, compresslevel=level)


def stage_origin(
    store: FactSource,
    origin: Origin,
    config: Config,
    now: datetime,
    state: StateView,
    reporter: SkipReporter,
    staging: str | Path,
    clusters: str | None = None,
    settled: Settled | None = None,
    recurring: bool = False,
) -> OriginSet | None:
    """Write every file of ``origin`` into ``staging``; None when nothing was writable.
    The features that are on (:data:`..features.FEATURES`) watch the entries and add to
    the set. ``clusters``: the hreflang clusters' index file
    (:mod:`..features.hreflang_clusters`), when the alternates written are those it
    checked. ``settled``: told of each lastmod the content notes changed from the
    store's, for the audit's verdicts (:mod:`..features.published_lastmods`). ``recurring``: the entries written are noted whole
    for the next run, which publishes again those it cannot judge (a crawl's store,
    :mod:`.recurring`; a feed states the whole site).

    A file whose bytes equal what the previous run published keeps that run's
    ``<lastmod>`` in the index (P10) and is marked unchanged, so the delivery can leave it
    alone; everything else gets ``now`` (:class:`Kept`).
    """
    kept = Kept(state.previous_files(config.state_key, origin.name), _stamp(now))

    def lastmod(written: WrittenFile) -> str:
        return kept.lastmod(written.name, written.sha256)

    folder = str(staging)  # a string join per file, not a Path built and parsed

    def open_sink(name: str) -> NewFile:
        return NewFile(os.path.join(folder, name))

    options = writer_options(config)
    unwritten: set[str] = set()  # the locs the writer left out: not noted as published

    def skip(reason: str, url: str) -> None:
        unwritten.add(url)
        reporter.skip(reason, url)

    base_url = base_url_for(config.base_url, origin)
    output = OriginOutput()
    notes = state.url_notes(config.state_key, origin.name)
    dedupe = config.dedupe_content and getattr(store, "has_content", True)
    watches = origin_watches(
        OriginStart(
            origin=origin,
            config=config,
            state=state,
            source=store,
            now=now,
            stamp=kept.stamp,
            base_url=base_url,
            previous_files=kept.files,
            dedupe=dedupe,
            clusters=clusters,
            settled=settled,
        )
    )
    watching = overridden(watches, "block")
    listing = _Listing(store, origin, config, state, reporter, watches, dedupe)
    published = (
        state.published_notes(config.state_key, origin.name, int(now.timestamp()))
        if recurring
        else None
    )
    if "xml" in config.formats:
        # The URLs of no section in the pass that notes every URL, in loc order.
        noted = _noted(
            with_rules(listing.entries(first=True), config), notes, watching, published, unwritten
        )
        output = write_origin(
            in_section(noted, config.sections, "") if config.sections else noted,
            sections=[(s.name, _section_pass(listing, config, s.name)) for s in config.sections],
            news=fresh_news(listing.news_entries(), now, config.news_max_age, reporter),
            scope=origin.root,
            base_url=base_url,
            lastmod=lastmod,
            open_sink=open_sink,
            options=options,
            on_skip=skip,
        )
    if "txt" in config.formats:
        xml = "xml" in config.formats
        # A text sitemap has no lastmod: the pass after the XML one need not settle them.
        entries = listing.entries(first=not xml, settled=not xml)
        output.texts = write_text(
            entries if xml else _noted(entries, notes, watching, published, unwritten),
            scope=origin.root,
            open_sink=open_sink,
            options=options,
            on_skip=skip,
        )
    listing.notes.finish()
    if published is not None:
        published.finish()
    for watch in overridden(watches, "close"):
        watch.close()
    if not output.sitemaps and not output.texts:
        return None
    duplicates = (listing.duplicates, listing.first_duplicates)
    return staged_set(config, origin, output, kept, folder, base_url, notes, watches, duplicates)


def staged_set(
    config: Config,
    origin: Origin,
    output: OriginOutput,
    kept: Kept,
    folder: str,
    base_url: str,
    notes: UrlNotes | UrlCounts,
    watches: list[OriginWatch],
    duplicates: tuple[int, list[tuple[str, str]]] = (0, []),
) -> OriginSet:
    """The set of an origin whose files ``output`` are written into ``folder``: their
    records, what the features add, robots.txt and the manifest, the index last.
    ``notes``: the URL notes, finished here, or what they counted;
    ``duplicates``: the pages left out as duplicates by content, and the first few."""
    # In publishing order, the order of output.files: the index last.
    records = [
        kept.record(f.name, kind, f.entries, f.size, f.sha256)
        for kind, files in (
            ("urlset", output.sitemaps),
            ("news", output.news),
            ("text", output.texts),
            ("index", output.indexes),
        )
        for f in files
    ]
    announced = output.indexes or output.texts
    origin_set = OriginSet(
        origin=origin,
        folder=origin_folder(config.uri, origin),
        staging=folder,
        index_urls=tuple(f"{base_url}{f.name}" for f in announced),
        sectioned=bool(config.sections),
    )
    counts = notes if isinstance(notes, UrlCounts) else notes.finish()
    origin_set.added, origin_set.removed, origin_set.previous = counts
    origin_set.duplicates, origin_set.first_duplicates = duplicates
    # The features' files, robots.txt and the manifest go out before the index, which is
    # always published last.
    before_index = len(records) - len(output.indexes)
    for watch in overridden(watches, "finish"):
        for extra in watch.finish(origin_set):
            records.insert(
                before_index,
                _staged(folder, extra.name, extra.kind, extra.data, kept, extra.entries),
            )
            before_index += 1
    robots = _robots(config, origin, origin_set.robots_lines)
    records.insert(before_index, _staged(folder, ROBOTS_NAME, "robots", robots, kept))
    manifest = manifest_json(origin.root, records, sectioned=bool(config.sections))
    records.insert(before_index + 1, _staged(folder, MANIFEST_NAME, "manifest", manifest, kept))
    origin_set.records = records
    return origin_set


class Kept:
    """An unchanged file keeps its lastmod (P10), decided here for every file of an origin:
    one whose bytes (their SHA-256) equal what the previous run published keeps that run's
    lastmod, in the index and the manifest, and is marked unchanged, so the delivery can
    leave it alone; any other file gets this run's time (``stamp``)."""

    __slots__ = ("files", "stamp")

    def __init__(self, files: dict[str, tuple[str, str]], stamp: str) -> None:
        self.files = files  # name -> (sha256, lastmod), as the previous run published them
        self.stamp = stamp

    def lastmod(self, name: str, sha256: str) -> str:
        old_sha, old_when = self.files.get(name, ("", ""))
        return old_when if old_sha == sha256 else self.stamp

    def record(self, name: str, kind: str, entries: int, size: int, sha256: str) -> FileRecord:
        old_sha, old_when = self.files.get(name, ("", ""))
        unchanged = old_sha == sha256
        return FileRecord(
            name, kind, entries, size, sha256, old_when if unchanged else self.stamp, not unchanged
        )


def _staged(
    staging: str, name: str, kind: str, data: bytes, kept: Kept, entries: int = 0
) -> FileRecord:
    _write_file(os.path.join(staging, name), data)
    return kept.record(name, kind, entries, len(data), hashlib.sha256(data).hexdigest())


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


class NewFile:
    """A new file in a staging folder, written by the system calls alone: no file object,
    whose ``fstat`` as it opens was one call more for each of a broad crawl's files, and
    no buffer (the writer hands over pieces of 512 KiB, or a small file whole)."""

    __slots__ = ("_fd",)

    def __init__(self, path: str) -> None:
        self._fd = -1  # what close() finds if the open fails
        self._fd = os.open(path, _NEW_FILE, 0o666)

    def write(self, data: bytes | memoryview, /) -> int:
        return os.write(self._fd, data)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    __del__ = close  # a write that failed part-way: closed as a file object would be


def _write_file(path: str, data: bytes) -> None:
    """A new file of ``data`` (robots.txt, the manifest, IndexNow's key file), the way the
    writer writes the sitemaps."""
    sink = NewFile(path)
    try:
        write_all(sink, data)
    finally:
        sink.close()


#: Without worker processes, origins are staged and delivered in groups of this many (as
#: many as a task of small origins in the build's workers): the main process holds one
#: group's staged sets at a time, not every origin's.
GROUP_ORIGINS = TASK_ORIGINS


def stage_origins(
    store: FactSource,
    config: Config,
    now: datetime,
    state: PublishState,
    reporter: Reporter,
    staging_of: Callable[[Origin], str],
    *,
    group: int | None = GROUP_ORIGINS,
    clusters: str | None = None,
    settled: Settled | None = None,
    recurring: bool = False,
) -> Generator[list[OriginSet], None, None]:
    """:func:`stage_origin` for every origin of ``store``, yielded in groups for the
    caller to deliver before the next is staged (``group=None``: all in one group).

    Without workers, the groups are the origins in origin order, ``group`` at a time. A
    source that worker processes can read (the offline build's run store) has its origins
    staged in them, a group per task (:meth:`..build.pool.StagingTasks.staged`); such a
    source keeps no verdicts, and ``settled``, which writes them in this process, is
    not sent to the workers."""
    # Here, not at the top: the split's module is built on this one's.
    from .split import stage_or_plan

    # The clusters' index goes to each worker as its path, with the task. A large origin
    # is written in windows (.split) unless a feature needs it whole.
    stage: Callable[..., OriginSet | Plan | None] = (
        partial(stage_or_plan, stage_origin)
        if clusters is None
        else partial(stage_origin, clusters=clusters)
    )
    pooled = staging_tasks(store)
    if pooled is not None:
        yield from pooled.staged(stage, config, now, state, reporter, staging_of, group=group)
        return
    if settled is not None or recurring:
        stage = stage_origin if clusters is None else partial(stage_origin, clusters=clusters)
    if settled is not None:
        stage = partial(stage, settled=settled)
    if recurring:
        stage = partial(stage, recurring=True)
    # A run store of one origin is staged here, not sent: its windows still go to the
    # workers (.split).
    pool = store.pool() if isinstance(store, PooledSource) else None
    sets: list[OriginSet] = []
    for origin in store.origins():
        origin_set = finished(
            stage(store, origin, config, now, state, reporter, staging_of(origin)),
            reporter,
            pool,
        )
        if origin_set is not None:
            sets.append(origin_set)
        if group and len(sets) >= group:
            yield sets
            sets = []
    if sets:
        yield sets
