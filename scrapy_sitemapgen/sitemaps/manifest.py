"""The manifest published beside an origin's files (``manifest.json``): what each file is,
for the user and for rebuilding the state file from the published set. Pure."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from .sections import section_counts

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FileRecord", "manifest_json"]


class FileRecord(NamedTuple):
    """One published file as the manifest lists it. ``size`` and ``sha256`` are of the
    uncompressed bytes; ``lastmod`` is when this content was first published.

    A tuple: a build's worker sends a handful back for every origin, and a tuple is made
    and pickled in C, where a frozen dataclass sets each field through a Python call."""

    name: str
    kind: str
    entries: int
    size: int
    sha256: str
    lastmod: str
    changed: bool


def manifest_json(origin_root: str, files: Iterable[FileRecord], sectioned: bool = False) -> bytes:
    """The machine-readable manifest published beside an origin's files. It holds only
    what the files are (no run time, no "changed since" flags), so an unchanged set has an
    unchanged manifest and nothing at all is delivered again. ``sectioned``
    (SITEMAPGEN_SECTIONS): also the urlset files and URLs of each section."""
    files = list(files)
    if not sectioned and files:
        return _manifest_text(origin_root, files)
    document: dict[str, object] = {
        "origin": origin_root,
        "files": [
            {
                "name": f.name,
                "kind": f.kind,
                "entries": f.entries,
                "bytes": f.size,
                "sha256": f.sha256,
                "lastmod": f.lastmod,
            }
            for f in files
        ],
    }
    if sectioned:
        counts = section_counts((f.name, f.entries) for f in files if f.kind == "urlset")
        document["sections"] = {
            name: {"files": n_files, "urls": urls} for name, (n_files, urls) in counts.items()
        }
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode()


def _manifest_text(origin_root: str, files: list[FileRecord]) -> bytes:
    """What ``json.dumps(document, indent=1, ensure_ascii=False)`` gives for a manifest
    without sections, put together here: with an indent, json.dumps takes its pure-Python
    encoder, whose cost per origin outweighed writing a broad crawl's small sitemaps.
    tests/test_manifest.py holds the two to the same bytes."""
    quote = json.encoder.encode_basestring
    entries = ",\n".join(
        f'  {{\n   "name": {quote(f.name)},\n   "kind": {quote(f.kind)},\n'
        f'   "entries": {int(f.entries)},\n   "bytes": {int(f.size)},\n'
        f'   "sha256": {quote(f.sha256)},\n   "lastmod": {quote(f.lastmod)}\n  }}'
        for f in files
    )
    return f'{{\n "origin": {quote(origin_root)},\n "files": [\n{entries}\n ]\n}}\n'.encode()
