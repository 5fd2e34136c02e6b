"""Redis memory per URL of the shared store: bytes per entry at N entries.

    python -m benchmarks redis-memory --records 1000000

Starts a redis-server of its own on a free loopback port, records ``--records`` synthetic
pages (:func:`benchmarks.feed.store_pages`) through RedisFactStore, and records INFO
memory's ``used_memory`` growth per entry and the rate of the recording (one client).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from typing import TYPE_CHECKING

from . import feed, measure
from .checks import CheckFailed

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from .results import Record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=1_000_000)


def run(args: argparse.Namespace, record: Record, work: Path) -> int:
    """``measurements``: ``entries``, ``used_memory_before`` and ``_after`` (bytes),
    ``seconds`` (wall) and ``cpu`` (this process) of the recording. ``summary``:
    ``bytes_per_entry``, ``growth_mib``, ``records_per_s``."""
    from scrapy_sitemapgen.store.redis import RedisFactStore

    record["parameters"] = {"records": args.records}
    server_binary = shutil.which("redis-server")
    if server_binary is None:
        raise CheckFailed("redis-server is not on the PATH (Debian's package: make redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            server_binary,
            *("--port", str(port), "--bind", "127.0.0.1", "--save", ""),
            *("--appendonly", "no", "--dir", str(work)),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        store = RedisFactStore(f"redis://127.0.0.1:{port}/0", batch_size=2000)
        client = store.raw()
        before = int(client.info("memory")["used_memory"])

        def fill() -> None:
            for facts in feed.store_pages(args.records):
                store.record(facts)
            store.flush()

        _, timing = measure.timed(fill)
        after = int(client.info("memory")["used_memory"])
        entries = len(store)
        store.close()
    finally:
        server.terminate()
        server.wait()
    if entries != args.records:
        raise CheckFailed(f"{entries:,} entries in Redis, {args.records:,} recorded")
    record["measurements"] = {
        "entries": entries,
        "used_memory_before": before,
        "used_memory_after": after,
        "seconds": timing.wall,
        "cpu": timing.cpu,
    }
    record["summary"] = {
        "bytes_per_entry": (after - before) / entries,
        "growth_mib": (after - before) / 2**20,
        "records_per_s": entries / timing.wall,
    }
    print(
        f"{entries:,} entries: used_memory +{(after - before) / 2**20:,.1f} MiB, "
        f"{(after - before) / entries:,.0f} bytes per entry; "
        f"{entries / timing.wall:,.0f} records/s into Redis (one client)"
    )
    return 0
