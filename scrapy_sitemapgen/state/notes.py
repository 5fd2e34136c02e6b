"""The one road of the state file's notes: an origin's notes from the previous run, read in
URL order, and this run's, written in URL order.

Each kind of note the state keeps per output and origin is a :class:`NoteKind`: its table
of blocks, the table this run's blocks wait in until the commit, and the encoding of a
block. The URL set (:mod:`.url_notes`), the pages' content (:mod:`.content_notes`) and
IndexNow's entry fingerprints (:mod:`..features.entry_prints`, its kind in
:mod:`.indexnow_changes`) are its three users, each a subclass of :class:`Notes` that
says what it computes from the join.

Notes are kept as blocks of lines, not a row per URL: a million URLs are a few hundred
small rows, written and read at once, where a row per URL cost more than writing the
sitemaps themselves. Every store gives an origin's entries in loc order, and the blocks
hold the notes in the same order, so this run's entries meet the previous run's notes in
one merge pass with one block of each in memory (:meth:`Notes._match`).

A block is deflated in zlib's format (:func:`pack`). ``zlib.compress`` sets up a
compressor sized for any input (a 32 KiB window and a hash of 64 Ki entries, about 256 KiB
made and cleared) whatever the block's size, and a broad crawl has one small block of each
kind per origin: that set-up cost more than noting the origin's URLs. A block is packed
with a window and a hash sized to it instead: the same format, and any window up to
zlib's largest is read by the same ``decompress``. With the ``fast`` extra, zlib-ng packs
them at its level 2, as small as zlib's level 1 in less time, in the same format, which
the standard ``zlib`` reads back.

Pure.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from ..sitemaps.limits import DEFAULT_GZIP_BACKEND

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "BLOCK",
    "PACKERS",
    "Legacy",
    "NoteKind",
    "Notes",
    "Save",
    "StoredOrigins",
    "chunks",
    "has_notes",
    "has_table",
    "pack",
    "previous_notes",
    "unpack",
]

#: What a note holds of its URL besides the loc (None for a URL set).
V = TypeVar("V")
#: What a block is a list of, as this run writes it.
W = TypeVar("W")

#: Notes per stored block: large enough to compress well (sorted URLs share prefixes),
#: small enough that reading the previous run's notes holds one block at a time.
BLOCK = 2000

#: Where this run's blocks go: ``save(seq, data)``, ``seq`` from 0 in loc order.
Save = Callable[[int, bytes], None]

# zlib's MIN_LOOKAHEAD: a window holds this much less than its size of past input.
_LOOKAHEAD = 262
_MAX_WBITS = 15
_MIN_WBITS = 9


def _zlib_pack(data: bytes) -> bytes:
    wbits = max(_MIN_WBITS, min(_MAX_WBITS, (len(data) + _LOOKAHEAD).bit_length()))
    if wbits == _MAX_WBITS:  # a full block: zlib's own set-up is the one sized for it
        return zlib.compress(data, 1)
    packer = zlib.compressobj(1, zlib.DEFLATED, wbits, 4)  # memLevel 4: a 2 Ki-entry hash
    return packer.compress(data) + packer.flush()


#: How a block's bytes are deflated, by the backend names of :mod:`..sitemaps.limits`:
#: zlib at level 1 with a compressor sized to the block, or zlib-ng at its level 2.
PACKERS: dict[str, Callable[[bytes], bytes]] = {"zlib": _zlib_pack}
if DEFAULT_GZIP_BACKEND == "zlib-ng":  # the extra ``fast`` is installed
    from zlib_ng import zlib_ng

    def _zlib_ng_pack(data: bytes) -> bytes:
        packed: bytes = zlib_ng.compress(data, 2)
        return packed

    PACKERS["zlib-ng"] = _zlib_ng_pack

_pack = PACKERS[DEFAULT_GZIP_BACKEND]


def pack(text: str) -> bytes:
    """``text`` (UTF-8) deflated, in zlib's format: by zlib-ng where it is installed."""
    return _pack(text.encode())


def unpack(data: bytes) -> str:
    """What :func:`pack` packed (or ``zlib.compress`` did: older state files)."""
    return zlib.decompress(data).decode()


@dataclass(frozen=True, slots=True)
class Legacy(Generic[V]):
    """Where a state file from before the blocks keeps a kind's notes: ``read(db, output,
    origin)`` gives them, in loc order, when ``table`` exists and the origin has no block."""

    table: str
    read: Callable[[sqlite3.Connection, str, str], Iterator[tuple[str, V]]]


@dataclass(frozen=True, slots=True)
class NoteKind(Generic[V, W]):
    """One kind of note the state file keeps per output and origin, as blocks in loc
    order: ``table`` (output, origin, seq, data) across runs; ``current`` (origin, seq,
    data) this run's, until the commit (a temporary table of the state's connection, and
    a table of a staging worker's side file); ``encode`` a block of what the run writes,
    ``decode`` one back into ``(loc, value)`` notes."""

    table: str
    current: str
    encode: Callable[[list[W]], bytes]
    decode: Callable[[bytes], Iterable[tuple[str, V]]]
    #: Whether an origin committed without notes of this kind keeps the ones it had
    #: (IndexNow's, on a run with IndexNow off) rather than losing them.
    kept_unless_noted: bool = False
    legacy: Legacy[V] | None = None

    @property
    def schema(self) -> str:
        """The statement that creates :attr:`table`, as every version wrote it."""
        return f"""CREATE TABLE IF NOT EXISTS {self.table} (
        output TEXT NOT NULL, origin TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (output, origin, seq))"""

    def current_schema(self, temp: bool) -> str:
        """The statement that creates :attr:`current` (``temp``: in the state's
        connection, gone when it closes)."""
        return (
            f"CREATE {'TEMP ' if temp else ''}TABLE IF NOT EXISTS {self.current} (origin TEXT"
            " NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (origin, seq))"
        )


def previous_notes(
    db: sqlite3.Connection, kind: NoteKind[V, W], output: str, origin: str
) -> Iterator[tuple[str, V]]:
    """The notes the previous run kept of ``kind`` for (``output``, ``origin``), in loc
    order, one block in memory at a time. Each block is its own query, so no cursor stays
    open while the caller writes through the same connection. A state file older than
    the kind (no table: a read-only look at it) holds none."""
    query = f"SELECT data FROM {kind.table} WHERE output = ? AND origin = ? AND seq = ?"
    seq = 0
    while True:
        try:
            row = db.execute(query, (output, origin, seq)).fetchone()
        except sqlite3.OperationalError:
            if has_table(db, kind.table):
                raise
            row = None
        if row is None:
            break
        yield from kind.decode(row[0])
        seq += 1
    legacy = kind.legacy
    if not seq and legacy is not None and has_table(db, legacy.table):
        yield from legacy.read(db, output, origin)


def has_notes(db: sqlite3.Connection, kind: NoteKind[V, W], output: str, origin: str) -> bool:
    """Whether a previous run left notes of ``kind`` for (``output``, ``origin``)."""
    row = db.execute(
        f"SELECT 1 FROM {kind.table} WHERE output = ? AND origin = ? LIMIT 1", (output, origin)
    ).fetchone()
    return row is not None


def has_table(db: sqlite3.Connection, name: str, schema: str = "main") -> bool:
    """Whether the database ``schema`` of ``db`` has a table ``name``."""
    return (
        db.execute(
            f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


#: Origins named in one query: under SQLite's oldest limit of 999 parameters.
_ORIGINS_A_QUERY = 500


def chunks(origins: list[str]) -> Iterator[list[str]]:
    """``origins`` in lists small enough to be named in one query."""
    for start in range(0, len(origins), _ORIGINS_A_QUERY):
        yield origins[start : start + _ORIGINS_A_QUERY]


class StoredOrigins:
    """Which of some origins the state file behind ``db`` has notes of a kind for, asked
    once for all of them, the first time the kind is: :meth:`previous` reads those, and
    nothing for the others (a broad crawl's new hosts)."""

    def __init__(self, db: sqlite3.Connection, output: str, origins: list[str]) -> None:
        self._db = db
        self._output = output
        self._origins = origins
        #: By kind's table: the origins with blocks, and whether a legacy table is there
        #: (its rows are read for any origin).
        self._found: dict[str, tuple[set[str], bool]] = {}

    def previous(self, kind: NoteKind[V, W], output: str, origin: str) -> Iterator[tuple[str, V]]:
        """:func:`previous_notes` for an origin the state holds notes of ``kind`` for."""
        found = self._found.get(kind.table)
        if found is None:
            found = self._found[kind.table] = self._look(kind)
        names, legacy = found
        if origin in names or legacy:
            return previous_notes(self._db, kind, output, origin)
        return iter(())

    def _look(self, kind: NoteKind[V, W]) -> tuple[set[str], bool]:
        """The origins with blocks of ``kind``, in a query per 500 origins."""
        names: set[str] = set()
        if has_table(self._db, kind.table):
            for chunk in chunks(self._origins):
                rows = self._db.execute(
                    f"SELECT DISTINCT origin FROM {kind.table} WHERE output = ? AND origin IN"
                    f" ({', '.join('?' * len(chunk))})",
                    (self._output, *chunk),
                )
                names.update(origin for (origin,) in rows)
        legacy = kind.legacy is not None and has_table(self._db, kind.legacy.table)
        return names, legacy


class Notes(Generic[V, W]):
    """An origin's notes of one kind: the previous run's, read in loc order (``previous``),
    joined against this run's entries, given in loc order too (:meth:`_match`), and
    this run's, kept in blocks of ``block`` and handed to ``save`` (None: a pass that
    keeps nothing). A subclass says what it computes from the join, and what of a
    previous note this run passed over (:meth:`_passed`: gone)."""

    def __init__(
        self,
        kind: NoteKind[V, W],
        previous: Iterator[tuple[str, V]],
        save: Save | None,
        block: int = BLOCK,
    ) -> None:
        self._encode = kind.encode
        self._previous = previous
        self._head = next(previous, None)
        self._save = save
        self._size = block
        #: This run's notes not yet saved (:meth:`_keep`).
        self._block: list[W] = []
        self._seq = 0

    def _match(self, loc: str) -> tuple[str, V] | None:
        """The previous run's note of ``loc`` (None: it had none), once those before it
        were passed over (each to :meth:`_passed`). Asked in loc order."""
        head = self._head
        if head is None:  # a first run, and a feed's build, has no notes to follow
            return None
        previous = self._previous
        while head[0] < loc:
            self._passed(head)
            head = next(previous, None)
            if head is None:
                self._head = None
                return None
        if head[0] == loc:
            self._head = next(previous, None)
            return head
        self._head = head
        return None

    def _passed(self, note: tuple[str, V]) -> None:
        """A note of the previous run for a URL this run did not reach: gone. Nothing
        to do unless the subclass counts or reports them."""

    def _keep(self, note: W) -> None:
        """One of this run's notes, into the block, saved once the block is full. (The
        URL set's and IndexNow's loops do the same inline: they run once per URL.)"""
        self._block.append(note)
        if len(self._block) >= self._size:
            self._flush()

    def _flush(self) -> None:
        """Save the notes kept as a block."""
        if self._block:
            if self._save is not None:
                self._save(self._seq, self._encode(self._block))
                self._seq += 1
            self._block = []

    def _drain(self) -> None:
        """Once every entry was noted: the previous run's notes left, each passed over."""
        head = self._head
        while head is not None:
            self._passed(head)
            head = next(self._previous, None)
        self._head = None
