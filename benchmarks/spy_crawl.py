"""Where the extension's time goes inside a real crawl, by sampling it:

    python -m benchmarks.spy_crawl --pages 4000

Runs the benchmark crawl (``bench.crawl_command``, add-on on, the site of
``benchmarks.crawlsite`` on 127.0.0.1) under py-spy, installed into this environment on
first use (a benchmark-only tool, like xml-sitemap-writer), and sums the samples taken
inside the middleware's ``_record``: by reader of the page (the walk of the tree, images,
alternates, indexability, lastmod, videos, the store) and by call path.

``profile_crawl`` times the same code on warm pages outside a crawl, which is steadier
but misses what the crawl around it does to the caches: inside the crawl the same code
costs 1.5 to 1.9 times as much. py-spy's sampling slows the crawl a little, so the share
of samples is a guide; ``bench --only crawl`` gives the figure.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

from . import bench, crawlsite

#: The readers, by the first frame under ``page_facts`` or ``_record`` that names them;
#: the walk of the tree is counted wherever it happens (the first reader that needs it).
READERS = (
    ("the walk of the tree", ("_Page.nodes",)),
    ("images", ("_Page.images",)),
    ("alternates", ("_Page.alternates",)),
    ("indexability", ("_Page.exclusion",)),
    ("lastmod", ("_Page.lastmod",)),
    ("videos", ("_Page.videos",)),
    ("the store", ("SitemapExporter.record", "SqliteFactStore.flush")),
)
_RECORD = "SitemapSpiderMiddleware._record ("


def py_spy() -> Path:
    """The py-spy executable beside this interpreter, installed with pip if missing."""
    path = Path(sys.executable).with_name("py-spy")
    if not path.exists():
        print(
            "py-spy is not installed: installing it into this environment (a benchmark-only tool) ...",
            flush=True,
        )
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "py-spy"], check=True)
    return path


def summarize(raw: Path, top: int) -> str:
    """The samples of py-spy's raw output (``stack;stack count`` lines) that fall inside
    the extension, by reader and by path."""
    total = inside = 0
    readers: collections.Counter[str] = collections.Counter()
    paths: collections.Counter[str] = collections.Counter()
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        samples = int(count)
        total += samples
        if _RECORD not in stack:
            continue
        inside += samples
        below = [frame.split(" (")[0] for frame in stack.split(_RECORD, 1)[1].split(";")[1:]]
        names = " > ".join(below)
        reader = next(
            (name for name, marks in READERS if any(mark in names for mark in marks)),
            "the code between them",
        )
        readers[reader] += samples
        paths[" > ".join(below[:3]) or "_record"] += samples
    if not inside:
        raise SystemExit("no sample inside the extension's middleware: was the add-on on?")
    lines = [
        f"{inside} of {total} samples inside the extension ({inside / total:.1%} of the process's,"
        " start-up and the sitemaps' writing at close included)",
        "",
        "by reader:",
    ]
    lines += [f"  {samples / inside:6.1%}  {reader}" for reader, samples in readers.most_common()]
    lines += ["", f"by call path (the {top} largest):"]
    lines += [f"  {samples / inside:6.1%}  {path}" for path, samples in paths.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=4000, help="pages of the crawled site")
    parser.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25, help="call paths to list")
    args = parser.parse_args(argv)
    spy = py_spy()
    site = crawlsite.Site(args.pages)
    try:
        with tempfile.TemporaryDirectory(prefix="spy-crawl-") as folder:
            run = Path(folder)
            raw = run / "samples.txt"
            command = [
                str(spy),
                "record",
                "--rate",
                str(args.rate),
                "--format",
                "raw",
                "--output",
                str(raw),
                "--",
            ]
            command += bench.crawl_command(site, run)
            log = run / "crawl.log"
            with log.open("w") as output:
                code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=output).returncode
            stats = bench.crawl_stats(log)
            if code or stats.get("finish_reason") != "'finished'":
                raise SystemExit(f"the crawl failed:\n{bench.tail(log)}")
            crawl_cpu, extension_cpu = (
                float(stats["bench/crawl_cpu"]),
                float(stats["bench/extension_cpu"]),
            )
            print(
                f"{stats['response_received_count']} responses; the extension's own time, as the spider "
                f"counts it: {extension_cpu / crawl_cpu:.1%} of the crawl's process time\n"
            )
            print(summarize(raw, args.top))
    finally:
        site.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
