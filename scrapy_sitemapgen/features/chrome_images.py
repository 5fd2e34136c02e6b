"""Chrome images (SITEMAPGEN_IMAGE_CHROME_SHARE): an image on more than a share of an
origin's listed pages, a logo or an icon, belongs to the site, not to any page, and is left
out of every page's ``<image:image>``s (G7). Image sitemaps are for the images a page is
about.

Pure. Decided once per origin at publish, before the first entry is written, so that every
writing pass (urlsets, sections) leaves out the same images; the decision depends only on
the set of listed pages and their images, never on the crawl's order. Memory is bounded:
a million-page origin may have a million distinct images, and none of them is counted in a
dict of every image (:class:`ImageCounts`). The rules are in
docs/media-and-alternates.rst (``chrome-images``).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import TYPE_CHECKING

from .origin_watch import ExtraFile, OriginWatch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from ..publish.staging import OriginSet
    from ..sitemaps.facts import UrlFacts
    from .origin_watch import OriginStart

__all__ = [
    "CHROME_SHOWN",
    "MIN_PAGES",
    "ChromeImages",
    "ChromeImagesWatch",
    "ImageCounts",
    "chrome_check",
    "chrome_images",
    "exact_counts",
]

#: An origin of fewer listed pages keeps every image: on a handful of pages, an image
#: shared by most of them says nothing about the site.
MIN_PAGES = 20
#: How many chrome images of an origin the close log names (the most-used first).
CHROME_SHOWN = 5
#: Counters an :class:`ImageCounts` may hold before it starts to forget: below this many
#: distinct images (most sites) every count is exact.
TABLE_FLOOR = 1024


def pages_allowed(share: Fraction, pages: int) -> int:
    """The most of ``pages`` an image may be on and be kept: ``floor(share * pages)``,
    in exact arithmetic (``0.57 * 100`` in floats is 56.99...)."""
    return share.numerator * pages // share.denominator


class ImageCounts:
    """The images that may be on more than ``share`` of the pages counted, in bounded
    memory: the frequent-items summary of Misra and Gries ("Finding repeated elements",
    1982), over each page's image set (an image counts once per page).

    When a new image meets a full table, every counter is decremented by one and the new
    image dropped (a "decrement"); an image's count then undercounts it by at most the
    decrements made, ``D``. Here the table has no fixed size: a decrement is made only
    while ``D`` stays within ``budget`` of the pages counted so far (else the image gets
    a counter), so at the end ``D <= floor(budget * pages)``. With ``budget`` the share
    of the listed pages, an image without a counter is on at most that many pages and is
    kept: every chrome image has a counter. The table holds about (new images per page) /
    ``budget`` counters, and never fewer than ``floor`` before it forgets anything.

    Each counter also keeps ``D`` as it was when the image got it: since then, every
    decrement took one off it, so its occurrences since are exactly ``count + D - entered``,
    and before at most ``entered``. An image counted from before the first decrement (a
    logo on the first page) is counted exactly."""

    __slots__ = ("_budget", "_floor", "counts", "decrements", "entered", "pages", "with_content")

    def __init__(self, budget: Fraction, floor: int = TABLE_FLOOR) -> None:
        self._budget = budget
        self._floor = floor
        self.counts: dict[str, int] = {}
        #: Image -> the decrements made when it got its counter.
        self.entered: dict[str, int] = {}
        self.decrements = 0
        self.pages = 0
        #: Pages counted that carry a content fingerprint (duplicates by content among them).
        self.with_content = 0

    def add(self, images: Iterable[str]) -> None:
        """One page's images (distinct, as ``UrlFacts.images`` are)."""
        self.pages += 1
        if not images:
            return
        counts = self.counts
        entered = self.entered
        # Decrements the pages counted so far allow: worked out once a page, not per image.
        room = pages_allowed(self._budget, self.pages) - self.decrements
        for image in images:
            count = counts.get(image)
            if count is not None:
                counts[image] = count + 1
            elif room > 0 and len(counts) >= self._floor:
                room -= 1
                counts, entered = self._decrement()
            else:
                counts[image] = 1
                entered[image] = self.decrements

    def _decrement(self) -> tuple[dict[str, int], dict[str, int]]:
        """Every counter one down, those at zero gone: the new table and entries."""
        self.decrements += 1
        counts = {image: count - 1 for image, count in self.counts.items() if count > 1}
        entered = self.entered
        self.entered = entered = {image: entered[image] for image in counts}
        self.counts = counts
        return counts, entered

    def bounds(self) -> Iterator[tuple[str, int, int]]:
        """Each counted image with the least and the most pages it can be on."""
        decrements = self.decrements
        entered = self.entered
        for image, count in self.counts.items():
            yield image, count + decrements - entered[image], count + decrements


def exact_counts(entries: Iterable[UrlFacts], images: Iterable[str]) -> dict[str, int]:
    """How many of ``entries`` carry each of ``images`` (a few candidates): the second,
    exact pass of a frequent-items count."""
    counts = dict.fromkeys(images, 0)
    wanted = counts.keys()
    for facts in entries:
        if facts.images and not wanted.isdisjoint(facts.images):
            for image in facts.images:
                if image in counts:
                    counts[image] += 1
    return counts


def chrome_check(
    share: float | None, *, folded: bool, most_pages: int | None
) -> ChromeImages | None:
    """The check of one origin, or None when no image of it can be chrome: the share is
    None, or the origin is known to have fewer than MIN_PAGES entries (no pass made)."""
    if share is None or (most_pages is not None and most_pages < MIN_PAGES):
        return None
    return ChromeImages(share, folded=folded)


class ChromeImages:
    """One origin's chrome images: counted, decided (:meth:`decide`), then left out of
    each entry of every writing pass (:meth:`strip`), counted on the first.

    ``folded``: the counting rides on a pass the staging makes anyway (the one that finds
    duplicates by content, :meth:`counted`), over every page, duplicates too; its
    decrements then stay within half the share, so that its candidates still hold every
    chrome image of the listed pages while duplicates are at most half the pages. Else
    :meth:`decide` makes a pass of its own over the listed pages."""

    __slots__ = ("_counts", "_floor", "_share", "images", "listed", "removed")

    def __init__(self, share: float, *, folded: bool, floor: int = TABLE_FLOOR) -> None:
        # The share as the user wrote it (0.57 is 57/100, not the float nearest to it).
        self._share = Fraction(repr(share))
        self._floor = floor
        self._counts = ImageCounts(self._share / 2, floor) if folded else None
        #: The images left out of every entry.
        self.images: frozenset[str] = frozenset()
        #: The origin's listed pages, once decided (0: not counted, too few or none).
        self.listed = 0
        #: Image -> the pages it was left out of, on the first writing pass.
        self.removed: dict[str, int] = {}

    def counted(self, entries: Iterable[UrlFacts]) -> Iterator[UrlFacts]:
        """``entries`` as they are, their images counted on the way (a folded count)."""
        counts = self._counts
        assert counts is not None
        add = counts.add
        for facts in entries:
            add(facts.images)
            if facts.content is not None:
                counts.with_content += 1
            yield facts

    def counting(self) -> ImageCounts:
        """A count of the listed pages' images for :meth:`decide`, made on a pass of the
        caller's (a large origin's survey: :mod:`..publish.split`), a page at a time."""
        return ImageCounts(self._share, self._floor)

    def decide(
        self,
        listed: Callable[[], Iterable[UrlFacts]],
        contents: int = 0,
        counted: ImageCounts | None = None,
    ) -> None:
        """Which images are chrome. ``listed`` makes a pass over the listed entries (made
        only when the folded count cannot decide, or there is none); ``contents``: how
        many pages the duplicate pass listed of those that carry a content fingerprint
        (one per fingerprint), so ``with_content - contents`` were left out. ``counted``:
        the listed pages counted already (:meth:`counting`), the pass that count is."""
        counts = self._counts if counted is None else None
        left_out = 0
        if counts is not None:
            left_out = max(counts.with_content - contents, 0)
            pages = counts.pages - left_out
            if pages < MIN_PAGES:
                return
            if counts.decrements > pages_allowed(self._share, pages):
                counts = None  # more duplicates than the folded budget allowed for
            elif not counts.counts:
                return  # no image on more pages than the decrements: none is chrome
        if counts is None:
            counts = counted
            if counts is None:
                counts = ImageCounts(self._share, self._floor)
                for facts in listed():
                    counts.add(facts.images)
            left_out = 0
            pages = counts.pages
            if pages < MIN_PAGES:
                return
        allowed = pages_allowed(self._share, pages)
        chrome: set[str] = set()
        unsure: list[str] = []
        for image, least, most in counts.bounds():
            if most <= allowed:
                continue
            # A page left out as a duplicate may have carried one of the image's
            # occurrences: the least it is on among the listed ones.
            if least - left_out > allowed:
                chrome.add(image)
            else:
                unsure.append(image)
        if unsure:
            exact = exact_counts(listed(), unsure)
            chrome.update(image for image, count in exact.items() if count > allowed)
        self.listed = pages
        self.images = frozenset(chrome)

    def strip(self, entries: Iterable[UrlFacts], *, first: bool) -> Iterator[UrlFacts]:
        """``entries`` without the chrome images; ``first``: the pass whose removals count."""
        chrome = self.images
        removed = self.removed if first else None
        for facts in entries:
            images = facts.images
            if images and not chrome.isdisjoint(images):
                kept = []
                for image in images:
                    if image not in chrome:
                        kept.append(image)
                    elif removed is not None:
                        removed[image] = removed.get(image, 0) + 1
                facts = dataclasses.replace(facts, images=tuple(kept))
            yield facts

    @property
    def removals(self) -> int:
        """``<image:image>`` entries left out: one per image per page it was on."""
        return sum(self.removed.values())

    def first(self, count: int = CHROME_SHOWN) -> list[tuple[str, int]]:
        """The ``count`` most-used chrome images and the pages each was left out of."""
        ranked = sorted(self.removed.items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:count]


def chrome_images(start: OriginStart) -> ChromeImagesWatch | None:
    """The watch of an origin when SITEMAPGEN_IMAGE_CHROME_SHARE is set and the origin may
    have chrome images; images are written in the XML urlsets only."""
    config = start.config
    if "xml" not in config.formats:
        return None
    check = chrome_check(
        config.image_chrome_share,
        folded=start.dedupe,
        most_pages=start.source.most_entries(start.origin),
    )
    return None if check is None else ChromeImagesWatch(check, folded=start.dedupe)


class ChromeImagesWatch(OriginWatch):
    """Counts the images on the duplicates' pass (when staging makes one), decides after
    it, leaves the chrome images out of every writing pass and adds the counts to the
    set."""

    def __init__(self, check: ChromeImages, *, folded: bool) -> None:
        self.check = check
        self._folded = folded

    def survey(self, entries: Iterable[UrlFacts]) -> Iterable[UrlFacts]:
        return self.check.counted(entries) if self._folded else entries

    def surveyed(self, listed: Callable[[], Iterable[UrlFacts]], contents: int) -> None:
        self.check.decide(listed, contents)

    def rewrite(self, entries: Iterable[UrlFacts], *, first: bool) -> Iterable[UrlFacts]:
        if not self.check.images:
            return entries
        return self.check.strip(entries, first=first)

    def finish(self, origin_set: OriginSet) -> list[ExtraFile]:
        check = self.check
        if check.images and check.removed:
            origin_set.chrome = check.removals
            origin_set.chrome_images = len(check.removed)
            origin_set.first_chrome = check.first()
        return []
