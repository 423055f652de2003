"""Output files that are either whole or absent, or logs that grow whole lines at a time.

Every file MeshScope writes — mappings, converted networks, the start of a checkpoint — goes
through ``atomic_open``: the bytes go to a temporary file beside the target, which
replaces the target only once it is complete. A run killed mid-write leaves the old file
(or none), never a truncated one. What a long run records as it goes (a search's
``--history``, the rest of its checkpoint) is appended through ``appender``: a line at a
time, flushed, so a killed run leaves every line it finished. ``check_writable`` tells
before any work starts whether a path can be written at all, so a long run does not fail
at its very end.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from engine.errors import InputFileError, OutputFileError

__all__ = [
    "appender",
    "atomic_open",
    "check_readable",
    "check_writable",
    "read_json",
    "read_text",
    "reason",
    "write_text",
]

_UMASK = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
os.umask(_UMASK)


def check_readable(path, what: str = "input file") -> Path:
    """``path`` as a Path, after checking it is a file this process can read."""
    path = Path(path)
    if path.is_dir():
        raise InputFileError(f"cannot read {what} {path}: it is a folder")
    if not path.exists():
        raise InputFileError(f"cannot read {what} {path}: it does not exist")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"cannot read {what} {path}: permission denied")
    return path


def reason(error: BaseException) -> str:
    """A library's exception as a short reason: its first sentence, at most 160 characters."""
    text = getattr(error, "strerror", None) or " ".join(str(error).split()) or type(error).__name__
    first = text.split(". ")[0]
    return first if len(first) <= 160 else first[:157] + "…"


def read_text(path, what: str = "input file") -> str:
    """The text of a UTF-8 file, or ``InputFileError`` saying why it cannot be read."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"cannot read {what} {path}: it does not exist") from None
    except IsADirectoryError:
        raise InputFileError(f"cannot read {what} {path}: it is a folder") from None
    except OSError as e:
        raise InputFileError(f"cannot read {what} {path}: {reason(e)}") from None
    except UnicodeDecodeError:
        raise InputFileError(f"{what} {path} is not a text file (not UTF-8)") from None


def read_json(path, what: str = "input file"):
    """A JSON file's content, or ``InputFileError`` naming the line that is wrong."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputFileError(f"{path} is not valid JSON (line {e.lineno}: {e.msg})") from None


def check_writable(path, what: str = "output file") -> Path:
    """``path`` as a Path, after checking it can be created or replaced.

    Raises ``OutputFileError`` naming the path and the reason: its folder is missing or
    not writable, or the path is a folder.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputFileError(f"{what} {path} is a folder; give a file name")
    if folder.exists() and not folder.is_dir():
        raise OutputFileError(f"{what} {path}: {folder} is a file, not a folder")
    if not folder.is_dir():
        raise OutputFileError(f"{what} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputFileError(f"{what} {path}: folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputFileError(f"{what} {path} exists and is not writable")
    return path


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, what: str = "output file") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` atomically.

    If the body raises (or the process dies), ``path`` is untouched and the temporary
    file is removed (a killed process may leave a ``.*.tmp`` file, never a partial target;
    the next write of ``path`` removes what writers no longer alive left).
    """
    path = check_writable(path, what)
    _remove_stale_temps(path)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent or "."
        )
    except OSError as e:
        raise OutputFileError(f"cannot write {what} {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if path.exists():  # keep the target's permissions, not mkstemp's 0600
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputFileError(f"cannot write {what} {path}: {e.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _remove_stale_temps(path: Path) -> None:
    """Remove the temporary files of ``path`` whose writer (the pid in their name) is gone."""
    prefix = f".{path.name}."
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


def appender(path, *, what: str = "output file", fresh: bool = False) -> IO:
    """``path`` opened to append text (emptied first when ``fresh``); errors name the file.

    Write whole lines and flush them when they must survive a kill: a process killed in
    the middle of a write can leave only its last line unfinished.
    """
    path = check_writable(path, what)
    try:
        return open(path, "w" if fresh else "a", encoding="utf-8")  # noqa: SIM115 - returned
    except OSError as e:
        raise OutputFileError(f"cannot write {what} {path}: {reason(e)}") from None
