"""A publish against a power cut and against files changed behind its back: each delivered
file synced before its rename, its folder after, the state's commit after both; and a
published file that is missing, truncated or edited written again, however the state
remembers it."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from .helpers import log_messages

if TYPE_CHECKING:
    from pathlib import Path

ORIGINS = ("https://a.example.com", "https://b.example.org", "https://c.example.net")
A, B = "https_a.example.com_443", "https_b.example.org_443"
REPAIRED = "sitemapgen/files/repaired"


def _feed(path: Path, pages: int = 30, extra: int = 0) -> None:
    """Three origins of ``pages`` pages each; the first has ``extra`` pages more."""
    lines = [{"loc": f"{root}/p{i:03d}"} for root in ORIGINS for i in range(pages)]
    lines += [{"loc": f"{ORIGINS[0]}/q{i:03d}"} for i in range(extra)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _build(
    tmp_path: Path, *settings: str, prefix: tuple[str, ...] = (), module: bool = True
) -> subprocess.CompletedProcess[str]:
    """``scrapy sitemapgen-build`` of ``feed.jsonl`` into ``out``, urlsets of 10 URLs;
    ``module=False``: the command's arguments only, after ``prefix``'s program."""
    command = [sys.executable, "-m", "scrapy"] if module else []
    command += ["sitemapgen-build", "--input", "feed.jsonl"]
    command += ["-s", f"SITEMAPGEN_URI={tmp_path / 'out'}", "-s", "SITEMAPGEN_MAX_URLS=10"]
    for setting in settings:
        command += ["-s", setting]
    result = subprocess.run(
        [*prefix, *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _repaired(stderr: str) -> int | None:
    """The stats dump's ``sitemapgen/files/repaired``, None when absent."""
    found = re.search(rf"'{REPAIRED}': (\d+)", stderr)
    assert "'sitemapgen/files/unchanged'" in stderr  # the stats were dumped at all
    return int(found.group(1)) if found else None


def _files(out: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every published file (``origin/name``): its inode, modification time and bytes."""
    found = {}
    for folder in out.iterdir():
        if folder.is_dir():
            for path in folder.iterdir():
                info = path.stat()
                found[f"{folder.name}/{path.name}"] = (
                    info.st_ino,
                    info.st_mtime_ns,
                    path.read_bytes(),
                )
    return found


# --- the order of the system calls -------------------------------------------------------


@dataclass
class Call:
    """One system call of the trace: where it started and where it returned."""

    start: int
    end: int
    name: str
    text: str


_LINE = re.compile(r"^(\d+)\s+(.*)$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")


def _calls(trace: Path) -> list[Call]:
    """The trace's calls, a call strace split across threads joined again."""
    calls: list[Call] = []
    pending: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(trace.read_text(errors="replace").splitlines()):
        matched = _LINE.match(line)
        if not matched:
            continue
        pid, rest = matched.groups()
        resumed = _RESUMED.match(rest)
        if resumed:
            start, head = pending.pop(pid)
            text = head + resumed.group(2)
            calls.append(Call(start, number, text.split("(", 1)[0], text))
        elif rest.endswith("<unfinished ...>"):
            pending[pid] = (number, rest[: -len("<unfinished ...>")])
        elif "(" in rest:
            calls.append(Call(number, number, rest.split("(", 1)[0], rest))
    return calls


def _fd_path(call: Call) -> str:
    """The path strace -y shows for the first argument, a file descriptor."""
    found = re.match(r"\w+\(\d+<(.*?)>", call.text)
    assert found, call.text
    return found.group(1)


def _renames(calls: list[Call]) -> list[tuple[Call, str, str]]:
    found = []
    for call in calls:
        if call.name in ("rename", "renameat", "renameat2") and call.text.rstrip().endswith("= 0"):
            paths = re.findall(r'"((?:[^"\\]|\\.)*)"', call.text)
            found.append((call, paths[0], paths[1]))
    return found


#: A ``syncfs`` syncs the whole file system, so every path of the build.
EVERY = "*"


def _syncs(calls: list[Call]) -> list[tuple[Call, str]]:
    """Each sync of the trace and what it synced: a path, or :data:`EVERY`."""
    found = []
    for call in calls:
        if call.name in ("fsync", "fdatasync"):
            found.append((call, _fd_path(call)))
        elif call.name == "syncfs":
            found.append((call, EVERY))
    return found


def _touched(calls: list[Call]) -> dict[str, int]:
    """Where each file was last written, and each folder last had a file made in it."""
    last: dict[str, int] = {}
    for call in calls:
        if call.name in ("pwrite64", "write") and call.text.startswith(("pwrite64(", "write(")):
            last[_fd_path(call)] = call.end
        elif call.name == "openat" and "O_CREAT" in call.text:
            made = re.search(r"= \d+<(.*?)>$", call.text.rstrip())
            if made:
                last[made.group(1)] = call.end
                last[os.path.dirname(made.group(1))] = call.end
    return last


def _check_order(calls: list[Call], out: Path) -> int:
    """Assert that every rename into ``out`` (an origin folder, or a file into one) came
    after its data was synced, and before its folder was; that the state file's commit
    (its WAL written and synced) came after all of those, before the close report's log.
    A ``syncfs`` counts for every path whose last write came before it started.
    Returns how many renames it checked."""
    synced = _syncs(calls)
    touched = _touched(calls)
    renames = _published(calls, out)
    assert renames

    def syncs_of(path: str, since: int) -> list[Call]:
        return [
            sync
            for sync, what in synced
            if what == path or (what == EVERY and sync.start > max(since, touched.get(path, -1)))
        ]

    last = 0
    first = len(calls)  # where the delivery's first sync started
    for call, source, target in renames:
        if os.path.dirname(target) == str(out):  # a staging folder become an origin folder
            needed = [source, *(os.path.join(source, name) for name in os.listdir(target))]
        else:
            needed = [source]
        missing = [
            path for path in needed if not [s for s in syncs_of(path, -1) if s.end < call.start]
        ]
        assert not missing, f"renamed to {target} before these were synced: {missing}"
        first = min(first, *(s.start for path in needed for s in syncs_of(path, -1)))
        folder = os.path.dirname(target)
        after = [sync for sync in syncs_of(folder, call.end) if sync.start > call.end]
        assert after, f"{folder} was not synced after {target} was renamed into it"
        last = max(last, after[0].end)
    state = str(out / ".sitemapgen-state.sqlite3")
    wal = f"{state}-wal"
    written = [
        call
        for call in calls
        if call.name in ("pwrite64", "write")
        and call.text.startswith(("pwrite64(", "write("))
        and _fd_path(call) == wal
    ]
    # Nothing of the commit before the files and folders are on disk...
    assert not [w for w in written if first <= w.start <= last]
    # ... and the commit written and synced after them, before the report says so.
    report = min(
        call.start for call in calls if call.name == "write" and "publish.close_report" in call.text
    )
    commit = [w for w in written if last < w.start < report]
    assert commit, "the state's commit was not written between the delivery and the report"
    wal_syncs = [
        sync for sync, path in synced if path == wal and commit[-1].end < sync.start < report
    ]
    assert wal_syncs, "the state's commit was not synced before the report"
    return len(renames)


def _published(calls: list[Call], out: Path) -> list[tuple[Call, str, str]]:
    """The renames that publish: an origin folder into ``out``, or a file into one."""
    return [
        (call, source, target)
        for call, source, target in _renames(calls)
        if (
            os.path.dirname(target) == str(out)
            or os.path.dirname(os.path.dirname(target)) == str(out)
        )
        and not os.path.basename(target).startswith(".")
    ]


def _strace(trace: Path) -> tuple[str, ...]:
    """The command before a build's that traces its syncs, renames and writes."""
    strace = shutil.which("strace")
    assert strace, "the test needs strace (part of the machine image)"
    return (
        strace, "-f", "-y", "-s", "100", "-o", str(trace),
        "-e", "trace=fsync,fdatasync,syncfs,rename,renameat,renameat2,openat,pwrite64,write",
    )  # fmt: skip


def _syncfs_calls(calls: list[Call]) -> list[Call]:
    return [call for call in calls if call.name == "syncfs"]


#: A build run with one of the module's choices made for it: a line that sets it.
_BUILD_WITH = """
import sys
from scrapy.cmdline import execute
from scrapy_sitemapgen.publish import disk_sync
{line}
sys.argv = ["scrapy", *sys.argv[1:]]
execute()
"""


def test_each_delivered_file_is_synced_before_its_rename_and_the_state_after(
    tmp_path: Path,
) -> None:
    """strace of two builds: the first renames each origin's staging folder into place,
    the second (one origin grown, a file of another truncated) moves files one by one.
    A large group is synced in two steps: one ``syncfs`` before the renames, one after
    (Linux has it). This group is made large by the threshold set to 0;
    :func:`test_a_small_group_or_a_system_without_syncfs_syncs_each_file` covers the
    other road."""
    out = tmp_path / "out"
    _feed(tmp_path / "feed.jsonl")
    trace = tmp_path / "trace.txt"
    always = _BUILD_WITH.format(line="disk_sync._ONE_BY_ONE_UP_TO = 0")
    prefix = (*_strace(trace), sys.executable, "-c", always)
    _build(tmp_path, prefix=prefix, module=False)
    calls = _calls(trace)
    assert _check_order(calls, out) == len(ORIGINS)  # three folders renamed
    renamed = max(call.end for call, _, _ in _published(calls, out))
    before, after = _syncfs_calls(calls)
    assert before.end < min(call.start for call, _, _ in _published(calls, out))
    assert after.start > renamed

    _feed(tmp_path / "feed.jsonl", extra=5)
    (out / B / "sitemap-2.xml.gz").write_bytes(b"")
    _build(tmp_path, prefix=prefix, module=False)
    calls = _calls(trace)
    checked = _check_order(calls, out)
    # a's new urlset 4, its index and manifest; b's repaired urlset.
    assert checked == 4
    moved = {os.path.relpath(target, out) for _, _, target in _renames(calls)}
    assert {f"{A}/sitemap-4.xml.gz", f"{A}/sitemap.xml", f"{B}/sitemap-2.xml.gz"} <= moved
    # Unchanged files are not moved.
    assert f"{B}/sitemap-1.xml.gz" not in moved
    assert len(_syncfs_calls(calls)) == 2


@pytest.mark.parametrize(
    "line",
    [
        "pass  # a group of a few files, where the system has syncfs",
        "disk_sync._syncfs = None  # as on a system without syncfs (macOS)",
    ],
    ids=["small-group", "no-syncfs"],
)
def test_a_small_group_or_a_system_without_syncfs_syncs_each_file(
    tmp_path: Path, line: str
) -> None:
    """A group of a few files (three origins' here), and every group where the system has
    no ``syncfs``: each delivered file and folder is synced on its own, in the same order;
    the unchanged files are not synced."""
    out = tmp_path / "out"
    _feed(tmp_path / "feed.jsonl")
    trace = tmp_path / "trace.txt"
    prefix = (*_strace(trace), sys.executable, "-c", _BUILD_WITH.format(line=line))
    _build(tmp_path, prefix=prefix, module=False)
    calls = _calls(trace)
    assert not [c for c in calls if c.name == "syncfs"]
    assert _check_order(calls, out) == len(ORIGINS)
    # The new origin folders' parent synced once after the three renames, not once each.
    renamed = max(call.end for call, _, _ in _published(calls, out))
    assert len([c for c, path in _syncs(calls) if path == str(out) and c.start > renamed]) == 1

    _feed(tmp_path / "feed.jsonl", extra=5)
    _build(tmp_path, prefix=prefix, module=False)
    calls = _calls(trace)
    assert _check_order(calls, out) == 3  # a's new urlset 4, its index and manifest
    synced_files = {os.path.relpath(path, out) for _, path in _syncs(calls)}
    assert not [path for path in synced_files if path.endswith("sitemap-1.xml.gz")]


# --- repairs -----------------------------------------------------------------------------


def _repair_run(tmp_path: Path, before: dict[str, tuple[int, int, bytes]], damaged: str,
                damage: str, *settings: str) -> None:  # fmt: skip
    """Build again after ``damaged`` (``origin/name``) was damaged: it is written again
    with its published bytes, counted and named; nothing else is written."""
    result = _build(tmp_path, *settings)
    after = _files(tmp_path / "out")
    assert after.keys() == before.keys()
    assert after[damaged][2] == before[damaged][2]
    assert after[damaged][0] != before[damaged][0]  # a new file renamed into place
    for name, (inode, mtime, data) in after.items():
        if name != damaged:  # the index too: it names the same file, of the same bytes
            assert (inode, mtime, data) == before[name], name
    assert _repaired(result.stderr) == 1
    warnings = [m for m in log_messages(result.stderr, "WARNING") if str(tmp_path) in m]
    assert len(warnings) == 1
    assert str(tmp_path / "out" / damaged) in warnings[0]
    assert f"({damage})" in warnings[0]
    assert "changed: nothing" in result.stderr  # the report: no content changed


def test_a_published_file_missing_truncated_or_edited_is_written_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    plain = "SITEMAPGEN_GZIP=False"
    _feed(tmp_path / "feed.jsonl")
    first = _build(tmp_path, plain)
    assert _repaired(first.stderr) is None
    published = _files(out)
    assert f"{A}/sitemap-3.xml" in published

    (out / A / "sitemap-2.xml").write_bytes(b"")
    _repair_run(tmp_path, published, f"{A}/sitemap-2.xml", "empty", plain)
    published = _files(out)

    (out / B / "sitemap-1.xml").unlink()
    _repair_run(tmp_path, published, f"{B}/sitemap-1.xml", "missing", plain)
    published = _files(out)

    urlset = out / A / "sitemap-3.xml"
    text = urlset.read_bytes()
    edited = text.replace(b"/p025<", b"/p925<")
    assert edited != text and len(edited) == len(text)
    urlset.write_bytes(edited)
    _repair_run(tmp_path, published, f"{A}/sitemap-3.xml", "edited", plain)
    published = _files(out)

    # Cut short, a file is of another size; the manifest and robots.txt are ours too.
    (out / B / "manifest.json").write_bytes(published[f"{B}/manifest.json"][2][:-10])
    _repair_run(tmp_path, published, f"{B}/manifest.json", "of another size", plain)
    published = _files(out)

    # Untouched: nothing repaired, nothing written.
    result = _build(tmp_path, plain)
    assert _repaired(result.stderr) is None
    assert _files(out) == published


def test_a_gzipped_file_is_judged_by_its_bytes_then_by_its_content(tmp_path: Path) -> None:
    """An edited gzipped urlset is written again; one gzipped at another level (the same
    content in other bytes) is left alone: nothing happened to it."""
    out = tmp_path / "out"
    _feed(tmp_path / "feed.jsonl")
    _build(tmp_path, "SITEMAPGEN_GZIP_LEVEL=9")
    published = _files(out)
    content = gzip.decompress(published[f"{A}/sitemap-1.xml.gz"][2])
    assert gzip.compress(content, 1, mtime=0) != gzip.compress(content, 9, mtime=0)
    urlset = out / A / "sitemap-1.xml.gz"
    data = bytearray(urlset.read_bytes())
    data[len(data) // 2] ^= 0xFF
    urlset.write_bytes(bytes(data))
    _repair_run(tmp_path, published, f"{A}/sitemap-1.xml.gz", "edited", "SITEMAPGEN_GZIP_LEVEL=9")
    published = _files(out)

    result = _build(tmp_path, "SITEMAPGEN_GZIP_LEVEL=1")
    assert _repaired(result.stderr) is None
    assert "changed: nothing" in result.stderr
    assert _files(out) == published


# --- the quick check: each file's size and time kept in the state ------------------------

STATE = ".sitemapgen-state.sqlite3"
#: The ``files`` table as the state file had it before it kept each file's size and time.
_OLD_FILES = """CREATE TABLE files (
        output TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,
        sha256 TEXT NOT NULL, lastmod TEXT NOT NULL,
        PRIMARY KEY (output, origin, name)) WITHOUT ROWID"""


def _opens(trace: Path) -> tuple[str, ...]:
    """The command before a build's that traces the files it opens."""
    strace = shutil.which("strace")
    assert strace, "the test needs strace (part of the machine image)"
    return (strace, "-f", "-o", str(trace), "-e", "trace=openat")


def _opened(trace: Path, out: Path) -> set[str]:
    """The published files (``origin/name``) the traced build opened: files directly in
    an origin folder of ``out`` (not in a staging folder beside it, not a probe)."""
    found = set()
    for path in re.findall(r'openat\(AT_FDCWD, "([^"]+)"', trace.read_text(errors="replace")):
        folder, name = os.path.split(path)
        if (
            os.path.dirname(folder) == str(out)
            and not os.path.basename(folder).startswith(".")
            and not name.startswith(".")
        ):
            found.add(f"{os.path.basename(folder)}/{name}")
    return found


def _stamps(out: Path) -> dict[str, tuple[int | None, int | None]]:
    """The state's size and time of each published file (``origin/name``)."""
    db = sqlite3.connect(out / STATE)
    try:
        rows = db.execute("SELECT origin, name, disk_size, disk_mtime_ns FROM files").fetchall()
    finally:
        db.close()
    return {f"{origin}/{name}": (size, mtime) for origin, name, size, mtime in rows}


def _on_disk(out: Path) -> dict[str, tuple[int | None, int | None]]:
    """Each published file's size and time as the disk has them."""
    return {
        name: (len(data), os.stat(out / name).st_mtime_ns)
        for name, (_inode, _mtime, data) in _files(out).items()
    }


def _stamped_build(tmp_path: Path, *settings: str) -> None:
    """A first build, whose new origins' files get no stamps as their folders are renamed
    into place, then the run that compares them by their bytes once and keeps them."""
    _build(tmp_path, *settings)
    _build(tmp_path, *settings)


def test_a_run_with_nothing_changed_reads_no_published_file(tmp_path: Path) -> None:
    """A new origin's files are not stamped as their folder is renamed into place; the
    next run compares them by their bytes once and keeps each one's size and time; a run
    that finds them so on disk takes the file as intact without opening it."""
    out = tmp_path / "out"
    trace = tmp_path / "opens.txt"
    _feed(tmp_path / "feed.jsonl")
    _build(tmp_path)
    published = _files(out)
    assert len([name for name in published if "/sitemap-" in name]) == 9
    assert set(_stamps(out).values()) == {(None, None)}

    result = _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == set(published)  # each compared once
    assert _repaired(result.stderr) is None
    assert _stamps(out) == _on_disk(out)

    result = _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == set()
    assert _repaired(result.stderr) is None
    assert "changed: nothing" in result.stderr
    assert _files(out) == published
    assert _stamps(out) == _on_disk(out)


def test_an_edit_with_a_new_time_is_found_and_one_keeping_both_is_not(tmp_path: Path) -> None:
    """An edit of the same size is found by its time, written again, and the repaired
    file's own size and time are kept. An edit that keeps the size and sets the time back
    is the quick check's limit (docs/crash-safety.rst, "Published files changed behind
    its back"), as for rsync's and make's: it is not found."""
    out = tmp_path / "out"
    trace = tmp_path / "opens.txt"
    plain = "SITEMAPGEN_GZIP=False"
    _feed(tmp_path / "feed.jsonl")
    _stamped_build(tmp_path, plain)
    published = _files(out)
    name = f"{A}/sitemap-3.xml"
    urlset = out / name
    text = urlset.read_bytes()
    edited = text.replace(b"/p025<", b"/p925<")
    assert edited != text and len(edited) == len(text)
    mtime = urlset.stat().st_mtime_ns
    urlset.write_bytes(edited)
    os.utime(urlset, ns=(mtime, mtime + 1_000_000_000))  # a time of its own, whatever the clock's
    _repair_run(tmp_path, published, name, "edited", plain)
    assert _stamps(out) == _on_disk(out)
    published = _files(out)
    _build(tmp_path, plain, prefix=_opens(trace))
    assert _opened(trace, out) == set()  # the repaired file too: its stamp was kept

    mtime = urlset.stat().st_mtime_ns
    urlset.write_bytes(edited)
    os.utime(urlset, ns=(mtime, mtime))
    result = _build(tmp_path, plain)
    assert _repaired(result.stderr) is None
    assert urlset.read_bytes() == edited


def test_a_file_with_a_new_time_and_its_bytes_is_intact(tmp_path: Path) -> None:
    """A file whose time changed (touched, copied with its bytes) is compared by its
    bytes, found intact, left alone, and its new time kept: the next run reads it no
    more."""
    out = tmp_path / "out"
    trace = tmp_path / "opens.txt"
    _feed(tmp_path / "feed.jsonl")
    _stamped_build(tmp_path)
    published = _files(out)
    name = f"{B}/sitemap-2.xml.gz"
    inode, mtime, data = published[name]
    os.utime(out / name, ns=(mtime, mtime + 5_000_000_000))

    result = _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == {name}  # its bytes compared, the others' not read
    assert _repaired(result.stderr) is None
    after = _files(out)
    assert after[name] == (inode, mtime + 5_000_000_000, data)
    assert {n: f for n, f in after.items() if n != name} == {
        n: f for n, f in published.items() if n != name
    }
    assert _stamps(out)[name] == (len(data), mtime + 5_000_000_000)

    _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == set()


def test_a_state_file_without_sizes_and_times_compares_once(tmp_path: Path) -> None:
    """A state file of an earlier version, whose ``files`` table has no size and time:
    the columns are added in place, the first run compares every unchanged file by its
    bytes (and finds them intact), and the next one reads none."""
    out = tmp_path / "out"
    trace = tmp_path / "opens.txt"
    _feed(tmp_path / "feed.jsonl")
    _stamped_build(tmp_path)
    published = _files(out)
    db = sqlite3.connect(out / STATE)
    with db:  # the table as the earlier version made and filled it
        db.execute("ALTER TABLE files RENAME TO files_new")
        db.execute(_OLD_FILES)
        db.execute("INSERT INTO files SELECT output, origin, name, sha256, lastmod FROM files_new")
        db.execute("DROP TABLE files_new")
    columns = [row[1] for row in db.execute("PRAGMA table_info(files)")]
    db.close()
    assert columns == ["output", "origin", "name", "sha256", "lastmod"]

    result = _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == set(published)  # every file compared, once
    assert _repaired(result.stderr) is None
    assert "changed: nothing" in result.stderr
    assert _files(out) == published
    assert _stamps(out) == _on_disk(out)

    _build(tmp_path, prefix=_opens(trace))
    assert _opened(trace, out) == set()
