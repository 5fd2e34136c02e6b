"""Check published sitemaps against the protocol: every rule a file can break, each
reported with its rule id (``shared/spec/PROTOCOL.md``).

Pure: no Scrapy imports, so the ``sitemapgen-validate`` command, the tests and any other
tool share one checker. A source is a local path, a ``file://`` URI or an http(s) URL of a
urlset, a sitemap index (its sitemaps are followed), a robots.txt (its ``Sitemap:`` lines
are followed) or a plain-text sitemap (P11); or a local folder, whose robots.txt and
``sitemap*`` files are checked, in every folder below it. What could not be read at all (a
network error, a missing source) is an :class:`InputError`, not a violation.

Built for hostile input: entities are never expanded and no DTD is loaded (a DOCTYPE that
declares entities is a violation), the parser reads nothing from the network, files are
decompressed incrementally and never past the byte limit (G2), HTTP fetches have a time and
size budget, and the number of files followed is capped. A file is parsed as a stream and
checked one ``<url>`` at a time, so memory does not grow with the file.

The layers, lowest first (setup.cfg checks them): :mod:`._io` reads files and URLs within
the limits; :mod:`._scope` turns sources into targets and knows where entries may point;
:mod:`._schema` loads the shipped XSDs and words their errors; :mod:`._violations` says what
a violation is and words those about a file as a whole; :mod:`._xmlfile` walks one urlset or
index, :mod:`._textfile` one text sitemap; :mod:`.checker` holds :class:`Validator`, which reads and follows the files.
"""

from __future__ import annotations

from ._schema import SCHEMA_DIR
from ._scope import SourceError, source_path
from .checker import (
    DEFAULT_MAX_FILES,
    DEFAULT_TIMEOUT,
    RAW_SLACK,
    CheckIncomplete,
    InputError,
    SitemapFile,
    Validator,
    Violation,
    validate,
)

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_TIMEOUT",
    "RAW_SLACK",
    "SCHEMA_DIR",
    "CheckIncomplete",
    "InputError",
    "SitemapFile",
    "SourceError",
    "Validator",
    "Violation",
    "source_path",
    "validate",
]
