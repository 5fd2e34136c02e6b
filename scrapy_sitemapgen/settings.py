"""Every ``SITEMAPGEN_*`` setting: its name, default and check, read once into :class:`Config`.

A bad value stops the crawl at start-up with an error naming the setting, the value and
what is allowed, instead of failing when the spider closes, after hours of crawling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from w3lib.url import file_uri_to_path

from .limits import (
    MAX_BYTES_PER_SITEMAP,
    MAX_URLS_PER_SITEMAP,
    MIN_BYTES_PER_SITEMAP,
)
from .urls import Origin, UrlRejected, base_url_for

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULTS", "Config", "is_enabled"]

#: Defaults, also what the README's settings table lists.
DEFAULTS: dict[str, Any] = {
    "SITEMAPGEN_ENABLED": True,
    "SITEMAPGEN_URI": "sitemaps",
    "SITEMAPGEN_BASE_URL": "",
    "SITEMAPGEN_MAX_URLS": MAX_URLS_PER_SITEMAP,
    "SITEMAPGEN_MAX_BYTES": MAX_BYTES_PER_SITEMAP,
    "SITEMAPGEN_GZIP": True,
    "SITEMAPGEN_CONTENT_TYPES": ["text/html", "application/xhtml+xml"],
    "SITEMAPGEN_WRITE_ON_SHUTDOWN": False,
}

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
        raise ValueError(f"{name}={raw!r} is invalid: it must be an integer from {low:,} to {high:,} ({why}).")
    return value


def _output_dir(uri: str) -> Path:
    scheme = urlsplit(uri).scheme
    if scheme == "file":
        return Path(file_uri_to_path(uri))
    if scheme and len(scheme) > 1:  # "C:\\..." is a Windows drive, not a scheme
        raise ValueError(
            f"SITEMAPGEN_URI={uri!r} is invalid: only a local folder path or a file:// URI is "
            f"supported (got scheme {scheme!r})."
        )
    return Path(uri)


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


@dataclass(frozen=True, slots=True)
class Config:
    """The checked settings; built once per component in ``from_crawler``."""

    enabled: bool
    output_dir: Path
    base_url: str
    max_urls: int
    max_bytes: int
    gzip: bool
    content_types: frozenset[str]
    write_on_shutdown: bool
    jobdir: Path | None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        enabled = is_enabled(settings)
        content_types = settings.getlist("SITEMAPGEN_CONTENT_TYPES", DEFAULTS["SITEMAPGEN_CONTENT_TYPES"])
        if not content_types or not all(isinstance(t, str) and "/" in t for t in content_types):
            raise ValueError(
                f"SITEMAPGEN_CONTENT_TYPES={content_types!r} is invalid: it must be a non-empty "
                f"list of media types such as 'text/html'."
            )
        uri = _get(settings, "SITEMAPGEN_URI")
        if not isinstance(uri, (str, Path)) or not str(uri).strip():
            raise ValueError(f"SITEMAPGEN_URI={uri!r} is invalid: it must be a folder path or file:// URI.")
        base_url = _get(settings, "SITEMAPGEN_BASE_URL")
        if not isinstance(base_url, str):
            raise ValueError(f"SITEMAPGEN_BASE_URL={base_url!r} is invalid: it must be a string.")
        jobdir = settings.get("JOBDIR")
        return cls(
            enabled=enabled,
            output_dir=_output_dir(str(uri)),
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
            content_types=frozenset(t.strip().lower() for t in content_types),
            write_on_shutdown=_bool(settings, "SITEMAPGEN_WRITE_ON_SHUTDOWN"),
            jobdir=Path(jobdir) if jobdir else None,
        )
