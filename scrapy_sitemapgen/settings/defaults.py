"""Every ``SITEMAPGEN_*`` setting's name and default, and the warning for a name that is
none of them (a typo would otherwise be ignored without a word)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from ..sitemaps.evidence import KEEP_UNCONFIRMED_SECONDS
from ..sitemaps.indexnow import ENDPOINT as INDEXNOW_ENDPOINT
from ..sitemaps.indexnow import MAX_URLS_PER_REQUEST
from ..sitemaps.limits import (
    DEFAULT_GZIP_LEVEL,
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    NEWS_MAX_AGE_SECONDS,
)

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULTS", "FORMATS", "LASTMOD_SOURCES", "PREFIX", "unknown_names"]

#: Every setting of the package starts with this; any other name so spelled is a mistake.
PREFIX = "SITEMAPGEN_"

#: Defaults, also what the README's settings table lists.
DEFAULTS: dict[str, Any] = {
    "SITEMAPGEN_ENABLED": True,
    "SITEMAPGEN_URI": "sitemaps",
    "SITEMAPGEN_BASE_URL": "",
    "SITEMAPGEN_MAX_URLS": MAX_URLS_PER_SITEMAP,
    "SITEMAPGEN_MAX_BYTES": MAX_BYTES_PER_SITEMAP,
    "SITEMAPGEN_BUILD_SPLIT_URLS": 200_000,
    "SITEMAPGEN_GZIP": True,
    "SITEMAPGEN_GZIP_LEVEL": DEFAULT_GZIP_LEVEL,  # 5 with zlib-ng (the extra fast), else 6
    "SITEMAPGEN_CONTENT_TYPES": ["text/html", "application/xhtml+xml"],
    "SITEMAPGEN_WRITE_ON_SHUTDOWN": False,
    "SITEMAPGEN_FORMATS": ["xml"],
    "SITEMAPGEN_ROBOTS_TXT": "",
    "SITEMAPGEN_STATE": "",
    "SITEMAPGEN_STORE": "",
    "SITEMAPGEN_STORE_BACKENDS": {},
    "SITEMAPGEN_STORE_BACKENDS_BASE": {
        "": "scrapy_sitemapgen.store.sqlite.SqliteFactStore",
        "file": "scrapy_sitemapgen.store.sqlite.SqliteFactStore",
        "redis": "scrapy_sitemapgen.store.redis.RedisFactStore",
        "rediss": "scrapy_sitemapgen.store.redis.RedisFactStore",
        "unix": "scrapy_sitemapgen.store.redis.RedisFactStore",
    },
    "SITEMAPGEN_RESUME_REQUESTS": True,
    "SITEMAPGEN_COMMIT_WRITES": 500,
    "SITEMAPGEN_COMMIT_SECONDS": 1.0,
    "SITEMAPGEN_REDIS_PREFIX": "sitemapgen",
    "SITEMAPGEN_SHARED_WRITE": "never",
    # Recurring crawls (issue 51): only evidence removes a published page
    "SITEMAPGEN_KEEP_UNCONFIRMED": KEEP_UNCONFIRMED_SECONDS,
    "SITEMAPGEN_MAX_REMOVED_SHARE": 0.5,
    "SITEMAPGEN_RECHECK_UNREACHED": True,
    # What gets listed
    "SITEMAPGEN_RESPECT_NOINDEX": True,
    "SITEMAPGEN_RESPECT_CANONICAL": True,
    "SITEMAPGEN_RESPECT_META_REFRESH": True,
    "SITEMAPGEN_RESPECT_ROBOTS_TXT": True,
    "SITEMAPGEN_ROBOTS_USER_AGENTS": ["googlebot", "bingbot"],
    "SITEMAPGEN_ROBOTS_IMAGE_USER_AGENTS": ["googlebot-image"],
    "SITEMAPGEN_ALLOW": [],
    "SITEMAPGEN_DENY": [],
    "SITEMAPGEN_STRIP_PARAMS": [
        "sessionid",
        "session_id",
        "sessid",
        "sid",
        "phpsessid",
        "jsessionid",
        "aspsessionid",
        "cfid",
        "cftoken",
        "oscsid",
        "zenid",
    ],
    "SITEMAPGEN_HOST_ALIASES": {},
    # Crawl a staging or build server, list the production URLs (issue 41)
    "SITEMAPGEN_ORIGIN_MAP": {},
    # Page facts
    "SITEMAPGEN_IMAGES": True,
    "SITEMAPGEN_IMAGE_ALLOW": [],
    "SITEMAPGEN_IMAGE_DENY": [],
    "SITEMAPGEN_IMAGE_CHROME_SHARE": 0.5,
    "SITEMAPGEN_VIDEOS": True,
    "SITEMAPGEN_ALTERNATES": True,
    "SITEMAPGEN_ALTERNATES_CHECK": "listed",
    "SITEMAPGEN_NEWS_MAX_AGE": NEWS_MAX_AGE_SECONDS,
    "SITEMAPGEN_LASTMOD_SOURCES": ["page", "header", "observed"],
    "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": True,
    "SITEMAPGEN_DEDUPE_CONTENT": True,
    "SITEMAPGEN_CHANGEFREQ": [],
    "SITEMAPGEN_PRIORITY": [],
    # The close report
    "SITEMAPGEN_LOG_ORIGINS": 20,
    # Broken links with the pages that link to them (issue 53)
    "SITEMAPGEN_LINK_SOURCES": 5,
    # Sections and IndexNow (issue 23)
    "SITEMAPGEN_SECTIONS": [],
    "SITEMAPGEN_INDEXNOW_KEY": "",
    "SITEMAPGEN_INDEXNOW_KEY_LOCATION": "",
    "SITEMAPGEN_INDEXNOW_ENDPOINT": INDEXNOW_ENDPOINT,
    "SITEMAPGEN_INDEXNOW_INITIAL": False,
    "SITEMAPGEN_INDEXNOW_BATCH": MAX_URLS_PER_REQUEST,
    "SITEMAPGEN_INDEXNOW_RETRY_SECONDS": 60.0,
    # The changes feed (issue 41): changes.atom beside each origin's index
    "SITEMAPGEN_CHANGES_FEED": False,
    "SITEMAPGEN_CHANGES_FEED_ENTRIES": 100,
    "SITEMAPGEN_CHANGES_FEED_IN_ROBOTS": False,
    # The audit of the live sitemaps (docs/audit.rst)
    "SITEMAPGEN_AUDIT": False,
    "SITEMAPGEN_AUDIT_SITEMAPS": [],
    "SITEMAPGEN_AUDIT_MAX_FETCH": 10_000,
    "SITEMAPGEN_REPORT_DIR": "sitemapgen-report",
}

#: The formats SITEMAPGEN_FORMATS may name: XML urlsets (with index) and text sitemaps (P11).
FORMATS = ("xml", "txt")
#: The lastmod sources SITEMAPGEN_LASTMOD_SOURCES may name, in no particular order.
LASTMOD_SOURCES = ("header", "page", "crawl_time", "observed")


def unknown_names(settings: BaseSettings) -> list[str]:
    """A warning for each ``SITEMAPGEN_*`` name that is no setting of ours (a typo is
    otherwise ignored without a word), with the closest known name when one is close."""
    known = {name.removeprefix(PREFIX): name for name in DEFAULTS}
    warnings = []
    for name in sorted(n for n in settings if isinstance(n, str) and n.startswith(PREFIX)):
        if name in DEFAULTS:
            continue
        # Compared without the prefix, which every name shares and would make any match.
        close = difflib.get_close_matches(name.removeprefix(PREFIX), known, n=1)
        warnings.append(
            f"{name} is not a scrapy-sitemapgen setting; did you mean {known[close[0]]}?"
            if close
            else f"{name} is not a scrapy-sitemapgen setting, so it has no effect "
            f"(the README lists the settings)."
        )
    return warnings
