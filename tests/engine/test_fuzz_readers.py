"""Every reader, fed what hypothesis makes of a valid file: a valid object or the project's
own error, never anything else.

Each reader starts from a real file (a preset TOML, a mapping file, a network ``.npz``, an
hMETIS ``.hgr``) and hypothesis damages it: one value replaced by any other JSON/TOML value
(huge integers, NaN, text, lists, booleans, nothing), bytes flipped, the file cut short,
lines rewritten. Whatever comes out, the reader returns its object or raises a
``MeshScopeError`` — the one-line message the command line prints with exit 2.
"""

from __future__ import annotations

import copy
import json
import tomllib
from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import MeshScopeError
from engine.hardware import PRESET_DIR, Hardware, hardware_from_dict, load_hardware
from engine.io.hgr import read_hgr, write_hgr
from engine.io.network_file import load_network, save_network
from engine.mapping import Mapping, mapping_to_dict, read_mapping_file
from engine.network import Network
from engine.pipeline import build_mapping
from engine.specs import load_network_spec

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
