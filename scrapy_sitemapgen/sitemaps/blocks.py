"""How the state file packs a block of lines (noted URLs, content notes, IndexNow's
fingerprints): deflated, in zlib's format, read back by :func:`unpack`.

Pure. ``zlib.compress`` sets up a compressor sized for any input (a 32 KiB window and a
hash of 64 Ki entries, about 256 KiB made and cleared) whatever the block's size, and a
broad crawl has one small block of each kind per origin: that set-up cost more than noting
the origin's URLs. A block is packed with a window and a hash sized to it instead: the
same format, any window up to zlib's largest is read by the same ``decompress``.

With the ``fast`` extra, zlib-ng packs them instead, at its level 2: as small as zlib's
level 1 in less time, for a large block and a small one (benchmarks/RECORD.md), in the same
format, which the standard ``zlib`` reads back.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from .limits import DEFAULT_GZIP_BACKEND

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PACKERS", "pack", "unpack"]

# zlib's MIN_LOOKAHEAD: a window holds this much less than its size of past input.
_LOOKAHEAD = 262
_MAX_WBITS = 15
_MIN_WBITS = 9


def _zlib_pack(data: bytes) -> bytes:
    wbits = max(_MIN_WBITS, min(_MAX_WBITS, (len(data) + _LOOKAHEAD).bit_length()))
    if wbits == _MAX_WBITS:  # a full block: zlib's own set-up is the one sized for it
        return zlib.compress(data, 1)
    packer = zlib.compressobj(1, zlib.DEFLATED, wbits, 4)  # memLevel 4: a 2 Ki-entry hash
    return packer.compress(data) + packer.flush()


#: How a block's bytes are deflated, by the backend names of :mod:`.limits`: zlib at level
#: 1 with a compressor sized to the block, or zlib-ng at its level 2.
PACKERS: dict[str, Callable[[bytes], bytes]] = {"zlib": _zlib_pack}
if DEFAULT_GZIP_BACKEND == "zlib-ng":  # the extra ``fast`` is installed
    from zlib_ng import zlib_ng

    def _zlib_ng_pack(data: bytes) -> bytes:
        packed: bytes = zlib_ng.compress(data, 2)
        return packed

    PACKERS["zlib-ng"] = _zlib_ng_pack

_pack = PACKERS[DEFAULT_GZIP_BACKEND]


def pack(text: str) -> bytes:
    """``text`` (UTF-8) deflated, in zlib's format: by zlib-ng where it is installed."""
    return _pack(text.encode())


def unpack(data: bytes) -> str:
    """What :func:`pack` packed (or ``zlib.compress`` did: older state files)."""
    return zlib.decompress(data).decode()
