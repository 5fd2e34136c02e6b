"""Streaming XML for urlsets and sitemap indexes, split at the protocol limits.

Pure: the writer never opens a file itself. It asks ``open_sink(name)`` for a
:class:`Sink` (a binary file, or anything with ``write`` and ``close``) and closes what it
gets, so the caller decides where bytes land (a staging folder, memory in
tests) and the same code serves the crawl, the offline build and the benchmarks. The
files' names come from :mod:`.naming`, which also tells delivery which names are ours.
"""

from __future__ import annotations

import functools
import hashlib
import re
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .limits import (
    DEFAULT_GZIP_BACKEND,
    DEFAULT_GZIP_LEVEL,
    DEFAULT_GZIP_LEVELS,
    IMAGE_NS,
    MAX_BYTES_PER_SITEMAP,
    MAX_LOC_LENGTH,
    MAX_NEWS_PER_SITEMAP,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
    XML_FORBIDDEN_CHARS,
    XML_SPECIAL_CHARS,
)
from .naming import index_name, news_name, text_name, urlset_name

if TYPE_CHECKING:
    from types import ModuleType

    from .facts import UrlFacts, Video

__all__ = [
    "DEFAULT_GZIP_BACKEND",
    "DEFAULT_GZIP_LEVEL",
    "DEFAULT_GZIP_LEVELS",
    "ENTRY_TOO_LARGE",
    "GZIP_BACKENDS",
    "OriginOutput",
    "WriterOptions",
    "WrittenFile",
    "checked_loc",
    "escape",
    "loc_problem",
    "url_entry",
    "write_all",
    "write_index",
    "write_origin",
    "write_text",
    "write_urlsets",
]


class Sink(Protocol):
    """Where a file's bytes go: a binary file opened unbuffered, a ``BytesIO``, or anything
    else with ``write`` (which, as ``os.write``, may take part of what it is given and say
    how much) and ``close``."""

    def write(self, data: bytes | memoryview, /) -> int | None: ...

    def close(self) -> None: ...


OpenSink = Callable[[str], Sink]
OnSkip = Callable[[str, str], None]

_XML_DECL = b'<?xml version="1.0" encoding="UTF-8"?>\n'
# Every extension namespace is declared on every urlset (P14, G7): the writer streams and
# cannot know in advance whether a later entry has images or videos.
_URLSET_OPEN = (
    _XML_DECL
    + (
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}" xmlns:video="{VIDEO_NS}"'
        f' xmlns:news="{NEWS_NS}" xmlns:xhtml="{XHTML_NS}">\n'
    ).encode()
)
_URLSET_CLOSE = b"</urlset>\n"
_INDEX_OPEN = _XML_DECL + f'<sitemapindex xmlns="{SITEMAP_NS}">\n'.encode()
_INDEX_CLOSE = b"</sitemapindex>\n"

_FORBIDDEN_RE = re.compile(XML_FORBIDDEN_CHARS)
_SPECIAL_RE = re.compile(XML_SPECIAL_CHARS)
_IMAGES_BETWEEN = "</image:loc></image:image><image:image><image:loc>"

#: Deflate implementations by name (which one is the default, and at what level, is in
#: :mod:`.limits`). Either way a file is one gzip member with no name and no time (wbits
#: 31), so a run repeated on one machine gives the same bytes.
GZIP_BACKENDS: dict[str, ModuleType] = {"zlib": zlib}
if DEFAULT_GZIP_BACKEND == "zlib-ng":  # the extra ``fast`` is installed
    from zlib_ng import zlib_ng

    GZIP_BACKENDS["zlib-ng"] = zlib_ng


def escape(text: str) -> str:
    """XML-escape all five entities (P1) after removing characters XML 1.0 forbids.

    For free text only: a ``<loc>`` with such a character is refused, not altered (see
    :func:`write_origin`), because removing a character from a URL changes the page named.
    """
    if text.isascii() and text.isprintable():  # most text; nothing to remove (see _plain)
        return _escape_five(text) if _has_special(text) else text
    if _SPECIAL_RE.search(text) is None:
        return text
    if _FORBIDDEN_RE.search(text):
        text = _FORBIDDEN_RE.sub("", text)
    return _escape_five(text)


def _escape_five(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _plain(text: str) -> bool:
    """True when :func:`escape` leaves ``text`` as it is. Every character XML forbids is a
    control character or not ASCII, so in printable ASCII only the five specials are left
    to look for: five scans in C, faster than one by ``re``. Plainness is a property of
    each character: strings joined are plain when each is."""
    return text.isascii() and text.isprintable() and not _has_special(text)


def _has_special(text: str) -> bool:
    return "&" in text or "<" in text or ">" in text or '"' in text or "'" in text


@dataclass(frozen=True, slots=True)
class WriterOptions:
    """Limits and format of one origin's set; the defaults are the protocol maxima."""

    max_urls: int = MAX_URLS_PER_SITEMAP  # P7
    max_bytes: int = MAX_BYTES_PER_SITEMAP  # P7, G2: counted on the uncompressed bytes
    max_index_entries: int = MAX_SITEMAPS_PER_INDEX  # P8
    gzip: bool = True
    compresslevel: int = DEFAULT_GZIP_LEVEL
    gzip_backend: str = DEFAULT_GZIP_BACKEND


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """One file of the set. ``size`` is the uncompressed byte count the limits apply to;
    ``sha256`` is the hash of those uncompressed bytes, what "this file changed" means."""

    name: str
    entries: int
    size: int
    sha256: str = field(default="", compare=False)


@dataclass(slots=True)
class OriginOutput:
    """What :func:`write_origin` wrote for one origin, in writing order."""

    sitemaps: list[WrittenFile] = field(default_factory=list)
    news: list[WrittenFile] = field(default_factory=list)
    texts: list[WrittenFile] = field(default_factory=list)
    indexes: list[WrittenFile] = field(default_factory=list)

    @property
    def files(self) -> list[WrittenFile]:
        """Every file, in the order they may be published: the index last."""
        return [*self.sitemaps, *self.news, *self.texts, *self.indexes]

    @property
    def url_count(self) -> int:
        return sum(f.entries for f in self.sitemaps)


# Rendered bytes are handed to a thread in pieces of about this size: compressing and
# hashing them there (zlib and hashlib release the GIL on large buffers) overlaps with
# rendering the next entries here, and the pieces are large enough that the hand-over
# costs nothing per entry. At most _IN_FLIGHT pieces wait, so memory stays bounded.
_PIECE_BYTES = 512 * 1024
_IN_FLIGHT = 2
# A file's first bytes up to this many are compressed in the writer's own thread: the
# thread and its hand-overs cost more than compressing a small file (a broad crawl's many
# origins are each a few small files), and are started only for a file that grows past it.
_INLINE_BYTES = _PIECE_BYTES


def write_all(sink: Sink, data: bytes) -> None:
    """``data`` into ``sink``, whole: an unbuffered file (a staging file's) may take part
    of it, as ``os.write`` does, and says how much; the rest goes in further calls."""
    written = sink.write(data)
    if written is not None and written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[sink.write(view) :]


class _SplitFile:
    """One output file being written: compression and hashing run in ``pool``'s one
    thread, in order. Its entries and bytes are counted by :func:`_split`, which decides
    where files end."""

    __slots__ = (
        "_deflate",
        "_handed",
        "_hash",
        "_held",
        "_jobs",
        "_pool",
        "_raw",
        "_start_pool",
        "name",
    )

    def __init__(
        self,
        name: str,
        sink: Sink,
        options: WriterOptions,
        head: bytes,
        start_pool: Callable[[], ThreadPoolExecutor],
    ) -> None:
        self.name = name
        self._raw = sink
        backend = GZIP_BACKENDS[options.gzip_backend]
        self._deflate = (
            backend.compressobj(options.compresslevel, backend.DEFLATED, 31)  # 31: gzip framing
            if name.endswith(".gz")
            else None
        )
        self._hash = hashlib.sha256()
        self._pool: ThreadPoolExecutor | None = None
        self._start_pool = start_pool
        self._handed = 0
        #: The output of the pieces compressed inline, not yet written: a small file (a
        #: broad crawl's every file) is written in one call at its finish, not one call
        #: for gzip's header, one per piece and one for the flush.
        self._held: list[bytes] | None = []
        self._jobs: deque[Future[None]] = deque()
        self._hand_over(head)

    def _hand_over(self, piece: bytes) -> None:
        if self._pool is None:  # the same pieces in the same order, in this thread
            self._handed += len(piece)
            if self._handed < _INLINE_BYTES:
                self._consume(piece)
                return
            self._write_held()  # before any of the thread's writes
            self._pool = self._start_pool()
        while len(self._jobs) >= _IN_FLIGHT:
            self._jobs.popleft().result()  # a failed write raises here, in the writer
        self._jobs.append(self._pool.submit(self._consume, piece))

    def _consume(self, piece: bytes) -> None:
        out = self._deflate.compress(piece) if self._deflate is not None else piece
        if out:  # deflate keeps a small file's pieces to itself until the flush
            if self._held is not None:
                self._held.append(out)
            else:
                write_all(self._raw, out)
        self._hash.update(piece)

    def _write_held(self, last: bytes = b"") -> None:
        held, self._held = self._held, None
        if held is not None:
            held.append(last)
            write_all(self._raw, b"".join(held))
        elif last:
            write_all(self._raw, last)

    def add(self, chunks: list[bytes]) -> None:
        """Entries, one chunk each, handed over as one piece."""
        self._hand_over(b"".join(chunks))

    def finish(self, tail: bytes, entries: int, size: int) -> WrittenFile:
        self._hand_over(tail)
        while self._jobs:
            self._jobs.popleft().result()
        self._write_held(self._deflate.flush() if self._deflate is not None else b"")
        self._raw.close()
        return WrittenFile(self.name, entries, size, self._hash.hexdigest())


def _split(
    chunks: Iterable[bytes],
    *,
    head: bytes,
    tail: bytes,
    max_entries: int,
    max_bytes: int,
    name_for: Callable[[int], str],
    open_sink: OpenSink,
    options: WriterOptions,
) -> Iterator[WrittenFile]:
    """Stream chunks into files, starting a new file *before* either limit would be passed.

    The current file's counts are kept here, in locals, and its entries handed to it a
    piece at a time: this loop runs once per URL, a method call per entry cost as much
    as the rest of it."""
    current: _SplitFile | None = None
    number = 0
    limit = max_bytes - len(tail)
    piece: list[bytes] = []  # the current file's entries not yet handed to it
    piece_size = 0
    entries = size = 0  # the current file's, the piece's included (size: head too)
    pool: ThreadPoolExecutor | None = None

    def start_pool() -> ThreadPoolExecutor:
        nonlocal pool
        if pool is None:
            pool = ThreadPoolExecutor(1, thread_name_prefix="sitemapgen-compress")
        return pool

    # No compression thread unless a file grows past _INLINE_BYTES: a broad crawl's
    # origins are each a few small files, compressed inline.
    try:
        for chunk in chunks:
            length = len(chunk)
            if current is not None and (entries >= max_entries or size + length > limit):
                if piece:
                    current.add(piece)
                yield current.finish(tail, entries, size + len(tail))
                current = None
            if current is None:
                number += 1
                name = name_for(number)
                current = _SplitFile(name, open_sink(name), options, head, start_pool)
                piece, piece_size, entries, size = [], 0, 0, len(head)
            piece.append(chunk)
            piece_size += length
            entries += 1
            size += length
            if piece_size >= _PIECE_BYTES:
                current.add(piece)
                piece, piece_size = [], 0
        if current is not None:
            if piece:
                current.add(piece)
            yield current.finish(tail, entries, size + len(tail))
    finally:
        if pool is not None:
            pool.shutdown()


def _video(video: Video) -> str:
    parts = [
        f"<video:video><video:thumbnail_loc>{escape(video.thumbnail_loc)}</video:thumbnail_loc>"
        f"<video:title>{escape(video.title)}</video:title>"
        f"<video:description>{escape(video.description)}</video:description>"
    ]
    if video.content_loc:
        parts.append(f"<video:content_loc>{escape(video.content_loc)}</video:content_loc>")
    if video.player_loc:
        parts.append(f"<video:player_loc>{escape(video.player_loc)}</video:player_loc>")
    if video.duration is not None:
        parts.append(f"<video:duration>{video.duration}</video:duration>")
    if video.publication_date:
        parts.append(f"<video:publication_date>{video.publication_date}</video:publication_date>")
    parts.append("</video:video>")
    return "".join(parts)


def _url_chunk(facts: UrlFacts, loc: str) -> bytes:
    """The ``<url>`` element of ``facts``, whose ``loc`` escaped is ``loc``
    (:func:`_checked_chunks` has looked at the loc already, and escapes it on the way)."""
    # One string grown in place (CPython appends to a string nothing else holds), not a
    # list joined: this runs once per URL.
    lastmod, changefreq, priority = facts.lastmod, facts.changefreq, facts.priority
    text = (
        f"<url><loc>{loc}</loc>"
        f"{f'<lastmod>{lastmod}</lastmod>' if lastmod else ''}"
        f"{f'<changefreq>{changefreq}</changefreq>' if changefreq else ''}"
        f"{f'<priority>{priority}</priority>' if priority else ''}"
    )
    for alternate in facts.alternates:
        text += (
            f'<xhtml:link rel="alternate" hreflang="{escape(alternate.hreflang)}"'
            f' href="{escape(alternate.href)}"/>'
        )
    images = facts.images
    if images and _plain("".join(images)):  # most: nothing to escape, one join for all
        text += f"<image:image><image:loc>{_IMAGES_BETWEEN.join(images)}</image:loc></image:image>"
    else:
        for image in images:
            text += f"<image:image><image:loc>{escape(image)}</image:loc></image:image>"
    for video in facts.videos:
        text += _video(video)
    return (text + "</url>\n").encode()


def _news_chunk(facts: UrlFacts, loc: str) -> bytes:
    news = facts.news
    assert news is not None
    return (
        f"<url><loc>{loc}</loc><news:news><news:publication>"
        f"<news:name>{escape(news.publication_name)}</news:name>"
        f"<news:language>{news.publication_language}</news:language></news:publication>"
        f"<news:publication_date>{news.publication_date}</news:publication_date>"
        f"<news:title>{escape(news.title)}</news:title></news:news></url>\n"
    ).encode()


#: The skip of an entry larger than a whole file: rendered, then left out; the one skip
#: known only after the entry was handed to the writer.
ENTRY_TOO_LARGE = "entry_too_large"


def _checked_chunks(
    entries: Iterable[UrlFacts],
    scope: str,
    max_bytes: int,
    on_skip: OnSkip,
    render: Callable[[UrlFacts, str], bytes] = _url_chunk,
) -> Iterator[bytes]:
    """Render entries, refusing any that would make the file invalid (never alter a loc).

    ``render(facts, loc)`` is handed the loc escaped (P1): the look at the loc that finds a
    forbidden character also tells whether :func:`escape` would have more to do than the
    five entities, so the loc is looked at once, not twice."""
    room = max_bytes - len(_URLSET_OPEN) - len(_URLSET_CLOSE)
    for facts in entries:
        loc = facts.loc
        # Every normalised loc: in scope, short enough, printable ASCII (escape's first road).
        if (
            loc.startswith(scope)
            and len(loc) <= MAX_LOC_LENGTH
            and loc.isascii()
            and loc.isprintable()
        ):
            chunk = render(facts, _escape_five(loc) if _has_special(loc) else loc)
        else:
            problem = loc_problem(loc, scope)
            if problem is not None:
                on_skip(problem, loc)
                continue
            chunk = render(facts, escape(loc))
        if len(chunk) > room:
            on_skip(ENTRY_TOO_LARGE, loc)
        else:
            yield chunk


def loc_problem(loc: str, scope: str) -> str | None:
    """Why ``loc`` cannot be written in a sitemap of the origin ``scope`` (the reason
    skipped under), or None: the checks a loc meets before its entry is rendered."""
    if not loc.startswith(scope):
        return "outside_origin"  # P12: every URL shares the sitemap's origin
    if len(loc) > MAX_LOC_LENGTH:
        return "url_too_long"  # P3
    if not (loc.isascii() and loc.isprintable()) and _FORBIDDEN_RE.search(loc):
        return "bad_url"
    return None


def checked_loc(loc: str, scope: str) -> bool:
    """Whether ``loc`` meets :func:`loc_problem`'s checks, as the writer tells it: most
    locs on its first road."""
    if loc.startswith(scope) and len(loc) <= MAX_LOC_LENGTH and loc.isascii() and loc.isprintable():
        return True
    return loc_problem(loc, scope) is None


def write_urlsets(
    entries: Iterable[UrlFacts],
    *,
    scope: str,
    name_for: Callable[[int], str],
    open_sink: OpenSink,
    options: WriterOptions,
    on_skip: OnSkip | None = None,
) -> list[WrittenFile]:
    """Urlsets of ``entries`` (in order, of the origin ``scope``), split at the limits,
    the ``n``-th named ``name_for(n)``: one window of a large origin (:mod:`..publish.split`),
    written as :func:`write_origin` writes an origin's urlsets."""
    skip: OnSkip = on_skip if on_skip is not None else (lambda reason, loc: None)
    return list(
        _split(
            _checked_chunks(entries, scope, options.max_bytes, skip),
            head=_URLSET_OPEN,
            tail=_URLSET_CLOSE,
            max_entries=options.max_urls,
            max_bytes=options.max_bytes,
            name_for=name_for,
            open_sink=open_sink,
            options=options,
        )
    )


def write_index(
    files: Iterable[WrittenFile],
    *,
    base_url: str,
    lastmod: str | Callable[[WrittenFile], str],
    open_sink: OpenSink,
    options: WriterOptions,
) -> list[WrittenFile]:
    """The index(es) listing ``files``, published under ``base_url`` (see
    :func:`write_origin`)."""
    base = escape(base_url)
    lastmod_of = lastmod if callable(lastmod) else (lambda written: lastmod)
    return list(
        _split(
            (
                f"<sitemap><loc>{base}{f.name}</loc><lastmod>{lastmod_of(f)}</lastmod></sitemap>\n".encode()
                for f in files
            ),
            head=_INDEX_OPEN,
            tail=_INDEX_CLOSE,
            max_entries=options.max_index_entries,
            max_bytes=options.max_bytes,
            name_for=index_name,
            open_sink=open_sink,
            options=options,
        )
    )


def _section_name(number: int, *, gzip: bool, section: str) -> str:
    return urlset_name(number, gzip, section)


def write_origin(
    entries: Iterable[UrlFacts],
    *,
    scope: str,
    base_url: str,
    lastmod: str | Callable[[WrittenFile], str],
    open_sink: OpenSink,
    options: WriterOptions | None = None,
    on_skip: OnSkip | None = None,
    news: Iterable[UrlFacts] = (),
    sections: Iterable[tuple[str, Iterable[UrlFacts]]] = (),
) -> OriginOutput:
    """Write one origin's urlsets, its news sitemaps, then the index(es) listing them all.

    ``entries`` must come in the order they should appear (the store gives URL order), all
    of one origin: ``scope`` is that origin's root, and an entry outside it is skipped (P12).
    ``base_url`` is the folder URL the files will be published under (ends with ``/``);
    ``lastmod`` is the W3C time written for every sitemap in the index (P10), or a function
    giving it per file (to keep the previous time of a file whose content is unchanged). Nothing is
    opened for an origin with no writable entry: an empty urlset or index is schema-invalid.
    ``news`` are the entries for Google News sitemaps (already filtered by age): written
    into ``sitemap-news-N`` files of at most 1,000 entries, listed in the same index.
    ``sections`` are further ``(name, entries)`` sequences (SITEMAPGEN_SECTIONS), each
    written after ``entries`` into its own ``sitemap-<name>-N`` files, split on its own.
    """
    options = options or WriterOptions()
    skip: OnSkip = on_skip if on_skip is not None else (lambda reason, loc: None)
    output = OriginOutput()
    output.sitemaps.extend(
        write_urlsets(
            entries,
            scope=scope,
            name_for=lambda n: urlset_name(n, options.gzip),
            open_sink=open_sink,
            options=options,
            on_skip=skip,
        )
    )
    for section, section_entries in sections:
        output.sitemaps.extend(
            _split(
                _checked_chunks(section_entries, scope, options.max_bytes, skip),
                head=_URLSET_OPEN,
                tail=_URLSET_CLOSE,
                max_entries=options.max_urls,
                max_bytes=options.max_bytes,
                name_for=functools.partial(_section_name, gzip=options.gzip, section=section),
                open_sink=open_sink,
                options=options,
            )
        )
    output.news.extend(
        _split(
            _checked_chunks(news, scope, options.max_bytes, skip, _news_chunk),
            head=_URLSET_OPEN,
            tail=_URLSET_CLOSE,
            max_entries=min(options.max_urls, MAX_NEWS_PER_SITEMAP),
            max_bytes=options.max_bytes,
            name_for=lambda n: news_name(n, options.gzip),
            open_sink=open_sink,
            options=options,
        )
    )
    output.indexes.extend(
        write_index(
            [*output.sitemaps, *output.news],
            base_url=base_url,
            lastmod=lastmod,
            open_sink=open_sink,
            options=options,
        )
    )
    return output


def _text_line(facts: UrlFacts, loc: str) -> bytes:
    return f"{facts.loc}\n".encode()  # a text sitemap's URL is not escaped (P11)


def write_text(
    entries: Iterable[UrlFacts],
    *,
    scope: str,
    open_sink: OpenSink,
    options: WriterOptions | None = None,
    on_skip: OnSkip | None = None,
) -> list[WrittenFile]:
    """Plain-text sitemaps (P11): one URL per line, UTF-8, nothing else, split at the same
    limits as the urlsets. Listed in no index: text sitemaps are submitted on their own."""
    options = options or WriterOptions()
    skip: OnSkip = on_skip if on_skip is not None else (lambda reason, loc: None)
    return list(
        _split(
            _checked_chunks(entries, scope, options.max_bytes, skip, _text_line),
            head=b"",
            tail=b"",
            max_entries=options.max_urls,
            max_bytes=options.max_bytes,
            name_for=lambda n: text_name(n, options.gzip),
            open_sink=open_sink,
            options=options,
        )
    )


def url_entry(facts: UrlFacts) -> bytes:
    """The ``<url>`` element a urlset holds for ``facts``: what "this URL's entry changed"
    compares (IndexNow's changed URLs)."""
    return _url_chunk(facts, escape(facts.loc))
