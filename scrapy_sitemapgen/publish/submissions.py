"""IndexNow submissions after a publish: the URLs added, changed or removed since the
previous run, per host, in batches, through Scrapy's downloader.

The requests go through the downloader middlewares (proxies, user agent, timeouts), but
not through the engine: by the ``spider_closed`` signal, when the sitemaps are written, the
engine's slot is closing, and ``engine.download_async()`` then fails as it releases the
request (``AlreadyCalledError``, Scrapy 2.19). ``engine.downloader.fetch()`` still works:
the download handlers close only when the engine stops, after ``spider_closed``.

Scrapy's RetryMiddleware retries at once; a 429 asks for time, so the requests carry
``dont_retry`` and are retried here, with back-off (``Retry-After`` when the endpoint gives
one), within SITEMAPGEN_INDEXNOW_RETRY_SECONDS. Nothing here touches a published file.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotSupported
from scrapy.http import Response
from scrapy.utils.asyncio import sleep

from .. import stats as keys
from ..plural import counted, verb
from ..sitemaps.indexnow import ADDED, batches, key_file_name, key_folder
from ..sitemaps.urls import base_url_for, fill_origin

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..settings import Config
    from ..sitemaps.urls import Origin
    from ..state.statefile import PublishState
    from ..stats import Reporter
    from .staging import OriginSet

__all__ = ["Fetch", "NotifyLog", "notify"]

logger = logging.getLogger(__name__)

#: One request through Scrapy's downloader and its middlewares: the response, or the
#: request a middleware asks for instead (a redirect). The publish's caller gives it (the
#: crawl's exporter: its engine's downloader).
Fetch = Callable[[Request], Awaitable[Response | Request]]

#: What the protocol says each refusal means (https://www.indexnow.org/documentation).
MEANINGS = {
    400: "bad request: the endpoint could not read the submission",
    403: "key not valid: the key file was not found at the key location, or does not hold the key",
    422: "unprocessable entity: URLs that do not belong to the host, or a key that does "
    "not match the protocol's schema",
    429: "too many requests (potential spam)",
}
_FIRST_WAIT = 1.0
_MAX_WAIT = 60.0
#: Follow-up requests (redirects) one submission may take through the downloader.
_MAX_FOLLOW_UPS = 5


def key_location(config: Config, origin: Origin) -> str:
    """Where the key file of ``origin`` is published: SITEMAPGEN_INDEXNOW_KEY_LOCATION, or
    ``<key>.txt`` beside the sitemaps (what the staging writes)."""
    if config.indexnow_key_location:
        return fill_origin(config.indexnow_key_location, origin)
    return base_url_for(config.base_url, origin) + key_file_name(config.indexnow_key)


class NotifyLog:
    """IndexNow's lines per origin: the first ``log_origins`` origins (in origin order)
    get theirs at their level, the others at DEBUG, summed up in one INFO line by
    :meth:`finish`, as the close report does (a broad crawl's first run would otherwise
    log a "no previous run" line per origin)."""

    def __init__(self, origins: list[Origin], log_origins: int) -> None:
        self.shown = set(origins[:log_origins])
        self.log_origins = log_origins
        self.rest = {"initial": 0, "initial_urls": 0, "submitted": 0, "sent": 0, "failed": 0}
        self.no_crawler = 0

    def level(self, origin: Origin, level: int = logging.INFO) -> int:
        return level if origin in self.shown else logging.DEBUG

    def count(self, origin: Origin, **counts: int) -> None:
        if origin not in self.shown:
            for name, value in counts.items():
                self.rest[name] += value

    def finish(self) -> None:
        rest = self.rest
        if rest["initial"] or rest["submitted"]:
            logger.info(
                "Sitemap: IndexNow: and %(more)s: %(initial)d with no previous "
                "run, whose %(initial_urls)s not submitted; %(sent)s of "
                "%(submitted)s submitted%(failed)s (one line each at DEBUG; "
                "SITEMAPGEN_LOG_ORIGINS=%(limit)d)",
                {
                    "initial": rest["initial"],
                    "initial_urls": f"{counted(rest['initial_urls'], 'URL')} "
                    f"{verb(rest['initial_urls'], 'was')}",
                    "sent": counted(rest["sent"], "URL"),
                    "submitted": counted(rest["submitted"], "origin"),
                    "more": counted(rest["initial"] + rest["submitted"], "more origin"),
                    "failed": f", {rest['failed']} not submitted" if rest["failed"] else "",
                    "limit": self.log_origins,
                },
            )
        if self.no_crawler:
            logger.warning(
                "Sitemap: IndexNow: no crawler to send through; %(count)s not submitted",
                {"count": counted(self.no_crawler, "more origin")},
            )


async def notify(
    sets: list[OriginSet],
    delivered: set[Origin],
    first_runs: set[Origin],
    state: PublishState,
    config: Config,
    fetch: Fetch | None,
    reporter: Reporter,
    log: NotifyLog | None = None,
) -> None:
    """Submit what changed in each delivered origin, through ``fetch`` (None: nothing to
    send through, each origin's submission is left out with a warning). ``first_runs``:
    origins without a previous run's fingerprints, whose URLs go only with
    SITEMAPGEN_INDEXNOW_INITIAL.
    ``log``: the lines of a publish's groups (none: every origin's line at INFO)."""
    if log is None:
        log = NotifyLog([s.origin for s in sets], len(sets))
    stats = reporter.stats
    for origin_set in sets:
        counts = origin_set.indexnow
        origin = origin_set.origin
        if counts is None or origin not in delivered:
            continue
        for kind, count in counts.items():
            stats.inc_value(keys.indexnow_changes(kind), count)
        if origin in first_runs and not config.indexnow_initial:
            stats.inc_value(keys.INDEXNOW_URLS_INITIAL, counts[ADDED])
            log.count(origin, initial=1, initial_urls=counts[ADDED])
            logger.log(
                log.level(origin),
                "Sitemap: IndexNow: %(root)s has no previous run to compare with, so its "
                "%(count)s not submitted (SITEMAPGEN_INDEXNOW_INITIAL = True "
                "submits them); the next run submits what changes",
                {
                    "root": origin.root,
                    "count": f"{counted(counts[ADDED], 'URL')} {verb(counts[ADDED], 'was')}",
                },
            )
            continue
        if fetch is None:
            if origin not in log.shown:
                log.no_crawler += 1
            logger.log(
                log.level(origin, logging.WARNING),
                "Sitemap: IndexNow: no crawler to send through; %(root)s not submitted",
                {"root": origin.root},
            )
            continue
        await _notify_origin(origin, state.changed_locs(origin.name), config, fetch, reporter, log)


def _owned(
    changes: Iterator[tuple[str, str]], folder: str, origin: Origin, reporter: Reporter
) -> Iterator[str]:
    """The changed locs under the key file's folder; IndexNow refuses any other (422)."""
    outside = 0
    for _, loc in changes:
        if loc.startswith(folder):
            yield loc
            continue
        if not outside:
            logger.warning(
                "Sitemap: IndexNow: not submitting %(loc)s and other URLs of %(root)s "
                "outside %(folder)s, the key file's folder (IndexNow would refuse them)",
                {"loc": loc, "root": origin.root, "folder": folder},
            )
        outside += 1
        reporter.stats.inc_value(keys.INDEXNOW_URLS_OUTSIDE_KEY)


async def _notify_origin(
    origin: Origin,
    changes: Iterator[tuple[str, str]],
    config: Config,
    fetch: Fetch,
    reporter: Reporter,
    log: NotifyLog,
) -> None:
    location = key_location(config, origin)
    sent = failed = 0
    for batch in batches(
        _owned(changes, key_folder(location), origin, reporter), config.indexnow_batch
    ):
        body = {
            "host": origin.host,
            "key": config.indexnow_key,
            "keyLocation": location,
            "urlList": batch,
        }
        if await _submit(json.dumps(body).encode(), len(batch), config, fetch, reporter):
            sent += len(batch)
        else:
            failed += len(batch)
    if sent or failed:
        log.count(origin, submitted=1, sent=sent, failed=failed)
        logger.log(
            log.level(origin),
            "Sitemap: IndexNow: %(root)s: %(sent)s submitted to %(endpoint)s%(failed)s",
            {
                "root": origin.root,
                "sent": counted(sent, "URL"),
                "endpoint": config.indexnow_endpoint,
                "failed": f", {failed} not submitted (see the errors above)" if failed else "",
            },
        )


async def _fetch(fetch: Fetch, request: Request) -> Response:
    for _ in range(_MAX_FOLLOW_UPS):
        result = await fetch(request)
        if isinstance(result, Response):
            return result
        request = result  # a redirect a downloader middleware asks for
    raise RuntimeError(f"more than {_MAX_FOLLOW_UPS} redirects from {request.url}")


def _wait_for(response: Response | None, wait: float) -> float:
    """The back-off before the next try: the answer's ``Retry-After`` seconds, if any."""
    if response is not None:
        value = response.headers.get(b"Retry-After")
        if value is not None and value.strip().isdigit():
            return min(float(value.strip()), _MAX_WAIT)
    return wait


async def _submit(body: bytes, urls: int, config: Config, fetch: Fetch, reporter: Reporter) -> bool:
    """POST one batch; True when the endpoint took it (200 or 202)."""
    stats = reporter.stats
    request = Request(
        config.indexnow_endpoint,
        method="POST",
        body=body,
        headers={"Content-Type": "application/json; charset=utf-8"},
        dont_filter=True,
        meta={"dont_retry": True, "allow_offsite": True, "dont_obey_robotstxt": True},
    )
    started = time.monotonic()
    wait = _FIRST_WAIT
    while True:
        stats.inc_value(keys.INDEXNOW_REQUESTS)
        response: Response | None = None
        try:
            response = await _fetch(fetch, request)
        except (NotSupported, IgnoreRequest) as exc:  # no handler, or a middleware said no
            stats.inc_value(keys.indexnow_error(type(exc).__name__))
            stats.inc_value(keys.INDEXNOW_URLS_FAILED, urls)
            logger.error(
                "Sitemap: IndexNow: %(endpoint)s cannot be reached: %(error)s",
                {"endpoint": config.indexnow_endpoint, "error": f"{type(exc).__name__}: {exc}"},
            )
            return False
        except Exception as exc:  # a download error (timeout, refused): retried as a 5xx
            stats.inc_value(keys.indexnow_error(type(exc).__name__))
            problem = f"{type(exc).__name__}: {exc}"
        else:
            status = response.status
            stats.inc_value(keys.indexnow_status(status))
            if status in (200, 202):
                stats.inc_value(keys.INDEXNOW_URLS_SUBMITTED, urls)
                return True
            problem = f"{status} {MEANINGS.get(status, 'an answer the protocol does not name')}"
            if status != 429 and status < 500:
                logger.error(
                    "Sitemap: IndexNow: %(endpoint)s refused %(urls)s: %(problem)s",
                    {
                        "endpoint": config.indexnow_endpoint,
                        "urls": counted(urls, "URL"),
                        "problem": problem,
                    },
                )
                stats.inc_value(keys.INDEXNOW_URLS_FAILED, urls)
                return False
        pause = _wait_for(response, wait)
        if time.monotonic() - started + pause > config.indexnow_retry_seconds:
            logger.error(
                "Sitemap: IndexNow: %(endpoint)s did not take %(urls)s within "
                "SITEMAPGEN_INDEXNOW_RETRY_SECONDS (%(limit)gs); last answer: %(problem)s",
                {
                    "endpoint": config.indexnow_endpoint,
                    "urls": counted(urls, "URL"),
                    "limit": config.indexnow_retry_seconds,
                    "problem": problem,
                },
            )
            stats.inc_value(keys.INDEXNOW_URLS_FAILED, urls)
            return False
        logger.warning(
            "Sitemap: IndexNow: %(endpoint)s answered %(problem)s; trying again in %(pause)gs",
            {"endpoint": config.indexnow_endpoint, "problem": problem, "pause": pause},
        )
        await sleep(pause)
        wait = min(wait * 2, _MAX_WAIT)
