"""Where the files go: in place with atomic renames for a local folder, or through the
feed storage Scrapy's FEEDS would use for the URI (S3, GCS, FTP, any FEED_STORAGES scheme).

A publish delivers a group of origins at a time, each staged completely first
(:mod:`.publisher`). Locally, each destination of the group is checked before the first
move, so a failure leaves the group's previous sets as they were; an origin with no folder
yet gets its staging folder renamed into place, and in an existing folder files go urlsets
first and the index last, so an index a search engine fetches at any moment names only
files that exist. Remotely, one storage per file;
a failed upload is logged and counted, the others still go out, and an origin's index is
uploaded only when every one of its sitemaps was. Unchanged files are not delivered again.
"""

from __future__ import annotations

import contextlib
import errno
import filecmp
import gzip
import hashlib
import importlib.util
import logging
import os
import re
import secrets
import shutil
import stat
import tempfile
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import run_in_thread
from scrapy.utils.defer import ensure_awaitable
from scrapy.utils.misc import build_from_crawler, load_object
from w3lib.url import file_uri_to_path

from .. import stats as keys
from ..failures import failure_of
from ..locations import storage_for, uri_scheme
from ..plural import counted
from ..sitemaps.naming import INDEX_NAME, is_owned_name
from ..sitemaps.urls import Origin, origin_folder
from .disk_sync import one_by_one, synced

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..settings import Config
    from ..sitemaps.manifest import FileRecord
    from ..state.statefile import Stamp, Stamps
    from ..stats import Reporter
    from .staging import OriginSet

__all__ = [
    "DestinationError",
    "FeedStorages",
    "Stagings",
    "check_destination",
    "local_folder",
    "publish_feeds",
    "publish_local",
    "publish_remote",
    "staging_for",
]

logger = logging.getLogger(__name__)

#: The origin whose folder a remote SITEMAPGEN_URI's storage is built for at start-up.
_PROBE_ORIGIN = Origin("https", "www.example.com", 443)
#: (module, distribution) a storage of Scrapy's imports only when it uploads (GCS), so
#: only an upload at close would find it missing.
_LIBRARIES = {"gs": ("google.cloud.storage", "google-cloud-storage")}
#: The existing origin folders (``<scheme>_<host>_<port>``) the start-up check tries, at
#: most: one probe each (a file made, renamed, removed), and a broad crawl's output holds
#: 100,000 of them, which would cost a minute of the start. A folder made immutable or
#: read-only is most often the whole output, or one origin's folder among a few.
_ORIGIN_FOLDERS_PROBED = 100
_ORIGIN_FOLDER_NAME = re.compile(r"[a-z][a-z0-9+.-]*_")


class DestinationError(ValueError):
    """SITEMAPGEN_URI cannot take the files; found before the crawl's first request."""


class FeedStorages:
    """Scrapy's feed storages for the output's URIs, one per file, built as FeedExporter
    builds them: the class FEED_STORAGES names for the URI's scheme, made with
    ``build_from_crawler`` (S3, GCS and FTP read their credentials and options from the
    crawler's settings) and opened for the crawler's spider (a blocking storage's temporary
    file goes to its FEED_TEMPDIR). The publish knows no crawler: its caller hands it
    these."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    def storage_class(self, uri: str) -> Any:
        """The class FEED_STORAGES names for ``uri``'s scheme, loaded."""
        return load_object(storage_for(uri, self.crawler.settings))

    def build(self, uri: str) -> Any:
        """A new storage for the file ``uri``, which it overwrites."""
        cls = self.storage_class(uri)
        return build_from_crawler(cls, self.crawler, uri, feed_options={"overwrite": True})

    def open(self, storage: Any) -> IO[bytes]:
        """The file that ``storage`` stores when given back to its ``store()``."""
        target: IO[bytes] = storage.open(self.crawler.spider)
        return target


def check_destination(config: Config, storages: FeedStorages | None) -> None:
    """Raise :class:`DestinationError` when the output could not take the files, so that a
    crawl of hours does not end in "writing failed". A local folder must be creatable and
    writable (tried, and what the try made removed); a remote URI's feed storage must be
    buildable from ``storages``, as FeedExporter builds it, which checks what the storage needs (boto3 for
    S3, a host for FTP), and must have its libraries. Existing origin folders directly
    under a local output must take a new file and a rename (the first
    ``_ORIGIN_FOLDERS_PROBED`` of them), and an existing state file must be writable."""
    if config.local:
        assert config.output_dir is not None
        problem = _folder_problem(config.output_dir) or _origin_folders_problem(config.output_dir)
    else:
        problem = _storage_problem(storages, config.uri)
    problem = problem or _state_problem(config.state_path)
    if problem:
        raise DestinationError(f"SITEMAPGEN_URI={config.uri!r} cannot be written: {problem}.")


def _folder_problem(output_dir: Path) -> str | None:
    """What stops files from being written under ``output_dir`` (placeholders: under
    the part before the first), or None. Creates the folder and a file, removes both."""
    text = str(output_dir)
    if "%(" in text:
        head = text[: text.index("%(")]
        output_dir = Path(head) if head.endswith(("/", os.sep)) else Path(head).parent
    folder = Path(os.path.abspath(output_dir))
    missing = []  # what this check creates, the deepest first
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        missing.append(existing)
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"the folder {folder} cannot be created ({failure_of(exc).cause})"
        try:
            handle, probe = tempfile.mkstemp(prefix=".sitemapgen-probe-", dir=folder)
        except OSError as exc:
            return f"no file can be created in the folder {folder} ({failure_of(exc).cause})"
        os.close(handle)
        os.unlink(probe)
        return None
    finally:
        for created in missing:
            with contextlib.suppress(OSError):
                created.rmdir()


def _origin_folders_problem(output_dir: Path) -> str | None:
    """What stops an existing origin folder directly under ``output_dir`` from taking a
    new file and a rename (the delivery's moves into it), or None. With placeholders in
    the output the origin folders are elsewhere, and are not tried."""
    if "%(" in str(output_dir):
        return None
    probed = 0
    try:
        with os.scandir(output_dir) as entries:
            for entry in entries:
                if probed >= _ORIGIN_FOLDERS_PROBED:
                    break
                if not _ORIGIN_FOLDER_NAME.match(entry.name) or not entry.is_dir(
                    follow_symlinks=False
                ):
                    continue
                probed += 1
                cause = _rename_problem(entry.path)
                if cause is not None:
                    return f"the origin folder {entry.path} takes no new file ({cause})"
    except FileNotFoundError:  # no output yet (_folder_problem removes what it made)
        return None
    except OSError as exc:
        return f"the folder {output_dir} cannot be listed ({failure_of(exc).cause})"
    return None


def _rename_problem(folder: str) -> str | None:
    """The cause that stops a file from being made and renamed in ``folder``, or None."""
    try:
        handle, probe = tempfile.mkstemp(prefix=".sitemapgen-probe-", dir=folder)
    except OSError as exc:
        return failure_of(exc).cause
    os.close(handle)
    renamed = f"{probe}-renamed"
    try:
        os.rename(probe, renamed)
    except OSError as exc:
        os.unlink(probe)
        return failure_of(exc).cause
    os.unlink(renamed)
    return None


def _state_problem(state_path: Path) -> str | None:
    """What stops an existing state file from being written, or None: the file must open
    for writing (it is opened for appending and closed: nothing written) and its folder
    take SQLite's journal beside it. A state file not made yet is made by the publish."""
    if not state_path.exists():
        return None
    try:
        os.close(os.open(state_path, os.O_WRONLY | os.O_APPEND))
    except OSError as exc:
        return f"the state file {state_path} cannot be written ({failure_of(exc).cause})"
    try:
        handle, probe = tempfile.mkstemp(prefix=".sitemapgen-probe-", dir=state_path.parent)
    except OSError as exc:
        return (
            f"the folder of the state file, {state_path.parent}, takes no new file "
            f"({failure_of(exc).cause})"
        )
    os.close(handle)
    os.unlink(probe)
    return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def _storage_problem(storages: FeedStorages | None, uri: str) -> str | None:
    """What stops the feed storage of ``uri`` from being built, or None. Nothing is
    opened or stored: the storage is built for one origin's index, and dropped."""
    if storages is None:
        return "a remote output needs Scrapy's feed storages, and none were given"
    probe = f"{origin_folder(uri, _PROBE_ORIGIN).rstrip('/')}/{INDEX_NAME}"
    library = _LIBRARIES.get(uri_scheme(uri))
    if library is not None and not _importable(library[0]):
        return f"its feed storage needs the {library[1]} library, which is not installed"
    try:
        cls = storages.storage_class(probe)
    except Exception as exc:  # FEED_STORAGES names a class that cannot be loaded
        return f"its feed storage cannot be loaded ({type(exc).__name__}: {exc})"
    name = getattr(cls, "__name__", str(cls))
    try:
        storages.build(probe)
    except NotConfigured as exc:
        return f"{name} is disabled ({exc or 'NotConfigured'})"
    except AssertionError:  # S3 and GCS assert that the URI has a host: the bucket
        return f"{name} needs a host in the URI (the bucket or server)"
    except Exception as exc:
        return f"{name} refused it ({type(exc).__name__}: {exc})"
    return None


def local_folder(folder: str) -> Path:
    """The path of a local origin folder (a plain path or a ``file://`` URI), absolute."""
    return Path(_local_path(folder))


def _local_path(folder: str) -> str:
    """:func:`local_folder` as a string: a broad crawl's publish asks it of every origin,
    and a ``Path`` made and parsed each time cost more than the folder's ``mkdir``."""
    path = file_uri_to_path(folder) if folder.startswith("file:") else folder
    return os.path.abspath(path)  # lexically: a symbolic link is not followed


class Stagings:
    """New staging folders for one publish: beside each origin folder for a local output
    (same file system, so the final step is a rename), in the temporary folder otherwise.

    A crawl killed while writing left its staging folders; the store's lock means no other
    crawl of this store is writing now, so they are only debris. Each parent folder is
    listed once per publish, the first time an origin in it is staged, not once per origin:
    a broad crawl puts 100,000 origin folders (and their stagings) side by side, and a
    listing per origin made staging grow with the square of the origins."""

    def __init__(self, config: Config) -> None:
        self._config = config
        #: parent folder -> origin folder name -> its debris, listed before any staging of ours.
        self._debris: dict[str, dict[str, list[Path]]] = {}
        self._parents: set[str] = set()
        # The staging folders' names: one random part per publish and a count, not random
        # bytes drawn per origin; a name taken (debris of a killed run) is drawn again.
        self._token = secrets.token_hex(6)
        self._made = 0

    def _debris_in(self, parent: str) -> dict[str, list[Path]]:
        found = self._debris.get(parent)
        if found is None:
            found = self._debris[parent] = {}
            with os.scandir(parent) as entries:
                for entry in entries:
                    name, tmp, _suffix = entry.name.rpartition(".tmp-")
                    if tmp and name.startswith("."):
                        found.setdefault(name[1:], []).append(Path(entry.path))
        return found

    def new(self, origin_folder: str) -> str:
        """A new staging folder for the files of ``origin_folder``. It is made as the
        origin folder would be (the umask's mode, not ``mkdtemp``'s 0700), so that the
        delivery of an origin that has no folder yet is this folder renamed."""
        if not self._config.local:
            return tempfile.mkdtemp(prefix="sitemapgen-")
        parent, name = os.path.split(_local_path(origin_folder))
        if parent not in self._parents:  # once per parent, not once per origin
            os.makedirs(parent, exist_ok=True)
            self._parents.add(parent)
        for debris in self._debris_in(parent).pop(name, ()):
            shutil.rmtree(debris, ignore_errors=True)
        while True:
            self._made += 1
            staging = os.path.join(parent, f".{name}.tmp-{self._token}-{self._made}")
            try:
                os.mkdir(staging)
            except FileExistsError:  # another staging's name: draw again
                self._token = secrets.token_hex(6)
                continue
            return staging


def staging_for(config: Config, origin_folder: str) -> str:
    """A new staging folder for one origin (see :class:`Stagings`, which a publish of many
    origins uses)."""
    return Stagings(config).new(origin_folder)


def _move_into_place(source: Path, target: Path) -> None:
    """``os.replace``, which is atomic on one file system; across file systems the copy goes
    to a hidden name in the target folder first, synced, so the final step is still a
    rename of bytes on disk. ``source`` is synced already (:func:`publish_local`)."""
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        temporary = target.with_name(f".{target.name}.part")
        temporary.unlink(missing_ok=True)  # never write through a link planted there
        shutil.copyfile(source, temporary)
        synced([(str(temporary.parent), [temporary.name])])
        os.replace(temporary, target)


def _folder_renamed(origin_set: OriginSet, target: str) -> bool:
    """Deliver the set of an origin that has no folder yet by renaming its staging folder
    into place: one rename, atomic, instead of a folder made and a rename per file.
    False (nothing done) when the rename is refused (a folder made there meanwhile).

    The staging folder holds the set's files and nothing else: it is this publish's own,
    made empty (:class:`Stagings`), and only :func:`~.staging.stage_origin` writes into
    it, whose records name every file it wrote (``tests/test_many_origins.py`` holds a
    build with every kind of file to it). So it is not listed again here, once for each
    of a broad crawl's new origins; its files and itself are synced before
    (:func:`publish_local`), its parent after."""
    staging = origin_set.staging
    try:
        os.rename(staging, target)
    except OSError:
        return False
    return True


#: How many repaired files a publish names at WARNING; the others at DEBUG.
REPAIRS_SHOWN = 5


def _damage(
    published: str, staged: str, record: FileRecord, kept: Stamp | None
) -> tuple[str | None, Stamp | None]:
    """What happened to the published file an unchanged ``record`` names (None when it
    holds the record's content), and its :data:`~..state.statefile.Stamp` when intact.

    A stat first (a broad crawl's run has hundreds of thousands of such files): a file
    whose size and modification time are ``kept``, those the state recorded when it was
    delivered or last found intact, is intact unread (the quick check of rsync and make;
    the rename into place keeps the time the file was written with). Otherwise its bytes
    are compared with those staged again now, when the sizes agree; and a gzipped file of
    other bytes whose content is the record's (gzipped at another SITEMAPGEN_GZIP_LEVEL,
    or by another zlib) is intact too."""
    try:
        found = os.stat(published)
    except FileNotFoundError:
        return "missing", None
    size = found.st_size
    stamp = (size, found.st_mtime_ns)
    if stamp == kept:
        return None, stamp
    staged_size = os.stat(staged).st_size
    if size == staged_size and filecmp.cmp(published, staged, shallow=False):
        return None, stamp
    if published.endswith(".gz") and size:
        try:
            content = gzip.decompress(Path(published).read_bytes())
        except (OSError, EOFError, zlib.error):
            content = None
        if content is not None and hashlib.sha256(content).hexdigest() == record.sha256:
            return None, stamp
    if size == staged_size:
        return "edited", None
    return ("empty" if not size else "of another size"), None


def _stamp(path: str) -> Stamp:
    """The size and modification time of the file at ``path``."""
    found = os.stat(path)
    return found.st_size, found.st_mtime_ns


def _repair_noted(published: str, damage: str, reporter: Reporter) -> None:
    stats = reporter.stats
    shown = stats.get_value(keys.FILES_REPAIRED, 0) < REPAIRS_SHOWN
    stats.inc_value(keys.FILES_REPAIRED)
    last = stats.get_value(keys.FILES_REPAIRED) == REPAIRS_SHOWN
    logger.log(
        logging.WARNING if shown else logging.DEBUG,
        "Sitemap: %(file)s was not as published (%(damage)s): written again%(more)s",
        {
            "file": published,
            "damage": damage,
            "more": "; further repairs are logged at DEBUG" if last else "",
        },
    )


def publish_local(
    sets: list[OriginSet], reporter: Reporter, stamps: Stamps | None = None
) -> set[str]:
    """Move every origin's changed files into place; raise before any move on a blocked
    destination, so nothing of ``sets`` changes at all. Returns the staging folders
    renamed into place (those of the origins that had no folder), which are gone.

    A file the state calls unchanged is checked on disk first (:func:`_damage`), and
    delivered again when it is not as published: counted and logged as a repair.
    ``stamps``: the state's stamps of the files of ``sets`` (by origin name), for that
    check; each origin's entry is replaced by the stamps of its files as they are on disk
    after the delivery, for the caller to record: those found intact, and those delivered
    into an existing folder; a new origin's files get theirs from the next run's compare
    (None: no stamps, every file's bytes compared, none taken).
    Everything delivered is on disk before it is renamed into place, and every folder a
    rename changed is synced after, all before the caller records the group in the state
    file: a power cut leaves each origin with its previous set or this one, and the state
    names no file the disk did not get. The files of the whole group are synced at once,
    before the first rename, rather than each as it is written."""
    paths = [_local_path(s.folder) for s in sets]
    # Origins with no folder yet have nothing in the way, to keep or to remove (a broad
    # crawl's first run has 100,000 of them): their staging folder becomes theirs.
    absent: set[int] = set()
    targets: dict[int, Path] = {}  # the others' folders
    for number, (origin_set, path) in enumerate(zip(sets, paths)):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            absent.add(number)
            continue
        target = targets[number] = Path(path)
        if stat.S_ISLNK(mode):
            # The folder name comes from crawled hosts: never let a planted link redirect it.
            raise NotADirectoryError(
                errno.ENOTDIR, "a symbolic link stands where an origin folder goes", str(target)
            )
        if not stat.S_ISDIR(mode):
            raise FileExistsError(
                errno.EEXIST, "a file stands where an origin folder goes", str(target)
            )
        for record in origin_set.records:
            if (target / record.name).is_dir():
                raise IsADirectoryError(
                    errno.EISDIR, "a folder stands where a sitemap goes", str(target / record.name)
                )
    # What each origin delivers: a new origin its whole staging folder, synced with its
    # files; the others their changed files and those found damaged.
    delivering: dict[int, list[FileRecord]] = {}
    files: list[tuple[str, list[str]]] = []  # (staging folder, names)
    folders: list[str] = []
    # Each origin's stamps on disk after the delivery: the intact files' now, the
    # delivered files' once renamed into place.
    seen: dict[int, dict[str, Stamp]] = {}
    previous = stamps or {}
    for number, (origin_set, path) in enumerate(zip(sets, paths)):
        staging = origin_set.staging
        seen[number] = intact = {}
        if number in absent:
            delivering[number] = origin_set.records
            folders.append(staging)
        else:
            delivering[number] = chosen = []
            kept = previous.get(origin_set.origin.name, {})
            for record in origin_set.records:
                staged = os.path.join(staging, record.name)
                if not record.changed:
                    published = os.path.join(path, record.name)
                    damage, stamp = _damage(published, staged, record, kept.get(record.name))
                    if damage is None:
                        if stamp is not None:
                            intact[record.name] = stamp
                        continue
                    _repair_noted(published, damage, reporter)
                chosen.append(record)
        if delivering[number]:
            files.append((staging, [record.name for record in delivering[number]]))
    # One road for the group's two syncs, chosen by its size (disk_sync.one_by_one).
    each = one_by_one(files, folders)
    synced(files, folders, each=each)
    moved: set[str] = set()
    changed: set[str] = set()  # the folders whose entries the renames changed
    for number, (origin_set, path) in enumerate(zip(sets, paths)):
        if number in absent:
            changed.add(os.path.dirname(path))
            if _folder_renamed(origin_set, path):
                # No stamps for a new origin's files: a stat of each, here on the
                # publish's one thread, was a broad crawl's first run's every file. The
                # next run compares their bytes once and keeps the stamps then.
                moved.add(origin_set.staging)
                continue
            os.makedirs(path, exist_ok=True)
        target = targets.get(number) or Path(path)
        for record in delivering[number]:
            _move_into_place(Path(origin_set.staging, record.name), target / record.name)
            changed.add(path)
        if stamps is not None:
            _stamped(seen[number], path, delivering[number])
        # Files of ours this publish no longer has go; any other file a user keeps in the
        # folder is left alone.
        keep = {record.name for record in origin_set.records}
        for stale in target.iterdir():
            if stale.name not in keep and is_owned_name(stale.name):
                stale.unlink()
                changed.add(path)
    synced(folders=changed, each=each)
    if stamps is not None:
        for number, origin_set in enumerate(sets):
            stamps[origin_set.origin.name] = seen[number]
    return moved


def _stamped(stamps: dict[str, Stamp], folder: str, records: list[FileRecord]) -> None:
    """Add the stamps of ``records``' files, just delivered into ``folder``."""
    for record in records:
        stamps[record.name] = _stamp(os.path.join(folder, record.name))


async def _upload(storages: FeedStorages, uri: str, source: Path, reporter: Reporter) -> bool:
    """One file through one storage, the way FeedExporter stores a feed slot."""
    cls = storages.storage_class(uri)
    name = getattr(cls, "__name__", str(cls))
    try:
        storage = storages.build(uri)
        target = storages.open(storage)
        with source.open("rb") as data:
            shutil.copyfileobj(data, target)
        await ensure_awaitable(storage.store(target))
    except Exception as exc:
        logger.error(
            "Sitemap: storing %(uri)s failed: %(cause)s; the storage keeps what it had there, "
            "and the other files still go out",
            {"uri": uri, "cause": failure_of(exc, uri).cause},
        )
        logger.debug("Sitemap: the failure storing %(uri)s", {"uri": uri}, exc_info=True)
        reporter.stats.inc_value(keys.delivery_failed(name))
        return False
    logger.debug("Sitemap: stored %(uri)s", {"uri": uri})
    reporter.stats.inc_value(keys.delivery_stored(name))
    return True


async def publish_remote(
    sets: list[OriginSet], storages: FeedStorages, reporter: Reporter
) -> list[Origin]:
    """Upload every origin's changed files; return the origins delivered completely."""
    delivered = []
    for origin_set in sets:
        folder = origin_set.folder.rstrip("/")
        failed = 0
        for record in origin_set.records:
            if not record.changed:
                continue
            if record.kind == "index" and failed:
                logger.error(
                    "Sitemap: not uploading %(index)s: %(failed)s of %(origin)s failed, "
                    "and an index must name only files that exist; the storage keeps the "
                    "index it had",
                    {
                        "index": f"{folder}/{record.name}",
                        "failed": counted(failed, "file"),
                        "origin": origin_set.origin.root,
                    },
                )
                continue
            if not await _upload(
                storages, f"{folder}/{record.name}", Path(origin_set.staging, record.name), reporter
            ):
                failed += 1
        if not failed:
            delivered.append(origin_set.origin)
    return delivered


def _beside(uri: str, name: str) -> str:
    """The URI of the file ``name`` in the folder of the file ``uri``."""
    return f"{uri.rsplit('/', 1)[0]}/{name}" if "/" in uri else name


def _feed_bytes(staging: str, main: FileRecord, uri: str, config: Config) -> Path:
    """The file to store as the feed ``uri``: ``main`` uncompressed, gzipped again when the
    feed's name ends with ``.gz``."""
    data = Path(staging, main.name).read_bytes()
    if main.name.endswith(".gz"):
        data = gzip.decompress(data)
    if uri.endswith(".gz"):
        data = gzip.compress(data, compresslevel=config.gzip_level, mtime=0)
    handle, name = tempfile.mkstemp(prefix=".feed-", dir=staging)
    with os.fdopen(handle, "wb") as target:
        target.write(data)
    return Path(name)


async def publish_feeds(
    sets: list[OriginSet],
    uris: list[str],
    config: Config,
    storages: FeedStorages,
    reporter: Reporter,
) -> None:
    """Write the crawl's sitemap into each feed of the ``sitemap`` format (``-O
    sitemap.xml:sitemap``), through its feed storage, after FeedExporter stored it: the
    origin's urlset, or its index, with the files it lists beside it, when the limits
    split the set. A sitemap file holds one origin's URLs, so with several origins the
    feeds are left as FeedExporter stored them (empty), and the error says why."""
    if not uris:
        return
    if len(sets) != 1 or not sets[0].files("urlset"):
        logger.error(
            "Sitemap: nothing was written to the sitemap feed %(feeds)s: a sitemap file holds "
            "the URLs of one origin, and this crawl has %(count)s with a sitemap; "
            "use SITEMAPGEN_URI (a folder, now %(out)r), which gets one set per origin",
            {
                "feeds": ", ".join(uris),
                "count": counted(sum(1 for s in sets if s.files("urlset")), "origin"),
                "out": config.uri,
            },
        )
        return
    origin_set = sets[0]
    urlsets, news, indexes = (origin_set.files(kind) for kind in ("urlset", "news", "index"))
    single = len(urlsets) == 1 and not news and len(indexes) == 1
    main = urlsets[0] if single else indexes[0]
    beside = [] if single else [*urlsets, *news, *indexes[1:]]
    for uri in uris:
        try:
            source = await run_in_thread(_feed_bytes, origin_set.staging, main, uri, config)
        except Exception as exc:  # this feed only: the other feeds and the output still go out
            logger.error(
                "Sitemap: preparing the feed %(uri)s failed: %(failure)s; the feed is left as "
                "Scrapy stored it, the other feeds and the output still go out",
                {"uri": uri, "failure": failure_of(exc, origin_set.staging)},
            )
            logger.debug("Sitemap: the failure preparing %(uri)s", {"uri": uri}, exc_info=True)
            continue
        stored = await _upload(storages, uri, source, reporter)
        for written in beside:
            stored &= await _upload(
                storages,
                _beside(uri, written.name),
                Path(origin_set.staging, written.name),
                reporter,
            )
        if stored:
            logger.info(
                "Sitemap: the feed %(uri)s holds the sitemap of %(origin)s, %(urls)s: %(what)s",
                {
                    "uri": uri,
                    "origin": origin_set.origin.root,
                    "urls": counted(origin_set.url_count, "URL"),
                    "what": (
                        "its urlset"
                        if single
                        else f"its index, with the {counted(len(beside), 'file')} it lists beside it"
                    ),
                },
            )
