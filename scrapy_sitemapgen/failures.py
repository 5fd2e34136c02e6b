"""Why writing failed, in words: an exception of the output, the state file or the store
turned into the one cause and the one path an ERROR line names (its traceback goes to
DEBUG). Pure: no Scrapy, and redis only by its exceptions' names, so it stays optional.

A cause is read from the exception (its ``errno``, SQLite's message, its class); where
SQLite says only "disk I/O error", the file system under the path is asked what it lacks
(free space, write access), since SQLite keeps the operating system's ``errno`` to itself.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass

__all__ = ["Failure", "cause_of", "failure_of"]

#: The causes a user can act on, in words (``os.strerror`` is terse, and says nothing of
#: what to look at).
_ERRNO_CAUSES = {
    errno.ENOSPC: "no space left on device",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted (read-only or immutable?)",
    errno.EROFS: "read-only file system",
    errno.EDQUOT: "disk quota exceeded",
    errno.EIO: "input/output error (a failing disk or a lost network mount?)",
    errno.ENOENT: "no such file or directory (removed while writing?)",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "is a directory",
    errno.EMFILE: "too many open files (raise the limit: ulimit -n)",
    errno.ENFILE: "too many open files in the system",
    errno.EFBIG: "file too large (a file size limit: ulimit -f?)",
}

#: SQLite's messages (lower case, as ``str(error)`` begins) and what they mean for the file.
_SQLITE_CAUSES = (
    ("database disk image is malformed", "the {what} is corrupt"),
    ("file is not a database", "the {what} is corrupt"),
    ("database is locked", "the {what} is locked by another process (database is locked)"),
    ("database or disk is full", "no space left on device (database or disk is full)"),
)
#: SQLite's messages that hide an operating system error: the file system is asked.
_SQLITE_VAGUE = (
    "disk i/o error",
    "attempt to write a readonly database",
    "unable to open database file",
)
#: How deep the chain of causes (``raise ... from``) is followed.
_CHAIN_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Failure:
    """What one ERROR line says: the cause in words, and the path it concerns (the
    exception's file name when it has one, else the path the caller gave)."""

    cause: str
    path: str | None

    def __str__(self) -> str:
        return self.cause if self.path is None else f"{self.cause}: {self.path}"


def failure_of(error: BaseException, path: object = None, *, what: str = "state file") -> Failure:
    """The cause and path of ``error``. ``path`` is the file or folder being written when
    the exception names none (the output, the state file, the store); ``what`` names that
    file in a SQLite cause ("the state file is corrupt", "the store is locked ...")."""
    found = _named_path(error)
    where = found if found is not None else (None if path is None else str(path))
    return Failure(cause_of(error, where, what=what), where)


def cause_of(error: BaseException, path: str | None = None, *, what: str = "state file") -> str:
    """The cause of ``error`` in words; see :func:`failure_of`."""
    for link in _chain(error):
        cause = _known_cause(link, path, what)
        if cause is not None:
            return cause
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]
    # A feed storage's upload error (boto, google-cloud, ftplib), or anything else.
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _chain(error: BaseException) -> list[BaseException]:
    links = [error]
    while len(links) < _CHAIN_DEPTH:
        nxt = links[-1].__cause__ or links[-1].__context__
        if nxt is None or nxt in links:
            break
        links.append(nxt)
    return links


def _named_path(error: BaseException) -> str | None:
    for link in _chain(error):
        filename = getattr(link, "filename", None) if isinstance(link, OSError) else None
        if filename is not None:
            return os.fsdecode(filename) if isinstance(filename, bytes) else str(filename)
    return None


def _known_cause(error: BaseException, path: str | None, what: str) -> str | None:
    if _is_redis_connection_error(error):
        return f"the connection to Redis was lost ({error})"
    if isinstance(error, sqlite3.Error):
        return _sqlite_cause(error, path, what)
    if isinstance(error, OSError) and error.errno in _ERRNO_CAUSES:
        if error.strerror and error.strerror != os.strerror(error.errno):
            return error.strerror  # raised with words of its own ("a file stands where ...")
        return _ERRNO_CAUSES[error.errno]
    return None


def _is_redis_connection_error(error: BaseException) -> bool:
    """redis-py's ``ConnectionError`` and ``TimeoutError`` (and their subclasses), known by
    name: they are no ``OSError``, and importing redis here would make it a requirement."""
    return any(
        cls.__module__.split(".", 1)[0] == "redis"
        and cls.__name__ in {"ConnectionError", "TimeoutError"}
        for cls in type(error).__mro__
    )


def _sqlite_cause(error: sqlite3.Error, path: str | None, what: str) -> str:
    message = str(error).strip()
    lowered = message.lower()
    for text, cause in _SQLITE_CAUSES:
        if lowered.startswith(text):
            if text == "database or disk is full" and path is not None:
                # RLIMIT_FSIZE (EFBIG) reads as SQLITE_FULL too; free space tells them apart.
                lacking = _file_system_lack(path)
                if lacking is not None and lacking != errno.ENOSPC:
                    return f"{_ERRNO_CAUSES[lacking]} ({message})"
            return cause.format(what=what)
    if lowered.startswith(_SQLITE_VAGUE):
        lacking = None if path is None else _file_system_lack(path)
        if lacking is not None:
            return f"{_ERRNO_CAUSES[lacking]} ({message})"
    return message or type(error).__name__


def _beyond_size_limit(path: str) -> bool:
    """Whether this process may not write past ``path``'s end: its file size limit
    (``RLIMIT_FSIZE``, ``ulimit -f``) is not above the file's size."""
    try:
        import resource  # POSIX only

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        return limit != resource.RLIM_INFINITY and os.path.getsize(path) >= limit
    except (ImportError, OSError, ValueError):
        return False


def _file_system_lack(path: str) -> int | None:
    """The ``errno`` a write to ``path`` (a file, or where one goes) meets now, found by
    asking without writing: no free space, a read-only file system, a file or folder that
    refuses writes (permissions, immutable). None when nothing is found wanting."""
    target = path
    while target and not os.path.lexists(target):
        parent = os.path.dirname(target)
        if parent == target:
            return None
        target = parent
    if not target:
        return None
    try:
        info = os.statvfs(target)
    except OSError:
        return None
    if info.f_flag & os.ST_RDONLY:
        return errno.EROFS
    if info.f_bavail == 0 or info.f_favail == 0:
        return errno.ENOSPC
    if os.path.isfile(target):
        if _beyond_size_limit(target):
            return errno.EFBIG
        # Opened for appending and closed at once: nothing is written, but the kernel
        # says what a write would meet (EPERM for an immutable file, EACCES).
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
        except OSError as exc:
            return exc.errno if exc.errno in _ERRNO_CAUSES else None
        target = os.path.dirname(target) or "."
    # SQLite also makes files beside its own (the journal, the WAL): one is made and
    # removed, which is how an immutable folder (EPERM) differs from permissions (EACCES).
    probe = os.path.join(target, f".sitemapgen-probe-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return None
    except OSError as exc:
        return exc.errno if exc.errno in _ERRNO_CAUSES else None
    os.unlink(probe)
    return None
