"""The deploy recipe of docs/deploy.rst, end to end (issue 41, item 2).

This project's own documentation is built with Sphinx, served on 127.0.0.1 and crawled by
the recipe's own files: the ``run:`` lines of ``docs/deploy/workflow.yml``, in bash as
GitHub Actions runs them, with its ``env`` (another port, and a production host on a
reserved name that a local stand-in answers for), the crawl project
``docs/deploy/settings.py`` and ``spider.py``. Each run is a fresh checkout, as on a CI
runner, that keeps only what the workflow caches (the state folder). Checked: the
published set names only production URLs (P12, P13) and passes ``sitemapgen-validate``; a
rebuild that changed nothing but every file's date keeps every lastmod (P4) and every
byte; the gate stops a deploy that lost a page (exit 1) or forgot the map (exit 2).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest
import yaml

import scrapy_sitemapgen

from .helpers import (
    NS,
    Route,
    SiteServer,
    assert_valid,
    log_messages,
    read_bytes,
    read_urls,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

CHECKOUT = Path(scrapy_sitemapgen.__file__).resolve().parents[1]
WORKFLOW = CHECKOUT / "docs" / "deploy" / "workflow.yml"
#: The production prefix of the test runs, on a reserved name (RFC 6761). Every request
#: for it goes to a local stand-in through ``http_proxy``: production answers with what the
#: previous run deployed, and no request leaves the machine.
SITE_URL = "http://docs.example.test/3.11/"
ORIGIN_FOLDER = "http_docs.example.test_80"
#: The pages of the build that are not listed, since no ``<a>`` names them and a
#: LinkExtractor follows no other link: a ``<link rel="index">`` names genindex.html, and a
#: ``<link rel="search">`` and the search form name search.html (which says noindex too).
NOT_LISTED = {"search.html", "genindex.html"}
#: Deployed files production serves (the sitemaps; the pages are never asked for).
SERVED_TYPES = {".xml": "application/xml", ".gz": "application/gzip"}


class Production:
    """The production host, stood in for by a local server reached as an HTTP proxy: it
    serves the sitemaps of the last deploy, under ``SITE_URL``."""

    def __init__(self) -> None:
        self.server = SiteServer()

    def deploy(self, site: Path) -> None:
        self.server.routes.clear()
        for path in site.glob("sitemap*.xml*"):
            self.server.routes[SITE_URL + path.name] = Route(
                body=path.read_bytes(), content_type=SERVED_TYPES[path.suffix]
            )

    @property
    def env(self) -> dict[str, str]:
        return {"http_proxy": self.server.root, "no_proxy": "127.0.0.1"}


@dataclass(frozen=True)
class Workflow:
    env: dict[str, str]
    #: step name -> its ``run:`` block
    runs: dict[str, str]


def load_workflow() -> Workflow:
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    runs = {step["name"]: step["run"] for step in job["steps"] if "run" in step}
    return Workflow({k: str(v) for k, v in document["env"].items()}, runs)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Checkout:
    """One CI run: a fresh folder with the repository's ``docs`` in it (the sources and the
    crawl project), the state folder carried over from the previous run as the cache
    restores it, and the workflow's env with the port and production prefix substituted;
    production is reached through the stand-in's proxy."""

    def __init__(
        self, root: Path, workflow: Workflow, production: Production, cache: Path | None = None
    ) -> None:
        self.root = root
        self.workflow = workflow
        root.mkdir()
        (root / "docs").symlink_to(CHECKOUT / "docs", target_is_directory=True)
        if cache is not None:
            shutil.copytree(cache, root / ".sitemapgen")
        self.port = free_port()
        merged = {
            **workflow.env,
            "PORT": str(self.port),
            "SITE_URL": SITE_URL,
            "LIVE_SITEMAP": SITE_URL + "sitemap.xml",
        }
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")},
            **merged,
            **production.env,
            # the workflow's relative PYTHONPATH (the crawl project), then this checkout's package
            "PYTHONPATH": os.pathsep.join([merged["PYTHONPATH"], str(CHECKOUT)]),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        }

    @property
    def html(self) -> Path:
        return self.root / "_build" / "html"

    @property
    def published(self) -> Path:
        return self.root / "sitemaps" / ORIGIN_FOLDER

    def command(self, step: str, extra: str = "") -> list[str]:
        # As GitHub Actions runs a run: block (shell: bash).
        block = self.workflow.runs[step].rstrip() + extra
        return ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", block]

    def run(self, step: str, extra: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(step, extra),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    @contextmanager
    def served(self) -> Iterator[None]:
        """The "Serve the build" step, kept alive (its server is a background job of the
        block) until the end of the block, then stopped with its process group."""
        process = subprocess.Popen(
            self.command("Serve the build", "\nwait"),
            cwd=self.root,
            env=self.env,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 15
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    assert process.poll() is None, "the server step ended"
                    assert time.monotonic() < deadline, "the build was not served"
                    time.sleep(0.05)
            yield
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)

    def crawl(self, extra: str = "") -> subprocess.CompletedProcess[str]:
        with self.served():
            result = self.run("Crawl", extra)
        assert result.returncode == 0, result.stderr[-3000:]
        return result


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout


def file_date(path: Path) -> str:
    """The date http.server sends for a file (Last-Modified: its mtime, to the second),
    written as a lastmod is: UTC to the second."""
    stamp = datetime.fromtimestamp(int(path.stat().st_mtime), timezone.utc)
    return stamp.isoformat()


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@dataclass
class Runs:
    workflow: Workflow
    production: Production
    first: Checkout
    second: Checkout
    validated: list[str]
    gates: list[subprocess.CompletedProcess[str]]
    #: The paths production was asked for during the two runs.
    asked: set[str]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Two CI runs of one unchanged source: the first deploy, then a run that builds
    everything again from scratch, as a fresh checkout does, with the state the cache kept,
    and gates on what production serves: the first run's deploy."""
    base = tmp_path_factory.mktemp("deploy")
    workflow = load_workflow()
    production = Production()
    try:
        first = Checkout(base / "first", workflow, production)
        ok(first.run("Build"))
        first.crawl()
        validated = [ok(first.run("Validate"))]
        gates = [first.run("Gate")]
        ok(first.run("Put the sitemaps beside the pages"))
        production.deploy(first.html)

        second = Checkout(base / "second", workflow, production, first.root / ".sitemapgen")
        ok(second.run("Build"))
        second.crawl()
        validated.append(ok(second.run("Validate")))
        gates.append(second.run("Gate"))
        asked = {urlsplit(url).path for url in production.server.requested}
        yield Runs(workflow, production, first, second, validated, gates, asked)
    finally:
        production.server.close()


def test_the_published_set_names_only_production_urls(runs: Runs) -> None:
    """Issue 41 "Done when": a crawl of the local build with the map publishes a set that
    names only production URLs (the pages, the index's sitemaps, the robots.txt line:
    P12, P13) and passes the validator; the deploy step puts each file where its URL says."""
    first = runs.first
    assert [p.name for p in (first.root / "sitemaps").iterdir()] == [ORIGIN_FOLDER]
    listed = read_urls(first.root / "sitemaps")[ORIGIN_FOLDER]
    pages = {p.name for p in first.html.glob("*.html")}
    assert set(listed) == {SITE_URL + name for name in pages - NOT_LISTED}
    published_text = b"".join(
        read_bytes(p) for p in first.published.iterdir() if p.name != "manifest.json"
    )
    assert b"127.0.0.1" not in published_text
    assert (first.published / "robots.txt").read_text() == f"Sitemap: {SITE_URL}sitemap.xml\n"
    for output in runs.validated:
        assert output.strip().endswith(f"{len(listed)} URLs, 0 violations"), output
    # Deployed: the files sit in the site at the URLs the index and robots.txt line give.
    index = ElementTree.fromstring(assert_valid(first.html / "sitemap.xml"))
    names = [loc.text or "" for loc in index.iter(f"{NS}loc")]
    assert names and all(name.startswith(SITE_URL) for name in names)
    for name in names:
        assert (first.html / name.removeprefix(SITE_URL)).read_bytes() == (
            first.published / name.removeprefix(SITE_URL)
        ).read_bytes()
    assert not (first.html / "manifest.json").exists()
    assert not (first.html / "robots.txt").exists()


def test_the_built_docs_have_no_broken_link(runs: Runs) -> None:
    """Every URL the crawl of this project's docs reached answered 200: a link to a file of
    the checkout (``../benchmarks/RESULTS.md``) answered 404 in the built site once."""
    report = runs.first.root / "_build" / "sitemapgen-report" / ORIGIN_FOLDER
    with (report / "urls.csv").open(encoding="utf-8") as file:
        statuses = {r["url"]: r["status"] for r in csv.DictReader(file) if r["source"] == "crawl"}
    pages = {p.name for p in runs.first.html.glob("*.html")}
    assert {SITE_URL + name for name in pages - NOT_LISTED} <= set(statuses)
    assert {url: s for url, s in statuses.items() if s != "200"} == {}


def test_the_first_deploy_has_no_live_sitemap_to_gate_on(runs: Runs) -> None:
    """Before the first deploy production serves no sitemap: the gate cannot compare and
    exits 2, which is why the workflow skips it on that run (FIRST_DEPLOY)."""
    gate = runs.gates[0]
    assert gate.returncode == 2, gate.stdout + gate.stderr
    assert f"{SITE_URL}sitemap.xml" in gate.stderr


def test_an_unchanged_rebuild_keeps_every_lastmod_and_byte(runs: Runs) -> None:
    """Issue 41: the second run rebuilt every file (new mtimes, so new Last-Modified
    headers) from an unchanged source; only the content notes of the cached state keep
    the lastmods (P4), so the published set is byte for byte the first one, and the gate
    on the first deploy passes, with no ``lastmod_mismatch``: it compares production's
    lastmods with those the new set publishes, not with the rebuild's dates."""
    first, second = runs.first, runs.second
    listed = read_urls(first.root / "sitemaps")[ORIGIN_FOLDER]
    for url, fields in listed.items():
        page = url.removeprefix(SITE_URL)
        # The first run's lastmod is the date its build's server sent for the page ...
        assert fields["lastmod"] == file_date(first.html / page), url
        # ... and the rebuild's server sends another one.
        assert file_date(second.html / page) != fields["lastmod"], url
    assert read_urls(second.root / "sitemaps")[ORIGIN_FOLDER] == listed
    assert folder_bytes(second.published) == folder_bytes(first.published)
    gate = runs.gates[1]
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "listed_not_found" not in gate.stdout
    report = second.root / "_build" / "sitemapgen-report" / ORIGIN_FOLDER
    audit = json.loads((report / "audit.json").read_text(encoding="utf-8"))
    assert audit["urls_listed"] == len(listed)  # every page of production's sitemap compared
    assert audit["counts"]["lastmod_mismatch"] == 0, gate.stdout
    # Production was asked for its robots.txt, the /sitemap.xml that stands for a robots.txt
    # without Sitemap: lines, and the deployed sitemaps; never for a page.
    assert runs.asked == {
        "/robots.txt",
        "/sitemap.xml",
        "/3.11/sitemap.xml",
        "/3.11/sitemap-1.xml.gz",
    }


def test_the_gate_stops_a_deploy_that_lost_a_page(runs: Runs, tmp_path: Path) -> None:
    """Two pages that the deployed sitemap lists are missing from the next build. The links
    to stats.html remain, so the crawl reaches it and judges it 404; every link to
    item-fields.html is gone too, so the crawl's audit fetches it from the build, because
    production lists it (source ``sitemap``). The gate exits 1 with the finding
    listed_not_found for both production URLs, and for nothing else."""
    lost = Checkout(
        tmp_path / "lost", runs.workflow, runs.production, runs.second.root / ".sitemapgen"
    )
    shutil.copytree(runs.second.html, lost.html)
    (lost.html / "stats.html").unlink()
    (lost.html / "item-fields.html").unlink()
    for page in lost.html.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace('href="item-fields.html', 'href="#'), encoding="utf-8")
    lost.crawl()
    gate = lost.run("Gate")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    report = lost.root / "_build" / "sitemapgen-report" / ORIGIN_FOLDER
    with (report / "audit.csv").open(encoding="utf-8") as file:
        rows = [r for r in csv.DictReader(file) if r["finding"] == "listed_not_found"]
    assert [(r["url"], r["detail"]) for r in rows] == [
        (SITE_URL + "item-fields.html", "HTTP 404"),
        (SITE_URL + "stats.html", "HTTP 404"),
    ]
    with (report / "urls.csv").open(encoding="utf-8") as file:
        sources = {r["url"]: r["source"] for r in csv.DictReader(file)}
    assert sources[SITE_URL + "stats.html"] == "crawl"
    assert sources[SITE_URL + "item-fields.html"] == "sitemap"


def test_a_forgotten_map_fails_the_crawl_and_validation(runs: Runs, tmp_path: Path) -> None:
    """Without SITEMAPGEN_ORIGIN_MAP every page's canonical names its production URL, so
    every page is left out as canonicalised elsewhere: the guard on shrinking stops that
    origin (a crawl that lists nothing, SITEMAPGEN_MAX_REMOVED_SHARE), the crawl step exits
    1 with one ERROR line, no set is written, and the validate step exits 2 (an input
    error), before the deploy."""
    forgot = Checkout(
        tmp_path / "forgot", runs.workflow, runs.production, runs.second.root / ".sitemapgen"
    )
    shutil.copytree(runs.second.html, forgot.html)
    with forgot.served():
        crawled = forgot.run("Crawl", " -s 'SITEMAPGEN_ORIGIN_MAP={}'")
    assert crawled.returncode == 1, crawled.stderr[-3000:]
    errors = log_messages(crawled.stderr, "ERROR")
    assert len(errors) == 1, errors
    assert f"Sitemap: http://127.0.0.1:{forgot.port}/ was not published: none of the" in errors[0]
    assert "canonical_elsewhere" in errors[0]
    assert not (forgot.root / "sitemaps").exists()
    validate = forgot.run("Validate")
    assert validate.returncode == 2, validate.stdout + validate.stderr
    assert "sitemaps/*/sitemap.xml: cannot be read" in validate.stderr


def test_the_same_lines_twice_in_one_folder(runs: Runs, tmp_path: Path) -> None:
    """Run locally, the recipe's lines run again in the same folder, so the store in
    ``_build/`` is kept between the crawls. Between two crawls a page was deleted (its
    links stay: 404) and one was made noindex: the second crawl's set has neither, the
    rest as before, whatever the kept store remembered of them (issue 51)."""
    local = Checkout(
        tmp_path / "local", runs.workflow, runs.production, runs.second.root / ".sitemapgen"
    )
    shutil.copytree(runs.second.html, local.html)
    local.crawl()
    before = read_urls(local.root / "sitemaps")[ORIGIN_FOLDER]
    assert (local.root / "_build" / "sitemapgen-store.sqlite3").is_file()
    (local.html / "stats.html").unlink()
    page = local.html / "item-fields.html"
    page.write_text(
        page.read_text(encoding="utf-8").replace(
            "<head>", '<head><meta name="robots" content="noindex">', 1
        ),
        encoding="utf-8",
    )
    crawled = local.crawl()
    after = read_urls(local.root / "sitemaps")[ORIGIN_FOLDER]
    gone = {SITE_URL + "stats.html", SITE_URL + "item-fields.html"}
    assert gone <= set(before)
    assert set(after) == set(before) - gone
    assert "'sitemapgen/removed/status/404': 1" in crawled.stderr
    assert "'sitemapgen/removed/noindex': 1" in crawled.stderr
