"""Where things go and come from: which Scrapy feed storage a URI gets
(:func:`storage_for`), which FEEDS get the crawl's sitemap, where a crawl's store is
(:func:`store_location`) and which backend opens it (:func:`store_backend`), where the
state file is and the output's key in it.

Each of these is decided here once: the settings check them at start-up, the crawl, the
publish and the commands call the same functions, so the check and the use cannot differ.
Scrapy is imported only when a class is loaded: a build's worker processes unpickle a
``Config`` without it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from w3lib.url import file_uri_to_path

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "FILE_FEED_STORAGE",
    "LOCAL_STATE_NAME",
    "SITEMAP_FEED_FORMAT",
    "StoreLocation",
    "feed_storages",
    "has_storage",
    "jobdir_store",
    "local_path",
    "sitemap_feeds",
    "state_key",
    "state_path",
    "storage_for",
    "store_backend",
    "store_location",
    "uri_scheme",
]

#: The state file of a local output, kept in the output folder (beside the origin folders).
LOCAL_STATE_NAME = ".sitemapgen-state.sqlite3"
#: The FEEDS format the add-on adds (FEED_EXPORTERS): ``scrapy crawl … -O sitemap.xml:sitemap``.
SITEMAP_FEED_FORMAT = "sitemap"
#: Scrapy's storage of local files: with it, a local output is written in place, atomically.
FILE_FEED_STORAGE = "scrapy.extensions.feedexport.FileFeedStorage"


def uri_scheme(uri: str) -> str:
    """The scheme of ``uri``, lower-case, as Scrapy's FeedExporter reads it (``urlparse``);
    "" for a plain path, and for a Windows drive (``C:\\...``), which is no scheme."""
    scheme = urlsplit(uri).scheme
    return "" if len(scheme) == 1 else scheme


def local_path(uri: str) -> Path:
    """The path of a plain path or ``file://`` URI."""
    return Path(file_uri_to_path(uri)) if uri_scheme(uri) == "file" else Path(uri)


def feed_storages(settings: BaseSettings) -> dict[str, Any]:
    """FEED_STORAGES over its _BASE, a scheme set to None removed: what FeedExporter loads."""
    return {k: v for k, v in settings.getwithbase("FEED_STORAGES").items() if v is not None}


def storage_for(uri: str, settings: BaseSettings) -> Any:
    """The FEED_STORAGES entry (a class or its import path) that stores ``uri``, chosen as
    FeedExporter chooses: its scheme's (a path or a drive takes the ``""`` one), else the
    ``"file"`` one. Start-up refuses a SITEMAPGEN_URI that :func:`has_storage` refuses."""
    storages = feed_storages(settings)
    return storages.get(uri_scheme(uri), storages["file"])


def has_storage(uri: str, settings: BaseSettings) -> bool:
    """Whether a feed storage handles ``uri``'s scheme: a URI without one is a local path."""
    scheme = uri_scheme(uri)
    return not scheme or scheme in feed_storages(settings)


def sitemap_feeds(settings: BaseSettings, uri: str) -> tuple[tuple[str, ...], list[str]]:
    """(the FEEDS URIs of the ``sitemap`` format, warnings): a feed named like a sitemap
    in Scrapy's ``xml`` format holds ``<items>``, what ``-O sitemap.xml`` gives."""
    sitemap_feeds = []
    warnings = []
    for key, options in settings.getdict("FEEDS").items():
        feed = str(key.absolute()) if isinstance(key, Path) else str(key)  # as FeedExporter
        options = options if isinstance(options, Mapping) else {}
        # The format FeedExporter takes: the one given, else the URI's extension.
        feed_format = options.get("format", Path(feed).suffix.removeprefix("."))
        if feed_format == SITEMAP_FEED_FORMAT:
            sitemap_feeds.append(feed)
        elif feed_format == "xml" and "sitemap" in feed.rsplit("/", 1)[-1].lower():
            warnings.append(
                f"the feed {feed} is written in Scrapy's xml format, which holds the scraped "
                f"items (<items><item>...), not a sitemap; for a sitemap in that file use "
                f"-O {feed}:{SITEMAP_FEED_FORMAT} (FEEDS format {SITEMAP_FEED_FORMAT!r}), "
                f"or take the sitemaps from SITEMAPGEN_URI={uri!r}."
            )
    return tuple(sitemap_feeds), warnings


def jobdir_store(jobdir: str | Path) -> Path:
    """The store a crawl with ``JOBDIR`` keeps: what its resume and the commands'
    ``--jobdir`` open."""
    return Path(jobdir) / "sitemapgen" / "store.sqlite3"


class StoreLocation(NamedTuple):
    """Where a crawl's store is, and what named it (for a failure's line)."""

    #: ``SITEMAPGEN_STORE='…'``, ``JOBDIR='…'``, ``--store '…'`` or ``--jobdir '…'``.
    named_by: str
    #: A file path, or a store URL such as ``redis://host/0``.
    location: str


def store_location(
    *,
    store_option: str | None = None,
    store_setting: str | Path | None = None,
    jobdir_option: str | Path | None = None,
    jobdir_setting: str | Path | None = None,
) -> StoreLocation | None:
    """Where a crawl's store is, or None: no store outlives the crawl (the crawl then
    keeps a temporary one; a command has no source).

    One precedence: a store named outright wins over a job folder's store, and on each
    side a command's option wins over the setting: ``--store``, then
    ``SITEMAPGEN_STORE``, then ``--jobdir``, then ``JOBDIR`` (its store is
    :func:`jobdir_store`). A caller passes what it reads: the crawl has no options, and
    ``sitemapgen-audit`` reads no ``SITEMAPGEN_STORE`` (it opens an SQLite file, named by
    its options or by ``JOBDIR``). An empty value names nothing."""
    if store_option:
        return StoreLocation(f"--store {store_option!r}", str(store_option))
    if store_setting:
        return StoreLocation(f"SITEMAPGEN_STORE={store_setting!r}", str(store_setting))
    if jobdir_option:
        return StoreLocation(f"--jobdir {str(jobdir_option)!r}", str(jobdir_store(jobdir_option)))
    if jobdir_setting:
        return StoreLocation(f"JOBDIR={str(jobdir_setting)!r}", str(jobdir_store(jobdir_setting)))
    return None


def store_backend(name: str, raw: object, backends: Mapping[str, object]) -> tuple[str | None, Any]:
    """(where the store setting ``name`` (``raw``) points, or None; the backend class for
    its scheme). ``backends``: each setting that maps schemes to classes, by its name, the
    later over the earlier, as FEED_STORAGES over its _BASE."""
    if not isinstance(raw, (str, Path)):
        raise ValueError(f"{name}={raw!r} is invalid: it must be a file path or a store URL.")
    text = str(raw).strip()
    scheme = uri_scheme(text)
    merged: dict[str, Any] = {}
    for setting, value in backends.items():
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ValueError(
                f"{setting}={value!r} is invalid: it must map URI schemes to class paths."
            )
        merged.update(value)
    path = merged.get(scheme)
    if path is None:
        known = ", ".join(repr(k) for k in sorted(k for k, v in merged.items() if v))
        raise ValueError(
            f"{name}={raw!r} is invalid: no store backend handles the scheme {scheme!r} "
            f"(SITEMAPGEN_STORE_BACKENDS has {known}; '' is a file path)."
        )
    # Imported here: a build's worker processes unpickle a Config without Scrapy.
    from scrapy.utils.misc import load_object

    try:
        backend = load_object(path) if isinstance(path, str) else path
    except (ImportError, ValueError, NameError, AttributeError) as exc:
        raise ValueError(
            f"SITEMAPGEN_STORE_BACKENDS[{scheme!r}]={path!r} is invalid: {exc}"
        ) from None
    if not callable(getattr(backend, "from_config", None)):
        raise ValueError(
            f"SITEMAPGEN_STORE_BACKENDS[{scheme!r}]={path!r} is invalid: a store backend is a "
            f"class with a from_config(config, location) class method."
        )
    if not text:
        return None, backend
    return (str(local_path(text)) if scheme in ("", "file") else text), backend


def state_path(setting: str, output_dir: Path | None) -> Path:
    """The state file: SITEMAPGEN_STATE (``setting``) when given; else, for a local output
    folder without placeholders, :data:`LOCAL_STATE_NAME` in it; else one in the
    project's data folder (``.scrapy``)."""
    if setting:
        return Path(setting)
    if output_dir is not None and "%(" not in str(output_dir):
        return output_dir / LOCAL_STATE_NAME
    # Imported here: a build's worker processes unpickle a Config, and should not pay for
    # importing Scrapy to do it.
    from scrapy.utils.project import data_path

    return Path(data_path("sitemapgen-state.sqlite3"))


def state_key(uri: str, output_dir: Path | None, state_path: Path) -> str:
    """The output's key in the state file. A local output at or below the state file's
    folder (the default, ``.sitemapgen-state.sqlite3`` in the output folder) is keyed by
    its layout relative to that folder, ``"."`` or ``"./%(host)s/sitemaps"``: the folder
    copied or moved elsewhere, state and all, is the same output. Any other output keeps
    SITEMAPGEN_URI as given, since its state file lives apart from it."""
    if output_dir is None:
        return uri
    home = os.path.abspath(state_path.parent)
    folder = os.path.abspath(output_dir)
    try:
        if os.path.commonpath([home, folder]) != home:
            return uri
    except ValueError:  # on another drive
        return uri
    relative = Path(os.path.relpath(folder, home)).as_posix()
    return "." if relative == "." else f"./{relative}"
