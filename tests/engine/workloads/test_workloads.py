"""Workload generators: determinism, canonical names, and the shapes the papers give."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from engine.errors import InvalidNetworkError, UnknownNameError
from engine.mapping.assignment import layered_assignment
from engine.specs import (
    build_workload,
    load_network_spec,
    parse_spec,
    workload_info,
    workload_on_cores,
    workload_size,
)
from engine.workloads import workloads
from engine.workloads.rand import RATE_CV, RATE_MEDIAN, lognormal_rates

# small parameters per generator; a generator not listed here is built with its defaults
SMALL = {
    "conv-snn": "size=8",
    "linear-dense": "M=2,N=8",
    "linear-tiled-identity": "M=3,N=8",
    "mb-dendop": "N=32",
    "mb-link": "M=3,N=8",
    "mb-synmem": "N=16",
    "mb-synop": "N=16",
    "mlp": "widths=16-32-8",
    "qubo": "n=60",
    "rand": "n=300,card=8",
}
ARRAYS = ("indptr", "indices", "population", "rate")


def small_spec(name: str) -> str:
    return f"{name}:{SMALL[name]}" if name in SMALL else name


def is_seeded(name: str) -> bool:
    return "seed" in inspect.signature(workloads[name]).parameters


def with_seed(spec: str, seed: int) -> str:
    return f"{spec}{',' if ':' in spec else ':'}seed={seed}"


def assert_same_arrays(a, b):
    for field in ARRAYS:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert (a.weights is None) == (b.weights is None)
    assert a.population_names == b.population_names


def pairs_of(net) -> np.ndarray:
    return net.sources.astype(np.int64) * net.n_neurons + net.indices


def all_distinct(values: np.ndarray) -> bool:
    s = np.sort(values)  # (np.unique takes seconds on millions of wide-ranging keys)
    return bool(np.all(s[1:] != s[:-1]))


# ------------------------------------------------------------------ every generator
def test_the_registry_and_its_listing_agree():
    assert {w["name"] for w in workload_info()} == set(workloads)
    assert {"sparse-mlp-1", "sparse-mlp-2", "linear-dense", "linear-tiled-identity"} <= set(
        workloads
    )
    assert {"rand", "qubo", "conv-snn"} <= set(workloads)


@pytest.mark.parametrize("name", sorted(workloads))
def test_every_workload_builds_and_is_deterministic(name):
    spec = small_spec(name)
    a, b = build_workload(spec), build_workload(spec)
    assert a is not b
    assert_same_arrays(a, b)
    assert a.fingerprint == b.fingerprint
    assert a.n_neurons > 0 and (a.n_synapses > 0 or name == "mb-dendop")  # DendOps only
    assert np.all((a.rate >= 0) & (a.rate <= 1))
    assert a.name.split(":")[0] == name


@pytest.mark.parametrize("name", sorted(n for n in workloads if is_seeded(n)))
def test_a_different_seed_gives_a_different_network(name):
    spec = small_spec(name)
    a, b = build_workload(with_seed(spec, 0)), build_workload(with_seed(spec, 1))
    assert a.fingerprint != b.fingerprint
    assert any(not np.array_equal(getattr(a, f), getattr(b, f)) for f in ARRAYS)
    assert "seed=1" in b.name and "seed" not in a.name  # the default seed is not spelled out


@pytest.mark.parametrize("name", sorted(workloads))
def test_the_neurons_on_cores_told_before_generating_are_the_network_s(name):
    """``workload_on_cores`` tells whether a network fits some hardware before it is
    generated (``engine.specs.check_fits``): every generator says it, exactly (a CNN whose
    input is a spike source excepted: it says nothing, so nothing is refused on a guess)."""
    spec = small_spec(name)
    said = workload_on_cores(spec)
    assert said == int(build_workload(spec).on_cores.sum())
    if name in ("lenet", "pilotnet"):
        port = f"{spec}{',' if ':' in spec else ':'}inputs=port"
        assert workload_on_cores(port) is None


@pytest.mark.parametrize("name", sorted(workloads))
def test_canonical_names_round_trip(name):
    net = build_workload(small_spec(name))
    again = build_workload(net.name)
    assert again.name == net.name
    assert again.fingerprint == net.fingerprint


def test_canonical_names_do_not_depend_on_parameter_order_or_defaults():
    a = build_workload("qubo:rate=0.2,n=60")
    b = build_workload("qubo:n=60,rate=0.2,density=0.1,seed=0")
    assert a.name == b.name == "qubo:n=60,density=0.1,rate=0.2"
    assert a.fingerprint == b.fingerprint


def test_canonical_names_keep_every_digit_of_a_float():
    net = build_workload("qubo:n=3000,density=0.1234567891")
    assert "density=0.1234567891" in net.name
    assert build_workload(net.name).fingerprint == net.fingerprint
    assert build_workload("qubo:density=0.25,n=100").name == "qubo:n=100,density=0.25,rate=0.1"


def test_integer_parameters_accept_exponent_notation():
    assert build_workload("qubo:n=1e2").n_neurons == 102


def test_parse_spec():
    assert parse_spec("qubo") == ("qubo", {})
    assert parse_spec(" qubo:n=5, rate = 0.5 ") == ("qubo", {"n": "5", "rate": "0.5"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("qubo:foo=1", "qubo has no parameter 'foo'; its parameters are n (default 1000)"),
        ("qubo:n", "malformed parameter 'n'"),
        ("qubo:n=", "malformed parameter 'n='"),
        ("qubo:n=5,", "malformed parameter ''"),
        ("qubo:=5", "malformed parameter '=5'"),
        ("qubo:n=abc", "qubo: n='abc' is not a int"),
        ("qubo:n=1.5", "qubo: n='1.5' is not a int"),
        ("qubo:n=inf", "qubo: n='inf' is not a int"),
        ("qubo:n=nan", "qubo: n='nan' is not a int"),
        ("qubo:seed=x", "seed='x' is not a int"),
        ("qubo:density=high", "density='high' is not a float"),
        ("qubo:n=1", "n must be at least 2"),
        ("qubo:density=0", "density in (0, 1]"),
        ("qubo:density=nan", "density in (0, 1]"),
        ("qubo:rate=1.5", "rate in [0, 1]"),
        ("qubo:n=100000,density=0.5", "too many synapses"),
        ("rand:n=1", "n must be at least 2"),
        ("rand:card=0", "card at least 1"),
        ("rand:decay=-1", "decay must be 0 (automatic) or positive"),
        ("rand:decay=nan", "decay must be 0 (automatic) or positive"),
        ("rand:decay=inf", "decay must be 0 (automatic) or positive"),
        ("mlp:widths=a-b", "widths 'a-b' must look like 256-512-10"),
        ("mlp:widths=16", "must look like"),
        ("mlp:widths=16-0-4", "must look like"),
        ("mlp:density=0", "density must lie in (0, 1]"),
        ("conv-snn:size=2", "size must lie in 4..128"),
        ("linear-dense:M=0", "M and N must be at least 1"),
        ("linear-dense:M=100,N=1000", "too many synapses (10,000,000,000;"),
        ("linear-tiled-identity:N=0", "M and N must be at least 1"),
    ],
)
def test_bad_parameters_raise_invalid_network_error(spec, message):
    with pytest.raises(InvalidNetworkError) as info:
        build_workload(spec)
    assert message in str(info.value)


@pytest.mark.parametrize("spec", ["nope", "sparse-mlp-3:seed=1", "", "Qubo"])
def test_unknown_workloads_raise_unknown_name_error(spec):
    with pytest.raises(UnknownNameError) as info:
        build_workload(spec)
    text = str(info.value)
    assert f"unknown network {spec.partition(':')[0]!r}" in text
    for name in workloads:
        assert name in text


# ------------------------------------------------------------ sparse MLPs (Loihi 2 mapping ES)
MLPS = {
    # name: (dense parameters, weight layers, hidden width range)
    "sparse-mlp-1": (16.8e6, 6, (512, 4096)),
    "sparse-mlp-2": (33.6e6, 12, (1024, 4096)),
}


@pytest.fixture(scope="module", params=sorted(MLPS))
def sparse_mlp(request):
    return request.param, load_network_spec(request.param)  # cached per process


def test_sparse_mlp_shape(sparse_mlp):
    name, net = sparse_mlp
    params, layers, (lo, hi) = MLPS[name]
    widths = net.population_sizes
    assert len(widths) == layers + 1
    assert net.population_names[0] == "input"
    assert widths[0] == 1024 and widths[-1] == 512
    hidden = widths[1:-1]
    assert hidden.min() == lo and hidden.max() == hi  # "hidden widths from lo to hi"
    dense = int(np.sum(widths[:-1] * widths[1:]))
    assert abs(dense - params) / params < 0.02
    # every neuron of a population is contiguous, layer by layer
    assert np.all(np.diff(net.population) >= 0)


def test_sparse_mlp_weights(sparse_mlp):
    _, net = sparse_mlp
    widths = net.population_sizes
    pop = net.population
    assert np.all(pop[net.indices] == pop[net.sources] + 1)  # only layer k -> layer k+1
    per_layer = np.bincount(pop[net.sources], minlength=len(widths))[:-1]
    density = per_layer / (widths[:-1] * widths[1:])
    assert np.all(np.abs(density - 0.15) <= 0.005)
    assert abs(net.n_synapses / np.sum(widths[:-1] * widths[1:]) - 0.15) <= 0.005
    assert all_distinct(pairs_of(net))  # no duplicate synapse
    assert net.fan_out[pop == len(widths) - 1].sum() == 0  # the output layer sends nothing


def test_sparse_mlp_rates_fall_linearly(sparse_mlp):
    _, net = sparse_mlp
    k = net.n_populations
    per_pop = np.array([net.rate[net.population == p] for p in range(k)], dtype=object)
    for rates in per_pop:
        assert np.ptp(rates) == 0  # one rate per layer
    rate = np.array([r[0] for r in per_pop])
    sparsity = 1 - rate
    assert sparsity[0] == pytest.approx(0.15) and sparsity[-1] == pytest.approx(0.80)
    assert np.allclose(np.diff(sparsity), (0.80 - 0.15) / (k - 1))


def test_mlp_takes_any_widths():
    net = build_workload("mlp:widths=16-32-8,density=0.5")
    assert net.population_sizes.tolist() == [16, 32, 8]
    assert abs(net.n_synapses / (16 * 32 + 32 * 8) - 0.5) < 0.1
    assert net.rate[0] == pytest.approx(0.85) and net.rate[-1] == pytest.approx(0.20)


# ------------------------------------------------------ linear layers (Loihi 2 runtime model)
@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 8), (3, 5)])
def test_linear_dense(m, n):
    net = build_workload(f"linear-dense:M={m},N={n}")
    total = m * n
    assert net.n_synapses == total**2
    assert net.population_sizes.tolist() == [total, total]
    assert net.natural_cores == (m, m)
    assert np.all(net.rate == 1)
    assert net.encoding == ("dense", "dense") and net.weight_bits == (1, 1)
    origin = net.population == 0
    assert np.all(net.fan_out[origin] == total) and np.all(net.fan_out[~origin] == 0)
    for s in range(total):  # every origin neuron reaches every destination neuron once
        row = net.indices[net.indptr[s] : net.indptr[s + 1]]
        assert np.array_equal(np.sort(row), np.arange(total, 2 * total))


@pytest.mark.parametrize(("m", "n"), [(1, 4), (3, 8), (4, 5)])
def test_linear_tiled_identity(m, n):
    net = build_workload(f"linear-tiled-identity:M={m},N={n}")
    total = m * n
    assert net.n_synapses == m * total
    assert net.natural_cores == (m, m)
    assert np.all(net.rate == 1)
    origin = net.population == 0
    assert np.all(net.fan_out[origin] == m) and np.all(net.fan_out[~origin] == 0)
    in_degree = np.bincount(net.indices, minlength=net.n_neurons)
    assert np.all(in_degree[~origin] == m) and np.all(in_degree[origin] == 0)
    # origin neuron j of any core reaches neuron j of every destination core
    local_src = net.sources % n
    local_dst = (net.indices - total) % n
    assert np.array_equal(local_src, local_dst)
    # so with the natural split, every origin core sends N messages to every destination core
    part = layered_assignment(net, net.natural_cores)
    pair_counts = np.bincount(part[net.sources] * 2 * m + part[net.indices], minlength=4 * m * m)
    pair_counts = pair_counts.reshape(2 * m, 2 * m)
    assert np.all(pair_counts[:m, m:] == n)
    assert pair_counts.sum() == m * m * n


# ------------------------------------------------------------------ rand (SNN hypergraphs)
def positions(n: int, seed: int) -> np.ndarray:
    """The node positions rand draws first (uniform in the unit square).

    Not stored in the Network; if the generator changes its first draw the distance
    tests below fail loudly (random pairs are 0.52 apart), they cannot pass by accident.
    """
    return np.random.default_rng(seed).random((n, 2))


@pytest.fixture(scope="module")
def cortex():
    return build_workload("rand:n=3000,card=16")


@pytest.mark.parametrize(("n", "card"), [(3000, 16), (2000, 48), (20000, 4)])
def test_rand_mean_cardinality(n, card):
    net = build_workload(f"rand:n={n},card={card}")
    assert abs(net.fan_out.mean() - card) <= 0.05 * card
    # Poisson cardinalities: the variance is close to the mean
    assert 0.7 * card <= net.fan_out.var() <= 1.3 * card


def test_rand_has_no_self_loops_and_no_duplicate_synapses(cortex):
    assert not np.any(cortex.sources == cortex.indices)
    assert all_distinct(pairs_of(cortex))


def test_rand_connections_are_local(cortex):
    xy = positions(cortex.n_neurons, seed=0)
    length = np.linalg.norm(xy[cortex.sources] - xy[cortex.indices], axis=1)
    decay = np.sqrt(16 / (np.pi * cortex.n_neurons))  # the default decay
    assert length.mean() < 0.2  # random pairs of the unit square are 0.52 apart on average
    assert 1.5 * decay < length.mean() < 2.6 * decay  # the mean of Gamma(2, decay) is 2·decay
    # connections per unit area fall with distance, by ~1/e per decay length
    edges = np.arange(6) * decay
    counts, _ = np.histogram(length, edges)
    per_area = counts / np.diff(np.pi * edges**2)
    assert np.all(per_area[1:] < 0.7 * per_area[:-1])


def test_rand_decay_sets_the_connection_length():
    xy = positions(3000, seed=0)
    mean_length = []
    for decay in (0.02, 0.05, 0.1):
        net = build_workload(f"rand:n=3000,card=16,decay={decay}")
        mean_length.append(np.linalg.norm(xy[net.sources] - xy[net.indices], axis=1).mean())
    assert mean_length[0] < mean_length[1] < mean_length[2]
    assert mean_length[2] > 1.5 * mean_length[1]


def _lognormal_fit(rates: np.ndarray) -> tuple[float, float]:
    """Median and CV of the log-normal behind ``rates`` from quantiles the clip at 1 leaves alone.

    About 9.5 % of the draws exceed 1 and are clipped, so the 25 % and 75 % quantiles are
    exact quantiles of the unclipped distribution: sigma = IQR(log) / (2 * 0.6745).
    """
    q25, q50, q75 = np.quantile(np.log(rates), [0.25, 0.5, 0.75])
    sigma = (q75 - q25) / (2 * 0.6744897501960817)
    return float(np.exp(q50)), float(np.sqrt(np.expm1(sigma**2)))


def test_rand_rate_distribution_before_clipping():
    # 200 000 draws: the median is known to ~0.3 %, the CV to ~0.5 % (one standard error)
    rates = lognormal_rates(np.random.default_rng(7), 200_000)
    median, cv = _lognormal_fit(rates)
    assert median == pytest.approx(RATE_MEDIAN, rel=0.02)
    assert cv == pytest.approx(RATE_CV, rel=0.03)
    assert RATE_MEDIAN == 0.23 and RATE_CV == 1.58
    # the clip: rates are probabilities; P(lognormal > 1) = 9.5 % for these parameters
    assert rates.max() == 1.0
    assert np.mean(rates == 1.0) == pytest.approx(0.0947, abs=0.005)


def test_rand_network_rates_have_the_seed004_distribution():
    net = build_workload("rand:n=20000,card=2")
    median, cv = _lognormal_fit(net.rate)  # 20 000 neurons: ±1.3 % and ±1.7 % standard errors
    assert median == pytest.approx(0.23, rel=0.07)
    assert cv == pytest.approx(1.58, rel=0.1)
    assert np.all((net.rate > 0) & (net.rate <= 1))


# ------------------------------------------------------------------ qubo (Loihi 2 runtime model)
def variable_pairs(net, n):
    var = (net.sources < n) & (net.indices < n)
    return net.sources[var].astype(np.int64), net.indices[var].astype(np.int64)


@pytest.mark.parametrize(("n", "density"), [(200, 0.1), (300, 0.5), (6001, 0.002)])
def test_qubo_is_symmetric_with_the_requested_density(n, density):
    net = build_workload(f"qubo:n={n},density={density},rate=0.3")
    src, dst = variable_pairs(net, n)
    assert not np.any(src == dst)
    forward = np.sort(src * n + dst)
    backward = np.sort(dst * n + src)
    assert np.array_equal(forward, backward)  # Q_ij present iff Q_ji present
    assert all_distinct(forward)
    pairs = n * (n - 1) / 2
    observed = forward.size / 2 / pairs
    sd = np.sqrt(density * (1 - density) / pairs)
    assert abs(observed - density) < 5 * sd
    # every variable has the same expected degree: none of them is starved
    degree = np.bincount(src, minlength=n)
    tenth = n // 10
    for block in (degree[:tenth], degree[-tenth:]):
        expected = density * (n - 1)
        assert abs(block.mean() - expected) < 5 * np.sqrt(expected / tenth)


def test_qubo_large_and_dense_keeps_its_density():
    n, density = 6001, 0.25  # above 6000 variables pairs are sampled, not enumerated
    net = build_workload(f"qubo:n={n},density={density}")
    src, _ = variable_pairs(net, n)
    assert src.size / (n * (n - 1)) == pytest.approx(density, abs=0.002)
    degree = np.bincount(src, minlength=n)
    assert degree[-600:].mean() == pytest.approx(density * (n - 1), rel=0.02)


def test_qubo_temperature_and_loss_neurons():
    n = 50
    net = build_workload(f"qubo:n={n},rate=0.3")
    assert net.population_sizes.tolist() == [n, 1, 1]
    assert net.population_names == ("variables", "temperature", "loss")
    temp, loss = n, n + 1
    assert np.array_equal(net.indices[net.indptr[temp] : net.indptr[temp + 1]], np.arange(n))
    assert net.fan_out[loss] == 0
    assert np.array_equal(np.sort(net.sources[net.indices == loss]), np.arange(n))
    assert net.rate[temp] == 1.0
    assert np.all(net.rate[:n] == 0.3) and net.rate[loss] == 0.3


# ------------------------------------------------------------------ conv-snn
def conv_shapes(size):
    half = (size + 1) // 2
    quarter = (half + 1) // 2
    return [(2, size, size), (8, size, size), (16, half, half), (32, quarter, quarter), (10, 1, 1)]


@pytest.mark.parametrize("size", [4, 8, 9, 16])
def test_conv_snn_layer_sizes_and_fan_in(size):
    net = build_workload(f"conv-snn:size={size}")
    shapes = conv_shapes(size)
    assert net.population_names == ("input", "conv1", "conv2", "conv3", "output")
    assert net.population_sizes.tolist() == [int(np.prod(s)) for s in shapes]
    pop = net.population
    assert np.all(pop[net.indices] == pop[net.sources] + 1)
    fan_in = np.bincount(net.indices, minlength=net.n_neurons)
    for k in (1, 2, 3):
        in_channels = shapes[k - 1][0]
        layer = fan_in[pop == k]
        assert layer.max() <= in_channels * 9
        assert layer.min() >= in_channels * 4  # a corner sees 2×2 of the 3×3 window
        if shapes[k][1] >= 2:  # a neuron away from the padding sees the full window
            assert layer.max() == in_channels * 9
    assert np.all(fan_in[pop == 4] == np.prod(shapes[3]))  # the dense classifier
    assert np.all(fan_in[pop == 0] == 0)


@pytest.mark.parametrize(("k", "stride"), [(1, 1), (2, 2), (3, 2)])
def test_conv_snn_connects_3x3_windows(k, stride):
    net = build_workload("conv-snn:size=9")
    shapes = conv_shapes(9)
    starts = np.concatenate([[0], np.cumsum(net.population_sizes)])
    into = (net.population[net.indices] == k) & (net.population[net.sources] == k - 1)
    _, h_in, w_in = shapes[k - 1]
    _, h_out, w_out = shapes[k]
    src = net.sources[into] - starts[k - 1]
    dst = net.indices[into] - starts[k]
    iy, ix = (src // w_in) % h_in, src % w_in
    oy, ox = (dst // w_out) % h_out, dst % w_out
    assert np.all(np.abs(iy - oy * stride) <= 1)
    assert np.all(np.abs(ix - ox * stride) <= 1)


def test_conv_snn_rates_fall_with_depth():
    net = build_workload("conv-snn:size=16")
    medians = [np.median(net.rate[net.population == k]) for k in range(4)]
    assert medians == sorted(medians, reverse=True)
    for median, expected in zip(medians, (0.2, 0.12, 0.08, 0.05), strict=True):
        assert median == pytest.approx(expected, rel=0.2)


@pytest.mark.parametrize(
    "spec",
    ["conv-snn", "conv-snn:size=9", "linear-dense:M=3,N=7", "linear-tiled-identity:M=2,N=64",
     "sparse-mlp-1", "mlp:widths=5-7-3,density=0.5", "qubo:n=300,density=0.3",
     "rand:n=1000,card=10"],
)  # fmt: skip
def test_a_workload_size_is_known_before_it_is_built(spec):
    """What a server checks a client's request against: exact for the deterministic
    generators, the expectation (within a few percent) for the random ones; conv-snn's is
    an upper bound (the zero padding drops kernel taps at the borders)."""
    neurons, synapses = workload_size(spec)
    net = build_workload(spec)
    assert neurons == net.n_neurons
    real = int(net.indptr[-1])
    assert 0.95 * real <= synapses <= (1.5 if spec.startswith("conv") else 1.05) * real + 10


def test_every_workload_has_a_size():
    for name in workloads:
        assert workload_size(name)[0] > 0


def _rand_by_kdtree(n, card, seed):
    """rand's definition with a KD-tree query and a sort (what its kernels replaced)."""
    from scipy.spatial import cKDTree

    from engine.workloads.rand import lognormal_rates

    rng = np.random.default_rng(seed)
    xy = rng.random((n, 2))
    decay = float(np.sqrt(card / (np.pi * n)))
    k = np.minimum(rng.poisson(card, n), n - 1)
    draws = np.ceil(k * 1.3 + 2).astype(np.int64)
    src = np.repeat(np.arange(n), draws)
    r = rng.gamma(2.0, decay, src.size)
    theta = rng.random(src.size) * 2 * np.pi
    pts = np.abs(xy[src] + np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1))
    pts = np.where(pts > 1, 2 - pts, pts)
    _, dst = cKDTree(xy).query(np.clip(pts, 0, 1), k=1)
    keep = dst != src
    src, dst = src[keep], dst[keep]
    _, first = np.unique(src * n + dst, return_index=True)
    first.sort()
    src, dst = src[first], dst[first]
    starts = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])[:-1]
    keep = np.arange(src.size) - starts[src] < k[src]
    src, dst = src[keep], dst[keep]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return indptr, dst, lognormal_rates(rng, n)


@pytest.mark.parametrize("n, card, seed", [(2, 1, 0), (60, 8, 1), (4000, 64, 2), (9000, 128, 3)])
def test_rand_kernels_give_the_kd_tree_network(n, card, seed):
    from engine.workloads.rand import rand

    net = rand(n=n, card=card, seed=seed)
    indptr, indices, rate = _rand_by_kdtree(n, card, seed)
    assert np.array_equal(net.indptr, indptr) and np.array_equal(net.indices, indices)
    assert np.array_equal(net.rate, rate)


def test_large_generated_networks_are_cached_on_disk_by_content(monkeypatch, tmp_path, capsys):
    """Second loads read the file; a changed spec or --no-cache generates; a damaged entry is
    generated again; the cached network is the generated one."""
    import engine.specs as specs
    from tests.support.cli import run

    monkeypatch.setenv("MESHSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(specs, "CACHE_FROM_SYNAPSES", 10_000)
    spec = "rand:n=600,card=32,seed=5"
    specs._cached_workload.cache_clear()
    first = load_network_spec(spec)
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1
    specs._cached_workload.cache_clear()
    built = []
    monkeypatch.setattr(specs, "build_workload", lambda s: built.append(s) or build_workload(s))
    again = load_network_spec(spec)
    assert not built and again.fingerprint == first.fingerprint and again.name == first.name
    specs._cached_workload.cache_clear()
    load_network_spec("rand:n=600,card=32,seed=6")  # another spec: another file
    assert len(list(tmp_path.glob("*.npz"))) == 2 and built == ["rand:n=600,card=32,seed=6"]
    files[0].write_bytes(b"damaged")
    specs._cached_workload.cache_clear()
    assert load_network_spec(spec).fingerprint == first.fingerprint and len(built) == 2
    specs._cached_workload.cache_clear()
    try:
        code, _, _ = run(capsys, "info", "--network", spec, "--no-cache", "--json")
        assert code == 0 and len(built) == 3  # generated, not read
    finally:
        specs.set_network_cache(True)
    small = "rand:n=100,card=8"  # below the size worth a file
    specs._cached_workload.cache_clear()
    load_network_spec(small)
    assert len(list(tmp_path.glob("*.npz"))) == 2
