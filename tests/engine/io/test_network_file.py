"""Files: network .npz round trips and refusals; mapping JSON round trips and refusals."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import zipfile

import numpy as np
import pytest

from engine.errors import CapacityError, InputFileError, InvalidNetworkError
from engine.hardware import load_hardware
from engine.io.files import ReadLimits
from engine.io.network_file import FORMAT, load_network, save_network
from engine.io.outputs import write_text
from engine.mapping.assignment import (
    Mapping,
    Partition,
    Placement,
    mapping_to_dict,
    parse_mapping_dict,
    read_mapping_file,
)
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement
from engine.model.network import Network
from engine.specs import build_workload, demo_files, load_network_spec


def weighted_network() -> Network:
    return Network(
        name="weighted",
        indptr=[0, 2, 3, 3],
        indices=[1, 2, 2],
        population=[0, 1, 1],
        population_names=("in", "out"),
        rate=[0.5, 0.25, 1.0],
        weights=[0.5, -1.5, 2.0],
        weight_bits=(4, 2),
        encoding=("dense", "sparse"),
        natural_cores=(1, 2),
        description="three neurons with weights",
    )


def save_arrays(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def valid_arrays(header_changes: dict | None = None, **overrides):
    net = weighted_network()
    header = {
        "format": FORMAT,
        "version": 1,
        "name": "x",
        "population_names": list(net.population_names),
    }
    header.update(header_changes or {})
    arrays = dict(
        indptr=net.indptr,
        indices=net.indices,
        population=net.population,
        rate=net.rate,
        meta=np.array(json.dumps(header)),
    )
    arrays.update(overrides)
    return arrays


# ------------------------------------------------------------------ network files
@pytest.mark.parametrize(
    "make",
    [
        weighted_network,
        lambda: build_workload("linear-dense:M=2,N=8"),
        lambda: build_workload("mlp:widths=16-32-8"),
        lambda: build_workload("rand:n=200,card=6"),
    ],
    ids=["weighted", "linear-dense", "mlp", "rand"],
)
def test_network_file_round_trip(tmp_path, make):
    net = make()
    path = tmp_path / "net.npz"
    save_network(net, path)
    back = load_network(path)
    assert back.fingerprint == net.fingerprint
    assert back.name == net.name
    assert back.population_names == net.population_names
    assert back.weight_bits == net.weight_bits and back.encoding == net.encoding
    assert back.natural_cores == net.natural_cores
    assert back.description == net.description
    assert np.array_equal(back.rate, net.rate)
    if net.weights is None:
        assert back.weights is None
    else:
        assert np.array_equal(back.weights, net.weights)


def test_a_file_without_a_name_takes_its_stem(tmp_path):
    path = save_arrays(tmp_path / "my-net.npz", **valid_arrays({"name": None}))
    assert load_network(path).name == "my-net"


@pytest.mark.parametrize("demo", demo_files(), ids=lambda p: p.name)
def test_demo_files_are_the_networks_their_names_say(demo):
    net = load_network(demo)
    assert net.fingerprint == build_workload(net.name).fingerprint
    assert load_network_spec(str(demo)).fingerprint == net.fingerprint


def test_text_file_renamed_npz(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("these are not arrays\n")
    with pytest.raises(InputFileError) as info:
        load_network(path)
    assert str(path) in str(info.value)
    assert "not a MeshScope network file" in str(info.value)


def _npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(4))
    return buffer.getvalue()


def _cut(path, size):
    data = path.read_bytes()[:size]
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(b""), "the file is empty"),
        (lambda p: _cut(save_arrays(p, **valid_arrays()), 200), "cut short or damaged"),
        (lambda p: p.write_bytes(_npy_bytes()), "one .npy array, not the .npz"),
        (lambda p: p.write_bytes(b"\x80\x04K\x01."), "not a .npz (zip) archive"),
    ],
    ids=["empty", "truncated", "npy", "a pickle"],
)
def test_a_file_that_is_not_a_whole_archive_says_what_it_is(tmp_path, make, words):
    path = tmp_path / "net.npz"
    make(path)
    with pytest.raises(InputFileError) as info:
        load_network(path)
    text = str(info.value)
    assert str(path) in text and words in text and "pickled" not in text
    assert text.endswith("write one with 'meshscope convert --network SPEC --out NAME.npz'")


def test_zip_without_the_arrays(tmp_path):
    path = tmp_path / "archive.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(InputFileError) as info:
        load_network(path)
    text = str(info.value)
    assert str(path) in text
    assert "missing arrays ['indices', 'indptr', 'meta', 'population', 'rate']" in text


def test_npz_missing_one_array(tmp_path):
    arrays = valid_arrays()
    del arrays["rate"]
    path = save_arrays(tmp_path / "norate.npz", **arrays)
    with pytest.raises(InputFileError, match=r"missing arrays \['rate'\]") as info:
        load_network(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"format": "something-else"}, 'lacks "format": "meshscope-network"'),
        ({"format": None}, 'lacks "format"'),
        ({"version": 2}, "version 2 is not supported"),
        ({"population_names": None}, "malformed header"),
    ],
    ids=["other format", "no format", "future version", "no population names"],
)
def test_header_problems(tmp_path, meta, message):
    path = save_arrays(tmp_path / "bad-header.npz", **valid_arrays(meta))
    with pytest.raises(InputFileError) as info:
        load_network(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("meta_text", "message"),
    [("{not json", "'meta' header is not JSON"), ("[1, 2]", 'lacks "format"')],
)
def test_header_that_is_not_a_json_object(tmp_path, meta_text, message):
    path = save_arrays(tmp_path / "bad.npz", **valid_arrays(meta=np.array(meta_text)))
    with pytest.raises(InputFileError, match=message):
        load_network(path)


def test_inconsistent_arrays_are_a_bad_file_naming_the_problem(tmp_path):
    path = save_arrays(tmp_path / "broken.npz", **valid_arrays(rate=np.array([0.5, 2.0, 0.1])))
    with pytest.raises(InputFileError) as info:
        load_network(path)
    assert str(path) in str(info.value)
    assert "[0, 1]" in str(info.value)  # the network's own complaint is passed on


def test_pickled_arrays_are_refused(tmp_path):
    objects = np.array([{"a": 1}, None], dtype=object)
    path = save_arrays(tmp_path / "pickle.npz", **valid_arrays(population=objects))
    with pytest.raises(InputFileError) as info:
        load_network(path)
    assert str(path) in str(info.value)


# ------------------------------------------------------------------ archives that inflate
SERVER = ReadLimits(bytes=32 * 2**20, neurons=200_000, synapses=12_000_000)  # the explorer's


def bomb(path, **arrays):
    """A compressed archive of ``arrays`` (zeros: each compresses about a thousandfold)."""
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return path


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


def test_an_archive_without_the_arrays_is_refused_before_any_is_inflated(tmp_path):
    """The issue's bomb, scaled down: a small archive of one array inflating a thousandfold
    (256 MiB), and none of the arrays a network needs (at 2 GB it pushed the server from
    610 MB to 2.6 GB before saying so)."""
    path = bomb(tmp_path / "bomb.npz", indptr=np.zeros(2**25, dtype=np.int64))
    assert path.stat().st_size < 2**20
    error, peak = peak_while(lambda: load_network(path, limits=SERVER))
    assert isinstance(error, InputFileError) and "missing arrays" in str(error)
    assert peak < 2**20, f"{peak / 2**20:.0f} MiB held while refusing"


@pytest.mark.parametrize(
    ("key", "n"), [("indices", 13_000_000), ("rate", 2**21), ("meta", 2**23)], ids=str
)
def test_an_array_beyond_the_limits_is_refused_before_it_is_inflated(tmp_path, key, n):
    arrays = valid_arrays()
    arrays[key] = np.zeros(n, dtype=np.int64) if key != "meta" else np.array("x" * n)
    path = bomb(tmp_path / "bomb.npz", **arrays)
    error, peak = peak_while(lambda: load_network(path, limits=SERVER))
    if key == "meta":
        assert isinstance(error, InputFileError), error
        assert f"array {key!r} inflates to" in str(error) and f"one value of <U{n}" in str(error)
    else:  # a network too large to read, said in its own words
        noun = {"indices": "synapses", "rate": "neurons"}[key]
        assert isinstance(error, CapacityError), error
        assert f"{n:,} {noun}; at most" in str(error)
    assert peak < 2**20, f"{peak / 2**20:.0f} MiB held while refusing"


def lying(path, key: str, shape: tuple, **arrays):
    """An archive of ``arrays`` whose array ``key`` says it holds ``shape`` int64s and holds
    eight bytes."""
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        head, {"descr": "<i8", "fortran_order": False, "shape": shape}
    )
    with zipfile.ZipFile(path, "w") as z:
        for k, v in (arrays | {key: None}).items():
            with z.open(f"{k}.npy", "w") as f:
                if k == key:
                    f.write(head.getvalue() + bytes(8))
                else:
                    np.lib.format.write_array(f, v)
    return path


def test_the_command_line_limits_refuse_what_no_memory_holds(tmp_path):
    path = lying(tmp_path / "lie.npz", "indices", (10**12,), **valid_arrays())
    error, peak = peak_while(lambda: load_network(path))
    assert isinstance(error, CapacityError), error
    assert "1,000,000,000,000 synapses; at most 200,000,000 synapses" in str(error)
    assert peak < 2**20


def test_arrays_not_asked_for_are_never_inflated(tmp_path):
    path = bomb(tmp_path / "net.npz", **valid_arrays(), junk=np.zeros(2**24, dtype=np.int64))
    assert load_network(path).n_neurons == weighted_network().n_neurons  # (kernels loaded)
    error, peak = peak_while(lambda: load_network(path, limits=SERVER))
    assert error is None and peak < 2**20, f"{peak / 2**20:.0f} MiB held"


def test_an_array_shorter_than_its_header_says_is_a_damaged_file(tmp_path):
    path = lying(tmp_path / "short.npz", "rate", (3,), **valid_arrays())  # one of three values
    with pytest.raises(InputFileError, match="not a MeshScope network file") as info:
        load_network(path)
    assert str(path) in str(info.value)


def test_missing_network_file(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        load_network(tmp_path / "absent.npz")


def test_network_spec_with_an_unknown_file_type(tmp_path):
    path = tmp_path / "net.csv"
    path.write_text("1,2\n")
    with pytest.raises(InputFileError, match="unknown network file type"):
        load_network_spec(str(path))


# ------------------------------------------------------------------ mapping files
@pytest.fixture(scope="module")
def loihi2():
    return load_hardware("loihi2")


@pytest.fixture(scope="module")
def layered(loihi2):
    """A layered mapping (cores per population) of a small linear layer."""
    net = build_workload("linear-dense:M=2,N=8")
    partition = make_partition(net, loihi2, "natural")
    stats = partition_graph(net, loihi2, partition)
    return net, Mapping(partition, make_placement(stats, loihi2, "random", seed=3))


@pytest.fixture(scope="module")
def assigned(loihi2):
    """A neuron-by-neuron mapping of a small random network, randomly placed."""
    net = build_workload("rand:n=120,card=5")
    rng = np.random.default_rng(1)
    assignment = rng.permutation(np.arange(net.n_neurons) % 6)
    cores = rng.choice(loihi2.n_cores, size=6, replace=False)
    return net, Mapping(Partition(assignment), Placement(cores))


def assert_same_mapping(a: Mapping, b: Mapping):
    assert np.array_equal(a.partition.assignment, b.partition.assignment)
    assert np.array_equal(a.placement.cores, b.placement.cores)
    assert a.partition.cores_per_population == b.partition.cores_per_population


@pytest.mark.parametrize("which", ["layered", "assigned"])
def test_mapping_json_round_trip(request, loihi2, tmp_path, which):
    net, mapping = request.getfixturevalue(which)
    data = mapping_to_dict(net, loihi2, mapping)
    text = json.dumps(data)
    assert data["placement"] == [list(loihi2.core_address(c)) for c in mapping.placement.cores]
    assert_same_mapping(parse_mapping_dict(json.loads(text)).build(net, loihi2), mapping)
    path = tmp_path / "mapping.json"
    path.write_text(text)
    mf = read_mapping_file(path)
    assert mf.network_name == net.name and mf.hardware_name == "loihi2"
    assert mf.network_fingerprint == net.fingerprint
    assert_same_mapping(mf.build(net, loihi2), mapping)


def test_layered_mapping_is_stored_as_cores_per_population(layered, loihi2):
    net, mapping = layered
    data = mapping_to_dict(net, loihi2, mapping)
    assert data["partition"] == {"cores_per_population": [2, 2], "split": ["channels"] * 2}
    assert data["format"] == "meshscope-mapping" and data["version"] == 1
    assert data["network"] == {"name": net.name, "fingerprint": net.fingerprint}
    assert data["hardware"] == {"name": "loihi2", "fingerprint": loihi2.fingerprint}


def test_a_renamed_network_with_the_same_arrays_is_accepted(layered, loihi2):
    net, mapping = layered
    mf = parse_mapping_dict(mapping_to_dict(net, loihi2, mapping))
    renamed = Network(
        name="copy",
        indptr=net.indptr,
        indices=net.indices,
        population=net.population,
        population_names=net.population_names,
        rate=net.rate,
        weight_bits=net.weight_bits,
        encoding=net.encoding,
    )
    assert_same_mapping(mf.build(renamed, loihi2), mapping)


def test_mapping_of_another_network_names_both(assigned, loihi2):
    net, mapping = assigned
    mf = parse_mapping_dict(mapping_to_dict(net, loihi2, mapping), "saved.json")
    other = build_workload("rand:n=120,card=5,seed=9")
    with pytest.raises(InputFileError) as info:
        mf.build(other, loihi2)
    text = str(info.value)
    assert "saved.json" in text
    assert net.name in text and other.name in text
    assert net.fingerprint in text and other.fingerprint in text


def test_mapping_for_other_hardware_names_both(layered, loihi2):
    net, mapping = layered
    mf = parse_mapping_dict(mapping_to_dict(net, loihi2, mapping), "saved.json")
    other = load_hardware("loihi2-x8")  # every address of the file exists there too
    with pytest.raises(InputFileError) as info:
        mf.build(net, other)
    text = str(info.value)
    assert "hardware 'loihi2'" in text and "loihi2-x8" in text
    assert loihi2.fingerprint in text and other.fingerprint in text


def test_hardware_is_identified_by_content_not_name(layered, loihi2):
    net, mapping = layered
    mf = parse_mapping_dict(mapping_to_dict(net, loihi2, mapping))
    same = load_hardware("mesh:4x8x4")  # Loihi 2's grid and constants under another name
    assert same.fingerprint == loihi2.fingerprint
    assert_same_mapping(mf.build(net, same), mapping)


def test_malformed_json_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "meshscope-mapping",\n "version": 1,,}')
    with pytest.raises(InputFileError) as info:
        read_mapping_file(path)
    assert str(path) in str(info.value) and "not valid JSON (line 2" in str(info.value)


def test_missing_mapping_file(tmp_path):
    with pytest.raises(InputFileError, match="cannot read mapping file"):
        read_mapping_file(tmp_path / "absent.json")


def _good(layered, loihi2) -> dict:
    net, mapping = layered
    return mapping_to_dict(net, loihi2, mapping)


def _edit(data: dict, path: tuple, value) -> dict:
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


MALFORMED_MAPPINGS = [
    ("wrong format", ("format",), "meshscope-network", 'expected "format": "meshscope-mapping"'),
    ("no format", ("format",), KeyError, 'expected "format"'),
    ("future version", ("version",), 2, "version 2 is not supported"),
    ("no placement", ("placement",), KeyError, "missing or malformed field 'placement'"),
    ("no network", ("network",), KeyError, "missing or malformed field 'network'"),
    ("network is text", ("network",), "linear", "missing or malformed field"),
    ("placement not a list", ("placement",), {"0": [0, 0, 0, 0]}, '"placement" must be a list'),
    ("address of 3", ("placement", 1), [0, 0, 1], '"placement" must be a list'),
    ("address of 5", ("placement", 1), [0, 0, 0, 1, 0], '"placement" must be a list'),
    ("text address", ("placement", 0), ["0", 0, 0, 0], '"placement" must be a list'),
    ("float address", ("placement", 0), [0, 0.5, 0, 0], '"placement" must be a list'),
    ("bool address", ("placement", 0), [True, 0, 0, 0], '"placement" must be a list'),
    ("entry not a list", ("placement", 0), 7, '"placement" must be a list'),
    ("partition a list", ("partition",), [2, 2], '"partition" needs a list of integers'),
    ("partition text", ("partition",), "min", '"partition" needs a list of integers'),
    ("partition empty", ("partition",), {}, '"partition" needs a list of integers'),
    (
        "text core counts",
        ("partition", "cores_per_population"),
        ["a", "b"],
        '"partition" needs a list of integers',
    ),
    (
        "float core counts",
        ("partition", "cores_per_population"),
        [1.5, 2],
        '"partition" needs a list of integers',
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [case[1:] for case in MALFORMED_MAPPINGS],
    ids=[case[0] for case in MALFORMED_MAPPINGS],
)
def test_malformed_mapping_dicts(layered, loihi2, path, value, message):
    data = _edit(_good(layered, loihi2), path, value)
    with pytest.raises(InputFileError) as info:
        parse_mapping_dict(data, "edited.json")
    assert str(info.value).startswith("edited.json: ")
    assert message in str(info.value)


@pytest.mark.parametrize("data", [[], "mapping", 3, None])
def test_a_mapping_must_be_a_json_object(data):
    with pytest.raises(InputFileError, match="not a MeshScope mapping"):
        parse_mapping_dict(data, "x.json")


def test_text_assignment_is_refused(assigned, loihi2):
    net, mapping = assigned
    data = mapping_to_dict(net, loihi2, mapping)
    data["partition"]["assignment"][5] = "core 3"
    with pytest.raises(InputFileError, match="needs a list of integers"):
        parse_mapping_dict(data, "x.json")


def test_placement_address_off_the_hardware(layered, loihi2):
    data = _edit(_good(layered, loihi2), ("placement", 0), [0, 9, 9, 0])
    mf = parse_mapping_dict(data, "edited.json")
    with pytest.raises(InputFileError) as info:
        mf.build(layered[0], loihi2)
    text = str(info.value)
    assert text.startswith("edited.json: placement: ")
    assert "core (0, 9, 9, 0) does not exist on loihi2" in text


def test_assignment_of_the_wrong_length(assigned, loihi2):
    net, mapping = assigned
    data = mapping_to_dict(net, loihi2, mapping)
    data["partition"]["assignment"] = data["partition"]["assignment"][:-1]
    with pytest.raises(InputFileError, match=r"assignment has 119 entries for 120 neurons"):
        parse_mapping_dict(data, "x.json").build(net, loihi2)


def test_network_errors_are_not_bad_files():
    # guards the distinction the CLI relies on: each failure names its own cause
    assert not issubclass(InvalidNetworkError, InputFileError)


def test_a_write_removes_the_temporary_files_of_writers_that_died(tmp_path):
    target = tmp_path / "out.json"
    dead = tmp_path / ".out.json.99999999.abc.tmp"  # beyond any pid: its writer is gone
    live = tmp_path / f".out.json.{os.getpid()}.def.tmp"  # a writer still at work
    other = tmp_path / ".other.json.99999999.abc.tmp"  # another target's: not ours to touch
    for f in (dead, live, other):
        f.write_text("partial")
    write_text(target, "{}")
    assert target.read_text() == "{}"
    assert not dead.exists() and live.exists() and other.exists()
