"""Where the time goes: two profilers.

    python -m benchmarks profile-build --records 100000 --top 15
    python -m benchmarks profile-crawl --pages 2000 --repeat 5
    python -m benchmarks profile-crawl --docs debian-handbook --repeat 5

``profile-build``: ``scrapy sitemapgen-build --input`` run in this process under cProfile,
one profiler per thread, merged into one report: the feed is recorded into the store in the
main thread and the sitemaps are staged in a worker thread, which a plain
``python -m cProfile`` does not see. The feed is the benchmark's (:mod:`benchmarks.feed`);
the merged profile is also saved (``--out``, default ``benchmarks/out/build-n<N>.prof``) for
``python -m pstats`` or snakeviz.

``profile-crawl``: what the extension costs per crawled page without the noise of a crawl.
On the pages of :mod:`tests.generated_site`, in this process, the least process time of
``--repeat`` rounds of, side by side: the baseline, what a crawl does with each page anyway
(Scrapy builds the ``HtmlResponse``, parses it and the benchmark spider reads its links and
builds their requests), and ours, what the extension adds (``extract.page_facts`` on the
parsed page, whose parse is shared with the spider, and the store's ``record``, flushes
included). The baseline leaves out most of what a crawl spends per response (Twisted, the
HTTP client, the engine, the scheduler, the middlewares), so ours over the baseline is far
above the crawl's own slowdown; ours over the crawl's CPU per response (``crawl``) is the
share that matters. These figures move little from run to run, so they tell whether a
change made the extension cheaper; ``--profile`` adds a cProfile listing of ours.
``--docs PACKAGE`` reads a real site's pages instead: the HTML of a Debian documentation
package (``debian-handbook``, ``python3.11-doc``), unpacked as ``crawl-docs`` unpacks it,
at the URLs it would be served from, with ``SITEMAPGEN_RESPECT_CANONICAL=False`` as
``crawl-docs`` sets it.
"""

from __future__ import annotations

import cProfile
import io
import logging
import os
import pstats
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tests import generated_site

from . import build_phases, feed, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse

    from scrapy.http import HtmlResponse

    from scrapy_sitemapgen.settings import Config
    from scrapy_sitemapgen.stats import Reporter

    from .results import Record

REPO = Path(__file__).resolve().parent.parent


# --- profile-build -------------------------------------------------------------------------


#: Put first on the workers' ``PYTHONPATH``: its ``sitecustomize`` profiles each of them.
WORKER_PROFILE = Path(__file__).resolve().parent / "worker_profile"


def profile_build(
    feed_path: Path, work: Path, settings: list[str], workers: int = 1
) -> tuple[pstats.Stats, pstats.Stats | None, measure.Timing, int]:
    """Run the build in this process; the merged stats of this process, those of the
    worker processes (``workers`` > 1: each profiled by :data:`WORKER_PROFILE`'s
    ``sitecustomize``, else None), its timing and the exit code."""
    from .worker_profile.sitecustomize import ENV, ThreadProfiles

    worker_folder = work / "worker-profiles"
    saved = {name: os.environ.get(name) for name in (ENV, "PYTHONPATH")}
    if workers > 1:
        worker_folder.mkdir()
        os.environ[ENV] = str(worker_folder)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(WORKER_PROFILE), str(REPO), saved["PYTHONPATH"]])
        )
    threads = ThreadProfiles()
    threads.install()
    from scrapy.cmdline import execute

    argv = ["scrapy", "sitemapgen-build", "--input", str(feed_path), "--workers", str(workers)]
    for setting in settings:
        argv += ["-s", setting]
    os.chdir(work)  # no scrapy.cfg above: the settings are Scrapy's defaults plus ours
    main = cProfile.Profile()

    def build() -> int:
        main.enable()
        try:
            execute(argv)
        except SystemExit as exc:
            return int(exc.code or 0)
        finally:
            main.disable()
        return 0

    try:
        code, timing = measure.timed(build)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    stats = threads.merged(main)
    # The pool is shut down (its workers joined, their profiles written) before the
    # command returns.
    dumps = sorted(worker_folder.glob("worker-*.prof")) if workers > 1 else []
    if workers > 1 and not dumps:
        raise CheckFailed(f"no worker wrote its profile into {worker_folder}")
    worker_stats = pstats.Stats(*map(str, dumps)) if dumps else None
    return stats, worker_stats, timing, code


def _short(path: str) -> str:
    for prefix in sorted({*sys.path, str(REPO)}, key=len, reverse=True):
        if prefix.startswith("/") and path.startswith(prefix.rstrip("/") + "/"):
            return path[len(prefix.rstrip("/")) + 1 :]
    return path


def report(stats: pstats.Stats, key: str, top: int, *restrictions: str) -> str:
    """The ``print_stats`` table, paths shortened to the package or the library."""
    buffer = io.StringIO()
    stats.stream = buffer  # type: ignore[attr-defined]
    stats.sort_stats(key).print_stats(*restrictions, top)
    lines = buffer.getvalue().splitlines()
    start = next((n for n, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    text = "\n".join(lines[start:]).rstrip()
    for prefix in sorted({*sys.path, str(REPO)}, key=len, reverse=True):
        if prefix.startswith("/"):
            text = text.replace(prefix.rstrip("/") + "/", "")
    return text


def top_rows(stats: pstats.Stats, key: str, top: int, within: str = "") -> list[dict[str, Any]]:
    """The ``top`` functions by ``key`` (``cumulative`` or ``tottime``), those whose file
    holds ``within`` when given: function, primitive and total calls, own and cumulative
    seconds."""
    index = {"cumulative": 3, "tottime": 2}[key]
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = sorted(table.items(), key=lambda item: item[1][index], reverse=True)
    found = []
    for (path, line, name), (primitive, calls, own, cumulative, _callers) in rows:
        if within and within not in path:
            continue
        found.append(
            {
                "function": f"{_short(path)}:{line}({name})",
                "primitive_calls": primitive,
                "calls": calls,
                "tottime": round(own, 6),
                "cumtime": round(cumulative, 6),
            }
        )
        if len(found) == top:
            break
    return found


def add_profile_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    feed.add_shape_arguments(parser)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="the build's --workers; the default 1 keeps the feed's reading in this process, profiled",
    )
    parser.add_argument("--out", type=Path, help="where to save the merged profile")


def run_profile_build(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``wall``, ``cpu`` (this process, all threads), ``max_rss`` (KiB),
    ``code``, ``profile`` (the saved file), ``top`` (``cumulative``, ``package``,
    ``tottime``: rows of :func:`top_rows`)."""
    info = feed.build(args.records, args.seed, shape=args.shape, origins=args.origins)
    record["parameters"] = {
        "records": args.records,
        "seed": args.seed,
        "shape": args.shape,
        "origins": info.origins,
        "top": args.top,
        "workers": args.workers,
        "feed": {"path": info.path, "records": info.records, "distinct_locs": info.distinct_locs},
    }
    out = (args.out or feed.OUT / f"build-n{args.records}.prof").resolve()
    settings = [
        f"SITEMAPGEN_URI={work / 'sitemaps'}",
        f"SITEMAPGEN_STATE={work / 'state.sqlite3'}",
        "LOG_LEVEL=WARNING",
    ]
    here = Path.cwd()
    try:
        stats, worker_stats, timing, code = profile_build(
            Path(info.path), work, settings, args.workers
        )
    finally:
        os.chdir(here)
    stats.dump_stats(str(out))
    worker_out = out.with_name(f"{out.stem}-workers{out.suffix}")
    if worker_stats is not None:
        worker_stats.dump_stats(str(worker_out))
    record["measurements"] = {
        "wall": timing.wall,
        "cpu": timing.cpu,
        "max_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "code": code,
        "profile": str(out),
        "phases": build_phases.by_phase(stats),
        "top": {
            "cumulative": top_rows(stats, "cumulative", args.top),
            "package": top_rows(stats, "cumulative", args.top, "scrapy_sitemapgen/"),
            "tottime": top_rows(stats, "tottime", args.top),
        },
    }
    if worker_stats is not None:
        record["measurements"]["worker_profile"] = str(worker_out)
        record["measurements"]["workers_phases"] = build_phases.by_phase(worker_stats)
        record["measurements"]["workers_top"] = {
            "cumulative": top_rows(worker_stats, "cumulative", args.top),
            "package": top_rows(worker_stats, "cumulative", args.top, "scrapy_sitemapgen/"),
            "tottime": top_rows(worker_stats, "tottime", args.top),
        }
    record["summary"] = {"wall": timing.wall, "records_per_s": info.records / timing.wall}
    print(
        f"sitemapgen-build --input ({info.records:,} records) under cProfile: "
        f"{timing.wall:.1f} s wall, exit {code}"
    )
    print(f"profile saved to {out}\n")
    print(f"top {args.top} by cumulative time, all threads:")
    print(report(stats, "cumulative", args.top))
    print(f"\ntop {args.top} by cumulative time, the package's functions:")
    print(report(stats, "cumulative", args.top, "scrapy_sitemapgen/"))
    print(f"\ntop {args.top} by own time, all threads:")
    print(report(stats, "tottime", args.top))
    if worker_stats is not None:
        print(f"\nworker processes ({args.workers}), profile saved to {worker_out}")
        print(f"top {args.top} by cumulative time, the package's functions, all workers:")
        print(report(worker_stats, "cumulative", args.top, "scrapy_sitemapgen/"))
        print(f"\ntop {args.top} by own time, all workers:")
        print(report(worker_stats, "tottime", args.top))
    # The worker threads of the asyncio executor are still parked, profiled: the harness
    # leaves without waiting for them at interpreter exit, once the result is written.
    args.exit_at_once = True
    if code:
        raise CheckFailed(f"the build exited with status {code}")
    return 0


# --- profile-crawl -------------------------------------------------------------------------

ROOT = "http://127.0.0.1:8000"  # the pages' URL; nothing is served here
HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT",
}


def baseline(bodies: list[bytes], urls: list[str] | None = None) -> list[HtmlResponse]:
    """The crawl's own work per page, as the benchmark spider does it. ``urls``: the
    pages' URLs (default: the generated site's)."""
    from scrapy import Request
    from scrapy.http import HtmlResponse

    responses = []
    host = urlsplit(ROOT).hostname
    for number, body in enumerate(bodies):
        url = f"{ROOT}/p/{number}" if urls is None else urls[number]
        response = HtmlResponse(url, body=body, headers=HEADERS, request=Request(url))
        for href in response.css("a::attr(href)").getall():
            link = response.urljoin(href)
            if urlsplit(link).hostname == host:
                Request(link)
        responses.append(response)
    return responses


def ours(responses: list[HtmlResponse], config: Config, reporter: Reporter, folder: Path) -> int:
    """The extension's work on pages already parsed: facts, then the store."""
    from scrapy_sitemapgen.crawl.extract import page_facts
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    store = SqliteFactStore(folder / f"store-{os.getpid()}-{id(responses)}.sqlite3")
    recorded = 0
    try:
        for response in responses:
            facts = page_facts(response, config, reporter)
            if facts is not None:
                store.record(facts)
                recorded += 1
        store.flush()
    finally:
        store.close()
    return recorded


def fingerprint_costs(responses: list[HtmlResponse], repeat: int) -> list[float]:
    """Per page, the least thread CPU time of its content fingerprint over ``repeat`` tries,
    in microseconds, on the parse the baseline already made (as in a crawl, where the
    spider parsed the page first)."""
    from scrapy_sitemapgen.pages.fingerprint import content_fingerprint

    selectors = [response.selector for response in responses]
    best = [float("inf")] * len(selectors)
    clock = time.thread_time_ns
    for _ in range(repeat):
        for number, selector in enumerate(selectors):
            started = clock()
            content_fingerprint(selector)
            spent = clock() - started
            if spent < best[number]:
                best[number] = spent
    return [ns / 1000 for ns in best]


def with_chrome(body: bytes) -> bytes:
    """A benchmark page as most sites serve theirs: a navigation bar and a script at the
    top of the body, a footer and two scripts at its end (the elements the fingerprint
    leaves out, so its slower path)."""
    top = (
        b"<body><nav><ul><li><a href='/'>Home</a></li><li><a href='/about'>About</a></li>"
        b"</ul></nav><script>window.dataLayer = [];</script>"
    )
    end = (
        b"<footer><p>Generated 2024-05-01 10:00</p></footer><script src='/app.js'></script>"
        b"<script>init({nonce: 'r4nd0m'});</script></body>"
    )
    return body.replace(b"<body>", top, 1).replace(b"</body>", end, 1)


def docs_pages(package: str) -> tuple[list[bytes], list[str], str]:
    """The HTML pages of a Debian documentation package (:func:`.docsite.unpack`'s), with
    the URLs they would have served from :data:`ROOT`, and the package's version."""
    from . import docsite

    root, version = docsite.unpack(package)
    folders = sorted((root / "usr" / "share" / "doc").glob("*/html"))
    if not folders:
        raise CheckFailed(f"{package} has no HTML under /usr/share/doc/*/html")
    paths = sorted(folders[0].rglob("*.html"))
    urls = [f"{ROOT}/{path.relative_to(folders[0]).as_posix()}" for path in paths]
    return [path.read_bytes() for path in paths], urls, version


def add_profile_crawl_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument(
        "--docs",
        metavar="PACKAGE",
        default="",
        help="the pages of a Debian HTML documentation package (debian-handbook, "
        "python3.11-doc, ...) instead of the generated site's; --pages is then ignored",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also a cProfile listing of ours")


def run_profile_crawl(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``rounds``, one ``{baseline, ours, ours_no_fingerprint}`` of
    process seconds for all the pages per round (the last with the three content settings
    off, side by side in the same round), ``recorded``, and ``fingerprint_us``: each page's
    least fingerprint time. ``summary``: the least of each per page, in microseconds, ours
    over the baseline, the fingerprint's median and 90th percentile a page, and its median
    on the same pages with a site's chrome added (:func:`with_chrome`)."""
    from scrapy.settings import Settings
    from scrapy.statscollectors import MemoryStatsCollector

    from scrapy_sitemapgen.settings import Config
    from scrapy_sitemapgen.stats import Reporter

    class _Crawler:
        """What MemoryStatsCollector reads of a crawler."""

        spider = None
        settings = Settings()

    urls: list[str] | None = None
    if args.docs:
        bodies, urls, version = docs_pages(args.docs)
        args.pages = len(bodies)
        record["parameters"] = {"docs": args.docs, "docs_version": version}
    else:
        bodies = [generated_site.page(number, args.pages) for number in range(args.pages)]
        record["parameters"] = {}
    record["parameters"].update(pages=args.pages, repeat=args.repeat)
    settings = Settings()
    settings.set("SITEMAPGEN_URI", "sitemaps")
    # A documentation package's pages name their published copy as canonical (as the
    # crawl-docs benchmark, which lists them all).
    settings.set("SITEMAPGEN_RESPECT_CANONICAL", not args.docs)
    config = Config.from_settings(settings)
    off = settings.copy()
    off.set("SITEMAPGEN_LASTMOD_SOURCES", ["page", "header"])
    off.set("SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT", False)
    off.set("SITEMAPGEN_DEDUPE_CONTENT", False)
    config_off = Config.from_settings(off)
    reporter = Reporter(MemoryStatsCollector(_Crawler()), logging.getLogger("profile_crawl"))  # type: ignore[arg-type]
    rounds: list[dict[str, float]] = []
    record["measurements"] = {"rounds": rounds, "recorded": 0}
    recorded = 0
    for number in range(args.repeat):
        responses, base = measure.timed(baseline, bodies, urls)
        folder = work / f"round-{number}"
        folder.mkdir()
        recorded, extension = measure.timed(ours, responses, config, reporter, folder)
        responses, _ = measure.timed(baseline, bodies, urls)  # fresh pages: nothing cached
        _, without = measure.timed(ours, responses, config_off, reporter, folder)
        rounds.append(
            {"baseline": base.cpu, "ours": extension.cpu, "ours_no_fingerprint": without.cpu}
        )
    record["measurements"]["recorded"] = recorded
    fingerprints = fingerprint_costs(baseline(bodies, urls), args.repeat)
    record["measurements"]["fingerprint_us"] = fingerprints
    chrome = sorted(
        fingerprint_costs(baseline([with_chrome(b) for b in bodies], urls), args.repeat)
    )
    if args.profile:
        responses = baseline(bodies, urls)
        profile = cProfile.Profile()
        folder = work / "profiled"
        folder.mkdir()
        profile.runcall(ours, responses, config, reporter, folder)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    per_page = {
        key: min(r[key] for r in rounds) / args.pages * 1e6
        for key in ("baseline", "ours", "ours_no_fingerprint")
    }
    ranked = sorted(fingerprints)
    record["summary"] = {
        "baseline_us_per_page": per_page["baseline"],
        "ours_us_per_page": per_page["ours"],
        "ours_vs_baseline": per_page["ours"] / per_page["baseline"],
        "ours_no_fingerprint_us_per_page": per_page["ours_no_fingerprint"],
        "fingerprint_us_median": statistics.median(ranked),
        "fingerprint_us_p90": ranked[int(0.9 * (len(ranked) - 1))],
        "fingerprint_us_median_with_chrome": statistics.median(chrome),
    }
    print(
        f"{args.pages} pages ({recorded} recorded), process time per page, minimum of {args.repeat}:\n"
        f"  baseline (response, parse, the spider's links): {per_page['baseline']:7.0f} us\n"
        f"  ours (page facts on the shared parse, store):   {per_page['ours']:7.0f} us\n"
        f"  ours / baseline: {per_page['ours'] / per_page['baseline']:.3f}\n"
        f"  ours without the content settings:              "
        f"{per_page['ours_no_fingerprint']:7.0f} us\n"
        f"  the content fingerprint alone, per page: median "
        f"{record['summary']['fingerprint_us_median']:.1f} us, 90th percentile "
        f"{record['summary']['fingerprint_us_p90']:.1f} us; with a nav, a footer and three "
        f"scripts: median {record['summary']['fingerprint_us_median_with_chrome']:.1f} us"
    )
    return 0
