"""engine/io/files.py's readers: a regular file only, read within a bound; JSON and TOML
parsed only when they nest no deeper than Python's parsers can go; CSV rows the csv module
cannot read named by their line."""

from __future__ import annotations

import csv
import io
import json
import os
import tracemalloc

import numpy as np
import pytest

from engine.errors import InputFileError
from engine.io.files import (
    MAX_NESTING,
    MAX_TOML_DOTS,
    csv_field_limit,
    csv_rows,
    open_regular,
    parse_json,
    parse_toml,
    read_bytes,
    read_text,
)
from tests.conftest import SPECIAL


@pytest.mark.parametrize("kind", SPECIAL)
def test_only_a_regular_file_is_opened(tmp_path, specials, kind):
    path = specials.make(tmp_path / "x.json", kind)
    with pytest.raises(InputFileError) as info:
        open_regular(path, "mapping file")
    text = str(info.value)
    assert text.startswith(f"cannot read mapping file {path}: it is ")


def test_a_fifo_someone_writes_to_is_refused_too(tmp_path, specials):
    path = specials.make(tmp_path / "x.json", "fifo")
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # so the writer's open succeeds
    writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(writer, b'{"format": "meshscope-mapping"}')
        with pytest.raises(InputFileError, match="FIFO"):
            read_text(path)
    finally:
        os.close(writer)
        os.close(reader)


def test_a_file_over_the_bound_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(64 * 2**20)  # 64 MiB of a sparse file: nothing written, nothing to read
    tracemalloc.start()
    try:
        with pytest.raises(InputFileError, match=r"it holds 64\.0 MiB, more than the 1\.0 MiB"):
            read_bytes(path, "input file", 2**20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_a_file_is_read_whole_within_its_bound(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"a" * 1000)
    assert read_bytes(path, "input file", 1000) == b"a" * 1000
    with pytest.raises(InputFileError, match="more than the 999 bytes"):
        read_bytes(path, "input file", 999)


def test_a_kernel_file_that_says_it_is_empty_is_refused_not_read():
    for path in ("/proc/self/status", "/proc/self/environ", "/sys/kernel/mm/transparent_hugepage"):
        if os.path.exists(path):
            with pytest.raises(InputFileError, match="kernel|folder"):
                read_bytes(path)


def deep(n: int) -> str:
    return "[" * n + "]" * n


def test_json_as_deep_as_allowed_is_read_and_deeper_is_refused():
    assert parse_json(deep(MAX_NESTING), "x") == json.loads(deep(MAX_NESTING))
    with pytest.raises(InputFileError, match=f"more than {MAX_NESTING} levels deep"):
        parse_json(deep(MAX_NESTING + 1), "x")
    with pytest.raises(InputFileError, match="x: line 7: its values nest"):
        parse_json(deep(100_000), "x", line=7)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"name": "[" * 5000}),  # brackets in a string are not nesting
        json.dumps(['a\\"[' * 3000]),  # … nor after escaped quotes and backslashes
        json.dumps({"k": '\\"' + "{" * 3000, "m": "\\\\"}),
    ],
)
def test_brackets_inside_strings_are_not_nesting(text):
    assert parse_json(text, "x") == json.loads(text)


def test_a_number_of_more_digits_than_python_converts_is_one_error():
    with pytest.raises(InputFileError, match="x: .*digits"):
        parse_json("[" + "9" * 5000 + "]", "x")


def test_toml_lines_of_many_dots_are_refused_before_parsing_and_floats_are_fine():
    floats = "x = [" + ", ".join(["1.5"] * 300) + "]\n"
    assert len(parse_toml(floats, "t")["x"]) == 300
    with pytest.raises(InputFileError, match=f"line 2 holds {MAX_TOML_DOTS + 1:,} dots"):
        parse_toml("a = 1\n" + "k" + ".k" * (MAX_TOML_DOTS + 1) + " = 1\n", "t")
    with pytest.raises(InputFileError, match="nest more than"):
        parse_toml("k" + ".k" * (MAX_NESTING + 1) + " = 1\n", "t")


def test_a_csv_row_the_csv_module_cannot_read_names_its_line():
    text = "a,b\n1,2\n3," + "x" * (csv.field_size_limit() + 1) + "\n"
    with pytest.raises(InputFileError, match=r"t\.csv:3: a field of more than 131,072 characters"):
        list(csv_rows(csv.reader(io.StringIO(text)), "t.csv"))


def test_a_raised_field_limit_reads_long_fields_and_is_put_back():
    before = csv.field_size_limit()
    text = "a,b\n1," + "7 " * before + "\n"
    with csv_field_limit(len(text)):
        rows = list(csv_rows(csv.reader(io.StringIO(text)), "h.csv"))
    assert rows[1][1] == "7 " * before
    assert csv.field_size_limit() == before


# ------------------------------------------------------------------ archives whose end record lies
def lying_archive(path, members: int, claimed: int, comment: bytes = b"") -> None:
    """A zip archive of ``members`` empty members whose end record says ``claimed``."""
    import struct
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for k in range(members):
            z.writestr(f"a{k}.npy", b"")
        z.comment = comment
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, at + 8, claimed, claimed)  # members on this disk, in all
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("comment", [b"", b"an archive's comment"])
def test_an_archive_whose_end_record_claims_few_members_is_counted_by_its_directory(
    tmp_path, comment
):
    """The 256-member cap read the end record's claim: 6 claimed, 300,000 held, all read."""
    import zipfile

    from engine.io.network_file import load_network

    path = tmp_path / "net.npz"
    lying_archive(path, 300, 6, comment)
    assert len(zipfile.ZipFile(path).namelist()) == 300  # what zipfile would go through
    with pytest.raises(InputFileError) as info:
        load_network(path)
    assert "lists more than 256 members (its end record says 6)" in str(info.value)


def test_an_archive_of_as_many_members_as_allowed_is_read_past_the_count(tmp_path):
    from engine.io.files import read_npz

    path = tmp_path / "many.npz"
    np.savez(path, **{f"a{k}": np.arange(2) for k in range(256)})
    assert len(read_npz(path, "archive")) == 256
