"""Input files read within bounds (what MeshScope writes: ``engine.io.outputs``).

Every reader opens its file through ``open_regular``: a regular file only (a FIFO, a device, a
folder or a file of the kernel's /proc or /sys is refused at once, never waited on), no larger
than the caller's bound, read within that bound. ``ReadLimits`` carry the caller's bounds — of
the bytes read and of the network a file describes — so that a file's declared sizes (an
archive's inflated arrays, a header's counts) are checked before anything that large is
allocated; the command line takes the generous defaults, a server its clients' limits.
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
import threading
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import BinaryIO

from engine.errors import CapacityError, InputFileError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NEURONS",
    "MAX_SYNAPSES",
    "ReadLimits",
    "check_fields",
    "check_readable",
    "csv_field_limit",
    "csv_header",
    "csv_rows",
    "cut",
    "nesting_of",
    "os_reason",
    "open_regular",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_json",
    "read_npz",
    "read_text",
    "kernel_devices",
    "reason",
    "shown",
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


def check_readable(path, what: str = "input file") -> Path:
    """``path`` as a Path, after checking it is a regular file this process can read (asked
    of its status: nothing is opened, so a FIFO is refused without waiting on it)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputFileError(f"cannot read {what} {path}: it does not exist") from None
    except OSError as e:  # a loop of links, a name too long
        raise InputFileError(f"cannot read {what} {cut(str(path))}: {os_reason(e, path)}") from None
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
    if st.st_dev in kernel_devices():
        return "it is a file of the kernel (/proc, /sys), not a data file"
    return None


@cache
def kernel_devices() -> frozenset[int]:
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
        raise InputFileError(f"cannot read {what} {cut(str(path))}: {os_reason(e, path)}") from None
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


def os_reason(error: OSError, path) -> str:
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
