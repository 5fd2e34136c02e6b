"""Redis memory per URL of the shared store: bytes per entry at N entries.

    python -m benchmarks.redis_memory --records 1000000

Starts a redis-server of its own on a free loopback port, records N synthetic pages
(three origins, ~60-character locs, a Last-Modified lastmod on every other page, one image
on every third) through RedisFactStore, and reports INFO memory's used_memory growth per
entry.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.store.redis import RedisFactStore

ORIGINS = ("https://www.example.com", "https://shop.example.org", "http://blog.example.net:8080")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="redis-memory-")
    server = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        store = RedisFactStore(f"redis://127.0.0.1:{port}/0", batch_size=2000)
        client = store.raw()
        before = int(client.info("memory")["used_memory"])
        started = time.monotonic()
        for i in range(args.records):
            loc = f"{ORIGINS[i % 3]}/catalogue/section-{i % 97}/product-{i:08d}.html"
            store.record(
                UrlFacts(
                    loc,
                    "2024-05-06T07:08:09+00:00" if i % 2 else None,
                    images=(f"https://cdn.example.net/img/{i:08d}.jpg",) if i % 3 == 0 else (),
                )
            )
        store.flush()
        seconds = time.monotonic() - started
        after = int(client.info("memory")["used_memory"])
        entries = len(store)
        store.close()
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"{entries:,} entries: used_memory +{(after - before) / 2**20:,.1f} MiB, "
        f"{(after - before) / entries:,.0f} bytes per entry; "
        f"{entries / seconds:,.0f} records/s into Redis (one client)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
