"""The file system's own share of a many-origins build: the same folders and files, and
nothing else, as a baseline the ``origins`` benchmark runs beside the builds.

    python benchmarks/file_floor.py OUT SAMPLE ORIGINS PROCESSES

For each of ``ORIGINS`` origins: a staging folder made in ``OUT``, the files of the origin
folder ``SAMPLE`` (a real build's: its names and bytes) written into it with ``open`` and
``write`` (a file object each), and the folder renamed into place, split over
``PROCESSES`` processes as the build's staging is. No compression, no hashing, no state: the
system calls a published origin cannot do without, and what the kernel makes of them when
several processes make them at once. Prints the folders made.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def make_origins(out: str, files: list[tuple[str, bytes]], first: int, count: int) -> int:
    for number in range(first, first + count):
        staging = os.path.join(out, f".origin-{number}.tmp")
        os.mkdir(staging)
        for name, data in files:
            with open(os.path.join(staging, name), "wb") as file:
                file.write(data)
        os.rename(staging, os.path.join(out, f"origin-{number}"))
    return count


def main(out: Path, sample: Path, origins: int, processes: int) -> int:
    files = [(p.name, p.read_bytes()) for p in sorted(sample.iterdir()) if p.is_file()]
    out.mkdir(parents=True, exist_ok=True)
    share = -(-origins // processes)
    with ProcessPoolExecutor(processes) as pool:
        done = pool.map(
            make_origins,
            [str(out)] * processes,
            [files] * processes,
            range(0, origins, share),
            [min(share, origins - first) for first in range(0, origins, share)],
        )
        return sum(done)


if __name__ == "__main__":
    made = main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    print(made)
