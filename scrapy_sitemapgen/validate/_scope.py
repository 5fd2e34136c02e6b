"""Scope and targets: the files to check, and where their URLs may point (P3, P9, P12, P13)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from ..sitemaps.limits import DEFAULT_PORTS, MAX_LOC_LENGTH, URL_SCHEMES

__all__ = ["SourceError", "source_path"]

# The schemas' tLoc pattern (printable ASCII but space, " < >), for locs outside XML.
_LOC_RE = re.compile(r"https?://[!#-;=?-~]+")
_BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_P12_REASON = "a sitemap lists URLs of its own origin, under its own folder"


class SourceError(ValueError):
    """A source that is no local path, ``file://`` URI or http(s) URL; ``str`` says why."""


def source_path(source: str) -> Path | None:
    """The local file ``source`` names (a path or a ``file://`` URI), None for an http(s)
    URL; :class:`SourceError` for anything else. Nothing is read."""
    scheme = urlsplit(source).scheme.lower()
    if scheme in URL_SCHEMES:
        return None
    if scheme == "file":
        parts = urlsplit(source)
        if parts.netloc not in ("", "localhost"):
            raise SourceError(f"{source}: a file:// URI must name a local file")
        return Path(url2pathname(unquote(parts.path)))
    if len(scheme) > 1:  # a one-letter "scheme" is a Windows drive
        raise SourceError(f"{source}: only http, https and file URLs or local paths are read")
    return Path(source)


def _loc_problem(value: str) -> str | None:
    """Why ``value`` is no valid ``<loc>`` (P3), for text sources; None when it is one."""
    if not re.match(r"https?://", value):
        return "not an absolute http(s) URL"
    if len(value) > MAX_LOC_LENGTH:
        return f"{len(value):,} characters, at most {MAX_LOC_LENGTH:,}"
    if not _LOC_RE.fullmatch(value):
        bad = next(c for c in value if not ("!" <= c <= "~") or c in '"<>')
        return f"character {bad!r} must be percent-encoded"
    if _BAD_ESCAPE_RE.search(value):
        return "'%' not followed by two hex digits"
    return None


class _Place(NamedTuple):
    """(scheme, host, port, path) of an http(s) URL; host lower-case, port explicit."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> _Place | None:
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in URL_SCHEMES or not parts.hostname:
            return None
        return cls(scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme], parts.path or "/")

    @property
    def origin(self) -> str:
        netloc = (
            self.host if DEFAULT_PORTS[self.scheme] == self.port else f"{self.host}:{self.port}"
        )
        return f"{self.scheme}://{netloc}/"

    @property
    def folder(self) -> _Place:
        return self._replace(path=self.path[: self.path.rfind("/") + 1] or "/")

    def contains(self, other: _Place) -> bool:
        return self[:3] == other[:3] and other.path.startswith(self.path)

    def __str__(self) -> str:
        return self.origin[:-1] + self.path


class _Scope:
    """Where the entries of one file may point. With prefixes (the file's own folder, for an
    index its site, plus the site of a robots.txt naming it, P13), every entry must fall
    under one of them. Without (a local file with no --base-url), only consistency: every
    entry on the origin of the first one."""

    def __init__(
        self, prefixes: tuple[tuple[_Place, str], ...], rule: str, noun: str, reason: str
    ) -> None:
        self._prefixes = prefixes  # (prefix, what it is)
        self._rule = rule
        self._noun = noun
        self._reason = reason
        self._first: tuple[_Place, int] | None = None

    def problem(self, url: str, line: int) -> tuple[str, str] | None:
        place = _Place.of(url)
        if place is None:
            return None  # not a URL at all: reported as P3 already
        if self._prefixes:
            if any(prefix.contains(place) for prefix, _ in self._prefixes):
                return None
            allowed = " or ".join(f"{prefix} ({what})" for prefix, what in self._prefixes)
            return self._rule, f"{url[:200]} is outside {allowed}: {self._reason}"
        if self._first is None:
            self._first = (place, line)
            return None
        first, first_line = self._first
        if first[:3] == place[:3]:
            return None
        return (
            self._rule,
            f"{url[:200]} is on {place.origin}, but the first {self._noun} (line {first_line}) "
            f"is on {first.origin}: {self._reason} (--base-url checks the file against its "
            "published URL)",
        )


class _Listing(NamedTuple):
    """The line that names a file: blamed (with its ``rule``) when the file is missing."""

    source: str
    line: int
    rule: str
    url: str


@dataclass(frozen=True, slots=True)
class _Target:
    """A file to check. ``location`` is what is opened (a path or an http(s) URL); ``url``
    where it is published, when known (P12); ``grants`` the sites whose robots.txt named it
    (P13); ``listed`` the line naming it; ``in_index`` when an index listed it, so it may
    not be an index itself."""

    location: str
    display: str
    url: str | None
    grants: tuple[_Place, ...] = ()
    listed: _Listing | None = None
    in_index: bool = False

    @property
    def local(self) -> bool:
        return _Place.of(self.location) is None


def _target(source: str, base_url: str | None) -> _Target:
    """The file a source names; published at ``base_url`` (a folder URL ending in ``/``, or
    the file's own URL) when it is local and that is given. :class:`SourceError` for a
    source that is no local path, ``file://`` URI or http(s) URL."""
    path = source_path(source)
    if path is None:
        return _Target(source, source, source)
    url = None
    if base_url is not None:
        url = base_url + path.name if base_url.endswith("/") else base_url
    return _Target(str(path), source, url)


def _prefixes(target: _Target, index: bool = False) -> tuple[tuple[_Place, str], ...]:
    """Where the entries of ``target`` may point, each with what it is; () when its URL is
    not known (then :class:`_Scope` only checks consistency)."""
    place = _Place.of(target.url) if target.url is not None else None
    if place is None:
        return ()
    if index:  # P9
        return ((place._replace(path="/"), "the index's site"),)
    # P12, and P13 when a robots.txt named the file (or the index listing it)
    return (
        (place.folder, "the sitemap's folder"),
        *((grant, "the site whose robots.txt names it, P13") for grant in target.grants),
    )
