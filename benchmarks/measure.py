"""The one place a benchmark's time and memory are taken.

- :func:`measured`: a command run to completion in a child process, through a small
  launcher that ``wait4``-s it: wall, CPU (user + sys, its children included) and peak RSS
  of that command alone, and the peak RSS of its whole process tree.
- :func:`timed`: a call in this process: wall (``perf_counter``) and process CPU
  (``process_time``), for the benchmarks that time code in-process (profile-crawl, levels,
  redis-memory, profile-build).
- :func:`benchmark_tool`: a benchmark-only Python package (xml-sitemap-writer, py-spy)
  installed with pip under ``benchmarks/out/pydeps`` on first use, never into the
  environment the package is tested in.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

#: Where benchmark-only Python packages go (``pip install --target``); under the ignored
#: ``benchmarks/out/``, so the environment under test stays what ``make test`` installs.
PYDEPS = Path(__file__).with_name("out") / "pydeps"


@dataclass
class Measure:
    """One child process: wall and CPU seconds (user + sys, its children included), peak
    RSS in KiB, exit code, and what its output held (filled by the benchmark's check)."""

    wall: float
    cpu: float
    rss: int
    code: int
    urls: int = 0
    bytes: int = 0
    #: The largest sum of RSS over the process and its descendants, sampled every 50 ms:
    #: what a build with worker processes holds in all (``ru_maxrss`` is one process's).
    tree_rss: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# A small launcher between this process and each measured command. A child's ``ru_maxrss``
# starts at the peak RSS of the process it was spawned from (Linux keeps the hiwater mark of
# the image an exec replaces), and this harness holds Scrapy and lxml; the launcher, a bare
# ``python -S``, holds little, and reports that floor with the child's figures.
_LAUNCHER = """
import os, sys, threading, time
try:
    with open('/proc/self/status') as status:
        floor = int(status.read().split('VmHWM:')[1].split()[0])
except (OSError, IndexError, ValueError):
    floor = 0

def tree_rss(pid):
    # VmRSS of pid and every descendant, in KiB (0 for a process gone meanwhile).
    total, todo = 0, [pid]
    while todo:
        pid = todo.pop()
        try:
            with open(f'/proc/{pid}/status') as status:
                total += int(status.read().split('VmRSS:')[1].split()[0])
            for task in os.listdir(f'/proc/{pid}/task'):
                with open(f'/proc/{pid}/task/{task}/children') as children:
                    todo += [int(c) for c in children.read().split()]
        except (OSError, IndexError, ValueError):
            pass
    return total

started = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
peak, done = [0], threading.Event()

def sample():
    while not done.wait(0.05):
        peak[0] = max(peak[0], tree_rss(pid))

sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
done.set()
sampler.join()
with open(sys.argv[1], 'w') as result:
    result.write(f'{wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} '
                 f'{os.waitstatus_to_exitcode(status)} {floor} {peak[0]}')
"""
#: The launcher's own peak RSS in KiB: a child's peak RSS is never reported below it.
rss_floor = 0


def measured(
    command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
) -> Measure:
    """Run ``command`` to completion in ``cwd`` (with ``env``, default this process's), its
    output to ``log``. Wall, CPU and peak RSS are the command's alone: timed and
    ``wait4``-ed by the launcher around it."""
    global rss_floor
    result = log.with_suffix(".rusage")
    with log.open("wb") as sink:
        subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, str(result), *command],
            cwd=cwd,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=True,
        )
    wall, cpu, rss, code, floor, tree = result.read_text().split()
    rss_floor = max(rss_floor, int(floor))
    return Measure(float(wall), float(cpu), int(rss), int(code), tree_rss=int(tree))


@dataclass
class Timing:
    """A call made in this process: wall seconds and process CPU seconds (all threads)."""

    wall: float
    cpu: float


def timed(function: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, Timing]:
    """``function(*args, **kwargs)`` and how long it took, in this process."""
    started_cpu, started = time.process_time(), time.perf_counter()
    result = function(*args, **kwargs)
    return result, Timing(time.perf_counter() - started, time.process_time() - started_cpu)


def tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def benchmark_tool(requirement: str, present: Callable[[], bool], notes: list[str]) -> bool:
    """Whether ``present()``, with :data:`PYDEPS` first on ``sys.path``; ``requirement`` is
    installed there with pip when it is not (and a note says so)."""
    if str(PYDEPS) not in sys.path:
        sys.path.insert(0, str(PYDEPS))
    if present():
        return True
    print(
        f"{requirement} is not installed: installing it under {PYDEPS} (a benchmark-only "
        "dependency) with pip ...",
        flush=True,
    )
    PYDEPS.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(PYDEPS), requirement],
        capture_output=True,
        text=True,
        check=False,
    )
    importlib.invalidate_caches()
    if result.returncode or not present():
        notes.append(f"{requirement} could not be installed: {result.stderr.strip()[-300:]}")
        return False
    notes.append(f"{requirement} was installed under {PYDEPS} by this run.")
    return True


def importable(module: str) -> Callable[[], bool]:
    return lambda: importlib.util.find_spec(module) is not None


def pydeps_env() -> dict[str, str]:
    """This process's environment with :data:`PYDEPS` first on ``PYTHONPATH``: for a child
    that imports a benchmark-only package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYDEPS), env.get("PYTHONPATH", "")]))
    return env
