"""hMETIS files: export, import, partition files, and the CLI commands that use them."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from engine.cli import main
from engine.errors import CapacityError, InputFileError
from engine.hardware import load_hardware
from engine.io.files import ReadLimits
from engine.io.hgr import read_hgr, read_partition_file, write_hgr
from engine.mapping.partition import make_partition
from engine.specs import load_network_spec


def rows(network):
    return [
        sorted(set(network.indices[a:b].tolist()) - {s})
        for s, (a, b) in enumerate(zip(network.indptr[:-1], network.indptr[1:], strict=True))
    ]


@pytest.mark.parametrize("spec", ["rand:n=1500,card=20", "conv-snn", "qubo:n=300"])
def test_round_trip_keeps_every_h_edge_and_rate(spec, tmp_path):
    net = load_network_spec(spec)
    path = tmp_path / "net.hgr"
    write_hgr(net, path)
    back = read_hgr(path)
    assert back.n_neurons == net.n_neurons
    assert rows(back) == rows(net)
    np.testing.assert_allclose(back.rate, np.maximum(net.rate, 1e-6), atol=5e-7)
    header = path.read_text().splitlines()[1].split()
    assert header == [str(net.n_neurons), str(net.n_neurons), "1"]


def test_reads_plain_hmetis_files(tmp_path):
    path = tmp_path / "plain.hgr"
    path.write_text("% a comment\n3 4\n1 2 3\n2 4\n\n4 1\n")  # fmt 0: unweighted
    net = read_hgr(path)
    assert rows(net) == [[1, 2], [3], [], [0]]
    assert net.rate.tolist() == [1.0, 1.0, 0.0, 1.0]  # vertex 3 sources no h-edge
    path.write_text("2 3 1\n10 1 2\n5 3 1\n")  # fmt 1: weights, scaled by the largest
    assert read_hgr(path).rate.tolist() == [1.0, 0.0, 0.5]


@pytest.mark.parametrize(
    "text,message",
    [
        ("2 3\n1 2\n", "promises 2 h-edges"),
        ("1 3\n1 x\n", "line 2 holds something other"),
        ("1 3\n1 9\n", "outside 1..3"),
        ("1 3 7\n1 2\n", "unknown hMETIS fmt"),
        ("", "first line"),
        ("0 0\n", "0 h-edges and 0 vertices"),  # found by the fuzz test
        ("0 5\n", "a network needs at least one of each"),
    ],
)
def test_malformed_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "bad.hgr"
    path.write_text(text)
    with pytest.raises(InputFileError, match=message):
        read_hgr(path)


def test_partition_files_round_trip(tmp_path):
    net, hw = load_network_spec("conv-snn"), load_hardware("loihi2")
    ref = make_partition(net, hw, "sequential")
    path = tmp_path / "conv.part"
    path.write_text("\n".join(str(b + 7) for b in ref.assignment) + "\n")  # any block ids
    got = make_partition(net, hw, f"file:{path}")
    np.testing.assert_array_equal(got.assignment, ref.assignment)
    with pytest.raises(InputFileError, match="one block id per line"):
        read_partition_file(path, net.n_neurons + 1)


def test_network_specs_accept_hgr_paths_and_the_cli_converts(tmp_path, capsys):
    out = tmp_path / "c.hgr"
    assert main(["convert", "--network", "conv-snn", "--out", str(out)]) == 0
    net = load_network_spec(str(out))
    assert net.n_neurons == load_network_spec("conv-snn").n_neurons
    capsys.readouterr()
    code = main(
        ["map", "--network", str(out), "--hardware", "loihi2", "--partitioner", "sequential",
         "--placer", "packed-row", "--json"]
    )  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["partitions"] >= 1
    assert {"partition", "partition_graph", "place", "evaluate"} == set(d["seconds"])
    assert {"connectivity", "elp", "synaptic_reuse", "connection_locality"} <= set(d["metrics"])
    assert main(["convert", "--network", "conv-snn", "--out", str(tmp_path / "x.txt")]) == 2


# ------------------------------------------------------------------ headers that lie
@pytest.fixture
def warm(tmp_path):
    """The reader's kernels loaded (by reading a small file), so that a test measuring the
    memory of a read does not count them."""
    path = tmp_path / "small.hgr"
    path.write_text("1 2\n1 2\n")
    read_hgr(path)


def peak_while(fn) -> tuple[BaseException | None, int]:
    """What ``fn`` raised, and the most memory it held at once (numpy's arrays included)."""
    tracemalloc.start()
    try:
        fn()
        error = None
    except Exception as e:  # noqa: BLE001 - returned, for the test to judge
        error = e
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return error, peak


@pytest.mark.parametrize(
    ("vertices", "limits", "most"),
    [
        (20_000_000, ReadLimits(neurons=200_000), "200,000"),  # a server's limit (~300 MB before)
        (200_000_000, None, "50,000,000"),  # the command line's (> 6 GB before)
    ],
    ids=["server", "command line"],
)
def test_a_header_declaring_more_vertices_than_the_limits_is_refused_before_allocating(
    tmp_path, warm, vertices, limits, most
):
    path = tmp_path / "lie.hgr"
    path.write_text(f"1 {vertices}\n1 2\n")  # 15 bytes
    error, peak = peak_while(lambda: read_hgr(path, limits=limits))
    assert isinstance(error, CapacityError), error  # too large to read, as any network too large
    assert f"declares {vertices:,} vertices; at most {most} neurons" in str(error)
    assert peak < 2**20, f"{peak / 2**20:.0f} MiB held while refusing"


def test_a_header_promising_more_lines_than_the_file_has_is_refused(tmp_path, warm):
    path = tmp_path / "lie.hgr"
    path.write_text(f"{10**15} 4\n1 2\n")
    error, peak = peak_while(lambda: read_hgr(path))
    assert isinstance(error, InputFileError) and "has 1 line after its header" in str(error)
    assert peak < 2**20
    path.write_text("1 4 10\n1 2\n1\n")  # vertex weights promised for 4 vertices, 1 given
    with pytest.raises(InputFileError, match="and 4 vertex weights but the file has 2 lines"):
        read_hgr(path)


def test_a_number_too_large_for_64_bits_is_refused_not_wrapped(tmp_path):
    path = tmp_path / "big.hgr"
    path.write_text("1 2\n1 99999999999999999999999\n")
    with pytest.raises(InputFileError, match="line 2 holds a number of more than 18 digits"):
        read_hgr(path)


def test_a_partition_file_larger_than_its_neurons_could_need_is_not_read(tmp_path, warm):
    path = tmp_path / "p.part"
    with open(path, "wb") as f:
        f.truncate(64 * 2**20)  # sparse: 64 MiB of NUL bytes, for 16 neurons
    error, peak = peak_while(lambda: read_partition_file(path, 16))
    assert isinstance(error, InputFileError) and "of 16 neurons" in str(error)
    assert "more than the 1.0 MiB read here" in str(error)
    assert peak < 2**20
