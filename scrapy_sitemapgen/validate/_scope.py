"""Scope and targets: the files to check, and where their URLs may point (P3, P9, P12, P13)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NamedTuple
from urllib.parse import quote, unquote, urlsplit
from urllib.request import url2pathname

from ..sitemaps.limits import DEFAULT_PORTS, URL_SCHEMES

__all__ = ["SourceError", "source_path"]

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


# The files of a folder source that are checked: what a published set holds (naming.py
# writes sitemap.xml, sitemap-1.xml.gz, sitemap-news-1.xml.gz, sitemap-1.txt.gz).
_ROBOTS = "robots.txt"
_SITEMAP_NAME_RE = re.compile(r"sitemap[^/]*\.(?:xml|txt)(?:\.gz)?", re.IGNORECASE)
_DIGITS_RE = re.compile(r"(\d+)")


def _checked_first(name: str) -> tuple[object, ...]:
    """The order of a folder's files: robots.txt (it names the index, P13), then names
    without a number (an index: sitemap.xml), then the numbered parts in number order."""
    parts = _DIGITS_RE.split(name)
    return (
        name != _ROBOTS,
        len(parts) > 1,
        [int(part) if part.isdigit() else part for part in parts],
    )


def _folder_targets(
    folder: Path, source: str, base_url: str | None
) -> tuple[list[_Target], list[tuple[str, str]]]:
    """The sitemap-like files under ``folder`` (every robots.txt and ``sitemap*.xml``,
    ``.xml.gz``, ``.txt``, ``.txt.gz``, in every folder of the tree, symbolic links to
    folders not followed), in checking order; and (folder, why) for each folder that could
    not be listed. With ``base_url`` (a folder URL ending in ``/``) ``folder`` is published
    there, and a file ``a/b.xml`` under it at ``base_url + "a/b.xml"``."""
    targets: list[_Target] = []
    unreadable: list[tuple[str, str]] = []

    def failed(exc: OSError) -> None:
        unreadable.append((str(exc.filename or folder), exc.strerror or str(exc)))

    for top, folders, names in os.walk(folder, onerror=failed):
        folders.sort()
        here = Path(top)
        for name in sorted(names, key=_checked_first):
            if name != _ROBOTS and not _SITEMAP_NAME_RE.fullmatch(name):
                continue
            path = here / name
            url = None
            if base_url is not None:
                url = base_url + quote(PurePosixPath(*path.relative_to(folder).parts).as_posix())
            display = os.path.join(source, os.path.relpath(path, folder))
            targets.append(_Target(str(path), display, url))
    return targets, unreadable


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
