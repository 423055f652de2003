"""Hardware: presets, the mesh grammar, core addresses, the link table, preset files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InputFileError, InvalidHardwareError, UnknownNameError
from engine.hardware import (
    CORE_TO_ROUTER,
    DIRECTIONS,
    OFF_CHIP,
    PRESET_DIR,
    ROUTER,
    ROUTER_TO_CORE,
    load_hardware,
    preset_names,
    spec_cores,
)
from engine.hardware.provenance import constants, source_kind, write_preset

LOIHI2_TOML = (PRESET_DIR / "loihi2.toml").read_text()


def mesh_specs():
    """Small generic meshes, sometimes with several cores per router and several chips."""
    return st.builds(
        lambda w, h, k, cx, cy: f"mesh:{w}x{h}x{k}@{cx}x{cy}",
        st.integers(1, 4),
        st.integers(1, 4),
        st.integers(1, 3),
        st.integers(1, 3),
        st.integers(1, 3),
    )


# ------------------------------------------------------------------ presets
def test_the_documented_presets_exist():
    names = preset_names()
    assert {"loihi2", "loihi2-x8", "hypergraph-small", "hypergraph-large"} <= set(names)
    assert names == sorted(names)


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_loads_under_its_own_name(name):
    hw = load_hardware(name)
    assert hw.name == name
    assert hw.n_cores == hw.n_chips * hw.width * hw.height * hw.cores_per_router
    assert hw.summary()["cores"] == hw.n_cores
    assert load_hardware(name).fingerprint == hw.fingerprint


def test_loihi2_is_one_chip_of_4_columns_8_rows_4_cores():
    hw = load_hardware("loihi2")
    assert (hw.chips_x, hw.chips_y) == (1, 1)
    assert (hw.width, hw.height, hw.cores_per_router) == (4, 8, 4)
    assert hw.n_cores == 128
    assert hw.limits.neurons == 8192


def test_loihi2_x8_is_eight_loihi2_chips():
    one, eight = load_hardware("loihi2"), load_hardware("loihi2-x8")
    assert eight.n_chips == 8 and eight.n_cores == 1024
    assert (eight.width, eight.height, eight.cores_per_router) == (4, 8, 4)
    assert eight.limits == one.limits and eight.model == one.model
    assert eight.fingerprint != one.fingerprint


@pytest.mark.parametrize("name", ["hypergraph-small", "hypergraph-large"])
def test_seed004_presets_have_one_core_per_router(name):
    hw = load_hardware(name)
    assert hw.cores_per_router == 1
    assert hw.n_cores == hw.n_routers


def test_seed004_large_has_larger_cores_than_small():
    small, large = (
        load_hardware("hypergraph-small").limits,
        load_hardware("hypergraph-large").limits,
    )
    assert small.neurons == 1024
    assert large.neurons > small.neurons
    assert large.synaptic_memory_bytes > small.synaptic_memory_bytes


# ------------------------------------------------------------------ mesh grammar
@pytest.mark.parametrize(
    ("spec", "chips", "grid", "k", "cores"),
    [
        ("mesh:8x8", 1, (8, 8), 1, 64),
        ("mesh:4x4x2@2x1", 2, (8, 4), 2, 64),
        ("mesh:3x5x2", 1, (3, 5), 2, 30),
        ("mesh:2x2x1@1x3", 3, (2, 6), 1, 12),
        ("  mesh:2x3  ", 1, (2, 3), 1, 6),
    ],
)
def test_mesh_specs(spec, chips, grid, k, cores):
    hw = load_hardware(spec)
    assert hw.n_chips == chips
    assert (hw.grid_width, hw.grid_height) == grid
    assert hw.cores_per_router == k
    assert hw.n_cores == cores
    assert hw.limits == load_hardware("loihi2").limits  # Loihi 2 limits and constants


def test_mesh_chips_are_laid_out_x_first():
    hw = load_hardware("mesh:4x4x2@2x1")
    assert (hw.chips_x, hw.chips_y, hw.width, hw.height) == (2, 1, 4, 4)


@pytest.mark.parametrize(
    "spec",
    [
        "mesh:",
        "mesh:8",
        "mesh:8x",
        "mesh:8x8x",
        "mesh:8x8@2",
        "mesh:8x8x4@2x1x1",
        "mesh:axb",
        "mesh:-1x4",
        "mesh:8 x 8",
        "mesh:0x4",
        "mesh:4x0",
        "mesh:4x4x0",
        "mesh:4x4x1@0x1",
        "mesh:4x4x1@1x0",
        "mesh:1000x1000x2",
    ],
)
def test_malformed_mesh_specs_raise_invalid_hardware(spec):
    with pytest.raises(InvalidHardwareError) as info:
        load_hardware(spec)
    text = str(info.value)
    assert spec.strip() in text  # names the spec it refuses
    assert "\n" not in text


def test_malformed_mesh_spec_says_how_to_write_one():
    with pytest.raises(InvalidHardwareError, match=r"write mesh:WxH"):
        load_hardware("mesh:8x8x")


@pytest.mark.parametrize("name", ["loihi3", "Loihi 2", "", "seed004"])
def test_unknown_hardware_names_list_the_known_ones(name):
    with pytest.raises(UnknownNameError) as info:
        load_hardware(name)
    text = str(info.value)
    assert f"unknown hardware {name!r}" in text
    for known in preset_names():
        assert known in text
    assert "mesh:WxH" in text


# ------------------------------------------------------------------ addresses
@pytest.mark.parametrize("spec", [*preset_names(), "mesh:3x2x3@2x2", "mesh:5x1x2@1x3"])
def test_core_id_and_core_address_are_inverse_and_follow_the_formula(spec):
    hw = load_hardware(spec)
    w, h, k = hw.width, hw.height, hw.cores_per_router
    chip, x, y, slot = np.meshgrid(
        np.arange(hw.n_chips), np.arange(w), np.arange(h), np.arange(k), indexing="ij"
    )
    formula = ((chip * h + y) * w + x) * k + slot  # DESIGN.md
    assert np.array_equal(np.sort(formula.ravel()), np.arange(hw.n_cores))
    ct = hw.core_table
    assert np.array_equal(ct["chip"][formula], chip)
    assert np.array_equal(ct["x"][formula], x)
    assert np.array_equal(ct["y"][formula], y)
    assert np.array_equal(ct["slot"][formula], slot)
    step = max(1, hw.n_cores // 500)  # the scalar API on a sample of the big presets
    for core in range(0, hw.n_cores, step):
        address = hw.core_address(core)
        assert hw.core_id(*address) == core
        c, cx, cy, s = address
        assert core == ((c * h + cy) * w + cx) * k + s


@settings(max_examples=40, deadline=None)
@given(spec=mesh_specs())
def test_every_core_address_round_trips(spec):
    hw = load_hardware(spec)
    ct = hw.core_table
    for core in range(hw.n_cores):
        address = hw.core_address(core)
        assert hw.core_id(*address) == core
        assert address == (ct["chip"][core], ct["x"][core], ct["y"][core], ct["slot"][core])
        chip, x, y, _ = address
        # global router coordinates: chips in a chips_x-wide grid
        assert ct["gx"][core] == (chip % hw.chips_x) * hw.width + x
        assert ct["gy"][core] == (chip // hw.chips_x) * hw.height + y
        assert ct["router"][core] == ct["gy"][core] * hw.grid_width + ct["gx"][core]
        assert hw.router_address(int(ct["router"][core])) == (chip, x, y)


@pytest.mark.parametrize(
    "address", [(1, 0, 0, 0), (0, 4, 0, 0), (0, 0, 8, 0), (0, 0, 0, 4), (0, -1, 0, 0)]
)
def test_core_id_refuses_addresses_that_do_not_exist(address):
    with pytest.raises(InvalidHardwareError, match=r"does not exist on loihi2"):
        load_hardware("loihi2").core_id(*address)


# ------------------------------------------------------------------ links
@settings(max_examples=40, deadline=None)
@given(spec=mesh_specs())
def test_link_table_matches_the_router_grid(spec):
    hw = load_hardware(spec)
    lt = hw.link_table
    gw, gh, n_r, n_c = hw.grid_width, hw.grid_height, hw.n_routers, hw.n_cores
    kind = lt["kind"]
    assert kind.shape == (hw.n_link_ids,) == (4 * n_r + 2 * n_c,)
    steps = {"E": (1, 0), "W": (-1, 0), "S": (0, 1), "N": (0, -1)}
    for r in range(n_r):
        gx, gy = r % gw, r // gw
        chip = hw.router_address(r)[0]
        for d, name in enumerate(DIRECTIONS):
            link = 4 * r + d
            nx, ny = gx + steps[name][0], gy + steps[name][1]
            exists = 0 <= nx < gw and 0 <= ny < gh
            assert lt["src_router"][link] == r
            assert lt["core"][link] == -1
            if not exists:
                assert kind[link] == -1
                assert lt["dst_router"][link] == -1
                assert lt["us_per_message"][link] == 0
                continue
            neighbour = ny * gw + nx
            assert lt["dst_router"][link] == neighbour
            other_chip = hw.router_address(neighbour)[0]
            assert kind[link] == (OFF_CHIP if other_chip != chip else ROUTER)
    cores = np.arange(n_c)
    up, down = 4 * n_r + cores, 4 * n_r + n_c + cores
    assert np.all(kind[up] == CORE_TO_ROUTER) and np.all(kind[down] == ROUTER_TO_CORE)
    for ids in (up, down):
        assert np.array_equal(lt["core"][ids], cores)
        assert np.array_equal(lt["src_router"][ids], hw.core_table["router"])
        assert np.array_equal(lt["dst_router"][ids], hw.core_table["router"])


@settings(max_examples=40, deadline=None)
@given(spec=mesh_specs())
def test_link_counts(spec):
    hw = load_hardware(spec)
    kind = hw.link_table["kind"]
    gw, gh = hw.grid_width, hw.grid_height
    mesh_links = 2 * (gw - 1) * gh + 2 * gw * (gh - 1)  # both directions of every edge
    offchip = 2 * (hw.chips_x - 1) * gh + 2 * (hw.chips_y - 1) * gw  # where chips meet
    assert np.count_nonzero(kind == OFF_CHIP) == offchip
    assert np.count_nonzero(kind == ROUTER) == mesh_links - offchip
    assert np.count_nonzero(kind == CORE_TO_ROUTER) == hw.n_cores
    assert np.count_nonzero(kind == ROUTER_TO_CORE) == hw.n_cores


def test_link_times_follow_each_kinds_bandwidth():
    hw = load_hardware("mesh:2x2x2@2x1")
    lt, lk = hw.link_table, hw.links
    expected = {
        ROUTER: lk.message_bits / lk.router_bits_per_us,
        OFF_CHIP: lk.message_bits / lk.offchip_bits_per_us,
        CORE_TO_ROUTER: lk.message_bits / lk.core_bits_per_us,
        ROUTER_TO_CORE: lk.message_bits / lk.core_bits_per_us,
    }
    for k, us in expected.items():
        ids = lt["kind"] == k
        assert ids.any()
        assert np.allclose(lt["us_per_message"][ids], us)
    assert lk.offchip_bits_per_us < lk.router_bits_per_us  # chip-to-chip links are slower


# ------------------------------------------------------------------ preset files
def write(tmp_path: Path, text: str, name: str = "custom.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_preset_file_loads_from_a_path(tmp_path):
    hw = load_hardware(
        write(tmp_path, LOIHI2_TOML.replace("router = { value = 4", "router = { value = 2"))
    )
    assert hw.cores_per_router == 2 and hw.n_cores == 64
    same = load_hardware(write(tmp_path, LOIHI2_TOML, "copy.toml"))
    assert same.fingerprint == load_hardware("loihi2").fingerprint


def _without_section(text: str, section: str) -> str:
    start = text.index(f"[{section}]")
    end = text.find("\n[", start + 1)
    return text[:start] + (text[end + 1 :] if end >= 0 else "")


MALFORMED_PRESETS = [
    (
        "bad syntax",
        LOIHI2_TOML.replace("neurons = { value", "neurons = = { value"),
        "not valid TOML",
    ),
    ("unclosed array", LOIHI2_TOML.replace("value = [1, 1]", "value = [1, 1"), "not valid TOML"),
    ("no [energy]", _without_section(LOIHI2_TOML, "energy"), "missing 'energy'"),
    ("no [topology]", _without_section(LOIHI2_TOML, "topology"), "missing 'topology'"),
    ("no name", LOIHI2_TOML.replace('name = "loihi2"\n', ""), "missing 'name'"),
    (
        "unknown limit",
        LOIHI2_TOML.replace("[limits]\n", "[limits]\nneuronz = 4\n"),
        "[limits]: unknown keys ['neuronz']",
    ),
    (
        "missing link key",
        re.sub(r"message_bits = \{[^\n]*\}", "# no message size", LOIHI2_TOML),
        "[links]: missing keys ['message_bits']",
    ),
    (
        "unknown topology key",
        LOIHI2_TOML.replace("[topology]\n", "[topology]\nlayers = 3\n"),
        "[topology]: unknown keys ['layers']",
    ),
    (
        "unknown section",
        LOIHI2_TOML + "\n[thermal]\nmax_c = 80\n",
        "unknown keys ['thermal']",
    ),
    ("routers not a pair", LOIHI2_TOML.replace("value = [4, 8]", "value = 4"), "custom.toml"),
    ("one router count", LOIHI2_TOML.replace("value = [4, 8]", "value = [4]"), "custom.toml"),
    (
        "zero routers",
        LOIHI2_TOML.replace("value = [4, 8]", "value = [0, 8]"),
        "width must be at least 1",
    ),
    (
        "negative limit",
        LOIHI2_TOML.replace("neurons = { value = 8192", "neurons = { value = -1"),
        "neurons must be a finite number ≥ 0, not -1",
    ),
    (
        "text for a number",
        LOIHI2_TOML.replace("router = { value = 4", 'router = { value = "four"'),
        "custom.toml",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"),
    [case[1:] for case in MALFORMED_PRESETS],
    ids=[case[0] for case in MALFORMED_PRESETS],
)
def test_malformed_preset_files_raise_bad_file_error(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputFileError) as info:
        load_hardware(path)
    assert message in str(info.value)
    assert path in str(info.value)  # names the file


PAPERS = re.compile(
    r"Loihi 2 mapping ES|Loihi 2 runtime model|SENMap|Mosaic|SNN hypergraphs|datasheet|et al\.",
    re.IGNORECASE,
)


@pytest.mark.parametrize("path", sorted(PRESET_DIR.glob("*.toml")), ids=lambda p: p.name)
def test_every_preset_constant_says_where_it_comes_from(path):
    hw = load_hardware(str(path))
    rows = constants(hw)
    with open(path, "rb") as f:
        data = tomllib.load(f)
    in_file = {f"{name}.{key}" for name, v in data.items() if isinstance(v, dict) for key in v}
    assert in_file <= {row["key"] for row in rows}  # every constant of the file is listed
    for row in rows:
        if row["key"].split(".")[0] == "noc" and row["key"].split(".")[1] not in data["noc"]:
            continue  # a simulator default the file leaves out
        assert row["kind"] in ("paper", "illustrative"), (path.name, row)
        if row["kind"] == "paper":  # a published figure names its paper
            assert PAPERS.search(row["source"]), (path.name, row)


@pytest.mark.parametrize("name", ["loihi2", "hypergraph-small", "seneca"])
def test_a_written_preset_reads_back_equal_with_its_sources(tmp_path, name):
    hw = load_hardware(name)
    path = tmp_path / "again.toml"
    write_preset(path, hw, header="written by a test")
    again = load_hardware(str(path))
    assert again == hw and again.fingerprint == hw.fingerprint
    assert again.sources == hw.sources and len(hw.sources) > 40
    assert again.codesign == hw.codesign  # a calibrated preset keeps its co-design ranges


def test_a_bare_value_is_accepted_with_no_source(tmp_path):
    text = LOIHI2_TOML.replace(
        'barrier_us = { value = 2.0, source = "illustrative: barrier synchronisation floor T_BS" }',
        "barrier_us = 2.5",
    )
    hw = load_hardware(write(tmp_path, text))
    assert hw.model.barrier_us == 2.5 and hw.source("model.barrier_us") == ""
    assert source_kind(hw.source("model.barrier_us")) == "unstated"
    assert source_kind(hw.source("model.synop_ns")) == "illustrative"
    assert source_kind("fitted: runs.csv, 14 points, ±2 %") == "fitted"


def test_a_constant_table_without_a_value_is_a_clear_error(tmp_path):
    text = LOIHI2_TOML.replace(
        'barrier_us = { value = 2.0, source = "illustrative: barrier synchronisation floor T_BS" }',
        'barrier_us = { source = "paper: nowhere" }',
    )
    with pytest.raises(InputFileError, match=r"\[model\]: barrier_us must be a value or"):
        load_hardware(write(tmp_path, text))


def test_a_mesh_spec_says_its_topology_comes_from_the_spec():
    hw = load_hardware("mesh:6x5x2")
    assert hw.source("topology.routers") == "spec: mesh:6x5x2"
    assert hw.source("model.synop_ns") == load_hardware("loihi2").source("model.synop_ns")


def test_earlier_preset_names_still_load():
    """Mapping files written before the rename name seed004-small/-large."""
    for old, new in (("seed004-small", "hypergraph-small"), ("seed004-large", "hypergraph-large")):
        hw = load_hardware(old)
        assert hw.name == new and hw.fingerprint == load_hardware(new).fingerprint


@pytest.mark.parametrize("spec", ["../presets/loihi2", "presets/loihi2", ".loihi2", "loihi2/"])
def test_a_preset_is_a_name_never_a_path(spec):
    with pytest.raises(UnknownNameError):
        load_hardware(spec)


def test_a_mesh_spec_tells_its_cores_before_it_is_built():
    assert spec_cores("mesh:1000x1000") == 1_000_000
    assert spec_cores("mesh:8x8x4@2x1") == 512
    assert spec_cores("loihi2") is None
    assert spec_cores("mesh:4x4") == load_hardware("mesh:4x4").n_cores
