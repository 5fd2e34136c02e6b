"""What one origin of a broad crawl costs in a staging worker, by part, without a profiler.

    python -m benchmarks.origin_parts FEED [TASKS] [REPEAT]

Builds the run store of ``FEED`` (a feed of many origins: ``python -m benchmarks feed
--records 200000 --origins 20000``) in two workers, takes its first ``TASKS`` staging tasks
(20 by default: 10,000 origins of a few pages), then times in this process, ``REPEAT``
times (3 by default), each of:

- ``read``: every origin's entries and news entries read from its task's part of the
  store, and nothing else;
- ``write``: :func:`write_origin` of those entries (read beforehand) into sinks that keep
  nothing: the rendering, the checks, the compression and the hashing, no file;
- ``unzipped``: the same with ``SITEMAPGEN_GZIP`` off: what of ``write`` is the
  compression;
- ``stage``: the whole of a worker's task (``build.pool.stage_task``), files and state included;
- ``floor``: the same origins' folders and files made and nothing else (one of the origin
  folders ``stage`` made, written again as :mod:`benchmarks.file_floor` does, in this
  process).

Prints the CPU time an origin of each (``time.process_time``), each repeat on a line: the
parts are timed one after the other in the same process, so their figures can be set side
by side. cProfile, which the profiles use, adds a cost per call, and an origin is made of
many small calls: these figures have none of it.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from scrapy.settings import Settings

from benchmarks.file_floor import make_origins
from scrapy_sitemapgen.build import pool
from scrapy_sitemapgen.build.feed_reader import build_store
from scrapy_sitemapgen.publish import staging
from scrapy_sitemapgen.publish.delivery import Stagings
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.urls import UrlPolicy, origin_folder
from scrapy_sitemapgen.sitemaps.writer import WriterOptions, write_origin
from scrapy_sitemapgen.state.statefile import PublishState


class _Nowhere:
    """A sink that keeps nothing."""

    def write(self, data: bytes | memoryview, /) -> int:
        return len(data)

    def close(self) -> None:
        pass


def main(feed: Path, tasks: int, repeat: int, work_in: Path | None = None) -> None:
    logging.basicConfig(level=logging.WARNING)
    gc.disable()  # as in a worker (build.pool._worker_started)
    work = Path(tempfile.mkdtemp(prefix="origin-parts-", dir=work_in))
    try:
        now = datetime.now(timezone.utc)
        out = work / "out"
        config = Config.from_settings(
            Settings({"SITEMAPGEN_ENABLED": True, "SITEMAPGEN_URI": str(out)})
        )
        store, _ = build_store(feed, UrlPolicy(), now, workers=2, temp_dir=str(work))
        try:
            groups = [task for _, task in zip(range(tasks), pool.tasks(store))]
            origins = sum(map(len, groups))
            state_path = work / "state.sqlite3"
            PublishState(state_path).close()
            # The options stage_origin writes with.
            options = WriterOptions(
                max_urls=config.max_urls,
                max_bytes=config.max_bytes,
                gzip=config.gzip,
                compresslevel=config.gzip_level,
            )
            unzipped = dataclasses.replace(options, gzip=False)
            print(f"{origins} origins in {len(groups)} tasks; CPU an origin:")
            for round_ in range(repeat):
                parts = [store.part(task) for task in groups]
                start = time.process_time()
                read = [
                    (origin, list(part.entries(origin)), list(part.news_entries(origin)))
                    for part, task in zip(parts, groups)
                    for origin in task
                ]
                timed = {"read": time.process_time() - start}
                for name, how in (("write", options), ("unzipped", unzipped)):
                    start = time.process_time()
                    for origin, entries, _ in read:
                        write_origin(
                            entries,
                            scope=origin.root,
                            base_url=origin.root,
                            lastmod="2026-01-01T00:00:00+00:00",
                            open_sink=lambda name: _Nowhere(),
                            options=how,
                        )
                    timed[name] = time.process_time() - start
                stagings = Stagings(config)
                sent = [
                    (
                        store.part(task),
                        [(o, {}, stagings.new(origin_folder(config.uri, o))) for o in task],
                    )
                    for task in groups
                ]
                start = time.process_time()
                for number, (part, task_origins) in enumerate(sent):
                    notes = work / f"notes-{round_}-{number}.sqlite3"
                    pool.stage_task(
                        staging.stage_origin, part, task_origins, config, now, state_path, notes
                    )
                timed["stage"] = time.process_time() - start
                sample = next(folder for folder in out.iterdir() if folder.is_dir())
                files = [(p.name, p.read_bytes()) for p in sorted(sample.iterdir())]
                floor = work / f"floor-{round_}"
                floor.mkdir()
                start = time.process_time()
                make_origins(str(floor), files, 0, origins)
                timed["floor"] = time.process_time() - start
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(floor, ignore_errors=True)
                print(
                    "  ".join(
                        f"{name} {spent / origins * 1e6:6.1f} µs" for name, spent in timed.items()
                    )
                )
        finally:
            store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        int(sys.argv[2]) if len(sys.argv) > 2 else 20,
        int(sys.argv[3]) if len(sys.argv) > 3 else 3,
    )
