"""Structured convolutions: everything computed from a conv's kernel and geometry equals
what the same network gives with its synapses listed one by one.

Each case reads one NIR graph twice — every convolution kept structured (``expand=False``)
and every one expanded by the reader's sparse products (``expand=True``, an independent
implementation) — and compares the partition graphs, messages, h-edges, per-core loads,
minimum partitions, evaluations and simulated steps.
"""

from __future__ import annotations

import dataclasses

import nir
import numpy as np
import pytest

from engine.errors import CapacityError, InvalidNetworkError, SpecError
from engine.hardware import load_hardware
from engine.io.nir_graph import NirWarning, read_nir
from engine.mapping.assignment import Partition, parse_split, split_rank
from engine.mapping.partition import make_partition
from engine.mapping.partition.layer import min_cores
from engine.mapping.partition_graph import partition_graph
from engine.mapping.resources import PopulationSplit
from engine.model.projection import ConvProjection
from engine.pipeline import build_mapping, evaluate
from tests.support.cli import run
from tests.support.nir_files import big_conv, cnn, lif, write

HW = load_hardware("loihi2")
RNG = np.random.default_rng(7)


def weights(shape, zeros=0.3):
    w = RNG.normal(size=shape).astype(np.float32)
    w[RNG.random(shape) < zeros] = 0
    return w


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = cnn(tmp_path_factory.mktemp("cnn"))
    with pytest.warns(NirWarning, match="type check"):  # nir's check ignores a conv's groups
        structured = read_nir(path, expand=False)
        explicit = read_nir(path, expand=True)
    rate = RNG.uniform(0.02, 0.9, size=explicit.n_neurons)  # per-neuron rates, not uniform
    return (
        dataclasses.replace(structured, rate=rate),
        dataclasses.replace(explicit, rate=rate),
    )


def test_the_reader_keeps_convolutions_and_pools_as_projections(pair):
    s, e = pair
    names = s.population_names
    joined = [(names[p.source], names[p.target]) for p in s.projections]
    assert joined == [("in", "l1"), ("l1", "l2"), ("l2", "l3")]
    assert not e.projections
    assert s.n_synapses == e.n_synapses  # closed form = the sparse products' count
    assert s.n_explicit + sum(p.n_synapses for p in s.projections) == e.n_explicit
    assert 0 < s.n_explicit <= 7 * 40  # the linear layer alone
    assert s.shapes[1] == (6, 5, 11) and s.shape_of(4) == (7,)


def test_expanding_the_projections_gives_the_readers_sparse_products(pair):
    """Conv∘pool composed into one kernel vs the reader's matrix products, weight by weight."""
    s, e = pair
    x = s.explicit()
    assert np.array_equal(x.indptr, e.indptr) and np.array_equal(x.indices, e.indices)
    assert np.allclose(x.weights, e.weights, rtol=1e-5, atol=1e-6)


def _same_graph(a, b):
    for f in ("neurons", "synapses", "axons", "memory_bytes", "population", "pair_src",
              "pair_dst", "input_population", "input_dst"):  # fmt: skip
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    for f in ("synops", "synmem_reads", "pair_messages", "input_messages"):
        assert np.allclose(getattr(a, f), getattr(b, f), rtol=1e-12), f
    assert a.remote_edge_weight == pytest.approx(b.remote_edge_weight, rel=1e-12)


SPLITS = ["channels", "rows", "columns", "tiles", {"l1": "rows", "l2": "tiles", "l3": "columns"}]


@pytest.mark.parametrize("split", SPLITS, ids=str)
@pytest.mark.parametrize("cores", [(0, 3, 2, 4, 1), (0, 7, 5, 3, 2), (0, 1, 1, 1, 1)])
def test_partition_graphs_messages_and_hedges_match(pair, split, cores):
    s, e = pair
    ps, pe = Partition.layered(s, cores, split), Partition.layered(e, cores, split)
    assert np.array_equal(ps.assignment, pe.assignment)
    gs, ge = partition_graph(s, HW, ps), partition_graph(e, HW, pe)
    _same_graph(gs, ge)
    spikes = RNG.random(s.n_neurons) < 0.4
    ms, me = gs.messages(HW.model, spikes), ge.messages(HW.model, spikes)
    for f in ("neuron", "src", "dst", "synapses", "words"):
        assert np.array_equal(getattr(ms, f), getattr(me, f)), f
    assert (gs.hedge_sets != ge.hedge_sets).nnz == 0
    assert np.array_equal(gs.hedge_counts, ge.hedge_counts)
    assert np.allclose(gs.hedge_weights, ge.hedge_weights)


def test_any_neuron_level_assignment_matches(pair):
    """Not only layered splits: cores holding scattered neurons of several channels."""
    s, e = pair
    assignment = np.where(s.on_cores, RNG.integers(0, 9, size=s.n_neurons), -1)
    assignment[s.on_cores] = np.unique(assignment[s.on_cores], return_inverse=True)[1].ravel()
    _same_graph(
        partition_graph(s, HW, Partition(assignment)), partition_graph(e, HW, Partition(assignment))
    )


@pytest.mark.parametrize("mode", ["channels", "rows", "tiles"])
def test_per_core_loads_and_minimum_partitions_match(pair, mode):
    s, e = pair
    for k in (1, 2, 3):
        a, b = PopulationSplit(s, HW, k, mode), PopulationSplit(e, HW, k, mode)
        for c in (1, 2, 5):
            ua, ub = a.use(c), b.use(c)
            for f in ("neurons", "synapses", "axons", "memory_bytes"):
                assert np.array_equal(getattr(ua, f), getattr(ub, f)), (k, c, f)
    tight = dataclasses.replace(HW.limits, synapses=300, inbound_axons=100)
    small = dataclasses.replace(HW, limits=tight)
    assert min_cores(s, small, mode) == min_cores(e, small, mode)
    assert max(min_cores(s, small, mode)) > 1  # the limits bind: the search is exercised


@pytest.mark.parametrize("mode", ["channels", "rows", "tiles"])
def test_a_population_splits_loads_are_the_partition_graphs(pair, mode):
    """``PopulationSplit`` counts a split's cores on its own (a source's targets in split
    order, its axons where the core changes): the same counts as the partition graph of the
    layered partition, on the explicit network, where a split reorders each source's targets
    (rows, tiles) and where it does not (channels)."""
    _, e = pair
    for cores in ((0, 3, 2, 4, 1), (0, 7, 5, 3, 2)):
        graph = partition_graph(e, HW, Partition.layered(e, cores, mode))
        first = np.cumsum((0, *cores))
        for k in (1, 2, 3, 4):
            use = PopulationSplit(e, HW, k, mode).use(cores[k])
            own = slice(first[k], first[k + 1])
            for f, g in (("neurons", "neurons"), ("synapses", "synapses"),
                         ("axons", "axons"), ("memory_bytes", "memory_bytes")):  # fmt: skip
                assert np.array_equal(getattr(use, f), getattr(graph, g)[own]), (cores, k, f)


def test_evaluations_and_simulated_steps_match(pair):
    from engine.simulate.step import simulate_step

    s, e = pair
    ms = build_mapping(s, HW, partition="min+2", placement="spread-row", split="tiles")
    me = build_mapping(e, HW, partition="min+2", placement="spread-row", split="tiles")
    assert np.array_equal(ms.mapping.partition.assignment, me.mapping.partition.assignment)
    vs, ve = evaluate(ms), evaluate(me)
    assert vs.latency_us == pytest.approx(ve.latency_us, rel=1e-12)
    assert vs.energy_uj == pytest.approx(ve.energy_uj, rel=1e-12)
    a, b = simulate_step(ms, seed=3), simulate_step(me, seed=3)
    assert a.cycles == b.cycles and np.array_equal(a.link_flits, b.link_flits)


# ------------------------------------------------------------------ splits
def test_splits_order_a_layer_as_named():
    """A (2, 4, 4) layer in 4 cores: rows → bands of one row with both channels; columns →
    one column each; tiles → the four 2×2 quadrants; channels → half a channel each."""
    net = read_small((2, 4, 4))
    k = 1
    pos = lambda core, mode: sorted(  # noqa: E731
        {divmod(i % 16, 4) for i in np.flatnonzero(split_rank(net, k, mode) * 4 // 32 == core)}
    )
    assert pos(0, "rows") == [(0, x) for x in range(4)]
    assert pos(2, "columns") == [(y, 2) for y in range(4)]
    assert pos(3, "tiles") == [(2, 2), (2, 3), (3, 2), (3, 3)]
    assert pos(1, "channels") == [(y, x) for y in (2, 3) for x in range(4)]
    for mode in ("rows", "columns", "tiles"):  # every core holds both channels of its positions
        core = split_rank(net, k, mode) * 4 // 32
        assert all(set(core[j::16]) == {core[j]} for j in range(16))


def read_small(shape):
    from engine.model.network import Network

    n = int(np.prod(shape))
    return Network(
        name="small", indptr=np.zeros(2 * n + 1, dtype=np.int64), indices=np.zeros(0),
        population=np.repeat([0, 1], n), population_names=("a", "b"), rate=np.full(2 * n, 0.1),
        shapes=(shape, shape),
    )  # fmt: skip


def test_tiles_keep_a_conv_cores_axons_lower_than_channels(pair):
    """Why tiles are the default for a convolution's layer: every core needs all input
    channels of its window, so spatial tiles with all channels take fewer axons."""
    s, _ = pair
    c = 5
    assert PopulationSplit(s, HW, 2, "tiles").use(c).axons.max() < (
        PopulationSplit(s, HW, 2, "channels").use(c).axons.max()
    )


def test_split_specs_and_errors(pair):
    s, _ = pair
    assert parse_split(None) is None and parse_split("auto") is None
    assert parse_split("rows") == "rows"
    assert parse_split("l1=rows,l2=tiles") == {"l1": "rows", "l2": "tiles"}
    with pytest.raises(SpecError, match="choose auto or one of"):
        parse_split("diagonal")
    with pytest.raises(SpecError, match="LAYER=MODE"):
        parse_split("l1=zigzag")
    with pytest.raises(SpecError, match="does not have"):
        Partition.layered(s, (0, 1, 1, 1, 1), {"nope": "rows"})
    with pytest.raises(SpecError, match="no spatial shape"):
        Partition.layered(s, (0, 1, 1, 1, 1), {"l4": "rows"})
    with pytest.raises(SpecError, match="applies to layer partitions"):
        make_partition(s, HW, "overlap", split="rows")
    auto = Partition.layered(s, (0, 2, 2, 2, 1))
    assert auto.split == ("channels", "tiles", "tiles", "tiles", "channels")
    assert auto.describe()["split"] == list(auto.split)


# ------------------------------------------------------------------ bad structures
def test_a_network_refuses_inconsistent_projections(pair):
    s, e = pair
    conv = s.projections[0]
    with pytest.raises(InvalidNetworkError, match="explicit and structured"):
        dataclasses.replace(e, projections=(conv,))
    with pytest.raises(InvalidNetworkError, match="given twice"):
        dataclasses.replace(s, projections=(conv, *s.projections))
    wrong = dataclasses.replace(conv, target=2)
    with pytest.raises(InvalidNetworkError, match="takes .* neurons"):
        dataclasses.replace(s, projections=(wrong, *s.projections[1:]))
    with pytest.raises(InvalidNetworkError, match="one shape per population"):
        dataclasses.replace(s, shapes=((3,),) * s.n_populations)
    with pytest.raises(InvalidNetworkError, match="weight"):
        ConvProjection(0, 1, (3, 4, 4), (2, 4, 4), np.ones((2, 2, 3, 3)), padding=(1, 1))


def test_neuron_level_partitioners_expand_small_convolutions(pair):
    s, e = pair
    a = make_partition(s, HW, "overlap", seed=1)
    b = make_partition(e, HW, "overlap", seed=1)
    assert np.array_equal(a.assignment, b.assignment)


# ------------------------------------------------------------------ a large convolution
def test_a_64_channel_conv_on_128x128_is_described_not_listed(tmp_path, capsys):
    """6·10⁸ synapses: read, counted and sized per core without listing one; the neuron-level
    partitioners and convert refuse it with a way out."""
    path = big_conv(tmp_path)
    net = read_nir(path)
    valid = 127 + 128 + 127  # per kernel row: output rows whose input row lies inside
    assert net.n_synapses == 64 * 64 * valid * valid == 597_704_704
    assert net.n_explicit == 0 and len(net.projections) == 1
    use = PopulationSplit(net, HW, 1, "tiles").use(4096)  # 4 positions × 64 channels a core
    assert use.neurons.max() == 256
    assert use.synapses.sum() == net.n_synapses
    # a 2×2 tile with a one-pixel halo: at most 4×4 positions in each of 64 input channels
    assert use.axons.max() == 64 * 16 and use.axons.min() == 64 * 9  # corners lose the halo
    with pytest.raises(CapacityError, match="needs at least 9,217 cores"):  # from its totals
        make_partition(net, HW, "hierarchical")
    with pytest.raises(CapacityError, match="kept as a convolution.*--split"):
        make_partition(net, load_hardware("mesh:64x48x4"), "hierarchical")
    code, _, err = run(capsys, "convert", "--network", str(path), "--out", str(tmp_path / "b.npz"))
    assert code == 2 and "597,704,704 synapses" in err and "Traceback" not in err
    code, out, _ = run(capsys, "info", "--network", str(path), "--json")
    assert code == 0
    import json

    info = json.loads(out)
    assert info["synapses"] == 597_704_704
    assert [p["synapses_in"] for p in info["populations"]] == [0, 597_704_704]


# ------------------------------------------------------------------ the command line
@pytest.fixture(scope="module")
def mid_conv(tmp_path_factory):
    """16 channels, 3×3, on 48×48: 5.2M synapses, above the size kept structured."""
    return big_conv(tmp_path_factory.mktemp("mid"), channels=16, side=48)


def test_map_splits_a_structured_conv_and_its_mapping_file_reloads(mid_conv, tmp_path, capsys):
    import json

    assert read_nir(mid_conv).projections  # structured by default at this size
    saved = tmp_path / "m.json"
    argv = ["--network", str(mid_conv), "--hardware", "mesh:8x8x4", "--partition", "min"]
    code, out, err = run(capsys, "map", *argv, "--split", "rows", "--save", str(saved), "--json")
    assert code == 0, err
    rows = json.loads(out)
    doc = json.loads(saved.read_text())
    assert doc["partition"]["split"] == ["rows", "rows"]
    code, out, _ = run(capsys, "map", *argv[:-1], "min@rows", "--json")  # the same, after @
    assert json.loads(out)["latency_us"] == rows["latency_us"]
    code, out, _ = run(capsys, "map", *argv, "--json")  # auto: tiles
    tiles = json.loads(out)
    code, out, _ = run(capsys, "map", *argv, "--split", "channels", "--json")
    channels = json.loads(out)
    # a core of a channel split needs every input channel of its whole window, a tile only
    # its tile and halo: more synapses per axon and fewer messages, so a faster step
    reuse = [d["metrics"]["synaptic_reuse"] for d in (channels, rows, tiles)]
    assert reuse == sorted(reuse) and reuse[0] < reuse[2] / 4
    assert tiles["latency_us"] < rows["latency_us"] < channels["latency_us"]
    code, out, err = run(
        capsys, "evaluate", "--network", str(mid_conv), "--hardware", "mesh:8x8x4",
        "--mapping", str(saved), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["latency_us"] == pytest.approx(rows["latency_us"], rel=1e-9)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--split", "diagonal"], "bad split 'diagonal'"),
        (["--partition", "min", "--split", "lif=rows,fc=tiles"], "does not have"),
        (["--partition", "overlap", "--split", "rows"], "--split applies to layer partitions"),
        (["--partition", "hierarchical"], "needs them explicit"),
        (["--partition", "overlap@rows"], "a split (@…) applies to layer partitions"),
        (["--partition", "min@rows", "--split", "tiles"], "either after @"),
        (["--partition", "min@zigzag"], "bad split 'zigzag'"),
    ],
)
def test_bad_splits_and_refused_expansions_are_one_line(
    mid_conv, capsys, monkeypatch, extra, message
):
    monkeypatch.setattr("engine.host.available_memory", lambda: 10_000_000)  # 5.2M synapses
    argv = ["map", "--network", str(mid_conv), "--hardware", "mesh:8x8x4"]
    code, _, err = run(capsys, *argv, *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_files_store_a_structured_network_expanded_with_its_shapes(pair, tmp_path):
    from engine.io.hgr import read_hgr, write_hgr
    from engine.io.network_file import load_network, save_network

    s, e = pair
    save_network(s, tmp_path / "s.npz")
    back = load_network(tmp_path / "s.npz")
    assert not back.projections and back.shapes == s.shapes
    assert np.array_equal(back.indices, e.indices) and np.array_equal(back.indptr, e.indptr)
    write_hgr(s, tmp_path / "s.hgr")
    write_hgr(e, tmp_path / "e.hgr")
    assert (tmp_path / "s.hgr").read_text() == (tmp_path / "e.hgr").read_text()
    assert read_hgr(tmp_path / "s.hgr").n_synapses > 0


@pytest.mark.parametrize("padding", [1, "same", "valid"])
def test_a_1d_convolution_is_a_2d_one_with_one_row(tmp_path, padding):
    w = weights((4, 3, 3))
    out = (4, 13 if padding == "same" else (13 + 2 * (padding == 1) - 5) // 2 + 1)
    nodes = {
        "in": nir.Input(input_type=np.array([3, 13])),
        "conv": nir.Conv1d(input_shape=13, weight=w, stride=2 if padding != "same" else 1,
                           padding=padding, dilation=2, groups=1, bias=np.zeros(4)),
        "lif": lif(out),
        "out": nir.Output(output_type=np.array(out)),
    }  # fmt: skip
    path = write(tmp_path, nodes, [("in", "conv"), ("conv", "lif"), ("lif", "out")],
                 type_check=False)  # fmt: skip
    s, e = read_nir(path, expand=False), read_nir(path, expand=True)
    assert s.projections and s.projections[0].in_shape == (3, 1, 13)
    x = s.explicit()
    assert np.array_equal(x.indices, e.indices) and np.allclose(x.weights, e.weights)
    for cores in ((0, 1), (0, 3), (0, 7)):
        p = Partition.layered(e, cores, "rows")
        _same_graph(partition_graph(s, HW, p), partition_graph(e, HW, p))


def test_a_saved_split_reloads_as_it_was(pair):
    """Even ``channels`` everywhere, which ``auto`` would turn into tiles for a conv's layer."""
    from engine.mapping.assignment import Mapping, Placement, mapping_to_dict, parse_mapping_dict

    s, _ = pair
    p = Partition.layered(s, (0, 3, 2, 4, 1), "channels")
    mapping = Mapping(p, Placement(np.arange(p.n_parts)))
    back = parse_mapping_dict(mapping_to_dict(s, HW, mapping)).build(s, HW)
    assert back.partition.split == p.split and np.array_equal(
        back.partition.assignment, p.assignment
    )


def test_the_kernel_shape_is_part_of_the_fingerprint():
    from engine.model.network import Network

    def net(kernel):
        conv = ConvProjection(0, 1, (1, 5, 5), (1, 1, 1), np.ones((1, 1, *kernel)), stride=(10, 10))
        return Network(
            name="k", indptr=np.zeros(27, np.int64), indices=np.zeros(0),
            population=np.repeat([0, 1], [25, 1]), population_names=("a", "b"),
            rate=np.full(26, 0.1), projections=(conv,),
        )  # fmt: skip

    assert net((1, 3)).fingerprint != net((3, 1)).fingerprint


def test_the_lower_bound_of_a_split_never_exceeds_the_fewest_cores_that_fit():
    """Found by scanning every core count: the bound only skips counts that cannot fit."""
    from engine.model.network import Network

    rng = np.random.default_rng(11)
    binding = 0
    for trial in range(6):
        n_src, n_dst = 40, int(rng.integers(30, 90))
        fan = rng.integers(0, 12, size=n_src)
        indptr = np.concatenate([[0], np.cumsum(fan), np.full(n_dst, fan.sum())])
        indices = n_src + rng.integers(0, n_dst, size=int(indptr[-1]))
        net = Network(
            name="lb", indptr=indptr, indices=indices,
            population=np.repeat([0, 1], [n_src, n_dst]), population_names=("in", "out"),
            rate=np.full(n_src + n_dst, 0.2), spike_source=(True, False),
        )  # fmt: skip
        limits = dataclasses.replace(
            HW.limits,
            neurons=int(rng.integers(4, 20)),
            synaptic_memory_bytes=int(rng.integers(60, 200)),
        )
        hw = dataclasses.replace(HW, limits=limits)
        split = PopulationSplit(net, hw, 1)
        fitting = [c for c in range(1, n_dst + 1) if not split.violations(c)]
        if fitting:
            assert split.lower_bound() <= fitting[0], trial
            binding += fitting[0] > 1
    assert binding >= 3  # the limits bind: more than one core needed


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 2), (1, 2), 1), ((2, 2), (1, 1), (1, 1), 4)],
)
def test_fan_out_without_expanding_counts_what_the_expansion_sends(
    stride, padding, dilation, groups
):
    w = weights((8, 4 // groups, 3, 3))
    ci, hi, wi = 4, 9, 7
    ho = (hi + 2 * padding[0] - dilation[0] * 2 - 1) // stride[0] + 1
    wo = (wi + 2 * padding[1] - dilation[1] * 2 - 1) // stride[1] + 1
    p = ConvProjection(0, 1, (ci, hi, wi), (8, ho, wo), w, stride, padding, dilation, groups)
    s, _, _ = p.expand()
    assert np.array_equal(p.fan_out(), np.bincount(s, minlength=p.n_in))
    assert not p.unit_weights and ConvProjection.pool(0, 1, (2, 4, 4), (2, 2, 2), (2, 2), (2, 2),
                                                      (0, 0), 1.0).unit_weights  # fmt: skip


def test_explicit_joins_listed_and_structured_synapses_row_by_row():
    """A population with listed synapses into one layer and a convolution into another: every
    row holds both, targets ascending, weights alongside; unit weights store none."""
    from engine.model.network import Network

    conv = ConvProjection(0, 2, (2, 4, 4), (3, 4, 4), weights((3, 2, 3, 3)), padding=(1, 1))
    n = 32 + 5 + 48
    rng = np.random.default_rng(3)
    listed = [np.sort(rng.choice(np.arange(32, 37), 2, replace=False)) for _ in range(32)]
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:33] = np.cumsum([len(r) for r in listed])
    indptr[33:] = indptr[32]
    w_listed = rng.uniform(0.5, 2.0, indptr[-1]).astype(np.float32)
    net = Network(
        name="mixed", indptr=indptr, indices=np.concatenate(listed), weights=w_listed,
        population=np.repeat([0, 1, 2], [32, 5, 48]), population_names=("in", "fc", "conv"),
        rate=np.full(n, 0.1), shapes=((2, 4, 4), (5,), (3, 4, 4)), projections=(conv,),
    )  # fmt: skip
    x = net.explicit()
    s, d, v = conv.expand()  # the reference: every synapse listed, sorted by (source, target)
    src = np.concatenate([net.sources, s])
    dst = np.concatenate([net.indices, 37 + d])
    val = np.concatenate([w_listed, v])
    order = np.lexsort((dst, src))
    assert np.array_equal(x.indptr[1:], np.cumsum(np.bincount(src, minlength=n)))
    assert np.array_equal(x.indices, dst[order]) and np.array_equal(x.weights, val[order])
    unit = dataclasses.replace(net, weights=None, projections=(dataclasses.replace(
        conv, weight=(conv.weight != 0).astype(float)),))  # fmt: skip
    assert unit.explicit().weights is None and unit.explicit().n_synapses == x.n_synapses
    need = net.explicit_bytes()
    with pytest.raises(CapacityError, match="GiB available"):
        net.explicit(limit=need - 1)


def test_counting_a_scattered_partition_past_the_memory_says_so_before_allocating(monkeypatch):
    """Per-core counts allocate a triple per cell of each core's input window: a partition
    that scatters its cores' neurons over the map (MobileNet V1's unordered sequential) would
    need more than the machine has; it says how much and what to use instead, and the same
    partition counts as before when the memory is there."""
    import engine.host
    import engine.model.projection

    conv = ConvProjection(0, 1, (4, 8, 8), (4, 8, 8), np.ones((4, 4, 3, 3)), padding=(1, 1))
    part = np.arange(conv.n_out) % 3  # every core spread over the whole map
    s, c, k = conv.counts(part)
    cells = 3 * 4 * 10 * 10  # three cores, each box the whole 8x8 map: a 4x10x10 window
    monkeypatch.setattr(engine.host, "available_memory",
                        lambda: cells * engine.model.projection.COUNT_BYTES - 1)  # fmt: skip
    with pytest.raises(CapacityError, match=r"3 cores' bounding boxes cover 1,200 input cells.*"
                                            r"GiB available.*overlap"):  # fmt: skip
        conv.counts(part)
    monkeypatch.setattr(engine.host, "available_memory",
                        lambda: cells * engine.model.projection.COUNT_BYTES)  # fmt: skip
    again = conv.counts(part)
    assert all(np.array_equal(a, b) for a, b in zip(again, (s, c, k), strict=True))
