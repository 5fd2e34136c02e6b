"""Every protocol number and namespace the package enforces, each tagged with its rule id.

The ids refer to ``shared/spec/PROTOCOL.md``. Nothing else in the package hard-codes these
values, so a rule that changes upstream changes here only. At the end, the pure layer's
defaults that are no protocol rule (the gzip backend and level), which the settings read
from here rather than from the writer.
"""

from __future__ import annotations

from typing import Final

#: P2, G5: the one namespace of ``<urlset>`` and ``<sitemapindex>``.
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"

#: P7, G2: URLs in one sitemap file.
MAX_URLS_PER_SITEMAP: Final = 50_000
#: P8: sitemaps listed in one index file.
MAX_SITEMAPS_PER_INDEX: Final = 50_000
#: G2: uncompressed bytes of one sitemap or index file (50 MB; the protocol's text says 10 MB).
MAX_BYTES_PER_SITEMAP: Final = 52_428_800
#: Smallest byte limit the settings accept: room for the XML frame and a long entry.
MIN_BYTES_PER_SITEMAP: Final = 4_096

#: P3: a ``<loc>`` must be *less than* 2,048 characters.
MAX_LOC_LENGTH: Final = 2_047

#: P5: the only values ``<changefreq>`` may take, in the protocol's order (for messages).
CHANGEFREQ_WORDS: Final = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
CHANGEFREQ_VALUES: Final = frozenset(CHANGEFREQ_WORDS)
#: P6: the range of ``<priority>``.
PRIORITY_MIN: Final = 0.0
PRIORITY_MAX: Final = 1.0

#: P12: the schemes a sitemap can list (a sitemap is served over HTTP(S), and every URL in it
#: shares the sitemap's scheme).
URL_SCHEMES: Final = frozenset({"http", "https"})
DEFAULT_PORTS: Final = {"http": 80, "https": 443}

#: P1: characters XML 1.0 does not allow anywhere in a document (section 2.2, Char), as
#: a regular-expression class; they never reach a file. The complement of Char within
#: what a Python str can hold, listed positively: such a class is scanned faster than the
#: negated ranges, and every rendered value is scanned.
XML_FORBIDDEN_CHARS: Final = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"
#: The same set and the five characters P1 escapes: what makes a value need escaping.
XML_SPECIAL_CHARS: Final = "[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"

#: G7: the extension namespaces, declared on every ``<urlset>`` root (P14).
IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
#: Language alternates: ``<xhtml:link rel="alternate" hreflang href>``.
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
#: G1, P11: Google reads Atom 1.0 feeds (RFC 4287) as well as sitemaps: the changes feed.
ATOM_NS: Final = "http://www.w3.org/2005/Atom"
#: The entries the changes feed holds at most (SITEMAPGEN_CHANGES_FEED_ENTRIES).
MAX_FEED_ENTRIES: Final = 10_000

#: Google's image extension: ``<image:image>`` entries per ``<url>``.
MAX_IMAGES_PER_URL: Final = 1_000
#: Google News: ``<news:news>`` entries per sitemap file.
MAX_NEWS_PER_SITEMAP: Final = 1_000
#: Google News: only articles published in the last two days belong in a news sitemap.
NEWS_MAX_AGE_SECONDS: Final = 2 * 24 * 3600
#: G7 video: field limits of ``<video:video>``.
VIDEO_TITLE_MAX: Final = 100
VIDEO_DESCRIPTION_MAX: Final = 2_048
VIDEO_DURATION_MIN: Final = 1
VIDEO_DURATION_MAX: Final = 28_800


# --- defaults of the pure layer that are no protocol rule --------------------------------


def _zlib_ng_installed() -> bool:
    """Whether the writer can use zlib-ng (it imports the module itself, to use it)."""
    try:
        from zlib_ng import zlib_ng  # noqa: F401
    except ImportError:  # pragma: no cover - the extra is installed for the tests
        return False
    return True


#: The deflate implementation of gzipped files: zlib-ng (the optional extra ``fast``) when it
#: is installed, which writes the same format faster at the same level, and a little
#: smaller; else the standard zlib.
DEFAULT_GZIP_BACKEND: Final = "zlib-ng" if _zlib_ng_installed() else "zlib"
#: The default deflate level of each backend: about zlib's usual level-6 size at the least
#: CPU. On every URL shape ``python -m benchmarks levels`` renders, zlib-ng's level 5 stays
#: within 10 % of zlib's level 9 in less time than its own level 6; zlib's level 5 misses
#: that bound, so zlib keeps 6.
DEFAULT_GZIP_LEVELS: Final[dict[str, int]] = {"zlib": 6, "zlib-ng": 5}
DEFAULT_GZIP_LEVEL: Final = DEFAULT_GZIP_LEVELS[DEFAULT_GZIP_BACKEND]
