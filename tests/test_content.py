"""The content rules across runs (docs/lastmod.rst): the ``observed`` source, lastmods that
follow the content, the duplicate choice, and the state's content notes. The expectations
are written by hand from the issue's rules."""

from __future__ import annotations

import itertools
import random
import sqlite3
from typing import TYPE_CHECKING

import pytest

from scrapy_sitemapgen.sitemaps.duplicates import duplicate_choice
from scrapy_sitemapgen.sitemaps.facts import Content, UrlFacts
from scrapy_sitemapgen.sitemaps.lastmod import (
    FINGERPRINT_VERSION,
    TEXT_ONLY,
    UNKNOWN_FINGERPRINT,
    Seen,
    settle,
)
from scrapy_sitemapgen.state.content_notes import (
    ContentNotes,
    decode_contents,
    encode_contents,
    previous_contents,
)
from scrapy_sitemapgen.state.notes import pack, unpack
from scrapy_sitemapgen.state.statefile import PublishState

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

A, B = "a" * 16, "b" * 16  # two fingerprints
RUN1, RUN2, RUN3 = (
    "2026-01-01T00:00:00+00:00",
    "2026-02-01T00:00:00+00:00",
    "2026-03-01T00:00:00+00:00",
)
STATED = "2020-05-05T00:00:00+00:00"
LATER = "2026-02-15T00:00:00+00:00"


def page(fingerprint: str | None, fetched: str, lastmod: str | None = None) -> UrlFacts:
    content = None if fingerprint is None else Content(fingerprint, fetched)
    return UrlFacts("https://example.com/p", lastmod, content=content)


# (case, facts, seen, observed named, follows content) -> (lastmod, what is remembered)
SETTLE = [
    ("first sight, nothing stated: observed gives nothing",
     page(A, RUN1), None, True, True, (None, Seen(A, None, None))),
    ("first sight, a stated date is published",
     page(A, RUN1, STATED), None, True, True, (STATED, Seen(A, None, STATED))),
    ("changed, nothing stated: the fetch time of this run",
     page(B, RUN2), Seen(A, None, None), True, True, (RUN2, Seen(B, RUN2, RUN2))),
    ("changed, observed not named: no lastmod",
     page(B, RUN2), Seen(A, None, None), False, True, (None, Seen(B, RUN2, None))),
    ("changed, a stated date wins over observed",
     page(B, RUN2, LATER), Seen(A, None, STATED), True, True, (LATER, Seen(B, RUN2, LATER))),
    ("unchanged after an observed change: it stays",
     page(B, RUN3), Seen(B, RUN2, RUN2), True, True, (RUN2, Seen(B, RUN2, RUN2))),
    ("unchanged, follows content off: observed still stays",
     page(B, RUN3), Seen(B, RUN2, RUN2), True, False, (RUN2, Seen(B, RUN2, RUN2))),
    ("unchanged, the header moved (a rebuilt site): the published date is kept",
     page(A, RUN2, LATER), Seen(A, None, STATED), True, True, (STATED, Seen(A, None, STATED))),
    ("unchanged, the header moved, follows content off: the header's date",
     page(A, RUN2, LATER), Seen(A, None, STATED), True, False, (LATER, Seen(A, None, LATER))),
    ("unchanged, nothing was published before: the stated date now",
     page(A, RUN2, LATER), Seen(A, None, None), True, True, (LATER, Seen(A, None, LATER))),
    ("unchanged, an earlier date stated now: the published one is kept",
     page(A, RUN2, "2001-01-01"), Seen(A, None, STATED), True, True,
     (STATED, Seen(A, None, STATED))),
    ("no fingerprint now (no text, a feed record): the stated date, the note kept",
     page(None, RUN2, LATER), Seen(A, RUN1, STATED), True, True,
     (LATER, Seen(A, RUN1, STATED))),
    ("no fingerprint, never seen: nothing remembered",
     page(None, RUN2), None, True, True, (None, None)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "facts", "seen", "observed", "follows", "expected"), SETTLE, ids=[c[0] for c in SETTLE]
)
def test_settle(
    case: str,
    facts: UrlFacts,
    seen: Seen | None,
    observed: bool,
    follows: bool,
    expected: tuple[str | None, Seen | None],
) -> None:
    assert settle(facts, seen, observed=observed, follows_content=follows) == expected


def _dup(loc: str, fingerprint: str | None, canonical: bool = False) -> UrlFacts:
    content = None if fingerprint is None else Content(fingerprint, RUN1, canonical)
    return UrlFacts(f"https://example.com{loc}", content=content)


@pytest.mark.parametrize(
    ("pages", "listed"),
    [
        # the shortest URL: / over /index.html
        ([("/", A), ("/index.html", A)], {A: "/"}),
        # a page that names itself canonical wins over a shorter one
        ([("/", A), ("/index.html", A, True)], {A: "/index.html"}),
        # same length: the first in code-point order ("B" < "a")
        ([("/a", A), ("/B", A), ("/c", A)], {A: "/B"}),
        # two canonicals: the shorter of them
        ([("/x", A), ("/long", A, True), ("/ab", A, True)], {A: "/ab"}),
        # one word apart: two contents, both listed
        ([("/paris-lyon", A), ("/paris-nice", B)], {A: "/paris-lyon", B: "/paris-nice"}),
        # no fingerprint: never anybody's duplicate
        ([("/a", None), ("/b", None)], {}),
    ],
)
def test_duplicate_choice(pages: list[tuple], listed: dict[str, str]) -> None:
    entries = [_dup(*p) for p in pages]
    want = {fp: f"https://example.com{loc}" for fp, loc in listed.items()}
    # Whatever the order the pages come in (crawl order, workers): the same choice.
    for order in itertools.permutations(entries):
        assert duplicate_choice(order) == want


# (pages, the URLs canonical links of left-out pages name, in loc order) -> listed
NAMED = [
    ("a named URL wins over shorter ones",
     [("/a", A), ("/bb", A), ("/longest-of-them", A)], ["/longest-of-them"],
     {A: "/longest-of-them"}),
    ("two named: the shorter of them",
     [("/a", A), ("/bb", A), ("/longest", A)], ["/bb", "/longest"], {A: "/bb"}),
    ("named by another page or by itself: both named, the shorter wins",
     [("/a", A), ("/names-itself", A, True), ("/named", A)], ["/named"], {A: "/named"}),
    ("named by another page or by itself, same length: code-point order",
     [("/a", A), ("/x2", A, True), ("/x1", A)], ["/x1"], {A: "/x1"}),
    ("none named: the shortest, as before",
     [("/a", A), ("/bb", A)], [], {A: "/a"}),
    ("names of URLs that are no entry change nothing",
     [("/a", A), ("/bb", A)], ["/0", "/b", "/b0", "/zz"], {A: "/a"}),
    ("a name helps only its own content",
     [("/a", A), ("/bb", A), ("/c", B), ("/dd", B)], ["/dd"], {A: "/a", B: "/dd"}),
    ("a named page without text is nobody's duplicate",
     [("/a", A), ("/bb", None), ("/cc", A)], ["/bb"], {A: "/a"}),
    ("a URL named twice is named once",
     [("/a", A), ("/bb", A)], ["/bb", "/bb"], {A: "/bb"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "pages", "named", "listed"), NAMED, ids=[c[0] for c in NAMED])
def test_duplicate_choice_named(
    case: str, pages: list[tuple], named: list[str], listed: dict[str, str]
) -> None:
    """A URL that a page's rel=canonical names wins (docs/lastmod.rst, "One URL per page
    of content"); the entries and the names come in loc order, as a store gives them."""
    entries = sorted((_dup(*p) for p in pages), key=lambda f: f.loc)
    locs = [f"https://example.com{loc}" for loc in named]
    want = {fp: f"https://example.com{loc}" for fp, loc in listed.items()}
    assert duplicate_choice(entries, locs) == want
    assert duplicate_choice(iter(entries), iter(locs)) == want  # read once, side by side


def test_named_choice_is_independent_of_crawl_order(tmp_path: Path) -> None:
    """Pages and the canonical links naming them, recorded in every order into a real
    store: the choice read back from it is always the same."""
    from scrapy_sitemapgen.sitemaps.urls import origin_of
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    u = "https://example.com"
    writes: list[tuple[str, str]] = [
        ("page", "/a"),
        ("page", "/bb"),
        ("page", "/longest-of-them"),
        ("name", "/longest-of-them"),
        ("name", "/bb-not-crawled"),
    ]
    for number, order in enumerate(itertools.permutations(writes)):
        store = SqliteFactStore(tmp_path / f"{number}.sqlite3")
        for kind, path in order:
            if kind == "page":
                store.record(_dup(path, A))
            else:
                store.record_canonical(u + path)
        origin = origin_of(u + "/")
        got = duplicate_choice(store.entries(origin), store.canonical_targets(origin))
        assert got == {A: u + "/longest-of-them"}, order
        store.close()


def test_named_choice_at_scale() -> None:
    """A few hundred pages in pairs and triples, every seventh URL named: the merge of the
    two loc-ordered streams chooses what a set of the names would."""
    entries = sorted(
        (_dup(f"/{'x' * (i % 5)}{i}", f"{i // 3:016x}", canonical=i % 11 == 0) for i in range(300)),
        key=lambda f: f.loc,
    )
    named = sorted(f.loc for i, f in enumerate(entries) if i % 7 == 0)
    names = set(named)
    want: dict[str, tuple[bool, int, str]] = {}
    for facts in entries:
        assert facts.content is not None
        preferred = facts.loc in names or facts.content.canonical
        key = (not preferred, len(facts.loc), facts.loc)
        fp = facts.content.fingerprint
        want[fp] = min(want.get(fp, key), key)
    assert duplicate_choice(entries, named) == {fp: key[2] for fp, key in want.items()}


def test_notes_merge_with_the_previous_run() -> None:
    """One pass over both, in loc order: URLs gone, URLs new and URLs kept. ``on_settled``
    hears of each lastmod the notes changed, a kept and an observed one (issue 41: the
    audit's verdicts then hold the lastmod published), not of one they left as it came."""
    u = "https://example.com/"
    previous = iter(
        [
            (u + "a", Seen(A, None, STATED)),
            (u + "b", Seen(A, None, None)),
            (u + "d", Seen(B, RUN1, RUN1)),
        ]
    )
    saved: list[list[tuple[str, Seen]]] = []
    told: list[tuple[str, str | None]] = []
    notes = ContentNotes(
        previous,
        _blocks_into(saved),
        observed=True,
        follows_content=True,
        block=2,
        on_settled=lambda loc, lastmod: told.append((loc, lastmod)),
    )
    entries = [
        UrlFacts(u + "a", LATER, content=Content(A, RUN2)),  # unchanged: STATED kept
        UrlFacts(u + "c", None, content=Content(A, RUN2)),  # new: nothing
        UrlFacts(u + "d", None, content=Content(A, RUN2)),  # changed: RUN2
    ]
    got = [(f.loc, f.lastmod) for f in notes.follow(entries)]
    notes.finish()
    assert got == [(u + "a", STATED), (u + "c", None), (u + "d", RUN2)]
    assert told == [(u + "a", STATED), (u + "d", RUN2)]
    assert saved == [
        [(u + "a", Seen(A, None, STATED)), (u + "c", Seen(A, None, None))],
        [(u + "d", Seen(A, RUN2, RUN2))],
    ]


def _blocks_into(saved: list[list[tuple[str, Seen]]]) -> Callable[[int, bytes], None]:
    """A ``save`` that keeps each block decoded, and checks they come in order."""

    def save(seq: int, data: bytes) -> None:
        assert seq == len(saved)
        saved.append(decode_contents(data))

    return save


def test_content_blocks_round_trip() -> None:
    notes = [
        ("https://example.com/é?q=1", Seen(A, None, None)),
        ("https://example.com/z", Seen(B, RUN1, "2024-01-01")),
    ]
    assert decode_contents(encode_contents(notes)) == notes
    with pytest.raises(ValueError, match="tab"):
        encode_contents([("https://example.com/\tx", Seen(A, None, None))])


def _old_state(path: Path) -> None:
    """A state file as 0.1.0 left it: published files, URL blocks, no content table."""
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE files (output TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,"
        " sha256 TEXT NOT NULL, lastmod TEXT NOT NULL, PRIMARY KEY (output, origin, name))"
        " WITHOUT ROWID"
    )
    db.execute("INSERT INTO files VALUES ('out', 'o', 'sitemap.xml', 'x', ?)", (RUN1,))
    db.commit()
    db.close()


def test_state_of_the_previous_version_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _old_state(path)
    state = PublishState(path)
    assert state.migrated is True
    previous, save = state.content_notes("out", "o")
    assert list(previous) == []  # every page is seen for the first time
    save(0, encode_contents([("https://example.com/a", Seen(A, None, STATED))]))
    state.commit("out", "o", [])
    state.close()
    again = PublishState(path)
    assert again.migrated is False  # said once: the next run finds the notes
    assert list(again.content_notes("out", "o")[0]) == [
        ("https://example.com/a", Seen(A, None, STATED))
    ]
    again.close()
    # A read-only look (a staging worker's) at an old file finds no notes, and no error.
    _old_state(tmp_path / "old.sqlite3")
    db = sqlite3.connect(tmp_path / "old.sqlite3")
    assert list(previous_contents(db, "out", "o")) == []
    db.close()


def test_new_state_file_is_no_migration(tmp_path: Path) -> None:
    state = PublishState(tmp_path / "new.sqlite3")
    assert state.migrated is False
    state.close()


def test_choice_is_independent_of_order_at_scale() -> None:
    """A few hundred pages in pairs and triples, shuffled: always the same choice."""
    rng = random.Random(21)
    entries = [
        _dup(f"/{'x' * (i % 7)}{i}", f"{i // 3:016x}", canonical=i % 11 == 0) for i in range(300)
    ]
    want = duplicate_choice(sorted(entries, key=lambda f: f.loc))
    for _ in range(5):
        rng.shuffle(entries)
        assert duplicate_choice(entries) == want


def test_content_goes_through_the_stored_row() -> None:
    """The content is a page fact: kept in the page's column, the latest page record's
    wins, and an item record of the URL leaves it as it was."""
    from scrapy_sitemapgen.sitemaps.codec import entry, fact_row
    from scrapy_sitemapgen.sitemaps.merge import merge

    loc = "https://example.com/p"
    first = UrlFacts(loc, content=Content(A, RUN1, True))
    second = UrlFacts(loc, images=("https://example.com/i.png",), content=Content(B, RUN2))
    item = UrlFacts(loc, "2024-01-01")
    row = merge(merge(fact_row(first, False), fact_row(second, False)), fact_row(item, True))
    assert entry(loc, row).content == Content(B, RUN2, False)
    assert entry(loc, fact_row(first, False)).content == Content(A, RUN1, True)
    assert entry(loc, fact_row(item, True)).content is None


def _followed_by_settle(
    previous: list[tuple[str, Seen]], entries: list[UrlFacts], *, saving: bool
) -> tuple[list[tuple[str, str | None]], list[tuple[str, Seen]]]:
    """The rule applied one entry at a time by :func:`settle` itself, with the previous
    notes looked up by loc: what ``follow``'s shortcut for entries without content (a
    feed's every record) must give."""
    seen_of = dict(previous)
    got, saved = [], []
    for facts in entries:
        lastmod, note = settle(facts, seen_of.get(facts.loc), observed=True, follows_content=True)
        got.append((facts.loc, lastmod))
        if note is not None and saving:
            saved.append((facts.loc, note))
    return got, saved


_U = "https://example.com/"


@pytest.mark.parametrize("saving", [True, False], ids=["saved", "second-pass"])
@pytest.mark.parametrize(
    ("previous", "entries"),
    [
        ([], [UrlFacts(_U + "a", STATED), UrlFacts(_U + "b")]),  # a feed's first build
        (  # a feed's next build: the notes of its pages are kept as they were
            [(_U + "a", Seen(A, RUN1, STATED)), (_U + "c", Seen(B, None, None))],
            [UrlFacts(_U + "a", LATER), UrlFacts(_U + "b"), UrlFacts(_U + "c", STATED)],
        ),
        (  # without content and with content mixed, a previous note past the last entry
            [(_U + "b", Seen(A, None, STATED)), (_U + "z", Seen(B, RUN1, RUN1))],
            [
                UrlFacts(_U + "a", STATED),
                UrlFacts(_U + "b", None, content=Content(A, RUN2)),
                UrlFacts(_U + "c", LATER),
                UrlFacts(_U + "d", None, content=Content(B, RUN2)),
            ],
        ),
        (  # notes only before the entries: all passed over
            [(_U + "0", Seen(A, None, None))],
            [UrlFacts(_U + "a"), UrlFacts(_U + "b", LATER)],
        ),
    ],
    ids=["first-build", "next-build", "mixed", "notes-before"],
)
def test_follow_without_content_is_settle(
    previous: list[tuple[str, Seen]], entries: list[UrlFacts], saving: bool
) -> None:
    """``follow`` skips :func:`settle` for an entry without content (issue 20): the
    lastmods and the notes kept are those settle gives, entry by entry."""
    saved: list[list[tuple[str, Seen]]] = []
    notes = ContentNotes(
        iter(previous),
        _blocks_into(saved) if saving else None,
        observed=True,
        follows_content=True,
        block=2,
    )
    got = [(f.loc, f.lastmod) for f in notes.follow(entries)]
    notes.finish()
    expected, expected_saved = _followed_by_settle(previous, entries, saving=saving)
    assert got == expected
    assert [note for block in saved for note in block] == expected_saved
    assert all(len(block) <= 2 for block in saved)


# --- the fingerprint's version (issue 40: what counts as a change) ----------------------

T = "c" * 16  # the text's fingerprint of a page whose change fingerprint is A or B


def test_a_block_of_the_text_only_fingerprint() -> None:
    """A block without the version line was written by the text-only fingerprint: its
    fingerprints read as text-only notes; a rebuilt note stays unknown."""
    old = pack(f"https://example.com/a\t{T}\t{RUN1}\t{RUN1}\nhttps://example.com/b\t?\t\t")
    assert decode_contents(old) == [
        ("https://example.com/a", Seen(TEXT_ONLY + T, RUN1, RUN1)),
        ("https://example.com/b", Seen(UNKNOWN_FINGERPRINT, None, None)),
    ]
    # this version's blocks say so on their first line, which no loc can be
    assert unpack(encode_contents([("https://example.com/a", Seen(A, None, None))])) == (
        f"\t{FINGERPRINT_VERSION}\t\t\nhttps://example.com/a\t{A}\t\t"
    )
    # a version not known (a later one): nothing to compare with, the note is unknown
    later = pack(f"\t{FINGERPRINT_VERSION + 1}\t\t\nhttps://example.com/a\t{A}\t{RUN1}\t{RUN1}")
    assert decode_contents(later) == [("https://example.com/a", Seen("?", RUN1, RUN1))]


def _changed(fingerprint: str, text: str, fetched: str, lastmod: str | None = None) -> UrlFacts:
    content = Content(fingerprint, fetched, text=None if text == fingerprint else text)
    return UrlFacts("https://example.com/p", lastmod, content=content)


# (case, facts, seen, follows content) -> (lastmod, what is remembered)
SETTLE_TEXT_ONLY = [
    ("the text unchanged: the lastmod stays, the new fingerprint is noted",
     _changed(A, T, RUN3), Seen(TEXT_ONLY + T, RUN2, RUN2), True, (RUN2, Seen(A, RUN2, RUN2))),
    ("the text unchanged, follows content off: observed stays",
     _changed(A, T, RUN3), Seen(TEXT_ONLY + T, RUN2, RUN2), False, (RUN2, Seen(A, RUN2, RUN2))),
    ("the text unchanged, never observed: still nothing",
     _changed(A, T, RUN3), Seen(TEXT_ONLY + T, None, None), True, (None, Seen(A, None, None))),
    ("the text unchanged, a page of text alone",
     _changed(T, T, RUN3), Seen(TEXT_ONLY + T, RUN2, RUN2), True, (RUN2, Seen(T, RUN2, RUN2))),
    ("the text changed: this run's fetch time",
     _changed(A, B, RUN3), Seen(TEXT_ONLY + T, RUN2, RUN2), True, (RUN3, Seen(A, RUN3, RUN3))),
    ("a note's fingerprint equal to the mark's tail is no text-only note",
     _changed(A, T, RUN3), Seen(T, RUN2, RUN2), True, (RUN3, Seen(A, RUN3, RUN3))),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "facts", "seen", "follows", "expected"),
    SETTLE_TEXT_ONLY,
    ids=[c[0] for c in SETTLE_TEXT_ONLY],
)
def test_settle_against_a_text_only_note(
    case: str, facts: UrlFacts, seen: Seen, follows: bool, expected: tuple[str | None, Seen]
) -> None:
    assert settle(facts, seen, observed=True, follows_content=follows) == expected


def test_two_fingerprints_go_through_the_stored_row() -> None:
    """The text's fingerprint, when it differs, is kept beside the change's; a row of the
    text-only version (three fields) reads with its one fingerprint as both."""
    from scrapy_sitemapgen.sitemaps.codec import entry, fact_row

    loc = "https://example.com/p"
    both = Content(A, RUN1, True, T)
    assert entry(loc, fact_row(UrlFacts(loc, content=both), False)).content == both
    assert both.duplicate_key == T
    old_row = (None, None, None, None, f'{{"c":["{T}","{RUN1}",0]}}', None, None)
    old = entry(loc, old_row).content
    assert old == Content(T, RUN1) and old.duplicate_key == T


def test_duplicates_by_the_text() -> None:
    """Two URLs whose changes differ (each names itself) but whose text is the same are
    duplicates: the shorter is listed."""
    u = "https://example.com/"
    entries = [
        UrlFacts(u + "p?ref=x", content=Content(A, RUN1, True, T)),
        UrlFacts(u + "p", content=Content(B, RUN1, True, T)),
    ]
    assert duplicate_choice(entries) == {T: u + "p"}


def test_the_state_notes_its_fingerprint_version(tmp_path: Path) -> None:
    """A state file with content notes and no version noted was written by the text-only
    fingerprint (the publish warns once); a commit notes this version."""
    path = tmp_path / "state.sqlite3"
    state = PublishState(path)
    assert not state.fingerprint_upgraded  # a new file
    state.content_notes("out", "o")[1](0, encode_contents([(_U + "a", Seen(A, None, None))]))
    state.commit("out", "o", [])
    state.close()
    state = PublishState(path)
    assert not state.fingerprint_upgraded
    state.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta").fetchall() == [(str(FINGERPRINT_VERSION),)]
    db.execute("DROP TABLE meta")
    db.commit()
    db.close()
    state = PublishState(path)
    assert state.fingerprint_upgraded
    state.close()
