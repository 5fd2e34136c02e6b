"""Kill-and-resume harness: a JOBDIR crawl killed with SIGKILL at random moments, then
resumed to completion, must publish exactly the site's indexable URL set.

    python -m benchmarks.killresume --pages 2000 --trials 10 --kills 2 --seed 1
    python -m benchmarks.killresume --pages 2000 --trials 10 --pauses 1 --kills 2 --seed 1

Each trial starts from an empty JOBDIR and output, pauses the crawl ``--pauses`` times
with SIGINT (Ctrl-C: a clean close that keeps Scrapy's queue, as a user pauses a JOBDIR
crawl), kills it ``--kills`` times with SIGKILL, each at a random moment (seeded), then
runs it again until it finishes. After every trial the
published sitemaps must list every indexable page once and nothing else, and no
temporary file may be left in the output. The report line per trial gives how many
requests the extension sent again after the kills: requests Scrapy's JOBDIR alone would
have dropped (in requests.seen, never fetched).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
SPIDER = Path(__file__).with_name("sitespider.py")


def noindex(i: int) -> bool:
    return i % 50 == 7


def page(i: int, pages: int) -> str:
    """Page i links to its tree children, its neighbour and a few others: all reachable."""
    rng = random.Random(i)
    links = [2 * i + 1, 2 * i + 2, i + 1, *(rng.randrange(pages) for _ in range(3))]
    hrefs = "".join(f'<a href="/p/{j}">{j}</a> ' for j in links if j < pages)
    head = '<meta name="robots" content="noindex">' if noindex(i) else ""
    return (
        f"<!DOCTYPE html><html><head><title>{i}</title>{head}</head><body>"
        f'<img src="/img/{i}.png">{hrefs}<a href="/missing/{i}">gone</a></body></html>'
    )


class Site:
    """A generated site on 127.0.0.1: /p/0 .. /p/N-1, every 50th page noindex."""

    def __init__(self, pages: int, delay: float = 0.0) -> None:
        self.pages = pages
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = self.path.split("/")
                if (
                    len(parts) == 3
                    and parts[1] == "p"
                    and parts[2].isdigit()
                    and int(parts[2]) < site.pages
                ):
                    if delay:
                        time.sleep(delay)
                    i = int(parts[2])
                    body = page(i, site.pages).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    if i % 2 == 0:
                        self.send_header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
                else:
                    body = b"not found"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def expected(self) -> set[str]:
        return {f"{self.root}/p/{i}" for i in range(self.pages) if not noindex(i)}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def crawl_command(site: Site, jobdir: Path, out: Path, resume: bool = True) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        str(SPIDER),
        "-a",
        f"url={site.root}/p/0",
        "-s",
        'ADDONS={"scrapy_sitemapgen.Addon": 500}',
        "-s",
        f"JOBDIR={jobdir}",
        "-s",
        f"SITEMAPGEN_URI={out}",
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        "TELNETCONSOLE_ENABLED=False",
        "-s",
        "CONCURRENT_REQUESTS=16",
        "-s",
        "RETRY_ENABLED=False",
        "-s",
        f"SITEMAPGEN_RESUME_REQUESTS={resume}",
    ]


def published(out: Path) -> list[str]:
    """Every loc in the published urlsets, following each origin's index."""
    locs: list[str] = []
    for index in out.glob("*/sitemap.xml"):
        for entry in ElementTree.parse(index).iter(f"{NS}loc"):
            name = (entry.text or "").rsplit("/", 1)[1]
            data = gzip.decompress((index.parent / name).read_bytes())
            locs.extend(e.text or "" for e in ElementTree.fromstring(data).iter(f"{NS}loc"))
    return locs


def leftovers(out: Path) -> list[str]:
    """Temporary or partial files anywhere in the output."""
    return [str(p) for p in out.rglob("*") if ".tmp-" in p.name or p.name.endswith(".part")]


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
    site: Site,
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
        for line in result.stderr.splitlines():
            if "'sitemapgen/resume/reissued'" in line:
                reissued += int(line.rsplit(":", 1)[1].strip(" ,}"))
            if "'sitemapgen/resume/queues_removed'" in line:
                queues_removed += int(line.rsplit(":", 1)[1].strip(" ,}"))
        if "'finish_reason': 'finished'" in result.stderr or runs >= 5:
            break
    locs = published(out)
    expected = site.expected()
    return Trial(
        kills=len(killed_at),
        killed_at=killed_at,
        paused_at=paused_at,
        reissued=reissued,
        runs=runs,
        missing=len(expected - set(locs)),
        extra=len(set(locs) - expected),
        duplicates=len(locs) - len(set(locs)),
        leftovers=len(leftovers(out)),
        seconds=round(time.monotonic() - started, 1),
        queues_removed=queues_removed,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--pauses", type=int, default=0, help="SIGINT pauses per trial, before the kills"
    )
    parser.add_argument("--kills", type=int, default=2, help="SIGKILLs per trial before the resume")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-delay", type=float, default=3.0, help="latest kill, seconds after start"
    )
    parser.add_argument("--delay", type=float, default=0.002, help="server delay per page, seconds")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="SITEMAPGEN_RESUME_REQUESTS=False: what Scrapy's JOBDIR alone gives",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    site = Site(args.pages, args.delay)
    failures = 0
    try:
        print(
            f"site: {args.pages} pages, {len(site.expected())} indexable; seed {args.seed}"
            f"{'; BASELINE: no resume of in-flight requests' if args.baseline else ''}"
        )
        for number in range(1, args.trials + 1):
            with tempfile.TemporaryDirectory(prefix="killresume-") as work:
                trial = run_trial(
                    site,
                    rng,
                    args.kills,
                    Path(work),
                    args.max_delay,
                    resume=not args.baseline,
                    pauses=args.pauses,
                )
            failures += not trial.ok
            print(
                f"trial {number}: "
                f"{f'paused at {trial.paused_at} s, ' if trial.paused_at else ''}"
                f"killed at {trial.killed_at} s, {trial.runs} resume run(s), "
                f"{trial.reissued} request(s) sent again, missing {trial.missing}, extra "
                f"{trial.extra}, duplicates {trial.duplicates}, leftovers {trial.leftovers}, "
                f"broken queue files removed {trial.queues_removed}, "
                f"{trial.seconds} s -> {'ok' if trial.ok else 'FAILED'}",
                flush=True,
            )
    finally:
        site.close()
    print(f"{args.trials - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
