"""The state file's health, looked at before a run reads it: checked (SQLite's quick check,
bounded in time, and whether its tables are ours), moved aside when it is damaged or
another program's, and then rebuilt from the published set it describes, so that the run
goes on as if nothing had happened; and the rows of a local output re-keyed once when the
state still names the output by its absolute path (``locations.state_key``).

Pure: the published set is read from the local output folder (each origin's
``manifest.json`` and sitemaps); a remote output's cannot be read back, and its state
starts afresh. The rules, and what restarts, are in docs/incremental.rst.
"""

from __future__ import annotations

import gzip
import hashlib
import heapq
import itertools
import json
import logging
import os
import re
import sqlite3
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no stubs

from .. import clock
from ..plural import counted
from ..sitemaps.lastmod import UNKNOWN_FINGERPRINT, Seen
from ..sitemaps.limits import SITEMAP_NS
from ..sitemaps.manifest import FileRecord
from ..sitemaps.naming import MANIFEST_NAME
from ..sitemaps.urls import UrlRejected, origin_folder, origin_of_root
from .content_notes import encode_contents
from .statefile import PublishState
from .url_notes import URL_BLOCK
from .view import KINDS

if TYPE_CHECKING:
    import io
    from collections.abc import Iterable, Iterator

__all__ = ["CHECK_SECONDS", "prepare_state", "rebuild_state"]

logger = logging.getLogger(__name__)

#: How long the integrity check may read before it is cut short: a state file of many
#: origins is read in full, and a damaged page is rare enough not to hold up a crawl.
CHECK_SECONDS = 5.0
#: SQLite virtual-machine steps between two looks at the clock during the check.
_CHECK_STEPS = 10_000
#: The table every state file of this package has, and its columns.
_FILES_COLUMNS = ["output", "origin", "name", "sha256", "lastmod"]
#: The tables that hold rows per output, re-keyed when the state is adopted.
_KEYED_TABLES = (
    "files",
    "sections",
    *(kind.table for kind in KINDS),
    *(kind.legacy.table for kind in KINDS if kind.legacy is not None),
)
#: The files beside a SQLite file that belong to it.
_COMPANIONS = ("", "-wal", "-shm", "-journal")
#: Origins recorded in one transaction of a rebuild.
_ORIGINS_A_COMMIT = 500
_URL = f"{{{SITEMAP_NS}}}url"
_LOC = f"{{{SITEMAP_NS}}}loc"
_LASTMOD = f"{{{SITEMAP_NS}}}lastmod"
_PLACEHOLDER = re.compile(r"%\([a-z]+\)[a-z]")
#: What a published set that cannot be read back raises: a file gone, cut short (gzip's
#: EOFError, zlib.error) or garbled (lxml, json, UTF-8), a manifest of another shape.
_UNREADABLE = (
    OSError,
    EOFError,
    zlib.error,
    ValueError,
    KeyError,
    TypeError,
    etree.LxmlError,
    sqlite3.Error,
)


def prepare_state(
    path: Path, key: str, uri: str, output_dir: Path | None, *, seconds: float = CHECK_SECONDS
) -> None:
    """Make the state file at ``path`` fit to be read by this run, before its first
    request: if it is damaged or not ours, move it aside (``<name>.corrupt-<UTC time>``)
    and rebuild it from the published set of ``output_dir`` (None: a remote output, which
    starts afresh), with one WARNING that says so; if it is sound and ``key`` (the output's
    key, :attr:`Config.state_key`) is not ``uri`` (a key relative to the state's folder),
    adopt the rows an earlier version kept under the folder's absolute path."""
    if not path.is_file():
        return
    problem = _problem(path, seconds)
    if problem is None:
        if key != uri:
            try:
                _adopt(path, key, seconds)
            except sqlite3.OperationalError:  # busy (said by the check): a later run adopts
                pass
        return
    aside = _move_aside(path)
    what = {"path": path, "problem": problem, "aside": aside}
    if output_dir is None:
        logger.warning(
            "Sitemap: the state file %(path)s %(problem)s; moved aside to %(aside)s. The "
            "output is remote and its published set cannot be read back through feed "
            "storages, so this run starts afresh: every URL counts as added and every "
            "file is written and stamped anew",
            what,
        )
        return
    try:
        rebuilt = rebuild_state(path, key, output_dir)
    except _UNREADABLE as exc:
        _remove(path)
        what["why"] = f"{type(exc).__name__}: {exc}"
        logger.warning(
            "Sitemap: the state file %(path)s %(problem)s; moved aside to %(aside)s. The "
            "published set could not be read back (%(why)s), so this run starts afresh: "
            "every URL counts as added and every file is written and stamped anew",
            what,
        )
        return
    if rebuilt is None:
        what["folder"] = output_dir
        logger.warning(
            "Sitemap: the state file %(path)s %(problem)s; moved aside to %(aside)s. There "
            "is no published set in %(folder)s to rebuild it from, so this run starts "
            "afresh: every URL counts as added",
            what,
        )
        return
    what["origins"] = counted(rebuilt[0], "origin")
    what["urls"] = counted(rebuilt[1], "URL")
    logger.warning(
        "Sitemap: the state file %(path)s %(problem)s; moved aside to %(aside)s, and rebuilt "
        "from the published set (%(origins)s, %(urls)s): this run keeps "
        "every lastmod and unchanged file; pages' content fingerprints and IndexNow's "
        "restart (see docs/incremental.rst)",
        what,
    )


def _problem(path: Path, seconds: float) -> str | None:
    """What is wrong with the state file, in words; None when it is sound and ours (or
    holds no table yet), or when it cannot be looked at now for a reason that is not its
    content (locked by another process, unreadable): the publish will say so."""
    db = sqlite3.connect(path, timeout=seconds)  # a lock held as long as the check may run
    try:
        deadline = time.monotonic() + seconds
        db.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_STEPS)
        try:
            found = db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.OperationalError as exc:
            if not _is_interrupt(exc):
                raise
            logger.info(
                "Sitemap: the check of the state file %(path)s was cut short after %(s)g s; "
                "going on with it as it is",
                {"path": path, "s": seconds},
            )
            found = [("ok",)]
        db.set_progress_handler(None, 0)
        if found != [("ok",)]:
            return f"is damaged (SQLite's quick_check: {found[0][0]})"
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        if not tables:
            return None
        columns = [row[1] for row in db.execute("PRAGMA table_info(files)")]
        # Later columns (each file's size and time on disk) follow these, added in place.
        if columns[: len(_FILES_COLUMNS)] != _FILES_COLUMNS:
            shown = ", ".join(sorted(tables)[:5])
            return f"is another program's SQLite database (its tables: {shown}), not a state file"
        return None
    except sqlite3.DatabaseError as exc:
        if not _is_corrupt(exc):
            logger.info(
                "Sitemap: the state file %(path)s could not be checked (%(error)s)",
                {"path": path, "error": exc},
            )
            return None
        return f"is damaged or no SQLite database ({exc})"
    finally:
        db.close()


def _is_interrupt(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLITE_INTERRUPT (before Python 3.11, which gives no code: by its
    message)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF == 9 if isinstance(code, int) else "interrupted" in str(exc)


def _is_corrupt(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLITE_CORRUPT or SQLITE_NOTADB (by its message before 3.11)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (11, 26)
    return "malformed" in str(exc) or "not a database" in str(exc)


def _move_aside(path: Path) -> Path:
    """Rename the state file and its journal files to ``<name>.corrupt-<UTC time>``."""
    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while aside.exists():  # two in the same second
        number += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    for suffix in _COMPANIONS:
        companion = Path(f"{path}{suffix}")
        if companion.exists():
            os.replace(companion, f"{aside}{suffix}")
    return aside


def _remove(path: Path) -> None:
    for suffix in _COMPANIONS:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _adopt(path: Path, key: str, seconds: float) -> None:
    """Re-key the rows of the one local output an earlier version kept under its path as
    given (absolute, or relative to where the crawl ran), when ``key`` has none."""
    db = sqlite3.connect(path, timeout=seconds)
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'files'").fetchone() is None:
            return
        if db.execute("SELECT 1 FROM files WHERE output = ? LIMIT 1", (key,)).fetchone():
            return
        outputs = [o for (o,) in db.execute("SELECT DISTINCT output FROM files")]
        local = [o for o in outputs if "://" not in o or o.startswith("file://")]
        if len(local) != 1:
            return  # none, or several: no telling which one this folder was
        (old,) = local
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        with db:
            for table in _KEYED_TABLES:
                if table in tables:
                    db.execute(f"UPDATE {table} SET output = ? WHERE output = ?", (key, old))
        logger.info(
            "Sitemap: the state file %(path)s named this output %(old)s; its records now "
            "follow the folder (key %(key)s), so a copy or move of the folder keeps them",
            {"path": path, "old": old, "key": key},
        )
    finally:
        db.close()


def rebuild_state(path: Path, key: str, output_dir: Path) -> tuple[int, int] | None:
    """Write a new state file at ``path`` from the published set in ``output_dir``: each
    origin folder's files (``manifest.json``, their hashes checked against the files),
    sections, URL set and content notes (:data:`..sitemaps.lastmod.UNKNOWN_FINGERPRINT`, each with
    the lastmod its sitemap shows). (origins, URLs), or None when there is no published
    set. One block of URLs of each of an origin's sitemaps is in memory at a time."""
    folders = _published(output_dir)
    first = next(folders, None)
    if first is None:
        return None
    state = PublishState(path)
    origins = urls = 0
    try:
        group: list[tuple[str, list[FileRecord]]] = []
        for folder, document in _chain(first, folders):
            name = origin_of_root(document["origin"]).name
            records = _records(folder, document["files"])
            urls += _note_urls(state, key, name, folder, records)
            group.append((name, records))
            origins += 1
            if len(group) >= _ORIGINS_A_COMMIT:
                state.commit_all(key, group)
                group = []
        state.commit_all(key, group)
    finally:
        state.close()
    return origins, urls


def _chain(
    first: tuple[Path, dict[str, Any]], rest: Iterator[tuple[Path, dict[str, Any]]]
) -> Iterator[tuple[Path, dict[str, Any]]]:
    yield first
    yield from rest


def _published(output_dir: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each origin folder of the output and its manifest; folders that are not where their
    manifest's origin is published (a staging folder, a copy) are passed over."""
    template = str(output_dir)
    if "%(" in template:
        cut = template.rfind(os.sep, 0, template.index("%(")) + 1  # the folders before
        base = Path(template[:cut] or ".")
        pattern = _PLACEHOLDER.sub("*", template[cut:])
        candidates: Iterable[Path] = sorted(base.glob(pattern)) if base.is_dir() else ()
    else:
        candidates = sorted(output_dir.iterdir()) if output_dir.is_dir() else ()
    for folder in candidates:
        manifest = folder / MANIFEST_NAME
        if not manifest.is_file():
            continue
        document = json.loads(manifest.read_bytes())
        try:
            origin = origin_of_root(document["origin"])
        except (UrlRejected, KeyError, TypeError, ValueError):
            continue
        if os.path.normpath(origin_folder(template, origin)) == os.path.normpath(folder):
            yield folder, document


def _records(folder: Path, files: list[dict[str, Any]]) -> list[FileRecord]:
    """The manifest's files as the state records them, and the manifest itself. A file
    missing or not as listed is recorded with no hash, so the next run writes it again."""
    records = []
    for entry in files:
        name = str(entry["name"])
        sha256 = str(entry["sha256"])
        if _sha256(folder / name) != sha256:
            sha256 = ""
        records.append(
            FileRecord(
                name,
                str(entry["kind"]),
                int(str(entry["entries"])),
                int(str(entry["bytes"])),
                sha256,
                str(entry["lastmod"]),
                False,
            )
        )
    data = (folder / MANIFEST_NAME).read_bytes()
    # The manifest changes with any file it lists, whose lastmods it holds: it was last
    # written when the newest of them was.
    stamp = max((r.lastmod for r in records), default="")
    digest = hashlib.sha256(data).hexdigest()
    records.append(FileRecord(MANIFEST_NAME, "manifest", 0, len(data), digest, stamp, False))
    return records


def _sha256(path: Path) -> str | None:
    """The hash of the file's uncompressed bytes, as the manifest gives it."""
    digest = hashlib.sha256()
    try:
        with _open(path) as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    except (OSError, EOFError):
        return None
    return digest.hexdigest()


def _open(path: Path) -> gzip.GzipFile | io.BufferedReader:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")


def _note_urls(
    state: PublishState, key: str, origin: str, folder: Path, records: list[FileRecord]
) -> int:
    """Note the origin's URLs, in loc order, into ``state``'s URL set and content notes."""
    kind = "urlset" if any(r.kind == "urlset" for r in records) else "text"
    read = _urlset_entries if kind == "urlset" else _text_entries
    streams = [_in_bursts(read(folder / r.name)) for r in records if r.kind == kind]
    notes = state.url_notes(key, origin)
    _, save = state.content_notes(key, origin)
    last = None
    locs: list[str] = []
    seen: list[tuple[str, Seen]] = []
    count = 0
    for loc, lastmod in heapq.merge(*streams, key=lambda entry: entry[0]):
        if loc == last:
            continue
        last = loc
        locs.append(loc)
        seen.append((loc, Seen(UNKNOWN_FINGERPRINT, lastmod, lastmod)))
        if len(locs) >= URL_BLOCK:
            notes.note_all(locs)
            save(count // URL_BLOCK, encode_contents(seen))
            count += len(locs)
            locs, seen = [], []
    if locs:
        notes.note_all(locs)
        save(count // URL_BLOCK, encode_contents(seen))
        count += len(locs)
    notes.finish()
    return count


def _in_bursts(entries: Iterator[tuple[str, str | None]]) -> Iterator[tuple[str, str | None]]:
    """``entries`` read a block at a time, so that each of the merged parsers works in
    bursts rather than handing over after every entry."""
    while block := list(itertools.islice(entries, URL_BLOCK)):
        yield from block


def _urlset_entries(path: Path) -> Iterator[tuple[str, str | None]]:
    """(loc, lastmod) of each ``<url>`` of a urlset file, in file order, each element
    dropped once read."""
    with _open(path) as stream:
        for _, url in etree.iterparse(
            stream, events=("end",), tag=_URL, resolve_entities=False, no_network=True
        ):
            loc = lastmod = None
            for child in url:  # not findtext, which parses its path at every call
                if child.tag == _LOC:
                    loc = child.text
                elif child.tag == _LASTMOD:
                    lastmod = child.text
            if loc is None:
                raise ValueError(f"{path}: a <url> without <loc>")
            yield loc.strip(), lastmod.strip() if lastmod else None
            url.clear(keep_tail=False)
            parent = url.getparent()
            while parent is not None and url.getprevious() is not None:
                del parent[0]


def _text_entries(path: Path) -> Iterator[tuple[str, str | None]]:
    """(loc, None) of each line of a text sitemap."""
    with _open(path) as stream:
        for line in stream:
            loc = line.decode().strip()
            if loc:
                yield loc, None
