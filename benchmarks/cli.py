"""The benchmark harness's command line: ``python -m benchmarks SUBCOMMAND [options]``.

Every benchmark run writes one JSON result (:mod:`benchmarks.results`: by default under
``benchmarks/results/``, or ``--results PATH``), then prints its tables, rendered from that
result as ``python -m benchmarks tables RESULT.json ...`` renders them. ``--smoke`` lets a
benchmark run under its minimum sizes, to try the harness, and labels the result so.
``make bench`` runs build, memory and crawl at their published sizes, and their tables.

Each subcommand's module is imported here and imports nothing of this one back;
``python -m benchmarks`` (``__main__.py``) only calls :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests import generated_site

from . import (
    ab,
    build,
    crawl,
    docsite,
    feed,
    kill,
    levels,
    memory,
    origins,
    profiles,
    redis_memory,
    results,
    state_size,
    tables,
)
from .checks import CheckFailed

if TYPE_CHECKING:
    from collections.abc import Callable

#: name: (help, add_arguments, run). Each run fills the record's parameters, measurements,
#: summary and notes, in a fresh work folder, and returns the exit status.
BENCHMARKS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Any]] = {
    "build": (
        "sitemapgen-build --input against the bare loop, gzip, json.loads and the contenders",
        build.add_build_arguments,
        build.run_build,
    ),
    "memory": (
        "peak RSS and the phases of sitemapgen-build --input at growing feed sizes",
        memory.add_memory_arguments,
        memory.run_memory,
    ),
    "crawl": (
        "a local crawl with the add-on on and off, in alternating pairs",
        crawl.add_arguments,
        crawl.run,
    ),
    "crawl-docs": (
        "a crawl of a Debian documentation package served by nginx, add-on on and off in pairs",
        docsite.add_arguments,
        docsite.run,
    ),
    "origins": (
        "sitemapgen-build --input over many origins against the same records over three",
        origins.add_arguments,
        origins.run,
    ),
    "kill": (
        "JOBDIR crawls killed with SIGKILL (and paused with SIGINT), then resumed",
        kill.add_arguments,
        kill.run,
    ),
    "ab": (
        "the working tree's package against another revision's, builds or crawls in pairs",
        ab.add_arguments,
        ab.run,
    ),
    "profile-build": (
        "sitemapgen-build --input under cProfile, every thread",
        profiles.add_profile_build_arguments,
        profiles.run_profile_build,
    ),
    "profile-crawl": (
        "the extension's process time per page, outside a crawl",
        profiles.add_profile_crawl_arguments,
        profiles.run_profile_crawl,
    ),
    "levels": (
        "compressed size and deflate time at each gzip backend and level, over URL shapes",
        levels.add_arguments,
        levels.run,
    ),
    "redis-memory": (
        "Redis memory per entry of the shared store",
        redis_memory.add_arguments,
        redis_memory.run,
    ),
    "state-size": (
        "the state file's bytes per URL: the URL set and the content notes",
        state_size.add_arguments,
        state_size.run,
    ),
}


#: The module whose docstring a subcommand's ``--help`` ends with.
DOCS = {
    "build": build,
    "memory": memory,
    "crawl": crawl,
    "crawl-docs": docsite,
    "origins": origins,
    "kill": kill,
    "ab": ab,
    "profile-build": profiles,
    "profile-crawl": profiles,
    "levels": levels,
    "redis-memory": redis_memory,
    "state-size": state_size,
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.split("\n\n")[0].split(": ", 1)[0] + ".",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for name, (summary, add_arguments, _run) in BENCHMARKS.items():
        sub = commands.add_parser(
            name,
            help=summary,
            description=summary + ".",
            epilog=DOCS[name].__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_arguments(sub)
        common = sub.add_argument_group("every benchmark")
        common.add_argument(
            "--results",
            type=lambda text: Path(text).resolve(),
            metavar="PATH",
            help="the result file, or a folder for it (default: benchmarks/results/"
            f"{name}-<UTC time>.json)",
        )
        common.add_argument(
            "--smoke",
            action="store_true",
            help="allow sizes under the benchmark's minimums, to try the harness; the result "
            "is labelled a smoke run",
        )
        common.add_argument("--keep", action="store_true", help="keep the work folder")
        common.add_argument(
            "--no-tables", action="store_true", help="do not print the tables after the run"
        )
    sub = commands.add_parser(
        "tables",
        help="Markdown tables from result files",
        description="Render the published tables from result files: "
        + tables.__doc__.split("\n\n")[0],
    )
    tables.add_arguments(sub)
    sub = commands.add_parser(
        "feed", help="generate (or find cached) the benchmark feed, and print its facts"
    )
    sub.add_argument("--records", type=int, default=100_000)
    sub.add_argument("--seed", type=int, default=1)
    feed.add_shape_arguments(sub)
    sub = commands.add_parser("serve", help="serve the benchmark site on 127.0.0.1 until Ctrl-C")
    sub.add_argument("--pages", type=int, default=2000)
    sub.add_argument("--delay", type=float, default=0.0, help="seconds before each page")
    return top


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        key: str(value) if isinstance(value, Path) else value
        for key, value in vars(args).items()
        if key not in ("command", "keep", "no_tables", "results")
    }


def run_benchmark(args: argparse.Namespace, argv: list[str], command: str) -> int:
    _summary, _add, run = BENCHMARKS[args.command]
    record = results.new(args.command, argv, command, smoke=args.smoke)
    record["options"] = _options(args)
    work = Path(tempfile.mkdtemp(prefix=f"sitemapgen-{args.command}-"))
    print(
        f"{args.command}: measuring scrapy-sitemapgen at {record['code']['short']}"
        f"{' (+ uncommitted changes in scrapy_sitemapgen/)' if record['code']['dirty'] else ''}; "
        f"work folder {work}",
        flush=True,
    )
    error = None
    code = 1
    try:
        code = run(args, record, work)
    except SystemExit as exc:
        if not isinstance(exc.code, str):
            raise
        print(f"python -m benchmarks {args.command}: error: {exc.code}", file=sys.stderr)
        return 2
    except CheckFailed as exc:
        error = str(exc) or type(exc).__name__
        print(f"CHECK FAILED: {error}", flush=True)
    except KeyboardInterrupt:
        error = "interrupted"
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    results.finish(record, error)
    path = results.write(record, args.results)
    if not error and not args.no_tables:
        print()
        print(tables.render([record]))
    print(f"result written to {path}", flush=True)
    code = code if not error else 1
    if getattr(args, "exit_at_once", False):  # profile-build: see its run
        sys.stdout.flush()
        os._exit(code)
    return code


def main(argv: list[str] | None = None, command: str | None = None) -> int:
    """Run ``argv`` (default: this process's arguments); ``command`` is the command line
    the result records (default: this process's when ``argv`` is, else ``argv`` as
    ``python -m benchmarks ...``)."""
    if argv is None:
        argv = sys.argv[1:]
        command = command or results.command_line()
    command = command or shlex.join(["python", "-m", "benchmarks", *argv])
    args = parser().parse_args(argv)
    if args.command in BENCHMARKS:
        return run_benchmark(args, argv, command)
    if args.command == "tables":
        return tables.main(args)
    if args.command == "feed":
        print(
            json.dumps(
                asdict(feed.build(args.records, args.seed, shape=args.shape, origins=args.origins)),
                indent=1,
            )
        )
        return 0
    return generated_site.serve(args.pages, args.delay)
