"""Where the files go: in place with atomic renames for a local folder, or through the
feed storage Scrapy's FEEDS would use for the URI (S3, GCS, FTP, any FEED_STORAGES scheme).

Every origin's set is staged completely before anything is delivered. Locally, each
destination is checked for all origins before the first move, so a failure leaves the
previous sets as they were; files go urlsets first and the index last, so an index a search
engine fetches at any moment names only files that exist. Remotely, one storage per file;
a failed upload is logged and counted, the others still go out, and an origin's index is
uploaded only when every one of its sitemaps was. Unchanged files are not delivered again.
"""

from __future__ import annotations

import errno
import glob
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import ensure_awaitable
from scrapy.utils.misc import build_from_crawler, load_object
from w3lib.url import file_uri_to_path

from .. import stats as keys
from ..sitemaps.naming import is_owned_name

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from ..stats import Reporter
    from .staging import OriginSet

__all__ = ["local_folder", "publish_local", "publish_remote", "staging_for"]

logger = logging.getLogger(__name__)


def local_folder(folder: str) -> Path:
    """The path of a local origin folder (a plain path or a ``file://`` URI), absolute."""
    path = Path(file_uri_to_path(folder)) if folder.startswith("file:") else Path(folder)
    return Path(os.path.abspath(path))  # lexically: a symbolic link is not followed


def staging_for(config: Config, origin_folder: str) -> Path:
    """A new staging folder: beside the origin folder for a local output (same file system,
    so the final step is a rename), in the temporary folder otherwise."""
    if config.local:
        target = local_folder(origin_folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        # A crawl killed while writing left its staging folder; the store's lock means no
        # other crawl of this store is writing now, so it is only debris.
        for debris in target.parent.glob(f".{glob.escape(target.name)}.tmp-*"):
            shutil.rmtree(debris, ignore_errors=True)
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    return Path(tempfile.mkdtemp(prefix="sitemapgen-"))


def _move_into_place(source: Path, target: Path) -> None:
    """``os.replace``, which is atomic on one file system; across file systems the copy goes
    to a hidden name in the target folder first, so the final step is still a rename."""
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        temporary = target.with_name(f".{target.name}.part")
        temporary.unlink(missing_ok=True)  # never write through a link planted there
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)


def publish_local(sets: list[OriginSet]) -> None:
    """Move every origin's changed files into place; raise before any move on a blocked
    destination, so nothing changes at all."""
    targets = [local_folder(s.folder) for s in sets]
    for origin_set, target in zip(sets, targets):
        if target.is_symlink():
            # The folder name comes from crawled hosts: never let a planted link redirect it.
            raise NotADirectoryError(
                errno.ENOTDIR, "a symbolic link stands where an origin folder goes", str(target)
            )
        target.mkdir(parents=True, exist_ok=True)
        for record in origin_set.records:
            if (target / record.name).is_dir():
                raise IsADirectoryError(
                    errno.EISDIR, "a folder stands where a sitemap goes", str(target / record.name)
                )
    for origin_set, target in zip(sets, targets):
        for record in origin_set.records:
            destination = target / record.name
            if record.changed or not destination.exists():
                _move_into_place(origin_set.staging / record.name, destination)
        # Files of ours this publish no longer has go; any other file a user keeps in the
        # folder is left alone.
        keep = {record.name for record in origin_set.records}
        for stale in target.iterdir():
            if stale.name not in keep and is_owned_name(stale.name):
                stale.unlink()


def _storage_class(crawler: Crawler, uri: str) -> Any:
    storages = {k: v for k, v in crawler.settings.getwithbase("FEED_STORAGES").items() if v}
    scheme = uri.split(":", 1)[0] if "://" in uri else ""
    return load_object(storages.get(scheme, storages["file"]))


async def _upload(crawler: Crawler, uri: str, source: Path, reporter: Reporter) -> bool:
    """One file through one storage, the way FeedExporter stores a feed slot."""
    cls = _storage_class(crawler, uri)
    name = getattr(cls, "__name__", str(cls))
    try:
        storage = build_from_crawler(cls, crawler, uri, feed_options={"overwrite": True})
        target = storage.open(crawler.spider)
        with source.open("rb") as data:
            shutil.copyfileobj(data, target)
        await ensure_awaitable(storage.store(target))
    except Exception:
        logger.error("Sitemap: error storing %(uri)s", {"uri": uri}, exc_info=True)
        reporter.stats.inc_value(keys.delivery_failed(name))
        return False
    logger.debug("Sitemap: stored %(uri)s", {"uri": uri})
    reporter.stats.inc_value(keys.delivery_stored(name))
    return True


async def publish_remote(
    sets: list[OriginSet], crawler: Crawler, reporter: Reporter
) -> list[Origin]:
    """Upload every origin's changed files; return the origins delivered completely."""
    delivered = []
    for origin_set in sets:
        folder = origin_set.folder.rstrip("/")
        failed = 0
        for record in origin_set.records:
            if not record.changed:
                continue
            if record.kind == "index" and failed:
                logger.error(
                    "Sitemap: not uploading %(index)s: %(failed)d file(s) of %(origin)s failed, "
                    "and an index must name only files that exist",
                    {
                        "index": f"{folder}/{record.name}",
                        "failed": failed,
                        "origin": origin_set.origin.root,
                    },
                )
                continue
            if not await _upload(
                crawler, f"{folder}/{record.name}", origin_set.staging / record.name, reporter
            ):
                failed += 1
        if not failed:
            delivered.append(origin_set.origin)
    return delivered
