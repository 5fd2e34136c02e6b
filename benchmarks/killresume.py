"""Kept for ``tests/test_redis.py`` alone, which crawls with the old kill harness's site
(every 50th page noindex, no canonical elsewhere: 490 of 500 pages listed) and spider. The
kill harness is ``python -m benchmarks kill`` (:mod:`benchmarks.kill`), the site and the
spider :mod:`benchmarks.website`; once that test imports them from there, delete this file.
"""

from __future__ import annotations

from . import website

SPIDER = website.SPIDER


class Site(website.Site):
    """:class:`benchmarks.website.Site` without the canonicals elsewhere."""

    def __init__(self, pages: int, delay: float = 0.0) -> None:
        super().__init__(pages, delay, canonicals=False)
