"""One kill-and-resume trial: a JOBDIR crawl of the generated site paused with SIGINT and
killed with SIGKILL at seeded random moments, then run again until it finishes; what it
published is then measured against the site's listable URL set.

``tests/test_killresume.py`` runs a few short trials, and the harness's ``kill``
benchmark (``python -m benchmarks kill``) many long ones.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import generated_site
from .published import leftovers, published_locs, url_set_errors

if TYPE_CHECKING:
    import random
    from pathlib import Path


def crawl_command(
    site: generated_site.Site, jobdir: Path, out: Path, resume: bool = True
) -> list[str]:
    return generated_site.crawl_command(
        site, out, f"JOBDIR={jobdir}", f"SITEMAPGEN_RESUME_REQUESTS={resume}"
    )


@dataclass
class Trial:
    kills: int
    killed_at: list[float]
    reissued: int
    runs: int
    missing: int
    extra: int
    duplicates: int
    leftovers: int
    seconds: float
    #: JOBDIR queue files a kill left unreadable, removed by the resumed run.
    queues_removed: int = 0
    #: When each SIGINT pause came, seconds after the run's start.
    paused_at: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.duplicates or self.leftovers)


def run_trial(
    site: generated_site.Site,
    rng: random.Random,
    kills: int,
    work: Path,
    max_delay: float,
    resume: bool = True,
    pauses: int = 0,
) -> Trial:
    jobdir, out, log = work / "job", work / "out", work / "crawl.log"
    command = crawl_command(site, jobdir, out, resume)
    started = time.monotonic()
    killed_at: list[float] = []
    paused_at: list[float] = []
    # Pauses first: the queue files they leave count their requests in their headers, and
    # a kill of the resumed crawl can tear the record it was appending.
    for stop, stopped_at in [(signal.SIGINT, paused_at)] * pauses + [
        (signal.SIGKILL, killed_at)
    ] * kills:
        delay = rng.uniform(0.3, max_delay)
        with log.open("ab") as sink:
            process = subprocess.Popen(command, stdout=sink, stderr=sink, cwd=work)
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, stop)
                process.wait(timeout=120)
                stopped_at.append(round(delay, 2))
    runs = 0
    reissued = queues_removed = 0
    while True:  # resume until a run finishes
        runs += 1
        result = subprocess.run(
            command, cwd=work, capture_output=True, text=True, timeout=600, check=False
        )
        with log.open("a") as sink:
            sink.write(result.stderr)
        stats = generated_site.crawl_stats(result.stderr)
        reissued += int(stats.get("sitemapgen/resume/reissued", "0"))
        queues_removed += int(stats.get("sitemapgen/resume/queues_removed", "0"))
        if stats.get("finish_reason") == "'finished'" or runs >= 5:
            break
    errors = url_set_errors(published_locs(out), site.expected())
    return Trial(
        kills=len(killed_at),
        killed_at=killed_at,
        paused_at=paused_at,
        reissued=reissued,
        runs=runs,
        leftovers=len(leftovers(out)),
        seconds=round(time.monotonic() - started, 1),
        queues_removed=queues_removed,
        **errors,
    )
