"""`multiprocessing.connection.Connection`'s message framing, for a crawler that reads and
writes a worker's socket from its event loop (`crawl.pool`) while the worker keeps a
plain blocking `Connection`: a 4-byte big-endian length, or -1 and an 8-byte one."""

from __future__ import annotations

import struct
from multiprocessing.reduction import ForkingPickler
from typing import Any

_SHORT = 0x7FFFFFFF  # the largest length the 4-byte header holds


def framed(obj: Any) -> bytes:
    """`obj` pickled and framed as `Connection.send` frames it."""
    payload = ForkingPickler.dumps(obj)
    size = len(payload)
    header = struct.pack("!i", size) if size <= _SHORT else struct.pack("!iQ", -1, size)
    return header + payload


def take_message(buffer: bytearray) -> bytes | None:
    """The first whole message framed in `buffer` (taken out of it), or None while it is
    incomplete."""
    if len(buffer) < 4:
        return None
    size, start = struct.unpack_from("!i", buffer)[0], 4
    if size == -1:
        if len(buffer) < 12:
            return None
        size, start = struct.unpack_from("!Q", buffer, 4)[0], 12
    end = start + size
    if len(buffer) < end:
        return None
    message = bytes(buffer[start:end])
    del buffer[:end]
    return message
