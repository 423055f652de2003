"""Every reader, fed what hypothesis makes of a valid file: a valid object or the project's
own error, never anything else.

Each reader starts from a real file (a preset TOML, a mapping file, a network ``.npz``, an
hMETIS ``.hgr``) and hypothesis damages it: one value replaced by any other JSON/TOML value
(huge integers, NaN, text, lists, booleans, nothing), bytes flipped, the file cut short,
lines rewritten. Whatever comes out, the reader returns its object or raises a
``MeshScopeError`` — the one-line message the command line prints with exit 2.

Then every reader meets what a hostile user brings: special files (a FIFO, /dev/zero, a
folder, a file of /proc), documents nested deeper than Python's parsers recurse, CSV fields
longer than the csv module reads, and headers whose sizes lie (archives that inflate beyond
the limits, hMETIS and NIR headers declaring more than the limits allow).
"""

from __future__ import annotations

import copy
import io
import json
import tomllib
import tracemalloc
import zipfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import MeshScopeError
from engine.fidelity.measurements import read_measurements
from engine.hardware import PRESET_DIR, Hardware, hardware_from_dict, load_hardware
from engine.io.files import MAX_ARCHIVE_MEMBERS, MAX_NESTING, ReadLimits
from engine.io.hgr import read_hgr, read_partition_file, write_hgr
from engine.io.network_file import load_network, save_network
from engine.io.nir_graph import read_nir
from engine.io.rates import read_rate_table
from engine.mapping.assignment import Mapping, mapping_to_dict, read_mapping_file
from engine.model.network import Network
from engine.pipeline import build_mapping
from engine.search.checkpoint import read_checkpoint
from engine.search.pareto import read_history
from engine.simulate.patterns import build_pattern
from engine.simulate.trace import load_trace
from engine.specs import load_network_spec
from tests.conftest import SPECIAL

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
NET = "mlp:widths=64-128-32"

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(min_value=-5, max_value=10**6), max_size=5),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def leaves(tree, at=()):
    """Every path to a value in nested dicts and lists."""
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, list):
        items = enumerate(tree)
    else:
        yield at
        return
    yield at  # the container itself may be replaced too
    for k, v in items:
        yield from leaves(v, (*at, k))


def replaced(tree, path, value):
    tree = copy.deepcopy(tree)
    if not path:
        return value
    node = tree
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return tree


def damaged(data: bytes, draw) -> bytes:
    """``data`` cut short, with bytes overwritten, or with a slice removed."""
    kind = draw(st.sampled_from(["cut", "flip", "drop"]))
    n = len(data)
    at = draw(st.integers(0, max(0, n - 1)))
    if kind == "cut":
        return data[:at]
    if kind == "drop":
        return data[:at] + data[at + draw(st.integers(1, 64)) :]
    noise = draw(st.binary(min_size=1, max_size=16))
    return data[:at] + noise + data[at + len(noise) :]


def either(make, kind):
    """``make()`` gives a ``kind`` or raises the project's own error; nothing else."""
    try:
        out = make()
    except MeshScopeError as e:
        assert str(e) and "\n" not in str(e).strip()
        return None
    assert isinstance(out, kind)
    return out


# ------------------------------------------------------------------ hardware TOML
@cache
def preset() -> dict:
    return tomllib.loads((PRESET_DIR / "loihi2.toml").read_text())


@FUZZ
@given(data=st.data())
def test_a_hardware_table_with_any_value_replaced(data):
    table = preset()
    path = data.draw(st.sampled_from(list(leaves(table))[1:]))
    broken = replaced(table, path, data.draw(values))
    either(lambda: hardware_from_dict(broken, "fuzz.toml"), Hardware)


@FUZZ
@given(data=st.data())
def test_a_hardware_file_with_damaged_bytes(tmp_path_factory, data):
    raw = (PRESET_DIR / "loihi2.toml").read_bytes()
    path = tmp_path_factory.mktemp("toml") / "hw.toml"
    path.write_bytes(damaged(raw, data.draw))
    either(lambda: load_hardware(str(path)), Hardware)


# ------------------------------------------------------------------ mapping JSON
@cache
def mapped():
    return build_mapping(NET, "loihi2", partition="min+1", placement="spread-col")


@cache
def mapping_dict() -> dict:
    m = mapped()
    return json.loads(json.dumps(mapping_to_dict(m.network, m.hardware, m.mapping)))


def read_and_build(path: Path):
    m = mapped()
    return read_mapping_file(path).build(m.network, m.hardware)


@FUZZ
@given(data=st.data())
def test_a_mapping_file_with_any_value_replaced(tmp_path_factory, data):
    table = mapping_dict()
    path = data.draw(st.sampled_from(list(leaves(table))))
    broken = replaced(table, path, data.draw(values))
    file = tmp_path_factory.mktemp("map") / "m.json"
    file.write_text(json.dumps(broken))
    either(lambda: read_and_build(file), Mapping)


@FUZZ
@given(data=st.data())
def test_a_mapping_file_with_damaged_bytes(tmp_path_factory, data):
    raw = json.dumps(mapping_dict()).encode()
    file = tmp_path_factory.mktemp("map") / "m.json"
    file.write_bytes(damaged(raw, data.draw))
    either(lambda: read_and_build(file), Mapping)


# ------------------------------------------------------------------ network .npz
@cache
def network_bytes(tmp: Path) -> bytes:
    path = tmp / "net.npz"
    save_network(load_network_spec(NET), path)
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_a_network_file_with_damaged_bytes(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("npz")
    raw = network_bytes(tmp_path_factory.getbasetemp())
    path = folder / "net.npz"
    path.write_bytes(damaged(raw, data.draw))
    either(lambda: load_network(path), Network)


@FUZZ
@given(data=st.data())
def test_a_network_file_with_any_array_replaced(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("npz")
    src = folder / "src.npz"
    src.write_bytes(network_bytes(tmp_path_factory.getbasetemp()))
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    key = data.draw(st.sampled_from(sorted(arrays)))
    arrays[key] = data.draw(
        st.one_of(
            st.just(np.array([], dtype=np.int64)),
            st.just(np.array([-1, 2**40], dtype=np.int64)),
            st.just(np.array([np.nan, np.inf])),
            st.just(np.array("not json")),
            st.just(np.zeros((2, 2), dtype=np.int8)),
            st.just(np.array(['{"format": "meshscope-network", "version": 99}'])),
        )
    )
    path = folder / "net.npz"
    np.savez(path, **arrays)
    either(lambda: load_network(path), Network)


# ------------------------------------------------------------------ hMETIS .hgr
@cache
def hgr_text(tmp: Path) -> str:
    path = tmp / "net.hgr"
    write_hgr(load_network_spec("mlp:widths=8-6-4"), path)
    return path.read_text()


@FUZZ
@given(data=st.data())
def test_an_hgr_file_with_lines_rewritten(tmp_path_factory, data):
    lines = hgr_text(tmp_path_factory.getbasetemp()).splitlines()
    at = data.draw(st.integers(0, len(lines) - 1))
    line = data.draw(
        st.one_of(
            st.text(alphabet="0123456789 -%x.\t", max_size=20),
            st.just("99999999999999999999999 1"),
            st.just(""),
        )
    )
    lines[at] = line
    path = tmp_path_factory.mktemp("hgr") / "net.hgr"
    path.write_text("\n".join(lines) + "\n")
    either(lambda: read_hgr(path), Network)


@FUZZ
@given(data=st.data())
def test_an_hgr_file_with_damaged_bytes(tmp_path_factory, data):
    raw = hgr_text(tmp_path_factory.getbasetemp()).encode()
    path = tmp_path_factory.mktemp("hgr") / "net.hgr"
    path.write_bytes(damaged(raw, data.draw))
    either(lambda: read_hgr(path), Network)


# ------------------------------------------------------------------ every reader, hostile files
# Each reader: (the suffix its files take, a call that reads one path). A special file, a
# document nested deep, a CSV field too long for the csv module or a header whose sizes lie
# ends in the project's own error, on one line, at once — never another exception, never a
# wait on a FIFO, never an allocation of what a header declares before it is checked.
READERS = {
    "hardware": (".toml", lambda p: load_hardware(str(p))),
    "mapping": (".json", read_mapping_file),
    "network .npz": (".npz", load_network),
    "network .hgr": (".hgr", read_hgr),
    "network .nir": (".nir", read_nir),
    "network spec": (".npz", lambda p: load_network_spec(str(p))),
    "partition": (".part", lambda p: read_partition_file(p, 16)),
    "rate table": (".csv", read_rate_table),
    "measurements": (".csv", read_measurements),
    "checkpoint": (".ckpt", read_checkpoint),
    "pareto history": (".csv", lambda p: read_history(p, ("latency", "energy"))),
    "trace": (".npz", load_trace),
    "traffic matrix": (".csv", lambda p: build_pattern(f"matrix:file={p}", 4, 4, 16)),
}


def refused(read, path) -> str:
    """The one line a reader refuses ``path`` with (it must refuse it): a line a person reads,
    quoting no more of the file than a few dozen characters."""
    try:
        read(path)
    except MeshScopeError as e:
        text = str(e)
        assert text and "\n" not in text.strip()
        assert len(text.replace(str(path), "")) < 400, text[:1000]
        return text
    raise AssertionError(f"{path} was read")


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_no_reader_opens_a_special_file(tmp_path, specials, reader, kind):
    suffix, read = READERS[reader]
    path = specials.make(tmp_path / f"special{suffix}", kind)
    text = refused(read, path)
    said = {"fifo": "FIFO", "device": "device", "folder": "folder", "proc": "kernel"}[kind]
    assert said in text and str(path) in text


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/status", "/proc/self/environ"])
def test_named_devices_and_kernel_files_are_refused_by_name(target):
    for reader in ("mapping", "network .npz", "network .hgr", "partition", "rate table"):
        assert target in refused(READERS[reader][1], Path(target))


def nested(depth: int, kind: str) -> str:
    """JSON of lists or objects nested ``depth`` deep."""
    if kind == "lists":
        return "[" * depth + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth


@FUZZ
@given(
    depth=st.integers(90, 200_000),
    kind=st.sampled_from(["lists", "objects"]),
    where=st.sampled_from(["document", "partition", "network name", "placement"]),
)
def test_a_mapping_file_nested_deep(tmp_path_factory, depth, kind, where):
    deep = json.loads(nested(min(depth, 90), kind))  # a value the parser takes …
    table = mapping_dict()
    if where == "document":
        text = nested(depth, kind)
    else:
        key = {"partition": ("partition",), "network name": ("network", "name")}.get(
            where, ("placement",)
        )
        text = json.dumps(replaced(table, key, deep))
        text = text.replace(nested(90, kind), nested(depth, kind), 1)  # … made as deep as drawn
    file = tmp_path_factory.mktemp("map") / "m.json"
    file.write_text(text)
    out = either(lambda: read_and_build(file), Mapping)
    assert out is None or depth <= MAX_NESTING


@FUZZ
@given(
    depth=st.integers(MAX_NESTING + 1, 50_000),
    kind=st.sampled_from(["array", "inline table", "dotted key", "table header"]),
)
def test_a_hardware_file_nested_deep(tmp_path_factory, depth, kind):
    raw = (PRESET_DIR / "loihi2.toml").read_text()
    deep = {
        "array": "x = " + "[" * depth + "]" * depth,
        "inline table": "x = " + "{ a = " * depth + "1" + " }" * depth,
        "dotted key": "x" + ".a" * depth + " = 1",
        "table header": "[x" + ".a" * depth + "]\nb = 1",
    }[kind]
    path = tmp_path_factory.mktemp("toml") / "hw.toml"
    path.write_text(deep + "\n" + raw if kind != "table header" else raw + "\n" + deep)
    assert either(lambda: load_hardware(str(path)), Hardware) is None


def test_a_key_of_many_parts_is_refused_before_the_parser_spends_memory(tmp_path):
    """tomllib keeps every prefix of a dotted key: 10,000 parts cost it 0.4 GB and seconds;
    the line is refused before it is parsed."""
    path = tmp_path / "hw.toml"
    path.write_text("x" + ".a" * 10_000 + " = 1\n")
    tracemalloc.start()
    try:
        text = refused(lambda p: load_hardware(str(p)), path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "line 1 holds 10,000 dots" in text
    assert peak < 5 * 2**20, f"{peak / 2**20:.0f} MiB while refusing"


@FUZZ
@given(data=st.data())
def test_json_lines_and_headers_nested_deep(tmp_path_factory, data):
    """The checkpoint's lines, a pareto history's settings line and the JSON headers of the
    .npz files, each nested as deep as hypothesis likes."""
    depth = data.draw(st.integers(MAX_NESTING + 1, 100_000))
    deep = nested(depth, data.draw(st.sampled_from(["lists", "objects"])))
    folder = tmp_path_factory.mktemp("deep")
    reader = data.draw(st.sampled_from(["checkpoint", "pareto history", "network", "trace"]))
    if reader == "checkpoint":
        path = folder / "run.ckpt"
        header = '{"format": "meshscope-es-checkpoint", "version": 2}'
        lines = [header, '{"state": {}}', '{"state": {}}']
        lines[data.draw(st.integers(0, 1))] = deep  # (a deep last line is taken for a cut one)
        path.write_text("\n".join(lines) + "\n")
        read = read_checkpoint
    elif reader == "pareto history":
        path = folder / "h.csv"
        path.write_text(f"# pareto run {deep}\nindex,generation\n")
        read = READERS["pareto history"][1]
    elif reader == "network":
        path = folder / "net.npz"
        with np.load(io.BytesIO(network_bytes(tmp_path_factory.getbasetemp()))) as z:
            arrays = {k: z[k] for k in z.files}
        np.savez(path, **{**arrays, "meta": np.array(deep)})
        read = load_network
    else:
        path = folder / "trace.npz"
        np.savez(path, meta=np.frombuffer(deep.encode(), np.uint8), **trace_arrays())
        read = load_trace
    refused(read, path)


def trace_arrays() -> dict:
    """Every array a trace needs but its header."""
    from engine.simulate.trace import PACKET_COLUMNS

    arrays = {k: np.zeros((1, 1), np.int64) for k in ("link_flits", "occupancy")}
    arrays["link_capacity"] = np.ones(1)
    return arrays | {f"packet_{c}": np.zeros(1, np.int64) for c in PACKET_COLUMNS}


LONG = 131_072  # characters the csv module reads in one field (csv.field_size_limit())


@FUZZ
@given(data=st.data())
def test_a_csv_field_longer_than_the_csv_module_reads(tmp_path_factory, data):
    size = data.draw(st.integers(LONG + 1, 4 * LONG))
    unit = data.draw(st.sampled_from(["x", "0", "é", "open quote"]))
    long = '"' + "x" * size if unit == "open quote" else unit * size  # (an open quote runs on)
    reader = data.draw(st.sampled_from(["rate table", "measurements"]))
    rows = {
        "rate table": ["population,rate", "input,0.1", "layer1,0.2"],
        "measurements": ["mapping,measured_us", "m.json,12.5", "n.json,3"],
    }[reader]
    at = data.draw(st.integers(0, len(rows) - 1))
    cell = data.draw(st.integers(0, 1))
    cells = rows[at].split(",")
    cells[cell] = long
    rows[at] = ",".join(cells)
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_text("\n".join(rows) + "\n")
    refused(READERS[reader][1], path)


# ------------------------------------------------------------------ headers that lie
SMALL = ReadLimits(bytes=2**20, neurons=1_000, synapses=10_000)  # a server's, scaled down


@FUZZ
@given(data=st.data())
def test_a_network_file_whose_arrays_inflate_beyond_the_limits(tmp_path_factory, data):
    """An archive of arrays larger than the limits allow — truly (zeros compress to almost
    nothing), or only in what their headers say — is refused before they are inflated."""
    folder = tmp_path_factory.mktemp("npz")
    with np.load(io.BytesIO(network_bytes(tmp_path_factory.getbasetemp()))) as z:
        arrays = {k: z[k] for k in z.files}
    key = data.draw(st.sampled_from(["indptr", "indices", "population", "rate", "weights"]))
    most = SMALL.neurons + 1 if key in ("indptr", "population", "rate") else SMALL.synapses
    n = data.draw(st.integers(most + 1, 50 * most))
    path = folder / "net.npz"
    if data.draw(st.booleans()):
        np.savez_compressed(path, **{**arrays, key: np.zeros(n, dtype=np.int64)})
    else:  # a header declaring n values before the eight of the data
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<i8", "fortran_order": False, "shape": (n,)}
        )
        with zipfile.ZipFile(path, "w") as zf:
            for k, v in (arrays | {key: None}).items():
                with zf.open(f"{k}.npy", "w") as f:
                    if k == key:
                        f.write(header.getvalue() + bytes(64))
                    else:
                        np.lib.format.write_array(f, v)
    text = refused(lambda p: load_network(p, limits=SMALL), path)
    if key in ("rate", "indices"):  # the network's size, said as neurons or synapses
        assert f"{n:,} {'neurons' if key == 'rate' else 'synapses'}; at most" in text
    else:
        assert f"array {key!r}" in text and f"{n:,} values" in text


@FUZZ
@given(data=st.data())
def test_an_archive_whose_directory_lists_too_many_members(tmp_path_factory, data):
    count = data.draw(st.integers(MAX_ARCHIVE_MEMBERS + 1, 5_000))
    path = tmp_path_factory.mktemp("npz") / "net.npz"
    with zipfile.ZipFile(path, "w") as zf:
        for k in range(count):
            zf.writestr(f"a{k}.npy", b"")
    text = refused(load_network, path)
    assert f"lists {count:,} members" in text


@FUZZ
@given(data=st.data())
def test_an_hgr_header_that_lies(tmp_path_factory, data):
    edges = data.draw(st.integers(1, 10**17))
    vertices = data.draw(st.integers(1, 10**17))
    fmt = data.draw(st.sampled_from(["", " 1", " 10", " 11"]))
    body = data.draw(st.sampled_from(["1 2\n", "1 2\n2 1\n", ""]))
    path = tmp_path_factory.mktemp("hgr") / "net.hgr"
    path.write_text(f"{edges} {vertices}{fmt}\n{body}")
    out = either(lambda: read_hgr(path, limits=SMALL), Network)
    assert out is None or (vertices <= SMALL.neurons and out.n_neurons == vertices)


@pytest.mark.filterwarnings("ignore::engine.io.nir_graph.NirWarning")  # (nir's type check)
@FUZZ
@given(data=st.data())
def test_a_nir_file_whose_sizes_lie(tmp_path_factory, data):
    """A dataset declared huge (compressed, never written: the file stays small) or an Input
    node declaring more neurons than the limits: refused before any is read or built."""
    import h5py

    path = tmp_path_factory.mktemp("nir") / "net.nir"
    if data.draw(st.booleans()):
        n = data.draw(st.integers(SMALL.bytes // 8 + 1, 10**12))  # float64s
        with h5py.File(path, "w") as h5:
            h5.create_dataset(
                "node/nodes/w/weight", shape=(n,), dtype="f8", chunks=(1024,), compression="gzip"
            )
        text = refused(lambda p: read_nir(p, limits=SMALL), path)
        assert "arrays hold more than" in text
    else:
        import nir

        n = data.draw(st.integers(SMALL.neurons + 1, 10**12))
        nodes = {
            "in": nir.Input(input_type={"input": np.array([n])}),
            "n": nir.LIF(
                tau=np.ones(1), r=np.ones(1), v_leak=np.zeros(1), v_threshold=np.ones(1)
            ),
            "out": nir.Output(output_type={"output": np.array([n])}),
        }  # fmt: skip
        nir.write(path, nir.NIRGraph(nodes, [("in", "n"), ("n", "out")], type_check=False))
        text = refused(lambda p: read_nir(p, limits=SMALL), path)
        assert f"{n:,} values" in text
