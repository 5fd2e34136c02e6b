"""A large origin of the offline build written in windows, across the build's workers.

One origin is otherwise one worker's task: on most sites one origin holds most of the
URLs, and one core renders and compresses it while the others wait. An origin of at
least SITEMAPGEN_BUILD_SPLIT_URLS records (and more than one urlset's worth) is split:

1. A survey, in one worker, reads the origin's runs once (merged, each URL once),
   checks each loc as the writer does (skips reported there, once), notes the URLs for
   the next run (the state's URL notes, the same blocks as a whole pass makes), counts
   them, and keeps the first loc of every window: a window is ``SITEMAPGEN_MAX_URLS``
   URLs whose locs pass those checks, so window ``k`` starts at the URL numbered
   ``k * SITEMAPGEN_MAX_URLS`` whatever the worker count. It also keeps where each block
   of each run starts (:mod:`..build.windows`).
2. The windows, in the workers, each reading its own key range of the runs (the parent
   sends locs, not rows), write their urlsets under names of their own: one file, or
   more where the byte limit cuts the window.
3. The parent names the files in window order (``sitemap-1`` ...), writes the index,
   robots.txt and the manifest, as :func:`.staging.stage_origin` does.

The rule that decides the bytes: a window always starts a new file. Where the byte limit
cuts a window, its last file ends at the window's end, earlier than one pass would have
ended it; an entry larger than a file (a byte limit smaller than one entry) leaves its
window one URL short. Otherwise the files are those of one pass. A build in one process
splits the same origins the same way (the tasks run one after another), so 1, 2 or 3
workers write the same bytes.

An origin is split only when nothing else needs the whole origin in one pass (see
:func:`splits`): a feature that watches the entries, text sitemaps, sections, news, or
content notes from a previous run. Then it is staged whole, by one worker. Pure: no
Scrapy; the pool (:mod:`..build.pool`) runs the tasks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING

from ..build.pool import TASK_ROWS, Unfinished
from ..build.run_merge import merged_rows
from ..build.run_store import RunStore
from ..build.windows import BlockStarts, rows_between, surveyed_rows
from ..features.chrome_images import ChromeImages, ChromeImagesWatch, chrome_check
from ..sitemaps.codec import RunRow, run_entries
from ..sitemaps.facts import format_w3c
from ..sitemaps.naming import urlset_name
from ..sitemaps.urls import base_url_for
from ..sitemaps.writer import (
    ENTRY_TOO_LARGE,
    OriginOutput,
    WrittenFile,
    checked_loc,
    loc_problem,
    write_index,
    write_urlsets,
)
from ..state.url_notes import URL_BLOCK, UrlCounts
from .staging import Kept, NewFile, staged_set, with_rules, writer_options

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime
    from typing import Any

    from ..build.run_files import Run
    from ..features.origin_watch import OriginWatch
    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..sitemaps.urls import Origin
    from ..state.view import StateView
    from ..store.base import FactSource
    from .staging import OriginSet, SkipReporter

__all__ = ["Plan", "splits", "stage_or_plan", "write_windows"]

_RUN_IMAGES = RunRow._fields.index("images")

#: What a task of windows gives: each window's files, the pages each chrome image was
#: left out of, and the locs of the entries too large for a file.
_Windows = tuple[list[list[WrittenFile]], dict[str, int], list[str]]

#: The windows of one task at most: about a task's rows (see :data:`..build.pool.TASK_ROWS`)
#: and at least this many tasks, so that every worker has its share.
_LEAST_TASKS = 8


def splits(store: FactSource, origin: Origin, config: Config, state: StateView) -> bool:
    """Whether ``origin`` is written in windows: a run store's (an offline build's), of
    at least SITEMAPGEN_BUILD_SPLIT_URLS records and more than SITEMAPGEN_MAX_URLS, whose
    set nothing else needs to see whole: XML alone, no sections, no news, no feature that
    watches the entries but chrome images, whose count the survey makes (not the changes
    feed, nor IndexNow; hreflang clusters and the audit's verdicts are not asked for
    here), and no content notes of a previous run to follow (a crawl's, on the same
    state file)."""
    if not config.split_urls or not isinstance(store, RunStore):
        return False
    sized = store.sized(origin)
    if sized is None or sized[0] < config.split_urls or sized[0] <= config.max_urls:
        return False
    if config.formats != {"xml"} or config.sections or sized[1]:
        return False
    if config.changes_feed or config.indexnow_key:
        return False
    return next(state.previous_contents(config.state_key, origin.name), None) is None


def stage_or_plan(
    stage: Callable[..., OriginSet | None],
    store: FactSource,
    origin: Origin,
    config: Config,
    now: datetime,
    state: StateView,
    reporter: SkipReporter,
    staging: str,
) -> OriginSet | Plan | None:
    """``stage`` (:func:`.staging.stage_origin`) for an origin that is not split; for one
    that is (:func:`splits`), its survey: the plan of its windows, or None when no URL
    of it can be written."""
    if not splits(store, origin, config, state):
        return stage(store, origin, config, now, state, reporter, staging)
    assert isinstance(store, RunStore)
    runs = store.runs(origin)
    starts: list[BlockStarts] = [[] for _ in runs]
    notes = state.url_notes(config.state_key, origin.name)
    scope, window = origin.root, config.max_urls
    firsts: list[str] = []  # the first loc of each window but the first
    checked = count = 0
    block: list[str] = []
    # The chrome images' count, on this pass: the one a whole origin's staging makes of
    # its own (ChromeImages.decide), over every page, in the same order.
    sized = store.sized(origin)
    chrome = chrome_check(
        config.image_chrome_share, folded=False, most_pages=sized[0] if sized else None
    )
    images = chrome.counting() if chrome is not None else None
    for row in surveyed_rows(runs, starts):
        loc = row[0]  # RUN_LOC
        count += 1
        if images is not None:
            images.add(row[_RUN_IMAGES] or ())
        if not checked_loc(loc, scope):
            problem = loc_problem(loc, scope)
            assert problem is not None
            reporter.skip(problem, loc)
            continue
        # An entry a window then finds too large for a file stays noted: its count is
        # the notes' own (UrlCounts.previous), so the guard on shrinking stays right.
        block.append(loc)
        if len(block) >= URL_BLOCK:
            notes.note_all(block)
            block = []
        if checked and not checked % window:
            firsts.append(loc)
        checked += 1
    notes.note_all(block)
    counted = notes.finish()
    store.add_counts([origin], [count])
    if not checked:
        return None
    if chrome is not None:
        chrome.decide(lambda: run_entries(merged_rows(runs)), 0, images)
    previous = state.previous_files(config.state_key, origin.name)
    return Plan(
        origin,
        config,
        now,
        staging,
        runs,
        starts,
        firsts,
        previous,
        counted,
        chrome.images if chrome is not None else frozenset(),
    )


@dataclass
class Plan(Unfinished):
    """A surveyed origin's windows, to write in the workers (:meth:`tasks`), and its set
    made of what they wrote (:meth:`finish`, in the parent)."""

    origin: Origin
    config: Config
    now: datetime
    staging: str
    runs: list[Run]
    starts: list[BlockStarts]
    #: The first loc of each window but the first.
    firsts: list[str]
    #: name -> (sha256, lastmod) of what the previous run published.
    previous: dict[str, tuple[str, str]]
    #: The URLs added and removed since the previous run, and the previous run's count.
    notes: UrlCounts
    #: The chrome images, left out of every entry (SITEMAPGEN_IMAGE_CHROME_SHARE).
    chrome: frozenset[str]

    def tasks(self) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
        bounds: list[str | None] = [None, *self.firsts, None]  # window k: k to k + 1
        windows = len(bounds) - 1
        per = max(1, min(TASK_ROWS // self.config.max_urls, -(-windows // _LEAST_TASKS)))
        return [
            (
                write_windows,
                (
                    self.origin,
                    self.config,
                    self.staging,
                    self.runs,
                    self.starts,
                    self.chrome,
                    first,
                    bounds[first : min(first + per, windows) + 1],
                ),
            )
            for first in range(0, windows, per)
        ]

    def finish(self, results: list[_Windows], reporter: SkipReporter) -> OriginSet | None:
        config, folder = self.config, self.staging
        sitemaps: list[WrittenFile] = []
        removed: dict[str, int] = {}  # chrome image -> the pages it was left out of
        for windows, left_out, too_large in results:
            for image, pages in left_out.items():
                removed[image] = removed.get(image, 0) + pages
            for loc in too_large:
                reporter.skip(ENTRY_TOO_LARGE, loc)
            for window in windows:
                for written in window:
                    name = urlset_name(len(sitemaps) + 1, config.gzip)
                    os.replace(os.path.join(folder, written.name), os.path.join(folder, name))
                    sitemaps.append(
                        WrittenFile(name, written.entries, written.size, written.sha256)
                    )
        if not sitemaps:
            return None
        kept = Kept(self.previous, format_w3c(self.now))
        base_url = base_url_for(config.base_url, self.origin)
        output = OriginOutput(sitemaps=sitemaps)
        output.indexes = write_index(
            sitemaps,
            base_url=base_url,
            lastmod=lambda written: kept.lastmod(written.name, written.sha256),
            open_sink=lambda name: NewFile(os.path.join(folder, name)),
            options=writer_options(config),
        )
        watches: list[OriginWatch] = []
        if self.chrome:
            assert config.image_chrome_share is not None
            check = ChromeImages(config.image_chrome_share, folded=False)
            check.images, check.removed = self.chrome, removed
            watches.append(ChromeImagesWatch(check, folded=False))
        return staged_set(config, self.origin, output, kept, folder, base_url, self.notes, watches)


def _window_name(window: int, suffix: str, number: int) -> str:
    return f".window-{window}-{number}{suffix}"


def write_windows(
    origin: Origin,
    config: Config,
    staging: str,
    runs: list[Run],
    starts: list[BlockStarts],
    chrome: frozenset[str],
    first: int,
    bounds: list[str | None],
) -> _Windows:
    """In a worker: the windows from number ``first`` whose first locs are ``bounds``
    (the last: where the next window starts; None: the origin's first, or its end), each
    read from the runs by its key range and written into ``staging`` under names of its
    own (``.window-<k>-<n>``), renamed once all are written (:meth:`Plan.finish`), and
    the pages each ``chrome`` image was left out of, and the locs of the entries too
    large for a file (the other skips were reported by the survey)."""
    options = writer_options(config)
    strip: ChromeImages | None = None
    if chrome:
        assert config.image_chrome_share is not None
        strip = ChromeImages(config.image_chrome_share, folded=False)
        strip.images = chrome
    suffix = ".xml.gz" if config.gzip else ".xml"
    written: list[list[WrittenFile]] = []
    too_large: list[str] = []

    def skip(reason: str, loc: str) -> None:
        if reason == ENTRY_TOO_LARGE:
            too_large.append(loc)

    for number, (low, high) in enumerate(pairwise(bounds), first):
        entries: Iterable[UrlFacts] = run_entries(rows_between(runs, starts, low, high))
        if strip is not None:
            entries = strip.strip(entries, first=True)
        entries = with_rules(entries, config)
        written.append(
            write_urlsets(
                entries,
                scope=origin.root,
                name_for=partial(_window_name, number, suffix),
                open_sink=lambda name: NewFile(os.path.join(staging, name)),
                options=options,
                on_skip=skip,
            )
        )
    return written, strip.removed if strip is not None else {}, too_large
