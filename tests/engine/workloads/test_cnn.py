"""The ANN-derived workloads (engine.workloads.cnn): Table III's counts, the layers' synapses
against an independent definition of each layer, rates, and bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import InvalidNetworkError
from engine.io.files import ReadLimits
from engine.specs import build_workload, load_network_spec, workload_explicit, workload_size
from engine.workloads.cnn import (
    ARCHITECTURES,
    CONNECTIONS_TOLERANCE,
    NODES_TOLERANCE,
    TABLE_III,
    X_MODELS,
    Architecture,
    parameters,
    plan,
    x_model,
)

NETWORKS = ("lenet", "alexnet", "vgg11", "mobilenet-v1", "pilotnet")


@pytest.mark.parametrize("name", sorted(TABLE_III))
def test_counts_match_table_iii(name):
    """SNN hypergraphs Table III's nodes within 10 % and connections within 20 %."""
    nodes, connections = workload_size(name)
    paper_nodes, paper_connections, _ = TABLE_III[name]
    assert abs(nodes / paper_nodes - 1) <= NODES_TOLERANCE
    assert abs(connections / paper_connections - 1) <= CONNECTIONS_TOLERANCE


@pytest.mark.parametrize(
    "spec", ["lenet", "alexnet", "vgg11", "pilotnet", "mobilenet-v1:size=64", "lenet:size=64",
             "16k-model", "64k-model", "1m-model:size=16"],
)  # fmt: skip
def test_the_built_network_has_the_estimated_size(spec):
    """workload_size is exact: the server refuses requests from it before anything is built."""
    net = build_workload(spec)
    assert (net.n_neurons, net.n_synapses) == workload_size(spec)
    assert net.n_explicit == workload_explicit(spec)


def _conv_pairs(c_in, h, w, c_out, k, stride, top, left, h_out, w_out, groups):
    """(source, target) of a convolution, by its definition: target (co, oy, ox) reads input
    (ci, oy·s − top + ky, ox·s − left + kx) of its group's channels, when inside."""
    co, oy, ox, cl, ky, kx = np.meshgrid(
        np.arange(c_out), np.arange(h_out), np.arange(w_out), np.arange(c_in // groups),
        np.arange(k), np.arange(k), indexing="ij",
    )  # fmt: skip
    ci = (co // (c_out // groups)) * (c_in // groups) + cl
    iy, ix = oy * stride - top + ky, ox * stride - left + kx
    ok = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    src = (ci * h + iy) * w + ix
    dst = (co * h_out + oy) * w_out + ox
    return set(zip(src[ok].tolist(), dst[ok].tolist(), strict=True))


def _pairs_between(net, a: str, b: str) -> set:
    """The (local source, local target) synapses from population a to population b."""
    net = net.explicit()
    names = net.population_names
    ia, ib = names.index(a), names.index(b)
    first = np.concatenate([[0], np.cumsum(net.population_sizes)])
    rows = net.members[ia]
    out = set()
    for s in rows.tolist():
        d = net.indices[net.indptr[s] : net.indptr[s + 1]]
        d = d[net.population[d] == ib]
        out |= {(s - int(first[ia]), int(t) - int(first[ib])) for t in d.tolist()}
    return out


def test_mobilenet_layers_are_keras_mobilenet():
    """conv1_pad pads one row below and one column right; conv1 is 3×3 stride 2 valid on it;
    a depthwise conv reads its own channel only (groups = channels); a stride-1 depthwise conv
    pads 'same'; a pointwise conv reads every channel at its position."""
    net = build_workload("mobilenet-v1:size=32")
    shape = dict(zip(net.population_names, net.shapes, strict=True))
    assert shape["conv1_pad"] == (3, 33, 33) and shape["conv1"] == (32, 16, 16)
    assert shape["conv_pad_2"] == (64, 17, 17) and shape["conv_dw_2"] == (64, 8, 8)
    assert shape["conv_pw_13"] == (1024, 1, 1) and shape["predictions"] == (1000,)
    pad = {(s, (s // 1024) * 1089 + (s % 1024 // 32) * 33 + s % 32) for s in range(3 * 1024)}
    assert _pairs_between(net, "input", "conv1_pad") == pad
    assert _pairs_between(net, "conv1_pad", "conv1") == _conv_pairs(
        3, 33, 33, 32, 3, 2, 0, 0, 16, 16, 1
    )
    assert _pairs_between(net, "conv1", "conv_dw_1") == _conv_pairs(
        32, 16, 16, 32, 3, 1, 1, 1, 16, 16, 32
    )
    assert _pairs_between(net, "conv_pad_2", "conv_dw_2") == _conv_pairs(
        64, 17, 17, 64, 3, 2, 0, 0, 8, 8, 64
    )
    assert _pairs_between(net, "conv_dw_1", "conv_pw_1") == _conv_pairs(
        32, 16, 16, 64, 1, 1, 0, 0, 16, 16, 1
    )


def test_a_padding_border_never_spikes():
    net = build_workload("mobilenet-v1:size=32")
    k = net.population_names.index("conv_pad_2")
    rate = net.rate[net.members[k]].reshape(net.shapes[k])
    assert np.all(rate[:, -1, :] == 0) and np.all(rate[:, :, -1] == 0)
    assert np.all(rate[:, :-1, :-1] > 0)


def test_lenet_alexnet_vgg11_layers():
    """LeNet's first conv keeps the image ('same'), its second is 'valid'; a 2×2 pool
    reads its window; a dense layer reads every neuron of the one before it."""
    lenet = build_workload("lenet")
    shape = dict(zip(lenet.population_names, lenet.shapes, strict=True))
    assert [shape[k] for k in ("conv1", "pool1", "conv2", "pool2")] == [
        (6, 32, 32), (6, 16, 16), (16, 12, 12), (16, 6, 6)
    ]  # fmt: skip
    assert _pairs_between(lenet, "input", "conv1") == _conv_pairs(
        3, 32, 32, 6, 5, 1, 2, 2, 32, 32, 1
    )
    assert _pairs_between(lenet, "conv2", "pool2") == _conv_pairs(
        16, 12, 12, 16, 2, 2, 0, 0, 6, 6, 16
    )
    assert _pairs_between(lenet, "fc1", "fc2") == {(a, b) for a in range(120) for b in range(84)}
    alex = build_workload("alexnet:size=8")
    assert _pairs_between(alex, "pool1", "conv2") == _conv_pairs(64, 4, 4, 192, 3, 1, 1, 1, 4, 4, 1)
    vgg = build_workload("vgg11")
    assert vgg.shapes[vgg.population_names.index("pool5")] == (512, 1, 1)
    assert vgg.population_sizes[-3:].tolist() == [4096, 4096, 10]


def _x_counts(name: str, width: int) -> tuple[int, int, int]:
    """(nodes, connections, parameters) of a Table III custom network from ``width``."""
    layers = x_model(X_MODELS[name][0], width)
    steps = plan(Architecture(layers, 3, 32, 32, 1, 1, ""), 32, 32)
    nodes = 3 * 32 * 32 + sum(int(np.prod(s.out_shape)) for s in steps)
    return nodes, sum(s.synapses for s in steps), parameters(layers, 3)


@pytest.mark.parametrize("name", sorted(X_MODELS))
def test_x_models_follow_the_rule_and_take_the_nearest_first_width(name):
    """VGG-like blocks (two 3×3 'same' convolutions of one width, a 2×2 max-pool), widths
    doubling, stacked until the parameters reach x — the block before had fewer — then
    global average pooling and dense 10; the first width is the one of 1…256 that comes
    nearest Table III's counts and x (the module note's measure)."""
    params, width = X_MODELS[name]
    layers = ARCHITECTURES[name].layers
    convs = [layer for layer in layers if layer.kind == "conv"]
    assert all(c.kernel == 3 and c.padding == "same" and c.stride == 1 for c in convs)
    widths = [c.channels for c in convs]
    assert widths == [width * 2**i for i in range(len(widths) // 2) for _ in (0, 1)]
    assert [x.kind for x in layers[-2:]] == ["pool", "dense"] and layers[-1].channels == 10
    blocks = len(convs) // 2
    assert parameters(layers, 3) >= params
    if blocks > 1:  # a block fewer (and the dense layer) had not reached x
        assert parameters((*layers[: 3 * (blocks - 1)], layers[-1]), 3) < params
    nodes_t, connections_t, _ = TABLE_III[name]

    def score(w: int) -> float:
        nodes, connections, p = _x_counts(name, w)
        return max(abs(nodes / nodes_t - 1) / NODES_TOLERANCE,
                   abs(connections / connections_t - 1) / CONNECTIONS_TOLERANCE,
                   abs(np.log2(p / params)))  # fmt: skip

    assert min(range(1, 257), key=score) == width


def test_x_model_counts_by_hand():
    """16k_model from width 4 on a 32×32 CIFAR image, counted by hand: convolutions 4, 4 at
    32×32, 8, 8 at 16×16, 16, 16 at 8×8 and 32, 32 at 4×4, a pool after each pair, then 32
    averages and 10 outputs; a 3×3 'same' convolution of C_in → C_out channels on an S×S map
    has C_out·C_in·(3S − 2)² synapses, a 2×2 pool 4 per output."""
    nodes = 3 * 1024 + (4 * 1024 * 2 + 4 * 256) + (8 * 256 * 2 + 8 * 64) + (16 * 64 * 2 + 16 * 16)
    nodes += (32 * 16 * 2 + 32 * 4) + 32 + 10
    convs = [(3, 4, 32), (4, 4, 32), (4, 8, 16), (8, 8, 16), (8, 16, 8), (16, 16, 8),
             (16, 32, 4), (32, 32, 4)]  # fmt: skip
    synapses = sum(ci * co * (3 * s - 2) ** 2 for ci, co, s in convs)
    synapses += 4 * (4 * 256 + 8 * 64 + 16 * 16 + 32 * 4) + 32 * 4 + 32 * 10
    params = sum(9 * ci * co + co for ci, co, _ in convs) + 32 * 10 + 10
    assert _x_counts("16k-model", 4) == (nodes, synapses, params) == (20_394, 798_128, 18_846)
    net = build_workload("16k-model")
    assert (net.n_neurons, net.n_synapses) == (nodes, synapses)


def test_pilotnet_is_the_published_architecture():
    """66×200×3 → 24, 36, 48 @5×5 stride 2 → 64, 64 @3×3 → dense 100, 50, 10, 1."""
    net = build_workload("pilotnet")
    assert net.shapes == (
        (3, 66, 200), (24, 31, 98), (36, 14, 47), (48, 5, 22), (64, 3, 20), (64, 1, 18),
        (100,), (50,), (10,), (1,),
    )  # fmt: skip
    assert _pairs_between(net, "conv4", "conv5") == _conv_pairs(64, 3, 20, 64, 3, 1, 0, 0, 1, 18, 1)


def test_rates_are_the_papers_log_normal_and_seeded():
    """§V-A: median 0.23, coefficient of variation 1.58 (before clipping to 1); the seed
    draws them; sparsity=S gives every neuron 1 − S."""
    net = build_workload("alexnet")
    assert np.median(net.rate) == pytest.approx(0.23, rel=0.02)
    small = net.rate[net.rate < 1]
    log = np.log(net.rate[net.rate > 0])
    assert np.exp(np.mean(log)) == pytest.approx(0.23, rel=0.1) and small.size > 0
    assert np.array_equal(build_workload("alexnet:seed=0").rate, net.rate)
    assert not np.array_equal(build_workload("alexnet:seed=1").rate, net.rate)
    uniform = build_workload("alexnet:sparsity=0.8")
    assert np.allclose(uniform.rate, 0.2)


def test_inputs_on_cores_or_at_the_port():
    assert not any(build_workload("lenet").spike_source)
    port = build_workload("lenet:inputs=port")
    assert port.spike_source[0] and not any(port.spike_source[1:])


def test_large_convolutions_stay_structured():
    """Convolutions above 1 M synapses are ConvProjections; a dense layer is explicit."""
    net = build_workload("vgg11")
    structured = {net.population_names[p.target] for p in net.projections}
    assert {"conv2", "conv5_2"} <= structured and "fc1" not in structured
    assert net.n_explicit < net.n_synapses // 5


@pytest.mark.parametrize(
    "spec, words",
    [
        ("vgg11:size=48", "multiple of 32"),
        ("lenet:size=8", "multiple of 4 from 16"),
        ("alexnet:inputs=chip", "cores or port"),
        ("pilotnet:sparsity=1", "sparsity"),
    ],
)
def test_bad_parameters_are_one_clear_error(spec, words):
    with pytest.raises(InvalidNetworkError, match=words):
        workload_size(spec)
    with pytest.raises(InvalidNetworkError, match=words):
        build_workload(spec)


def test_structured_synapses_cost_no_memory_but_a_server_counts_them():
    """mobilenet-v1's 570 M synapses are mostly structured: the command line builds it (its
    explicit synapses are within MAX_SYNAPSES), a server's client limits refuse it."""
    assert workload_size("mobilenet-v1")[1] > 200_000_000
    assert workload_explicit("mobilenet-v1") < 10_000_000
    with pytest.raises(InvalidNetworkError, match="too many neurons"):
        load_network_spec("mobilenet-v1", limits=ReadLimits(neurons=200_000, synapses=12_000_000))
