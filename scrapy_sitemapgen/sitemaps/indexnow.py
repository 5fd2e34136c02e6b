"""IndexNow's pure part: the key, the URLs that changed since the previous run, batches.

IndexNow (https://www.indexnow.org/documentation) is how a site tells search engines which
of its URLs were added, changed or removed: a POST of JSON ``{"host", "key",
"keyLocation", "urlList"}``, at most 10,000 URLs of the one host per request, the key
proved by a text file on that host holding the key.

What changed is found by IndexNow's feature (:mod:`..features.entry_prints`): this run's URLs,
each with a fingerprint of its ``<url>`` entry, compared with the previous run's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "ADDED",
    "CHANGED",
    "ENDPOINT",
    "KEY_RE",
    "MAX_URLS_PER_REQUEST",
    "REMOVED",
    "batches",
    "key_file_name",
]

#: The shared endpoint, which passes each submission on to every engine taking part.
ENDPOINT = "https://api.indexnow.org/indexnow"
#: The protocol's key: 8 to 128 characters of a-z, A-Z, 0-9 and ``-``.
KEY_RE = re.compile(r"[a-zA-Z0-9-]{8,128}")
#: The protocol's limit of URLs in one request.
MAX_URLS_PER_REQUEST = 10_000
ADDED, CHANGED, REMOVED = "added", "changed", "removed"


def key_file_name(key: str) -> str:
    """The key file the protocol looks for without a ``keyLocation``: ``<key>.txt``."""
    return f"{key}.txt"


def batches(locs: Iterable[str], size: int = MAX_URLS_PER_REQUEST) -> Iterator[list[str]]:
    """``locs`` in lists of at most ``size`` (at most the protocol's 10,000)."""
    size = min(size, MAX_URLS_PER_REQUEST)
    batch: list[str] = []
    for loc in locs:
        batch.append(loc)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def key_folder(key_location: str) -> str:
    """The folder a key file at ``key_location`` vouches for: IndexNow accepts only URLs
    that start with it."""
    return key_location.rsplit("/", 1)[0] + "/"
