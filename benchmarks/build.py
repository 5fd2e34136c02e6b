"""The offline build, ``scrapy sitemapgen-build --input``, against baselines (``build``) and
alone at growing feed sizes (``memory``).

    python -m benchmarks build --records 1000000 --repeat 3
    python -m benchmarks memory --sizes 100000,1000000,5000000

The input is the seeded JSON-lines feed of :mod:`benchmarks.feed`, cached under
``benchmarks/out/``.

``build``: every contender in its own child process, run alternately (ABCDEF ABCDEF ...),
``--repeat`` rounds: wall, CPU (user + sys), peak RSS, output bytes. The contenders: ours
(``scrapy sitemapgen-build --input``, as users run it), a bare loop (string formatting +
gzip, :mod:`benchmarks.contenders`), ``gzip -6`` alone over the bare loop's uncompressed
bytes, reading + ``json.loads`` alone, the floor ``least`` (parse, render, sort and gzip in
two processes and nothing else: what no pure-Python build that sorts can go under), the PyPI
package ``xml-sitemap-writer`` (one contender per ``--xsw-level``; installed under
``benchmarks/out/pydeps`` on first use), and
sitemap.js, the npm package ``sitemap`` at a pinned version through its documented
streaming API (``benchmarks/sitemapjs.cjs``; installed with npm under
``benchmarks/out/sitemapjs`` on first use, skipped with a note without node and npm). A run
counts only once its output is checked (:mod:`benchmarks.checks`): the ``<loc>`` count,
following each origin's index; for ours it must equal the feed's distinct normalised URLs,
and the package's validator passes on every file (N <= 100,000) or on each origin's first
urlset (the other runs must then give the same urlset bytes). Then our urlsets at gzip
level 9 against the default: a run with ``SITEMAPGEN_GZIP_LEVEL=9``, and recompressed with
Python's zlib at 9.

``memory``: ours once at each ``--sizes`` size, with the phases of the run from its log:
start-up, ingestion of the feed into the store, writing and publishing.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from . import checks, feed, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from .results import Record

HERE = Path(__file__).resolve().parent
CONTENDERS = HERE / "contenders.py"
#: Up to this many URLs, every file of ours is validated; above, each origin's first urlset.
VALIDATE_ALL = 100_000
#: sitemap.js (npm ``sitemap``), pinned: installed on first use under ``benchmarks/out/``.
SITEMAPJS_VERSION = "9.0.1"
SITEMAPJS_PREFIX = feed.OUT / "sitemapjs"
SITEMAPJS = HERE / "sitemapjs.cjs"
#: URLs per file, the protocol's limit: the node script splits there; its check holds it to it.
MAX_URLS = 50_000
_LOG_FORMAT = "%(asctime)s.%(msecs)03d [%(name)s] %(levelname)s: %(message)s"
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[([^\]]+)\] (\w+): (.*)$")


def scrapy_command() -> list[str]:
    """The ``scrapy`` command beside this Python, as users run it (a console script, which
    is not ``python -m scrapy`` for multiprocessing: see bulk._main_script_hidden)."""
    script = Path(sys.executable).with_name("scrapy")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "scrapy"]


def ours_command(feed_path: Path, run: Path, *settings: str) -> list[str]:
    command = [*scrapy_command(), "sitemapgen-build", "--input", str(feed_path)]
    for setting in (
        f"SITEMAPGEN_URI={run / 'sitemaps'}",
        f"SITEMAPGEN_STATE={run / 'state.sqlite3'}",
        "LOG_LEVEL=WARNING",
        *settings,
    ):
        command += ["-s", setting]
    return command


# --- build: write throughput ---------------------------------------------------------------


@dataclass
class Contender:
    key: str
    label: str
    #: (command, cwd, output folder) for a run in a fresh folder
    prepare: Callable[[Path], tuple[list[str], Path, Path]]
    #: checks the output (raises CheckFailed) and fills urls and bytes
    check: Callable[[measure.Measure, Path, Path], None]
    runs: list[measure.Measure] = field(default_factory=list)


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
        self.notes: list[str] = []
        self.plain = work / "plain"
        self.plain_files: list[Path] = []
        self.plain_bytes = 0
        self.plain_measure: measure.Measure | None = None
        self._numbers = itertools.count(1)
        self._ours_hashes: dict[str, str] | None = None
        self.ours_last: Path | None = None
        self.gzip_binary = shutil.which("gzip")
        # Every child gets the same environment, the benchmark-only packages on its path:
        # start-up costs the same for every contender.
        self.env = measure.pydeps_env()
        self.xsw_version = "" if "xsw" in skip else self._xsw(xsw_levels)
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
            Contender(
                "least",
                "least: parse + render + sort + gzip in 2 processes (a floor, no checks)",
                self._least,
                self._check_records,
            ),
        ]
        if self.xsw_version:
            # At the level whose size is ours (zlib's 6), and at the 9 it ships with.
            for level in xsw_levels:
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

    def _xsw(self, levels: tuple[int, ...]) -> str:
        if not measure.benchmark_tool(
            "xml-sitemap-writer", measure.importable("xml_sitemap_writer"), self.notes
        ):
            return ""
        found = subprocess.run(
            [
                sys.executable,
                "-c",
                "import importlib.metadata as m; print(m.version('xml-sitemap-writer'))",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        version = found.stdout.strip() or "?"
        self.notes.append(
            f"xml-sitemap-writer {version} cannot write images (no API for them): its files have "
            f"none; it writes 15,000 URLs per file, and was run at gzip level "
            f"{' and '.join(map(str, levels))} (it ships with 9)."
        )
        return version

    def _sitemapjs(self) -> str:
        """sitemap.js at the pinned version, installed with npm under ``benchmarks/out/`` on
        first use; its label's version, or "" (and a note) when node or npm is missing, the
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

    def _check_ours(self, measured: measure.Measure, out: Path, log: Path) -> None:
        if measured.code:
            raise CheckFailed(f"exit status {measured.code}:\n{measure.tail(log)}")
        measured.urls, measured.bytes = checks.count_locs(out)
        checks.require_count("ours", measured.urls, self.info.distinct_locs)
        files = checks.urlsets(out)
        hashes = {
            f"{p.parent.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in files
        }
        if hashes != self._ours_hashes:  # the first run, or the package changed under us
            if self.info.distinct_locs <= VALIDATE_ALL:
                sources = sorted(out.glob("*/sitemap.xml"))
                what = "every file"
            else:
                sources = [p for p in files if p.name == "sitemap-1.xml.gz"]
                what = "each origin's first urlset"
            checks.validate(sources)
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

    def _least(self, run: Path) -> tuple[list[str], Path, Path]:
        out = run / "out"
        return [sys.executable, str(CONTENDERS), "least", str(self.feed), str(out)], run, out

    def _xsw_run(self, run: Path, level: int) -> tuple[list[str], Path, Path]:
        out = run / "out"
        command = [sys.executable, str(CONTENDERS), "xsw", str(self.feed), str(out)]
        return [*command, "--level", str(level)], run, out

    def _check_records(self, measured: measure.Measure, out: Path, log: Path) -> None:
        if measured.code:
            raise CheckFailed(f"exit status {measured.code}:\n{measure.tail(log)}")
        measured.urls, measured.bytes = checks.count_locs(out)
        # No deduplication: one <url> per record.
        checks.require_count(str(out.parent.name), measured.urls, self.info.records)
        shutil.rmtree(out.parent, ignore_errors=True)

    def _sitemapjs_run(self, run: Path) -> tuple[list[str], Path, Path]:
        out = run / "out"
        return (
            [self.node, str(SITEMAPJS), str(self.feed), str(out), str(SITEMAPJS_PREFIX)],
            run,
            out,
        )

    def _check_sitemapjs(self, measured: measure.Measure, out: Path, log: Path) -> None:
        """As the other record writers, and: no urlset over the limit, every image of the
        feed written, every file well-formed (the first run), and whatever it printed besides
        its count (its warnings) noted once."""
        if measured.code:
            raise CheckFailed(f"exit status {measured.code}:\n{measure.tail(log)}")
        images = 0
        try:
            for path in checks.urlsets(out):
                data = checks.read_sitemap(path)
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
        self._check_records(measured, out, log)

    def prepare_plain(self) -> None:
        """The bare loop's bytes, uncompressed, once: the input of ``gzip alone``."""
        log = self.work / "plain.log"
        command = [sys.executable, str(CONTENDERS), "bare", str(self.feed), str(self.plain)]
        self.plain_measure = measure.measured([*command, "--plain"], self.work, log, self.env)
        if self.plain_measure.code:
            raise CheckFailed(f"the uncompressed bare loop failed:\n{measure.tail(log)}")
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

    def _check_gzip(self, measured: measure.Measure, out: Path, log: Path) -> None:
        if measured.code:
            raise CheckFailed(f"exit status {measured.code}:\n{measure.tail(log)}")
        for plain in self.plain_files:
            packed = plain.with_name(plain.name + ".gz")
            data = gzip.decompress(packed.read_bytes())
            if len(data) != plain.stat().st_size:
                raise CheckFailed(f"{packed} does not decompress to {plain}")
            measured.urls += data.count(b"<loc>")
            measured.bytes += packed.stat().st_size
        checks.require_count("gzip alone", measured.urls, self.info.records)

    def _json(self, run: Path) -> tuple[list[str], Path, Path]:
        return [sys.executable, str(CONTENDERS), "json", str(self.feed)], run, run

    def _check_json(self, measured: measure.Measure, out: Path, log: Path) -> None:
        words = log.read_text().split()
        if measured.code or not words or words[-1] != str(self.info.records):
            raise CheckFailed(
                f"exit status {measured.code}, {self.info.records} records expected:\n"
                f"{measure.tail(log)}"
            )
        measured.urls = self.info.records

    def run(self, repeat: int, rounds: list[dict[str, Any]]) -> None:
        """``repeat`` rounds; each round's measures are appended to ``rounds`` as it ends."""
        self.prepare_plain()
        for number in range(1, repeat + 1):
            done: dict[str, Any] = {}
            for contender in self.contenders:
                run = self._fresh(contender.key)
                command, cwd, out = contender.prepare(run)
                log = run / "run.log"
                measured = measure.measured(command, cwd, log, self.env)
                contender.check(measured, out, log)
                contender.runs.append(measured)
                done[contender.key] = measured.as_dict()
                print(
                    f"  run {number} {contender.key:5} {measured.wall:8.2f} s wall "
                    f"{measured.cpu:8.2f} s CPU {measured.rss / 1024:7.1f} MiB  "
                    f"{measured.urls:>10,} URLs  {measured.bytes:>12,} B",
                    flush=True,
                )
            rounds.append(done)

    def recompress(self) -> dict[str, float]:
        """Our urlsets: their bytes as written (the default level), and recompressed with
        Python's zlib at 6 and 9 (sizes in bytes, times in seconds)."""
        assert self.ours_last is not None
        result = dict.fromkeys(("raw", "written", "z6", "z9", "t6", "t9"), 0.0)
        for path in checks.urlsets(self.ours_last):
            data = gzip.decompress(path.read_bytes())
            result["raw"] += len(data)
            result["written"] += path.stat().st_size
            for level in (6, 9):
                packed, took = measure.timed(gzip.compress, data, compresslevel=level, mtime=0)
                result[f"z{level}"] += len(packed)
                result[f"t{level}"] += took.wall
        return result

    def level9_run(self) -> measure.Measure:
        """Ours once more with ``SITEMAPGEN_GZIP_LEVEL=9``; ``bytes`` are the urlsets'."""
        run = self._fresh("ours9")
        log = run / "run.log"
        out = run / "sitemaps"
        command = ours_command(self.feed, run, "SITEMAPGEN_GZIP_LEVEL=9")
        measured = measure.measured(command, run, log, self.env)
        if measured.code:
            raise CheckFailed(f"ours at level 9: exit status {measured.code}:\n{measure.tail(log)}")
        measured.urls, measured.bytes = checks.count_locs(out)
        checks.require_count("ours at level 9", measured.urls, self.info.distinct_locs)
        measured.bytes = sum(p.stat().st_size for p in checks.urlsets(out))
        shutil.rmtree(run, ignore_errors=True)
        return measured


def _median(runs: list[dict[str, Any]], name: str) -> float:
    return float(statistics.median(run[name] for run in runs))


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=100_000, help="feed size")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (at least 3)")
    parser.add_argument("--seed", type=int, default=1)
    feed.add_shape_arguments(parser)
    parser.add_argument(
        "--xsw-level",
        default="6,9",
        help="gzip levels of xml-sitemap-writer, comma-separated: one contender each (default: "
        "6, zlib's level for the size ours writes, and 9, the level it ships with)",
    )
    parser.add_argument(
        "--skip",
        default="",
        help="contenders to leave out: xsw, smjs (comma-separated; sitemap.js is by far "
        "the slowest contender at large feeds)",
    )


def run_build(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``rounds`` (a list, one ``{contender key: Measure}`` per round, in
    the order run), ``plain`` (the uncompressed bare loop, once, the input of gzip alone),
    ``plain_bytes`` (its size), ``level9`` (ours with ``SITEMAPGEN_GZIP_LEVEL=9``, once),
    ``recompress`` (our urlsets' ``raw``, ``written``, ``z6``, ``z9`` bytes and ``t6``,
    ``t9`` seconds), ``rss_floor`` (the launcher's own peak RSS, KiB).
    ``summary``: ``contenders`` (key to label and the medians), ``ours_vs_bare_rounds``,
    ``throughput_vs`` (a contender's wall over ours, by median and per round), ``gzip``."""
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    try:
        xsw_levels = tuple(int(level) for level in args.xsw_level.split(","))
    except ValueError:
        raise SystemExit(
            f"--xsw-level: comma-separated gzip levels, not {args.xsw_level!r}"
        ) from None
    if not xsw_levels or any(not 1 <= level <= 9 for level in xsw_levels):
        raise SystemExit(f"--xsw-level: levels from 1 to 9, not {args.xsw_level!r}")
    if skip - {"xsw", "smjs"}:
        raise SystemExit(
            f"--skip: unknown contender(s) {', '.join(sorted(skip - {'xsw', 'smjs'}))}"
        )
    if args.repeat < 3 and not args.smoke:
        raise SystemExit("--repeat must be at least 3 (or --smoke, to try the harness)")
    from scrapy_sitemapgen.sitemaps.writer import DEFAULT_GZIP_BACKEND, DEFAULT_GZIP_LEVEL

    info = feed.build(args.records, args.seed, shape=args.shape, origins=args.origins)
    record["parameters"] = {
        "records": args.records,
        "repeat": args.repeat,
        "seed": args.seed,
        "shape": args.shape,
        "origins": info.origins,
        "xsw_levels": list(xsw_levels),
        "skip": sorted(skip),
        "feed": asdict(info),
        "gzip_default": {"level": DEFAULT_GZIP_LEVEL, "backend": DEFAULT_GZIP_BACKEND},
    }
    rounds: list[dict[str, Any]] = []
    record["measurements"] = {"rounds": rounds}
    print(f"build: {info.records:,} records, {args.repeat} rounds", flush=True)
    bench = WriteBench(info, work, xsw_levels, frozenset(skip))
    record["notes"] = bench.notes
    record["parameters"]["contenders"] = [
        {"key": c.key, "label": c.label} for c in bench.contenders
    ]
    bench.run(args.repeat, rounds)
    packed = bench.recompress()
    level9 = bench.level9_run()
    assert bench.plain_measure is not None
    record["measurements"].update(
        plain=bench.plain_measure.as_dict(),
        level9=level9.as_dict(),
        recompress=packed,
        plain_bytes=bench.plain_bytes,
        rss_floor=measure.rss_floor,
    )
    shutil.rmtree(bench.plain, ignore_errors=True)
    record["summary"] = build_summary(record)
    return 0


def build_summary(record: Record) -> dict[str, Any]:
    """The medians and ratios of a build record, from its measurements alone."""
    m = record["measurements"]
    rounds = m["rounds"]
    records = record["parameters"]["records"]
    keys = [c["key"] for c in record["parameters"]["contenders"]]
    labels = {c["key"]: c["label"] for c in record["parameters"]["contenders"]}
    runs = {key: [r[key] for r in rounds] for key in keys}
    base = _median(runs["bare"], "wall")
    ours = _median(runs["ours"], "wall")
    contenders = {}
    for key in keys:
        wall = _median(runs[key], "wall")
        contenders[key] = {
            "label": labels[key],
            **{name: _median(runs[key], name) for name in ("wall", "cpu", "rss", "tree_rss")},
            "bytes": _median(runs[key], "bytes"),
            "urls": int(_median(runs[key], "urls")),
            "wall_vs_bare": wall / base,
            "records_per_s": records / wall,
        }
    per_round = [r["ours"]["wall"] / r["bare"]["wall"] for r in rounds]
    # The floor's within-round ratios, and ours over it: what ours does beyond the least.
    floor = (
        {
            "least_vs_bare_rounds": [r["least"]["wall"] / r["bare"]["wall"] for r in rounds],
            "ours_vs_least_rounds": [r["ours"]["wall"] / r["least"]["wall"] for r in rounds],
            "ours_vs_least_cpu_rounds": [r["ours"]["cpu"] / r["least"]["cpu"] for r in rounds],
        }
        if "least" in keys
        else {}
    )
    throughput = {
        key: {
            "median": _median(runs[key], "wall") / ours,
            "rounds": [r[key]["wall"] / r["ours"]["wall"] for r in rounds],
        }
        for key in keys
        if key.startswith(("xsw", "smjs"))
    }
    packed = m["recompress"]
    level9 = m["level9"]
    return {
        "contenders": contenders,
        "ours_vs_bare_rounds": per_round,
        "ours_vs_bare_rounds_median": statistics.median(per_round),
        **floor,
        "throughput_vs": throughput,
        "gzip": {
            "raw_bytes": packed["raw"],
            "bare_raw_bytes": m.get("plain_bytes"),
            "default_bytes": packed["written"],
            "level9_bytes": level9["bytes"],
            "level9_vs_default": level9["bytes"] / packed["written"],
            "level9_wall": level9["wall"],
            "default_wall": contenders["ours"]["wall"],
            "zlib9_bytes": packed["z9"],
            "zlib9_vs_default": packed["z9"] / packed["written"],
            "zlib9_seconds": packed["t9"],
            "default_over_smallest_9": packed["written"] / min(packed["z9"], level9["bytes"]) - 1,
        },
    }


# --- memory: growth and phases -------------------------------------------------------------


def phases(log: Path, started: float, ended: float) -> dict[str, float] | None:
    """Start-up (to "Sitemap: reading ..."), ingestion (to "Sitemap: ... read, ..."),
    writing and publishing (to the close report's first per-origin "Sitemap: ..." line),
    the rest (stats, exit)."""
    marks: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = _LOG_LINE.match(line)
        if not match:
            continue
        when = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        message = match[4]
        ours = match[2].startswith("scrapy_sitemapgen.")
        if ours and message.startswith("Sitemap: reading "):
            marks.setdefault("opened", when)
        elif ours and message.startswith("Sitemap: ") and " read, " in message:
            marks.setdefault("closing", when)
        elif ours and message.startswith("Sitemap: ") and " URLs (" in message:  # close report
            marks.setdefault("written", when)
    if len(marks) < 3:
        return None
    return {
        "startup": marks["opened"] - started,
        "ingest": marks["closing"] - marks["opened"],
        "write": marks["written"] - marks["closing"],
        "rest": ended - marks["written"],
    }


def memory_run(
    size: int, seed: int, work: Path, shape: str = "ours", origins: int = 0
) -> dict[str, Any]:
    info = feed.build(size, seed, shape=shape, origins=origins)
    run = work / f"memory-{size}"
    run.mkdir()
    log = run / "run.log"
    command = ours_command(Path(info.path), run, "LOG_LEVEL=INFO", f"LOG_FORMAT={_LOG_FORMAT}")
    started = time.time()
    measured = measure.measured(command, run, log)
    ended = time.time()
    if measured.code:
        raise CheckFailed(
            f"ours at {size:,} records: exit status {measured.code}:\n{measure.tail(log)}"
        )
    measured.urls, measured.bytes = checks.count_locs(run / "sitemaps")
    checks.require_count(f"ours at {size:,} records", measured.urls, info.distinct_locs)
    split = phases(log, started, ended)
    shutil.rmtree(run, ignore_errors=True)
    return {
        "records": size,
        "distinct_locs": info.distinct_locs,
        **measured.as_dict(),
        "phases": split,
    }


def add_memory_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        default="100000,1000000,5000000",
        help="comma-separated feed sizes, one run each",
    )
    parser.add_argument("--seed", type=int, default=1)
    feed.add_shape_arguments(parser)


def run_memory(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``runs``, one per size: ``records``, ``distinct_locs``, the
    Measure fields, ``phases`` (``startup``, ``ingest``, ``write``, ``rest`` seconds, or
    null when the log lacked a mark). ``summary``: ``tree_rss_growth`` (KiB, the largest
    size's all-processes peak over the smallest's), ``ingest_records_per_s`` by size."""
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--sizes: comma-separated record counts, not {args.sizes!r}") from None
    record["parameters"] = {
        "sizes": sizes,
        "seed": args.seed,
        "shape": args.shape,
        "origins": args.origins or len(feed.ORIGINS),
    }
    runs: list[dict[str, Any]] = []
    record["measurements"] = {"runs": runs}
    print(f"memory: ours at {', '.join(f'{n:,}' for n in sizes)} records", flush=True)
    for size in sizes:
        result = memory_run(size, args.seed, work, args.shape, args.origins)
        runs.append(result)
        print(
            f"  {size:>10,} records: {result['wall']:.1f} s, {result['rss'] / 1024:.0f} MiB, "
            f"all processes {result['tree_rss'] / 1024:.0f} MiB",
            flush=True,
        )
    record["measurements"]["rss_floor"] = measure.rss_floor
    record["summary"] = {
        "tree_rss_growth": runs[-1]["tree_rss"] - runs[0]["tree_rss"],
        "rss_growth": runs[-1]["rss"] - runs[0]["rss"],
        "ingest_records_per_s": {
            str(r["records"]): r["records"] / r["phases"]["ingest"]
            for r in runs
            if r["phases"] and r["phases"]["ingest"] > 0
        },
    }
    return 0
