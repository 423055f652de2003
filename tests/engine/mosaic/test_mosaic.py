"""Mosaic (the routing paper, seed 003): hop distances, 1-turn and shared-path routes, routing
memory against an explicit route-and-count, the profile P(θ), rewiring, and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from engine.errors import CapacityError, InputFileError, InvalidHardwareError, SpecError
from engine.hardware import PRESET_DIR, load_hardware
from engine.model.network import Network
from engine.mosaic import (
    MosaicGrid,
    Rewiring,
    hop_matrix,
    profile_of,
    random_network,
    removals,
    requirements,
    rewire,
    routing_memory,
)
from engine.mosaic.check import check, in_order, tiles_of
from engine.mosaic.grid import NT, RT0, RT1
from engine.mosaic.profile import parse_target, sequential_nt
from engine.mosaic.rewire import rewire_network
from engine.specs import load_network_spec
from tests.support.cli import run, run_json
from tests.support.networks import random_network as random_graph

STEP = {"E": (0, 1), "W": (0, -1), "S": (1, 0), "N": (-1, 0)}


def mosaic(rows: int, columns: int, *, nt: int = 64, rt: int = 64, neurons: int = 16):
    hw = load_hardware(f"mosaic-8x8@{rows}x{columns}")
    return replace(
        hw, tiles=replace(hw.tiles, nt_inputs=nt, rt_inputs=rt),
        limits=replace(hw.limits, neurons=neurons),
    )  # fmt: skip


def network_of(n: int, synapses) -> Network:
    """A one-population network of ``n`` neurons with the (source, destination) pairs given."""
    s = np.array([a for a, _ in synapses], dtype=np.int64)
    d = np.array([b for _, b in synapses], dtype=np.int64)
    order = np.lexsort((d, s))
    return Network(
        name="hand", indptr=np.concatenate([[0], np.cumsum(np.bincount(s, minlength=n))]),
        indices=d[order], population=np.zeros(n, np.int32), population_names=("n",),
        rate=np.full(n, 0.5),
    )  # fmt: skip


# ------------------------------------------------------------------ the grid
def test_tile_grid_alternates_neuron_and_routing_tiles():
    g = MosaicGrid(load_hardware("mosaic-8x8"))
    assert g.shape == (17, 17) and g.n_nt == 64
    assert g.kind[1, 1] == NT and g.kind[2, 2] == RT1 and g.kind[1, 2] == RT0 == g.kind[2, 1]
    r, c = g.nt_tile(np.arange(64))
    assert np.all(g.kind[r, c] == NT) and (g.kind == NT).sum() == 64
    assert np.all(g.kind[0::2, 0::2] == RT1)


def test_hop_table_of_a_3x3_mosaic_fig_1b():
    """Fig. 1b's 3 × 3 Mosaic as derived in engine.mosaic.grid (the figure's numbers are
    not in the text): from the centre NT, and from a corner."""
    g = MosaicGrid(mosaic(3, 3))
    assert g.hops[4].reshape(3, 3).tolist() == [[3, 1, 3], [1, 0, 1], [3, 1, 3]]
    assert g.hops[0].reshape(3, 3).tolist() == [[0, 1, 5], [1, 3, 5], [5, 5, 7]]
    assert np.array_equal(g.hops, g.hops.T)
    assert set(np.unique(g.hops).tolist()) == {0, 1, 3, 5, 7}  # never 2: Fig. 3a's (p1, p3)


def test_every_route_is_1_turn_x_then_y_through_routing_tiles_only():
    g = MosaicGrid(mosaic(4, 5))
    for a in range(g.n_nt):
        for b in range(g.n_nt):
            route = g.route(a, b)
            assert len(route) == g.hops[a, b]
            if not route:
                continue
            src, dst = (tuple(int(v) for v in g.nt_tile(n)) for n in (a, b))
            # the first RT borders the source; each next one borders the last; the last
            # hands the spike to the destination
            first = route[0][:2]
            assert abs(first[0] - src[0]) + abs(first[1] - src[1]) == 1
            for (r, c, d), (r2, c2, _) in zip(route, route[1:], strict=False):
                assert (r + STEP[d][0], c + STEP[d][1]) == (r2, c2)
            r, c, d = route[-1]
            assert (r + STEP[d][0], c + STEP[d][1]) == dst
            kinds = [g.kind[r, c] for r, c, _ in route]
            assert NT not in kinds
            # a turn (a change of direction between RTs) happens in an RT1 only, and once
            turns = [i for i in range(1, len(route) - 1) if route[i][2] != route[i - 1][2]]
            assert len(turns) <= 1 and all(kinds[i] == RT1 for i in turns)
            # X first: no east/west move after a north/south one (except handing over)
            dirs = [d for _, _, d in route[:-1]]
            ns = [i for i, d in enumerate(dirs) if d in "NS"]
            assert not ns or all(d in "NS" for d in dirs[ns[0] :])


@pytest.mark.parametrize("shape", ["3x3", "4x5", "5x2", "1x6", "6x1"])
def test_routes_of_all_pairs_at_once_are_the_routes_one_by_one(shape):
    g = MosaicGrid(load_hardware(f"mosaic-8x8@{shape}"))
    keys = np.arange(g.n_nt**2)
    ptr, entries = g.routes(keys)
    for key in keys:  # the step-by-step construction is the reference
        a, b = divmod(int(key), g.n_nt)
        assert entries[ptr[key] : ptr[key + 1]].tolist() == [t * 4 + d for t, d in g._route(a, b)]


def test_the_routes_of_one_source_form_a_tree():
    """Shared-path routing (Fig. 2b): every RT gets a source's spike from one side only."""
    g = MosaicGrid(mosaic(5, 6))
    for a in range(g.n_nt):
        came_from: dict[tuple[int, int], tuple[int, int]] = {}
        src = tuple(int(v) for v in g.nt_tile(a))
        for b in range(g.n_nt):
            prev = src
            for r, c, _ in g.route(a, b):
                assert came_from.setdefault((r, c), prev) == prev, (a, b, (r, c))
                prev = (r, c)


def test_hand_checked_shared_path_uses_fewer_entries_than_two_unicast_routes():
    """NT 0 of a 3 × 3 Mosaic sends one neuron's spikes to NT 2 (two to the east) and NT 8
    (the far corner): both leave south, run east along tile row 2 and part at the RT1 (2, 4).
    Unicast: 5 + 7 = 12 entries; shared: the 3 common RTs once, the branch RT twice — 9."""
    hw = mosaic(3, 3, neurons=1)
    g = MosaicGrid(hw)
    assert g.route(0, 2) == [(2, 1, "E"), (2, 2, "E"), (2, 3, "E"), (2, 4, "E"), (2, 5, "N")]
    assert g.route(0, 8) == [
        (2, 1, "E"), (2, 2, "E"), (2, 3, "E"), (2, 4, "S"), (3, 4, "S"), (4, 4, "S"), (5, 4, "E"),
    ]  # fmt: skip
    assert g.tree(0, [2, 8])[(2, 4)] == ["E", "S"]
    net = network_of(9, [(0, 2), (0, 8)])
    nt = np.arange(9)
    shared = routing_memory(net, hw, nt)
    unicast = routing_memory(net, hw, nt, shared=False)
    assert (shared.routing_entries, unicast.routing_entries) == (9, 12)
    assert shared.rows[2, 1:5].tolist() == [1, 1, 1, 1]  # one row each: the neuron
    assert unicast.rows[2, 1:5].tolist() == [2, 2, 2, 2]  # one row a route
    assert shared.rows[1, 1] == 0 and shared.rows[1, 5] == 1 == shared.rows[5, 5]  # NT inputs


def explicit_count(network: Network, g: MosaicGrid, nt: np.ndarray, shared: bool):
    """Rows and entries per tile by routing every (neuron, destination NT) pair on its own,
    with Python sets: the reference the vectorised count must equal."""
    rows, cells = {}, {}
    pairs = {(int(s), int(nt[d])) for s, d in zip(network.sources, network.indices, strict=True)}
    syn = {}
    for d in {(int(s), int(d)) for s, d in zip(network.sources, network.indices, strict=True)}:
        syn[int(nt[d[1]])] = syn.get(int(nt[d[1]]), 0) + 1  # a duplicate synapse: one cell
    for s, b in sorted(pairs):
        tile = tuple(int(v) for v in g.nt_tile(b))
        rows.setdefault(tile, set()).add(("nt", s))
        if nt[s] < 0 or nt[s] == b:
            continue
        for r, c, d in g.route(int(nt[s]), b):
            who = s if shared else (s, b)
            rows.setdefault((r, c), set()).add(who)
            cells.setdefault((r, c), set()).add((who, d))
    want_rows = np.zeros(g.shape, int)
    want_entries = np.zeros(g.shape, int)
    for t, v in rows.items():
        want_rows[t] = len(v)
    for t, v in cells.items():
        want_entries[t] = len(v)
    for b, n in syn.items():
        want_entries[tuple(int(v) for v in g.nt_tile(b))] += n
    return want_rows, want_entries


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shared", [True, False])
def test_routing_memory_equals_an_explicit_route_and_count(seed, shared):
    rng = np.random.default_rng(seed)
    hw = mosaic(3, 4, nt=12, rt=10, neurons=4)
    g = MosaicGrid(hw)
    net = random_graph(rng, 40, 6)
    nt = rng.permutation(np.repeat(np.arange(12), 4))[:40]
    mem = routing_memory(net, hw, nt, shared=shared)
    rows, entries = explicit_count(net, g, nt, shared)
    assert np.array_equal(mem.rows, rows)
    assert np.array_equal(mem.entries, entries)
    assert mem.mappable == bool(np.all(rows <= g.capacity))
    assert mem.mappable is False  # the caps are chosen tight: the check has something to say


@pytest.mark.parametrize("shared", [True, False])
def test_removing_what_removals_lists_makes_the_network_mappable(shared):
    rng = np.random.default_rng(7)
    hw = mosaic(3, 4, nt=12, rt=10, neurons=4)
    g = MosaicGrid(hw)
    net = random_graph(rng, 48, 6)
    nt = np.repeat(np.arange(12), 4)
    mem = routing_memory(net, hw, nt, shared=shared)
    cuts = removals(mem)
    assert {tuple(c["tile"]) for c in cuts} == {
        (int(t // g.shape[1]), int(t % g.shape[1])) for t in mem.overflowing
    }
    for c in cuts:
        assert len(c["remove"]) == c["excess"] > 0
    gone = {(r["neuron"], b) for c in cuts for r in c["remove"] for b in r["to_nt"]}
    keep = np.array(
        [(int(s), int(nt[d])) not in gone for s, d in zip(net.sources, net.indices, strict=True)]
    )
    s, d = net.sources[keep], net.indices[keep]
    pruned = network_of(48, list(zip(s.tolist(), d.tolist(), strict=True)))
    assert routing_memory(pruned, hw, nt, shared=shared).mappable
    assert keep.sum() > 0.3 * keep.size  # it removes what is needed, not everything


def test_spike_sources_feed_neuron_tiles_without_routing():
    net = network_of(4, [(0, 2), (0, 3), (1, 3)])
    net = replace(net, population=np.array([0, 0, 1, 1], np.int32), population_names=("in", "x"),
                  spike_source=(True, False), weight_bits=None, encoding=None)  # fmt: skip
    hw = mosaic(2, 2, neurons=1)
    nt = in_order(net, hw)
    assert nt.tolist() == [-1, -1, 0, 1]
    mem = routing_memory(net, hw, nt)
    assert mem.routing_entries == 0
    assert mem.rows[1, 1] == 1 and mem.rows[1, 3] == 2  # NT 0: neuron 0; NT 1: neurons 0, 1


def test_a_router_mesh_is_not_a_mosaic():
    with pytest.raises(InvalidHardwareError, match=r"not a Mosaic.*mosaic-8x8"):
        MosaicGrid(load_hardware("loihi2"))


def test_a_mosaic_preset_must_be_one_chip_of_single_tiles(tmp_path):
    text = (PRESET_DIR / "mosaic-8x8.toml").read_text()
    bad = tmp_path / "m.toml"
    bad.write_text(text.replace("cores_per_router = { value = 1", "cores_per_router = { value = 2"))
    with pytest.raises(InputFileError, match="cores_per_router = 1"):
        load_hardware(str(bad))
    bad.write_text(text.replace("rt_inputs = { value = 64", "rt_inputs = { value = 0"))
    with pytest.raises(InputFileError, match="rt_inputs must be at least 1"):
        load_hardware(str(bad))


# ------------------------------------------------------------------ the profile
def test_profile_counts_connections_and_pairs_per_hop_distance():
    hw = mosaic(1, 3, neurons=2)  # NTs 0, 1, 2 in a row: hops 1 (neighbours), 5 (the ends)
    nt = np.array([0, 0, 1, 1, 2, 2])
    net = network_of(6, [(0, 1), (0, 2), (1, 4), (5, 0), (3, 3)])
    p = profile_of(hw, nt, net)
    assert p.pairs.sum() == 36
    assert p.pairs[[0, 1, 5]].tolist() == [12, 16, 8]
    assert p.connections[[0, 1, 5]].tolist() == [2, 1, 2]
    assert p.p[1] == pytest.approx(1 / 16) and p.p[2] == 0
    dense = np.zeros((6, 6))
    dense[net.sources, net.indices] = 1
    assert np.array_equal(profile_of(hw, nt, weights=dense).connections, p.connections)


def test_random_networks_have_exactly_the_profile_and_repeat_with_a_seed():
    hw = mosaic(4, 4, neurons=8)
    nt = sequential_nt(128, hw)
    target = (0.5, 0.1, 0.0, 0.02)
    a = random_network(hw, nt, target, seed=3)
    p = profile_of(hw, nt, a)
    want = np.floor(np.array(target) * p.pairs[:4] + 1e-9)
    assert np.array_equal(p.connections[:4], want) and p.connections[4:].sum() == 0
    b = random_network(hw, nt, target, seed=3)
    assert np.array_equal(a.indices, b.indices) and np.array_equal(a.indptr, b.indptr)
    assert not np.array_equal(a.indices, random_network(hw, nt, target, seed=4).indices)


def test_requirements_report_mean_and_spread_over_networks_of_one_profile():
    hw = mosaic(4, 4, neurons=8)
    out = requirements(hw, (0.4, 0.05, 0, 0.01), seeds=range(5))
    assert out["networks"] == 5
    assert out["rt_size"]["mean"] > 0 and out["rt_size"]["std"] >= 0
    assert out == requirements(hw, (0.4, 0.05, 0, 0.01), seeds=range(5))
    denser = requirements(hw, (0.4, 0.1, 0, 0.02), seeds=range(5))
    assert denser["routing_entries"]["mean"] > out["routing_entries"]["mean"]


@pytest.mark.parametrize("text", ["0.5,x", "", "1.5", "0.1,-0.1"])
def test_a_malformed_target_is_refused(text):
    with pytest.raises(SpecError, match="target"):
        parse_target(text)


# ------------------------------------------------------------------ rewiring
def dense_random(rng, n: int, density: float) -> np.ndarray:
    return np.where(rng.random((n, n)) < density, rng.normal(size=(n, n)), 0.0)


def test_rewire_keeps_the_connection_count_and_meets_the_target():
    rng = np.random.default_rng(0)
    hw = mosaic(4, 4, neurons=8)
    nt = sequential_nt(128, hw)
    w = dense_random(rng, 128, 0.05)
    target = (0.6, 0.12, 0.0, 0.02)
    res = rewire(w, hop_matrix(hw, nt), target, seed=1)
    assert res.connections_after == res.connections_before == np.count_nonzero(w)
    assert res.pruned > 0
    after = profile_of(hw, nt, weights=res.weights)
    caps = np.floor(np.array(target) * after.pairs[:4] + 1e-9)
    assert np.all(after.connections[:4] <= caps) and after.connections[4:].sum() == 0
    # the weakest went: every kept connection of an over-full class is at least as strong
    # as any pruned one of that class
    kept = res.mask & (w != 0)
    assert np.abs(w[kept]).sum() > 0
    assert np.array_equal(res.weights != 0, res.mask)


def test_a_target_that_cannot_hold_the_connections_is_a_clear_error():
    hw = mosaic(4, 4, neurons=8)
    nt = sequential_nt(128, hw)
    w = dense_random(np.random.default_rng(0), 128, 0.2)
    with pytest.raises(CapacityError, match=r"holds [\d,]+ connections.*network has [\d,]+"):
        rewire(w, hop_matrix(hw, nt), (0.1, 0.01), seed=0)


def test_deepr_steps_with_a_gradient_callback_keep_count_and_profile():
    hw = mosaic(3, 3, neurons=8)
    nt = sequential_nt(72, hw)
    hops = hop_matrix(hw, nt)
    rw = Rewiring(hops, (0.5, 0.1, 0.0, 0.02), l1=1e-2, seed=0)
    w, mask = rw.initial(0.1)
    assert np.array_equal(rw.counts(mask), rw.caps)  # Alg. 2 line 1: P(θ) = P̂
    rng = np.random.default_rng(1)
    total, flipped = int(mask.sum()), 0
    for _ in range(10):
        w, mask, n = rw.step(w, mask, rng.normal(size=w.shape), lr=0.2)
        flipped += n
        assert int(mask.sum()) == total and np.all(rw.counts(mask) <= rw.caps)
        assert not np.any(w[~mask])
    assert flipped > 0  # the big noisy steps did flip signs: rewiring happened
    calls = []

    def gradient(weights):
        calls.append(1)
        return rng.normal(size=weights.shape)

    res = rewire(w, hops, (0.5, 0.1, 0.0, 0.02), gradient=gradient, steps=3, lr=0.2)
    assert len(calls) == 3 and res.connections_after == total and res.rewired > 0
    assert (
        rewire(w, hops, (0.5, 0.1, 0.0, 0.02), seed=5).weights.tolist()
        == rewire(w, hops, (0.5, 0.1, 0.0, 0.02), seed=5).weights.tolist()
    )


def test_rewire_network_keeps_neurons_populations_and_input_synapses():
    rng = np.random.default_rng(2)
    syn = {(int(a), int(b)) for a, b in zip(rng.integers(0, 64, 400), rng.integers(8, 64, 400),
                                            strict=True)}  # fmt: skip
    net = network_of(64, sorted(syn))
    net = replace(
        net, population=(np.arange(64) >= 8).astype(np.int32), weight_bits=None,
        population_names=("in", "x"), spike_source=(True, False), encoding=None,
    )  # fmt: skip
    hw = mosaic(3, 3, neurons=8)
    nt = in_order(net, hw)
    out, res = rewire_network(net, hw, nt, (0.6, 0.2, 0.0, 0.05), seed=0)
    assert out.n_neurons == net.n_neurons and out.population_names == net.population_names
    assert (
        out.n_synapses == net.n_synapses == res.connections_after + int(np.sum(nt[net.sources] < 0))
    )
    src_in = net.sources[nt[net.sources] < 0]
    assert np.array_equal(np.sort(out.sources[nt[out.sources] < 0]), np.sort(src_in))
    p = profile_of(hw, nt, out)
    assert p.connections[4:].sum() == 0


# ------------------------------------------------------------------ check and CLI
def test_check_report_names_the_keys_scripts_read():
    hw = mosaic(4, 4, nt=40, rt=24, neurons=8)
    nt = sequential_nt(128, hw)
    net = random_network(hw, nt, (0.3, 0.06, 0, 0.01), seed=0)
    _, report = check(net, hw, nt)
    for key in ("mappable", "overflowing_tiles", "profile", "routing_entries", "removals"):
        assert key in report
    assert report["mappable"] == (not report["overflowing_tiles"])
    assert report["profile"]["connections"][1] == profile_of(hw, nt, net).connections[1]


def test_tiles_of_keeps_the_neurons_in_order_unless_a_partitioner_or_placer_is_named(tmp_path):
    from engine.mosaic.memory import nt_of_neurons
    from engine.pipeline import build_mapping, write_mapping_file

    hw = load_hardware("mosaic-8x8@4x4")
    net = load_network_spec("rand:n=256,card=1,seed=0")
    np.testing.assert_array_equal(tiles_of(net, hw), in_order(net, hw))
    # a partitioner alone: placed packed-row, the tiles row by row as in_order fills them
    np.testing.assert_array_equal(tiles_of(net, hw, partition="sequential"), in_order(net, hw))
    # a placer alone: partitioned sequential (a tile's worth of neurons in order), then placed
    mapped = build_mapping(net, hw, partition="sequential", placement="random", seed=3)
    placed = tiles_of(net, hw, placement="random", seed=3)
    np.testing.assert_array_equal(placed, nt_of_neurons(net, hw, mapped.mapping))
    assert not np.array_equal(placed, in_order(net, hw))
    write_mapping_file(tmp_path / "m.json", mapped)
    from_file = tiles_of(net, hw, mapping_file=str(tmp_path / "m.json"))
    np.testing.assert_array_equal(from_file, placed)
    with pytest.raises(SpecError, match="not both"):
        tiles_of(net, hw, mapping_file=str(tmp_path / "m.json"), partition="sequential")
    with pytest.raises(InvalidHardwareError, match="not a Mosaic"):
        tiles_of(net, load_hardware("loihi2"))


def test_cli_mosaic_check_json_and_exit_codes(capsys, tmp_path):
    code, out, err = run(capsys, "mosaic", "check", "--network", "rand:n=1024,card=16,seed=0",
                         "--json")  # fmt: skip
    assert code == 1, err  # dense random connections overflow the 8 x 8 Mosaic
    got = json.loads(out)
    assert got["mappable"] is False and got["overflowing_tiles"]
    assert {"mappable", "overflowing_tiles", "profile", "routing_entries"} <= set(got)
    assert len(got["tiles"]) == 17 * 17
    code, out, err = run(capsys, "mosaic", "check", "--network", "rand:n=1024,card=16,seed=0")
    assert code == 1 and "NOT mappable" in out and "to fit: remove" in out
    code, out, err = run(capsys, "mosaic", "check", "--network", "rand:n=256,card=1,seed=0",
                         "--hardware", "mosaic-8x8@4x4")  # fmt: skip
    assert code == 0 and ": mappable" in out, out + err
    code, _, err = run(capsys, "mosaic", "check", "--hardware", "loihi2", "--network",
                       "rand:n=64,card=2,seed=0")  # fmt: skip
    assert code == 2 and "not a Mosaic" in err


def test_cli_mosaic_rewire_writes_a_network_that_fits(capsys, tmp_path):
    out_file = tmp_path / "rewired.npz"
    net = ["--network", "rand:n=1024,card=4,seed=0"]
    got = run_json(capsys, "mosaic", "rewire", *net, "--target", "0.5,0.1,0,0.01", "--out",
                   str(out_file), "--json")  # fmt: skip
    assert {"connections_before", "connections_after", "profile", "target"} <= set(got)
    assert got["connections_before"] == got["connections_after"]
    assert got["target"] == [0.5, 0.1, 0.0, 0.01]
    assert got["profile"]["p"][5:] == [0.0] * len(got["profile"]["p"][5:])
    assert got["mappable_before"] is False and got["mappable_after"] is True
    assert got["routing_entries_after"] < got["routing_entries_before"]
    checked = run_json(capsys, "mosaic", "check", "--network", str(out_file), "--json")
    assert checked["mappable"] and checked["profile"] == got["profile"]
    code, _, err = run(capsys, "mosaic", "rewire", *net, "--target", "0.01", "--out",
                       str(tmp_path / "x.npz"))  # fmt: skip
    assert code == 2 and "holds" in err and not (tmp_path / "x.npz").exists()
    code, _, err = run(capsys, "mosaic", "rewire", *net, "--target", "a,b", "--out",
                       str(tmp_path / "y.npz"))  # fmt: skip
    assert code == 2 and "target" in err


def test_cli_mosaic_requirements(capsys):
    got = run_json(capsys, "mosaic", "requirements", "--hardware", "mosaic-8x8@4x4", "--target",
                   "0.4,0.05,0,0.01", "--networks", "4", "--json")  # fmt: skip
    assert got["networks"] == 4 and set(got["rt_size"]) == {"mean", "std"}


def test_pareto_on_a_mosaic_keeps_only_mappings_that_fit(capsys):
    got = run_json(capsys, "pareto", "--network", "mlp:widths=64-128-128-10,density=0.03,seed=0",
                   "--hardware", "mosaic-8x8", "--objectives", "latency,routing-entries",
                   "--budget", "60", "--json")  # fmt: skip
    assert got["front"] and got["feasible"] > 0
    # the heuristics' mappings overflow the crossbars, so they are off the front
    assert set(got["heuristics_infeasible"]) == set(got["heuristics"])
    best = min(p["objectives"]["routing-entries"] for p in got["front"])
    assert best > min(h["routing-entries"] for h in got["heuristics"].values())


def test_a_nir_network_is_checked_for_mappability(capsys):
    nir = "tests/data/nir/paper_03_rnn_braille_noDelay_bias_zero.nir"
    got = run_json(capsys, "mosaic", "check", "--network", nir, "--hardware", "mosaic-8x8@2x2",
                   "--json")  # fmt: skip
    assert got["mappable"] and got["routing_entries"] > 0
    assert sum(got["profile"]["connections"]) == 38 * 38 + 7 * 38  # recurrent + readout


def test_the_es_searches_placements_for_routing_memory(capsys):
    """Placement changes hop distances: with routing-overflow as its objective the nested ES
    finds a mapping whose tiles lack fewer rows than every heuristic's."""
    net = "mlp:widths=64-128-128-10,density=0.03,seed=0"
    got = run_json(capsys, "evolve", "--network", net, "--hardware", "mosaic-8x8", "--objective",
                   "routing-overflow", "--budget", "80", "--json")  # fmt: skip
    assert got["objective"] == "routing-overflow"
    values = got["objective_values"]
    assert values["best"] < min(values["heuristics"].values())


# ------------------------------------------------------------------ what a review found
def test_pareto_with_the_simulator_also_rejects_mappings_that_overflow(capsys):
    got = run_json(capsys, "pareto", "--network", "mlp:widths=64-128-128-10,density=0.03,seed=0",
                   "--hardware", "mosaic-8x8", "--objectives", "simulated-latency,cores",
                   "--budget", "12", "--json")  # fmt: skip
    assert set(got["heuristics_infeasible"]) == set(got["heuristics"])


@pytest.mark.parametrize(
    "command",
    [["evolve", "--objective", "routing-overflow"],
     ["pareto", "--objectives", "latency,routing-entries"]],
)  # fmt: skip
def test_mosaic_objectives_are_refused_on_a_router_mesh(capsys, command):
    code, _, err = run(capsys, *command, "--hardware", "loihi2", "--budget", "5")
    assert code == 2 and "needs a Mosaic" in err


def test_the_profile_of_a_structured_network_counts_its_convolutions():
    from engine.io.nir_graph import read_nir

    net = read_nir("tests/data/nir/paper_02_cnn_cnn_sinabs.nir", expand=False)
    assert net.projections  # its convolutions kept structured
    hw = mosaic(24, 24)
    nt = in_order(net, hw)
    assert np.array_equal(profile_of(hw, nt, net).connections,
                          profile_of(hw, nt, net.explicit()).connections)  # fmt: skip
    assert profile_of(hw, nt, net).connections.sum() > 0


def test_duplicate_synapses_are_one_connection_and_rewiring_refuses_them():
    net = network_of(3, [(0, 1), (0, 1), (0, 2), (2, 2), (2, 2), (2, 2)])
    hw = mosaic(1, 3, neurons=1)
    nt = np.arange(3)
    p = profile_of(hw, nt, net)
    assert p.connections.sum() == 3 and p.p.max() <= 1
    mem = routing_memory(net, hw, nt)
    assert mem.synapse_entries == 3
    with pytest.raises(SpecError, match="repeat a"):
        rewire_network(net, hw, nt, (1.0, 1.0), seed=0)


def test_the_cli_json_removal_list_makes_the_network_fit(capsys):
    spec = "rand:n=1024,card=16,seed=0"
    got = json.loads(run(capsys, "mosaic", "check", "--network", spec, "--json")[1])
    assert got["to_remove"]["connections"] == len(got["remove_all"])
    net = load_network_spec(spec)
    hw = load_hardware("mosaic-8x8")
    nt = in_order(net, hw)
    gone = {(a, b) for a, b in got["remove_all"]}
    keep = [(int(s), int(d)) for s, d in zip(net.sources, net.indices, strict=True)
            if (int(s), int(nt[d])) not in gone]  # fmt: skip
    assert routing_memory(network_of(net.n_neurons, keep), hw, nt).mappable


def test_rewire_takes_no_placement_options(capsys):
    code, _, err = run(capsys, "mosaic", "rewire", "--network", "rand:n=64,card=2", "--target",
                       "0.5", "--out", "x.npz", "--partition", "overlap")  # fmt: skip
    assert code == 2 and "unrecognized arguments: --partition" in err


def test_a_step_keeps_the_mask_with_arrays_in_fortran_order_and_prunes_to_the_caps():
    hw = mosaic(3, 3, neurons=8)
    hops = hop_matrix(hw, sequential_nt(72, hw))
    rw = Rewiring(hops, (0.5, 0.1, 0.0, 0.02), seed=0)
    w, mask = rw.initial(0.1)
    total = int(mask.sum())
    grad = np.random.default_rng(0).normal(size=w.shape)
    w2, m2, n = rw.step(np.asfortranarray(w), np.asfortranarray(mask), np.asfortranarray(grad),
                        0.5)  # fmt: skip
    assert n > 0 and int(m2.sum()) == total and not np.any(w2[~m2])
    # a mask above a tighter target's caps at distance 1 (below them in all): one step
    # prunes distance 1 to its cap and regrows the difference where there is room
    over = Rewiring(hops, (0.5, 0.02), seed=0)
    d0, d1 = (np.flatnonzero((hops == d).ravel() & mask.ravel()) for d in (0, 1))
    start = np.zeros_like(w)
    start.flat[d0[: over.caps[0] - 10]] = 0.1
    start.flat[d1[: over.caps[1] + 10]] = 0.1
    assert over.counts(start != 0)[1] > over.caps[1]
    w3, m3, n3 = over.step(start, start != 0, np.zeros_like(start), 0.1)
    assert n3 == 10 and np.array_equal(over.counts(m3), over.caps[: over.counts(m3).size])


def test_bad_placements_and_shapes_are_clear_errors():
    hw = mosaic(2, 2, neurons=2)
    net = network_of(4, [(0, 1), (1, 2)])
    with pytest.raises(CapacityError, match="runs on a core but has no Neuron Tile"):
        routing_memory(net, hw, np.array([0, 0, 1, -1]))
    with pytest.raises(SpecError, match="must be 4 x 4"):
        profile_of(hw, np.array([0, 0, 1, 1]), weights=np.ones((2, 2)))
    with pytest.raises(SpecError, match="steps"):
        rewire(np.zeros((4, 4)), hop_matrix(hw, np.array([0, 0, 1, 1])), (1.0,),
               gradient=np.zeros_like)  # fmt: skip


def test_pairs_per_distance_by_fft_equals_the_nt_table():
    for shape in ("3x3", "4x7", "1x5", "6x1", "1x1"):
        g = MosaicGrid(load_hardware(f"mosaic-8x8@{shape}"))
        per = np.random.default_rng(0).integers(0, 20, g.n_nt)
        want = np.bincount(g.hops.ravel(), weights=np.outer(per, per).ravel(),
                           minlength=g.max_hops + 1)  # fmt: skip
        assert np.array_equal(g.pairs_per_distance(per), want) and g.max_hops == g.hops.max()


def test_a_large_mosaic_is_checked_without_an_nt_by_nt_table(capsys):
    """128 x 128 tiles: 16,384 NTs, an NT x NT table would be 2 GiB."""
    got = run_json(capsys, "mosaic", "check", "--network", "rand:n=64,card=2,seed=0",
                   "--hardware", "mosaic-8x8@128x128", "--json")  # fmt: skip
    assert got["mappable"] and sum(got["profile"]["pairs"]) == 64 * 64
