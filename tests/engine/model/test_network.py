"""Network: validation with clear errors, a stable fingerprint, and CSR bookkeeping."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InvalidNetworkError, MeshScopeError
from engine.model.network import Network

ROOT = Path(__file__).resolve().parents[3]


def small(**overrides) -> Network:
    """Three neurons in two populations: 0 -> {1, 2}, 1 -> {2}, 2 -> {}."""
    args = dict(
        name="tiny",
        indptr=[0, 2, 3, 3],
        indices=[1, 2, 2],
        population=[0, 1, 1],
        population_names=("in", "out"),
        rate=[0.5, 0.25, 1.0],
    )
    args.update(overrides)
    return Network(**args)


@st.composite
def csr_networks(draw, max_neurons: int = 30, max_fan_out: int = 6):
    n = draw(st.integers(1, max_neurons))
    counts = draw(st.lists(st.integers(0, max_fan_out), min_size=n, max_size=n))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    m = int(indptr[-1])
    indices = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    n_pop = draw(st.integers(1, n))
    population = np.sort(np.arange(n) % n_pop)
    rate = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    return Network(
        name="drawn",
        indptr=indptr,
        indices=np.asarray(indices, dtype=np.int64),
        population=population,
        population_names=[f"p{k}" for k in range(n_pop)],
        rate=rate,
    )


# ------------------------------------------------------------------ validation
def test_a_valid_network_keeps_its_arrays():
    net = small(weights=[0.5, -1.0, 2.0], natural_cores=(1, 1))
    assert net.n_neurons == 3 and net.n_synapses == 3 and net.n_populations == 2
    assert net.indptr.dtype == np.int64 and net.indices.dtype == np.int32
    assert net.population_sizes.tolist() == [1, 2]
    assert net.fan_out.tolist() == [2, 1, 0]
    assert net.weight_bits == (8, 8) and net.encoding == ("sparse", "sparse")
    assert net.weights.tolist() == [0.5, -1.0, 2.0]


BAD_NETWORKS = [
    (
        "indptr too short",
        dict(indptr=[0, 2, 3]),
        "indptr has 3 entries, expected n_neurons + 1 = 4",
    ),
    ("indptr too long", dict(indptr=[0, 1, 2, 3, 3]), "indptr has 5 entries"),
    ("indptr not from 0", dict(indptr=[1, 2, 3, 3]), "indptr must start at 0"),
    ("indptr past the end", dict(indptr=[0, 2, 3, 4]), "end at len(indices)"),
    ("indptr decreasing", dict(indptr=[0, 3, 1, 3]), "non-decreasing"),
    ("synapse to neuron n", dict(indices=[1, 2, 3]), "outside 0..2"),
    ("negative synapse", dict(indices=[1, -1, 2]), "outside 0..2"),
    ("index beyond int32", dict(indices=np.array([1, 2, 2**32 + 1])), "outside the int32 range"),
    ("fractional index", dict(indices=[1.0, 2.5, 2.0]), "indices must hold integers"),
    ("rate above 1", dict(rate=[0.5, 1.5, 0.0]), "must lie in [0, 1]"),
    ("negative rate", dict(rate=[0.5, -0.1, 0.0]), "must lie in [0, 1]"),
    ("NaN rate", dict(rate=[0.5, np.nan, 0.0]), "must lie in [0, 1]"),
    ("infinite rate", dict(rate=[np.inf, 0.5, 0.0]), "must lie in [0, 1]"),
    ("population id too big", dict(population=[0, 1, 2]), "population ids must lie in 0..1"),
    ("negative population", dict(population=[-1, 0, 1]), "population ids must lie in 0..1"),
    ("fractional population", dict(population=[0, 0.5, 1]), "population must hold integers"),
    ("population too short", dict(population=[0, 1]), "population has 2 entries for 3 neurons"),
    ("no population names", dict(population_names=()), "population ids must lie in"),
    ("weights too short", dict(weights=[1.0, 2.0]), "2 weights for 3 synapses"),
    ("weights too long", dict(weights=[1.0, 2.0, 3.0, 4.0]), "4 weights for 3 synapses"),
    ("unknown encoding", dict(encoding=("sparse", "fancy")), "encoding needs one of"),
    ("one encoding for two", dict(encoding=("dense",)), "encoding needs one of"),
    ("zero weight bits", dict(weight_bits=(8, 0)), "weight_bits needs one value in 1..64"),
    ("weight bits count", dict(weight_bits=(8,)), "weight_bits needs one value"),
    ("natural cores count", dict(natural_cores=(1,)), "natural_cores needs one core count"),
    ("natural cores zero", dict(natural_cores=(1, 0)), "positive for a population on cores"),
    (
        "no neurons",
        dict(indptr=[0], indices=[], population=[], rate=[]),
        "it has no neurons",
    ),
]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [case[1:] for case in BAD_NETWORKS],
    ids=[case[0] for case in BAD_NETWORKS],
)
def test_invalid_networks_raise_a_clear_error(overrides, message):
    with pytest.raises(InvalidNetworkError) as info:
        small(**overrides)
    text = str(info.value)
    assert "network 'tiny'" in text  # says which network
    assert message in text  # and what is wrong with it
    assert isinstance(info.value, MeshScopeError)


def test_bad_csr_with_zero_weights_is_still_a_clear_error():
    # zero weights are dropped; that must not run before the CSR has been checked
    with pytest.raises(InvalidNetworkError, match="non-decreasing"):
        small(indptr=[0, 3, 1, 3], weights=[0.0, 1.0, 1.0])
    with pytest.raises(InvalidNetworkError, match="end at len"):
        small(indptr=[0, 2, 3, 4], weights=[0.0, 1.0, 1.0])


def test_zero_weight_synapses_are_not_stored():
    net = small(weights=[1.0, 0.0, 3.0])
    assert net.indptr.tolist() == [0, 1, 2, 2]
    assert net.indices.tolist() == [1, 2]
    assert net.weights.tolist() == [1.0, 3.0]
    assert net.sources.tolist() == [0, 1]


def test_networks_are_frozen():
    net = small()
    with pytest.raises(dataclasses.FrozenInstanceError):
        net.rate = np.zeros(3)


# ------------------------------------------------------------------ fingerprint
def test_fingerprint_is_stable_and_ignores_the_name():
    a, b = small(), small(name="another name", description="same arrays")
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint == small().fingerprint  # recomputed from scratch: same
    assert len(a.fingerprint) == 16 and int(a.fingerprint, 16) >= 0


@pytest.mark.parametrize(
    "overrides",
    [
        dict(indices=[1, 1, 2], indptr=[0, 2, 3, 3]),
        dict(indptr=[0, 1, 3, 3]),
        dict(population=[0, 0, 1]),
        dict(population_names=("in", "hidden")),
        dict(weights=[1.0, 1.0, 1.0]),
        dict(weight_bits=(8, 4)),
        dict(encoding=("sparse", "dense")),
    ],
    ids=["indices", "indptr", "population", "names", "weights", "weight_bits", "encoding"],
)
def test_fingerprint_changes_with_what_defines_the_network(overrides):
    assert small(**overrides).fingerprint != small().fingerprint


@settings(max_examples=60, deadline=None)
@given(net=csr_networks(), data=st.data())
def test_fingerprint_changes_when_any_rate_changes(net, data):
    neuron = data.draw(st.integers(0, net.n_neurons - 1))
    new_rate = data.draw(st.floats(0, 1).filter(lambda r: r != net.rate[neuron]))
    rate = net.rate.copy()
    rate[neuron] = new_rate
    changed = dataclasses.replace(net, rate=rate)
    assert changed.fingerprint != net.fingerprint
    assert dataclasses.replace(net, rate=net.rate.copy()).fingerprint == net.fingerprint


# ------------------------------------------------------------------ CSR
@settings(max_examples=80, deadline=None)
@given(net=csr_networks())
def test_sources_expand_the_csr_rows(net):
    src = net.sources
    assert src.shape == (net.n_synapses,)
    syn = np.arange(net.n_synapses)
    # synapse i lies in row sources[i] of the CSR
    assert np.all(net.indptr[src] <= syn)
    assert np.all(syn < net.indptr[src + 1])
    assert np.array_equal(np.bincount(src, minlength=net.n_neurons), net.fan_out)
    for s in range(net.n_neurons):  # the same, row by row
        row = slice(net.indptr[s], net.indptr[s + 1])
        assert np.all(src[row] == s)


def test_sources_of_a_hand_made_network():
    assert small().sources.tolist() == [0, 0, 1]


def test_summary_reports_sizes():
    """tiny: "in" (neuron 0, rate 0.5) sends to both neurons of "out" (rates 0.25 and 1), whose
    first sends to its second: 3 synapses, 2 out of "in" and 1 out of "out", all 3 into "out",
    whose mean rate is (0.25 + 1) / 2 = 0.625."""
    s = small(description="demo").summary()
    assert (s["network"], s["neurons"], s["input_neurons"], s["synapses"]) == ("tiny", 3, 0, 3)
    rows = [(r["name"], r["neurons"], r["synapses_in"], r["synapses_out"], r["mean_rate"],
             r["spike_source"], r["type"], r["shape"]) for r in s["populations"]]  # fmt: skip
    assert rows == [
        ("in", 1, 0, 2, 0.5, False, "layer", [1]),
        ("out", 2, 3, 1, 0.625, False, "layer", [2]),
    ]
    assert s["description"] == "demo"


def test_available_memory_counts_the_process_address_space_limit():
    """Under ``ulimit -v`` (RLIMIT_AS, what a benchmark's ``--memory`` sets) the memory a new
    allocation can have is what is left of the bound, not the machine's free memory: a
    convolution's count that would not fit says so instead of failing in the allocator."""
    code = """
import resource
import numpy as np
import psutil
from engine.errors import CapacityError
from engine.host import available_memory
from engine.model.projection import ConvProjection

small = ConvProjection(0, 1, (4, 8, 8), (4, 8, 8), np.ones((4, 4, 3, 3)), padding=(1, 1))
small.counts(np.arange(small.n_out) % 3)  # compiled (or loaded) before the bound
conv = ConvProjection(0, 1, (16, 64, 64), (16, 64, 64), np.ones((16, 16, 3, 3)), padding=(1, 1))
part = np.arange(conv.n_out) % 200  # 200 cores, each over the whole map: 334 MB to count
unbounded = available_memory()
vms = psutil.Process().memory_info().vms
resource.setrlimit(resource.RLIMIT_AS, (vms + 2**25, resource.RLIM_INFINITY))
bounded = available_memory()
print(unbounded > 2**29, 0 < bounded <= 2**25)
try:
    conv.counts(part)
except CapacityError as e:
    print("CapacityError", "GiB available" in str(e))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "CapacityError", "True"]
