"""Output files that are either whole or absent, or logs that grow whole lines at a time.

Every file MeshScope writes — mappings, converted networks, the start of a checkpoint — goes
through ``atomic_open``: the bytes go to a temporary file beside the target, which
replaces the target only once it is complete. A run killed mid-write leaves the old file
(or none), never a truncated one. What a long run records as it goes (a search's
``--history``, the rest of its checkpoint) is appended through ``appender``: a line at a
time, unbuffered, whole or not at all, so a killed run leaves every line it finished and a
full disk leaves no half line. ``check_writable`` tells before any work starts whether a
path can be written at all, so a long run does not fail at its very end.

An output replaces or grows a regular file only (a symbolic link to one is written
through): an existing FIFO, device, socket, folder or file of /proc or /sys is refused, never
replaced nor opened. ``-`` and ``/dev/stdout`` are written to standard output, as a stream.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from engine.errors import OutputFileError
from engine.io.files import cut, kernel_devices, os_reason, reason

__all__ = [
    "LineFile",
    "STREAMS",
    "appender",
    "atomic_open",
    "check_writable",
    "is_stream",
    "standard_output",
    "write_text",
]

_UMASK = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
os.umask(_UMASK)


STREAMS = ("-", "/dev/stdout")  # outputs written to standard output, as a stream, by name


def is_stream(path) -> bool:
    """Whether an output path names standard output (``-`` or ``/dev/stdout``, as typed):
    written to as a stream, never created or replaced."""
    return str(path) in STREAMS


def standard_output():
    """The text stream an output named ``-`` goes to: the process's standard output (the
    command line's, not its report's: see ``engine.cli.common.Printable``)."""
    return getattr(sys.stdout, "unfiltered", sys.stdout)


def _not_writable_kind(st: os.stat_result) -> str | None:
    """Why an existing file of status ``st`` is no output MeshScope may replace, or None."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "it is a folder; give a file name"
    kind = (
        "a FIFO (a named pipe)" if stat.S_ISFIFO(mode)
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "not a regular file" if not stat.S_ISREG(mode)
        else "a file of the kernel (/proc, /sys)" if st.st_dev in kernel_devices()
        else None
    )  # fmt: skip
    if kind is None:
        return None
    return (
        f"it is {kind}, which an output never replaces or writes into; give the name of a "
        "regular file (or - for standard output)"
    )


def _output_target(path: Path, what: str) -> Path:
    """The file an output path writes: the path itself, or the regular file its symbolic
    link points to (written through, the link kept). ``OutputFileError`` when the path is
    too long, or names something other than a regular file (a FIFO, a device, a socket, a
    folder, a file of /proc or /sys, a link to one or to nothing)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # (a folder missing: said below)
        return path
    except (OSError, ValueError) as e:  # a name too long, a NUL byte, a loop of links …
        raise OutputFileError(f"{what} {cut(str(path))}: {os_reason(e, path)}") from None
    if not stat.S_ISLNK(st.st_mode):
        wrong = _not_writable_kind(st)
        if wrong:
            raise OutputFileError(f"{what} {path}: {wrong}")
        return path
    try:
        to = os.readlink(path)
    except OSError:
        to = "?"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise OutputFileError(
            f"{what} {path} is a symbolic link to {cut(to)}, which does not exist; give the "
            "file's own name"
        ) from None
    except (OSError, ValueError) as e:
        raise OutputFileError(f"{what} {path}: {os_reason(e, path)}") from None
    wrong = _not_writable_kind(st) or _through_kernel(path)
    if wrong:
        raise OutputFileError(f"{what} {path} is a symbolic link to {cut(to)}: {wrong}")
    return Path(os.path.realpath(path))


def _through_kernel(path: Path) -> str | None:
    """Why a symbolic link may not be written through — one of its links leads into /proc
    or /sys (``/proc/self/fd/1`` is whatever the process's standard output is) — or None."""
    hop = str(path)
    for _ in range(40):  # as many links as the system follows
        if not os.path.islink(hop):
            return None
        hop = os.path.join(os.path.dirname(hop), os.readlink(hop))
        try:
            if os.stat(os.path.dirname(hop) or ".").st_dev in kernel_devices():
                return (
                    "it leads into /proc or /sys, which an output never writes into; give the "
                    "name of a regular file (or - for standard output)"
                )
        except OSError:
            return None
    return None


def check_writable(path, what: str = "output file") -> Path:
    """``path`` as a Path, after checking it can be created or replaced: the file it will
    write (a symbolic link's regular file), or, for ``-`` and ``/dev/stdout``, the stream.

    Raises ``OutputFileError`` naming the path and the reason: its folder is missing or
    not writable, its name is too long, or it exists and is not a regular file (a folder,
    a FIFO, a device, a socket, a file of /proc or /sys — an output never replaces one, nor
    writes into one, which could wait for ever or reach a system's device).
    """
    if is_stream(path):
        return Path(path)
    path = Path(path)
    target = _output_target(path, what)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if folder.exists() and not folder.is_dir():
            raise OutputFileError(f"{what} {path}: {folder} is a file, not a folder")
        if not folder.is_dir():
            raise OutputFileError(f"{what} {path}: folder {folder} does not exist")
    except OSError as e:  # a folder's name too long, a loop of links
        raise OutputFileError(f"{what} {cut(str(path))}: {os_reason(e, path)}") from None
    if not os.access(folder, os.W_OK | os.X_OK) or folder.stat().st_dev in kernel_devices():
        raise OutputFileError(f"{what} {path}: folder {folder} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputFileError(f"{what} {path} exists and is not writable")
    return target


def _temp_prefix(path: Path) -> str:
    """The start of the name of ``path``'s temporary files: a dot, the start of its name
    (kept short, so a name near the longest allowed still has room), the writer's pid."""
    return f".{path.name[:40]}.{os.getpid()}."


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, what: str = "output file") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` atomically.

    If the body raises (or the process dies), ``path`` is untouched and the temporary
    file is removed (a killed process may leave a ``.*.tmp`` file, never a partial target;
    the next write of ``path`` removes what writers no longer alive left). A symbolic link
    to a regular file is written through (its file replaced, the link kept); ``-`` and
    ``/dev/stdout`` are written to standard output as a stream; anything else that is
    not a regular file is refused (``check_writable``).
    """
    if is_stream(path):
        yield from _streamed(path, mode, what)
        return
    given = path
    path = check_writable(path, what)
    _remove_stale_temps(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise OutputFileError(f"cannot write {what} {given}: {os_reason(e, given)}") from None
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None and _not_writable_kind(st):  # made a FIFO, a device … meanwhile
            raise OutputFileError(f"{what} {given}: {_not_writable_kind(st)}")
        if st is not None:  # keep the target's permissions, not mkstemp's 0600
            os.chmod(tmp, st.st_mode & 0o777)
        else:
            os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputFileError(f"cannot write {what} {given}: {os_reason(e, given)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _streamed(path, mode: str, what: str) -> Iterator[IO]:
    """Standard output, for an ``atomic_open`` of ``-`` or ``/dev/stdout``: written as it
    goes (a stream cannot be replaced whole), flushed at the end, never closed."""
    out = standard_output()
    try:
        out.flush()
        stream = out.buffer if "b" in mode else out
        yield stream
        stream.flush()
    except BrokenPipeError:  # the reader left (``… --save - | head``): the caller stops quietly
        raise
    except OSError as e:
        raise OutputFileError(f"cannot write {what} to standard output: {reason(e)}") from None


def _remove_stale_temps(path: Path) -> None:
    """Remove the temporary files of ``path`` whose writer (the pid in their name) is gone."""
    prefix = f".{path.name[:40]}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent or "."):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid = name[len(prefix) :].split(".", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def write_text(path, text: str, *, what: str = "output file") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w", what=what) as f:
        f.write(text)


class LineFile:
    """An output that grows by whole lines (``appender``): each ``write`` goes to the file at
    once, unbuffered, whole or not at all — a write the disk cannot take (full, over a
    quota) is cut back off, so the file keeps only whole lines, and the error names the
    file. ``flush`` has nothing to do; ``close`` never writes."""

    def __init__(self, fd: int, path, what: str):
        self.fd, self.path, self.what = fd, path, what

    def write(self, text: str) -> int:
        data = memoryview(text.encode("utf-8"))
        if self.fd < 0:
            raise OutputFileError(f"cannot write {self.what} {self.path}: it is closed")
        start = None
        try:
            start = os.lseek(self.fd, 0, os.SEEK_END)
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError as e:
            if start is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self.fd, start)  # nothing of the line that did not fit
            raise OutputFileError(
                f"cannot write {self.what} {self.path}: {os_reason(e, self.path)}"
            ) from None
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered."""

    def fileno(self) -> int:
        return self.fd

    @property
    def closed(self) -> bool:
        return self.fd < 0

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            with contextlib.suppress(OSError):  # nothing buffered: nothing to lose
                os.close(fd)


def appender(path, *, what: str = "output file", fresh: bool = False) -> LineFile:
    """``path`` opened to append text (emptied first when ``fresh``), a ``LineFile``: each
    write whole or not at all; errors name the file.

    Only a regular file (or a link to one) is opened, and without waiting: a FIFO is
    refused, not blocked on. Write whole lines: a process killed in the middle of a write
    can leave only its last line unfinished.
    """
    if is_stream(path):
        raise OutputFileError(
            f"{what} {path}: it grows as the run goes and is read back to resume one; give a "
            "file name, not standard output"
        )
    target = check_writable(path, what)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags | (os.O_TRUNC if fresh else 0), 0o666)
    except OSError as e:  # ENXIO: a FIFO made meanwhile, with no reader
        raise OutputFileError(f"cannot write {what} {path}: {os_reason(e, path)}") from None
    try:
        wrong = _not_writable_kind(os.fstat(fd))
        if wrong:
            raise OutputFileError(f"{what} {path}: {wrong}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return LineFile(fd, path, what)
