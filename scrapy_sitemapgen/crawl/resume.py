"""SitemapResumeMiddleware: what a ``kill -9`` would take from the sitemap, given back.

Scrapy's JOBDIR marks a request seen when it is scheduled, and a SIGKILL can lose its disk
queue and whatever was in flight: those requests are never fetched again, and their pages
would be missing from the sitemap for good (``python -m benchmarks kill`` shows it). So
every request the scheduler accepts is written to the durable store, and forgotten once its
answer is settled: a non-200 answer or a download error at once, a 200 page after the
spider middleware has recorded it, in the same ordered write stream as the page's facts.
When a crawl starts on a store whose previous process did not close normally, every
request still held is sent again (``dont_filter``), so the crawl, and the sitemap, complete.
"""

from __future__ import annotations

import logging
import mmap
import pickle
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from queuelib.queue import LifoDiskQueue
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.squeues import PickleLifoDiskQueue
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object
from scrapy.utils.request import request_from_dict

from .. import stats as keys
from ..plural import counted
from .exporter import SitemapExporter
from .recheck import RECHECK_META

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from .recorder import Recorder

__all__ = ["SitemapResumeMiddleware"]

logger = logging.getLogger(__name__)

#: The files Scrapy's priority queues give SCHEDULER_DISK_QUEUE: one per priority
#: (``requests.queue/[<slot>/]<priority>``); start-request queues end in "s".
_PRIORITY_FILE = re.compile(r"-?[0-9]+")
_SIZE = struct.Struct(LifoDiskQueue.SIZE_FORMAT)


def remove_broken_queues(crawler: Crawler) -> list[tuple[Path, str]]:
    """Delete the JOBDIR disk queue files that a kill left unreadable, and return each with
    what was wrong with it.

    queuelib's LIFO disk queue (Scrapy's default) writes through a buffer, so a SIGKILL
    leaves its file cut at any byte. Two cuts break it for good:

    - ``"without its header"``: the 4-byte count written when the file is created is lost.
      Opening the file again fails (``struct.error``) on every push to that priority, so the
      resumed crawl drops them all and ends at once (seen in ``python -m benchmarks kill``).
    - ``"a torn last record"``: the count is rewritten only at a clean close, such as a
      pause, and a crawl resumed from a pause appends to the file. queuelib writes a
      record's data, then its size; if the buffer reaches the disk between the two and a
      kill follows, the file ends with a record without its size, under a count that
      includes it. The next resume pops from the end, takes a size from the wrong bytes
      and fails (``OSError``) on every pop of that priority: the crawl hangs. The check is
      queuelib's own pop, walked over the records the count names (and, for Scrapy's
      pickles, each record's first and last byte).

    The requests in such a file cannot all be read; those that went to it are in the store
    and are sent again."""
    jobdir = job_dir(crawler.settings)
    queue_class = load_object(crawler.settings["SCHEDULER_DISK_QUEUE"])
    pickled = queue_class is PickleLifoDiskQueue  # Scrapy's default
    if not jobdir or not (isinstance(queue_class, type) and issubclass(queue_class, LifoDiskQueue)):
        return []
    removed = []
    for path in sorted(Path(jobdir, "requests.queue").rglob("*")):
        if _PRIORITY_FILE.fullmatch(path.name) and path.is_file():
            why = _broken(path, pickled)
            if why is not None:
                path.unlink()
                removed.append((path, why))
    return removed


def _broken(path: Path, pickled: bool) -> str | None:
    """Why queuelib's LifoDiskQueue could not give back every request its file counts, or
    None. ``pickled``: the records are Scrapy's pickles (the default PickleLifoDiskQueue),
    each non-empty, from ``\\x80`` to the STOP opcode ``.``; a record cut at the wrong byte
    can still look well placed, and would fail in ``pickle.loads`` instead. Read through a
    memory map, so a large queue is checked without loading it."""
    size_size = LifoDiskQueue.SIZE_SIZE
    if path.stat().st_size < size_size:
        return "without its header"
    with path.open("rb") as queue, mmap.mmap(queue.fileno(), 0, access=mmap.ACCESS_READ) as data:
        (count,) = _SIZE.unpack_from(data, 0)
        end = len(data)
        for _ in range(count):  # pop's reads, without the truncation
            if end - size_size - 1 < size_size:
                return "a torn last record"
            (size,) = _SIZE.unpack_from(data, end - size_size)
            last = data[end - size_size - 1]
            end -= size_size + size
            if end < size_size:
                return "a torn last record"
            # An empty record fails too: its first byte would be its size's, 0.
            if pickled and (last != 0x2E or data[end] != 0x80):  # "." and \x80
                return "a torn last record"
    return None


class SitemapResumeMiddleware:
    """Downloader middleware (order 950, next to the downloader) plus the scheduler's
    signals. Active only with a store that outlives the process (JOBDIR or
    SITEMAPGEN_STORE) and SITEMAPGEN_RESUME_REQUESTS."""

    def __init__(self, crawler: Crawler, recorder: Recorder) -> None:
        self.crawler = crawler
        self.recorder = recorder
        self._unserializable = False
        self._last_new: Request | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        recorder = SitemapExporter.required_by(crawler, cls.__name__).recorder
        if not recorder.config.resume_requests or not recorder.keeps_store:
            raise NotConfigured
        middleware = cls(crawler, recorder)
        # Before the engine opens the scheduler, which opens the queues active at the
        # last clean close, and pushes to the rest.
        removed = remove_broken_queues(crawler)
        if removed:
            recorder.stats.set_value(keys.RESUME_QUEUES_REMOVED, len(removed))
            logger.warning(
                "Sitemap: removed %(count)s of JOBDIR that a kill left "
                "unreadable (%(files)s); Scrapy cannot read them, and their requests are sent "
                "again from the store",
                {
                    "count": counted(len(removed), "disk queue file"),
                    "files": ", ".join(f"{path}: {why}" for path, why in removed[:5]),
                },
            )
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(middleware.request_dropped, signal=signals.request_dropped)
        return middleware

    def spider_opened(self, spider: Spider) -> None:
        """After a kill, send again what the store still holds. (The exporter opened the
        store first: it connected to this signal first.)"""
        journal = self.recorder.journal
        if journal is None or self.recorder.closed_cleanly:
            return  # a clean close keeps Scrapy's own queue: nothing was lost
        blobs = journal.pending()
        for blob in blobs:
            request = request_from_dict(pickle.loads(blob), spider=spider)
            self.crawler.engine.crawl(request.replace(dont_filter=True))
        if blobs:
            self.recorder.stats.inc_value(keys.RESUME_REISSUED, len(blobs))
            logger.info(
                "Sitemap: the previous crawl on this store did not close normally; sending "
                "again %(count)s it had scheduled and not seen answered",
                {"count": counted(len(blobs), "request")},
            )

    def request_scheduled(self, request: Request, spider: Spider) -> None:
        if RECHECK_META in request.meta:
            # The recheck's own requests: a resumed crawl's recheck asks them again.
            self._last_new = None
            return
        new = self.recorder.track(request, lambda: self._serialize(request, spider))
        self._last_new = request if new else None

    def request_dropped(self, request: Request, spider: Spider) -> None:
        # The dupefilter refused it right after request_scheduled: if the store had not
        # known it, the crawl saw it before the store did; it is no request to wait for.
        if request is self._last_new:
            self.recorder.answered(request)
        self._last_new = None

    def _serialize(self, request: Request, spider: Spider) -> bytes:
        try:
            return pickle.dumps(request.to_dict(spider=spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError):
            # A lambda callback or an unpicklable meta value, as with JOBDIR's own queues:
            # kept as a plain GET of the URL, which at worst lists the page.
            self.recorder.stats.inc_value(keys.skipped("request_not_serializable"))
            if not self._unserializable:
                logger.warning(
                    "Sitemap: %(request)s cannot be serialised whole (a lambda callback or "
                    "unpicklable meta?); after a kill it is sent again as a plain request",
                    {"request": request},
                )
            self._unserializable = True
            return pickle.dumps({"url": request.url}, protocol=4)

    def process_response(self, request: Request, response: Response) -> Response:
        if response.status != 200:
            self.recorder.answered(request)  # never listed: settled now
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.recorder.answered(request)  # a retry is a new request, tracked in its turn
