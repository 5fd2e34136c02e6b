"""Write throughput, memory growth and crawl overhead of scrapy-sitemapgen, measured against
baselines and printed as Markdown tables for the README.

    python -m benchmarks.bench --records 100000 --repeat 3          # quick: a few minutes
    python -m benchmarks.bench --records 1000000 --repeat 3 --memory 100000,1000000,5000000

1. Input: a seeded JSON-lines feed of ``--records`` records (``benchmarks.feed``: three
   origins, one with a port, non-ASCII and ``&`` URLs, 0-3 images, some lastmod,
   changefreq and priority, 1 % repeated pages), cached under ``benchmarks/out/``.
2. Write throughput, every contender in its own child process, run alternately
   (ABCDEF ABCDEF ...), median of ``--repeat`` runs: wall, CPU (user + sys), peak RSS,
   output bytes. The contenders: ours (``scrapy sitemapgen-build --input``), a bare loop
   (string formatting + gzip, ``benchmarks.contenders``), ``gzip -6`` alone over the bare
   loop's uncompressed bytes, reading + ``json.loads`` alone, the PyPI package
   ``xml-sitemap-writer`` (installed into this environment on first use), and sitemap.js, the
   npm package ``sitemap`` at a pinned version through its documented streaming API
   (``benchmarks/sitemapjs.cjs``; installed with npm under ``benchmarks/out/sitemapjs`` on
   first use, skipped with a message without node and npm). A run counts only
   once its output is checked: the ``<loc>`` count, following each origin's index; for ours
   it must equal the feed's distinct normalised URLs, and ``validate`` passes on every file
   (N <= 100,000) or on each origin's first urlset (the other runs must then give the same
   urlset bytes). Then our urlsets at gzip level 9 against the default: a run with
   ``SITEMAPGEN_GZIP_LEVEL=9`` if the package has that setting, else recompressed, and
   recompressed with Python's zlib at 9.
3. Memory growth: ours once at each ``--memory`` size, with the phases of the run from its
   log: start-up, ingestion of the feed into the store, writing and publishing.
4. Crawl overhead: ``scrapy runspider benchmarks/sitespider.py`` over a generated site
   (``benchmarks.crawlsite``, served here on 127.0.0.1), with the add-on and with
   ``SITEMAPGEN_ENABLED=False``, in ``--pairs`` alternating pairs; responses/s from the
   crawl's stats, and the store's ingestion rate (``sitemapgen/pages/recorded`` over elapsed).
   The spider also counts the crawl's process time and, add-on on, the part of it spent in
   the extension's code (``-a cpu_stats=1``): a steadier figure than responses/s, which
   drifts with the machine.

``python -m benchmarks.profile_build`` shows where the time of a build goes.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import importlib.metadata
import importlib.util
import itertools
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

from . import crawlsite, feed

if TYPE_CHECKING:
    from collections.abc import Callable

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONTENDERS = HERE / "contenders.py"
SPIDER = HERE / "sitespider.py"
#: Up to this many URLs, every file of ours is validated; above, each origin's first urlset.
VALIDATE_ALL = 100_000
#: The names an origin's index has: ours and the Python contenders', sitemap.js's.
INDEX_NAMES = ("sitemap.xml", "sitemap-index.xml.gz")
#: sitemap.js (npm ``sitemap``), pinned: installed on first use under ``benchmarks/out/``.
SITEMAPJS_VERSION = "9.0.1"
SITEMAPJS_PREFIX = feed.OUT / "sitemapjs"
SITEMAPJS = HERE / "sitemapjs.cjs"
#: URLs per file, the protocol's limit: the node script splits there; its check holds it to it.
MAX_URLS = 50_000
_LOG_FORMAT = "%(asctime)s.%(msecs)03d [%(name)s] %(levelname)s: %(message)s"
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[([^\]]+)\] (\w+): (.*)$")
_STAT = re.compile(r"^[{ ]'([^']+)': ([0-9.]+|'[^']*')[,}]")


class CheckFailed(AssertionError):
    """A contender's output is wrong: its time does not count."""


@dataclass
class Measure:
    """One child process: wall and CPU seconds (user + sys, its children included), peak
    RSS in KiB, exit code, and what its output held."""

    wall: float
    cpu: float
    rss: int
    code: int
    urls: int = 0
    bytes: int = 0
    #: The largest sum of RSS over the process and its descendants, sampled every 50 ms:
    #: what a build with worker processes holds in all (``ru_maxrss`` is one process's).
    tree_rss: int = 0


# A small launcher between this process and each measured command. A child's ``ru_maxrss``
# starts at the peak RSS of the process it was spawned from (Linux keeps the hiwater mark of
# the image an exec replaces), and this harness holds Scrapy and lxml; the launcher, a bare
# ``python -S``, holds a few MiB, and reports that floor with the child's figures.
_LAUNCHER = """
import os, sys, threading, time
try:
    with open('/proc/self/status') as status:
        floor = int(status.read().split('VmHWM:')[1].split()[0])
except (OSError, IndexError, ValueError):
    floor = 0

def tree_rss(pid):
    # VmRSS of pid and every descendant, in KiB (0 for a process gone meanwhile).
    total, todo = 0, [pid]
    while todo:
        pid = todo.pop()
        try:
            with open(f'/proc/{pid}/status') as status:
                total += int(status.read().split('VmRSS:')[1].split()[0])
            for task in os.listdir(f'/proc/{pid}/task'):
                with open(f'/proc/{pid}/task/{task}/children') as children:
                    todo += [int(c) for c in children.read().split()]
        except (OSError, IndexError, ValueError):
            pass
    return total

started = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
peak, done = [0], threading.Event()

def sample():
    while not done.wait(0.05):
        peak[0] = max(peak[0], tree_rss(pid))

sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
done.set()
sampler.join()
with open(sys.argv[1], 'w') as result:
    result.write(f'{wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} '
                 f'{os.waitstatus_to_exitcode(status)} {floor} {peak[0]}')
"""
#: The launcher's own peak RSS in KiB: a child's peak RSS is never reported below it.
rss_floor = 0


def measured(
    command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
) -> Measure:
    """Run ``command`` to completion in ``cwd`` (with ``env``, default this process's), its
    output to ``log``. Wall, CPU and peak RSS are the command's alone: timed and
    ``wait4``-ed by the launcher around it."""
    global rss_floor
    result = log.with_suffix(".rusage")
    with log.open("wb") as sink:
        subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, str(result), *command],
            cwd=cwd,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=True,
        )
    wall, cpu, rss, code, floor, tree = result.read_text().split()
    rss_floor = max(rss_floor, int(floor))
    return Measure(float(wall), float(cpu), int(rss), int(code), tree_rss=int(tree))


def read_sitemap(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def indexes(out: Path) -> list[Path]:
    """The index of every origin folder in ``out``: ``sitemap.xml``, or sitemap.js's
    ``sitemap-index.xml.gz`` (the name and the compression its README gives the index)."""
    return sorted(p for name in INDEX_NAMES for p in out.glob(f"*/{name}"))


def urlsets(out: Path) -> list[Path]:
    """Every urlset of every origin folder in ``out``, following each index."""
    files = []
    for index in indexes(out):
        for entry in ElementTree.fromstring(read_sitemap(index)).iter(f"{NS}loc"):
            files.append(index.parent / (entry.text or "").rsplit("/", 1)[1])
    return files


def count_locs(out: Path) -> tuple[int, int]:
    """(``<loc>``s in the urlsets, bytes of the indexes and urlsets) of an output folder."""
    files = urlsets(out)
    if not files:
        raise CheckFailed(f"no index, or an empty one, in {out}")
    size = sum(p.stat().st_size for p in [*indexes(out), *files])
    return sum(read_sitemap(p).count(b"<loc>") for p in files), size


def published_locs(out: Path) -> list[str]:
    return [
        e.text or ""
        for p in urlsets(out)
        for e in ElementTree.fromstring(read_sitemap(p)).iter(f"{NS}loc")
    ]


def tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def git_revision() -> str:
    def git(*args: str) -> str:
        result = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
        )
        return result.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "scrapy_sitemapgen")
    return f"{head} (+ uncommitted changes in scrapy_sitemapgen/)" if dirty else head


def source_digest() -> str:
    """A hash of the package's source: the benchmark reports it when it changed mid-run."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "scrapy_sitemapgen").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def scrapy_command() -> list[str]:
    """The ``scrapy`` command beside this Python, as users run it (a console script, which
    is not ``python -m scrapy`` for multiprocessing: see store.workers.main_script_hidden)."""
    script = Path(sys.executable).with_name("scrapy")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "scrapy"]


def ours_command(feed_path: Path, run: Path, *settings: str) -> list[str]:
    command = [
        *scrapy_command(),
        "sitemapgen-build",
        "--input",
        str(feed_path),
        "-s",
        f"SITEMAPGEN_URI={run / 'sitemaps'}",
        "-s",
        f"SITEMAPGEN_STATE={run / 'state.sqlite3'}",
        "-s",
        "LOG_LEVEL=WARNING",
    ]
    for setting in settings:
        command += ["-s", setting]
    return command


# --- write throughput ----------------------------------------------------------------------


@dataclass
class Contender:
    key: str
    label: str
    #: (command, cwd, output folder) for run number n in a fresh folder
    prepare: Callable[[Path], tuple[list[str], Path, Path]]
    #: checks the output (raises CheckFailed) and fills urls and bytes
    check: Callable[[Measure, Path, Path], None]
    runs: list[Measure] = field(default_factory=list)

    def median(self, name: str) -> float:
        return float(statistics.median(getattr(m, name) for m in self.runs))


class WriteBench:
    def __init__(
        self,
        info: feed.FeedInfo,
        work: Path,
        xsw_levels: tuple[int, ...],
        skip: frozenset[str] = frozenset(),
    ) -> None:
        self.info = info
        self.feed = Path(info.path)
        self.work = work
        self.xsw_levels = xsw_levels
        self.notes: list[str] = []
        self.plain = work / "plain"
        self.plain_files: list[Path] = []
        self.plain_bytes = 0
        self._numbers = itertools.count(1)
        self._ours_hashes: dict[str, str] | None = None
        self.ours_last: Path | None = None
        self.gzip_binary = shutil.which("gzip")
        self.xsw_version = self._xsw()
        self.node = ""
        self.sitemapjs_version = "" if "smjs" in skip else self._sitemapjs()
        self._sitemapjs_parsed = False
        self.contenders = [
            Contender(
                "ours", "ours: `scrapy sitemapgen-build --input`", self._ours, self._check_ours
            ),
            Contender(
                "bare", "bare loop: format + escape + gzip -6", self._bare, self._check_records
            ),
            Contender(
                "gzip",
                "gzip -6 alone (system `gzip`)"
                if self.gzip_binary
                else "gzip -6 alone (Python zlib)",
                self._gzip,
                self._check_gzip,
            ),
            Contender("json", "read + `json.loads` alone", self._json, self._check_json),
        ]
        if self.xsw_version and "xsw" not in skip:
            for (
                level
            ) in xsw_levels:  # at the size ours writes (zlib's 6), and at the 9 it ships with
                self.contenders.append(
                    Contender(
                        "xsw" if level == xsw_levels[0] else f"xsw{level}",
                        f"xml-sitemap-writer {self.xsw_version}, level {level}"
                        f"{' (as shipped)' if level == 9 else ''}, no images",
                        functools.partial(self._xsw_run, level=level),
                        self._check_records,
                    )
                )
        if self.sitemapjs_version:
            self.contenders.append(
                Contender(
                    "smjs",
                    f"sitemap.js {self.sitemapjs_version}, streaming API, gzip level 6",
                    self._sitemapjs_run,
                    self._check_sitemapjs,
                )
            )

    def _xsw(self) -> str:
        if importlib.util.find_spec("xml_sitemap_writer") is None:
            print(
                "xml-sitemap-writer is not installed: installing it into this environment "
                "(a benchmark-only dependency) with pip ...",
                flush=True,
            )
            result = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "xml-sitemap-writer"],
                capture_output=True,
                text=True,
                check=False,
            )
            importlib.invalidate_caches()
            if result.returncode:
                self.notes.append(
                    f"xml-sitemap-writer could not be installed: {result.stderr.strip()[-300:]}"
                )
                return ""
            self.notes.append("xml-sitemap-writer was installed into the environment by this run.")
        version = importlib.metadata.version("xml-sitemap-writer")
        self.notes.append(
            f"xml-sitemap-writer {version} cannot write images (no API for them): its files have "
            f"none; it writes 15,000 URLs per file, and was run at gzip level "
            f"{' and '.join(map(str, self.xsw_levels))} (it ships with 9)."
        )
        return version

    def _sitemapjs(self) -> str:
        """sitemap.js at the pinned version, installed with npm under ``benchmarks/out/`` on
        first use; its label's version, or "" (and a message) when node or npm is missing, the
        install fails or this node is older than the package requires: it is then skipped."""

        def skip(reason: str) -> str:
            message = f"sitemap.js skipped: {reason}"
            print(message, flush=True)
            self.notes.append(message)
            return ""

        node, npm = shutil.which("node"), shutil.which("npm")
        if not node or not npm:
            missing = " and ".join(
                f"`{name}`" for name, path in (("node", node), ("npm", npm)) if not path
            )
            return skip(
                f"{missing} not found on the PATH (the npm package `sitemap` needs Node.js and npm)."
            )
        manifest = SITEMAPJS_PREFIX / "node_modules" / "sitemap" / "package.json"

        def installed() -> dict[str, object]:
            try:
                return dict(json.loads(manifest.read_text()))
            except (OSError, ValueError):
                return {}

        if installed().get("version") != SITEMAPJS_VERSION:
            print(
                f"sitemap.js {SITEMAPJS_VERSION} is not installed: installing it under "
                f"{SITEMAPJS_PREFIX} (a benchmark-only dependency) with npm ...",
                flush=True,
            )
            SITEMAPJS_PREFIX.mkdir(parents=True, exist_ok=True)
            result = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(SITEMAPJS_PREFIX),
                    "--no-audit",
                    "--no-fund",
                    "--save-exact",
                    f"sitemap@{SITEMAPJS_VERSION}",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode or installed().get("version") != SITEMAPJS_VERSION:
                return skip(
                    f"`npm install sitemap@{SITEMAPJS_VERSION}` failed: {result.stderr.strip()[-300:]}"
                )
            self.notes.append(
                f"sitemap.js {SITEMAPJS_VERSION} was installed under {SITEMAPJS_PREFIX} by this run."
            )
        found = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        engines = installed().get("engines")
        wanted = str(engines.get("node", "")) if isinstance(engines, dict) else ""

        def numbers(version: str) -> tuple[int, ...]:
            return tuple(int(n) for n in re.findall(r"\d+", version)[:3])

        if wanted.startswith(">=") and numbers(found) < numbers(wanted):
            return skip(
                f"node {found} is older than sitemap.js {SITEMAPJS_VERSION} requires ({wanted})."
            )
        self.node = node
        self.notes.append(
            f"sitemap.js {SITEMAPJS_VERSION} on node {found} (`benchmarks/sitemapjs.cjs`): its streaming "
            f"API as its README documents it, one `SitemapAndIndexStream` per origin whose "
            f"`getSitemapStream` pipes a `SitemapStream` through zlib's `createGzip` (default level, 6), "
            f"{MAX_URLS:,} URLs per file (`limit`; it defaults to 45,000), images written, the index "
            f"gzipped too (`sitemap-index.xml.gz`, as in its README). It writes every lastmod in UTC "
            f"with milliseconds, declares the news, xhtml, image and video namespaces in every urlset, "
            f"and does not deduplicate (one `<url>` per record, like the bare loop)."
        )
        return f"{SITEMAPJS_VERSION} (node {found})"

    def _fresh(self, key: str) -> Path:
        run = self.work / f"{key}-{next(self._numbers)}"
        run.mkdir()
        return run

    # ours
    def _ours(self, run: Path) -> tuple[list[str], Path, Path]:
        return ours_command(self.feed, run), run, run / "sitemaps"

    def _check_ours(self, measure: Measure, out: Path, log: Path) -> None:
        if measure.code:
            raise CheckFailed(f"exit status {measure.code}:\n{tail(log)}")
        measure.urls, measure.bytes = count_locs(out)
        if measure.urls != self.info.distinct_locs:
            raise CheckFailed(
                f"{measure.urls:,} URLs written, {self.info.distinct_locs:,} expected"
            )
        files = urlsets(out)
        hashes = {
            f"{p.parent.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in files
        }
        if hashes != self._ours_hashes:  # the first run, or the package changed under us
            from scrapy_sitemapgen.validate.checker import validate

            if self.info.distinct_locs <= VALIDATE_ALL:
                sources = [str(p) for p in sorted(out.glob("*/sitemap.xml"))]
                what = "every file"
            else:
                sources = [str(p) for p in files if p.name == "sitemap-1.xml.gz"]
                what = "each origin's first urlset"
            violations = validate(sources)
            if violations:
                raise CheckFailed("\n".join(map(str, violations[:20])))
            if self._ours_hashes is not None:
                self.notes.append("ours: the urlsets changed between runs (the package changed?)")
            self.notes.append(
                f"ours: `validate` found no violation in {what} ({len(sources)} sources)."
            )
            self._ours_hashes = hashes
        if self.ours_last is not None:
            shutil.rmtree(self.ours_last.parent, ignore_errors=True)
        self.ours_last = out

    # bare loop and the baselines
    def _bare(self, run: Path) -> tuple[list[str], Path, Path]:
        out = run / "out"
        return (
            [sys.executable, str(CONTENDERS), "bare", str(self.feed), str(out), "--level", "6"],
            run,
            out,
        )

    def _xsw_run(self, run: Path, level: int) -> tuple[list[str], Path, Path]:
        out = run / "out"
        command = [
            sys.executable,
            str(CONTENDERS),
            "xsw",
            str(self.feed),
            str(out),
            "--level",
            str(level),
        ]
        return command, run, out

    def _check_records(self, measure: Measure, out: Path, log: Path) -> None:
        if measure.code:
            raise CheckFailed(f"exit status {measure.code}:\n{tail(log)}")
        measure.urls, measure.bytes = count_locs(out)
        if measure.urls != self.info.records:  # no deduplication: one <url> per record
            raise CheckFailed(f"{measure.urls:,} URLs written, {self.info.records:,} expected")
        shutil.rmtree(out.parent, ignore_errors=True)

    def _sitemapjs_run(self, run: Path) -> tuple[list[str], Path, Path]:
        out = run / "out"
        return (
            [self.node, str(SITEMAPJS), str(self.feed), str(out), str(SITEMAPJS_PREFIX)],
            run,
            out,
        )

    def _check_sitemapjs(self, measure: Measure, out: Path, log: Path) -> None:
        """As the other record writers, and: no urlset over the limit, every image of the
        feed written, every file well-formed (the first run), and whatever it printed besides
        its count (its warnings) noted once."""
        if measure.code:
            raise CheckFailed(f"exit status {measure.code}:\n{tail(log)}")
        images = 0
        try:
            for path in urlsets(out):
                data = read_sitemap(path)
                if data.count(b"<loc>") > MAX_URLS:
                    raise CheckFailed(f"{path}: more than {MAX_URLS:,} URLs")
                images += data.count(b"<image:loc>")
                if not self._sitemapjs_parsed:
                    ElementTree.fromstring(data)
        except (OSError, ElementTree.ParseError) as exc:
            raise CheckFailed(f"unreadable or malformed output: {exc}") from exc
        if images != self.info.images:
            raise CheckFailed(f"{images:,} images written, {self.info.images:,} expected")
        if not self._sitemapjs_parsed:
            printed = log.read_text(errors="replace").splitlines()[:-1]
            if printed:
                self.notes.append(
                    f"sitemap.js printed {len(printed):,} other lines, the first: {printed[0][:200]}"
                )
            self._sitemapjs_parsed = True
        self._check_records(measure, out, log)

    def prepare_plain(self) -> None:
        """The bare loop's bytes, uncompressed, once: the input of ``gzip alone``."""
        log = self.work / "plain.log"
        measure = measured(
            [sys.executable, str(CONTENDERS), "bare", str(self.feed), str(self.plain), "--plain"],
            self.work,
            log,
        )
        if measure.code:
            raise CheckFailed(f"the uncompressed bare loop failed:\n{tail(log)}")
        self.plain_files = sorted(self.plain.glob("*/sitemap-*.xml"))
        self.plain_bytes = sum(p.stat().st_size for p in self.plain_files)

    def _gzip(self, run: Path) -> tuple[list[str], Path, Path]:
        for old in self.plain.glob("*/sitemap-*.xml.gz"):
            old.unlink()
        if self.gzip_binary:
            command = [self.gzip_binary, "-6", "-k", "-f", *map(str, self.plain_files)]
        else:
            command = [sys.executable, str(CONTENDERS), "gzip", str(self.plain), "--level", "6"]
        return command, run, self.plain

    def _check_gzip(self, measure: Measure, out: Path, log: Path) -> None:
        if measure.code:
            raise CheckFailed(f"exit status {measure.code}:\n{tail(log)}")
        for plain in self.plain_files:
            packed = plain.with_name(plain.name + ".gz")
            data = gzip.decompress(packed.read_bytes())
            if len(data) != plain.stat().st_size:
                raise CheckFailed(f"{packed} does not decompress to {plain}")
            measure.urls += data.count(b"<loc>")
            measure.bytes += packed.stat().st_size
        if measure.urls != self.info.records:
            raise CheckFailed(f"{measure.urls:,} URLs compressed, {self.info.records:,} expected")

    def _json(self, run: Path) -> tuple[list[str], Path, Path]:
        return [sys.executable, str(CONTENDERS), "json", str(self.feed)], run, run

    def _check_json(self, measure: Measure, out: Path, log: Path) -> None:
        words = log.read_text().split()
        if measure.code or not words or words[-1] != str(self.info.records):
            raise CheckFailed(
                f"exit status {measure.code}, {self.info.records} records expected:\n{tail(log)}"
            )
        measure.urls = self.info.records

    def run(self, repeat: int) -> None:
        self.prepare_plain()
        for number in range(1, repeat + 1):
            for contender in self.contenders:
                run = self._fresh(contender.key)
                command, cwd, out = contender.prepare(run)
                log = run / "run.log"
                measure = measured(command, cwd, log)
                contender.check(measure, out, log)
                contender.runs.append(measure)
                print(
                    f"  run {number} {contender.key:5} {measure.wall:8.2f} s wall {measure.cpu:8.2f} s CPU "
                    f"{measure.rss / 1024:7.1f} MiB  {measure.urls:>10,} URLs  {measure.bytes:>12,} B",
                    flush=True,
                )

    def recompress(self) -> dict[str, float]:
        """Our urlsets: their bytes as written (the default level), and recompressed with
        Python's zlib at 6 and 9."""
        assert self.ours_last is not None
        result = dict.fromkeys(("raw", "written", "z6", "z9", "t6", "t9"), 0.0)
        for path in urlsets(self.ours_last):
            data = gzip.decompress(path.read_bytes())
            result["raw"] += len(data)
            result["written"] += path.stat().st_size
            for level in (6, 9):
                started = time.perf_counter()
                result[f"z{level}"] += len(gzip.compress(data, compresslevel=level, mtime=0))
                result[f"t{level}"] += time.perf_counter() - started
        return result

    def level9_run(self) -> Measure | None:
        """Ours once more with ``SITEMAPGEN_GZIP_LEVEL=9``, if the package has that setting."""
        from scrapy_sitemapgen.settings import DEFAULTS

        if "SITEMAPGEN_GZIP_LEVEL" not in DEFAULTS:
            return None
        run = self._fresh("ours9")
        log = run / "run.log"
        out = run / "sitemaps"
        measure = measured(ours_command(self.feed, run, "SITEMAPGEN_GZIP_LEVEL=9"), run, log)
        if measure.code:
            raise CheckFailed(f"ours at level 9: exit status {measure.code}:\n{tail(log)}")
        measure.urls, measure.bytes = count_locs(out)
        if measure.urls != self.info.distinct_locs:
            raise CheckFailed(
                f"ours at level 9: {measure.urls:,} URLs, {self.info.distinct_locs:,} expected"
            )
        measure.bytes = sum(p.stat().st_size for p in urlsets(out))
        shutil.rmtree(run, ignore_errors=True)
        return measure


# --- memory growth and phases --------------------------------------------------------------


@dataclass
class Phases:
    startup: float
    ingest: float
    write: float
    rest: float


def phases(log: Path, started: float, ended: float) -> Phases | None:
    """Start-up (to "Spider opened"), ingestion (to "Closing spider"), writing and publishing
    (to the exporter's first per-origin "Sitemap: ..." line), the rest (stats, exit)."""
    marks: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = _LOG_LINE.match(line)
        if not match:
            continue
        when = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        message = match[4]
        if message == "Spider opened":
            marks.setdefault("opened", when)
        elif message.startswith("Closing spider ("):
            marks.setdefault("closing", when)
        elif (
            match[2] == "scrapy_sitemapgen.crawl.exporter"
            and message.startswith("Sitemap: ")
            and " URLs (" in message
        ):
            marks.setdefault("written", when)
    if len(marks) < 3:
        return None
    return Phases(
        startup=marks["opened"] - started,
        ingest=marks["closing"] - marks["opened"],
        write=marks["written"] - marks["closing"],
        rest=ended - marks["written"],
    )


def memory_run(size: int, seed: int, work: Path) -> tuple[feed.FeedInfo, Measure, Phases | None]:
    info = feed.build(size, seed)
    run = work / f"memory-{size}"
    run.mkdir()
    log = run / "run.log"
    command = ours_command(Path(info.path), run, "LOG_LEVEL=INFO", f"LOG_FORMAT={_LOG_FORMAT}")
    started = time.time()
    measure = measured(command, run, log)
    ended = time.time()
    if measure.code:
        raise CheckFailed(f"ours at {size:,} records: exit status {measure.code}:\n{tail(log)}")
    measure.urls, measure.bytes = count_locs(run / "sitemaps")
    if measure.urls != info.distinct_locs:
        raise CheckFailed(
            f"ours at {size:,}: {measure.urls:,} URLs written, {info.distinct_locs:,} expected"
        )
    result = phases(log, started, ended)
    shutil.rmtree(run, ignore_errors=True)
    return info, measure, result


# --- crawl overhead ------------------------------------------------------------------------


@dataclass
class Crawl:
    on: bool
    measure: Measure
    elapsed: float
    responses: int
    recorded: int
    crawl_cpu: float  # process time from the first request to the last response parsed
    extension_cpu: float  # the part of it in the extension's code (0 with the add-on off)

    @property
    def cpu_per_response(self) -> float:
        return self.crawl_cpu / self.responses

    @property
    def pages_per_second(self) -> float:
        return self.responses / self.elapsed

    @property
    def recorded_per_second(self) -> float:
        return self.recorded / self.elapsed


def crawl_stats(log: Path) -> dict[str, str]:
    return {
        m[1]: m[2]
        for line in log.read_text(errors="replace").splitlines()
        if (m := _STAT.match(line))
    }


_crawl_numbers = itertools.count(1)


def crawl_command(site: crawlsite.Site, run: Path, cpu_stats: str = "1") -> list[str]:
    """The benchmark crawl of ``site``, its sitemaps to ``run / "sitemaps"``; ``cpu_stats``
    as sitespider.py takes it."""
    return [
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        str(SPIDER),
        "-a",
        f"url={site.root}/p/0",
        "-a",
        f"cpu_stats={cpu_stats}",
        "-s",
        'ADDONS={"scrapy_sitemapgen.Addon": 500}',
        "-s",
        f"SITEMAPGEN_URI={run / 'sitemaps'}",
        "-s",
        f"SITEMAPGEN_STATE={run / 'state.sqlite3'}",
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        "TELNETCONSOLE_ENABLED=False",
        "-s",
        "CONCURRENT_REQUESTS=16",
        "-s",
        "CONCURRENT_REQUESTS_PER_DOMAIN=16",
        "-s",
        "RETRY_ENABLED=False",
    ]


def crawl(site: crawlsite.Site, on: bool, work: Path, validate_output: bool) -> Crawl:
    run = work / f"crawl-{next(_crawl_numbers)}"
    run.mkdir()
    out = run / "sitemaps"
    command = crawl_command(site, run)
    if not on:
        command += ["-s", "SITEMAPGEN_ENABLED=False"]
    log = run / "crawl.log"
    measure = measured(command, run, log)
    stats = crawl_stats(log)
    if measure.code or stats.get("finish_reason") != "'finished'":
        raise CheckFailed(f"crawl (add-on {'on' if on else 'off'}) failed:\n{tail(log)}")
    responses = int(stats["response_received_count"])
    if responses < site.pages:
        raise CheckFailed(
            f"the crawl saw {responses} responses, fewer than the site's {site.pages} pages"
        )
    if on:
        locs = published_locs(out)
        if len(locs) != len(set(locs)) or set(locs) != site.expected():
            raise CheckFailed(
                f"the crawl published {len(locs)} URLs ({len(set(locs))} distinct), "
                f"{len(site.expected())} expected"
            )
        if validate_output:
            from scrapy_sitemapgen.validate.checker import validate

            violations = validate([str(p) for p in sorted(out.glob("*/sitemap.xml"))])
            if violations:
                raise CheckFailed("\n".join(map(str, violations[:20])))
    elif out.exists():
        raise CheckFailed(f"SITEMAPGEN_ENABLED=False wrote {out}")
    result = Crawl(
        on,
        measure,
        float(stats["elapsed_time_seconds"]),
        responses,
        int(stats.get("sitemapgen/pages/recorded", "0")),
        float(stats["bench/crawl_cpu"]),
        float(stats["bench/extension_cpu"]),
    )
    if on and not result.extension_cpu:
        raise CheckFailed("the crawl counted no time in the extension: was its middleware found?")
    shutil.rmtree(run, ignore_errors=True)
    return result


def crawl_bench(pages: int, pairs: int, work: Path) -> list[tuple[Crawl, Crawl]]:
    site = crawlsite.Site(pages)
    try:
        print(
            f"crawl: {pages} pages at {site.root}, {len(site.expected())} listable; warm-up run",
            flush=True,
        )
        crawl(site, True, work, validate_output=True)  # not counted: warms caches, validates
        results = []
        for number in range(pairs):
            order = (True, False) if number % 2 == 0 else (False, True)
            done = {on: crawl(site, on, work, validate_output=False) for on in order}
            results.append((done[True], done[False]))
            print(
                f"  pair {number + 1}: on {done[True].pages_per_second:6.1f} pages/s, "
                f"off {done[False].pages_per_second:6.1f} pages/s",
                flush=True,
            )
        return results
    finally:
        site.close()


# --- report --------------------------------------------------------------------------------


def mib(kib: float) -> str:
    if kib <= rss_floor * 1.05:
        return f"< {rss_floor / 1024:,.0f} MiB"  # the launcher's own floor: see _LAUNCHER
    return f"{kib / 1024:,.0f} MiB"


def size(count: float) -> str:
    return f"{count / 1e6:,.2f} MB" if count >= 1e5 else f"{count / 1e3:,.1f} kB" if count else "-"


def seconds(value: float) -> str:
    return f"{value:,.2f} s" if value < 100 else f"{value:,.0f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--records", type=int, default=100_000, help="feed size for write throughput"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender (at least 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--memory",
        default="",
        help="comma-separated feed sizes for the memory runs (default: --records)",
    )
    parser.add_argument("--pages", type=int, default=2000, help="pages of the crawled site")
    parser.add_argument(
        "--pairs", type=int, default=5, help="alternating crawl pairs, add-on on/off"
    )
    parser.add_argument(
        "--xsw-level",
        default="6,9",
        help="gzip levels of xml-sitemap-writer, comma-separated: one contender each (default: "
        "6, zlib's level for the size ours writes, and 9, the level it ships with)",
    )
    parser.add_argument(
        "--only",
        default="write,memory,crawl",
        help="sections to run: write, memory, crawl (comma-separated)",
    )
    parser.add_argument(
        "--skip",
        default="",
        help="contenders to leave out of the write section: xsw, smjs "
        "(comma-separated; sitemap.js takes minutes per million records)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    try:
        xsw_levels = tuple(int(level) for level in args.xsw_level.split(","))
    except ValueError:
        parser.error(f"--xsw-level: comma-separated gzip levels, not {args.xsw_level!r}")
    if not xsw_levels or any(not 1 <= level <= 9 for level in xsw_levels):
        parser.error(f"--xsw-level: levels from 1 to 9, not {args.xsw_level!r}")
    if skip - {"xsw", "smjs"}:
        parser.error(f"--skip: unknown contender(s) {', '.join(sorted(skip - {'xsw', 'smjs'}))}")
    if args.repeat < 3 or args.pairs < 5 or args.pages < 2000:
        parser.error("--repeat must be at least 3, --pairs at least 5 and --pages at least 2000")
    if sections - {"write", "memory", "crawl"}:
        parser.error(
            f"--only: unknown section(s) {', '.join(sorted(sections - {'write', 'memory', 'crawl'}))}"
        )
    sizes = [
        int(s.replace("_", "")) for s in (args.memory or str(args.records)).split(",") if s.strip()
    ]
    command = "python -m benchmarks.bench " + shlex.join(argv if argv is not None else sys.argv[1:])
    revision = git_revision()
    digest = source_digest()
    work = Path(tempfile.mkdtemp(prefix="sitemapgen-bench-"))
    print(f"measuring scrapy-sitemapgen at {revision}; work folder {work}", flush=True)
    lines = [
        "### Benchmarks",
        "",
        f"- machine: {os.cpu_count()} cores (`os.cpu_count()`), Python {platform.python_version()}, "
        f"zlib {zlib.ZLIB_RUNTIME_VERSION}, Scrapy {importlib.metadata.version('scrapy')}, "
        f"{platform.system()} {platform.machine()}",
        f"- measured: scrapy-sitemapgen at commit {revision}",
        f"- command: `{command}`",
        "- every figure is one child process's own: wall, CPU (user + sys) and peak RSS "
        "(`ru_maxrss`) from `wait4`",
    ]
    try:
        if "write" in sections:
            info = feed.build(args.records, args.seed)
            lines.append(
                f"- input: {info.records:,} JSON-lines records ({size(info.bytes)}, seed {info.seed}): "
                f"{info.distinct_locs:,} distinct URLs on 3 origins, {info.non_ascii:,} with non-ASCII "
                f"paths ({info.raw_non_ascii:,} raw UTF-8), {info.ampersand:,} with `&`, "
                f"{info.images:,} images, {info.with_lastmod:,} lastmods, {info.repeats:,} repeated pages"
            )
            print(f"write throughput: {info.records:,} records, {args.repeat} rounds", flush=True)
            bench = WriteBench(info, work, xsw_levels, frozenset(skip))
            bench.run(args.repeat)
            base = bench.contenders[1].median("wall")
            lines += [
                "",
                f"#### Writing sitemaps from {info.records:,} records "
                f"(median of {args.repeat} alternating runs, each in its own process)",
                "",
                "| contender | wall vs bare loop | wall | CPU (user+sys) | peak RSS | peak RSS, all processes "
                "| output | URLs written | records/s |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for contender in bench.contenders:
                wall = contender.median("wall")
                lines.append(
                    f"| {contender.label} | {wall / base:.2f}x | {seconds(wall)} | "
                    f"{seconds(contender.median('cpu'))} | {mib(contender.median('rss'))} | "
                    f"{mib(contender.median('tree_rss'))} | "
                    f"{size(contender.median('bytes'))} | {int(contender.median('urls')):,} | "
                    f"{info.records / wall:,.0f} |"
                )
            # The machine's speed drifts between runs (a shared virtual machine): the ratio
            # within each round, ours and the bare loop run one after the other, is shown too.
            rounds = [
                o.wall / b.wall for o, b in zip(bench.contenders[0].runs, bench.contenders[1].runs)
            ]
            lines += [
                "",
                f"Ours against the bare loop within each round: "
                f"{', '.join(f'{r:.2f}x' for r in rounds)} (median {statistics.median(rounds):.2f}x).",
            ]
            packed = bench.recompress()
            level9 = bench.level9_run()
            ours = bench.contenders[0]
            from scrapy_sitemapgen.sitemaps.writer import DEFAULT_GZIP_BACKEND, DEFAULT_GZIP_LEVEL

            default = f"{DEFAULT_GZIP_LEVEL}, {DEFAULT_GZIP_BACKEND}"
            lines += [
                "",
                f"Our urlsets: {size(packed['raw'])} uncompressed (the bare loop's: "
                f"{size(bench.plain_bytes)}), compressed at the default level ({default}) and at 9:",
                "",
                "| gzip level | urlset bytes | vs the default | time |",
                "|---|---:|---:|---:|",
            ]
            if level9 is not None:
                lines += [
                    f"| {default} (default) | {packed['written']:,.0f} | 1.000 | {seconds(ours.median('wall'))} "
                    f"wall, the whole build |",
                    f"| 9 (`-s SITEMAPGEN_GZIP_LEVEL=9`, one run) | {level9.bytes:,.0f} | "
                    f"{level9.bytes / packed['written']:.3f} | {seconds(level9.wall)} wall, the whole build |",
                    f"| Python's zlib at 9 (recompressed) | {packed['z9']:,.0f} | "
                    f"{packed['z9'] / packed['written']:.3f} | {seconds(packed['t9'])} to recompress |",
                    "",
                    f"The default writes {packed['written'] / min(packed['z9'], level9.bytes) - 1:+.1%} "
                    f"against the smaller level 9 (issue 6: at most +10 %).",
                ]
            else:
                lines += [
                    f"| 6 (as written) | {packed['written']:,.0f} | 1.000 | "
                    f"{seconds(packed['t6'])} to recompress at 6 |",
                    f"| 9 (recompressed) | {packed['z9']:,.0f} | {packed['z9'] / packed['written']:.3f} | "
                    f"{seconds(packed['t9'])} to recompress at 9 |",
                    "",
                    "The package has no `SITEMAPGEN_GZIP_LEVEL` setting, so level 9 is our uncompressed "
                    "bytes recompressed with Python's zlib, one thread.",
                ]
                if abs(packed["z6"] - packed["written"]) > 0.01 * packed["written"]:
                    lines.append(
                        f"(Recompressed at 6: {packed['z6']:,.0f} bytes, not the size written.)"
                    )
            lines += ["", *(f"- {note}" for note in bench.notes)]
            shutil.rmtree(bench.plain, ignore_errors=True)
        if "memory" in sections:
            print(f"memory: ours at {', '.join(f'{n:,}' for n in sizes)} records", flush=True)
            lines += [
                "",
                "#### Memory and phases of ours (`sitemapgen-build --input`, one run per size)",
                "",
                "| records | URLs | wall | peak RSS | peak RSS, all processes | start-up | "
                "ingestion into the store | ingestion rate | writing + publishing |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for count in sizes:
                _size_info, measure, split = memory_run(count, args.seed, work)
                print(
                    f"  {count:>10,} records: {measure.wall:.1f} s, {mib(measure.rss)}", flush=True
                )
                if split is None:
                    cells = "? | ? | ? | ?"
                else:
                    cells = (
                        f"{seconds(split.startup)} | {seconds(split.ingest)} | "
                        f"{count / split.ingest:,.0f} records/s | {seconds(split.write)}"
                    )
                lines.append(
                    f"| {count:,} | {measure.urls:,} | {seconds(measure.wall)} | {mib(measure.rss)} | "
                    f"{mib(measure.tree_rss)} | {cells} |"
                )
        if "crawl" in sections:
            results = crawl_bench(args.pages, args.pairs, work)
            ratios = [on.pages_per_second / off.pages_per_second for on, off in results]
            on_pps = statistics.median(on.pages_per_second for on, _ in results)
            off_pps = statistics.median(off.pages_per_second for _, off in results)
            on_cpu = statistics.median(on.measure.cpu for on, _ in results)
            off_cpu = statistics.median(off.measure.cpu for _, off in results)
            recorded = statistics.median(on.recorded_per_second for on, _ in results)
            responses = results[0][0].responses
            extension = statistics.median(on.extension_cpu / on.responses for on, _ in results)
            share = statistics.median(on.extension_cpu / on.crawl_cpu for on, _ in results)
            cpu_ratios = [on.cpu_per_response / off.cpu_per_response for on, off in results]
            lines += [
                "",
                f"#### Crawl overhead: {args.pages:,} pages ({responses:,} responses with the 404s), "
                f"`scrapy runspider benchmarks/sitespider.py`, {args.pairs} alternating pairs",
                "",
                "| crawl | responses/s vs add-on off | responses/s | CPU (user+sys) | peak RSS |",
                "|---|---:|---:|---:|---:|",
                f"| `SITEMAPGEN_ENABLED=False` | 1.00x | {off_pps:,.0f} | {seconds(off_cpu)} | "
                f"{mib(statistics.median(off.measure.rss for _, off in results))} |",
                f"| add-on on | {statistics.median(ratios):.3f}x (pairs: "
                f"{', '.join(f'{r:.3f}' for r in ratios)}) | {on_pps:,.0f} | {seconds(on_cpu)} | "
                f"{mib(statistics.median(on.measure.rss for on, _ in results))} |",
                "",
                f"Store ingestion during the crawl: {recorded:,.0f} pages recorded/s "
                f"(`sitemapgen/pages/recorded` over `elapsed_time_seconds`, median; bounded by the crawl "
                f"rate, not by the store). responses/s is `response_received_count` over "
                f"`elapsed_time_seconds`, which ends before the sitemaps are written at close (a fraction of a second here).",
                "",
                f"The extension's own code in the crawl (its spider middleware and the store's flushes, "
                f"the shared HTML parse left out): {extension * 1e6:,.0f} us a response, "
                f"{share * 100:.1f} % of the crawl's process time (medians; the crawl's: from the first "
                f"request to the last response parsed, "
                f"{statistics.median(on.cpu_per_response for on, _ in results) * 1e3:.2f} ms a response on, "
                f"{statistics.median(off.cpu_per_response for _, off in results) * 1e3:.2f} ms off; "
                f"per pair, on/off: {', '.join(f'{r:.3f}' for r in cpu_ratios)}).",
            ]
    except CheckFailed as exc:
        print(f"CHECK FAILED: {exc}", flush=True)
        return 1
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if source_digest() != digest:
        lines.insert(5, f"- WARNING: the package changed during the run (now at {git_revision()})")
    elif git_revision() != revision:
        lines.insert(
            5,
            f"- HEAD moved to {git_revision()} during the run; the package's source did not change",
        )
    print()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
