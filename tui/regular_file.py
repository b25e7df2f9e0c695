"""Opening a file the user named only when it is a regular file.

A log, a rule file or a settings file that is a FIFO, a device or a socket
hangs a plain ``open``/``read``: opening a FIFO for reading waits for a
writer, ``/dev/zero`` and ``/dev/urandom`` never end, a tape device may
rewind. Such a path is looked at (``stat``, which follows a symlink) before
it is opened, refused unless it is a regular file, and opened without
blocking, so that one swapped in between the two is refused too.

The refusals are ``OSError``s whose ``strerror`` says what the path is, so
every caller that already reports ``{path}: {error.strerror}`` says it in
one line with no change.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

# What each kind of file that is not read is called (a remote path's refusal says the same).
FIFO = "a FIFO (named pipe)"
CHARACTER_DEVICE = "a character device"
BLOCK_DEVICE = "a block device"
SOCKET = "a socket"
_KINDS = (
    (stat.S_ISFIFO, FIFO),
    (stat.S_ISCHR, CHARACTER_DEVICE),
    (stat.S_ISBLK, BLOCK_DEVICE),
    (stat.S_ISSOCK, SOCKET),
)


class NotARegularFile(OSError):
    """The path is a FIFO, a device or a socket: never opened, never read."""


def refusal(mode: int) -> OSError | None:
    """Why a file of ``mode`` is not read (None for a regular file): a directory is
    ``IsADirectoryError`` as ``open`` would say, anything else ``NotARegularFile``."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, "is a directory, not a file")
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return NotARegularFile(errno.EINVAL, f"is {kind}, not a regular file")


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is (or links to) a regular file; False where it cannot be looked at."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file (see the module's
    docstring); raises ``OSError`` otherwise, as ``open`` does for a missing file."""
    problem = refusal(os.stat(path).st_mode)
    if problem is not None:
        raise problem
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        problem = refusal(os.fstat(descriptor).st_mode)  # replaced since the stat above
        if problem is not None:
            raise problem
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The whole of ``path``, if it is a regular file (``open_regular``)."""
    with open_regular(path) as handle:
        return handle.read()


class NotUtf8(ValueError):
    """A settings or rule file (TOML: UTF-8 by definition) holding bytes UTF-8 cannot be."""


def read_utf8(path: str | os.PathLike[str]) -> str:
    """The text of ``path``, a regular file in UTF-8 (a rule or settings file): ``OSError`` as
    ``read_regular`` raises it, ``NotUtf8`` saying where the first bad byte is."""
    data = read_regular(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise NotUtf8(f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start} "
                      f"(line {line}); save it as UTF-8") from None
