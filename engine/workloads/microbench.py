"""The microbenchmark suite of the Loihi 2 runtime model (§III, Fig. 2 a–e).

Each workload stresses one term of the max-affine model, so that its measured step time,
divided by its count, is that term's effective constant:

* ``mb-barrier``: one non-spiking neuron wired to one neuron on another core; nothing is
  sent, one DendOp per core, the step is the barrier synchronisation (Fig. 2a).
* ``mb-dendop:N``: one core of N non-spiking neurons: N DendOps (Fig. 2b; the paper runs
  N = 4095).
* ``mb-synop:N``: N neurons spiking every step into N neurons through a dense-packed
  all-ones matrix of 1-bit weights: N² SynOps on the destination core (Fig. 2c).
* ``mb-synmem:N``: the same with a dense-packed identity matrix of 8-bit weights: N SynOps
  but every spike reads the destination core's whole weight row, N·⌈8N/w⌉ SynMem words for
  w-bit words (Fig. 2d).
* ``mb-link:M,N``: M origin → destination pairs of N neurons, each pair a sparse identity,
  every origin neuron spiking every step: N messages per pair; placed by ``pairs-column``,
  all M·N messages share the middle link of one router column (Fig. 2e, 3a; the paper runs
  M = 12, N = 4095).

Every workload is two populations (``origin``, ``destination``) of the paper's cores —
``mb-dendop`` one — so the ``natural`` partition is the paper's.
"""

from __future__ import annotations

import numpy as np

from engine.model.network import Network
from engine.workloads import ALL, estimates, register
from engine.workloads._build import require
from engine.workloads.linear import _linear

MAX_N = 8192


def _pairs(name, m, n, per_source, encoding, bits, rate, description) -> Network:
    """M origin → destination pairs of N neurons: origin neuron ``j`` of pair ``k`` sends to
    ``per_source(j)`` (local indices) in destination core ``k`` (the linear layers' builder)."""
    require(1 <= m <= 64 and 1 <= n <= MAX_N, f"{name}: need 1 ≤ M ≤ 64 and 1 ≤ N ≤ {MAX_N}")
    fan_out = per_source(np.zeros(1, dtype=np.int64)).shape[1]
    return _linear(
        name, m, n, lambda s: per_source(s % n) + (s // n)[:, None] * n, fan_out, encoding, bits,
        description, rate=rate,
    )  # fmt: skip


def _identity(j: np.ndarray) -> np.ndarray:
    return j[:, None]


@register("mb-barrier")
def mb_barrier() -> Network:
    """Barrier microbenchmark (Loihi 2 runtime model Fig. 2a): two cores, nothing sent."""
    return _pairs(
        "mb-barrier", 1, 1, _identity, "sparse", 8, 0.0,
        "one non-spiking neuron to one neuron on another core: the step is the barrier "
        "(Loihi 2 runtime model Fig. 2a)",
    )  # fmt: skip


@register("mb-dendop")
def mb_dendop(*, N: int = 4095) -> Network:  # noqa: N803 (the paper's names)
    """DendOp microbenchmark (Loihi 2 runtime model Fig. 2b): one core, N neuron updates."""
    require(1 <= N <= MAX_N, f"mb-dendop: need 1 ≤ N ≤ {MAX_N}")
    return Network(
        name="mb-dendop",
        indptr=np.zeros(N + 1, dtype=np.int64),
        indices=np.zeros(0, dtype=np.int32),
        population=np.zeros(N, dtype=np.int32),
        population_names=("neurons",),
        rate=np.zeros(N),
        natural_cores=(1,),
        description=f"one core of {N} non-spiking neurons: {N} DendOps a step "
        "(Loihi 2 runtime model Fig. 2b)",
    )


@register("mb-synop")
def mb_synop(*, N: int = 1024) -> Network:  # noqa: N803
    """SynOp microbenchmark (Loihi 2 runtime model Fig. 2c): dense all-ones, N² SynOps."""
    return _pairs(
        "mb-synop", 1, N, lambda j: np.broadcast_to(np.arange(N), (j.size, N)), "dense", 1, 1.0,
        f"{N} neurons to {N} through a dense all-ones matrix of 1-bit weights: {N * N} SynOps "
        "a step (Loihi 2 runtime model Fig. 2c)",
    )  # fmt: skip


@register("mb-synmem")
def mb_synmem(*, N: int = 256) -> Network:  # noqa: N803
    """SynMem microbenchmark (Loihi 2 runtime model Fig. 2d): dense identity, 8-bit weights."""
    return _pairs(
        "mb-synmem", 1, N, _identity, "dense", 8, 1.0,
        f"{N} neurons to {N} through a dense identity matrix of 8-bit weights: {N} SynOps, "
        "a whole weight row read per spike (Loihi 2 runtime model Fig. 2d)",
    )  # fmt: skip


@register("mb-link")
def mb_link(*, M: int = 12, N: int = 4095) -> Network:  # noqa: N803
    """Link microbenchmark (Loihi 2 runtime model Fig. 2e): M pairs, N messages each."""
    return _pairs(
        "mb-link", M, N, _identity, "sparse", 8, 1.0,
        f"{M} origin -> destination pairs of {N} neurons, sparse identity: {M * N} messages "
        "a step over one link when placed by pairs-column (Loihi 2 runtime model Fig. 2e)",
    )  # fmt: skip


@estimates("mb-barrier", on_cores=ALL)
def _barrier_size(**_) -> tuple[int, int]:
    return 2, 1


@estimates("mb-dendop", on_cores=ALL)
def _dendop_size(*, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return N, 0


@estimates("mb-synop", on_cores=ALL)
def _synop_size(*, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return 2 * N, N * N


@estimates("mb-synmem", on_cores=ALL)
def _synmem_size(*, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return 2 * N, N


@estimates("mb-link", on_cores=ALL)
def _link_size(*, M: int, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return 2 * M * N, M * N
