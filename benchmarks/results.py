"""The result file every benchmark run writes: one JSON object, schema version 1.

Written to ``--results PATH`` (a file, or a folder to put it in), by default
``benchmarks/results/<benchmark>-<YYYYmmddTHHMMSSZ>.json``; ``python -m benchmarks tables``
renders the published tables from these files alone.

Keys (units in the names or below: seconds, KiB for RSS, bytes for sizes):

- ``schema``: 1.
- ``benchmark``: the subcommand (``build``, ``memory``, ``crawl``, ``crawl-docs``, ``kill``,
  ``ab``, ``profile-build``, ``profile-crawl``, ``levels``, ``redis-memory``).
- ``smoke``: true when run with ``--smoke`` (sizes under the benchmark's minimums, to try
  the harness): the tables label such a result, its figures are not to be published.
- ``command``: the exact command line (``sys.orig_argv``, shell-quoted);
  ``invocation``: the same as ``python -m benchmarks ...``, as the tables show it.
- ``date``, ``finished``: UTC, ISO 8601; ``seconds``: the run's wall time.
- ``machine``: ``cores`` (``os.cpu_count()``), ``cores_usable`` (the affinity mask),
  ``cpu_model``, ``memory_kib``, ``load_average`` (at the start: the machine may be
  shared), ``python``, ``implementation``, ``scrapy``, ``lxml``, ``zlib``, ``zlib_ng`` and
  ``orjson`` (null when not installed), ``platform``, ``system``, ``arch``.
- ``code``: the code measured: ``commit`` (full hash of HEAD), ``short``, ``dirty`` (the
  package, ``scrapy_sitemapgen/``, had uncommitted changes), ``package_sha256`` (a hash
  of its ``.py`` files), ``changed_during_run`` (that hash differed at the end). ``ab``
  adds ``base`` (``revision``, ``commit``): the other side.
- ``options``: the subcommand's options as parsed (``--results``, ``--keep`` and
  ``--no-tables`` left out); ``parameters``: what the benchmark ran with, derived from them
  (the feed's facts for build and ab, the site's listable pages for crawl and kill).
- ``measurements``: the raw figures, one entry per run, repeat or pair, in the order run;
  each benchmark's shape is in its module (``build.run``, ``crawl.run``, ...). A child
  process is measured as ``{wall, cpu, rss, tree_rss, code, urls, bytes}``
  (:class:`benchmarks.measure.Measure`).
- ``summary``: what the tables show, derived from ``measurements`` (medians, ratios).
- ``notes``: sentences the tables print under the benchmark's tables.
- ``status``: ``"ok"``, or ``"failed"`` with ``error`` (a check failed: see
  :mod:`benchmarks.checks`; the figures up to the failure are kept).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA = 1
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"

Record = dict[str, Any]


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _first_line(path: str, key: str) -> str | None:
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    memory = _first_line("/proc/meminfo", "MemTotal")
    try:
        usable: int | None = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = None
    try:
        load: list[float] | None = [round(n, 2) for n in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "cpu_model": _first_line("/proc/cpuinfo", "model name"),
        "memory_kib": int(memory.split()[0]) if memory else None,
        "load_average": load,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "scrapy": _version("scrapy"),
        "lxml": _version("lxml"),
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
        "zlib_ng": _version("zlib-ng"),
        "orjson": _version("orjson"),
        "platform": platform.platform(),
        "system": platform.system(),
        "arch": platform.machine(),
    }


def git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return result.stdout.strip()


def package_digest() -> str:
    """A hash of the package's source: a run reports it when it changed mid-run."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "scrapy_sitemapgen").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def code() -> dict[str, Any]:
    commit = git("rev-parse", "HEAD") or None
    return {
        "commit": commit,
        "short": commit[:7] if commit else None,
        "dirty": bool(git("status", "--porcelain", "--", "scrapy_sitemapgen")),
        "package_sha256": package_digest(),
        "changed_during_run": False,
    }


def new(benchmark: str, argv: list[str], command: str, smoke: bool) -> Record:
    """A record of a run starting now; the benchmark fills ``parameters``,
    ``measurements``, ``summary`` and ``notes``."""
    return {
        "schema": SCHEMA,
        "benchmark": benchmark,
        "smoke": smoke,
        "command": command,
        "invocation": shlex.join(["python", "-m", "benchmarks", *argv]),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "finished": None,
        "seconds": None,
        "machine": machine(),
        "code": code(),
        "parameters": {},
        "measurements": {},
        "summary": {},
        "notes": [],
        "status": "running",
        "error": None,
        "_started": time.perf_counter(),
    }


def finish(record: Record, error: str | None = None) -> None:
    record["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record["seconds"] = round(time.perf_counter() - record.pop("_started"), 1)
    record["status"] = "failed" if error else "ok"
    record["error"] = error
    if package_digest() != record["code"]["package_sha256"]:
        record["code"]["changed_during_run"] = True
        record["notes"].append("WARNING: the package's source changed during the run.")


def default_path(record: Record) -> Path:
    stamp = datetime.fromisoformat(record["date"]).strftime("%Y%m%dT%H%M%SZ")
    return RESULTS / f"{record['benchmark']}-{stamp}.json"


def write(record: Record, target: Path | None) -> Path:
    """Write ``record`` to ``target`` (a ``.json`` file, or a folder), by default
    :func:`default_path`; the path written."""
    path = default_path(record) if target is None else target
    if target is not None and (target.is_dir() or target.suffix != ".json"):
        path = target / default_path(record).name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_portable(record), indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _portable(value: Any) -> Any:
    """``value`` with this machine's paths made relative: the interpreter is ``python``,
    paths in the checkout start from its root, so a committed result names no machine."""
    if isinstance(value, str):
        for prefix, short in ((sys.executable, "python"), (f"{REPO}/", ""), (str(REPO), ".")):
            value = value.replace(prefix, short)
        return value
    if isinstance(value, dict):
        return {key: _portable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_portable(item) for item in value]
    return value


def load(path: Path) -> Record:
    record: Record = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(record, dict) or record.get("schema") != SCHEMA or "benchmark" not in record:
        raise ValueError(f"{path}: not a benchmark result of schema {SCHEMA}")
    return record


def command_line() -> str:
    """This process's command line, exactly, shell-quoted."""
    return shlex.join(getattr(sys, "orig_argv", sys.argv))
