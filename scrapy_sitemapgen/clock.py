"""The package's clock: the one "now" that decides what is written and kept.

The crawl (the lastmod a page is observed with, the fingerprints' stamps, the check that a
date is not in the future), the publish (the run's time: kept files' index ``<lastmod>``,
news age, the window an unconfirmed page is kept for, the changes feed's and IndexNow's
stamps), the offline build's reading of its input and the state's repair (the name of a set
aside file) all ask :func:`now`. Durations (elapsed seconds for a log line, a commit window,
a deadline) are not facts of the output and keep ``time.monotonic``.

The clock runs in real time unless it is stopped at a moment (:func:`stop_at`), which is what
the tests do (``tests/conftest.py``, the ``clock`` fixture) instead of sleeping for a second
to pass. A test that runs a command as a child process cannot reach this module: the
fixture also sets ``SITEMAPGEN_TEST_NOW`` (an ISO 8601 moment), which a process reads here
once, when the package is first imported. It is a testing aid, like
``SITEMAPGEN_TEST_CHROMIUM`` (docs/development.rst), not a setting: the pure layers that
ask for the time (the lastmod parser, the state's repair) have no settings at hand, and
a user has no reason to set the time.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

__all__ = ["TEST_NOW_ENV", "now", "stop_at"]

#: The environment variable that stops the clock of a child process (a testing aid).
TEST_NOW_ENV = "SITEMAPGEN_TEST_NOW"


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive one is taken as UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def _from_environment() -> datetime | None:
    value = os.environ.get(TEST_NOW_ENV)
    if not value:
        return None
    try:
        return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        raise ValueError(f"{TEST_NOW_ENV}={value!r} is not an ISO 8601 moment") from None


_stopped: datetime | None = _from_environment()


def now() -> datetime:
    """The current time, aware and in UTC: the real time, or the moment the clock was
    stopped at."""
    if _stopped is None:
        return datetime.now(timezone.utc)
    return _stopped


def stop_at(moment: datetime | None) -> None:
    """Stop the clock at ``moment`` (taken as UTC if naive) in this process; ``None``
    restarts it in real time."""
    global _stopped
    _stopped = None if moment is None else _aware(moment)
