"""The short version of the kill-and-resume harness (``python -m benchmarks kill``; its
trial is tests/kill_trial.py): a JOBDIR crawl of the generated site killed with SIGKILL (and once
paused with SIGINT first) at seeded random moments, then resumed, publishes exactly the
site's listable URL set, with nothing lost, nothing duplicated, no temporary file left."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .generated_site import Site
from .kill_trial import run_trial

if TYPE_CHECKING:
    from pathlib import Path


def test_killed_crawls_resume_to_the_exact_url_set(tmp_path: Path) -> None:
    site = Site(pages=300, delay=0.003)
    assert len(site.expected()) == 290  # 6 pages noindex, 4 canonical elsewhere
    rng = random.Random(7)
    try:
        trials = []
        # Two trials of kills, and one paused first (SIGINT, a clean close that leaves the
        # queue files counting their requests) and killed after.
        for number, pauses in enumerate((0, 0, 1)):
            work = tmp_path / f"trial-{number}"
            work.mkdir()
            trials.append(run_trial(site, rng, kills=2, work=work, max_delay=2.0, pauses=pauses))
    finally:
        site.close()
    for trial in trials:
        assert (trial.missing, trial.extra, trial.duplicates, trial.leftovers) == (0, 0, 0, 0), (
            trial
        )
    assert sum(trial.kills for trial in trials) >= 2  # the crawls really were killed
    assert trials[2].paused_at  # and the third was paused
