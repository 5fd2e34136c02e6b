"""Failures a user can see: a publish that fails makes ``scrapy crawl`` and ``scrapy
sitemapgen-build`` exit non-zero, with one ERROR line naming the cause in words and the
path (the traceback at DEBUG), and what was published before stays as it was; an output
that would refuse the files is found before the first request. Real failures: a full file
system, a file size limit, an immutable folder, an FTP server that does not answer."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import sqlite3
import subprocess
from typing import TYPE_CHECKING

import pytest

from scrapy_sitemapgen.failures import cause_of, failure_of
from scrapy_sitemapgen.locations import LOCAL_STATE_NAME

from .helpers import crawl_site, log_messages, run_scrapy, write_project

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .helpers import SiteServer

#: A spider of :func:`write_project`'s project that, given ``-a fsize=N``, limits the size
#: of the files the process writes once the crawl is over (``RLIMIT_FSIZE``), before the
#: exporter publishes: its handler of spider_closed runs first, the spider's being
#: connected when the spider is made, before the extensions are. Python ignores SIGXFSZ,
#: so a write beyond the limit fails with EFBIG.
LIMITED_SPIDER = """
import resource

import scrapy


class LimitedSpider(scrapy.Spider):
    name = "limited"
    fsize = None

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        yield from response.follow_all(css="a")

    def closed(self, reason):
        if self.fsize is not None:
            limit = int(self.fsize)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
"""


def project_at(tmp_path: Path) -> Path:
    project = write_project(tmp_path / "project")
    (project / "proj" / "spiders" / "limited.py").write_text(LIMITED_SPIDER)
    return project


def published(out: Path) -> dict[str, bytes]:
    """Every file of the published set (the state file and its journal aside), by path."""
    return {
        str(path.relative_to(out)): path.read_bytes()
        for path in sorted(out.rglob("*"))
        if path.is_file() and not path.name.startswith(LOCAL_STATE_NAME)
    }


def our_errors(stderr: str) -> list[str]:
    return [
        line.split(" ERROR: ", 1)[1]
        for line in stderr.splitlines()
        if "[scrapy_sitemapgen" in line and " ERROR: " in line
    ]


def assert_one_line_failure(result: subprocess.CompletedProcess[str], cause: str) -> str:
    """A failed publish: exit status 1, one ERROR line of ours with ``cause`` and no
    traceback in the log at INFO, the failure in the stats."""
    assert result.returncode == 1, result.stderr[-3000:]
    [line] = our_errors(result.stderr)
    assert cause in line, line
    assert log_messages(result.stderr, "ERROR") == [line]  # nothing of Scrapy's either
    assert "Traceback" not in result.stderr
    assert "'sitemapgen/output/failed': 1" in result.stderr
    assert "'finish_reason': 'finished'" in result.stderr  # Scrapy's, unchanged
    return line


@contextlib.contextmanager
def tmpfs(mount_point: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` at ``mount_point``; yields whether it could be mounted."""
    mount_point.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(folder: Path) -> None:
    """Write a file in ``folder`` until its file system has no space left."""
    handle = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (65536, 4096, 512, 1):  # to the last byte
            with contextlib.suppress(OSError):
                while True:
                    os.write(handle, b"\0" * size)
    finally:
        os.close(handle)
    assert os.statvfs(folder).f_bavail == 0


# --- a publish that fails: exit status 1 and one line ------------------------------------


@pytest.mark.parametrize("state", ["in the output", "elsewhere"])
def test_full_disk_fails_the_crawl_in_one_line_and_keeps_the_published_set(
    small_site: SiteServer, tmp_path: Path, state: str
) -> None:
    project = project_at(tmp_path)
    with tmpfs(tmp_path / "disk", "2m") as mounted:
        out = tmp_path / "disk" / "sitemaps"
        settings = ["-s", f"SITEMAPGEN_URI={out}"]
        if state == "elsewhere":  # then a staged sitemap is what meets the full disk
            settings += ["-s", f"SITEMAPGEN_STATE={tmp_path / 'state.sqlite3'}"]
        first = crawl_site(project, small_site, *settings)
        assert first.returncode == 0, first.stderr[-3000:]
        assert our_errors(first.stderr) == []
        before = published(out)
        assert any(name.endswith("sitemap.xml") for name in before), before
        if mounted:
            fill(tmp_path / "disk")
            args: tuple[str, ...] = ()
            cause = "no space left on device"
        else:  # no mount here: a file size limit fails the writes as really
            args = ("-a", "fsize=64")
            cause = "file too large"
        result = run_scrapy(
            project, "crawl", "limited", "-a", f"start_url={small_site.url('/')}", *args, *settings
        )
        line = assert_one_line_failure(result, cause)
        assert line.startswith(f"Sitemap: writing to {out} failed: {cause}")
        path = line.split(": ", 3)[3].split(";", 1)[0]  # after "failed: <cause>: "
        if state == "elsewhere":
            # The file being staged (in its staging folder beside the origin folder) when
            # the write's error names it; a bare os.write's names none: the output then.
            assert path == str(out) or (path.startswith(f"{out}/.") and ".tmp-" in path), line
        else:
            assert path == str(out / LOCAL_STATE_NAME), line
        # Under the size limit the store's last writes fail too: the total is not known.
        total = "0 of 1 origin" if mounted else "0 origins"
        assert line.endswith(
            f"; each origin not published keeps the files it had before ({total} published)"
        ), line
        assert published(out) == before
        assert not [p for p in out.iterdir() if ".tmp-" in p.name]  # no staging left behind


@pytest.mark.parametrize(
    "reactor",
    [
        # AsyncCrawlerProcess, and the Deferred-based CrawlerProcess: both exit with 1.
        "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "twisted.internet.epollreactor.EPollReactor",
    ],
)
def test_file_size_limit_fails_the_crawl_in_one_line(
    small_site: SiteServer, tmp_path: Path, reactor: str
) -> None:
    project = project_at(tmp_path)
    with (project / "proj" / "settings.py").open("a") as settings:
        settings.write(f"TWISTED_REACTOR = {reactor!r}\n")
    out = tmp_path / "sitemaps"
    good = crawl_site(project, small_site, "-s", f"SITEMAPGEN_URI={out}")
    assert good.returncode == 0, good.stderr[-3000:]
    before = published(out)
    result = run_scrapy(
        project,
        "crawl",
        "limited",
        "-a",
        f"start_url={small_site.url('/')}",
        "-a",
        "fsize=64",
        "-s",
        f"SITEMAPGEN_URI={out}",
    )
    line = assert_one_line_failure(result, "file too large")
    assert str(out) in line
    assert published(out) == before


# --- an output that would refuse the files: refused at the start -------------------------


def make_immutable(path: Path) -> str:
    """Make ``path`` refuse changes: ``chattr +i`` (EPERM), else a read-only bind mount
    of it (EROFS). Returns the cause a write then meets."""
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
        return "operation not permitted (read-only or immutable?)"
    for command in (
        ["mount", "--bind", str(path), str(path)],
        ["mount", "-o", "remount,ro,bind", str(path)],
    ):
        subprocess.run(command, check=True, capture_output=True)
    return "read-only file system"


def make_mutable(path: Path) -> None:
    subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    subprocess.run(["umount", str(path)], capture_output=True, check=False)


@pytest.mark.parametrize("which", ["origin folder", "output folder", "state file"])
def test_an_immutable_output_refuses_the_start(
    small_site: SiteServer, tmp_path: Path, which: str
) -> None:
    project = project_at(tmp_path)
    out = tmp_path / "sitemaps"
    first = crawl_site(project, small_site, "-s", f"SITEMAPGEN_URI={out}")
    assert first.returncode == 0, first.stderr[-3000:]
    [origin] = [p for p in out.iterdir() if p.is_dir()]
    target = {"origin folder": origin, "output folder": out, "state file": out / LOCAL_STATE_NAME}[
        which
    ]
    assert target.exists()
    before = published(out)
    requested = len(small_site.requested)
    cause = make_immutable(target)
    try:
        result = crawl_site(project, small_site, "-s", f"SITEMAPGEN_URI={out}")
    finally:
        make_mutable(target)
    assert result.returncode == 1, result.stderr[-3000:]
    [line] = log_messages(result.stderr, "ERROR")
    assert line.startswith(f"Sitemap: the crawl was not started: SITEMAPGEN_URI={str(out)!r}")
    assert f"{target} " in line or f"{target}," in line, line
    assert f"({cause})" in line, line
    assert "Traceback" not in result.stderr
    assert small_site.requested[requested:] == []
    assert published(out) == before


def test_the_origin_folders_probed_leave_nothing_behind(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = project_at(tmp_path)
    out = tmp_path / "sitemaps"
    for _ in range(2):  # the second run's start probes the first's origin folder
        result = crawl_site(project, small_site, "-s", f"SITEMAPGEN_URI={out}")
        assert result.returncode == 0, result.stderr[-3000:]
    leftovers = [p for p in out.rglob("*") if "probe" in p.name]
    assert leftovers == []


# --- sitemapgen-build ----------------------------------------------------------------------


def test_build_exits_1_when_an_upload_fails_and_0_when_it_goes_out(
    small_site: SiteServer, tmp_path: Path
) -> None:
    project = project_at(tmp_path)
    jobdir = tmp_path / "job"
    crawled = crawl_site(
        project, small_site, "-s", f"JOBDIR={jobdir}", "-s", f"SITEMAPGEN_URI={tmp_path / 'a'}"
    )
    assert crawled.returncode == 0, crawled.stderr[-3000:]

    good = run_scrapy(
        project,
        "sitemapgen-build",
        "--jobdir",
        str(jobdir),
        "-s",
        f"SITEMAPGEN_URI={tmp_path / 'b'}",
    )
    assert good.returncode == 0, good.stderr[-3000:]
    assert our_errors(good.stderr) == []

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    uri = f"ftp://user:secret@127.0.0.1:{port}/sitemaps/"
    failed = run_scrapy(
        project, "sitemapgen-build", "--jobdir", str(jobdir), "-s", f"SITEMAPGEN_URI={uri}"
    )
    assert failed.returncode == 1, failed.stderr[-3000:]
    errors = our_errors(failed.stderr)
    assert errors, failed.stderr[-3000:]
    stored = [e for e in errors if e.startswith("Sitemap: storing ftp://")]
    assert stored, errors
    assert all("failed: connection refused;" in e for e in stored), stored
    assert "Traceback" not in failed.stderr
    assert "'sitemapgen/output/failed': 1" in failed.stderr


# --- the causes in words ---------------------------------------------------------------------


def os_error(number: int, filename: str | None = "/out/x.xml") -> OSError:
    return OSError(number, os.strerror(number), filename)


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (os_error(errno.ENOSPC), "no space left on device"),
        (os_error(errno.EACCES), "permission denied"),
        (os_error(errno.EPERM), "operation not permitted (read-only or immutable?)"),
        (os_error(errno.EROFS), "read-only file system"),
        (os_error(errno.EDQUOT), "disk quota exceeded"),
        (os_error(errno.EFBIG), "file too large (a file size limit: ulimit -f?)"),
        (os_error(errno.ENOENT), "no such file or directory (removed while writing?)"),
        (os_error(errno.EIO), "input/output error (a failing disk or a lost network mount?)"),
        (os_error(errno.ENOTDIR), "not a directory"),
        (
            NotADirectoryError(errno.ENOTDIR, "a symbolic link stands where an origin folder goes"),
            "a symbolic link stands where an origin folder goes",  # words of its own: kept
        ),
        (os_error(errno.EISDIR), "is a directory"),
        (os_error(errno.EMFILE), "too many open files (raise the limit: ulimit -n)"),
        (os_error(errno.ECONNREFUSED), "connection refused"),  # no words of ours: strerror's
        (sqlite3.DatabaseError("database disk image is malformed"), "the state file is corrupt"),
        (sqlite3.DatabaseError("file is not a database"), "the state file is corrupt"),
        (
            sqlite3.OperationalError("database is locked"),
            "the state file is locked by another process (database is locked)",
        ),
        (sqlite3.OperationalError("disk I/O error"), "disk I/O error"),  # nothing to ask
        (ValueError("bad things"), "ValueError: bad things"),
    ],
)
def test_cause_in_words(error: BaseException, cause: str) -> None:
    assert cause_of(error) == cause


def test_the_exceptions_file_name_is_the_path_else_the_one_given() -> None:
    assert str(failure_of(os_error(errno.ENOSPC), "/out")) == "no space left on device: /out/x.xml"
    assert str(failure_of(os_error(errno.ENOSPC, None), "/out")) == "no space left on device: /out"
    assert str(failure_of(ValueError("x"))) == "ValueError: x"


def test_a_cause_is_found_down_the_chain() -> None:
    try:
        try:
            raise os_error(errno.EROFS)
        except OSError as inner:
            raise RuntimeError("writing failed") from inner
    except RuntimeError as outer:
        assert str(failure_of(outer)) == "read-only file system: /out/x.xml"


def test_a_lost_redis_connection_by_its_class_name() -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    error = RedisConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
    assert cause_of(error) == (
        "the connection to Redis was lost (Error 111 connecting to 127.0.0.1:1. Connection refused.)"
    )


def test_a_vague_sqlite_error_asks_the_file_system(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    state.write_bytes(b"")
    if subprocess.run(["chattr", "+i", str(state)], capture_output=True).returncode != 0:
        state.chmod(0o444)  # not immutable here: a file without write permission
        if os.access(state, os.W_OK):  # root passes permissions: ask about a read-only one
            pytest.fail("neither chattr +i nor a read-only file stops root's writes here")
    try:
        cause = cause_of(
            sqlite3.OperationalError("attempt to write a readonly database"), str(state)
        )
    finally:
        subprocess.run(["chattr", "-i", str(state)], capture_output=True, check=False)
    assert cause in {
        "operation not permitted (read-only or immutable?) (attempt to write a readonly database)",
        "permission denied (attempt to write a readonly database)",
    }
    # A file nothing is wrong with: SQLite's own words.
    assert cause_of(sqlite3.OperationalError("disk I/O error"), str(state)) == "disk I/O error"
    assert list(tmp_path.iterdir()) == [state]  # the probe left nothing


def test_sqlite_errors_of_a_real_corrupt_file(tmp_path: Path) -> None:
    corrupt = tmp_path / "state.sqlite3"
    corrupt.write_bytes(b"these are notes, not a database\n" * 200)
    with pytest.raises(sqlite3.DatabaseError) as info:
        sqlite3.connect(corrupt).execute("SELECT * FROM sqlite_master").fetchall()
    assert str(failure_of(info.value, corrupt)) == f"the state file is corrupt: {corrupt}"


def test_a_full_file_system_read_from_a_vague_sqlite_error(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "256k") as mounted:
        assert mounted, "mount -t tmpfs failed (the tests run as root)"
        state = tmp_path / "disk" / "state.sqlite3"
        sqlite3.connect(state).close()
        fill(tmp_path / "disk")
        cause = cause_of(sqlite3.OperationalError("disk I/O error"), str(state))
        assert cause == "no space left on device (disk I/O error)"
