"""The recurring-crawl recipe of docs/recurring.rst, end to end (issue 51, item 9).

A live site stands in on 127.0.0.1 (a random port): eight pages and a robots.txt, each with
an ETag, a Last-Modified or both, some with a ``Cache-Control`` or an ``Expires``, and a
request that carries a matching ``If-None-Match`` or ``If-Modified-Since`` is answered
``304 Not Modified`` without a body. The recipe's project (``docs/recurring``: scrapy.cfg,
settings.py, spider.py) is installed in a folder as in ``/srv/sitemaps``, and crawled twice
by the crontab's line as written, run by ``/bin/sh`` in cron's environment; then once as
the workflow's crawl step, in a fresh checkout holding only what the workflow caches.
Checked: the first run fetches every page in full, the next ones ask about each page and
get 304s, and publish the first run's files byte for byte; the line prints nothing unless
the crawl fails, and then its exit status and ERROR line. Then what the request's
``Cache-Control`` does to Scrapy's RFC2616Policy, and what a 5xx answer does under the
cache, which the page's explanations of the recipe's headers rest on.
"""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

import scrapy_sitemapgen

from .helpers import LocalServer, assert_valid, read_bytes, read_urls

if TYPE_CHECKING:
    from collections.abc import Iterator

CHECKOUT = Path(scrapy_sitemapgen.__file__).resolve().parents[1]
RECIPE = CHECKOUT / "docs" / "recurring"
#: The crawl's project, as a user copies it.
PROJECT_FILES = ("scrapy.cfg", "settings.py", "spider.py")
#: Where the crontab and the systemd service say the project is installed.
INSTALLED_AT = "/srv/sitemaps"
#: The crawl's command, in each schedule.
COMMAND = "scrapy crawl sitemaps"
#: Cron runs a job with /bin/sh, in the user's home, with this PATH (and HOME, LOGNAME,
#: SHELL); the test adds the site's address and this checkout's package.
CRON_PATH = "/usr/bin:/bin"

#: Scrapy's own default request headers (scrapy/settings/default_settings.py), which the
#: recipe's DEFAULT_REQUEST_HEADERS must repeat since it replaces the dict.
SCRAPY_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
SCRAPY_ACCEPT_LANGUAGE = "en"


# --- the site: pages with validators, and conditional requests --------------------------------


@dataclass(frozen=True)
class Page:
    links: tuple[str, ...]
    etag: str | None = None
    last_modified: str | None = None
    cache_control: str | None = None
    expires: str | None = None
    content_type: str = "text/html; charset=utf-8"

    def body(self, path: str) -> bytes:
        if self.content_type.startswith("text/plain"):
            return b"User-agent: *\nDisallow:\n"
        anchors = "".join(f'<a href="{href}">{href}</a>\n' for href in self.links)
        text = f"<!DOCTYPE html><html><head><title>{path}</title></head><body><h1>{path}</h1>"
        return f"{text}\n{anchors}</body></html>".encode()

    def validator_headers(self) -> list[tuple[str, str]]:
        """The headers a 304 repeats (RFC 9110 15.4.5): ETag, Cache-Control, Expires."""
        named = [("ETag", self.etag), ("Cache-Control", self.cache_control)]
        return [(k, v) for k, v in [*named, ("Expires", self.expires)] if v is not None]


OLD = "Fri, 05 Jan 2024 10:00:00 GMT"
#: The site: every kind of validator and freshness a server sends. Each page's Last-Modified
#: lies long before the crawl, so that without ``max-age=0`` Scrapy's policy would take it
#: as fresh for weeks (a tenth of its age).
SITE: dict[str, Page] = {
    "/robots.txt": Page((), etag='"robots-1"', content_type="text/plain"),
    "/": Page(
        ("/about", "/news", "/products", "/contact"),
        etag='"home-1"',
        last_modified="Mon, 02 Sep 2024 09:00:00 GMT",
    ),
    "/about": Page(("/", "/contact"), etag='"about-1"'),
    "/news": Page(("/", "/blog/first"), last_modified=OLD),
    "/products": Page(
        ("/products/a", "/products/b"),
        last_modified="Tue, 01 Oct 2024 08:30:00 GMT",
        cache_control="max-age=86400",
    ),
    "/products/a": Page(
        ("/products", "/products/b"),
        etag='W/"a-1"',
        last_modified="Wed, 02 Oct 2024 08:30:00 GMT",
    ),
    "/products/b": Page(
        ("/products", "/products/a"),
        etag='"b-1"',
        last_modified="Thu, 03 Oct 2024 08:30:00 GMT",
    ),
    "/blog/first": Page(
        ("/news",),
        etag='"first-1"',
        last_modified="Sat, 06 Jan 2024 12:00:00 GMT",
        cache_control="no-cache",
    ),
    "/contact": Page(("/",), etag='"contact-1"', expires="Thu, 31 Dec 2037 23:59:59 GMT"),
}
PAGES = sorted(path for path, page in SITE.items() if page.content_type.startswith("text/html"))


@dataclass(frozen=True)
class Hit:
    """One request the site received, and the status it answered."""

    method: str
    path: str
    if_none_match: str | None
    if_modified_since: str | None
    cache_control: str | None
    accept: str | None
    accept_language: str | None
    status: int

    @property
    def conditional(self) -> bool:
        return self.if_none_match is not None or self.if_modified_since is not None


def not_modified(page: Page, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """RFC 9110 13.1: If-None-Match (weak comparison) decides when present; else
    If-Modified-Since against the page's Last-Modified."""
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return page.etag is not None and ("*" in tags or page.etag.removeprefix("W/") in tags)
    if if_modified_since is not None and page.last_modified is not None:
        try:
            since = parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError):
            return False
        return parsedate_to_datetime(page.last_modified) <= since
    return False


class ConditionalSite:
    """:data:`SITE` on 127.0.0.1 (a random port). Every request goes into ``hits``; a path
    in ``failing`` is answered with that status instead."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.failing: dict[str, int] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = LocalServer(("127.0.0.1", 0), Handler)
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        #: The origin's folder in the output (scheme, host and port).
        self.folder = f"http_127.0.0.1_{self.httpd.server_address[1]}"
        self.httpd.start()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        headers = handler.headers
        page = SITE.get(handler.path)
        if_none_match = headers.get("If-None-Match")
        if_modified_since = headers.get("If-Modified-Since")
        if page is None:
            status = 404
        elif handler.path in self.failing:
            status = self.failing[handler.path]
        elif not_modified(page, if_none_match, if_modified_since):
            status = 304
        else:
            status = 200
        self.hits.append(
            Hit(
                handler.command,
                handler.path,
                if_none_match,
                if_modified_since,
                headers.get("Cache-Control"),
                headers.get("Accept"),
                headers.get("Accept-Language"),
                status,
            )
        )
        handler.send_response(status)  # and Date: the time of this answer
        if status == 304 and page is not None:
            for name, value in page.validator_headers():
                handler.send_header(name, value)
            handler.end_headers()
            return
        body = page.body(handler.path) if page is not None and status == 200 else b"error"
        handler.send_header("Content-Type", page.content_type if page else "text/plain")
        handler.send_header("Content-Length", str(len(body)))
        if page is not None and status == 200:
            for name, value in page.validator_headers():
                handler.send_header(name, value)
            if page.last_modified is not None:
                handler.send_header("Last-Modified", page.last_modified)
        handler.end_headers()
        handler.wfile.write(body)

    def take(self) -> list[Hit]:
        """The requests received since the last call."""
        hits, self.hits = self.hits, []
        return hits

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


#: Requested twice by every run: robots.txt by Scrapy's RobotsTxtMiddleware, then by the
#: add-on's robots rule (docs/listing.rst); the home page as the start URL, which is never
#: filtered as a duplicate, then as a link.
TWICE = {"/robots.txt", "/"}


def every_request(
    first: tuple[bool, int], then: tuple[bool, int]
) -> dict[str, list[tuple[bool, int]]]:
    """What a run asks of every path: ``first`` for its first request, ``then`` for its
    second (the paths of :data:`TWICE`)."""
    return {path: [first, then] if path in TWICE else [first] for path in SITE}


def answers(hits: list[Hit]) -> dict[str, list[tuple[bool, int]]]:
    """path -> [(conditional request?, status answered)], one pair a request."""
    result: dict[str, list[tuple[bool, int]]] = {}
    for hit in hits:
        result.setdefault(hit.path, []).append((hit.conditional, hit.status))
    return result


# --- the recipe's files ------------------------------------------------------------------------


def cron_job() -> tuple[list[str], str]:
    """The crontab's one job: its five time fields and its command."""
    jobs = []
    for line in (RECIPE / "crontab").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.split("=", 1)[0].isidentifier():
            continue  # blank, comment, or an environment line such as MAILTO=
        *fields, command = line.split(None, 5)
        jobs.append((fields, command))
    assert len(jobs) == 1, jobs
    return jobs[0]


def unit(name: str) -> configparser.ConfigParser:
    """A systemd unit file, read as the INI file it is (keys kept as written)."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((RECIPE / name).read_text(encoding="utf-8"))
    return parser


@dataclass(frozen=True)
class Workflow:
    document: dict[Any, Any]
    job: dict[str, Any]
    #: The folder the job's ``run:`` lines run in (its ``defaults``).
    working_directory: str
    #: The paths the cache step keeps, relative to the workspace.
    cached: list[str]
    #: step name -> its ``run:`` line
    runs: dict[str, str]


def load_workflow() -> Workflow:
    document = yaml.safe_load((RECIPE / "workflow.yml").read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    (cache,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache@")]
    runs = {step["name"]: step["run"] for step in job["steps"] if "run" in step}
    directory = job["defaults"]["run"]["working-directory"]
    return Workflow(document, job, directory, cache["with"]["path"].split(), runs)


# --- running the recipe --------------------------------------------------------------------------


def scrapy_stand_in(path: Path) -> Path:
    """An executable ``scrapy`` at ``path``: what ``pip install scrapy-sitemapgen`` puts in
    a virtualenv's bin, here this Python's Scrapy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m scrapy "$@"\n')
    path.chmod(0o755)
    return path


def install(folder: Path) -> Path:
    """The recipe's project installed as in /srv/sitemaps: its three files and a virtualenv's
    ``.venv/bin/scrapy``."""
    folder.mkdir(parents=True)
    for name in PROJECT_FILES:
        shutil.copy(RECIPE / name, folder / name)
    scrapy_stand_in(folder / ".venv" / "bin" / "scrapy")
    return folder


def environment(site: ConditionalSite, home: Path, path: str) -> dict[str, str]:
    """A scheduler's environment, not this process's: the site's address (SITE_URL, which
    the recipe's spider reads) and this checkout's package added."""
    return {
        "HOME": str(home),
        "LOGNAME": "sitemaps",
        "SHELL": "/bin/sh",
        "PATH": path,
        "SITE_URL": site.root + "/",
        "PYTHONPATH": str(CHECKOUT),
    }


def run_cron_job(project: Path, site: ConditionalSite) -> subprocess.CompletedProcess[str]:
    """The crontab's command as cron runs it, with the project's place substituted."""
    _, command = cron_job()
    command = command.replace(INSTALLED_AT, shlex.quote(str(project)))
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=project.parent,
        env=environment(site, project.parent, CRON_PATH),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def crawl_log(project: Path) -> str:
    return (project / "crawl.log").read_text(encoding="utf-8")


def origin_files(output: Path) -> dict[str, bytes]:
    """Every file of the output's one origin folder, by name."""
    (origin,) = [p for p in output.iterdir() if p.is_dir()]
    return {p.name: p.read_bytes() for p in sorted(origin.iterdir())}


def listed(output: Path) -> set[str]:
    (urls,) = read_urls(output).values()
    return set(urls)


@dataclass
class Runs:
    site: ConditionalSite
    project: Path
    first: list[Hit]
    second: list[Hit]
    ci: list[Hit]
    #: run 1's origin folder, copied aside before run 2
    first_files: dict[str, bytes]
    first_urls: set[str]
    results: list[subprocess.CompletedProcess[str]]
    ci_result: subprocess.CompletedProcess[str]
    ci_output: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Two runs of the crontab's line on an unchanged site, then the workflow's crawl step
    in a fresh checkout that holds the recipe's project and what the workflow's cache
    restores (from the cron install: the same files)."""
    if shutil.which("flock", path=CRON_PATH) is None:
        pytest.skip("the crontab's line needs flock (util-linux)")
    base = tmp_path_factory.mktemp("recurring")
    site = ConditionalSite()
    try:
        project = install(base / "srv" / "sitemaps")
        results = [run_cron_job(project, site)]
        first = site.take()
        first_files = origin_files(project / "sitemaps")
        first_urls = listed(project / "sitemaps")
        results.append(run_cron_job(project, site))
        second = site.take()

        workflow = load_workflow()
        checkout = base / "ci"
        folder = checkout / workflow.working_directory
        folder.mkdir(parents=True)
        for name in PROJECT_FILES:
            shutil.copy(RECIPE / name, folder / name)
        for cached in workflow.cached:
            source = project / Path(cached).relative_to(workflow.working_directory)
            target = checkout / cached
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copy2(source, target)
        bin_dir = scrapy_stand_in(base / "runner" / "bin" / "scrapy").parent
        ci_result = subprocess.run(
            # As GitHub Actions runs a run: line (shell: bash).
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", workflow.runs["Crawl"]],
            cwd=folder,
            env=environment(site, base / "runner", f"{bin_dir}{os.pathsep}{CRON_PATH}"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        ci = site.take()
        yield Runs(
            site,
            project,
            first,
            second,
            ci,
            first_files,
            first_urls,
            results,
            ci_result,
            folder / "sitemaps",
        )
    finally:
        site.close()


# --- the recipe as written -----------------------------------------------------------------------


def test_the_first_run_fetches_every_page_in_full(runs: Runs) -> None:
    """Run 1 has no cache: every page and robots.txt is fetched with a plain GET, answered
    200, with Scrapy's Accept headers and the recipe's ``Cache-Control: max-age=0`` (the
    second request of a path of :data:`TWICE` already finds it cached). The cron line prints
    nothing (the crawl exited 0), and the set lists exactly the site's pages, valid."""
    result = runs.results[0]
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert answers(runs.first) == every_request((False, 200), (True, 304))
    assert {hit.method for hit in runs.first} == {"GET"}
    assert {(h.accept, h.accept_language, h.cache_control) for h in runs.first} == {
        (SCRAPY_ACCEPT, SCRAPY_ACCEPT_LANGUAGE, "max-age=0")
    }
    assert runs.first_urls == {runs.site.root + path for path in PAGES}
    assert sorted(runs.first_files) == [
        "manifest.json",
        "robots.txt",
        "sitemap-1.xml.gz",
        "sitemap.xml",
    ]
    folder = runs.project / "sitemaps" / runs.site.folder
    assert runs.first_files["sitemap-1.xml.gz"][:2] == b"\x1f\x8b"  # gzip
    assert b"<urlset" in read_bytes(folder / "sitemap-1.xml.gz")
    for name in ("sitemap.xml", "sitemap-1.xml.gz"):
        assert_valid(folder / name)
    assert " ERROR: " not in crawl_log(runs.project)


def test_the_next_run_asks_and_gets_304s_and_publishes_the_same_bytes(runs: Runs) -> None:
    """Run 2, on the unchanged site: every page run 1 fetched with 200 is asked about with
    its validators (If-None-Match when it has an ETag, else If-Modified-Since), whatever
    its Cache-Control, Expires or Last-Modified would let a cache assume, and answered 304,
    once. The cron line prints nothing, and every file of the origin folder (the index,
    the gzipped urlsets, robots.txt, manifest.json) is run 1's, byte for byte."""
    result = runs.results[1]
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    fetched = {hit.path for hit in runs.first if hit.status == 200}
    assert fetched == set(SITE)
    assert answers(runs.second) == every_request((True, 304), (True, 304))
    for hit in runs.second:
        page = SITE[hit.path]
        assert hit.if_none_match == page.etag, hit
        if page.etag is None:
            assert hit.if_modified_since == page.last_modified, hit
    assert origin_files(runs.project / "sitemaps") == runs.first_files
    assert listed(runs.project / "sitemaps") == runs.first_urls
    assert " ERROR: " not in crawl_log(runs.project)


def test_a_ci_run_with_the_cached_paths_only_does_the_same(runs: Runs) -> None:
    """The workflow's crawl step, in a fresh checkout where only the cache step's paths
    (the state file and the HTTP cache) come from before: 304s for every page, exit 0, and
    the same files, byte for byte."""
    assert runs.ci_result.returncode == 0, runs.ci_result.stderr[-3000:]
    assert answers(runs.ci) == every_request((True, 304), (True, 304))
    assert origin_files(runs.ci_output) == runs.first_files
    assert listed(runs.ci_output) == runs.first_urls
    assert " ERROR: " not in runs.ci_result.stderr


def test_a_failed_publish_makes_the_cron_line_print_its_error(runs: Runs, tmp_path: Path) -> None:
    """The alarm: a publish that fails (a folder stands where the index goes) makes the
    crawl exit 1, and the cron line prints that and the crawl's ERROR line, which cron
    mails."""
    project = install(tmp_path / "sitemaps")
    shutil.copytree(runs.project / "sitemaps", project / "sitemaps")
    shutil.copytree(runs.project / ".scrapy", project / ".scrapy")
    (origin,) = [p for p in (project / "sitemaps").iterdir() if p.is_dir()]
    (origin / "sitemap.xml").unlink()
    (origin / "sitemap.xml").mkdir()
    result = run_cron_job(project, runs.site)
    runs.site.take()
    lines = result.stdout.splitlines()
    assert lines[0] == f"{COMMAND} failed: exit status 1", result.stdout + result.stderr
    errors = lines[1:]
    assert errors and all(" ERROR: " in line for line in errors), result.stdout
    # The cause in words, as docs/failures.rst lists it, and the path.
    assert any(
        "a folder stands where a sitemap goes" in line and str(origin / "sitemap.xml") in line
        for line in errors
    ), errors


# --- the schedules name the same command ------------------------------------------------------


def test_the_schedules_run_the_same_command() -> None:
    """The crontab's line, the systemd service started by the timer, and the workflow's
    scheduled crawl step all run ``scrapy crawl sitemaps`` in the project's folder."""
    fields, command = cron_job()
    assert len(fields) == 5
    assert command.startswith(f"cd {INSTALLED_AT} && ")
    assert f".venv/bin/{COMMAND} " in command

    timer = unit("sitemaps.timer")
    assert timer["Timer"]["Unit"] == "sitemaps.service"
    assert timer["Timer"]["OnCalendar"]
    assert timer["Install"]["WantedBy"] == "timers.target"
    service = unit("sitemaps.service")["Service"]
    assert service["Type"] == "oneshot"
    assert service["WorkingDirectory"] == INSTALLED_AT
    assert service["ExecStart"] == f"{INSTALLED_AT}/.venv/bin/{COMMAND}"

    workflow = load_workflow()
    # YAML 1.1 reads the key ``on`` as true: PyYAML gives the triggers under True.
    triggers = workflow.document[True]
    (schedule,) = triggers["schedule"]
    assert len(schedule["cron"].split()) == 5
    assert workflow.runs["Crawl"] == COMMAND
    assert [run for run in workflow.runs.values() if "scrapy crawl" in run] == [COMMAND]
    # The cache keeps the output folder's state file and the HTTP cache, in the project.
    assert sorted(workflow.cached) == sorted(
        f"{workflow.working_directory}/{path}"
        for path in ("sitemaps/.sitemapgen-state.sqlite3", ".scrapy/httpcache")
    )


def test_the_recipe_repeats_scrapys_default_headers() -> None:
    """DEFAULT_REQUEST_HEADERS replaces Scrapy's dict: the recipe repeats its two headers,
    as Scrapy's default settings have them, and adds ``Cache-Control: max-age=0``."""
    from scrapy.settings import default_settings

    namespace: dict[str, Any] = {}
    exec((RECIPE / "settings.py").read_text(encoding="utf-8"), namespace)
    assert default_settings.DEFAULT_REQUEST_HEADERS == {
        "Accept": SCRAPY_ACCEPT,
        "Accept-Language": SCRAPY_ACCEPT_LANGUAGE,
    }
    assert namespace["DEFAULT_REQUEST_HEADERS"] == {
        "Accept": SCRAPY_ACCEPT,
        "Accept-Language": SCRAPY_ACCEPT_LANGUAGE,
        "Cache-Control": "max-age=0",
    }


# --- why the recipe's cache settings are what they are ------------------------------------------

#: Settings of a run that differs from the recipe in one way (a module importing the
#: recipe's settings, then this).
HEADERS = {"Accept": SCRAPY_ACCEPT, "Accept-Language": SCRAPY_ACCEPT_LANGUAGE}
VARIANTS = {
    # Scrapy's default headers, no Cache-Control: a page whose cached copy is fresh by its
    # max-age, its Expires, or a tenth of its Last-Modified's age is served unasked; only
    # what has an ETag and nothing else is asked about.
    "no Cache-Control": (
        f"DEFAULT_REQUEST_HEADERS = {HEADERS!r}",
        {},
        {"/robots.txt": [(True, 304), (True, 304)], "/about": [(True, 304)]},
    ),
    # no-cache: every page fetched again in full, no validators sent.
    "Cache-Control: no-cache": (
        f"DEFAULT_REQUEST_HEADERS = {{**{HEADERS!r}, 'Cache-Control': 'no-cache'}}",
        {},
        every_request((False, 200), (False, 200)),
    ),
    # The server's "Cache-Control: no-cache" heeded: that page fetched in full every run.
    "server's no-cache heeded": (
        "HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS = []",
        {},
        {
            **every_request((True, 304), (True, 304)),
            "/blog/first": [(False, 200)],
        },
    ),
    # The recipe, with /about answering 503: asked once, and the cached copy used.
    "a 5xx under the recipe": (
        "",
        {"/about": 503},
        {**every_request((True, 304), (True, 304)), "/about": [(True, 503)]},
    ),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_cache_settings_one_changed_at_a_time(runs: Runs, tmp_path: Path, variant: str) -> None:
    """On a copy of the project after its runs (the cache holds every page, each last
    answered 304), one run with the recipe's settings changed as in :data:`VARIANTS`: which
    pages are requested, with validators or not, and what they answer. Whatever the answers,
    the URL set is the one published before: a 503 under the cache reaches the spider as
    the cached page."""
    override, failing, expected = VARIANTS[variant]
    project = install(tmp_path / "sitemaps")
    shutil.copytree(runs.project / "sitemaps", project / "sitemaps")
    shutil.copytree(runs.project / ".scrapy", project / ".scrapy")
    (project / "variant.py").write_text(f"from settings import *  # noqa: F403\n{override}\n")
    env = environment(runs.site, tmp_path, CRON_PATH)
    runs.site.failing = failing
    try:
        result = subprocess.run(
            [str(project / ".venv" / "bin" / "scrapy"), "crawl", "sitemaps"],
            cwd=project,
            env={**env, "SCRAPY_SETTINGS_MODULE": "variant"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        runs.site.failing = {}
    hits = runs.site.take()
    assert result.returncode == 0, result.stderr[-3000:]
    assert answers(hits) == expected
    assert listed(project / "sitemaps") == runs.first_urls
