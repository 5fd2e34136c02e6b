"""The checker: :class:`Validator` and :func:`validate`, each rule a file can break."""

from __future__ import annotations

import io
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information

from ..sitemaps.limits import (
    ATOM_NS,
    MAX_BYTES_PER_SITEMAP,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
)
from ._io import (
    _RAW_SLACK,
    _BadGzip,
    _Body,
    _http_opener,
    _lines,
    _open_file,
    _open_url,
    _Source,
    _TooLarge,
    _Unreadable,
)
from ._schema import SCHEMA_DIR, _loc_problem, _qname, _schema_problems
from ._scope import (
    _P12_REASON,
    SourceError,
    _folder_targets,
    _Listing,
    _Place,
    _prefixes,
    _Scope,
    _Target,
    _target,
    source_path,
)
from ._textfile import UTF8_BOM, TextFile
from ._violations import (
    CheckIncomplete,
    InputError,
    Violation,
    _declared_entities,
    _doctype_violation,
    _index_of_indexes,
    _not_gzip,
    _one_line,
    _syntax_violation,
)
from ._xmlfile import FileState, close_root, free_previous, url_extras

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator
    from urllib.request import OpenerDirector

    from ._io import FetchRule


__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_TIMEOUT",
    "RAW_SLACK",
    "SCHEMA_DIR",
    "CheckIncomplete",
    "InputError",
    "SitemapFile",
    "Validator",
    "Violation",
    "validate",
]

#: Files one run opens at most (sources, listed sitemaps and robots.txt files together).
DEFAULT_MAX_FILES: Final = 1_000
#: Seconds an HTTP fetch may take in all (also the socket timeout of each read).
DEFAULT_TIMEOUT: Final = 30.0

_XSI_NS: Final = "http://www.w3.org/2001/XMLSchema-instance"
_LASTMOD: Final = f"{{{SITEMAP_NS}}}lastmod"
#: Raw bytes a stored file may have past the uncompressed limit (gzip headers and blocks):
#: what a downloader that fetches files for :meth:`Validator.check_data` may allow.
RAW_SLACK: Final = _RAW_SLACK

#: A file to check (what :meth:`Validator.file` and :meth:`Validator.check_data` give).
SitemapFile = _Target
_URL = f"{{{SITEMAP_NS}}}url"
_SITEMAP = f"{{{SITEMAP_NS}}}sitemap"
_LOC = f"{{{SITEMAP_NS}}}loc"
_VIDEO = f"{{{VIDEO_NS}}}video"
_NEWS = f"{{{NEWS_NS}}}news"
_MEDIA_LOCS = (f"{{{VIDEO_NS}}}content_loc", f"{{{VIDEO_NS}}}player_loc")

_OTHER_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_DECLARED_ENCODING_RE = re.compile(rb"^<\?xml\s[^>]*?encoding\s*=\s*[\"']([^\"']*)[\"']")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_LINE_COLUMN_RE = re.compile(r", line \d+, column (\d+)$")


def validate(
    sources: Iterable[str],
    *,
    base_url: str | None = None,
    max_bytes: int = MAX_BYTES_PER_SITEMAP,
    max_files: int = DEFAULT_MAX_FILES,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[Violation]:
    """Every violation in ``sources`` and the files they list, [] when all is valid.

    The in-process form of ``scrapy sitemapgen-validate``; see :class:`Validator`. Raises
    :class:`CheckIncomplete` when an input could not be checked (the command's exit
    status 2), so that an unreachable sitemap never passes for a valid one.
    """
    validator = Validator(
        base_url=base_url, max_bytes=max_bytes, max_files=max_files, timeout=timeout
    )
    violations = list(validator.check(sources))
    if validator.input_errors:
        raise CheckIncomplete(validator.input_errors, violations)
    return violations


# --- the checker --------------------------------------------------------------------------


class Validator:
    """Checks sources and everything they list; ``files`` and ``urls`` count what it read.

    ``base_url`` is where local sources are published: a folder URL ending in ``/`` (each
    file is ``base_url + its name``) or, for a single source, the file's own URL. With it,
    or over HTTP, P12 is checked against the file's URL; without it only for consistency.
    ``max_bytes`` is the uncompressed size limit (G2; 10,485,760 for the 2008 text),
    ``max_files`` the number of files opened at most, ``timeout`` the seconds one HTTP
    fetch may take.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        max_bytes: int = MAX_BYTES_PER_SITEMAP,
        max_files: int = DEFAULT_MAX_FILES,
        timeout: float = DEFAULT_TIMEOUT,
        on_entry: Callable[[str, str | None, str], None] | None = None,
        fetch_rule: FetchRule | None = None,
    ) -> None:
        if base_url is not None and _Place.of(base_url) is None:
            raise ValueError(f"base_url={base_url!r} is not an absolute http(s) URL")
        if max_bytes < 1 or max_files < 1 or timeout <= 0:
            raise ValueError("max_bytes, max_files and timeout must be positive")
        self.base_url = base_url
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.timeout = timeout
        #: Files read (urlsets, indexes, robots.txt, text sitemaps).
        self.files = 0
        #: The files read, in reading order (their names as reported).
        self.read_files: list[str] = []
        #: ``<url>`` entries (and text sitemap lines) read.
        self.urls = 0
        #: The Atom feeds read (a source, or named in a robots.txt: the changes feed, G1),
        #: by their names as reported: read as XML (a file that is not well-formed is a
        #: P1 violation), not checked as sitemaps.
        self.feeds: list[str] = []
        #: The inputs that could not be checked, in reading order: when there are any,
        #: the check is incomplete (the command exits with 2).
        self.input_errors: list[InputError] = []
        #: Files that are missing where they were named or listed (an HTTP error status, a
        #: local file that is not there), as (file, why): violations, and files not read.
        self.missing: list[tuple[str, str]] = []
        self._indexes: set[str] = set()  # locations read that were sitemap indexes
        self._opener: OpenerDirector | None = None
        self._opened: set[str] = set()
        self._limit_reported = False
        # (kind, loc) -> where it was first seen. Kinds are "url", "news" and "text": news
        # sitemaps repeat pages of the urlsets by design, and a text sitemap may be another
        # format of the same set, so each kind is deduplicated on its own.
        self._locs: dict[tuple[str, str], tuple[str, int]] = {}
        self._listed: dict[str, tuple[str, int]] = {}
        #: Called with (loc, lastmod as written or None, the file's name) for each URL a
        #: urlset or text sitemap lists within its scope (P12, P13): what a search engine
        #: would take from the file.
        self.on_entry = on_entry
        #: Which files another file names (or redirects to) may be fetched: called with
        #: (the URL naming it, its URL), it gives why not, or None. A source is always
        #: fetched. The audit command's (nothing off the source's origin); None: any.
        self.fetch_rule = fetch_rule

    def file(self, url: str) -> SitemapFile:
        """The file at the http(s) URL ``url``, announced by no other file (a source), for
        :meth:`check_data`."""
        if _Place.of(url) is None:
            raise SourceError(f"{url}: not an absolute http(s) URL")
        return _Target(url, url, url)

    def check_data(
        self, target: SitemapFile, data: bytes
    ) -> tuple[list[Violation], list[SitemapFile]]:
        """Check ``target``, whose bytes (as stored: gzip or not) someone else fetched,
        with the same bounded reading as :meth:`check`; its violations, and the files it
        lists (an index's sitemaps, a robots.txt's), not followed: the caller fetches them
        and checks each in turn. A file checked before gives nothing again."""
        if target.location in self._opened:
            return [], []
        self._opened.add(target.location)
        self.files += 1
        self.read_files.append(target.display)
        listed: list[_Target] = []
        source = _Source(io.BytesIO(data), None, "download", self.max_bytes + _RAW_SLACK)
        violations = [
            v._replace(message=_one_line(v.message)) for v in self._read(target, source, listed)
        ]
        return violations, listed

    def unfetched(self, target: SitemapFile, why: str) -> Violation:
        """The violation of a file that could not be fetched (an HTTP status, no answer)."""
        violation = self._missing(target, why)
        return violation._replace(message=_one_line(violation.message))

    def check(self, sources: Iterable[str]) -> Iterator[Violation]:
        """Violations of each source and of every file it lists, in reading order.

        A source is a file, a folder (its robots.txt and ``sitemap*`` files, in every
        folder of its tree) or a URL. Raises :class:`SourceError` (a ValueError) for a
        source that is no local path, ``file://`` URI or http(s) URL.

        An HTTP error status is a violation: P15 for a source (a sitemap is announced by
        its URL), P8 for a sitemap an index lists (P15 for one a robots.txt lists), as is
        a listed local file that is missing. What says nothing about the files (a
        network error, a timeout, a missing local source, a file that may not be read) is
        an :class:`InputError` in :attr:`input_errors` instead.
        """
        for source in sources:
            for target in self._targets(source):
                for violation in self._follow(target):
                    # One line each, whatever libxml2 or the file put in the message.
                    yield violation._replace(message=_one_line(violation.message))

    def _targets(self, source: str) -> list[_Target]:
        path = source_path(source)
        if path is None or not path.is_dir():
            return [_target(source, self.base_url)]
        if self.base_url is not None and not self.base_url.endswith("/"):
            raise SourceError(f"{source}: for a folder, base_url must be a folder URL ending in /")
        targets, unreadable = _folder_targets(path, source, self.base_url)
        for folder, why in unreadable:
            self._input_error(folder, f"cannot be read: {why}")
        if not targets and not unreadable:
            self._input_error(
                source,
                "nothing to check: no robots.txt and no sitemap*.xml, .xml.gz, .txt or .txt.gz "
                "file in this folder or below",
            )
        return targets

    def _input_error(self, source: str, message: str) -> None:
        self.input_errors.append(InputError(source, _one_line(message)))

    # -- targets and reading --

    def _open(self, target: _Target) -> _Source:
        raw_limit = self.max_bytes + _RAW_SLACK
        if target.local:
            return _open_file(target.location, raw_limit)
        if self._opener is None:
            self._opener = _http_opener(self.fetch_rule)
        return _open_url(self._opener, target.location, self.timeout, raw_limit)

    def _follow(self, target: _Target) -> Iterator[Violation]:
        if target.location in self._opened:
            return
        if len(self._opened) >= self.max_files:
            if not self._limit_reported:
                self._limit_reported = True
                where, line, rule, _ = target.listed or (target.display, 0, "P15", "")
                yield Violation(
                    where,
                    line,
                    rule,
                    f"{target.display} and the files listed after it were not checked: "
                    f"more than {self.max_files:,} files (raise --max-files)",
                )
            return
        self._opened.add(target.location)
        listing = target.listed
        if self.fetch_rule is not None and listing is not None and not target.local:
            refusal = self.fetch_rule(listing.source, target.location)
            if refusal is not None:
                if target.in_index:  # off the index's site: its P9 violation says so
                    self.missing.append((target.display, f"not fetched: {refusal}"))
                else:
                    yield self._missing(target, refusal)
                return
        try:
            source = self._open(target)
        except _Unreadable as exc:
            yield from self._unreadable(target, exc)
            return
        self.files += 1
        self.read_files.append(target.display)
        listed: list[_Target] = []
        yield from self._read(target, source, listed)
        for child in listed:
            yield from self._follow(child)

    def _read(self, target: _Target, source: _Source, listed: list[_Target]) -> Iterator[Violation]:
        try:
            body = _Body(source, self.max_bytes)
            yield from self._check_body(target, body, listed)
        except _Unreadable as exc:
            yield from self._unreadable(target, exc)
        except _BadGzip as exc:
            yield Violation(target.display, 0, "P1", f"not a valid gzip file: {exc}")
        except _TooLarge as exc:  # the stored bytes alone, before the first line
            yield self._too_large(target, exc)
        finally:
            source.close()

    def _unreadable(self, target: _Target, exc: _Unreadable) -> Iterator[Violation]:
        """A violation when the file is missing where it was announced or listed (an HTTP
        error status, a listed local file that is not there); else an input error."""
        if exc.kind == "status" or (exc.kind == "missing" and target.listed is not None):
            yield self._missing(target, str(exc))
            return
        verb = "cannot be read" if target.local else "cannot be fetched"
        where = ""
        if target.listed is not None:
            where = f" (listed at {target.listed.source}:{target.listed.line})"
        self._input_error(target.display, f"{verb}: {exc}{where}")

    def _missing(self, target: _Target, why: str) -> Violation:
        self.missing.append((target.display, _one_line(why)))
        if target.listed is None:
            return Violation(target.display, 0, "P15", f"cannot be read: {why}")
        source, line, rule, url = target.listed
        if target.local:
            return Violation(
                source,
                line,
                rule,
                f"{url[:200]} is listed, but {target.display} cannot be read: {why}",
            )
        return Violation(source, line, rule, f"{url[:200]} is listed, but cannot be fetched: {why}")

    def _check_body(
        self, target: _Target, body: _Body, listed: list[_Target]
    ) -> Iterator[Violation]:
        try:
            head = body.head()
        except _TooLarge as exc:
            yield self._too_large(target, exc)
            return
        path = target.location if target.local else urlsplit(target.location).path
        name = PurePosixPath(path).name
        markup = head.removeprefix(UTF8_BOM).lstrip().startswith(b"<")
        if not head:
            yield Violation(target.display, 0, "P1", "the file is empty")
        elif name.endswith(".gz") and not body.gzipped:
            yield Violation(target.display, 0, "P1", _not_gzip(head))
        elif head.startswith(_OTHER_BOMS):
            yield Violation(
                target.display, 1, "P1", "the file is UTF-16 or UTF-32; a sitemap is UTF-8"
            )
        elif markup or name.removesuffix(".gz").endswith(".xml"):
            yield from self._check_xml(target, body, head, listed)
        elif name == "robots.txt" and target.listed is None:  # a listed one is no robots.txt,
            yield from self._check_robots(target, body, listed)  # so robots never chain
        else:
            yield from self._check_text(target, body)

    def _too_large(self, target: _Target, exc: _TooLarge) -> Violation:
        if exc.line:
            what = f"more than {self.max_bytes:,} bytes uncompressed (from line {exc.line:,} on)"
        else:
            what = (
                f"more than {self.max_bytes + _RAW_SLACK:,} bytes as stored, too many for "
                f"{self.max_bytes:,} bytes uncompressed"
            )
        return Violation(
            target.display,
            exc.line,
            "G2",
            f"{what}; split the sitemap and list the parts in an index; not checked further",
        )

    # -- XML: urlset and index --

    def _check_xml(
        self, target: _Target, body: _Body, head: bytes, listed: list[_Target]
    ) -> Iterator[Violation]:
        declared = _DECLARED_ENCODING_RE.match(head.removeprefix(UTF8_BOM))
        if declared and declared[1].lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            encoding = declared[1].decode("ascii", "replace")
            yield Violation(
                target.display, 1, "P1", f"declared encoding {encoding!r}; a sitemap is UTF-8"
            )
        etree.clear_error_log()
        events = etree.iterparse(
            body,
            events=("start", "end"),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            encoding="utf-8",  # read as UTF-8 whatever is declared, so other bytes are errors
            remove_comments=True,
            remove_pis=True,
        )
        depth = 0
        state: FileState | None = None
        feed = False  # an Atom feed: read to its end for well-formedness, nothing more
        try:
            for event, element in events:
                if event == "start":
                    depth += 1
                    if depth == 1:
                        feeds = len(self.feeds)
                        state = yield from self._open_root(target, element, head)
                        if state is None:
                            if len(self.feeds) == feeds:
                                return
                            feed = True
                    continue
                depth -= 1
                if feed:
                    if depth == 1:  # memory holds one entry, as for a urlset
                        element.clear(keep_tail=False)
                        while element.getprevious() is not None:
                            element.getparent().remove(element.getprevious())
                    continue
                assert state is not None
                if depth == 1:
                    yield from self._entry(state, element, listed)
                    yield from free_previous(state, element)
                elif depth == 0:
                    yield from close_root(state, element)
        except etree.XMLSyntaxError as exc:
            entities = _declared_entities(head) if state is None else []
            if entities:
                # A libxml2 that refuses the DOCTYPE's entities itself, before the root is
                # read (2.14's amplification limit, as lxml 6.2 bundles it), fails there;
                # the file breaks the same rule, and is reported the same way.
                yield _doctype_violation(target.display, head, entities, None)
            else:
                yield _syntax_violation(target.display, exc)
            try:
                body.drain()
            except _TooLarge as too_large:
                yield self._too_large(target, too_large)
        except _TooLarge as exc:
            yield self._too_large(target, exc)

    def _open_root(
        self, target: _Target, root: Any, head: bytes
    ) -> Generator[Violation, None, FileState | None]:
        """Check the root element; the state for its entries, or None to stop reading."""
        display = target.display
        docinfo = root.getroottree().docinfo
        dtd = docinfo.internalDTD
        entities = [entity.name for entity in dtd.iterentities()] if dtd is not None else []
        external = docinfo.system_url or docinfo.public_id
        if entities or external:
            yield _doctype_violation(display, head, entities, external)
            return None
        name, namespace = etree.QName(root).localname, etree.QName(root).namespace
        if (name, namespace) == ("feed", ATOM_NS) and (
            target.listed is None or target.listed[2] == "P15"
        ):
            # G1: an Atom feed given as it is, or named in a robots.txt, is read as one
            # (the changes feed); an index lists sitemaps only (P2 below).
            self.feeds.append(display)
            return None
        if name not in ("urlset", "sitemapindex"):
            yield Violation(
                display,
                root.sourceline,
                "P2",
                f"the root element is <{_qname(root.tag)}>, not <urlset> or <sitemapindex>; "
                "not checked further",
            )
            return None
        if namespace != SITEMAP_NS:
            yield Violation(
                display,
                root.sourceline,
                "G5",
                f'<{name}> must be in the namespace {SITEMAP_NS} (xmlns="{SITEMAP_NS}"), not in '
                f"{namespace or 'no namespace'}; not checked further",
            )
            return None
        is_index = name == "sitemapindex"
        if is_index:
            self._indexes.add(target.location)
        if is_index and target.listed is not None and target.in_index:
            source, line, _, _ = target.listed
            yield _index_of_indexes(source, line, display)
            return None
        for attribute in root.attrib:
            if etree.QName(attribute).namespace != _XSI_NS:
                yield Violation(
                    display,
                    root.sourceline,
                    "P8" if is_index else "P2",
                    f"unexpected attribute {_qname(attribute)} on <{name}>",
                )
        scope = (
            _Scope(
                _prefixes(target, index=True),
                "P9",
                "<loc>",
                "an index lists sitemaps of its own site",
            )
            if is_index
            else _Scope(_prefixes(target), "P12", "<loc>", _P12_REASON)
        )
        return FileState(target, is_index, scope, frozenset(root.nsmap.values()))

    def _entry(self, state: FileState, element: Any, listed: list[_Target]) -> Iterator[Violation]:
        """Check one child of the root: a ``<url>`` or a ``<sitemap>``."""
        display = state.target.display
        line = element.sourceline
        if state.is_index:
            expected, limit, rule = _SITEMAP, MAX_SITEMAPS_PER_INDEX, "P8"
        else:
            expected, limit, rule = _URL, MAX_URLS_PER_SITEMAP, "P2"
        if element.tag != expected:
            yield Violation(
                display,
                line,
                rule,
                f"unexpected <{_qname(str(element.tag))}>: expected <{_qname(expected)}>",
            )
            return
        state.entries += 1
        if state.entries == limit + 1:
            state.first_over = line
        problems = _schema_problems(element, state.is_index, state.entries)
        for error_line, error_rule, message in problems:
            yield Violation(display, error_line, error_rule, message)
        loc_element = element.find(_LOC)
        loc = (loc_element.text or "").strip() if loc_element is not None else ""
        if state.is_index:
            if loc:
                yield from self._listed_sitemap(state, loc, loc_element.sourceline, listed)
            return
        self.urls += 1
        news = sum(1 for _ in element.iterchildren(_NEWS))
        if loc:
            yield from self._url_loc(state, element, loc, loc_element.sourceline, news > 0)
        yield from url_extras(state, element, line, news)

    def _url_loc(
        self, state: FileState, element: Any, loc: str, line: int, news: bool
    ) -> Iterator[Violation]:
        display = state.target.display
        problem = state.scope.problem(loc, line)
        if problem is not None:
            yield Violation(display, line, *problem)
        elif self.on_entry is not None and _loc_problem(loc) is None:
            lastmod = element.find(_LASTMOD)
            text = lastmod.text.strip() if lastmod is not None and lastmod.text else None
            self.on_entry(loc, text, display)
        yield from self._duplicate(("news" if news else "url", loc), display, line)
        for video in element.iterchildren(_VIDEO):
            for media in video.iterchildren(*_MEDIA_LOCS):
                if (media.text or "").strip() == loc:
                    yield Violation(
                        display,
                        media.sourceline,
                        "G8",
                        f"<{_qname(media.tag)}> is the page's own <loc>: it names the media file "
                        "or player, the page goes in <loc>",
                    )

    def _duplicate(self, key: tuple[str, str], display: str, line: int) -> Iterator[Violation]:
        first = self._locs.get(key)
        if first is None:
            self._locs[key] = (display, line)
            return
        what = {"url": "<loc>", "news": "news <loc>", "text": "URL"}[key[0]]
        yield Violation(
            display,
            line,
            "P2",
            f"duplicate {what} {key[1][:200]}: already listed at {first[0]}:{first[1]} "
            "(one entry per page)",
        )

    def _listed_sitemap(
        self, state: FileState, loc: str, line: int, listed: list[_Target]
    ) -> Iterator[Violation]:
        display = state.target.display
        problem = state.scope.problem(loc, line)
        if problem is not None:
            yield Violation(display, line, *problem)
        if _Place.of(loc) is None:
            return  # the schema reported it (P3): nothing to follow
        first = self._listed.get(loc)
        if first is not None:
            yield Violation(
                display, line, "P8", f"{loc[:200]} is listed again: first at {first[0]}:{first[1]}"
            )
            return
        self._listed[loc] = (display, line)
        target = self._listed_target(
            state.target, loc, line, "P8", in_index=True, grants=state.target.grants
        )
        if isinstance(target, Violation):
            yield target
        elif target.location in self._indexes:  # read before, as a source of its own
            yield _index_of_indexes(display, line, target.display)
        else:
            listed.append(target)

    def _listed_target(
        self,
        parent: _Target,
        url: str,
        line: int,
        rule: str,
        *,
        in_index: bool,
        grants: tuple[_Place, ...],
    ) -> _Target | Violation:
        """The file a line of ``parent`` names: fetched when ``parent`` was, else the file of
        the same name beside ``parent`` (the layout a published set has on disk)."""
        listed = _Listing(parent.display, line, rule, url)
        url_known = url if parent.url is not None else None
        if not parent.local:
            return _Target(url, url, url_known, grants, listed, in_index)
        name = unquote(PurePosixPath(urlsplit(url).path).name)
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
            return Violation(
                parent.display,
                line,
                rule,
                f"{url[:200]} names no file to look for beside {parent.display}",
            )
        path = str(Path(parent.location).parent / name)
        return _Target(path, path, url_known, grants, listed, in_index)

    # -- text: robots.txt and plain-text sitemaps --

    def _check_robots(
        self, target: _Target, body: _Body, listed: list[_Target]
    ) -> Iterator[Violation]:
        place = _Place.of(target.url) if target.url is not None else None
        grants = (place._replace(path="/"),) if place is not None else ()  # P13
        try:
            for number, raw in _lines(body):
                field_name, colon, value = raw.split(b"#", 1)[0].partition(b":")
                if not colon or field_name.strip().lower() != b"sitemap":
                    continue
                url = value.strip().decode("utf-8", "replace")
                if _Place.of(url) is None:
                    yield Violation(
                        target.display,
                        number,
                        "P15",
                        f"Sitemap: {url[:200]!r} is not an absolute http(s) URL",
                    )
                    continue
                child = self._listed_target(
                    target, url, number, "P15", in_index=False, grants=grants
                )
                if isinstance(child, Violation):
                    yield child
                else:
                    listed.append(child)
        except _TooLarge:
            pass  # not a sitemap, so no size rule: the Sitemap: lines read so far are followed

    def _check_text(self, target: _Target, body: _Body) -> Iterator[Violation]:
        """A plain-text sitemap (P11): its lines (:class:`._textfile.TextFile`), each URL
        once across the files read (P8)."""
        text = TextFile(target.display, _Scope(_prefixes(target), "P12", "URL", _P12_REASON))
        try:
            for number, raw in _lines(body):
                url, violation = text.line(number, raw)
                if violation is not None:
                    yield violation
                if url is None:
                    continue
                self.urls += 1
                if violation is not None and violation.rule == "P3":
                    continue
                if violation is None and self.on_entry is not None:
                    self.on_entry(url, None, text.display)
                yield from self._duplicate(("text", url), text.display, number)
        except _TooLarge as exc:
            yield self._too_large(target, exc)
            return
        yield from text.close()
