"""Input files read within bounds; output files that are either whole or absent, or logs that
grow whole lines at a time.

Every reader opens its file through ``open_regular``: a regular file only (a FIFO, a device, a
folder or a file of the kernel's /proc or /sys is refused at once, never waited on), no larger
than the caller's bound, read within that bound. ``ReadLimits`` carry the caller's bounds — of
the bytes read and of the network a file describes — so that a file's declared sizes (an
archive's inflated arrays, a header's counts) are checked before anything that large is
allocated; the command line takes the generous defaults, a server its clients' limits.

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
import csv
import errno
import json
import math
import os
import stat
import struct
import sys
import tempfile
import threading
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, BinaryIO

from engine.errors import CapacityError, InputFileError, OutputFileError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NEURONS",
    "MAX_SYNAPSES",
    "ReadLimits",
    "LineFile",
    "STREAMS",
    "appender",
    "atomic_open",
    "check_fields",
    "check_readable",
    "check_writable",
    "csv_field_limit",
    "csv_header",
    "csv_rows",
    "cut",
    "is_stream",
    "nesting_of",
    "open_regular",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_json",
    "read_npz",
    "read_text",
    "reason",
    "shown",
    "standard_output",
    "write_text",
]

MAX_FILE_BYTES = 2 * 2**30  # a file read whole, or an archive's arrays inflated (2 GiB)
MAX_NEURONS = 50_000_000  # of a network read or generated (~1.5 GB of per-neuron arrays)
MAX_SYNAPSES = 200_000_000  # … and its synapses (the largest a generator makes: rand's n*card)
MAX_ARCHIVE_MEMBERS = 256  # arrays of a .npz archive (a network file has 6, a trace ~20)
MAX_NESTING = 100  # levels of a JSON or TOML document (Python's parsers recurse once a level)
MAX_TOML_DOTS = 1_000  # dots on one line of TOML (the parts of a key; see parse_toml)


@dataclass(frozen=True)
class ReadLimits:
    """The most one read may take in: ``bytes`` of the file (and of an archive's arrays once
    inflated), and the ``neurons`` and ``synapses`` of the network it describes. The
    defaults are the command line's: generous, yet refusing what no memory would hold."""

    bytes: int = MAX_FILE_BYTES
    neurons: int = MAX_NEURONS
    synapses: int = MAX_SYNAPSES


_UMASK = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
os.umask(_UMASK)


def check_readable(path, what: str = "input file") -> Path:
    """``path`` as a Path, after checking it is a regular file this process can read (asked
    of its status: nothing is opened, so a FIFO is refused without waiting on it)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputFileError(f"cannot read {what} {path}: it does not exist") from None
    except OSError as e:  # a loop of links, a name too long
        raise InputFileError(
            f"cannot read {what} {cut(str(path))}: {_os_reason(e, path)}"
        ) from None
    except ValueError as e:  # a NUL byte
        raise InputFileError(f"cannot read {what} {path}: {reason(e)}") from None
    wrong = _not_regular(st)
    if wrong:
        raise InputFileError(f"cannot read {what} {path}: {wrong}")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"cannot read {what} {path}: permission denied")
    return path


def _not_regular(st: os.stat_result) -> str | None:
    """Why a file of status ``st`` is not one to read as data, or None."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "it is a folder"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO (a named pipe), not a file; MeshScope reads regular files only"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a file; MeshScope reads regular files only"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a file; MeshScope reads regular files only"
    if not stat.S_ISREG(mode):
        return "it is not a regular file; MeshScope reads regular files only"
    if st.st_dev in _kernel_devices():
        return "it is a file of the kernel (/proc, /sys), not a data file"
    return None


@cache
def _kernel_devices() -> frozenset[int]:
    """The devices of /proc and /sys, whose files the kernel makes up as they are read."""
    out = set()
    for folder in ("/proc", "/sys"):
        with contextlib.suppress(OSError):
            out.add(os.stat(folder).st_dev)
    return frozenset(out)


def _size(n: int) -> str:
    """A byte count as people read it (``2.0 GiB``, ``512 KiB``, ``15 bytes``)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} bytes"


def open_regular(path, what: str = "input file", max_bytes: int = MAX_FILE_BYTES) -> BinaryIO:
    """``path`` opened to read bytes, after checking — on the opened file, so nothing can
    swap it in between — that it is a regular file of at most ``max_bytes``.

    It is opened without waiting (``O_NONBLOCK``): a FIFO nobody writes to is refused at
    once, like a device, a folder or a file of /proc or /sys. ``InputFileError`` says why.
    Read it within the bound (``read_bytes``): a file may grow after it was checked.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputFileError(f"cannot read {what} {path}: it does not exist") from None
    except IsADirectoryError:
        raise InputFileError(f"cannot read {what} {path}: it is a folder") from None
    except PermissionError:
        raise InputFileError(f"cannot read {what} {path}: permission denied") from None
    except OSError as e:  # a device without its driver, a name too long …
        raise InputFileError(
            f"cannot read {what} {cut(str(path))}: {_os_reason(e, path)}"
        ) from None
    except ValueError as e:  # a NUL byte
        raise InputFileError(f"cannot read {what} {path}: {reason(e)}") from None
    try:
        st = os.fstat(fd)
        wrong = _not_regular(st)
        if wrong is None and st.st_size > max_bytes:
            wrong = f"it holds {_size(st.st_size)}, more than the {_size(max_bytes)} read here"
        if wrong:
            raise InputFileError(f"cannot read {what} {path}: {wrong}")
        os.set_blocking(fd, True)  # a regular file: reads never wait anyway
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, what: str = "input file", max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (``open_regular``)."""
    path = Path(path)
    with open_regular(path, what, max_bytes) as f:
        # as much as it says it holds, then on (doubling) while it grows: a buffer as large
        # as the bound is never asked for
        want, chunks, total = os.fstat(f.fileno()).st_size + 1, [], 0
        while True:
            ask = min(want, max_bytes + 1 - total)
            try:
                chunk = f.read(ask)
            except OSError as e:
                raise InputFileError(f"cannot read {what} {path}: {reason(e)}") from None
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise InputFileError(
                    f"cannot read {what} {path}: it holds more than the {_size(max_bytes)} "
                    "read here"
                )
            if len(chunk) < ask:  # the end of the file
                return b"".join(chunks)
            want = min(max(total, 2**12), 2**24)


def reason(error: BaseException) -> str:
    """A library's exception as a short reason: its first sentence, at most 160 characters."""
    text = getattr(error, "strerror", None) or " ".join(str(error).split()) or type(error).__name__
    first = text.split(". ")[0]
    return first if len(first) <= 160 else first[:157] + "…"


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (a value read from a
    file may be a field of 100,000 characters: the message stays one readable line)."""
    return cut(repr(value), limit)


def check_fields(cls, data, what: str) -> None:
    """That ``data``, read from a file to make a ``cls`` (a dataclass), is a mapping whose
    keys are fields of ``cls`` and holds every field without a default: a ``ValueError``
    naming ``what`` and the key otherwise (not Python's "unexpected keyword argument")."""
    import dataclasses

    if not isinstance(data, dict):
        raise ValueError(f"{what} is {shown(data)}, not an object of named fields")
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    unknown = [k for k in data if k not in names]
    if unknown:
        listed = ", ".join(map(repr, unknown[:3])) + (" …" if len(unknown) > 3 else "")
        raise ValueError(
            f"{what} has unknown field{'s' if len(unknown) > 1 else ''} {cut(listed, 80)} "
            f"(its fields: {', '.join(names)}); was it written by another version of MeshScope?"
        )
    missing = [
        f.name
        for f in fields
        if f.name not in data
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ValueError(f"{what} lacks the field{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))}")  # fmt: skip


def cut(text: str, limit: int = 200) -> str:
    """``text`` cut to about ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[: limit - 16]}… ({len(text):,} chars)"


def read_text(path, what: str = "input file", max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a UTF-8 file of at most ``max_bytes``, or ``InputFileError`` saying why it
    cannot be read."""
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{what} {Path(path)} is not a text file (not UTF-8)") from None


def read_json(path, what: str = "input file", max_bytes: int = MAX_FILE_BYTES, fix: str = ""):
    """A JSON file's content, or ``InputFileError`` naming the line that is wrong (and, when
    it is no JSON, ``fix``: how to make a file of the right kind)."""
    data = read_bytes(path, what, max_bytes)
    try:
        return parse_json(data, str(path), what=what)
    except InputFileError as e:
        raise InputFileError(_with_fix(str(e), fix)) from None


def parse_json(text: str | bytes, where: str, *, line: int | None = None, what: str = "file"):
    """``text`` parsed as JSON, or ``InputFileError`` naming ``where`` and what is wrong
    (``line``: the line of a JSON-lines file that ``text`` is). A document nested deeper than
    ``MAX_NESTING`` levels is refused before Python's parser recurses that deep."""
    import numpy as np

    from engine.io.scan import json_depth

    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    on = f"line {line}: " if line is not None else ""
    if json_depth(np.frombuffer(data, dtype=np.uint8), MAX_NESTING) > MAX_NESTING:
        raise InputFileError(
            f"{where}: {on}its values nest more than {MAX_NESTING} levels deep; MeshScope's "
            "files nest a few"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InputFileError(f"{what} {where} is not a text file (not UTF-8)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        at = line if line is not None else e.lineno
        raise InputFileError(f"{where} is not valid JSON (line {at}: {e.msg})") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise InputFileError(f"{where}: {on}{reason(e)}") from None
    except RecursionError:  # a safety net: _json_depth refused what recurses this deep
        raise InputFileError(f"{where}: {on}its values nest too deep to read") from None


def parse_toml(text: str, where: str) -> dict:
    """``text`` parsed as TOML, or ``InputFileError`` naming ``where`` and what is wrong.

    A key of many dotted parts costs Python's parser memory and time growing with their
    square (10,000 parts: 0.4 GB and 5 s), so a line of more than ``MAX_TOML_DOTS`` dots is
    refused first; arrays nested too deep for its recursion, and tables or arrays nested
    more than ``MAX_NESTING`` levels, are refused too.
    """
    import numpy as np

    b = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    dots = np.flatnonzero(b == 0x2E)
    if dots.size > MAX_TOML_DOTS:
        line = np.cumsum(b == 10)[dots]  # (0-based) line of each dot
        per_line = np.bincount(line)
        worst = int(per_line.argmax())
        if per_line[worst] > MAX_TOML_DOTS:
            raise InputFileError(
                f"{where}: line {worst + 1} holds {int(per_line[worst]):,} dots; a key of so "
                f"many parts is not one MeshScope reads (at most {MAX_TOML_DOTS} dots a line)"
            )
    try:
        data = tomllib.loads(text)
    except ValueError as e:  # TOMLDecodeError, or an integer of more digits than Python reads
        raise InputFileError(f"{where}: not valid TOML ({reason(e)})") from None
    except RecursionError:
        raise InputFileError(f"{where}: its values nest too deep to read") from None
    if nesting_of(data) > MAX_NESTING:
        raise InputFileError(f"{where}: its tables nest more than {MAX_NESTING} levels deep")
    return data


def nesting_of(value, limit: int = MAX_NESTING) -> int:
    """How deep a parsed document's dicts and lists nest, walked level by level without
    recursion (stops once deeper than ``limit``)."""
    depth, level = 0, [value]
    while True:
        level = [c for c in level if isinstance(c, dict | list)]
        if not level or depth > limit:
            return depth
        depth += 1
        level = [v for c in level for v in (c.values() if isinstance(c, dict) else c)]


def csv_rows(rows: Iterable, where: str) -> Iterator:
    """The rows of a ``csv.reader`` or ``csv.DictReader``; a row the csv module cannot read (a
    field of more than ``csv.field_size_limit()`` characters, a NUL byte) is an
    ``InputFileError`` naming ``where`` and its line."""
    it = iter(rows)
    while True:
        try:
            row = next(it)
        except StopIteration:
            return
        except csv.Error as e:
            line = getattr(getattr(rows, "reader", rows), "line_num", "?")  # (a DictReader's lags)
            raise InputFileError(f"{where}:{line}: {_csv_reason(e)}") from None
        yield row


@contextlib.contextmanager
def csv_field_limit(chars: int) -> Iterator[None]:
    """Let the csv module read fields of up to ``chars`` characters meanwhile (its limit is
    one for the whole process: it is raised, never lowered, and put back after; for files
    MeshScope writes whose fields may be long, e.g. a placement of every core)."""
    with _CSV_LIMIT:
        old = csv.field_size_limit()
        csv.field_size_limit(max(old, min(chars, 2**31 - 1)))
        try:
            yield
        finally:
            csv.field_size_limit(old)


_CSV_LIMIT = threading.Lock()


def csv_header(rows: csv.DictReader, where: str) -> list[str] | None:
    """A ``DictReader``'s field names (read from the file's first row), errors as ``csv_rows``."""
    try:
        return rows.fieldnames
    except csv.Error as e:
        raise InputFileError(f"{where}:{rows.reader.line_num}: {_csv_reason(e)}") from None


def _csv_reason(e: csv.Error) -> str:
    text = reason(e)
    if "field larger than field limit" in text:
        return (
            f'a field of more than {csv.field_size_limit():,} characters; is a quote (") left open?'
        )
    return f"not a readable CSV row ({text})"


def read_npz(
    path,
    what: str,
    arrays: dict[str, int] | None = None,
    *,
    required: Iterable[str] = (),
    max_bytes: int = MAX_FILE_BYTES,
    why: str = "",
    counts: dict[str, tuple[int, str]] | None = None,
    fix: str = "",
) -> dict:
    """The arrays of a ``.npz`` archive, read without pickles: those ``arrays`` names (that
    it holds), each inflating to at most ``arrays[name]`` bytes, or (``arrays`` None) all of
    them, together inflating to at most ``max_bytes``. ``InputFileError`` says what is wrong
    (``what``: what the file should be, e.g. "MeshScope network file"; ``why``: what the
    bounds stand for, said when one is broken).

    Nothing large is allocated before it is checked: the file's size against ``max_bytes``,
    then the archive's directory (at most ``MAX_ARCHIVE_MEMBERS`` members), then that every
    ``required`` array is there, then each array's header — its type and shape, so its size
    inflated. Only then are the arrays inflated, one by one; a member that inflates to less
    than its header says is a damaged file, and one that would inflate to more is cut where
    its header says it ends. Members not asked for are never read. ``counts``: name → (the
    most values, what one value is, e.g. "neurons"): a header declaring more is a
    ``CapacityError`` in those words, before the byte bounds are read off it. ``fix``: how
    to make a file of the right kind, said when this one is not an archive of its arrays.
    """
    import numpy as np

    path = Path(path)
    label = f"{path} is not a {what} (.npz)"
    with open_regular(path, what, max_bytes) as f:
        try:
            try:
                _check_archive(f, label)
            except InputFileError as e:
                raise InputFileError(_with_fix(str(e), fix)) from None
            with zipfile.ZipFile(f) as z:
                members = {n.removesuffix(".npy"): n for n in z.namelist()}
                missing = sorted(set(required) - set(members))
                if missing:
                    raise InputFileError(_with_fix(f"{path}: missing arrays {missing}", fix))
                wanted = {
                    name: most
                    for name, most in (arrays or dict.fromkeys(members, max_bytes)).items()
                    if name in members
                }
                for name, (most, noun) in (counts or {}).items():
                    if name in members:
                        count = math.prod(_npy_header(z, members[name], label, name)[0])
                        if count > most:
                            raise CapacityError(
                                f"{path}: {count:,} {noun}; at most {most:,} {noun} are read here"
                            )
                sizes = {
                    name: _npy_size(z, members[name], label, name, most, why)
                    for name, most in wanted.items()
                }
                total = sum(sizes.values())
                if arrays is None and total > max_bytes:
                    raise InputFileError(
                        f"{label}: its arrays inflate to {_size(total)}, more than the "
                        f"{_size(max_bytes)} read here{why}"
                    )
                out = {}
                for name in wanted:
                    with z.open(members[name]) as m:
                        out[name] = np.lib.format.read_array(m, allow_pickle=False)
                return out
        except (InputFileError, CapacityError):
            raise
        except Exception as e:  # noqa: BLE001 - whatever numpy and zipfile raise, the file is bad
            raise InputFileError(f"{label}: {reason(e)}") from None


def _with_fix(message: str, fix: str) -> str:
    return f"{message}; {fix}" if fix else message


def _check_archive(f: BinaryIO, label: str) -> None:
    """That a file is a whole zip archive of at most ``MAX_ARCHIVE_MEMBERS`` members (told by
    its first and last bytes, before its directory is read)."""
    head = f.read(6)
    size = f.seek(0, os.SEEK_END)
    if size == 0:
        raise InputFileError(f"{label}: the file is empty")
    if head.startswith(b"\x93NUMPY"):
        raise InputFileError(f"{label}: it holds one .npy array, not the .npz archive of arrays")
    if not head.startswith(b"PK"):
        raise InputFileError(f"{label}: it is not a .npz (zip) archive")
    entries = _zip_entries(f, size)
    if entries is None:
        raise InputFileError(
            f"{label}: the archive is cut short or damaged ({size:,} bytes, no zip directory)"
        )
    claimed, held = entries
    if max(claimed, held) > MAX_ARCHIVE_MEMBERS:
        count = f"{claimed:,}" if claimed >= held else f"more than {MAX_ARCHIVE_MEMBERS}"
        lie = f" (its end record says {claimed:,})" if claimed < held else ""
        raise InputFileError(
            f"{label}: its directory lists {count} members{lie}; MeshScope's archives hold a "
            f"few arrays (at most {MAX_ARCHIVE_MEMBERS} are read)"
        )
    f.seek(0)


def _zip_entries(f: BinaryIO, size: int) -> tuple[int, int] | None:
    """How many members a zip archive's directory lists: (what its end record says, the
    entries its directory holds, counted as Python's zipfile will read them up to one past
    ``MAX_ARCHIVE_MEMBERS``: an end record claiming 6 members cannot hide 300,000). None: it
    has no end record, so it is cut short or no zip archive at all."""
    tail = min(size, 22 + 0xFFFF)  # the end record, and a comment of at most 64 KiB
    f.seek(size - tail)
    data = f.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or len(data) - at < 22:
        return None
    entries, directory_bytes, _ = struct.unpack_from("<HII", data, at + 10)
    end = size - tail + at  # where the directory ends (zipfile's reckoning)
    if entries == 0xFFFF or directory_bytes == 0xFFFFFFFF:
        # a zip64 archive: its locator, just before the end record, gives its zip64 end record
        if at < 20 or data[at - 20 : at - 16] != b"PK\x06\x07":
            return None
        (offset,) = struct.unpack_from("<Q", data, at - 12)
        if offset + 56 > size:
            return None
        f.seek(offset)
        record = f.read(56)
        if record[:4] != b"PK\x06\x06":
            return None
        entries, directory_bytes = struct.unpack_from("<QQ", record, 32)
        end -= 56 + 20
    return entries, _directory_entries(f, end - directory_bytes, directory_bytes)


def _directory_entries(f: BinaryIO, start: int, length: int) -> int:
    """The entries of a zip directory of ``length`` bytes from ``start``, counted as zipfile
    reads them (each a fixed header and its name, extra field and comment), up to one past
    ``MAX_ARCHIVE_MEMBERS``."""
    count, at = 0, start
    if start < 0:
        return 0
    while at < start + length and count <= MAX_ARCHIVE_MEMBERS:
        f.seek(at)
        head = f.read(46)
        if len(head) < 46 or head[:4] != b"PK\x01\x02":
            break  # a damaged directory: zipfile says so
        name, extra, comment = struct.unpack_from("<HHH", head, 28)
        at += 46 + name + extra + comment
        count += 1
    return count


def _npy_header(z: zipfile.ZipFile, member: str, label: str, name: str):
    """(shape, dtype) of one array of an archive, from its header alone."""
    import numpy as np

    with z.open(member) as m:
        version = np.lib.format.read_magic(m)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(m)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(m)
        else:
            raise InputFileError(f"{label}: array {name!r} is of .npy version {version}")
    return shape, dtype


def _npy_size(z: zipfile.ZipFile, member: str, label: str, name: str, most: int, why: str):
    """The bytes one array of an archive inflates to, read from its header alone, after
    checking it needs no pickle and inflates to at most ``most``."""
    shape, dtype = _npy_header(z, member, label, name)
    if dtype.hasobject:
        raise InputFileError(
            f"{label}: array {name!r} holds Python objects, which MeshScope does not unpickle"
        )
    count = math.prod(shape)
    size = count * dtype.itemsize
    if size > most:
        values = "one value" if count == 1 else f"{count:,} values"
        raise InputFileError(
            f"{label}: array {name!r} inflates to {_size(size)} ({values} of {dtype}), more "
            f"than the {_size(most)} read here{why}"
        )
    return size


STREAMS = ("-", "/dev/stdout")  # outputs written to standard output, as a stream, by name


def is_stream(path) -> bool:
    """Whether an output path names standard output (``-`` or ``/dev/stdout``, as typed):
    written to as a stream, never created or replaced."""
    return str(path) in STREAMS


def standard_output():
    """The text stream an output named ``-`` goes to: the process's standard output (the
    command line's, not its report's: see ``engine.cli.common.Printable``)."""
    return getattr(sys.stdout, "unfiltered", sys.stdout)


def _os_reason(error: OSError, path) -> str:
    """Why the system refused a path, in words (a name too long says how long it may be)."""
    if error.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(p)) for p in Path(path).parts), default=0)
        return (
            f"the name is too long ({len(os.fsencode(str(path))):,} bytes, its longest part "
            f"{longest:,}; a file's name may have at most {_name_max(path)} bytes); give a "
            "shorter one"
        )
    return reason(error)


def _name_max(path) -> int:
    """The longest file name (in bytes) the file system of ``path``'s folder takes."""
    folder = Path(path).parent
    while True:
        try:
            return os.pathconf(folder, "PC_NAME_MAX")
        except (OSError, ValueError):
            if folder == folder.parent:
                return 255
            folder = folder.parent


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
        else "a file of the kernel (/proc, /sys)" if st.st_dev in _kernel_devices()
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
        raise OutputFileError(f"{what} {cut(str(path))}: {_os_reason(e, path)}") from None
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
        raise OutputFileError(f"{what} {path}: {_os_reason(e, path)}") from None
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
            if os.stat(os.path.dirname(hop) or ".").st_dev in _kernel_devices():
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
        raise OutputFileError(f"{what} {cut(str(path))}: {_os_reason(e, path)}") from None
    if not os.access(folder, os.W_OK | os.X_OK) or folder.stat().st_dev in _kernel_devices():
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
        raise OutputFileError(f"cannot write {what} {given}: {_os_reason(e, given)}") from None
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
        raise OutputFileError(f"cannot write {what} {given}: {_os_reason(e, given)}") from None
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
                f"cannot write {self.what} {self.path}: {_os_reason(e, self.path)}"
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
        raise OutputFileError(f"cannot write {what} {path}: {_os_reason(e, path)}") from None
    try:
        wrong = _not_writable_kind(os.fstat(fd))
        if wrong:
            raise OutputFileError(f"{what} {path}: {wrong}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return LineFile(fd, path, what)
