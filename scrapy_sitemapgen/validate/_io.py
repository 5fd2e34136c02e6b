"""Bounded reading: local files and HTTP fetches, gzip or not, never past the byte limit (G2)."""

from __future__ import annotations

import http.client
import socket
import ssl
import stat
import time
import zlib
from gzip import GzipFile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import HTTPRedirectHandler, OpenerDirector, Request, build_opener

from ..sitemaps.limits import URL_SCHEMES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from http.client import HTTPMessage

    #: (the URL that names or redirects to a file, the file's URL) -> why it may not be
    #: fetched, or None: the caller's rule (the audit's, that nothing off the origin is).
    FetchRule = Callable[[str, str], str | None]

_CHUNK = 64 * 1024
_RAW_SLACK = 1024 * 1024  # raw bytes allowed past max_bytes: gzip headers and deflate blocks
_GZIP_MAGIC = b"\x1f\x8b"


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class _Unreadable(Exception):
    """A file that cannot be read; ``str`` says why. ``kind`` tells whose fault that is:
    ``"status"`` the server answered with an error (an HTTP status, a refused redirect),
    ``"missing"`` no local file of that name, ``"failed"`` the reading itself failed (a
    network error, a timeout, a file that is no regular file or may not be read), so
    nothing can be said about the file."""

    def __init__(self, why: str, kind: str) -> None:
        super().__init__(why)
        self.kind = kind


class _BadGzip(Exception):
    """Gzip data that cannot be decompressed."""


class _TooLarge(Exception):
    """More uncompressed bytes than the limit; ``line`` is where the limit was passed, 0
    when the stored (raw) bytes alone are too many."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _Source:
    """A raw byte stream that turns I/O failures and a passed deadline into _Unreadable,
    and stops past ``limit`` raw bytes: gzip data that long cannot hold a file within the
    limit (deflate adds a few bytes per 64 KiB), whatever tricks it plays (empty members)."""

    def __init__(self, stream: IO[bytes], timeout: float | None, what: str, limit: int) -> None:
        self._stream = stream
        # Over HTTP, one read returns what one receive brings (read1), so the deadline is
        # checked between receives: a server that trickles a byte at a time stays within
        # the time limit (read would wait for the whole chunk, one byte per socket timeout).
        self._read = stream.read if timeout is None else getattr(stream, "read1", stream.read)
        self._timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._what = what
        self._limit = limit
        self._size = 0

    def read(self, size: int = -1, /) -> bytes:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise _Unreadable(
                f"the {self._what} took more than {self._timeout:g} s (timeout)", "failed"
            )
        try:
            data = self._read(size if size > 0 else _CHUNK)
        except (OSError, http.client.HTTPException) as exc:
            raise _Unreadable(
                f"the {self._what} failed: {_cause(exc, self._timeout)}", "failed"
            ) from None
        self._size += len(data)
        if self._size > self._limit:
            raise _TooLarge(0)
        return data

    def close(self) -> None:
        self._stream.close()


class _Body:
    """The uncompressed bytes of one file, decompressed as they are read (gzip is detected
    by its magic number, whatever the name), at most ``limit`` of them: one byte more
    raises :class:`_TooLarge`, so a gzip bomb costs one chunk of memory."""

    def __init__(self, source: _Source, limit: int) -> None:
        self._source = source
        first = source.read(2)
        while len(first) < 2:
            more = source.read(2 - len(first))
            if not more:
                break
            first += more
        self.gzipped = first == _GZIP_MAGIC
        self._pending = b"" if self.gzipped else first
        self._stream: _Readable = (
            GzipFile(fileobj=_Prefixed(first, source), mode="rb") if self.gzipped else source
        )
        self._limit = limit
        self.size = 0
        self._lines = 0

    def read(self, size: int = -1, /) -> bytes:
        if self._pending:
            data, self._pending = self._pending, b""
        else:
            try:
                data = self._stream.read(size if size > 0 else _CHUNK)
            except (OSError, EOFError, zlib.error) as exc:
                raise _BadGzip(str(exc) or type(exc).__name__) from None
        room = self._limit - self.size
        self.size += len(data)
        if self.size > self._limit:
            raise _TooLarge(self._lines + data[: room + 1].count(b"\n") + 1)
        self._lines += data.count(b"\n")
        return data

    def head(self, size: int = _CHUNK) -> bytes:
        """The first bytes, kept to be read again (for sniffing the format)."""
        data = b""
        while len(data) < size and (more := self.read(size - len(data))):
            data += more
        self._pending = data
        self.size -= len(data)
        self._lines -= data.count(b"\n")
        return data

    def drain(self) -> None:
        """Read to the end, so a file that stopped parsing early is still measured (G2)."""
        while self.read(_CHUNK):
            pass


class _Prefixed:
    def __init__(self, prefix: bytes, rest: _Readable) -> None:
        self._prefix = prefix
        self._rest = rest

    def read(self, size: int = -1, /) -> bytes:
        if self._prefix:
            data, self._prefix = self._prefix, b""
            return data
        return self._rest.read(size)

    def seek(self, offset: int, /) -> object:  # part of GzipFile's reader protocol, never called
        raise OSError("not seekable")


class _HttpOnlyRedirects(HTTPRedirectHandler):
    """Follow redirects to http(s) only (urllib would also follow one to ftp:), and, with
    ``rule`` (the URL redirecting, the target -> why not, or None), only where it allows."""

    def __init__(self, rule: FetchRule | None = None) -> None:
        super().__init__()
        self.rule = rule

    def redirect_request(
        self, req: Request, fp: IO[bytes], code: int, msg: str, headers: HTTPMessage, newurl: str
    ) -> Request | None:
        if urlsplit(newurl).scheme.lower() not in URL_SCHEMES:
            raise HTTPError(
                req.full_url,
                code,
                f"redirect to a non-HTTP URL refused: {newurl[:200]}",
                headers,
                fp,
            )
        refusal = self.rule(req.full_url, newurl) if self.rule is not None else None
        if refusal is not None:
            raise HTTPError(
                req.full_url, code, f"to {newurl[:200]}, not followed: {refusal}", headers, fp
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open_file(path: str, raw_limit: int) -> _Source:
    """A local file as a :class:`_Source` of at most ``raw_limit`` raw bytes. Only a
    regular file is opened: a FIFO would block, a device never end."""
    try:
        mode = Path(path).stat().st_mode
        if stat.S_ISDIR(mode):
            raise _Unreadable("a folder, not a file", "missing")
        if not stat.S_ISREG(mode):
            raise _Unreadable("not a regular file", "failed")
        return _Source(Path(path).open("rb"), None, "reading", raw_limit)
    except (FileNotFoundError, NotADirectoryError):
        raise _Unreadable("no such file", "missing") from None
    except PermissionError:
        raise _Unreadable("permission denied", "failed") from None
    except OSError as exc:
        raise _Unreadable(exc.strerror or str(exc), "failed") from None


def _cause(exc: BaseException, timeout: float | None) -> str:
    """Why a fetch failed without an HTTP answer, in words (urllib wraps most causes in a
    URLError whose ``reason`` is the socket's exception)."""
    reason: object = exc.reason if isinstance(exc, URLError) else exc
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, ConnectionResetError):
        return "connection reset by the server"
    if isinstance(reason, socket.gaierror):
        return f"unknown host ({reason.strerror or reason})"
    if isinstance(reason, TimeoutError):
        within = f" within {timeout:g} s" if timeout is not None else ""
        return f"no answer{within} (timeout)"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed: {getattr(reason, 'verify_message', None) or reason.reason or reason}"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


def _http_opener(rule: FetchRule | None = None) -> OpenerDirector:
    """The opener for :func:`_open_url`: redirects to http(s) only, and where ``rule``
    allows."""
    return build_opener(_HttpOnlyRedirects(rule))


def _open_url(opener: OpenerDirector, url: str, timeout: float, raw_limit: int) -> _Source:
    """An http(s) URL as a :class:`_Source`: ``timeout`` seconds in all, at most ``raw_limit``
    raw bytes."""
    request = Request(
        url,
        headers={"User-Agent": "scrapy-sitemapgen-validate", "Accept-Encoding": "identity"},
    )
    try:
        response = opener.open(request, timeout=timeout)
    except HTTPError as exc:
        exc.close()
        raise _Unreadable(f"HTTP {exc.code} {exc.reason}", "status") from None
    except (URLError, OSError, http.client.HTTPException, ValueError) as exc:
        raise _Unreadable(_cause(exc, timeout), "failed") from None
    return _Source(response, timeout, "download", raw_limit)


def _lines(body: _Body) -> Iterator[tuple[int, bytes]]:
    """(1-based number, bytes without the line end) for each line of ``body``."""
    number = 0
    parts: list[bytes] = []
    while chunk := body.read(_CHUNK):
        pieces = chunk.split(b"\n")
        if len(pieces) == 1:
            parts.append(chunk)
            continue
        parts.append(pieces[0])
        for piece in [b"".join(parts), *pieces[1:-1]]:
            number += 1
            yield number, piece.removesuffix(b"\r")
        parts = [pieces[-1]]
    rest = b"".join(parts)
    if rest:
        yield number + 1, rest.removesuffix(b"\r")
