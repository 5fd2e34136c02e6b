"""The package's clock: real time, or stopped at a moment by the tests, in this process or,
through ``SITEMAPGEN_TEST_NOW``, in a child."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from scrapy_sitemapgen import clock as package_clock

if TYPE_CHECKING:
    import pytest

    from .conftest import Clock

SHOW_NOW = "from scrapy_sitemapgen import clock; print(clock.now().isoformat())"


def test_the_real_clock_is_aware_utc() -> None:
    before = datetime.now(timezone.utc)
    now = package_clock.now()
    assert now.tzinfo is timezone.utc
    assert before <= now <= datetime.now(timezone.utc)


def test_a_stopped_clock_stays_until_it_is_moved(clock: Clock) -> None:
    first = package_clock.now()
    assert first == clock.now and first.microsecond == 0
    assert package_clock.now() == first
    assert clock.advance(90) == first + timedelta(seconds=90) == package_clock.now()
    clock.set(datetime(2024, 6, 1, 12, tzinfo=timezone(timedelta(hours=2))))
    assert package_clock.now() == datetime(2024, 6, 1, 10, tzinfo=timezone.utc)
    assert package_clock.now().tzinfo is timezone.utc


def test_stop_at_takes_a_naive_moment_as_utc() -> None:
    try:
        package_clock.stop_at(datetime(2024, 6, 1, 12))
        assert package_clock.now() == datetime(2024, 6, 1, 12, tzinfo=timezone.utc)
    finally:
        package_clock.stop_at(None)
    assert abs(package_clock.now() - datetime.now(timezone.utc)) < timedelta(minutes=1)


def test_a_child_process_reads_the_stopped_clock(clock: Clock) -> None:
    clock.advance(3600)
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_NOW], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert datetime.fromisoformat(shown) == clock.now


def test_a_moment_that_is_not_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(package_clock.TEST_NOW_ENV, "yesterday")
    child = subprocess.run([sys.executable, "-c", SHOW_NOW], capture_output=True, text=True)
    assert child.returncode != 0
    assert "SITEMAPGEN_TEST_NOW='yesterday' is not an ISO 8601 moment" in child.stderr
