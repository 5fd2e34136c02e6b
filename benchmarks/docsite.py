"""The crawl cost on a real site: a Debian HTML documentation package served by Debian's
nginx on 127.0.0.1, crawled with the add-on and without it, in alternating pairs.

    python -m benchmarks crawl-docs --pairs 15

The site is ``debian-handbook`` (``--package``; its HTML under ``/usr/share/doc/PACKAGE/
html``): 127 pages in each of 26 languages, about 2.7 ``<img>`` a page (``--languages``
crawls a subset). Both packages come from the machine's apt sources with ``apt-get
download`` and are unpacked with ``dpkg -x`` under ``benchmarks/out/docsite/`` (no root,
nothing installed; kept between runs). nginx runs unprivileged from there with its own
configuration (:func:`nginx_config`: one worker, access log off, a free port on 127.0.0.1)
in the foreground, and is stopped at the end. The languages' books do not link to each
other, so the benchmark writes one root page, ``/index.html``, that links to each
language's ``index.html``; the crawl starts there. A book of one language, whose
``index.html`` is its HTML folder's own (``--package postgresql-doc-15``: 1,169 pages, no
images), is crawled from that page. ``--set NAME=VALUE`` adds a setting to the add-on's
side only (the content settings off: ``--set SITEMAPGEN_LASTMOD_FOLLOWS_CONTENT=False
--set SITEMAPGEN_DEDUPE_CONTENT=False --set SITEMAPGEN_LASTMOD_SOURCES=page,header``).

The spider (:mod:`tests.generated_site`'s) follows every link on the host. The add-on's side
has ``ADDONS = {"scrapy_sitemapgen.Addon": 500}`` and ``SITEMAPGEN_RESPECT_CANONICAL=False``
(every page of the handbook names its published copy on debian-handbook.info as canonical:
respected, no page would be listed and the add-on would write empty urlsets, less than a
real crawl of one's own site). The other side is the same command with ``-s ADDONS={}``: no
add-on at all, plain Scrapy, so the difference is everything installing the add-on costs,
not what is left of it when switched off (``crawl`` measures ``SITEMAPGEN_ENABLED=False``).
Neither side is instrumented (no ``-a cpu_stats``), so both run the same spider code.

A warm-up pair first, not counted; then ``--pairs`` pairs, the order flipped every pair.
Each crawl's wall and CPU (user + sys) are its whole process's, start-up and, add-on on,
writing the sitemaps at close included (:func:`benchmarks.measure.measured`). Before an
add-on-on crawl counts, its urlsets must list exactly the site's pages, once each, and pass
the package's checker; the add-on-off crawl must see as many responses and write nothing.
The figures are the median of the per-pair ratios (on over off) of wall, CPU and
responses/s, with their spread (the quartiles and the range), and the load average before
each pair.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests import generated_site, published

from . import checks, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse

    from .results import Record

#: Where the unpacked packages are kept between runs (ignored by git, pruned from the sdist).
CACHE = Path(__file__).with_name("out") / "docsite"
PACKAGE = "debian-handbook"
SERVER = "nginx"
#: The pairs a published run needs at least (fewer only with ``--smoke``).
MIN_PAIRS = 15

_TYPES = {
    "text/html": "html htm",
    "text/css": "css",
    "application/javascript": "js",
    "image/png": "png",
    "image/jpeg": "jpg jpeg",
    "image/gif": "gif",
    "image/svg+xml": "svg",
}


def nginx_config(root: Path, port: int) -> str:
    """nginx's whole configuration for serving ``root`` on 127.0.0.1:``port`` from a prefix
    folder it may write to: in the foreground (the harness stops it), one worker process
    (so the server's share of the 2 cores stays small and steady), no access log, its pid
    and temporary files relative to the prefix (``-p``), not under /var where an
    unprivileged user cannot write."""
    types = "".join(f"    {mime} {extensions};\n" for mime, extensions in _TYPES.items())
    temps = "".join(
        f"  {name}_temp_path temp/{name};\n"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        "daemon off;\n"
        "worker_processes 1;\n"
        "pid nginx.pid;\n"
        "error_log error.log warn;\n"
        "events {\n  worker_connections 1024;\n}\n"
        "http {\n"
        "  access_log off;\n"
        f"{temps}"
        f"  types {{\n{types}  }}\n"
        "  default_type application/octet-stream;\n"
        "  sendfile on;\n"
        "  keepalive_requests 100000;\n"
        "  server {\n"
        f"    listen 127.0.0.1:{port};\n"
        f'    root "{root}";\n'
        "    index index.html;\n"
        "  }\n"
        "}\n"
    )


def root_page(languages: list[str]) -> str:
    """The one page the benchmark adds: links to each language's book."""
    links = "".join(f'<li><a href="{lang}/index.html">{lang}</a></li>' for lang in languages)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Documentation</title></head><body><ul>{links}</ul></body></html>"
    )


def pair_spread(values: list[float]) -> dict[str, Any]:
    """The median of per-pair ratios and its spread: the quartiles (Python's default,
    exclusive, method; a single value is its own quartiles) and the range."""
    quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {
        "median": statistics.median(values),
        "q1": quartiles[0],
        "q3": quartiles[2],
        "min": min(values),
        "max": max(values),
        "pairs": values,
        "on_faster": sum(v < 1 for v in values),
    }


def summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-pair ratios, add-on on over off, of wall, CPU and responses/s (the last
    inverted, so that above 1 is slower with the add-on everywhere), and each side's
    medians."""

    def rate(crawl: dict[str, Any]) -> float:
        return float(crawl["responses"]) / float(crawl["elapsed"])

    figures = {
        "wall": lambda c: float(c["wall"]),
        "cpu": lambda c: float(c["cpu"]),
        "time_per_response": lambda c: 1 / rate(c),
    }
    out: dict[str, Any] = {"pairs": len(pairs)}
    for name, figure in figures.items():
        out[name] = {
            **pair_spread([figure(p["on"]) / figure(p["off"]) for p in pairs]),
            "on": statistics.median(figure(p["on"]) for p in pairs),
            "off": statistics.median(figure(p["off"]) for p in pairs),
        }
    out["responses_per_s"] = {
        side: statistics.median(rate(p[side]) for p in pairs) for side in ("on", "off")
    }
    out["rss"] = {
        side: statistics.median(int(p[side]["rss"]) for p in pairs) for side in ("on", "off")
    }
    loads = [p["load"] for p in pairs if p.get("load")]
    out["load"] = {"min": min(loads), "max": max(loads)} if loads else None
    return out


# --- the site ------------------------------------------------------------------------------


def unpack(package: str) -> tuple[Path, str]:
    """``package`` unpacked under :data:`CACHE` (downloaded once): its folder and version."""
    folder = CACHE / package
    stamp = folder / ".version"
    if stamp.exists():
        return folder / "root", stamp.read_text().strip()
    shutil.rmtree(folder, ignore_errors=True)
    debs = folder / "debs"
    debs.mkdir(parents=True)
    print(f"crawl-docs: apt-get download {package}, dpkg -x into {folder}", flush=True)
    _run(["apt-get", "-o", f"APT::Sandbox::User={_user()}", "download", package], debs)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        raise CheckFailed(f"apt-get download {package} gave no .deb in {debs}")
    _run(["dpkg", "-x", str(found[0]), str(folder / "root")], debs)
    version = _run(["dpkg-deb", "-f", str(found[0]), "Version"], debs).strip()
    shutil.rmtree(debs)
    stamp.write_text(version + "\n")
    return folder / "root", version


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise CheckFailed(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def languages_of(html: Path) -> list[str]:
    """The book's languages: its folders that have an ``index.html``; none for a book of
    one language whose ``index.html`` is the folder's own (``postgresql-doc-15``)."""
    return sorted(p.parent.name for p in html.glob("*/index.html"))


def _folders(html: Path, languages: list[str]) -> list[Path]:
    """The folders crawled: each language's, or the whole book when it has none."""
    return [html / lang for lang in languages] if languages else [html]


def pages_of(html: Path, languages: list[str]) -> list[Path]:
    return sorted(p for folder in _folders(html, languages) for p in folder.rglob("*.html"))


def site_facts(html: Path, languages: list[str]) -> dict[str, int]:
    """What the crawled part of the site holds: HTML pages (the root page included),
    ``<img>`` elements in them, and image files on disk."""
    pages = pages_of(html, languages)
    images = sum(p.read_bytes().lower().count(b"<img") for p in pages)
    files = sum(
        1
        for folder in _folders(html, languages)
        for p in folder.rglob("*")
        if p.suffix.lower() in {".png", ".jpg", ".jpeg", ".gif", ".svg"}
    )
    root = 1 if languages else 0  # the benchmark's own root page, when it writes one
    return {"pages": len(pages) + root, "img_elements": images, "image_files": files}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Nginx:
    """nginx serving ``root`` on 127.0.0.1 from the prefix ``prefix``, until :meth:`close`."""

    def __init__(self, binary: Path, root: Path, prefix: Path) -> None:
        (prefix / "temp").mkdir(parents=True, exist_ok=True)
        for _attempt in range(5):  # a free port may be taken before nginx binds it
            self.port = free_port()
            (prefix / "nginx.conf").write_text(nginx_config(root, self.port))
            self.process = subprocess.Popen(
                [str(binary), "-p", f"{prefix}/", "-c", "nginx.conf", "-e", "error.log"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.root = f"http://127.0.0.1:{self.port}"
            if self._answers():
                return
            self.close()
        log = prefix / "error.log"
        raise CheckFailed(
            f"nginx did not start: {log.read_text()[-500:] if log.exists() else '(no log)'}"
        )

    def _answers(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.root}/index.html", timeout=1) as answer:
                    return bool(answer.status == 200)
            except OSError:
                time.sleep(0.05)
        return False

    def cpu(self) -> float:
        """The server's CPU seconds so far (user + sys, its worker included)."""
        total = 0.0
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _children(pid: int) -> list[int]:
    try:
        return [
            int(c)
            for task in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        ]
    except OSError:
        return []


# --- the crawls ----------------------------------------------------------------------------


def crawl_command(server: Nginx, run: Path, on: bool, settings: list[str]) -> list[str]:
    """The benchmark's crawl from the root page; add-on off: ``ADDONS={}`` after the
    shared settings, which replaces their add-on entry; add-on on: ``settings`` (``--set``)
    last."""
    return generated_site.start_command(
        f"{server.root}/index.html",
        run / "sitemaps",
        f"SITEMAPGEN_STATE={run / 'state.sqlite3'}",
        "CONCURRENT_REQUESTS_PER_DOMAIN=16",
        "SITEMAPGEN_RESPECT_CANONICAL=False",
        *(settings if on else ["ADDONS={}"]),
    )


def crawl(
    server: Nginx,
    on: bool,
    work: Path,
    expected: set[str],
    number: int,
    settings: list[str] | None = None,
) -> dict[str, Any]:
    """One crawl, its output checked before its figures are returned: the Measure fields,
    ``elapsed`` and ``responses`` from its stats, ``server_cpu`` (nginx's CPU meanwhile),
    and, add-on on, ``urls`` and ``images`` listed."""
    run = work / f"crawl-{number}-{'on' if on else 'off'}"
    run.mkdir()
    out = run / "sitemaps"
    log = run / "crawl.log"
    server_cpu = server.cpu()
    measured = measure.measured(crawl_command(server, run, on, settings or []), run, log)
    server_cpu = server.cpu() - server_cpu
    stats = generated_site.crawl_stats(log.read_text(errors="replace"))
    if measured.code or stats.get("finish_reason") != "'finished'":
        raise CheckFailed(f"crawl (add-on {'on' if on else 'off'}) failed:\n{measure.tail(log)}")
    responses = int(stats["response_received_count"])
    if responses < len(expected):
        raise CheckFailed(
            f"the crawl saw {responses} responses, fewer than the site's {len(expected)} pages"
        )
    images = 0
    if on:
        checks.require_url_set("the crawl", out, expected)
        checks.validate(sorted(out.glob("*/sitemap.xml")))
        images = sum(
            published.read_sitemap(p).count(b"<image:loc>") for p in published.urlsets(out)
        )
        if "sitemapgen/pages/recorded" not in stats:
            raise CheckFailed("the add-on's side recorded no page: was the add-on loaded?")
    else:
        if out.exists():
            raise CheckFailed(f"the crawl without the add-on wrote {out}")
        if any(key.startswith("sitemapgen/") for key in stats):
            raise CheckFailed("the crawl without the add-on has sitemapgen/ stats")
    result = {
        "on": on,
        **measured.as_dict(),
        "urls": len(expected) if on else 0,
        "images": images,
        "elapsed": float(stats["elapsed_time_seconds"]),
        "responses": responses,
        "server_cpu": round(server_cpu, 3),
    }
    shutil.rmtree(run, ignore_errors=True)
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pairs", type=int, default=MIN_PAIRS, help=f"alternating pairs (at least {MIN_PAIRS})"
    )
    parser.add_argument(
        "--package", default=PACKAGE, help=f"the documentation package (default {PACKAGE})"
    )
    parser.add_argument(
        "--languages",
        default="",
        metavar="LIST",
        help="comma-separated language folders to crawl (default: every one)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for the add-on's side (repeatable), such as "
        "SITEMAPGEN_DEDUPE_CONTENT=False",
    )


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``parameters``: the packages and their versions, the languages and the site's facts
    (:func:`site_facts`). ``measurements``: ``warmup`` (one pair, not counted) and
    ``pairs`` (``{"on": crawl, "off": crawl, "order", "load"}``; a crawl as :func:`crawl`
    returns it). ``summary``: :func:`summary`."""
    if args.pairs < MIN_PAIRS and not args.smoke:
        raise SystemExit(f"--pairs must be at least {MIN_PAIRS} (or --smoke)")
    if args.pairs < 1:
        raise SystemExit("--pairs must be at least 1")
    docs, doc_version = unpack(args.package)
    nginx_root, nginx_version = unpack(SERVER)
    html = docs / "usr" / "share" / "doc" / args.package / "html"
    available = languages_of(html)
    if not available and not (html / "index.html").is_file():
        raise SystemExit(f"{args.package} has no HTML book under {html}")
    languages = [lang for lang in args.languages.split(",") if lang] or available
    unknown = sorted(set(languages) - set(available))
    if unknown:
        raise SystemExit(
            f"--languages: {', '.join(unknown)} not in {', '.join(available) or 'a book of one'}"
        )
    malformed = [item for item in args.set if "=" not in item]
    if malformed:
        raise SystemExit(f"--set takes NAME=VALUE, not {malformed[0]!r}")
    if languages:  # a book per language: one root page that links to each
        (html / "index.html").write_text(root_page(languages), encoding="utf-8")
    facts = site_facts(html, languages)
    record["parameters"] = {
        "package": args.package,
        "package_version": doc_version,
        "server": SERVER,
        "server_version": nginx_version,
        "languages": languages,
        **facts,
        "pairs": args.pairs,
        "set": list(args.set),
    }
    pairs: list[dict[str, Any]] = []
    record["measurements"] = {"warmup": None, "pairs": pairs}
    server = Nginx(nginx_root / "usr" / "sbin" / "nginx", html, work / "nginx")
    try:
        expected = {f"{server.root}/index.html"} | {
            f"{server.root}/{p.relative_to(html).as_posix()}" for p in pages_of(html, languages)
        }
        print(
            f"crawl-docs: {args.package} {doc_version} ({len(languages) or 1} languages, "
            f"{facts['pages']:,} pages, {facts['img_elements']:,} <img>) served by nginx "
            f"{nginx_version} at {server.root}; warm-up pair",
            flush=True,
        )
        number = 0
        for count in range(args.pairs + 1):
            order = (True, False) if count % 2 == 0 else (False, True)
            load = round(os.getloadavg()[0], 2)
            done = {}
            for on in order:
                number += 1
                done[on] = crawl(server, on, work, expected, number, args.set)
            pair = {
                "on": done[True],
                "off": done[False],
                "order": "on,off" if order[0] else "off,on",
            }
            if not count:
                record["measurements"]["warmup"] = pair
                continue
            pairs.append({**pair, "load": load})
            print(
                f"  pair {count}: wall on/off {done[True]['wall'] / done[False]['wall']:.3f}, "
                f"CPU {done[True]['cpu'] / done[False]['cpu']:.3f} (load {load})",
                flush=True,
            )
    finally:
        server.close()
    record["measurements"]["rss_floor"] = measure.rss_floor
    record["summary"] = summary(pairs)
    record["summary"]["images_listed"] = record["measurements"]["warmup"]["on"]["images"]
    return 0
