"""The recorder process (``SITEMAPGEN_RECORDER = "process"``): judging and storing a page's
facts on the machine's other core.

A crawl runs Scrapy on one core. Inline, the spider middleware reads each page and then
judges what it read (URLs joined and normalised, policies, dates: evidence.py) and writes
it to the store, all on that core. With the recorder process it only reads: the walk of
Scrapy's cached tree stays in the crawl, so the HTML is still parsed once and shared with
the spider, and a :class:`PageEvidence` of plain strings goes, pickled in batches, to a
child Python process that judges it and owns the store until the spider closes. What the
judging counts and logs comes back as events, applied to the crawl's stats and log in the
crawl's own thread. Item facts from the pipeline go the same way, after the pages sent
before them, so the store sees the same writes in the same order as inline.

The child imports none of Scrapy (the judging needs none) and ends when its input does:
at the spider's close, or when the crawl's process dies, after committing what it had.
Its work is not durable in the way request tracking needs (a write is committed only
when the child gets to it), which is why the setting refuses JOBDIR-style resuming.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import traceback
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from .evidence import PageEvidence, facts_from_evidence
from .store import SqliteFactStore, StoreError

if TYPE_CHECKING:
    from .facts import UrlFacts
    from .settings import Config

__all__ = ["RecorderProcess", "RecorderResult"]

logger = logging.getLogger(__name__)

_HEADER = struct.Struct(">I")
#: Messages per frame: large enough that a pipe write and a pickle call are rare, small
#: enough that the child keeps up a few milliseconds behind the crawl.
_BATCH = 64
#: Frames waiting for the pipe; the crawl waits beyond that (memory stays flat).
_QUEUED_FRAMES = 16
_PICKLE = pickle.HIGHEST_PROTOCOL


def _write_frame(out: IO[bytes], payload: bytes) -> None:
    out.write(_HEADER.pack(len(payload)))
    out.write(payload)
    out.flush()


def _read_frame(source: IO[bytes]) -> bytes | None:
    """One frame, or None at the end of the input (a frame cut short included)."""
    head = source.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    payload = source.read(size)
    return payload if len(payload) == size else None


class RecorderSink(Protocol):
    """Where the child's events go in the crawl (the exporter's stats and log)."""

    def skip(self, reason: str, url: str, detail: object = None) -> None: ...

    def exclude(self, reason: str, url: str) -> None: ...

    def pages_recorded(self, count: int) -> None: ...

    def store_failed(self, url: str, error: str) -> None: ...


class RecorderResult:
    """What the child said at its end: the pages it recorded and whether it closed the
    store itself (False: it died, and what it had not committed is lost)."""

    def __init__(self) -> None:
        self.pages = 0
        self.closed = False
        self.returncode: int | None = None


class RecorderProcess:
    """The crawl's side: starts the child, ships evidence and item facts to it, applies
    the events it sends back. ``send_*`` and ``apply_events`` belong to the crawl's
    thread; two threads of ours move the bytes, so a full pipe never blocks the reactor
    unless the child falls a whole queue behind."""

    def __init__(self, config: Config, store_path: Path, sink: RecorderSink) -> None:
        self.reporter = sink
        self.result = RecorderResult()
        self._batch: list[tuple[str, Any]] = []
        self._frames: queue.Queue[bytes | None] = queue.Queue(_QUEUED_FRAMES)
        self._events: deque[list[tuple[Any, ...]]] = deque()
        self.failed = False
        self._process = subprocess.Popen(  # noqa: S603  # our own module, this interpreter
            [sys.executable, "-m", "scrapy_sitemapgen.recorder"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))},
        )
        self.pid = self._process.pid
        first = pickle.dumps((config, str(store_path)), _PICKLE)
        self._writer = threading.Thread(target=self._write, args=(first,), daemon=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._writer.start()
        self._reader.start()

    # --- the crawl's thread ------------------------------------------------------------

    def send_page(self, evidence: PageEvidence) -> None:
        self._batch.append(("page", evidence))
        if len(self._batch) >= _BATCH:
            self.ship()

    def send_item(self, facts: UrlFacts) -> None:
        self._batch.append(("item", facts))
        if len(self._batch) >= _BATCH:
            self.ship()

    def ship(self) -> None:
        """Send what waits (also from the exporter's periodic commit, so that a slow crawl
        does not keep pages here)."""
        if self._batch and not self.failed:
            self._frames.put(pickle.dumps(self._batch, _PICKLE))
        self._batch = []

    def apply_events(self) -> None:
        """Count and log, in the crawl's thread, what the child's judging reported."""
        reporter = self.reporter
        while self._events:
            for event in self._events.popleft():
                kind = event[0]
                if kind == "skip":
                    reporter.skip(event[1], event[2], event[3])
                elif kind == "exclude":
                    reporter.exclude(event[1], event[2])
                elif kind == "recorded":
                    self.result.pages += event[1]
                    reporter.pages_recorded(event[1])
                elif kind == "store_error":
                    reporter.store_failed(event[1], event[2])
                elif kind == "error":
                    logger.error("Sitemap: the recorder process failed on a page: %s", event[1])
                elif kind == "closed":
                    self.result.closed = True

    def exited(self) -> bool:
        """Whether the child is gone (before :meth:`close`, only if it died)."""
        return self._process.poll() is not None

    def close(self) -> RecorderResult:
        """Send the rest, end the child's input and wait for it to commit and exit.
        Blocking: run it in a thread. Events are left for :meth:`apply_events`."""
        self.ship()
        self._frames.put(None)
        self._writer.join()
        self.result.returncode = self._process.wait()
        self._reader.join()
        return self.result

    # --- our two threads ---------------------------------------------------------------

    def _write(self, first: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            _write_frame(stdin, first)
            while (frame := self._frames.get()) is not None:
                _write_frame(stdin, frame)
        except OSError:  # the child is gone: its end is reported by close()
            self.failed = True
            while self._frames.get() is not None:  # let the crawl's puts through
                pass
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        while (frame := _read_frame(stdout)) is not None:
            self._events.append(pickle.loads(frame))
        stdout.close()


# --- the child ---------------------------------------------------------------------------


class _Events:
    """The child's reporter: what stats.Reporter would be told, queued for the crawl."""

    def __init__(self) -> None:
        self.queued: list[tuple[Any, ...]] = []

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        try:
            pickle.dumps(detail, _PICKLE)
        except Exception:  # noqa: BLE001  # whatever a page held: its text is enough
            detail = repr(detail)
        self.queued.append(("skip", reason, url, detail))

    def exclude(self, reason: str, url: str) -> None:
        self.queued.append(("exclude", reason, url))


def serve(source: IO[bytes], out: IO[bytes]) -> int:
    """The child's loop: judge and store each message until the input ends, then close
    the store and say so."""
    first = _read_frame(source)
    if first is None:
        return 1
    config, path = pickle.loads(first)
    store = SqliteFactStore(Path(path), batch_size=config.commit_writes, max_delay=config.commit_seconds)
    events = _Events()
    try:
        while (frame := _read_frame(source)) is not None:
            now = datetime.now(timezone.utc)
            pages = 0
            for kind, payload in pickle.loads(frame):
                try:
                    if kind == "page":
                        facts = facts_from_evidence(payload, config, events, now)
                        if facts is None:
                            continue
                        store.record(facts, from_item=False)
                        pages += 1
                    else:
                        store.record(payload, from_item=True)
                except (sqlite3.Error, OSError, StoreError) as exc:
                    loc = payload.loc
                    events.queued.append(("store_error", loc, f"{type(exc).__name__}: {exc}"))
                except Exception:  # noqa: BLE001  # one page's bug must not end the crawl's record
                    events.queued.append(("error", traceback.format_exc(limit=5)))
            if pages:
                events.queued.append(("recorded", pages))
            if events.queued:
                _write_frame(out, pickle.dumps(events.queued, _PICKLE))
                events.queued = []
    finally:
        store.close()
    _write_frame(out, pickle.dumps([("closed",)], _PICKLE))
    return 0


def main() -> int:
    # Ctrl-C reaches the whole process group: the crawl shuts down gracefully and ends our
    # input when it is done; dying at once here would lose what it still sends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # The frames get the real standard output to themselves; anything printed goes to
    # standard error instead of into the stream.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    sys.exit(main())
