"""What a local publish puts on disk before it goes on: the group's files before their
renames, the changed folders before the state records the group (docs/crash-safety.rst,
"A power cut while publishing").

Where the system has ``syncfs`` (Linux), one call per file system does it for a large
group: the file system writes back everything it holds unwritten, these files and
folders among it, in one pass. A sync per file costs a system call, and an open and a
close, for each of a broad crawl's hundreds of thousands of files. A small group, and
every group where there is no ``syncfs``, is synced a file (or folder) at a time, many at
once from threads.

``syncfs`` also writes back whatever else is unwritten on that file system: other
programs' files, and a build's own temporary runs when they lie on the same disk. The
guarantee is the same, the work can be more; for a group of a few files it is more than
their own syncs. The benchmark page records what each way costs (docs/benchmarks.rst,
issue 54).
"""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

__all__ = ["one_by_one", "synced"]

#: Opens a folder to sync it; None where a folder cannot be opened (Windows, whose file
#: systems journal their folders' entries without being asked).
_FOLDER = getattr(os, "O_DIRECTORY", None)

#: The syncs a group's delivery has in flight at once, where each file is synced alone.
_SYNCS = 16

#: A group of at most this many files and folders is synced one by one even where the
#: system has ``syncfs``, whose write-back of the whole file system costs more than that.
_ONE_BY_ONE_UP_TO = 1000


def _find_syncfs() -> Callable[[int], int] | None:
    """The C library's ``syncfs``, or None where there is none (macOS, Windows, a libc
    without it). Looked up once: ``ctypes`` finds it in the process's own C library."""
    if not hasattr(os, "O_DIRECTORY"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function


_syncfs = _find_syncfs()


def _fsync(path: str, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _each_synced(paths: Collection[str], flags: int) -> None:
    """Each of ``paths`` synced on its own: many at once, from threads, so the file
    system flushes them in a few journal commits, where one after the other each waited
    for a commit of its own."""
    if len(paths) < 2:
        for path in paths:
            _fsync(path, flags)
        return
    with ThreadPoolExecutor(min(_SYNCS, len(paths))) as pool:
        for _ in pool.map(lambda path: _fsync(path, flags), paths):  # the first error raised
            pass


def _file_systems(folders: Iterable[str]) -> list[str]:
    """One folder of ``folders`` on each file system they are on."""
    seen: dict[int, str] = {}
    for folder in folders:
        seen.setdefault(os.stat(folder).st_dev, folder)
    return list(seen.values())


def _syncfs_each(folders: Iterable[str]) -> None:
    assert _syncfs is not None
    for folder in _file_systems(folders):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _syncfs(fd) != 0:
                number = ctypes.get_errno()
                raise OSError(number, os.strerror(number), folder)
        finally:
            os.close(fd)


def one_by_one(
    files: Collection[tuple[str, Collection[str]]] = (), folders: Collection[str] = ()
) -> bool:
    """Whether a group of ``files`` and ``folders`` (as :func:`synced` takes them) is
    synced one by one, else by one ``syncfs`` of each file system: decided once for a
    group, for both of its syncs."""
    count = len(folders) + sum(len(names) for _, names in files)
    return _syncfs is None or count <= _ONE_BY_ONE_UP_TO


def synced(
    files: Collection[tuple[str, Collection[str]]] = (),
    folders: Collection[str] = (),
    *,
    each: bool | None = None,
) -> None:
    """The data of ``files``, each a folder and names of files in it, and the entries of
    ``folders``, on disk; raises OSError when the system reports that it could not
    write them. A file lies on its folder's file system (a mount point is a folder), so
    the folders name every file system to sync. ``each``: :func:`one_by_one` of the
    group (None: of these files and folders)."""
    if not files and not folders:
        return
    if each is None:
        each = one_by_one(files, folders)
    if not each:
        _syncfs_each({*folders, *(folder for folder, _ in files)})
        return
    _each_synced(
        [os.path.join(folder, name) for folder, names in files for name in names], os.O_RDONLY
    )
    if folders and _FOLDER is not None:
        _each_synced(folders, os.O_RDONLY | _FOLDER)
