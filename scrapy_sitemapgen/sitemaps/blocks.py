"""How the state file packs a block of lines (noted URLs, content notes, IndexNow's
fingerprints): deflated at level 1, in zlib's format, read back by :func:`unpack`.

Pure. ``zlib.compress`` sets up a compressor sized for any input (a 32 KiB window and a
hash of 64 Ki entries, about 256 KiB made and cleared) whatever the block's size, and a
broad crawl has one small block of each kind per origin: that set-up cost more than noting
the origin's URLs. A block is packed with a window and a hash sized to it instead: the
same format, any window up to zlib's largest is read by the same ``decompress``.
"""

from __future__ import annotations

import zlib

__all__ = ["pack", "unpack"]

# zlib's MIN_LOOKAHEAD: a window holds this much less than its size of past input.
_LOOKAHEAD = 262
_MAX_WBITS = 15
_MIN_WBITS = 9


def pack(text: str) -> bytes:
    """``text`` (UTF-8) deflated at level 1, in zlib's format."""
    data = text.encode()
    wbits = max(_MIN_WBITS, min(_MAX_WBITS, (len(data) + _LOOKAHEAD).bit_length()))
    if wbits == _MAX_WBITS:  # a full block: zlib's own set-up is the one sized for it
        return zlib.compress(data, 1)
    packer = zlib.compressobj(1, zlib.DEFLATED, wbits, 4)  # memLevel 4: a 2 Ki-entry hash
    return packer.compress(data) + packer.flush()


def unpack(data: bytes) -> str:
    """What :func:`pack` packed (or ``zlib.compress`` did: older state files)."""
    return zlib.decompress(data).decode()
