"""A build's profile by phase (``profile-build``'s ``phases``): each function's own time
put in the phase of the build it serves, so that a profile of a million records reads as
"read and parse, sort and merge, checks, duplicates, chrome count, notes and state,
render, compress, write and sync", the phases issue 54 asks the benchmark page to show.

The phase of a function is decided by its module and name (:data:`RULES`, first match
wins), and a C function's (``~``: ``zlib``, ``marshal``, ``os``) by its name alone. What
no rule names is "other": the table shows it, so a new hot function is seen, not hidden.
Own time, not cumulative: every second is counted once. Under cProfile every Python call
costs more than it does unprofiled, so the shares, not the seconds, are what to read;
the wall and CPU of the same build unprofiled are beside them in the table.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PHASES", "by_phase"]

#: The phases, in the order of a build.
PHASES = (
    "start-up",
    "read and parse",
    "sort and merge",
    "checks",
    "duplicates",
    "chrome count",
    "notes and state",
    "render",
    "compress",
    "write and sync",
    "pool and processes",
    "other",
    "waiting",
)

#: Blocked, not working: a process waiting for another (a worker for its next task, the
#: parent for a result, a thread for a lock). Shown, and left out of the shares.
WAITING = "waiting"

#: A C function that blocks, and the machinery whose calls of it are waits.
_BLOCKING = re.compile(
    r"poll|select|acquire|SemLock|_queue|posix\.(read|write)|recv|send|waitpid|sleep|wait"
)
_MACHINERY = re.compile(
    r"multiprocessing/|concurrent/futures|threading\.py$|queue\.py$|selectors\.py$|asyncio/"
    r"|twisted/|selector|^~$"
)

#: (phase, the function's file matches, its name matches): the first rule that matches.
#: ``~`` is cProfile's file for a C function.
RULES: tuple[tuple[str, str, str], ...] = (
    ("compress", r"^~$", r"zlib|compress|flush|crc32"),
    ("read and parse", r"^~$", r"orjson\.loads|json|decode"),
    ("sort and merge", r"^~$", r"marshal|sort|heapq|merge"),
    (
        "write and sync",
        r"^~$",
        r"posix\.(write|open|close|fsync|rename|mkdir|stat|lstat|"
        r"unlink|replace|scandir)|io\.open|syncfs|BufferedWriter",
    ),
    ("notes and state", r"^~$", r"sqlite3|executemany|execute|commit|fetch"),
    (
        "pool and processes",
        r"^~$",
        r"_pickle|pickle|_thread|lock|acquire|poll|select|"
        r"_queue|socket|recv|send|SemLock|waitpid",
    ),
    ("start-up", r"^~$", r"builtins\.(compile|exec|__import__)|_imp\.|importlib"),
    ("read and parse", r"build/input_reader\.py$", r""),
    ("read and parse", r"sitemaps/records\.py$", r""),
    ("render", r"sitemaps/facts\.py$", r"format_w3c"),
    ("read and parse", r"sitemaps/facts\.py$", r""),
    ("sort and merge", r"sitemaps/merge\.py$", r""),
    ("checks", r"sitemaps/exclusions\.py$", r""),
    ("sort and merge", r"build/(spills|run_files|run_merge|run_store|source|windows)\.py$", r""),
    ("sort and merge", r"publish/split\.py$", r"stage_or_plan|survey|plan"),
    ("sort and merge", r"store/(bulk|runs)\.py$", r""),
    ("duplicates", r"sitemaps/duplicates\.py$", r""),
    ("duplicates", r"publish/staging\.py$", r"_unique|chosen|duplicate"),
    ("chrome count", r"features/chrome_images\.py$", r""),
    ("notes and state", r"state/", r""),
    ("notes and state", r"sitemaps/(lastmod|codec|evidence)\.py$", r""),
    ("notes and state", r"publish/staging\.py$", r"_noted|_notes|_settled|_Kept|lastmod"),
    ("checks", r"sitemaps/(urls|rules|sections)\.py$", r""),
    ("checks", r"sitemaps/writer\.py$", r"_checked|_check|_plain|_has_special|_escape"),
    ("render", r"sitemaps/(writer|manifest|blocks|naming|index|news|text)\.py$", r""),
    ("render", r"features/", r""),
    ("write and sync", r"publish/(delivery|disk_sync|staging|publisher)\.py$", r""),
    (
        "pool and processes",
        r"build/pool\.py$|concurrent/futures|multiprocessing|threading"
        r"|queue\.py$|pickle|dataclasses\.py$|collections/__init__\.py$",
        r"",
    ),
    ("start-up", r"<frozen importlib|importlib|scrapy/|twisted/|pkg_resources|site-packages", r""),
)

_COMPILED = [(phase, re.compile(path), re.compile(name)) for phase, path, name in RULES]


def phase_of(path: str, name: str) -> str:
    """The phase of the function ``name`` defined in ``path`` (``~`` for C)."""
    for phase, path_rule, name_rule in _COMPILED:
        if path_rule.search(path) and name_rule.search(name):
            return phase
    return "other"


def _generic(path: str) -> bool:
    """A function that serves whatever calls it (``len``, ``dict.get``, ``os.path.join``):
    its time is its callers' phases'."""
    return path == "~" or path.startswith(("<frozen posixpath", "<string>", "<frozen genericpath"))


def by_phase(stats: Any) -> dict[str, float]:
    """The own seconds of a ``pstats.Stats`` (its ``stats`` table) by phase, every phase
    of :data:`PHASES` present (0.0 for none). A C function that blocks, called by the
    pool's or the event loop's machinery, is :data:`WAITING`; another C function a rule
    names (``zlib``'s, ``marshal``'s, the system calls) is in that rule's phase; any other
    C function, and the small helpers of :func:`_generic`, is split among its callers'
    phases by the time each call site spent in it."""
    totals = dict.fromkeys(PHASES, 0.0)
    table: dict[Any, Any] = stats.stats
    for (path, _line, name), (_primitive, _calls, own, _cumulative, callers) in table.items():
        if path == "~" and _BLOCKING.search(name) and callers:
            for (caller_path, _caller_line, _caller_name), timing in callers.items():
                if _MACHINERY.search(caller_path):
                    totals[WAITING] += timing[2]
                else:
                    totals[phase_of(path, name)] += timing[2]
            continue
        phase = phase_of(path, name)
        if phase != "other" or not _generic(path) or not callers:
            totals[phase] += own
            continue
        for (caller_path, _caller_line, caller_name), timing in callers.items():
            totals[phase_of(caller_path, caller_name)] += timing[2]
    return {phase: round(seconds, 6) for phase, seconds in totals.items()}
