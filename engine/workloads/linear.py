"""The linear-layer workloads of the Loihi 2 runtime model (§V): M + M cores of N neurons.

``linear-dense`` is the all-ones dense layer (every origin neuron to every destination
neuron; dense-packed weights of ``bits`` bits, 1 by default: the SynOp microbenchmark
scaled up; §V-A varies them from 1 to 8).
``linear-tiled-identity`` connects origin neuron ``j`` of every origin core to neuron
``j`` of every destination core: an identity tile per core pair, sparse-packed, so
traffic is maximal (every origin core sends N messages to every destination core)
while SynOps and SynMem reads stay small. Every neuron spikes every step.
"""

from __future__ import annotations

import numpy as np

from engine.model.network import Network
from engine.workloads import ALL, estimates, register
from engine.workloads._build import require


def _linear(
    name, m, n, dst_of_local, per_source, encoding, weight_bits, description, rate=1.0
) -> Network:
    """M origin and M destination cores of N neurons; origin neuron ``s`` (of all M·N) sends
    to destinations ``dst_of_local(s)`` (indices among the M·N destinations) and spikes with
    probability ``rate``."""
    require(m >= 1 and n >= 1, f"{name}: M and N must be at least 1")
    total = m * n
    src = np.arange(total)
    indptr = np.arange(total + 1, dtype=np.int64) * per_source
    indptr = np.concatenate([indptr, np.full(total, indptr[-1])])  # destinations send nothing
    indices = dst_of_local(src).ravel() + total
    return Network(
        name=name,
        indptr=indptr,
        indices=indices,
        population=np.repeat([0, 1], total),
        population_names=("origin", "destination"),
        rate=np.concatenate([np.full(total, float(rate)), np.ones(total)]),
        weight_bits=(weight_bits, weight_bits),
        encoding=(encoding, encoding),
        natural_cores=(m, m),
        description=description,
    )


@register("linear-dense")
def linear_dense(*, M: int = 4, N: int = 64, bits: int = 1) -> Network:  # noqa: N803 (names of Loihi 2 runtime model)
    """Dense all-ones linear layer of Loihi 2 runtime model §V.1, M+M cores of N neurons."""
    total = M * N
    require(total * total <= 50_000_000, f"linear-dense: (M*N)^2 = {total**2} synapses is too many")
    require(1 <= bits <= 8, f"linear-dense: bits must be 1..8 (Loihi 2's weights), not {bits}")
    return _linear(
        "linear-dense", M, N,
        lambda s: np.broadcast_to(np.arange(total), (s.size, total)),
        total, "dense", bits,
        f"dense all-ones {total}x{total} linear layer of {bits}-bit weights on {M}+{M} cores "
        f"of {N} neurons (Loihi 2 runtime model §V.1)",
    )  # fmt: skip


@register("linear-tiled-identity")
def linear_tiled_identity(*, M: int = 8, N: int = 1024) -> Network:  # noqa: N803
    """Tiled-identity linear layer of Loihi 2 runtime model §V.2: N messages per core pair."""
    return _linear(
        "linear-tiled-identity", M, N,
        lambda s: (s % N)[:, None] + N * np.arange(M)[None, :],
        M, "sparse", 8,
        f"tiled-identity {M * N}x{M * N} linear layer on {M}+{M} cores of {N} neurons "
        "(Loihi 2 runtime model §V.2)",
    )  # fmt: skip


@estimates("linear-dense", on_cores=ALL)
def _linear_dense_size(*, M: int, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return 2 * M * N, (M * N) ** 2


@estimates("linear-tiled-identity", on_cores=ALL)
def _linear_tiled_identity_size(*, M: int, N: int, **_) -> tuple[int, int]:  # noqa: N803
    return 2 * M * N, M * N * M
