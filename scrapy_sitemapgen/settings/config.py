"""The checked settings, :class:`Config`: every ``SITEMAPGEN_*`` setting read once, with
the checks that belong to one setting alone (a URI, sections, an IndexNow key, ...).

A bad value stops the crawl at start-up with an error naming the setting, the value and
what is allowed, instead of failing when the spider closes, after hours of crawling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from .. import locations
from ..locations import FILE_FEED_STORAGE, feed_storages, has_storage, uri_scheme
from ..sitemaps.broken_links import MAX_LINK_SOURCES
from ..sitemaps.evidence import MAX_KEEP_UNCONFIRMED_SECONDS
from ..sitemaps.facts import parse_changefreq, parse_priority
from ..sitemaps.indexnow import KEY_RE, MAX_URLS_PER_REQUEST
from ..sitemaps.limits import (
    MAX_BYTES_PER_SITEMAP,
    MAX_FEED_ENTRIES,
    MAX_URLS_PER_SITEMAP,
    MIN_BYTES_PER_SITEMAP,
)
from ..sitemaps.sections import Section, section_name_problem
from ..sitemaps.urls import (
    Origin,
    UrlPolicy,
    UrlRejected,
    base_url_for,
    fill_origin,
    normalize_loc,
    origin_folder,
)
from . import readers as read
from .defaults import DEFAULTS, FORMATS, LASTMOD_SOURCES, unknown_names
from .url_mapping import host_aliases, origin_map

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from .readers import Rule

__all__ = ["Config", "StoreBackend", "is_enabled"]

#: Alternates are checked against the crawl's verdicts, or written as pages declare them.
ALTERNATES_CHECKS = ("listed", "as_declared")

_SAMPLE_ORIGIN = Origin("https", "www.example.com", 443)


def is_enabled(settings: BaseSettings) -> bool:
    """``SITEMAPGEN_ENABLED``, checked; the add-on reads it before any component exists."""
    return read.flag(settings, "SITEMAPGEN_ENABLED")


def _lastmod_sources(settings: BaseSettings) -> tuple[str, ...]:
    name = "SITEMAPGEN_LASTMOD_SOURCES"
    sources = [s.lower() for s in read.strings(settings, name, "source names")]
    if any(s not in LASTMOD_SOURCES for s in sources) or len(set(sources)) != len(sources):
        raise ValueError(
            f"{name}={sources!r} is invalid: it must list, without repeats, some of "
            f"{', '.join(LASTMOD_SOURCES)} in order of precedence."
        )
    if "observed" in sources[:-1]:
        # The crawl settles the stated sources; "observed" is settled at publish, against
        # the previous runs' fingerprints, so it can only be the last resort.
        raise ValueError(
            f"{name}={sources!r} is invalid: 'observed' must come last, after the sources "
            f"that state a date."
        )
    return tuple(sources)


def _check_uri(settings: BaseSettings, uri: str) -> bool:
    """Check SITEMAPGEN_URI against FEED_STORAGES, the way FEEDS keys are; True if local."""
    name = "SITEMAPGEN_URI"
    scheme = uri_scheme(uri)
    storages = feed_storages(settings)
    if not has_storage(uri, settings):
        raise ValueError(
            f"{name}={uri!r} is invalid: no feed storage handles the scheme {scheme!r} "
            f"(FEED_STORAGES has {', '.join(sorted(k for k in storages if k))})."
        )
    try:
        origin_folder(uri, _SAMPLE_ORIGIN)
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(
            f"{name}={uri!r} is invalid ({type(exc).__name__}: {exc}): the only placeholders "
            f"are %(scheme)s, %(host)s, %(port)s and %(origin)s (write a literal % as %%)."
        ) from None
    # A local path is written in place, atomically; a user's own "file" storage is honoured.
    return scheme in ("", "file") and storages.get("file") == FILE_FEED_STORAGE


def _redis_prefix(settings: BaseSettings) -> str:
    name = "SITEMAPGEN_REDIS_PREFIX"
    raw = read.raw_value(settings, name)
    if not isinstance(raw, str) or not raw.strip() or " " in raw:
        raise ValueError(f"{name}={raw!r} is invalid: it must be a key prefix without spaces.")
    return raw.strip()


def _formats(settings: BaseSettings) -> frozenset[str]:
    name = "SITEMAPGEN_FORMATS"
    formats = [f.lower() for f in read.strings(settings, name, "format names")]
    if not formats or any(f not in FORMATS for f in formats):
        raise ValueError(f"{name}={formats!r} is invalid: it must list one or both of xml, txt.")
    return frozenset(formats)


def _check_base_url(template: str) -> str:
    if not template:
        return template
    try:
        base_url_for(template, _SAMPLE_ORIGIN)
    except (KeyError, ValueError, TypeError) as exc:
        reason = exc.reason if isinstance(exc, UrlRejected) else f"{type(exc).__name__}: {exc}"
        raise ValueError(
            f"SITEMAPGEN_BASE_URL={template!r} is invalid ({reason}): it must be an absolute "
            f"http(s) URL, optionally with the placeholders "
            f"%(scheme)s, %(host)s, %(port)s and %(origin)s (write a literal % as %%)."
        ) from None
    return template


def _sections(settings: BaseSettings) -> tuple[Section, ...]:
    name = "SITEMAPGEN_SECTIONS"
    sections: list[Section] = []
    for pair in read.sequence(settings, name):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[1], str):
            raise ValueError(
                f"{name} holds {pair!r}, which is not a (name, regular expression) pair."
            )
        problem = section_name_problem(pair[0])
        if problem is None and any(s.name == pair[0] for s in sections):
            problem = "each section needs a name of its own"
        if problem is not None:
            raise ValueError(f"{name} holds {pair!r}: {problem}.")
        sections.append(Section(pair[0], read.compiled(name, pair[1])))
    return tuple(sections)


def _indexnow_key(settings: BaseSettings) -> str:
    name = "SITEMAPGEN_INDEXNOW_KEY"
    raw = read.raw_value(settings, name)
    if not isinstance(raw, str) or (raw.strip() and not KEY_RE.fullmatch(raw.strip())):
        raise ValueError(
            f"{name}={raw!r} is invalid: an IndexNow key is 8 to 128 characters of a-z, A-Z, "
            f"0-9 and '-' (or '' for no IndexNow)."
        )
    return raw.strip()


def _http_url(settings: BaseSettings, name: str, placeholders: bool) -> str:
    raw = read.raw_value(settings, name)
    text = raw.strip() if isinstance(raw, str) else ""
    if isinstance(raw, str) and not text and name != "SITEMAPGEN_INDEXNOW_ENDPOINT":
        return ""
    try:
        url = normalize_loc(fill_origin(text, _SAMPLE_ORIGIN) if placeholders else text)
        if not url.startswith(("http://", "https://")):
            raise ValueError
    except (KeyError, ValueError, TypeError):
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be an absolute http(s) URL"
            + (
                ", optionally with the placeholders %(scheme)s, %(host)s, %(port)s and %(origin)s."
                if placeholders
                else "."
            )
        ) from None
    return text


class StoreBackend(Protocol):
    """What SITEMAPGEN_STORE_BACKENDS names for a scheme: a class whose ``from_config``
    opens the store at a location. The store it opens is a ``store.base.FactStore``; the
    settings, a layer below the store, name the class without importing its interface."""

    def from_config(self, config: Config, location: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class Config:
    """The checked settings; built once per component in ``from_crawler``."""

    enabled: bool
    #: SITEMAPGEN_URI as given: a folder path or a URI any FEED_STORAGES scheme handles.
    uri: str
    #: Written in place with atomic renames (a local path with Scrapy's FileFeedStorage).
    local: bool
    #: The local folder of ``uri`` (its placeholders unfilled); None for remote outputs.
    output_dir: Path | None
    #: The SQLite file that remembers what was published (hashes, lastmods, URLs).
    state_path: Path
    #: The output's key in the state file (:func:`.locations.state_key`).
    state_key: str
    formats: frozenset[str]
    robots_txt: str
    base_url: str
    max_urls: int
    max_bytes: int
    #: SITEMAPGEN_BUILD_SPLIT_URLS: an offline build writes an origin of at least this many
    #: records in windows across its workers (:mod:`..publish.split`); 0: never.
    split_urls: int
    gzip: bool
    gzip_level: int
    content_types: frozenset[str]
    write_on_shutdown: bool
    jobdir: Path | None
    #: SITEMAPGEN_STORE: where a store kept after the crawl lives (a path, or a URL such as
    #: redis://); None: JOBDIR's SQLite file, or a temporary one.
    store: str | None
    #: The backend class for ``store``'s scheme (SITEMAPGEN_STORE_BACKENDS).
    store_backend: StoreBackend
    redis_prefix: str
    #: Who writes from a shared store at close: "never" (sitemapgen-build does), "last"
    #: (the last worker to close, under a Redis lock) or "always".
    shared_write: str
    resume_requests: bool
    commit_writes: int
    commit_seconds: float
    url_policy: UrlPolicy
    respect_noindex: bool
    respect_canonical: bool
    respect_meta_refresh: bool
    #: SITEMAPGEN_RESPECT_ROBOTS_TXT: list only what each origin's robots.txt allows.
    respect_robots_txt: bool
    robots_user_agents: frozenset[str]
    #: SITEMAPGEN_ROBOTS_IMAGE_USER_AGENTS, lower-case, in the order given.
    robots_image_user_agents: tuple[str, ...]
    images: bool
    image_policy: UrlPolicy
    #: SITEMAPGEN_IMAGE_CHROME_SHARE: None keeps images on every page.
    image_chrome_share: float | None
    videos: bool
    alternates: bool
    #: SITEMAPGEN_ALTERNATES_CHECK: "listed" or "as_declared".
    alternates_check: str
    news_max_age: int
    lastmod_sources: tuple[str, ...]
    #: SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT: an unchanged page keeps its published lastmod.
    lastmod_follows_content: bool
    #: SITEMAPGEN_DEDUPE_CONTENT: pages of one origin with one fingerprint listed once.
    dedupe_content: bool
    changefreq_rules: tuple[Rule, ...]
    priority_rules: tuple[Rule, ...]
    #: Origins the close report gives a log line and ``…/<origin>`` stats of their own;
    #: the others are summed up in one line (a broad crawl has 100,000 origins).
    log_origins: int
    #: SITEMAPGEN_LINK_SOURCES: the pages kept per URL linked to, for its broken links
    #: (0: no link is recorded).
    link_sources: int
    #: SITEMAPGEN_SECTIONS: the urlset sequences besides the URLs of no section.
    sections: tuple[Section, ...]
    #: SITEMAPGEN_INDEXNOW_KEY; "" when IndexNow is off.
    indexnow_key: str
    #: Where the key file is published (placeholders unfilled); "": ``<key>.txt`` is
    #: written beside the sitemaps and named as the ``keyLocation``.
    indexnow_key_location: str
    indexnow_endpoint: str
    #: Submit every URL on a run without a previous run's fingerprints.
    indexnow_initial: bool
    indexnow_batch: int
    #: How long the 429 and 5xx answers of one request may be retried for, in seconds.
    indexnow_retry_seconds: float
    #: The FEEDS URIs (as given) whose format is ``sitemap``: the exporter also writes the
    #: crawl's one-origin sitemap there, once Scrapy's FeedExporter has stored the feed.
    sitemap_feeds: tuple[str, ...]
    #: What looks wrong in the settings without stopping the crawl (an unknown
    #: ``SITEMAPGEN_*`` name, a sitemap-named feed of items); logged once at start.
    warnings: tuple[str, ...]
    #: SITEMAPGEN_AUDIT: keep every URL's verdict, read the live sitemaps, write the report.
    audit: bool = False
    #: SITEMAPGEN_AUDIT_SITEMAPS: sitemap URLs audited besides those each origin announces.
    audit_sitemaps: tuple[str, ...] = ()
    #: SITEMAPGEN_AUDIT_MAX_FETCH: listed URLs the crawl never reached, fetched at most.
    audit_max_fetch: int = 10_000
    #: SITEMAPGEN_REPORT_DIR: the local folder of the audit's report, one folder per origin.
    report_dir: Path = Path("sitemapgen-report")
    #: SITEMAPGEN_CHANGES_FEED: write ``changes.atom`` beside each origin's index.
    changes_feed: bool = False
    #: SITEMAPGEN_CHANGES_FEED_ENTRIES: the changes the feed holds at most.
    changes_feed_entries: int = 100
    #: SITEMAPGEN_CHANGES_FEED_IN_ROBOTS: name the feed in the robots.txt lines too.
    changes_feed_in_robots: bool = False
    #: SITEMAPGEN_KEEP_UNCONFIRMED: seconds a published page stays listed without this
    #: run's evidence (a 5xx, a timeout, not reached) before it is removed.
    keep_unconfirmed: float = 0.0
    #: SITEMAPGEN_MAX_REMOVED_SHARE: an origin whose run would remove more than this share
    #: of its published URLs is not published (None: no guard).
    max_removed_share: float | None = None
    #: SITEMAPGEN_RECHECK_UNREACHED: after a crawl that finished on its own, the URLs
    #: published before that it did not reach are requested once.
    recheck_unreached: bool = False
    #: Scrapy's DEPTH_LIMIT (0: none): a crawl that reached it did not reach every page.
    depth_limit: int = 0
    #: Scrapy's ROBOTSTXT_OBEY and the CLOSESPIDER_* limits set (name, value): what else
    #: decides which pages a crawl reaches, for the audit's report (:attr:`listing_settings`).
    robotstxt_obey: bool = False
    closespider: tuple[tuple[str, float], ...] = ()

    @property
    def listing_settings(self) -> dict[str, object]:
        """The settings that decide what a crawl lists (docs/listing.rst's "switched by",
        and what decides which pages it reaches), by name, as JSON values: the audit's
        report says how the crawl it judges ran."""
        policy = self.url_policy
        return {
            "SITEMAPGEN_CONTENT_TYPES": sorted(self.content_types),
            "SITEMAPGEN_ALLOW": [p.pattern for p in policy.allow],
            "SITEMAPGEN_DENY": [p.pattern for p in policy.deny],
            "SITEMAPGEN_RESPECT_ROBOTS_TXT": self.respect_robots_txt,
            "SITEMAPGEN_ROBOTS_USER_AGENTS": sorted(self.robots_user_agents),
            "SITEMAPGEN_RESPECT_NOINDEX": self.respect_noindex,
            "SITEMAPGEN_RESPECT_CANONICAL": self.respect_canonical,
            "SITEMAPGEN_RESPECT_META_REFRESH": self.respect_meta_refresh,
            "SITEMAPGEN_DEDUPE_CONTENT": self.dedupe_content,
            "SITEMAPGEN_ALTERNATES_CHECK": self.alternates_check,
            "ROBOTSTXT_OBEY": self.robotstxt_obey,
            "DEPTH_LIMIT": self.depth_limit,
            **dict(self.closespider),
        }

    @property
    def checks_clusters(self) -> bool:
        """Whether the publish writes only whole, reciprocal hreflang clusters (the
        alternates are recorded and SITEMAPGEN_ALTERNATES_CHECK is ``listed``), so the
        crawl keeps the verdicts of the pages it does not list."""
        return self.alternates and self.alternates_check == "listed"

    @property
    def fingerprints(self) -> bool:
        """Whether the crawl records each page's content fingerprint: a setting reads it
        (the ``observed`` source, lastmods that follow the content, dropping duplicates)."""
        return (
            "observed" in self.lastmod_sources
            or self.lastmod_follows_content
            or self.dedupe_content
        )

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        enabled = is_enabled(settings)
        content_types = settings.getlist(
            "SITEMAPGEN_CONTENT_TYPES", DEFAULTS["SITEMAPGEN_CONTENT_TYPES"]
        )
        if not content_types or not all(isinstance(t, str) and "/" in t for t in content_types):
            raise ValueError(
                f"SITEMAPGEN_CONTENT_TYPES={content_types!r} is invalid: it must be a non-empty "
                f"list of media types such as 'text/html'."
            )
        uri = read.raw_value(settings, "SITEMAPGEN_URI")
        if not isinstance(uri, (str, Path)) or not str(uri).strip():
            raise ValueError(
                f"SITEMAPGEN_URI={uri!r} is invalid: it must be a folder path or a URI that "
                f"FEEDS would accept."
            )
        uri = str(uri).strip()
        local = _check_uri(settings, uri)
        output_dir = locations.local_path(uri) if local else None
        state = read.raw_value(settings, "SITEMAPGEN_STATE")
        if not isinstance(state, (str, Path)):
            raise ValueError(f"SITEMAPGEN_STATE={state!r} is invalid: it must be a file path.")
        state_path = locations.state_path(str(state).strip(), output_dir)
        robots_txt = read.raw_value(settings, "SITEMAPGEN_ROBOTS_TXT")
        if not isinstance(robots_txt, (str, Path)):
            raise ValueError(
                f"SITEMAPGEN_ROBOTS_TXT={robots_txt!r} is invalid: it must be a file path."
            )
        base_url = read.raw_value(settings, "SITEMAPGEN_BASE_URL")
        if not isinstance(base_url, str):
            raise ValueError(f"SITEMAPGEN_BASE_URL={base_url!r} is invalid: it must be a string.")
        jobdir = settings.get("JOBDIR")
        store, store_backend = locations.store_backend(
            "SITEMAPGEN_STORE",
            read.raw_value(settings, "SITEMAPGEN_STORE"),
            {
                name: read.raw_value(settings, name)
                for name in ("SITEMAPGEN_STORE_BACKENDS_BASE", "SITEMAPGEN_STORE_BACKENDS")
            },
        )
        sitemap_feeds, feed_warnings = locations.sitemap_feeds(settings, uri)
        mapped = origin_map(settings)
        return cls(
            enabled=enabled,
            uri=uri,
            local=local,
            output_dir=output_dir,
            state_path=state_path,
            state_key=locations.state_key(uri, output_dir, state_path),
            formats=_formats(settings),
            robots_txt=str(robots_txt).strip(),
            base_url=_check_base_url(base_url.strip()),
            max_urls=read.integer(settings, "SITEMAPGEN_MAX_URLS", 1, MAX_URLS_PER_SITEMAP, "P7"),
            split_urls=read.integer(
                settings, "SITEMAPGEN_BUILD_SPLIT_URLS", 0, 10**12, "0 never splits an origin"
            ),
            max_bytes=read.integer(
                settings,
                "SITEMAPGEN_MAX_BYTES",
                MIN_BYTES_PER_SITEMAP,
                MAX_BYTES_PER_SITEMAP,
                "G2: 50 MB uncompressed at most",
            ),
            gzip=read.flag(settings, "SITEMAPGEN_GZIP"),
            gzip_level=read.integer(settings, "SITEMAPGEN_GZIP_LEVEL", 1, 9, "zlib's levels"),
            content_types=frozenset(t.strip().lower() for t in content_types),
            write_on_shutdown=read.flag(settings, "SITEMAPGEN_WRITE_ON_SHUTDOWN"),
            jobdir=Path(jobdir) if jobdir else None,
            store=store,
            store_backend=store_backend,
            redis_prefix=_redis_prefix(settings),
            shared_write=read.choice(
                settings, "SITEMAPGEN_SHARED_WRITE", ("never", "last", "always")
            ),
            resume_requests=read.flag(settings, "SITEMAPGEN_RESUME_REQUESTS"),
            commit_writes=read.integer(
                settings, "SITEMAPGEN_COMMIT_WRITES", 1, 100_000, "writes per transaction"
            ),
            commit_seconds=read.seconds(settings, "SITEMAPGEN_COMMIT_SECONDS", 0.01, 3600.0),
            url_policy=UrlPolicy(
                strip_params=frozenset(
                    p.lower()
                    for p in read.strings(settings, "SITEMAPGEN_STRIP_PARAMS", "parameter names")
                ),
                host_aliases=host_aliases(settings),
                allow=read.patterns(settings, "SITEMAPGEN_ALLOW"),
                deny=read.patterns(settings, "SITEMAPGEN_DENY"),
                origin_map=mapped,
            ),
            respect_noindex=read.flag(settings, "SITEMAPGEN_RESPECT_NOINDEX"),
            respect_canonical=read.flag(settings, "SITEMAPGEN_RESPECT_CANONICAL"),
            respect_meta_refresh=read.flag(settings, "SITEMAPGEN_RESPECT_META_REFRESH"),
            respect_robots_txt=read.flag(settings, "SITEMAPGEN_RESPECT_ROBOTS_TXT"),
            robots_user_agents=frozenset(
                ua.lower()
                for ua in read.strings(
                    settings, "SITEMAPGEN_ROBOTS_USER_AGENTS", "user agent names"
                )
            ),
            robots_image_user_agents=tuple(
                dict.fromkeys(
                    ua.lower()
                    for ua in read.strings(
                        settings, "SITEMAPGEN_ROBOTS_IMAGE_USER_AGENTS", "user agent names"
                    )
                )
            ),
            images=read.flag(settings, "SITEMAPGEN_IMAGES"),
            image_policy=UrlPolicy(
                allow=read.patterns(settings, "SITEMAPGEN_IMAGE_ALLOW"),
                deny=read.patterns(settings, "SITEMAPGEN_IMAGE_DENY"),
                origin_map=mapped,
            ),
            image_chrome_share=_share(
                settings, "SITEMAPGEN_IMAGE_CHROME_SHARE", "the pages", "to keep every image"
            ),
            videos=read.flag(settings, "SITEMAPGEN_VIDEOS"),
            alternates=read.flag(settings, "SITEMAPGEN_ALTERNATES"),
            alternates_check=read.choice(
                settings, "SITEMAPGEN_ALTERNATES_CHECK", ALTERNATES_CHECKS
            ),
            news_max_age=read.integer(
                settings,
                "SITEMAPGEN_NEWS_MAX_AGE",
                60,
                365 * 24 * 3600,
                "seconds; Google News: 2 days",
            ),
            lastmod_sources=_lastmod_sources(settings),
            lastmod_follows_content=read.flag(settings, "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT"),
            dedupe_content=read.flag(settings, "SITEMAPGEN_DEDUPE_CONTENT"),
            changefreq_rules=read.rules(
                settings,
                "SITEMAPGEN_CHANGEFREQ",
                parse_changefreq,
                "one of always, hourly, daily, weekly, monthly, yearly, never (P5)",
            ),
            priority_rules=read.rules(
                settings, "SITEMAPGEN_PRIORITY", parse_priority, "a number from 0.0 to 1.0 (P6)"
            ),
            log_origins=read.integer(
                settings, "SITEMAPGEN_LOG_ORIGINS", 0, 10**9, "origins with a close line each"
            ),
            link_sources=read.integer(
                settings,
                "SITEMAPGEN_LINK_SOURCES",
                0,
                MAX_LINK_SOURCES,
                "pages kept per URL linked to, for the broken links; 0 records none",
            ),
            sections=_sections(settings),
            indexnow_key=_indexnow_key(settings),
            indexnow_key_location=_http_url(settings, "SITEMAPGEN_INDEXNOW_KEY_LOCATION", True),
            indexnow_endpoint=_http_url(settings, "SITEMAPGEN_INDEXNOW_ENDPOINT", False),
            indexnow_initial=read.flag(settings, "SITEMAPGEN_INDEXNOW_INITIAL"),
            indexnow_batch=read.integer(
                settings,
                "SITEMAPGEN_INDEXNOW_BATCH",
                1,
                MAX_URLS_PER_REQUEST,
                "URLs per IndexNow request",
            ),
            indexnow_retry_seconds=read.seconds(
                settings, "SITEMAPGEN_INDEXNOW_RETRY_SECONDS", 0.0, 3600.0
            ),
            sitemap_feeds=sitemap_feeds,
            warnings=(*unknown_names(settings), *feed_warnings),
            **_audit(settings, output_dir),
            changes_feed=read.flag(settings, "SITEMAPGEN_CHANGES_FEED"),
            changes_feed_entries=read.integer(
                settings,
                "SITEMAPGEN_CHANGES_FEED_ENTRIES",
                1,
                MAX_FEED_ENTRIES,
                "changes in the feed",
            ),
            changes_feed_in_robots=read.flag(settings, "SITEMAPGEN_CHANGES_FEED_IN_ROBOTS"),
            keep_unconfirmed=read.seconds(
                settings, "SITEMAPGEN_KEEP_UNCONFIRMED", 0.0, MAX_KEEP_UNCONFIRMED_SECONDS
            ),
            max_removed_share=_share(
                settings,
                "SITEMAPGEN_MAX_REMOVED_SHARE",
                "an origin's published URLs",
                "to turn the guard off",
            ),
            recheck_unreached=read.flag(settings, "SITEMAPGEN_RECHECK_UNREACHED"),
            depth_limit=settings.getint("DEPTH_LIMIT"),
            robotstxt_obey=settings.getbool("ROBOTSTXT_OBEY"),
            closespider=_closespider(settings),
        )


#: Scrapy's CloseSpider limits: a crawl that met one stopped before it reached every page.
_CLOSESPIDER = (
    "CLOSESPIDER_TIMEOUT",
    "CLOSESPIDER_TIMEOUT_NO_ITEM",
    "CLOSESPIDER_ITEMCOUNT",
    "CLOSESPIDER_PAGECOUNT",
    "CLOSESPIDER_PAGECOUNT_NO_ITEM",
    "CLOSESPIDER_ERRORCOUNT",
)


def _closespider(settings: BaseSettings) -> tuple[tuple[str, float], ...]:
    """The CloseSpider limits set (not 0), a whole number as an int."""
    limits: list[tuple[str, float]] = []
    for name in _CLOSESPIDER:
        value = settings.getfloat(name)
        if value:
            limits.append((name, int(value) if value.is_integer() else value))
    return tuple(limits)


def _share(settings: BaseSettings, name: str, of: str, off: str) -> float | None:
    """A share (``of`` what, in the message), above 0 and below 1, or None (the check is
    off: ``off`` says what None does)."""
    # Not settings.get, which gives the default for a None the user set.
    raw = settings[name] if name in settings else DEFAULTS[name]
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "none")):
        return None
    share = read.number(raw)
    if share is None or not 0.0 < share < 1.0:
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be a share of {of} above 0 and below 1 "
            f"(0.5: more than half of them), or None {off}."
        )
    return share


def _audit(settings: BaseSettings, output_dir: Path | None) -> dict[str, Any]:
    """The audit's settings, checked: the Config fields they give."""
    sitemaps = read.strings(settings, "SITEMAPGEN_AUDIT_SITEMAPS", "sitemap URLs")
    for url in sitemaps:
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"SITEMAPGEN_AUDIT_SITEMAPS holds {url!r}, which is no absolute http(s) URL: "
                f"it must be a list of sitemap URLs."
            )
    name = "SITEMAPGEN_REPORT_DIR"
    report_dir = read.raw_value(settings, name)
    if not isinstance(report_dir, (str, Path)) or not str(report_dir).strip():
        raise ValueError(f"{name}={report_dir!r} is invalid: it must be a local folder path.")
    report = Path(str(report_dir).strip())
    if output_dir is not None and "%(" not in str(output_dir):
        out, where = output_dir.resolve(), report.resolve()
        if where == out or out in where.parents or where in out.parents:
            raise ValueError(
                f"{name}={report_dir!r} is invalid: the report is kept apart from the published "
                f"sitemaps in SITEMAPGEN_URI={str(output_dir)!r}; name another folder."
            )
    return {
        "audit": read.flag(settings, "SITEMAPGEN_AUDIT"),
        "audit_sitemaps": tuple(sitemaps),
        "audit_max_fetch": read.integer(
            settings, "SITEMAPGEN_AUDIT_MAX_FETCH", 0, 10_000_000, "URLs fetched by the audit"
        ),
        "report_dir": report,
    }
