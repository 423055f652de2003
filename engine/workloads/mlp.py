"""Sparse multi-layer perceptrons of Loihi 2 mapping ES §5.1 (SparseMLP-1 and SparseMLP-2).

Widths are ours (the paper gives only ranges and totals): both take 1024 inputs and
512 outputs; SparseMLP-1 has 6 weight layers with hidden widths from 512 to 4096 and
16.78 M dense parameters (paper: 16.8 M); SparseMLP-2 has 12 weight layers with hidden
widths from 1024 to 4096 and 33.55 M dense parameters (paper: 33.6 M). Each weight is
kept with probability 0.15 (85 % unstructured sparsity). Activation sparsity rises
linearly from 15 % at the input to 80 % at the output, so population ``k`` spikes with
probability ``1 - sparsity_k`` per step. The input is a spike source (issue 13: the input
layer is not a layer of cores): its spikes enter the mesh at the hardware's input port.
"""

from __future__ import annotations

import numpy as np

from engine.model.network import Network
from engine.workloads import estimates, register
from engine.workloads._build import require

MAX_LAYERS = 1_024  # layers of one MLP (a population each)
MAX_PAIRS = 100_000_000  # neuron pairs of two adjacent layers (8 bytes each while drawn)

SPARSE_MLP_1_WIDTHS = (1024, 512, 4096, 1024, 2048, 3072, 512)
SPARSE_MLP_2_WIDTHS = (1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 4096, 2048, 3072, 2048, 512)


def sparse_mlp(
    name, widths, *, density=0.15, sparsity_first=0.15, sparsity_last=0.80, seed=0, weight_bits=8
) -> Network:
    require(0 < density <= 1, f"{name}: density must lie in (0, 1]")
    require(len(widths) <= MAX_LAYERS, f"{name}: {len(widths)} layers; at most {MAX_LAYERS}")
    pairs = max(int(a) * int(b) for a, b in zip(widths, widths[1:], strict=False))
    require(
        pairs <= MAX_PAIRS,
        f"{name}: two layers of {pairs:,} neuron pairs, each drawn as a candidate synapse; at "
        f"most {MAX_PAIRS:,} a layer pair",
    )
    rng = np.random.default_rng(seed)
    widths = np.asarray(widths, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(widths)])
    n = int(starts[-1])
    counts = np.zeros(n, dtype=np.int64)
    dst_chunks = []
    for k in range(len(widths) - 1):
        a, b = int(widths[k]), int(widths[k + 1])
        flat = np.flatnonzero(rng.random(a * b) < density)  # row-major: sorted by source
        counts[starts[k] : starts[k] + a] = np.bincount(flat // b, minlength=a)
        dst_chunks.append((starts[k + 1] + flat % b).astype(np.int32))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate(dst_chunks)
    sparsity = np.linspace(sparsity_first, sparsity_last, len(widths))
    population = np.repeat(np.arange(len(widths)), widths)
    names = ["input"] + [f"layer{k}" for k in range(1, len(widths))]
    return Network(
        name=name,
        indptr=indptr,
        indices=indices,
        population=population,
        population_names=names,
        rate=(1.0 - sparsity)[population],
        weight_bits=(weight_bits,) * len(widths),
        spike_source=(True,) + (False,) * (len(widths) - 1),
        description=f"{len(widths) - 1}-layer MLP {'-'.join(map(str, widths))}, "
        f"{(1 - density):.0%} weight sparsity, activation sparsity "
        f"{sparsity_first:.0%}→{sparsity_last:.0%} (Loihi 2 mapping ES §5.1)",
    )


@register("sparse-mlp-1")
def sparse_mlp_1(*, seed: int = 0) -> Network:
    """SparseMLP-1 of Loihi 2 mapping ES §5.1: 6 layers, 16.8 M dense parameters, 85 % sparse."""
    return sparse_mlp("sparse-mlp-1", SPARSE_MLP_1_WIDTHS, seed=seed)


@register("sparse-mlp-2")
def sparse_mlp_2(*, seed: int = 0) -> Network:
    """SparseMLP-2 of Loihi 2 mapping ES §5.1: 12 layers, 33.6 M dense parameters, 85 % sparse."""
    return sparse_mlp("sparse-mlp-2", SPARSE_MLP_2_WIDTHS, seed=seed)


@register("mlp")
def mlp(*, widths: str = "256-512-256-10", density: float = 0.15, seed: int = 0) -> Network:
    """A sparse MLP of any widths (dash-separated), activations as in Loihi 2 mapping ES."""
    try:
        w = [int(v) for v in widths.split("-")]
    except ValueError:
        w = []
    require(len(w) >= 2 and min(w) >= 1, f"mlp: widths {widths!r} must look like 256-512-10")
    return sparse_mlp("mlp", w, density=density, seed=seed)


def _mlp_size(widths, density: float) -> tuple[int, int]:
    pairs = sum(a * b for a, b in zip(widths, widths[1:], strict=False))
    return sum(widths), int(pairs * min(1.0, max(density, 0.0)))


def _mlp_on_cores(widths) -> int:
    """The neurons of an MLP's layers but its input (a spike source)."""
    return sum(widths[1:])


def _any_mlp_widths(widths: str) -> list[int]:
    try:
        return [int(v) for v in widths.split("-")]
    except ValueError:
        return [0]


@estimates("sparse-mlp-1", on_cores=lambda **_: _mlp_on_cores(SPARSE_MLP_1_WIDTHS))
def _sparse_mlp_1_size(**_) -> tuple[int, int]:
    return _mlp_size(SPARSE_MLP_1_WIDTHS, 0.15)


@estimates("sparse-mlp-2", on_cores=lambda **_: _mlp_on_cores(SPARSE_MLP_2_WIDTHS))
def _sparse_mlp_2_size(**_) -> tuple[int, int]:
    return _mlp_size(SPARSE_MLP_2_WIDTHS, 0.15)


@estimates("mlp", on_cores=lambda *, widths, **_: _mlp_on_cores(_any_mlp_widths(widths)))
def _any_mlp_size(*, widths: str, density: float, **_) -> tuple[int, int]:
    return _mlp_size(_any_mlp_widths(widths), density)
