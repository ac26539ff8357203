"""Length-prefixed pickle frames over a pipe: how the preview talks to its analysis host.

Both ends are this project's own code running on the same interpreter (the host is started by
the preview with ``sys.executable``), so pickle carries the records and results as they are:
no schema to keep in step, and a registration costs ~16 us to encode at a thousand teams.
Nothing read from another source ever goes through :func:`read_frame`.
"""

from __future__ import annotations

import contextlib
import fcntl
import pickle
import struct
from typing import IO, Any

_HEADER = struct.Struct("<Q")
# Linux's default pipe buffer is 64 KiB; a thousand teams' registrations are ~12 MiB, so a larger
# buffer lets the program run ahead of a busy host instead of waiting on each write
# (``fcntl(2)`` F_SETPIPE_SZ; 1 MiB is the default ``/proc/sys/fs/pipe-max-size``).
PIPE_BUFFER_BYTES = 1024 * 1024


def encode(value: Any) -> bytes:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def write_frame(stream: IO[bytes], value: Any) -> None:
    stream.write(encode(value))
    stream.flush()


class TruncatedFrameError(EOFError):
    """The stream ended inside a frame: the writer died half-way."""


def read_frame(stream: IO[bytes]) -> tuple[bool, Any]:
    """``(True, value)`` for the next frame, ``(False, None)`` at a clean end of stream."""
    header = stream.read(_HEADER.size)
    if not header:
        return False, None
    if len(header) < _HEADER.size:
        raise TruncatedFrameError("the stream ended inside a frame header")
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        raise TruncatedFrameError(f"the stream ended after {len(body)} of a frame's {size} bytes")
    return True, pickle.loads(body)  # our own process wrote it (see the module)


def grow_pipe(stream: IO[bytes]) -> None:
    """Ask for a larger pipe buffer where the system allows it; keep the default otherwise."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    # A lower pipe-max-size: the default buffer only means more, shorter waits.
    with contextlib.suppress(OSError):
        fcntl.fcntl(stream.fileno(), set_size, PIPE_BUFFER_BYTES)
