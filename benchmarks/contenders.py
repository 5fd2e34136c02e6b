"""The baselines that ``python -m benchmarks build`` times against
``scrapy sitemapgen-build``, each run as its own child process
(``python benchmarks/contenders.py NAME FEED OUT``) so its CPU time and peak RSS are its own.

- ``bare``: the least a correct tool must do, single-threaded. Read the feed, render each
  record with plain string formatting (all five XML entities escaped with ``str.replace``,
  raw non-ASCII percent-encoded), one file per 50,000 URLs per origin, gzip level 6, and an
  index per origin. No normalisation, deduplication, validation, sorting or state.
  ``--plain`` writes the same bytes uncompressed (the input of ``gzip alone``).
- ``json``: read the feed and ``json.loads`` every line, nothing else.
- ``gzip``: compress the files of a folder at a level with :mod:`zlib` (when no ``gzip``
  binary is on the PATH).
- ``xsw``: the PyPI package ``xml-sitemap-writer``, one ``XMLSitemap`` per origin. It has no
  image support, so images are not written.
- ``least``: the least a build that lists each origin's URLs in order can do on two cores,
  in pure Python. Two processes (spawned, as ours are; no Scrapy) each parse half of the
  feed, render each record as ``bare`` does and sort their rows by loc per origin, then
  hand them over through files (``marshal``); then each process merges whole origins (the
  largest first, to the less loaded process) and writes their gzipped urlsets and index.
  It uses the install's parser and compressor at ours' default levels (orjson and
  zlib-ng's 5 where the ``fast`` extra is installed, else ``json`` and zlib's 6). No
  normalisation, deduplication, validation, state or memory bound, and no start-up of
  Scrapy: a floor under ``sitemapgen-build --input``, not a contender.

Only the standard library is imported at the top: start-up costs the same for every baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import itertools
import json
import marshal
import multiprocessing
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

MAX_URLS = 50_000
# What w3lib keeps unescaped in a URL: percent-encode only the non-ASCII characters.
_SAFE = "!#$%&'()*+,-./:;=?@[]_~"
_URLSET_OPEN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    b' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
)
_URLSET_CLOSE = b"</urlset>\n"


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _origin(loc: str) -> str:
    scheme, _, rest = loc.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _folder(origin: str) -> str:
    return origin.replace("://", "_").replace(":", "_")


class _Origin:
    """One origin's output: the open urlset file, its URL count, the files written."""

    def __init__(self, out: Path, origin: str, level: int | None) -> None:
        self.origin = origin
        self.folder = out / _folder(origin)
        self.folder.mkdir(parents=True)
        self.level = level
        self.file: BinaryIO | None = None
        self.count = 0
        self.names: list[str] = []

    def write(self, chunk: bytes) -> None:
        if self.file is None or self.count == MAX_URLS:
            self.close()
            name = f"sitemap-{len(self.names) + 1}.xml" + (".gz" if self.level is not None else "")
            self.names.append(name)
            path = self.folder / name
            file: BinaryIO = (
                gzip.GzipFile(path, "wb", compresslevel=self.level, mtime=0)  # type: ignore[assignment]
                if self.level is not None
                else path.open("wb")
            )
            file.write(_URLSET_OPEN)
            self.file = file
            self.count = 0
        self.file.write(chunk)
        self.count += 1

    def close(self) -> None:
        if self.file is not None:
            self.file.write(_URLSET_CLOSE)
            self.file.close()
            self.file = None

    def write_index(self) -> None:
        _write_index(self.folder, self.origin, self.names)


def _write_index(folder: Path, origin: str, names: list[str]) -> None:
    entries = "".join(f"<sitemap><loc>{_escape(origin)}/{name}</loc></sitemap>\n" for name in names)
    (folder / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{entries}'
        "</sitemapindex>\n",
        encoding="utf-8",
    )


def _entry(record: dict[str, Any]) -> tuple[str, bytes]:
    """A record's loc (raw non-ASCII percent-encoded) and its ``<url>`` element."""
    loc = record["loc"]
    if not loc.isascii():
        loc = quote(loc, safe=_SAFE)
    parts = [f"<url><loc>{_escape(loc)}</loc>"]
    if record.get("lastmod"):
        parts.append(f"<lastmod>{_escape(record['lastmod'])}</lastmod>")
    if record.get("changefreq"):
        parts.append(f"<changefreq>{_escape(record['changefreq'])}</changefreq>")
    if record.get("priority") is not None:
        parts.append(f"<priority>{record['priority']}</priority>")
    for image in record.get("images") or ():
        parts.append(f"<image:image><image:loc>{_escape(image)}</image:loc></image:image>")
    parts.append("</url>\n")
    return loc, "".join(parts).encode()


def bare(feed: Path, out: Path, level: int | None) -> int:
    origins: dict[str, _Origin] = {}
    urls = 0
    # _entry's lines, inline: a call per record is a measurable part of this loop's time,
    # and this loop is the baseline every ratio is taken against (benchmarks/RECORD.md).
    with feed.open("rb") as lines:
        for line in lines:
            record = json.loads(line)
            loc = record["loc"]
            if not loc.isascii():
                loc = quote(loc, safe=_SAFE)
            parts = [f"<url><loc>{_escape(loc)}</loc>"]
            if record.get("lastmod"):
                parts.append(f"<lastmod>{_escape(record['lastmod'])}</lastmod>")
            if record.get("changefreq"):
                parts.append(f"<changefreq>{_escape(record['changefreq'])}</changefreq>")
            if record.get("priority") is not None:
                parts.append(f"<priority>{record['priority']}</priority>")
            for image in record.get("images") or ():
                parts.append(f"<image:image><image:loc>{_escape(image)}</image:loc></image:image>")
            parts.append("</url>\n")
            origin = _origin(loc)
            writer = origins.get(origin)
            if writer is None:
                writer = origins[origin] = _Origin(out, origin, level)
            writer.write("".join(parts).encode())
            urls += 1
    for writer in origins.values():
        writer.close()
        writer.write_index()
    return urls


def _install() -> tuple[Any, Any, int]:
    """The parser, the compressor module and its level that ours uses on this install."""
    try:
        import orjson

        parse: Any = orjson.loads
    except ImportError:
        parse = json.loads
    backend: Any
    try:
        from zlib_ng import zlib_ng as backend

        level = 5
    except ImportError:
        import zlib

        backend, level = zlib, 6
    return parse, backend, level


def _halves(feed: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of the feed, each starting at a line's start: the package's
    ``input_ranges`` again, since importing the package would put its start-up in the
    floor (only the standard library is imported here)."""
    size = feed.stat().st_size
    bounds = [0]
    with feed.open("rb") as file:
        for part in range(1, parts):
            file.seek(max(size * part // parts, bounds[-1]))
            file.readline()
            bounds.append(file.tell())
    bounds.append(size)
    return list(itertools.pairwise(bounds))


def _least_read(feed: str, start: int, end: int, scratch: str, part: int) -> dict[str, Any]:
    """One range: every record parsed and rendered, each origin's rows sorted by loc and
    written to a file of its own. Returns origin -> (path, rows)."""
    parse, _, _ = _install()
    rows: dict[str, list[tuple[str, bytes]]] = {}
    with open(feed, "rb") as file:
        file.seek(start)
        data = file.read(end - start)
    for line in data.splitlines():
        loc, chunk = _entry(parse(line))
        origin = loc[: loc.index("/", 8)]
        held = rows.get(origin)
        if held is None:
            held = rows[origin] = []
        held.append((loc, chunk))
    written = {}
    for number, (origin, held) in enumerate(rows.items()):
        held.sort()
        path = f"{scratch}/{part}-{number}"
        with open(path, "wb") as file:
            marshal.dump(held, file)
        written[origin] = (path, len(held))
    return written


def _least_write(origins: list[tuple[str, list[str]]], out: str) -> int:
    """Whole origins: their ranges' rows merged in loc order, written as gzipped urlsets of
    50,000 URLs and an index."""
    _, backend, level = _install()
    urls = 0
    for origin, paths in origins:
        rows: list[tuple[str, bytes]] = []
        for path in paths:
            with open(path, "rb") as file:
                rows += marshal.load(file)
        rows.sort()  # two sorted runs: one merge pass
        folder = Path(out) / _folder(origin)
        folder.mkdir(parents=True)
        names: list[str] = []
        for first in range(0, len(rows), MAX_URLS):
            body = b"".join([chunk for _, chunk in rows[first : first + MAX_URLS]])
            deflate = backend.compressobj(level, backend.DEFLATED, 31)
            name = f"sitemap-{len(names) + 1}.xml.gz"
            with (folder / name).open("wb") as file:
                file.write(deflate.compress(_URLSET_OPEN))
                file.write(deflate.compress(body))
                file.write(deflate.compress(_URLSET_CLOSE) + deflate.flush())
            names.append(name)
        _write_index(folder, origin, names)
        urls += len(rows)
    return urls


def least(feed: Path, out: Path, workers: int = 2) -> int:
    """Two processes read, two write: see the module's docstring."""
    with (
        tempfile.TemporaryDirectory(prefix="least-") as scratch,
        multiprocessing.get_context("spawn").Pool(workers) as pool,
    ):
        ranges = _halves(feed, workers)
        parts = pool.starmap(
            _least_read, [(str(feed), s, e, scratch, n) for n, (s, e) in enumerate(ranges)]
        )
        sizes: dict[str, int] = {}
        paths: dict[str, list[str]] = {}
        for part in parts:
            for origin, (path, count) in part.items():
                sizes[origin] = sizes.get(origin, 0) + count
                paths.setdefault(origin, []).append(path)
        tasks: list[list[tuple[str, list[str]]]] = [[] for _ in range(workers)]
        loads = [0] * workers
        for origin in sorted(sizes, key=lambda o: -sizes[o]):  # the largest first
            lightest = loads.index(min(loads))
            tasks[lightest].append((origin, paths[origin]))
            loads[lightest] += sizes[origin]
        return sum(pool.starmap(_least_write, [(task, str(out)) for task in tasks], chunksize=1))


def json_only(feed: Path) -> int:
    count = 0
    with feed.open("rb") as lines:
        for line in lines:
            json.loads(line)
            count += 1
    return count


def gzip_folder(folder: Path, level: int) -> int:
    """Compress every ``*.xml`` below ``folder`` to ``*.xml.gz`` beside it, like ``gzip -k``."""
    count = 0
    for path in sorted(folder.rglob("*.xml")):
        with (
            path.open("rb") as source,
            gzip.GzipFile(
                path.with_name(path.name + ".gz"), "wb", compresslevel=level, mtime=0
            ) as sink,
        ):
            while block := source.read(1 << 20):
                sink.write(block)
        count += 1
    return count


def xsw(feed: Path, out: Path, level: int | None) -> int:
    from xml_sitemap_writer import XMLSitemap

    urls = 0
    with contextlib.ExitStack() as stack:
        writers: dict[str, Any] = {}
        with feed.open("rb") as lines:
            for line in lines:
                record = json.loads(line)
                loc = record["loc"]
                origin = _origin(loc)
                writer = writers.get(origin)
                if writer is None:
                    folder = out / _folder(origin)
                    folder.mkdir(parents=True)
                    writer = XMLSitemap(str(folder), origin)
                    if level is not None:
                        writer.GZIP_COMPRESSION_LEVEL = level
                    writers[origin] = stack.enter_context(writer)
                priority = record.get("priority")
                writer.add_url(
                    loc[len(origin) :],
                    lastmod=record.get("lastmod"),
                    priority=None if priority is None else str(priority),
                    changefreq=record.get("changefreq"),
                )
                urls += 1
    return urls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=["bare", "json", "gzip", "xsw", "least"])
    parser.add_argument("source", type=Path, help="the feed (a folder for gzip)")
    parser.add_argument("out", type=Path, nargs="?", help="the output folder (absent for json)")
    parser.add_argument("--level", type=int, default=6, help="gzip level")
    parser.add_argument("--plain", action="store_true", help="bare: write uncompressed")
    args = parser.parse_args(argv)
    if args.name == "bare":
        done = bare(args.source, args.out, None if args.plain else args.level)
    elif args.name == "least":
        done = least(args.source, args.out)
    elif args.name == "json":
        done = json_only(args.source)
    elif args.name == "gzip":
        done = gzip_folder(args.source, args.level)
    else:
        done = xsw(args.source, args.out, args.level)
    print(done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
