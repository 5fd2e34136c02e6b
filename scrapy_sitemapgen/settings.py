"""Every ``SITEMAPGEN_*`` setting: its name, default and check, read once into :class:`Config`.

A bad value stops the crawl at start-up with an error naming the setting, the value and
what is allowed, instead of failing when the spider closes, after hours of crawling.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from . import locations
from .locations import FILE_FEED_STORAGE, feed_storages, has_storage, uri_scheme
from .sitemaps.facts import FactRejected, parse_changefreq, parse_priority
from .sitemaps.indexnow import ENDPOINT as INDEXNOW_ENDPOINT
from .sitemaps.indexnow import KEY_RE, MAX_URLS_PER_REQUEST
from .sitemaps.limits import (
    DEFAULT_GZIP_LEVEL,
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    MIN_BYTES_PER_SITEMAP,
    NEWS_MAX_AGE_SECONDS,
)
from .sitemaps.sections import Section, section_name_problem
from .sitemaps.urls import (
    Origin,
    UrlPolicy,
    UrlRejected,
    base_url_for,
    fill_origin,
    normalize_loc,
    origin_folder,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.settings import BaseSettings

__all__ = ["DEFAULTS", "Config", "StoreBackend", "is_enabled"]

#: Every setting of the package starts with this; any other name so spelled is a mistake.
PREFIX = "SITEMAPGEN_"

#: Defaults, also what the README's settings table lists.
DEFAULTS: dict[str, Any] = {
    "SITEMAPGEN_ENABLED": True,
    "SITEMAPGEN_URI": "sitemaps",
    "SITEMAPGEN_BASE_URL": "",
    "SITEMAPGEN_MAX_URLS": MAX_URLS_PER_SITEMAP,
    "SITEMAPGEN_MAX_BYTES": MAX_BYTES_PER_SITEMAP,
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
    # What gets listed
    "SITEMAPGEN_RESPECT_NOINDEX": True,
    "SITEMAPGEN_RESPECT_CANONICAL": True,
    "SITEMAPGEN_RESPECT_META_REFRESH": True,
    "SITEMAPGEN_ROBOTS_USER_AGENTS": ["googlebot", "bingbot"],
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
    # Page facts
    "SITEMAPGEN_IMAGES": True,
    "SITEMAPGEN_IMAGE_ALLOW": [],
    "SITEMAPGEN_IMAGE_DENY": [],
    "SITEMAPGEN_VIDEOS": True,
    "SITEMAPGEN_ALTERNATES": True,
    "SITEMAPGEN_NEWS_MAX_AGE": NEWS_MAX_AGE_SECONDS,
    "SITEMAPGEN_LASTMOD_SOURCES": ["page", "header", "observed"],
    "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT": True,
    "SITEMAPGEN_DEDUPE_CONTENT": True,
    "SITEMAPGEN_CHANGEFREQ": [],
    "SITEMAPGEN_PRIORITY": [],
    # The close report
    "SITEMAPGEN_LOG_ORIGINS": 20,
    # Sections and IndexNow (issue 23)
    "SITEMAPGEN_SECTIONS": [],
    "SITEMAPGEN_INDEXNOW_KEY": "",
    "SITEMAPGEN_INDEXNOW_KEY_LOCATION": "",
    "SITEMAPGEN_INDEXNOW_ENDPOINT": INDEXNOW_ENDPOINT,
    "SITEMAPGEN_INDEXNOW_INITIAL": False,
    "SITEMAPGEN_INDEXNOW_BATCH": MAX_URLS_PER_REQUEST,
    "SITEMAPGEN_INDEXNOW_RETRY_SECONDS": 60.0,
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
Rule = tuple["re.Pattern[str]", str]

_SAMPLE_ORIGIN = Origin("https", "www.example.com", 443)


def _get(settings: BaseSettings, name: str) -> Any:
    value = settings.get(name)
    return DEFAULTS[name] if value is None else value


def _bool(settings: BaseSettings, name: str) -> bool:
    try:
        return settings.getbool(name, DEFAULTS[name])
    except ValueError:
        raise ValueError(
            f"{name}={settings.get(name)!r} is invalid: use True or False (or 1/0, 'true'/'false')."
        ) from None


def _seconds(settings: BaseSettings, name: str, low: float, high: float) -> float:
    raw = _get(settings, name)
    try:
        if isinstance(raw, bool):
            raise TypeError
        value = float(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or not low <= value <= high:
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be a number of seconds from {low} to {high:g}."
        )
    return value


def is_enabled(settings: BaseSettings) -> bool:
    """``SITEMAPGEN_ENABLED``, checked; the add-on reads it before any component exists."""
    return _bool(settings, "SITEMAPGEN_ENABLED")


def _int(settings: BaseSettings, name: str, low: int, high: int, why: str) -> int:
    raw = _get(settings, name)
    try:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise TypeError
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or not low <= value <= high:
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be an integer from {low:,} to {high:,} ({why})."
        )
    return value


def _sequence(settings: BaseSettings, name: str, split: bool = True) -> list[Any]:
    """A list setting; a string is JSON (from ``-s``), else a comma-separated list, or one
    item when commas belong to the value (a regular expression such as ``a{1,2}``)."""
    raw = _get(settings, name)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = [part.strip() for part in raw.split(",")] if split else [raw]
            raw = [part for part in raw if part.strip()]
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"{name}={raw!r} is invalid: it must be a list.")
    return list(raw)


def _strings(settings: BaseSettings, name: str, what: str, split: bool = True) -> list[str]:
    values = _sequence(settings, name, split)
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise ValueError(f"{name}={values!r} is invalid: it must be a list of {what}.")
    return [v.strip() for v in values]


def _compile(name: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"{name} holds {pattern!r}, which is no regular expression: {exc}."
        ) from None


def _patterns(settings: BaseSettings, name: str) -> tuple[re.Pattern[str], ...]:
    patterns = _strings(settings, name, "regular expressions", split=False)
    return tuple(_compile(name, p) for p in patterns)


def _rules(
    settings: BaseSettings, name: str, parse: Callable[[object], str], allowed: str
) -> tuple[Rule, ...]:
    rules = []
    for rule in _sequence(settings, name):
        if not isinstance(rule, (list, tuple)) or len(rule) != 2 or not isinstance(rule[0], str):
            raise ValueError(
                f"{name} holds {rule!r}, which is not a (regular expression, value) pair."
            )
        try:
            value = parse(rule[1])
        except FactRejected:
            raise ValueError(f"{name} holds {rule!r}: its value must be {allowed}.") from None
        rules.append((_compile(name, rule[0]), value))
    return tuple(rules)


def _host(value: object) -> str:
    """A bare host name, lower-case and in punycode; "" when ``value`` is anything else
    (a URL, a path, a port: an alias applies to one host on every scheme and port)."""
    if not isinstance(value, str) or not value.strip() or any(c in value for c in ":/@?#[]\\"):
        return ""
    try:
        return normalize_loc(f"http://{value.strip()}/").split("/")[2]
    except UrlRejected:
        return ""


def _host_aliases(settings: BaseSettings) -> dict[str, str]:
    name = "SITEMAPGEN_HOST_ALIASES"
    raw = settings.getdict(name, DEFAULTS[name]) if settings.get(name) is not None else {}
    aliases = {}
    for alias, host in raw.items():
        key, value = _host(alias), _host(host)
        if not key or not value:
            raise ValueError(
                f"{name} maps {alias!r} to {host!r}: both must be host names without a port, "
                f"e.g. {{'example.com': 'www.example.com'}}."
            )
        aliases[key] = value
    return aliases


def _lastmod_sources(settings: BaseSettings) -> tuple[str, ...]:
    name = "SITEMAPGEN_LASTMOD_SOURCES"
    sources = [s.lower() for s in _strings(settings, name, "source names")]
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
    raw = _get(settings, name)
    if not isinstance(raw, str) or not raw.strip() or " " in raw:
        raise ValueError(f"{name}={raw!r} is invalid: it must be a key prefix without spaces.")
    return raw.strip()


def _choice(settings: BaseSettings, name: str, allowed: tuple[str, ...]) -> str:
    raw = _get(settings, name)
    if not isinstance(raw, str) or raw.strip().lower() not in allowed:
        raise ValueError(f"{name}={raw!r} is invalid: it must be one of {', '.join(allowed)}.")
    return raw.strip().lower()


def _formats(settings: BaseSettings) -> frozenset[str]:
    name = "SITEMAPGEN_FORMATS"
    formats = [f.lower() for f in _strings(settings, name, "format names")]
    if not formats or any(f not in FORMATS for f in formats):
        raise ValueError(f"{name}={formats!r} is invalid: it must list one or both of xml, txt.")
    return frozenset(formats)


def _unknown_names(settings: BaseSettings) -> list[str]:
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
    for pair in _sequence(settings, name):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[1], str):
            raise ValueError(
                f"{name} holds {pair!r}, which is not a (name, regular expression) pair."
            )
        problem = section_name_problem(pair[0])
        if problem is None and any(s.name == pair[0] for s in sections):
            problem = "each section needs a name of its own"
        if problem is not None:
            raise ValueError(f"{name} holds {pair!r}: {problem}.")
        sections.append(Section(pair[0], _compile(name, pair[1])))
    return tuple(sections)


def _indexnow_key(settings: BaseSettings) -> str:
    name = "SITEMAPGEN_INDEXNOW_KEY"
    raw = _get(settings, name)
    if not isinstance(raw, str) or (raw.strip() and not KEY_RE.fullmatch(raw.strip())):
        raise ValueError(
            f"{name}={raw!r} is invalid: an IndexNow key is 8 to 128 characters of a-z, A-Z, "
            f"0-9 and '-' (or '' for no IndexNow)."
        )
    return raw.strip()


def _http_url(settings: BaseSettings, name: str, placeholders: bool) -> str:
    raw = _get(settings, name)
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
    robots_user_agents: frozenset[str]
    images: bool
    image_policy: UrlPolicy
    videos: bool
    alternates: bool
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
        uri = _get(settings, "SITEMAPGEN_URI")
        if not isinstance(uri, (str, Path)) or not str(uri).strip():
            raise ValueError(
                f"SITEMAPGEN_URI={uri!r} is invalid: it must be a folder path or a URI that "
                f"FEEDS would accept."
            )
        uri = str(uri).strip()
        local = _check_uri(settings, uri)
        output_dir = locations.local_path(uri) if local else None
        state = _get(settings, "SITEMAPGEN_STATE")
        if not isinstance(state, (str, Path)):
            raise ValueError(f"SITEMAPGEN_STATE={state!r} is invalid: it must be a file path.")
        state_path = locations.state_path(str(state).strip(), output_dir)
        robots_txt = _get(settings, "SITEMAPGEN_ROBOTS_TXT")
        if not isinstance(robots_txt, (str, Path)):
            raise ValueError(
                f"SITEMAPGEN_ROBOTS_TXT={robots_txt!r} is invalid: it must be a file path."
            )
        base_url = _get(settings, "SITEMAPGEN_BASE_URL")
        if not isinstance(base_url, str):
            raise ValueError(f"SITEMAPGEN_BASE_URL={base_url!r} is invalid: it must be a string.")
        jobdir = settings.get("JOBDIR")
        store, store_backend = locations.store_backend(
            "SITEMAPGEN_STORE",
            _get(settings, "SITEMAPGEN_STORE"),
            {
                name: _get(settings, name)
                for name in ("SITEMAPGEN_STORE_BACKENDS_BASE", "SITEMAPGEN_STORE_BACKENDS")
            },
        )
        sitemap_feeds, feed_warnings = locations.sitemap_feeds(settings, uri)
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
            max_urls=_int(settings, "SITEMAPGEN_MAX_URLS", 1, MAX_URLS_PER_SITEMAP, "P7"),
            max_bytes=_int(
                settings,
                "SITEMAPGEN_MAX_BYTES",
                MIN_BYTES_PER_SITEMAP,
                MAX_BYTES_PER_SITEMAP,
                "G2: 50 MB uncompressed at most",
            ),
            gzip=_bool(settings, "SITEMAPGEN_GZIP"),
            gzip_level=_int(settings, "SITEMAPGEN_GZIP_LEVEL", 1, 9, "zlib's levels"),
            content_types=frozenset(t.strip().lower() for t in content_types),
            write_on_shutdown=_bool(settings, "SITEMAPGEN_WRITE_ON_SHUTDOWN"),
            jobdir=Path(jobdir) if jobdir else None,
            store=store,
            store_backend=store_backend,
            redis_prefix=_redis_prefix(settings),
            shared_write=_choice(settings, "SITEMAPGEN_SHARED_WRITE", ("never", "last", "always")),
            resume_requests=_bool(settings, "SITEMAPGEN_RESUME_REQUESTS"),
            commit_writes=_int(
                settings, "SITEMAPGEN_COMMIT_WRITES", 1, 100_000, "writes per transaction"
            ),
            commit_seconds=_seconds(settings, "SITEMAPGEN_COMMIT_SECONDS", 0.01, 3600.0),
            url_policy=UrlPolicy(
                strip_params=frozenset(
                    p.lower()
                    for p in _strings(settings, "SITEMAPGEN_STRIP_PARAMS", "parameter names")
                ),
                host_aliases=_host_aliases(settings),
                allow=_patterns(settings, "SITEMAPGEN_ALLOW"),
                deny=_patterns(settings, "SITEMAPGEN_DENY"),
            ),
            respect_noindex=_bool(settings, "SITEMAPGEN_RESPECT_NOINDEX"),
            respect_canonical=_bool(settings, "SITEMAPGEN_RESPECT_CANONICAL"),
            respect_meta_refresh=_bool(settings, "SITEMAPGEN_RESPECT_META_REFRESH"),
            robots_user_agents=frozenset(
                ua.lower()
                for ua in _strings(settings, "SITEMAPGEN_ROBOTS_USER_AGENTS", "user agent names")
            ),
            images=_bool(settings, "SITEMAPGEN_IMAGES"),
            image_policy=UrlPolicy(
                allow=_patterns(settings, "SITEMAPGEN_IMAGE_ALLOW"),
                deny=_patterns(settings, "SITEMAPGEN_IMAGE_DENY"),
            ),
            videos=_bool(settings, "SITEMAPGEN_VIDEOS"),
            alternates=_bool(settings, "SITEMAPGEN_ALTERNATES"),
            news_max_age=_int(
                settings,
                "SITEMAPGEN_NEWS_MAX_AGE",
                60,
                365 * 24 * 3600,
                "seconds; Google News: 2 days",
            ),
            lastmod_sources=_lastmod_sources(settings),
            lastmod_follows_content=_bool(settings, "SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT"),
            dedupe_content=_bool(settings, "SITEMAPGEN_DEDUPE_CONTENT"),
            changefreq_rules=_rules(
                settings,
                "SITEMAPGEN_CHANGEFREQ",
                parse_changefreq,
                "one of always, hourly, daily, weekly, monthly, yearly, never (P5)",
            ),
            priority_rules=_rules(
                settings, "SITEMAPGEN_PRIORITY", parse_priority, "a number from 0.0 to 1.0 (P6)"
            ),
            log_origins=_int(
                settings, "SITEMAPGEN_LOG_ORIGINS", 0, 10**9, "origins with a close line each"
            ),
            sections=_sections(settings),
            indexnow_key=_indexnow_key(settings),
            indexnow_key_location=_http_url(settings, "SITEMAPGEN_INDEXNOW_KEY_LOCATION", True),
            indexnow_endpoint=_http_url(settings, "SITEMAPGEN_INDEXNOW_ENDPOINT", False),
            indexnow_initial=_bool(settings, "SITEMAPGEN_INDEXNOW_INITIAL"),
            indexnow_batch=_int(
                settings,
                "SITEMAPGEN_INDEXNOW_BATCH",
                1,
                MAX_URLS_PER_REQUEST,
                "URLs per IndexNow request",
            ),
            indexnow_retry_seconds=_seconds(
                settings, "SITEMAPGEN_INDEXNOW_RETRY_SECONDS", 0.0, 3600.0
            ),
            sitemap_feeds=sitemap_feeds,
            warnings=(*_unknown_names(settings), *feed_warnings),
            **_audit(settings, output_dir),
        )


def _audit(settings: BaseSettings, output_dir: Path | None) -> dict[str, Any]:
    """The audit's settings, checked: the Config fields they give."""
    sitemaps = _strings(settings, "SITEMAPGEN_AUDIT_SITEMAPS", "sitemap URLs")
    for url in sitemaps:
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"SITEMAPGEN_AUDIT_SITEMAPS holds {url!r}, which is no absolute http(s) URL: "
                f"it must be a list of sitemap URLs."
            )
    name = "SITEMAPGEN_REPORT_DIR"
    report_dir = _get(settings, name)
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
        "audit": _bool(settings, "SITEMAPGEN_AUDIT"),
        "audit_sitemaps": tuple(sitemaps),
        "audit_max_fetch": _int(
            settings, "SITEMAPGEN_AUDIT_MAX_FETCH", 0, 10_000_000, "URLs fetched by the audit"
        ),
        "report_dir": report,
    }
