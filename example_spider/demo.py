"""
The scrapy-sitemapgen demo: serve the demo site, crawl it, summarise the sitemaps.

``make demo`` runs ``.venv/bin/python example_spider/demo.py --output sitemaps``
from the repository root. Steps:

1. start one local server per origin of ``site/`` (see ``serve.py``);
2. run ``scrapy crawl site`` in this folder as a subprocess, exactly as a user
   would, with the add-on writing to ``--output``; its log is shown as it runs;
3. read the written files back and print, per origin, the number of URLs and
   sitemap files, the index path and robots.txt, then the file tree.

The exit status is non-zero when the crawl fails or an origin got no
``sitemap.xml`` index, so ``make demo`` doubles as an end-to-end smoke test.
Arguments after ``--`` go to ``scrapy crawl``, e.g. ``-- -s LOG_LEVEL=DEBUG``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shlex
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

HERE = Path(__file__).resolve().parent
# `python example_spider/demo.py` already puts this folder first on sys.path;
# being explicit keeps the import working when demo.py is loaded another way.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from serve import serve_site  # noqa: E402

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
INDEX_NAME = "sitemap.xml"
_SITEMAP_FILE = re.compile(r"^sitemap-\d+\.xml(\.gz)?$")
# From the stats dump Scrapy logs at INFO when the spider closes.
_FINISH_REASON = re.compile(r"'finish_reason': '([^']*)'")
_ERROR_COUNT = re.compile(r"'log_count/ERROR': (\d+)")


@dataclass
class CrawlResult:
    returncode: int
    timed_out: bool = False
    finish_reason: str | None = None
    error_count: int = 0

    def problems(self) -> list[str]:
        found = []
        if self.timed_out:
            found.append("the crawl did not finish in time and was killed")
        if self.returncode != 0:
            found.append(f"scrapy exited with status {self.returncode}")
        if self.finish_reason not in {None, "finished"}:
            found.append(f"the spider closed with reason {self.finish_reason!r}")
        if self.error_count:
            found.append(f"the crawl logged {self.error_count} ERROR message(s)")
        return found


@dataclass
class OriginSummary:
    """What the add-on wrote for one origin, read back from disk."""

    name: str
    base_url: str
    folder: Path
    sitemap_files: list[Path] = field(default_factory=list)
    locs: list[str] = field(default_factory=list)
    index_entries: list[str] = field(default_factory=list)
    robots: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return self.folder / INDEX_NAME


def _plural(count: int, noun: str) -> str:
    """``noun`` as the count needs it: "1 file", "2 files"."""
    return noun if count == 1 else f"{noun}s"


def origin_folder_name(base_url: str) -> str:
    """Name the folder the add-on writes an origin to: ``<scheme>_<host>_<port>``."""
    parts = urlsplit(base_url)
    port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}_{parts.hostname}_{port}"


def run_crawl(
    start_url: str, output: Path, timeout: float, extra_args: Sequence[str]
) -> CrawlResult:
    """Run ``scrapy crawl site`` here, echoing its log and watching for failures.

    A subprocess rather than an in-process CrawlerProcess: it is what a user
    types, it picks up scrapy.cfg and the project settings the normal way, and
    the demo servers keep running in this process's threads meanwhile.
    """
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "site",
        "-a", f"url={start_url}",
        "-s", f"SITEMAPGEN_URI={output}",
        *extra_args,
    ]  # fmt: skip
    print(f"$ (cd {HERE} && {shlex.join(cmd)})", flush=True)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen(
        cmd, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, encoding="utf-8", errors="replace",
    )  # fmt: skip
    result = CrawlResult(returncode=0)

    def kill() -> None:
        result.timed_out = True
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            if match := _FINISH_REASON.search(line):
                result.finish_reason = match[1]
            if match := _ERROR_COUNT.search(line):
                result.error_count = int(match[1])
        result.returncode = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    sys.stdout.flush()
    return result


def _parse_xml(path: Path) -> ET.Element:
    # The files were just written by the add-on on this machine, so the stdlib
    # parser is fine (defusedxml would be a dependency for nothing).
    if path.suffix == ".gz":
        with gzip.open(path) as stream:
            return ET.parse(stream).getroot()
    return ET.parse(path).getroot()


def summarise_origin(name: str, base_url: str, folder: Path) -> OriginSummary:
    """Read one origin's folder back; problems are collected, not raised."""
    summary = OriginSummary(name=name, base_url=base_url, folder=folder)
    if not folder.is_dir():
        summary.errors.append(f"no folder {folder}")
        return summary
    if summary.index.is_file():
        try:
            root = _parse_xml(summary.index)
        except (ET.ParseError, OSError) as exc:
            summary.errors.append(f"{summary.index.name}: cannot parse: {exc}")
        else:
            summary.index_entries = [loc.text or "" for loc in root.iter(f"{SITEMAP_NS}loc")]
    else:
        summary.errors.append(f"no {INDEX_NAME} index in {folder}")
    summary.sitemap_files = sorted(
        (p for p in folder.iterdir() if _SITEMAP_FILE.match(p.name)),
        key=lambda p: int(re.findall(r"\d+", p.name)[0]),
    )
    for path in summary.sitemap_files:
        try:
            root = _parse_xml(path)
        except (ET.ParseError, OSError, EOFError) as exc:
            summary.errors.append(f"{path.name}: cannot parse: {exc}")
            continue
        summary.locs.extend(loc.text or "" for loc in root.iter(f"{SITEMAP_NS}loc"))
    robots = folder / "robots.txt"
    if robots.is_file():
        summary.robots = robots.read_text(encoding="utf-8")
    return summary


def print_summary(output: Path, summaries: list[OriginSummary], *, show_urls: bool) -> None:
    print(f"\nSitemaps in {output}")
    for s in summaries:
        print(f"\n  {s.name}: {s.base_url}/ -> {s.folder.name}/")
        files = len(s.sitemap_files)
        print(f"    URLs:       {len(s.locs)} <loc> in {files} sitemap {_plural(files, 'file')}")
        index_note = f" ({len(s.index_entries)} entries)" if s.index.is_file() else " (missing)"
        print(f"    index:      {s.index}{index_note}")
        if s.robots is None:
            print("    robots.txt: (missing)")
        else:
            lines = s.robots.splitlines() or ["(empty)"]
            print(f"    robots.txt: {lines[0]}")
            for line in lines[1:]:
                print(f"                {line}")
        if s.robots is not None:
            # The package's own validator, as `scrapy sitemapgen-validate` runs it.
            from scrapy_sitemapgen.validate.checker import validate

            problems = validate([str(s.folder / "robots.txt")], base_url=f"{s.base_url}/")
            s.errors.extend(str(p) for p in problems)
            found = len(problems)
            print(f"    validated:  {found} {_plural(found, 'violation')} (sitemapgen-validate)")
        if show_urls:
            for loc in sorted(s.locs):
                print(f"      {loc}")
        for error in s.errors:
            print(f"    PROBLEM:    {error}")


def tree_lines(root: Path, collapse: set[Path], prefix: str = "") -> Iterator[str]:
    """``tree``-style lines for ``root``; folders in ``collapse`` are one line each."""
    entries = sorted(root.iterdir(), key=lambda p: (p.is_file(), p.name))
    for position, entry in enumerate(entries):
        last = position == len(entries) - 1
        branch = "└── " if last else "├── "
        if entry.is_dir() and entry in collapse:
            count = sum(1 for p in entry.rglob("*") if p.is_file())
            yield f"{prefix}{branch}{entry.name}/ ({count} {_plural(count, 'file')}, earlier run)"
        elif entry.is_dir():
            yield f"{prefix}{branch}{entry.name}/"
            yield from tree_lines(entry, collapse, prefix + ("    " if last else "│   "))
        else:
            yield f"{prefix}{branch}{entry.name} ({entry.stat().st_size} bytes)"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Serve the demo site, crawl it with the add-on on, summarise the sitemaps."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("sitemaps"),
        help="SITEMAPGEN_URI folder, relative to the current directory (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds before the crawl is killed (default: %(default)s)",
    )
    parser.add_argument("--urls", action="store_true", help="also list every <loc> per origin")
    parser.add_argument(
        "scrapy_args", nargs=argparse.REMAINDER, help="after --: extra arguments for scrapy crawl"
    )
    args = parser.parse_args(argv)
    if args.scrapy_args[:1] == ["--"]:
        args.scrapy_args = args.scrapy_args[1:]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    output: Path = args.output.expanduser().resolve()

    with serve_site() as site:
        for name, url in site.urls.items():
            print(f"Serving {name:>5} at {url}/")
        crawl = run_crawl(site.url("main", "/"), output, args.timeout, args.scrapy_args)
        origins = site.urls

    # Ports are random, so each run writes new origin folders; older ones are
    # left alone (the add-on owns the folder) but not summarised.
    summaries = [
        summarise_origin(name, url, output / origin_folder_name(url))
        for name, url in origins.items()
    ]
    if output.is_dir():
        print_summary(output, summaries, show_urls=args.urls)
        current = {s.folder for s in summaries}
        earlier = {p for p in output.iterdir() if p.is_dir() and p not in current}
        print(f"\n{output}/")
        for line in tree_lines(output, earlier):
            print(line)

    problems = crawl.problems()
    if not output.is_dir():
        problems.append(f"the crawl wrote nothing to {output}")
    else:
        problems.extend(f"{s.name}: {error}" for s in summaries for error in s.errors)
    if problems:
        print("\nDemo FAILED:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    total = sum(len(s.locs) for s in summaries)
    print(
        f"\nDemo OK: {total} {_plural(total, 'URL')} over "
        f"{len(summaries)} {_plural(len(summaries), 'origin')}."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
